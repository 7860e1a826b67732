//! An entry's fields and values, packed in one allocation: each item as
//! its length (LEB128, one byte up to 127) and its bytes. A `Bytes` per
//! item cost 32 bytes of header plus an allocation, and one that came from
//! a client's command kept that client's whole read buffer alive.

use bytes::Bytes;

#[derive(Clone, Debug, PartialEq)]
pub struct Packed(Box<[u8]>);

impl Packed {
    pub fn new(items: &[Bytes]) -> Packed {
        let mut out = Vec::with_capacity(items.iter().map(|i| i.len() + 2).sum());
        for item in items {
            let mut n = item.len();
            while n >= 0x80 {
                out.push((n as u8 & 0x7f) | 0x80);
                n >>= 7;
            }
            out.push(n as u8);
            out.extend_from_slice(item);
        }
        Packed(out.into_boxed_slice())
    }

    pub fn fields(&self) -> Fields<'_> {
        Fields(&self.0)
    }

    pub fn heap_size(&self) -> usize {
        self.0.len()
    }
}

/// A view of one entry's fields and values, alternating.
#[derive(Clone, Copy, Debug)]
pub struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    pub fn iter(self) -> Items<'a> {
        Items(self.0)
    }

    /// How many items (twice the fields).
    pub fn len(self) -> usize {
        self.iter().count()
    }

    pub fn is_empty(self) -> bool {
        self.0.is_empty()
    }

    pub fn to_vec(self) -> Vec<Bytes> {
        self.iter().map(Bytes::copy_from_slice).collect()
    }
}

/// The items of a [`Fields`], in order.
pub struct Items<'a>(&'a [u8]);

impl<'a> Iterator for Items<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let mut n = 0usize;
        let mut shift = 0;
        loop {
            let (&b, rest) = self.0.split_first()?;
            self.0 = rest;
            n |= usize::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        let (item, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_come_back_as_packed() {
        let long = Bytes::from(vec![b'x'; 300]);
        let items = vec![Bytes::from_static(b"f"), Bytes::new(), long.clone()];
        let p = Packed::new(&items);
        assert_eq!(p.fields().to_vec(), items);
        assert_eq!(p.fields().len(), 3);
        assert_eq!(p.heap_size(), 1 + 1 + 1 + 2 + 300);
    }
}
