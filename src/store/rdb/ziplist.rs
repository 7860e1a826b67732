//! Redis's ziplist, the compact encoding before listpacks (Redis 3.2 to
//! 6.2 wrote it for small hashes, sorted sets and lists, and inside
//! quicklist nodes). ember only reads it.
//!
//! ```text
//!   <total bytes: u32 LE> <offset of the last entry: u32 LE>
//!   <entries: u16 LE, 65535 = unknown> <entry>* 0xFF
//!   entry: <prevlen> <encoding> <data>
//!   prevlen: 1 byte under 254, else 0xFE + u32 LE (the previous entry's size)
//!
//!   00LLLLLL                 string of up to 63 bytes
//!   01LLLLLL LLLLLLLL        string of up to 16383 bytes (big-endian)
//!   10000000 <u32 BE>        longer string
//!   11000000 / 11010000 / 11100000   int16 / int32 / int64, LE
//!   11110000 / 11111110      int24 / int8
//!   1111xxxx                 xxxx in 1..13: the integer xxxx - 1 (0..12)
//! ```
//!
//! Everything is checked as it is walked: the header, each entry's prevlen
//! against the entry before it, the bounds, the tail offset, the count.

use super::{BadData, Elem};

const HEADER: usize = 10;
const END: u8 = 0xff;
const BIG_PREVLEN: u8 = 0xfe;
const UNKNOWN_COUNT: u16 = u16::MAX;

/// The entries of a ziplist, validated.
pub fn entries(blob: &[u8]) -> Result<Vec<Elem<'_>>, BadData> {
    let bad = |why| Err(BadData(why));
    if blob.len() < HEADER + 1 {
        return bad("ziplist too short");
    }
    let u32_at =
        |i: usize| u32::from_le_bytes([blob[i], blob[i + 1], blob[i + 2], blob[i + 3]]) as usize;
    let (total, tail) = (u32_at(0), u32_at(4));
    let count = u16::from_le_bytes([blob[8], blob[9]]);
    if total != blob.len() || blob[blob.len() - 1] != END {
        return bad("ziplist header or end");
    }
    let end = blob.len() - 1;
    // The header's count is checked at the end; until then it only sizes
    // the vector, within what the body could hold (two bytes an entry).
    let mut out = Vec::with_capacity(usize::from(count).min((end - HEADER) / 2));
    let mut at = HEADER;
    let mut prev_size = 0;
    let mut last = HEADER;
    while at < end {
        let (elem, size) = entry(&blob[at..end], prev_size)?;
        out.push(elem);
        last = at;
        prev_size = size;
        at += size;
    }
    if tail != last {
        return bad("ziplist tail offset");
    }
    if count != UNKNOWN_COUNT && usize::from(count) != out.len() {
        return bad("ziplist count");
    }
    Ok(out)
}

/// The entry at the start of `p`, whose predecessor took `prev_size`
/// bytes: its value and its whole size.
fn entry(p: &[u8], prev_size: usize) -> Result<(Elem<'_>, usize), BadData> {
    let cut = BadData("ziplist entry past the end");
    let (prevlen, mut at) = match p[0] {
        BIG_PREVLEN => {
            let b = p.get(1..5).ok_or(cut)?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 5)
        }
        END => return Err(BadData("ziplist end mark inside")),
        small => (usize::from(small), 1),
    };
    if prevlen != prev_size {
        return Err(BadData("ziplist prevlen"));
    }
    let enc = *p.get(at).ok_or(cut)?;
    at += 1;
    let string = |at: usize, len: usize| -> Result<(Elem<'_>, usize), BadData> {
        let end = at.checked_add(len).ok_or(cut)?;
        Ok((Elem::Str(p.get(at..end).ok_or(cut)?), end))
    };
    let int = |at: usize, width: usize| -> Result<(Elem<'_>, usize), BadData> {
        let bytes = p.get(at..at + width).ok_or(cut)?;
        let mut le = [0u8; 8];
        le[..width].copy_from_slice(bytes);
        let shift = 64 - 8 * width as u32;
        Ok((
            Elem::Int((i64::from_le_bytes(le) << shift) >> shift),
            at + width,
        ))
    };
    match enc {
        0x00..=0x3f => string(at, usize::from(enc)),
        0x40..=0x7f => {
            let low = *p.get(at).ok_or(cut)?;
            string(at + 1, usize::from(enc & 0x3f) << 8 | usize::from(low))
        }
        0x80 => {
            let b = p.get(at..at + 4).ok_or(cut)?;
            string(
                at + 4,
                u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize,
            )
        }
        0xc0 => int(at, 2),
        0xd0 => int(at, 4),
        0xe0 => int(at, 8),
        0xf0 => int(at, 3),
        0xfe => int(at, 1),
        0xf1..=0xfd => Ok((Elem::Int(i64::from(enc & 0x0f) - 1), at)),
        _ => Err(BadData("ziplist encoding")),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A ziplist of `items`, built by hand as Redis 6.2 lays one out:
    /// integer text as integers, the rest as strings.
    pub fn build(items: &[&[u8]]) -> Vec<u8> {
        let mut body = Vec::new();
        let mut prev = 0usize;
        let mut last = HEADER;
        for item in items {
            let start = body.len();
            last = HEADER + start;
            if prev < 254 {
                body.push(prev as u8);
            } else {
                body.push(BIG_PREVLEN);
                body.extend_from_slice(&(prev as u32).to_le_bytes());
            }
            match crate::util::num::parse_i64(item) {
                Some(v @ 0..=12) => body.push(0xf1 + v as u8),
                Some(v) if i8::try_from(v).is_ok() => body.extend_from_slice(&[0xfe, v as u8]),
                Some(v) if i16::try_from(v).is_ok() => {
                    body.push(0xc0);
                    body.extend_from_slice(&(v as i16).to_le_bytes());
                }
                Some(v) if (-(1 << 23)..1 << 23).contains(&v) => {
                    body.push(0xf0);
                    body.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
                }
                Some(v) if i32::try_from(v).is_ok() => {
                    body.push(0xd0);
                    body.extend_from_slice(&(v as i32).to_le_bytes());
                }
                Some(v) => {
                    body.push(0xe0);
                    body.extend_from_slice(&v.to_le_bytes());
                }
                None if item.len() < 64 => {
                    body.push(item.len() as u8);
                    body.extend_from_slice(item);
                }
                None if item.len() < 16384 => {
                    body.extend_from_slice(&[0x40 | (item.len() >> 8) as u8, item.len() as u8]);
                    body.extend_from_slice(item);
                }
                None => {
                    body.push(0x80);
                    body.extend_from_slice(&(item.len() as u32).to_be_bytes());
                    body.extend_from_slice(item);
                }
            }
            prev = body.len() - start;
        }
        let mut blob = Vec::new();
        blob.extend_from_slice(&((HEADER + body.len() + 1) as u32).to_le_bytes());
        blob.extend_from_slice(&(last as u32).to_le_bytes());
        blob.extend_from_slice(&(items.len().min(65535) as u16).to_le_bytes());
        blob.extend_from_slice(&body);
        blob.push(END);
        blob
    }

    #[test]
    fn every_encoding_reads_back() {
        let long = vec![b'z'; 300];
        let longer = vec![b'w'; 20_000];
        let items: Vec<&[u8]> = vec![
            b"a",
            b"",
            b"0",
            b"12",
            b"13",
            b"-1",
            b"-200",
            b"40000",
            b"-8000000",
            b"2000000000",
            b"-9223372036854775808",
            &long,
            &longer,
            b"tail",
        ];
        let blob = build(&items);
        let got: Vec<Vec<u8>> = entries(&blob).unwrap().iter().map(|e| e.to_vec()).collect();
        assert_eq!(got, items);
    }

    #[test]
    fn corrupt_ziplists_are_refused() {
        let good = build(&[b"a", b"bb", b"5"]);
        assert!(entries(&good).is_ok());
        for cut in 0..good.len() {
            assert!(entries(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut prevlen = good.clone();
        prevlen[13] = 7;
        assert!(entries(&prevlen).is_err(), "prevlen");
        let mut tail = good.clone();
        tail[4] = 11;
        assert!(entries(&tail).is_err(), "tail");
        let mut count = good.clone();
        count[8] = 9;
        assert!(entries(&count).is_err(), "count");
        let mut enc = good;
        enc[11] = 0xc1;
        assert!(entries(&enc).is_err(), "encoding");
    }
}
