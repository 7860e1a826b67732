//! A stored key, as small as it can be.
//!
//! Cache keys are mostly short (`session:8f3a...`, `user:1234:views`), and
//! every key is held once per stored entry, so its size is paid millions of
//! times. A key of up to [`INLINE`] bytes lives inside the dict's slot with
//! no allocation at all; a longer one is one exact-size heap allocation.
//! Either way the key takes 24 bytes in the slot, where a `Bytes` takes 32
//! plus a heap buffer (and a shared header once cloned).

use std::fmt;
use std::ops::Deref;

/// The longest key kept inline.
pub const INLINE: usize = 22;

#[derive(Clone, PartialEq, Eq)]
pub enum Key {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Key {
    pub fn new(key: &[u8]) -> Key {
        if key.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..key.len()].copy_from_slice(key);
            Key::Inline {
                len: key.len() as u8,
                bytes,
            }
        } else {
            Key::Heap(key.into())
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Key::Heap(bytes) => bytes,
        }
    }

    /// Heap bytes this key holds beyond its slot (memory accounting).
    pub fn heap_size(&self) -> usize {
        match self {
            Key::Inline { .. } => 0,
            Key::Heap(bytes) => crate::util::alloc_size(bytes.len()),
        }
    }
}

impl Deref for Key {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", bytes::Bytes::copy_from_slice(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_takes_24_bytes_whatever_its_length() {
        assert_eq!(std::mem::size_of::<Key>(), 24);
    }

    #[test]
    fn keys_round_trip_on_both_sides_of_the_inline_limit() {
        for len in [0, 1, INLINE - 1, INLINE, INLINE + 1, 200] {
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let key = Key::new(&bytes);
            assert_eq!(key.as_bytes(), &bytes[..]);
            assert_eq!(matches!(key, Key::Inline { .. }), len <= INLINE);
            assert_eq!(key.heap_size() == 0, len <= INLINE);
        }
        assert_ne!(
            Key::new(b"a"),
            Key::new(b"a\0"),
            "length is part of the key"
        );
    }
}
