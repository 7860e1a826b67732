//! Redis's zipmap, the compact hash of Redis 2.x RDB files, which 7.0
//! still loads. ember only reads it.
//!
//! ```text
//!   <count: u8, 254+ = unknown> (<len> <field> <len> <free: u8> <value> <free bytes>)* 0xFF
//!   len: 1 byte under 254, else 0xFE + u32 LE
//! ```

use super::BadData;

const END: u8 = 0xff;

/// A field and its value.
pub type Pair<'a> = (&'a [u8], &'a [u8]);
const BIG_LEN: u8 = 0xfe;

/// The field/value pairs of a zipmap, validated.
pub fn pairs(blob: &[u8]) -> Result<Vec<Pair<'_>>, BadData> {
    let cut = BadData("zipmap entry past the end");
    let count = *blob.first().ok_or(cut)?;
    let mut out = Vec::new();
    let mut at = 1;
    loop {
        match *blob.get(at).ok_or(cut)? {
            END => break,
            _ => {
                let (field, next) = string(blob, at)?;
                let (vlen, vat) = len(blob, next)?;
                let free = usize::from(*blob.get(vat).ok_or(cut)?);
                let value = blob.get(vat + 1..vat + 1 + vlen).ok_or(cut)?;
                out.push((field, value));
                at = vat + 1 + vlen + free;
            }
        }
    }
    if at + 1 != blob.len() {
        return Err(BadData("zipmap end"));
    }
    if count < 254 && usize::from(count) != out.len() {
        return Err(BadData("zipmap count"));
    }
    Ok(out)
}

/// A length at `at`: its value and where the data starts.
fn len(blob: &[u8], at: usize) -> Result<(usize, usize), BadData> {
    let cut = BadData("zipmap entry past the end");
    match *blob.get(at).ok_or(cut)? {
        BIG_LEN => {
            let b = blob.get(at + 1..at + 5).ok_or(cut)?;
            Ok((
                u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
                at + 5,
            ))
        }
        END => Err(BadData("zipmap length")),
        n => Ok((usize::from(n), at + 1)),
    }
}

fn string(blob: &[u8], at: usize) -> Result<(&[u8], usize), BadData> {
    let (n, start) = len(blob, at)?;
    let end = start.checked_add(n).ok_or(BadData("zipmap length"))?;
    let s = blob
        .get(start..end)
        .ok_or(BadData("zipmap entry past the end"))?;
    Ok((s, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pairs_with_free_space() {
        // {"foo": "bar", "k": "v"} with two free bytes after "bar".
        let blob = b"\x02\x03foo\x03\x02barXX\x01k\x01\x00v\xff";
        assert_eq!(
            pairs(blob),
            Ok(vec![(&b"foo"[..], &b"bar"[..]), (b"k", b"v")])
        );
        for cut in 0..blob.len() {
            assert!(pairs(&blob[..cut]).is_err(), "cut at {cut}");
        }
        assert!(pairs(b"\x05\x01k\x01\x00v\xff").is_err(), "count");
        assert!(pairs(b"\x01\x01k\x01\x00v\xffjunk").is_err(), "end");
    }
}
