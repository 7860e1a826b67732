/// Number of hash slots, as in Redis Cluster.
pub const SLOTS: u16 = 16384;

/// CRC16 (XMODEM polynomial 0x1021) as Redis Cluster uses it.
pub fn crc16(data: &[u8]) -> u16 {
    let _ = data;
    todo!()
}

/// `CRC16(key) mod 16384`, hashing only the `{tag}` when the key has a non-empty one.
pub fn key_slot(key: &[u8]) -> u16 {
    let _ = key;
    todo!()
}
