//! A stream entry's ID: milliseconds and a sequence number, ordered as the
//! pair, written `<ms>-<seq>`.

use std::fmt;

use bytes::Bytes;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// The next ID up, None after the largest.
    pub fn next(self) -> Option<StreamId> {
        match self.seq.checked_add(1) {
            Some(seq) => Some(StreamId::new(self.ms, seq)),
            None => self.ms.checked_add(1).map(|ms| StreamId::new(ms, 0)),
        }
    }

    /// The next ID down, None below 0-0.
    pub fn prev(self) -> Option<StreamId> {
        match self.seq.checked_sub(1) {
            Some(seq) => Some(StreamId::new(self.ms, seq)),
            None => self.ms.checked_sub(1).map(|ms| StreamId::new(ms, u64::MAX)),
        }
    }

    /// The text form, as a reply's bulk string.
    pub fn to_bytes(self) -> Bytes {
        Bytes::from(self.to_string())
    }

    /// The 16 bytes Redis keys its radix tree (and writes IDs in RDB) with:
    /// both halves big-endian, so byte order is ID order.
    pub fn to_be_bytes(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.ms.to_be_bytes());
        out[8..].copy_from_slice(&self.seq.to_be_bytes());
        out
    }

    pub fn from_be_bytes(b: &[u8]) -> Option<StreamId> {
        if b.len() != 16 {
            return None;
        }
        let mut ms = [0u8; 8];
        let mut seq = [0u8; 8];
        ms.copy_from_slice(&b[..8]);
        seq.copy_from_slice(&b[8..]);
        Some(StreamId::new(
            u64::from_be_bytes(ms),
            u64::from_be_bytes(seq),
        ))
    }

    /// Parses `<ms>` or `<ms>-<seq>`, `missing_seq` standing for an absent
    /// sequence. Both are unsigned decimal numbers as `strtoull` would take
    /// them strictly (no sign, no spaces).
    pub fn parse(text: &[u8], missing_seq: u64) -> Option<StreamId> {
        match text.iter().position(|&b| b == b'-') {
            None => Some(StreamId::new(parse_u64(text)?, missing_seq)),
            Some(dash) => Some(StreamId::new(
                parse_u64(&text[..dash])?,
                parse_u64(&text[dash + 1..])?,
            )),
        }
    }
}

/// An unsigned decimal number filling the whole of `s`.
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms() {
        assert_eq!(StreamId::parse(b"5", 0), Some(StreamId::new(5, 0)));
        assert_eq!(
            StreamId::parse(b"5", u64::MAX),
            Some(StreamId::new(5, u64::MAX))
        );
        assert_eq!(StreamId::parse(b"5-3", 0), Some(StreamId::new(5, 3)));
        assert_eq!(
            StreamId::parse(b"18446744073709551615-18446744073709551615", 0),
            Some(StreamId::MAX)
        );
        for bad in [
            &b""[..],
            b"-",
            b"5-",
            b"-5",
            b"a-1",
            b"1-2-3",
            b"+1",
            b" 1",
            b"18446744073709551616",
        ] {
            assert_eq!(StreamId::parse(bad, 0), None, "{:?}", bad);
        }
    }

    #[test]
    fn steps_across_the_halves() {
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
        assert_eq!(StreamId::MIN.prev(), None);
    }

    #[test]
    fn big_endian_bytes_sort_as_ids() {
        let a = StreamId::new(1, 300);
        let b = StreamId::new(2, 1);
        assert!(a.to_be_bytes() < b.to_be_bytes());
        assert_eq!(StreamId::from_be_bytes(&a.to_be_bytes()), Some(a));
    }
}
