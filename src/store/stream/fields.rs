//! The bytes of a stream node: its entries one after another, each
//!
//! ```text
//!   <flags: u8, bit 0 = deleted> <ms - master ms: varint> <seq - master seq: varint>
//!   <items' bytes: varint> (<item length: varint> <item bytes>)*
//! ```
//!
//! with LEB128 varints (one byte up to 127). This is the idea of Redis's
//! listpack node: one buffer for up to `stream-node-max-entries` entries,
//! IDs as small differences from the node's first ID, no per-entry
//! allocation or pointer. An entry costs its items plus about five bytes.

use bytes::Bytes;

use super::StreamId;

/// Entry flag: deleted (XDEL, or an exact trim inside the node).
pub const DELETED: u8 = 1;

pub fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn get_varint(input: &mut &[u8]) -> Option<u64> {
    let mut n = 0u64;
    let mut shift = 0;
    loop {
        let (&b, rest) = input.split_first()?;
        *input = rest;
        n |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(n);
        }
        shift += 7;
    }
}

/// Appends an entry to a node's bytes.
pub fn put_entry(out: &mut Vec<u8>, master: StreamId, id: StreamId, items: &[Bytes]) {
    out.push(0);
    put_varint(out, id.ms.wrapping_sub(master.ms));
    put_varint(out, id.seq.wrapping_sub(master.seq));
    let mut body = Vec::with_capacity(items.iter().map(|i| i.len() + 1).sum());
    for item in items {
        put_varint(&mut body, item.len() as u64);
        body.extend_from_slice(item);
    }
    put_varint(out, body.len() as u64);
    out.extend_from_slice(&body);
}

/// One entry of a node as [`Entries`] walks them.
pub struct Entry<'a> {
    /// Where its flags byte is in the node's bytes.
    pub at: usize,
    pub id: StreamId,
    pub deleted: bool,
    pub fields: Fields<'a>,
}

/// The entries of a node's bytes, deleted ones included, in ID order.
pub struct Entries<'a> {
    pub master: StreamId,
    pub data: &'a [u8],
    pub at: usize,
}

impl<'a> Iterator for Entries<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        let at = self.at;
        let (&flags, mut rest) = self.data.get(at..)?.split_first()?;
        let ms = get_varint(&mut rest)?;
        let seq = get_varint(&mut rest)?;
        let n = usize::try_from(get_varint(&mut rest)?).ok()?;
        let body = rest.get(..n)?;
        self.at = self.data.len() - rest.len() + n;
        Some(Entry {
            at,
            id: StreamId::new(
                self.master.ms.wrapping_add(ms),
                self.master.seq.wrapping_add(seq),
            ),
            deleted: flags & DELETED != 0,
            fields: Fields(body),
        })
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
        let n = usize::try_from(get_varint(&mut self.0)?).ok()?;
        let (item, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_back_as_written() {
        let master = StreamId::new(1000, 5);
        let long = Bytes::from(vec![b'x'; 300]);
        let items = vec![Bytes::from_static(b"f"), Bytes::new(), long.clone(), long];
        let mut data = Vec::new();
        put_entry(&mut data, master, master, &items);
        put_entry(&mut data, master, StreamId::new(1200, 0), &items[..2]);
        let got: Vec<_> = Entries {
            master,
            data: &data,
            at: 0,
        }
        .collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].id, master);
        assert_eq!(got[0].fields.to_vec(), items);
        assert_eq!(got[1].id, StreamId::new(1200, 0));
        assert_eq!(got[1].fields.len(), 2);
        assert!(!got[1].deleted);
        assert!(got[1].at > 300);
    }
}
