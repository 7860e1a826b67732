//! LZF, the compression RDB strings may use: a stream of literal runs and
//! back-references into the output already produced.
//!
//! ```text
//!   000LLLLL <L+1 bytes>                 literal run of 1..32 bytes
//!   LLLooooo oooooooo                    back-reference, L in 1..6:
//!                                        copy L+2 bytes from `offset+1` back
//!   111ooooo LLLLLLLL oooooooo           long back-reference: copy L+9 bytes
//! ```
//!
//! Offsets reach 8 KiB back (13 bits); a reference may overlap the bytes it
//! produces (a run of one byte repeated). The decoder checks every step
//! against the input left, the output promised and the output already
//! written, so hostile input fails cleanly; the encoder is a greedy matcher
//! over a hash of the next three bytes, which is what the format was made
//! for (Redis's writer is the same idea; any valid stream decodes the same).

/// The most output one input byte can produce: a 3-byte long reference
/// yields 264 bytes. A claimed length past `input * MAX_EXPANSION` cannot be
/// honest, so it is refused before anything is allocated for it.
pub const MAX_EXPANSION: usize = 88;

/// Farthest back a reference reaches (13 offset bits, plus one).
const MAX_OFFSET: usize = 1 << 13;
/// Longest literal run one control byte announces.
const MAX_LITERAL: usize = 32;
/// Longest match: 7 + 255 in the length fields, plus the implied 2.
const MAX_MATCH: usize = 264;
/// Most bits of the match finder's hash table (16 Ki positions, 64 KiB).
const HASH_BITS_MAX: u32 = 14;
/// Fewest bits: a table for a short string costs 1 KiB, not 64 (a hash of
/// 20,000 short values tries LZF on each of them).
const HASH_BITS_MIN: u32 = 8;

/// Decompresses `input`, which must expand to exactly `len` bytes.
pub fn decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    if len > input.len().saturating_mul(MAX_EXPANSION) {
        return None;
    }
    let mut out = Vec::with_capacity(len);
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = usize::from(input[ip]);
        ip += 1;
        if ctrl < MAX_LITERAL {
            let run = ctrl + 1;
            let literal = input.get(ip..ip + run)?;
            if out.len() + run > len {
                return None;
            }
            out.extend_from_slice(literal);
            ip += run;
            continue;
        }
        let mut run = ctrl >> 5;
        if run == 7 {
            run += usize::from(*input.get(ip)?);
            ip += 1;
        }
        run += 2;
        let back = ((ctrl & 0x1f) << 8) + usize::from(*input.get(ip)?) + 1;
        ip += 1;
        if back > out.len() || out.len() + run > len {
            return None;
        }
        let from = out.len() - back;
        if back >= run {
            out.extend_from_within(from..from + run);
        } else {
            // Overlapping: each byte may be one this reference just wrote.
            for i in 0..run {
                let b = out[from + i];
                out.push(b);
            }
        }
    }
    (out.len() == len).then_some(out)
}

/// Compresses `input`; None when the result would be longer than
/// `max_out` bytes (the caller then stores the bytes as they are).
pub fn compress(input: &[u8], max_out: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(max_out.min(input.len()));
    // Positions + 1 of the last place each 3-byte hash was seen (0: never).
    // About one slot per input byte: more would only be zeroed for nothing.
    let bits = (usize::BITS - input.len().leading_zeros()).clamp(HASH_BITS_MIN, HASH_BITS_MAX);
    let mut table = vec![0u32; 1 << bits];
    let hash = |at: usize| {
        let v =
            u32::from(input[at]) << 16 | u32::from(input[at + 1]) << 8 | u32::from(input[at + 2]);
        (v.wrapping_mul(0x9E37_79B1) >> (32 - bits)) as usize
    };
    let mut literal_from = 0;
    let mut ip = 0;
    while ip + 2 < input.len() {
        let h = hash(ip);
        let candidate = table[h] as usize;
        table[h] = (ip + 1) as u32;
        let found = candidate
            .checked_sub(1)
            .filter(|&r| ip - r <= MAX_OFFSET && input[r..r + 3] == input[ip..ip + 3]);
        let Some(r) = found else {
            ip += 1;
            continue;
        };
        let limit = MAX_MATCH.min(input.len() - ip);
        let mut run = 3;
        while run < limit && input[r + run] == input[ip + run] {
            run += 1;
        }
        put_literals(&mut out, &input[literal_from..ip]);
        let back = ip - r - 1;
        let len_code = run - 2;
        if len_code < 7 {
            out.push((len_code << 5 | back >> 8) as u8);
        } else {
            out.push((7 << 5 | back >> 8) as u8);
            out.push((len_code - 7) as u8);
        }
        out.push(back as u8);
        if out.len() > max_out {
            return None;
        }
        // Index the positions inside the match too: later repeats of them
        // are found (a better ratio for a few more hashes).
        for at in ip + 1..(ip + run).min(input.len().saturating_sub(2)) {
            table[hash(at)] = (at + 1) as u32;
        }
        ip += run;
        literal_from = ip;
    }
    put_literals(&mut out, &input[literal_from..]);
    (out.len() <= max_out).then_some(out)
}

fn put_literals(out: &mut Vec<u8>, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let n = bytes.len().min(MAX_LITERAL);
        out.push((n - 1) as u8);
        out.extend_from_slice(&bytes[..n]);
        bytes = &bytes[n..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(data: &[u8]) {
        let packed = compress(data, usize::MAX).expect("no limit");
        assert_eq!(decompress(&packed, data.len()).as_deref(), Some(data));
    }

    #[test]
    fn round_trips_text_runs_and_noise() {
        round_trip(b"");
        round_trip(b"ab");
        round_trip(&[b'x'; 10_000]);
        round_trip(
            "the quick brown fox jumps over the lazy dog "
                .repeat(500)
                .as_bytes(),
        );
        let noise: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        round_trip(&noise);
    }

    #[test]
    fn repetitive_input_shrinks_and_the_limit_is_kept() {
        let data = vec![b'a'; 1000];
        let packed = compress(&data, 996).unwrap();
        assert!(packed.len() < 20, "{}", packed.len());
        let noise: Vec<u8> = (0..100u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert_eq!(
            compress(&noise, 96),
            None,
            "incompressible input is refused"
        );
    }

    #[test]
    fn decodes_what_redis_server_wrote() {
        // The LZF bodies of DUMPs from redis-server 7.0.15 of "a" x 100 and
        // of "hello world hello world hello world 1234".
        let a100 = b"\x01aa\xe0\x57\x00\x01aa";
        assert_eq!(decompress(a100, 100).unwrap(), vec![b'a'; 100]);
        let hello = b"\x0chello world h\xe0\x0e\x0b\x031234";
        assert_eq!(
            decompress(hello, 40).unwrap(),
            b"hello world hello world hello world 1234"
        );
        // An overlapping reference: "a", then 9 copied from 1 back.
        assert_eq!(
            decompress(b"\x00a\xe0\x00\x00", 10).unwrap(),
            vec![b'a'; 10]
        );
    }

    #[test]
    fn hostile_streams_fail() {
        assert_eq!(decompress(b"\x05ab", 6), None, "literal past the input");
        assert_eq!(
            decompress(b"\x00a\x20\x05", 4),
            None,
            "reference before the start"
        );
        assert_eq!(decompress(b"\x00a", 2), None, "shorter than promised");
        assert_eq!(decompress(b"\x01ab", 1), None, "longer than promised");
        assert_eq!(decompress(b"\x00a\xe0", 300), None, "cut reference");
        assert_eq!(decompress(b"\x00a", usize::MAX), None, "impossible length");
    }

    proptest! {
        #[test]
        fn any_bytes_round_trip(data in proptest::collection::vec(0u8..4, 0..3000)) {
            round_trip(&data);
        }

        #[test]
        fn any_stream_decodes_or_fails_without_panic(
            data in proptest::collection::vec(any::<u8>(), 0..200),
            len in 0usize..5000,
        ) {
            if let Some(out) = decompress(&data, len) {
                prop_assert_eq!(out.len(), len);
            }
        }
    }
}
