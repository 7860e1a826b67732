//! Redis's listpack, the blob behind the compact hash, sorted-set and set
//! encodings and a quicklist's nodes (not ember's own `store::listpack`,
//! which only borrows the idea).
//!
//! ```text
//!   <total bytes: u32 LE> <entries: u16 LE, 65535 = unknown> <entry>* 0xFF
//!   entry: <encoding + data> <backlen: the size of encoding + data>
//!
//!   0xxxxxxx                 7-bit unsigned integer
//!   10LLLLLL <data>          string of up to 63 bytes
//!   110xxxxx xxxxxxxx        13-bit signed integer
//!   1110LLLL LLLLLLLL <data> string of up to 4095 bytes (length big-endian)
//!   11110000 <u32 LE> <data> longer string
//!   11110001..11110100       16, 24, 32, 64-bit signed integer, LE
//! ```
//!
//! The backlen is 1..5 bytes read from the right: each holds 7 bits, the
//! last one (leftmost) without its high bit. The reader validates the whole
//! blob (header, every entry's bounds and backlen, the count, the end mark)
//! before the caller builds anything from it.

use super::{BadData, Elem};

const HEADER: usize = 6;
const END: u8 = 0xff;
/// The header's entry count when the listpack holds 65535 or more.
const UNKNOWN_COUNT: u16 = u16::MAX;

/// The entries of a listpack, validated.
pub fn entries(blob: &[u8]) -> Result<Vec<Elem<'_>>, BadData> {
    let bad = |why| Err(BadData(why));
    if blob.len() < HEADER + 1 {
        return bad("listpack too short");
    }
    let total = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
    let count = u16::from_le_bytes([blob[4], blob[5]]);
    if total != blob.len() || blob[blob.len() - 1] != END {
        return bad("listpack header or end");
    }
    let body = &blob[HEADER..blob.len() - 1];
    // The header's count is checked at the end; until then it only sizes
    // the vector, within what the body could hold (two bytes an entry).
    let mut out = Vec::with_capacity(usize::from(count).min(body.len() / 2));
    let mut at = 0;
    while at < body.len() {
        let (elem, size) = entry(&body[at..])?;
        let backlen = backlen_size(size);
        let stored = body
            .get(at + size..at + size + backlen)
            .ok_or(BadData("listpack entry past the end"))?;
        if read_backlen(stored) != Some(size) {
            return bad("listpack backlen");
        }
        out.push(elem);
        at += size + backlen;
    }
    if count != UNKNOWN_COUNT && usize::from(count) != out.len() {
        return bad("listpack count");
    }
    Ok(out)
}

/// One entry at the start of `p`: its value and the size of its encoding
/// and data (the backlen excluded).
fn entry(p: &[u8]) -> Result<(Elem<'_>, usize), BadData> {
    let cut = BadData("listpack entry past the end");
    let byte = |i: usize| p.get(i).copied().ok_or(cut);
    let first = p[0];
    let int = |width: usize| -> Result<(Elem<'_>, usize), BadData> {
        let bytes = p.get(1..1 + width).ok_or(cut)?;
        let mut le = [0u8; 8];
        le[..width].copy_from_slice(bytes);
        // Sign-extend from the top bit of the stored width.
        let shift = 64 - 8 * width as u32;
        let v = (i64::from_le_bytes(le) << shift) >> shift;
        Ok((Elem::Int(v), 1 + width))
    };
    let string = |skip: usize, len: usize| -> Result<(Elem<'_>, usize), BadData> {
        let end = skip.checked_add(len).ok_or(cut)?;
        let data = p.get(skip..end).ok_or(cut)?;
        Ok((Elem::Str(data), end))
    };
    match first {
        0x00..=0x7f => Ok((Elem::Int(i64::from(first)), 1)),
        0x80..=0xbf => string(1, usize::from(first & 0x3f)),
        0xc0..=0xdf => {
            let raw = i64::from(first & 0x1f) << 8 | i64::from(byte(1)?);
            // 13-bit two's complement.
            let v = if raw >= 1 << 12 { raw - (1 << 13) } else { raw };
            Ok((Elem::Int(v), 2))
        }
        0xe0..=0xef => string(2, usize::from(first & 0x0f) << 8 | usize::from(byte(1)?)),
        0xf0 => {
            let len = p.get(1..5).ok_or(cut)?;
            string(
                5,
                u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize,
            )
        }
        0xf1 => int(2),
        0xf2 => int(3),
        0xf3 => int(4),
        0xf4 => int(8),
        _ => Err(BadData("listpack encoding")),
    }
}

fn backlen_size(size: usize) -> usize {
    match size {
        0..=127 => 1,
        128..=16_383 => 2,
        16_384..=2_097_151 => 3,
        2_097_152..=268_435_455 => 4,
        _ => 5,
    }
}

/// Reads a backlen stored in `bytes` (its exact bytes, left to right).
fn read_backlen(bytes: &[u8]) -> Option<usize> {
    let mut v = 0usize;
    for (i, &b) in bytes.iter().rev().enumerate() {
        let more = i + 1 < bytes.len();
        if (b & 0x80 != 0) != more {
            return None;
        }
        v |= usize::from(b & 0x7f) << (7 * i);
    }
    Some(v)
}

fn put_backlen(out: &mut Vec<u8>, size: usize) {
    let n = backlen_size(size);
    for j in 0..n {
        let bits = ((size >> (7 * (n - 1 - j))) & 0x7f) as u8;
        // Every byte but the leftmost carries the high bit.
        out.push(if j == 0 { bits } else { bits | 0x80 });
    }
}

/// Builds a listpack as Redis's `lpAppend` does: integer text becomes an
/// integer entry of the narrowest width.
#[derive(Default)]
pub struct Writer {
    body: Vec<u8>,
    count: usize,
}

impl Writer {
    /// The size of the listpack built so far.
    pub fn bytes(&self) -> usize {
        HEADER + self.body.len() + 1
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// What appending `s` adds to the size.
    pub fn entry_size(s: &[u8]) -> usize {
        let size = match crate::util::num::parse_i64(s) {
            Some(v) => int_size(v),
            None => str_header(s.len()) + s.len(),
        };
        size + backlen_size(size)
    }

    pub fn push(&mut self, s: &[u8]) {
        match crate::util::num::parse_i64(s) {
            Some(v) => self.push_int(v),
            None => self.push_str(s),
        }
    }

    pub fn push_int(&mut self, v: i64) {
        let start = self.body.len();
        let out = &mut self.body;
        match int_size(v) {
            1 => out.push(v as u8),
            2 => {
                let raw = (v & 0x1fff) as u16;
                out.extend_from_slice(&[0xc0 | (raw >> 8) as u8, raw as u8]);
            }
            3 => {
                out.push(0xf1);
                out.extend_from_slice(&(v as i16).to_le_bytes());
            }
            4 => {
                out.push(0xf2);
                out.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
            }
            5 => {
                out.push(0xf3);
                out.extend_from_slice(&(v as i32).to_le_bytes());
            }
            _ => {
                out.push(0xf4);
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        let size = self.body.len() - start;
        put_backlen(&mut self.body, size);
        self.count += 1;
    }

    fn push_str(&mut self, s: &[u8]) {
        let out = &mut self.body;
        let len = s.len();
        match str_header(len) {
            1 => out.push(0x80 | len as u8),
            2 => out.extend_from_slice(&[0xe0 | (len >> 8) as u8, len as u8]),
            _ => {
                out.push(0xf0);
                out.extend_from_slice(&(len as u32).to_le_bytes());
            }
        }
        out.extend_from_slice(s);
        put_backlen(&mut self.body, str_header(len) + len);
        self.count += 1;
    }

    /// The finished blob. Requires: under 4 GiB (callers keep listpacks
    /// far smaller, see `encode`).
    pub fn finish(self) -> Vec<u8> {
        let total = self.bytes();
        let mut blob = Vec::with_capacity(total);
        blob.extend_from_slice(&(total as u32).to_le_bytes());
        let count = u16::try_from(self.count).unwrap_or(UNKNOWN_COUNT);
        blob.extend_from_slice(&count.to_le_bytes());
        blob.extend_from_slice(&self.body);
        blob.push(END);
        blob
    }
}

/// Encoding plus data size of integer `v` (1, 2, 3, 4, 5 or 9 bytes).
fn int_size(v: i64) -> usize {
    match v {
        0..=127 => 1,
        -4096..=4095 => 2,
        -32_768..=32_767 => 3,
        -8_388_608..=8_388_607 => 4,
        -2_147_483_648..=2_147_483_647 => 5,
        _ => 9,
    }
}

fn str_header(len: usize) -> usize {
    match len {
        0..=63 => 1,
        64..=4095 => 2,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(items: &[&[u8]]) -> Vec<u8> {
        let mut w = Writer::default();
        for item in items {
            w.push(item);
        }
        w.finish()
    }

    #[test]
    fn reads_what_redis_server_wrote() {
        // The listpack of RPUSH l a b 1 2 300 -5 70000 in redis-server 7.0.15.
        let blob = b"\x1c\x00\x00\x00\x07\x00\x81a\x02\x81b\x02\x01\x01\x02\x01\xc1\x2c\x02\xdf\xfb\x02\xf2\x70\x11\x01\x04\xff";
        let got: Vec<Vec<u8>> = entries(blob).unwrap().iter().map(|e| e.to_vec()).collect();
        assert_eq!(got, [&b"a"[..], b"b", b"1", b"2", b"300", b"-5", b"70000"]);
        assert_eq!(
            build(&[b"a", b"b", b"1", b"2", b"300", b"-5", b"70000"]),
            blob,
            "and writes it the same"
        );
    }

    #[test]
    fn every_width_round_trips() {
        let long = vec![b'x'; 5000];
        let mid = vec![b'y'; 100];
        let ints: Vec<String> = [
            0i64,
            127,
            128,
            -1,
            4095,
            -4096,
            4096,
            32767,
            -32769,
            8_388_607,
            -8_388_609,
            i32::MAX as i64,
            i32::MIN as i64 - 1,
            i64::MAX,
            i64::MIN,
        ]
        .iter()
        .map(|v| v.to_string())
        .collect();
        let mut items: Vec<&[u8]> = vec![b"", b"-0", b"01", &mid, &long];
        items.extend(ints.iter().map(|s| s.as_bytes()));
        let blob = build(&items);
        let got: Vec<Vec<u8>> = entries(&blob).unwrap().iter().map(|e| e.to_vec()).collect();
        assert_eq!(got, items);
        let mut w = Writer::default();
        for item in &items {
            let before = w.bytes();
            w.push(item);
            assert_eq!(w.bytes() - before, Writer::entry_size(item));
        }
    }

    #[test]
    fn backlens_of_every_size() {
        for size in [
            1usize,
            127,
            128,
            16_383,
            16_384,
            2_097_151,
            2_097_152,
            268_435_456,
        ] {
            let mut out = Vec::new();
            put_backlen(&mut out, size);
            assert_eq!(out.len(), backlen_size(size));
            assert_eq!(read_backlen(&out), Some(size), "{size}");
        }
    }

    #[test]
    fn corrupt_listpacks_are_refused() {
        let good = build(&[b"a", b"bc", b"7"]);
        assert!(entries(&good).is_ok());
        for cut in 0..good.len() {
            assert!(entries(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut count = good.clone();
        count[4] = 2;
        assert!(entries(&count).is_err(), "count");
        let mut backlen = good.clone();
        backlen[8] = 5;
        assert!(entries(&backlen).is_err(), "backlen");
        let mut enc = good.clone();
        enc[6] = 0xf5;
        assert!(entries(&enc).is_err(), "encoding");
        let mut len = good;
        len[6] = 0x80 | 40;
        assert!(entries(&len).is_err(), "string past the end");
    }
}
