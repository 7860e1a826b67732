//! Passwords as Redis keeps them: the SHA-256 of the password in lowercase
//! hex, so a password is never stored (nor logged); and ACL GENPASS's
//! random hex from the kernel's generator.

use sha2::{Digest, Sha256};

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// The SHA-256 of `password`, 64 lowercase hex digits.
pub fn hash_hex(password: &[u8]) -> String {
    hex(&Sha256::digest(password))
}

/// Whether `text` is a hash as `#<hash>` takes it: 64 lowercase hex digits.
pub fn is_hash(text: &[u8]) -> bool {
    text.len() == 64 && text.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// `bits` random bits as hex digits (rounded up to whole digits), read
/// from `/dev/urandom` as Redis reads it.
pub fn random_hex(bits: usize) -> std::io::Result<String> {
    use std::io::Read;
    let digits = bits.div_ceil(4);
    let mut bytes = vec![0u8; digits.div_ceil(2)];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    let mut text = hex(&bytes);
    text.truncate(digits);
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_hex_matches_redis() {
        // ACL GETUSER of a user set with `>a` shows this hash.
        assert_eq!(
            hash_hex(b"a"),
            "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
        );
        assert!(is_hash(hash_hex(b"x").as_bytes()));
        assert!(!is_hash(b"abc"));
        assert!(!is_hash(hash_hex(b"x").to_uppercase().as_bytes()));
    }

    #[test]
    fn random_hex_has_the_digits_asked() {
        assert_eq!(random_hex(256).unwrap().len(), 64);
        assert_eq!(random_hex(5).unwrap().len(), 2);
        assert_eq!(random_hex(1).unwrap().len(), 1);
    }
}
