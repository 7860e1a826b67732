//! Redis's intset, the compact encoding of a set of integers: its members
//! ascending, all stored in the narrowest width that holds the largest.
//!
//! ```text
//!   <width: u32 LE, 2, 4 or 8> <count: u32 LE> <member: width bytes LE>*
//! ```

use super::BadData;

const HEADER: usize = 8;

/// The members of an intset, checked: a known width, a size that matches
/// the count, and strictly ascending members (so no duplicates).
pub fn members(blob: &[u8]) -> Result<Vec<i64>, BadData> {
    if blob.len() < HEADER {
        return Err(BadData("intset too short"));
    }
    let width = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
    let count = u32::from_le_bytes([blob[4], blob[5], blob[6], blob[7]]) as usize;
    if !matches!(width, 2 | 4 | 8) {
        return Err(BadData("intset width"));
    }
    let body = &blob[HEADER..];
    if count.checked_mul(width) != Some(body.len()) {
        return Err(BadData("intset size"));
    }
    let mut out: Vec<i64> = Vec::with_capacity(count);
    for raw in body.chunks_exact(width) {
        let v = match width {
            2 => i64::from(i16::from_le_bytes([raw[0], raw[1]])),
            4 => i64::from(i32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]])),
            _ => i64::from_le_bytes([
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
            ]),
        };
        if out.last().is_some_and(|&prev| prev >= v) {
            return Err(BadData("intset order"));
        }
        out.push(v);
    }
    Ok(out)
}

/// The intset of `members`. Requires: ascending, no duplicates.
pub fn build(members: &[i64]) -> Vec<u8> {
    let width = members.iter().map(|&v| width_of(v)).max().unwrap_or(2);
    let mut blob = Vec::with_capacity(HEADER + members.len() * width);
    blob.extend_from_slice(&(width as u32).to_le_bytes());
    blob.extend_from_slice(&(members.len() as u32).to_le_bytes());
    for &v in members {
        blob.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    blob
}

fn width_of(v: i64) -> usize {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_what_redis_server_does() {
        // SADD si 1 2 3 in redis-server 7.0.15.
        let blob = b"\x02\x00\x00\x00\x03\x00\x00\x00\x01\x00\x02\x00\x03\x00";
        assert_eq!(members(blob), Ok(vec![1, 2, 3]));
        assert_eq!(build(&[1, 2, 3]), blob);
    }

    #[test]
    fn widths_grow_with_the_largest_member() {
        for set in [
            vec![-32768, 32767],
            vec![-1, 40_000],
            vec![i64::MIN, 0, i64::MAX],
        ] {
            assert_eq!(members(&build(&set)), Ok(set));
        }
        assert_eq!(build(&[70_000])[0], 4);
        assert_eq!(build(&[1 << 40])[0], 8);
    }

    #[test]
    fn corrupt_intsets_are_refused() {
        assert!(
            members(b"\x03\x00\x00\x00\x00\x00\x00\x00").is_err(),
            "width"
        );
        assert!(
            members(b"\x02\x00\x00\x00\x02\x00\x00\x00\x01\x00").is_err(),
            "size"
        );
        assert!(members(&build(&[2, 1])).is_err(), "order");
        assert!(members(&build(&[1, 1])).is_err(), "duplicate");
        assert!(
            members(b"\x02\x00\x00\x00\xff\xff\xff\xff").is_err(),
            "huge count"
        );
    }
}
