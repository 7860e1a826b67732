//! The RDB primitives written: lengths and strings, in the forms Redis
//! itself chooses, so ember's payloads read like redis-server's.

use super::lzf;
use super::reader::{ENC_INT16, ENC_INT32, ENC_INT8, ENC_LZF};

/// Strings up to this long are tried as integers (Redis: 11, the text of
/// the shortest i32 extreme, "-2147483648").
const INT_TRY_MAX_LEN: usize = 11;
/// Strings longer than this are tried with LZF (Redis's `rdbcompression`
/// threshold: shorter ones rarely shrink by the four bytes it must win).
const LZF_MIN_LEN: usize = 20;

thread_local! {
    /// `rdbcompression`: whether [`put_string`] tries LZF. A snapshot turns
    /// it off around its encoding (`without_compression`); DUMP always
    /// compresses, as Redis's does.
    static COMPRESS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Runs `f` with LZF off for the strings it writes (`rdbcompression no`).
pub fn without_compression<R>(f: impl FnOnce() -> R) -> R {
    let was = COMPRESS.with(|c| c.replace(false));
    let out = f();
    COMPRESS.with(|c| c.set(was));
    out
}

/// Appends an RDB length: 6, 14, 32 or 64 bits.
pub fn put_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.push(0x40 | (n >> 8) as u8);
        out.push(n as u8);
    } else if n <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// Appends a string as Redis's `rdbSaveRawString` does: as an 8, 16 or 32
/// bit integer when it is the canonical text of one, else LZF-compressed
/// when that saves at least four bytes, else as it is.
pub fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= INT_TRY_MAX_LEN {
        if let Some(v) = crate::util::num::parse_i64(s) {
            if put_small_int(out, v) {
                return;
            }
        }
    }
    if s.len() > LZF_MIN_LEN && COMPRESS.with(|c| c.get()) {
        if let Some(packed) = lzf::compress(s, s.len() - 4) {
            out.push(0xc0 | ENC_LZF);
            put_len(out, packed.len() as u64);
            put_len(out, s.len() as u64);
            out.extend_from_slice(&packed);
            return;
        }
    }
    put_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// The integer encodings; false when `v` needs more than 32 bits.
fn put_small_int(out: &mut Vec<u8>, v: i64) -> bool {
    if let Ok(b) = i8::try_from(v) {
        out.extend_from_slice(&[0xc0 | ENC_INT8, b as u8]);
    } else if let Ok(h) = i16::try_from(v) {
        out.push(0xc0 | ENC_INT16);
        out.extend_from_slice(&h.to_le_bytes());
    } else if let Ok(w) = i32::try_from(v) {
        out.push(0xc0 | ENC_INT32);
        out.extend_from_slice(&w.to_le_bytes());
    } else {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::reader::Reader;
    use super::*;

    fn written(s: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_string(&mut out, s);
        out
    }

    #[test]
    fn strings_as_redis_server_writes_them() {
        // Byte for byte what redis-server 7.0.15 puts in these DUMPs.
        assert_eq!(written(b"hello"), b"\x05hello");
        assert_eq!(written(b"12345"), b"\xc1\x39\x30");
        assert_eq!(written(b"123456789012"), b"\x0c123456789012");
        assert_eq!(written(b"-5"), b"\xc0\xfb");
        assert_eq!(written(b"007"), b"\x03007", "not canonical: stays text");
        assert_eq!(written(b"2147483648"), b"\x0a2147483648", "past i32");
    }

    #[test]
    fn lengths_and_strings_read_back() {
        for n in [
            0u64,
            63,
            64,
            16383,
            16384,
            u64::from(u32::MAX),
            1 << 32,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_len(&mut out, n);
            assert_eq!(Reader::new(&out).length(), Ok(n));
        }
        let long = "abc".repeat(1000);
        for s in [
            &b""[..],
            b"-2147483648",
            b"0",
            b"x".repeat(21).as_slice(),
            long.as_bytes(),
        ] {
            let out = written(s);
            assert_eq!(&*Reader::new(&out).string().unwrap(), s);
        }
        assert!(written(long.as_bytes()).len() < 100, "compressed");
    }
}
