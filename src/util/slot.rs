//! Redis Cluster key slots: CRC16/XMODEM of the key (or its `{hash tag}`).
//!
//! Clients compute slots themselves and `CLUSTER KEYSLOT` must agree with
//! them bit for bit, so this is exactly Redis's `keyHashSlot`.

/// Number of hash slots, as in Redis Cluster.
pub const SLOTS: u16 = 16384;

/// CRC16/XMODEM lookup table (polynomial 0x1021, no reflection), built at
/// compile time so the hot path is one table lookup per byte.
const CRC16_TABLE: [u16; 256] = build_table();

const fn build_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

/// CRC16 (XMODEM polynomial 0x1021) as Redis Cluster uses it.
pub fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ CRC16_TABLE[usize::from((crc >> 8) as u8 ^ b)]
    })
}

/// `CRC16(key) mod 16384`, hashing only the `{tag}` when the key has a non-empty one.
///
/// The tag is between the first `{` and the first `}` after it; `{}` (empty)
/// or no closing brace means the whole key is hashed.
pub fn key_slot(key: &[u8]) -> u16 {
    let hashed = key
        .iter()
        .position(|&c| c == b'{')
        .and_then(|open| {
            let rest = &key[open + 1..];
            let close = rest.iter().position(|&c| c == b'}')?;
            (close > 0).then(|| &rest[..close])
        })
        .unwrap_or(key);
    crc16(hashed) & (SLOTS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_check_value() {
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn known_slots() {
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn hash_tags() {
        assert_eq!(
            key_slot(b"{user1000}.following"),
            key_slot(b"{user1000}.followers")
        );
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), crc16(b"foo{}{bar}") & 0x3FFF);
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
        assert_eq!(key_slot(b"foo{bar}{zap}"), key_slot(b"bar"));
        assert_eq!(key_slot(b"foo{bar"), crc16(b"foo{bar") & 0x3FFF);
        assert_eq!(key_slot(b"}foo{bar}"), key_slot(b"bar"));
    }
}
