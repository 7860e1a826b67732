//! The compact form of small hashes: field/value pairs packed into one
//! buffer, as Redis's `listpack` encoding keeps them.
//!
//! Layout: pairs in insertion order, each `len(field) field len(value)
//! value`, lengths as LEB128 varints (one byte up to 127). No per-pair
//! allocation and no index: a lookup walks the pairs, which is cheap for
//! the few dozen short pairs a hash holds while it stays compact (the
//! caller, `store::hash`, converts to a table past `hash-max-listpack-*`).
//!
//! The buffer is a `Box<[u8]>` sized to its content: every change
//! reallocates to the exact length (what Redis's listpack does too), so an
//! idle hash wastes no capacity.

/// Field/value pairs in one buffer, in insertion order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listpack {
    buf: Box<[u8]>,
    /// Number of pairs (kept so HLEN and the entry limit are O(1)).
    len: usize,
}

/// Where one pair sits in the buffer.
struct Slot {
    /// First byte of the pair (its field length).
    start: usize,
    /// First byte of the value's length.
    value_at: usize,
    /// One past the pair's last byte.
    end: usize,
}

impl Listpack {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes allocated for the pairs (the buffer's size class).
    pub fn heap_size(&self) -> usize {
        crate::util::alloc_size(self.buf.len())
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        let slot = self.find(field)?;
        Some(decode_pair(&self.buf, slot.start).1)
    }

    pub fn contains(&self, field: &[u8]) -> bool {
        self.find(field).is_some()
    }

    /// Sets `field` to `value`, appending a new field at the end. Returns
    /// true when the field is new.
    pub fn insert(&mut self, field: &[u8], value: &[u8]) -> bool {
        match self.find(field) {
            Some(slot) => {
                self.replace_value(slot, value);
                false
            }
            None => {
                let mut buf = std::mem::take(&mut self.buf).into_vec();
                buf.reserve_exact(encoded_len(field) + encoded_len(value));
                put_bytes(&mut buf, field);
                put_bytes(&mut buf, value);
                self.buf = buf.into_boxed_slice();
                self.len += 1;
                true
            }
        }
    }

    /// Removes `field`; the pairs after it keep their order. True if it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        let Some(slot) = self.find(field) else {
            return false;
        };
        let mut buf = std::mem::take(&mut self.buf).into_vec();
        buf.drain(slot.start..slot.end);
        self.buf = buf.into_boxed_slice();
        self.len -= 1;
        true
    }

    /// Pairs in insertion order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            buf: &self.buf,
            at: 0,
        }
    }

    /// The pair at position `index` (insertion order); O(index).
    pub fn get_index(&self, index: usize) -> Option<(&[u8], &[u8])> {
        self.iter().nth(index)
    }

    fn find(&self, field: &[u8]) -> Option<Slot> {
        let buf = &*self.buf;
        let mut at = 0;
        while at < buf.len() {
            let (name_len, name_at) = read_len(buf, at);
            let value_at = name_at + name_len;
            let (value_len, value_start) = read_len(buf, value_at);
            let end = value_start + value_len;
            // Names often share a prefix ("user:", "element:0000") and differ
            // at the end: length and last byte reject most without a memcmp.
            if name_len == field.len()
                && (name_len == 0 || buf[value_at - 1] == field[name_len - 1])
                && buf[name_at..value_at] == *field
            {
                return Some(Slot {
                    start: at,
                    value_at,
                    end,
                });
            }
            at = end;
        }
        None
    }

    /// Overwrites the value of the pair at `slot`: in place when the
    /// encoded size is unchanged (a counter, a same-size rewrite), else by
    /// moving the pairs after it.
    fn replace_value(&mut self, slot: Slot, value: &[u8]) {
        let old = slot.value_at..slot.end;
        let new_len = encoded_len(value);
        if new_len == old.len() {
            let (_, start) = read_len(&self.buf, slot.value_at);
            self.buf[start..slot.end].copy_from_slice(value);
            return;
        }
        let mut encoded = Vec::with_capacity(new_len);
        put_bytes(&mut encoded, value);
        let mut buf = std::mem::take(&mut self.buf).into_vec();
        // Exact growth, so `splice` does not over-allocate.
        buf.reserve_exact(new_len.saturating_sub(old.len()));
        buf.splice(old, encoded);
        self.buf = buf.into_boxed_slice();
    }
}

impl<'a> IntoIterator for &'a Listpack {
    type Item = (&'a [u8], &'a [u8]);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The pairs of a [`Listpack`], in order.
#[derive(Clone)]
pub struct Iter<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.buf.len() {
            return None;
        }
        let (field, value, _, end) = decode_pair(self.buf, self.at);
        self.at = end;
        Some((field, value))
    }
}

/// Bytes `bytes` takes once encoded: its length, then itself.
fn encoded_len(bytes: &[u8]) -> usize {
    varint_len(bytes.len()) + bytes.len()
}

fn varint_len(mut n: usize) -> usize {
    let mut bytes = 1;
    while n >= 0x80 {
        n >>= 7;
        bytes += 1;
    }
    bytes
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut n = bytes.len();
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(bytes);
}

/// The length encoded at `at` and the position after it.
fn read_len(buf: &[u8], mut at: usize) -> (usize, usize) {
    if buf[at] < 0x80 {
        return (buf[at] as usize, at + 1); // the usual one-byte length
    }
    let (mut n, mut shift) = (0usize, 0);
    loop {
        let byte = buf[at];
        at += 1;
        n |= ((byte & 0x7f) as usize) << shift;
        if byte < 0x80 {
            return (n, at);
        }
        shift += 7;
    }
}

/// The length-prefixed bytes at `at` and the position after them.
fn read_bytes(buf: &[u8], at: usize) -> (&[u8], usize) {
    let (len, start) = read_len(buf, at);
    (&buf[start..start + len], start + len)
}

/// The pair starting at `at`: field, value, where the value's length
/// starts, and where the next pair starts.
fn decode_pair(buf: &[u8], at: usize) -> (&[u8], &[u8], usize, usize) {
    let (field, value_at) = read_bytes(buf, at);
    let (value, end) = read_bytes(buf, value_at);
    (field, value, value_at, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(lp: &Listpack) -> Vec<(Vec<u8>, Vec<u8>)> {
        lp.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()
    }

    #[test]
    fn lengths_round_trip_across_varint_widths() {
        for len in [0, 1, 127, 128, 300, 16_383, 16_384, 70_000] {
            let mut buf = Vec::new();
            put_bytes(&mut buf, &vec![7u8; len]);
            assert_eq!(buf.len(), encoded_len(&vec![0; len]), "{len}");
            let (bytes, end) = read_bytes(&buf, 0);
            assert_eq!((bytes.len(), end), (len, buf.len()));
        }
    }

    #[test]
    fn overwrites_resize_in_place_and_keep_positions() {
        let mut lp = Listpack::default();
        assert!(lp.insert(b"a", b"1"));
        assert!(lp.insert(b"b", b"2"));
        assert!(lp.insert(b"c", b"3"));
        assert!(!lp.insert(b"a", b"9"), "same size: rewritten in place");
        assert!(!lp.insert(b"b", &[b'x'; 200]), "longer, two length bytes");
        assert!(!lp.insert(b"c", b""), "shorter");
        assert_eq!(
            pairs(&lp),
            [
                (b"a".to_vec(), b"9".to_vec()),
                (b"b".to_vec(), vec![b'x'; 200]),
                (b"c".to_vec(), vec![])
            ]
        );
        // a=9: 1+1+1+1; b: 1+1+2+200; c: 1+1+1+0 (in a 224-byte class).
        assert_eq!(lp.buf.len(), 4 + 204 + 3);
        assert_eq!(lp.heap_size(), 224);
        assert_eq!(lp.get_index(2), Some((&b"c"[..], &b""[..])));
        assert_eq!(lp.get_index(3), None);
        assert!(lp.remove(b"b"));
        assert!(!lp.remove(b"b"));
        assert_eq!(lp.len(), 2);
        assert_eq!((lp.buf.len(), lp.heap_size()), (4 + 3, 8));
        assert_eq!(lp.get(b"c"), Some(&b""[..]));
        assert_eq!(lp.get(b"b"), None);
        assert!(lp.remove(b"a") && lp.remove(b"c") && lp.is_empty());
        assert_eq!(lp.heap_size(), 0);
    }
}
