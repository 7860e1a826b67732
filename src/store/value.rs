//! Stored values: strings, lists, hashes, sets, sorted sets and streams.

use std::collections::VecDeque;

use ahash::RandomState;
use bytes::Bytes;

use super::encoding::Encoded;
pub use super::hash::Hash;
use super::stream::Stream;
pub use super::string::{Str, StrForm};
use super::zset::ZSet;

/// A set: O(1) membership, insert and removal.
pub type Set = indexmap::IndexSet<Bytes, RandomState>;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string, with how it was written (for OBJECT ENCODING only);
    /// inline when short (`store::string`).
    Str(Str),
    /// A list: O(1) push and pop at both ends.
    List(VecDeque<Bytes>),
    /// Inline, unlike the other containers: a hash is no larger than a
    /// string's `Bytes` (the compact form's buffer, or a box for the table
    /// form), so a small hash costs one allocation.
    Hash(Hash),
    /// Boxed for the same reason as sorted sets.
    Set(Box<Encoded<Set>>),
    /// Boxed: a sorted set is large and rare next to strings, and the box
    /// keeps every dict entry small.
    ZSet(Box<Encoded<ZSet>>),
    /// Boxed as sorted sets are. Unlike the other containers a stream may
    /// be empty (XDEL, XTRIM, XGROUP CREATE MKSTREAM keep it).
    Stream(Box<Stream>),
}

impl Value {
    /// A string stored as given.
    pub fn string(bytes: Bytes) -> Value {
        Value::Str(Str::new(bytes, StrForm::Given))
    }

    /// A copy of `bytes`, stored as given.
    pub fn copy_of(bytes: &[u8]) -> Value {
        Value::Str(Str::copy_of(bytes, StrForm::Given))
    }

    /// A string of `form`.
    pub fn str_of(bytes: Bytes, form: StrForm) -> Value {
        Value::Str(Str::new(bytes, form))
    }

    /// The bytes of a string value; None for the other types.
    pub fn as_str_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Str(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    /// A string value's bytes as a `Bytes` (shared when long, copied when
    /// inline); None for the other types.
    pub fn to_bytes(&self) -> Option<Bytes> {
        match self {
            Value::Str(s) => Some(s.to_bytes()),
            _ => None,
        }
    }

    /// The name TYPE answers.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(..) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    /// The name OBJECT ENCODING answers, as Redis 7.0 reports it: a string
    /// by its form (see [`StrForm`]); a list is always a `quicklist`; a hash names its form
    /// (`store::hash`); sets and sorted sets are in their compact encoding
    /// until they outgrow it (see [`super::encoding`]).
    pub fn encoding(&self) -> &'static str {
        match self {
            Value::Str(s) => match s.form() {
                StrForm::Given if s.len() <= 20 && crate::util::num::parse_i64(s).is_some() => {
                    "int"
                }
                StrForm::Given | StrForm::Text if s.len() <= 44 => "embstr",
                _ => "raw",
            },
            Value::List(_) => "quicklist",
            Value::Hash(h) => compact_or(h.is_compact(), "listpack", "hashtable"),
            Value::Set(s) => compact_or(s.is_compact(), "intset", "hashtable"),
            Value::ZSet(z) => compact_or(z.is_compact(), "listpack", "skiplist"),
            Value::Stream(_) => "stream",
        }
    }

    /// Redis's free effort (`lazyfreeGetFreeEffort`): about how many
    /// allocations freeing the value takes. A value in a compact encoding
    /// is one, as in Redis (a hash's listpack is one buffer here too; sets
    /// and sorted sets are labelled compact only while small). A list
    /// counts its elements, each its own allocation here (Redis counts its
    /// quicklist's nodes of several elements each).
    pub fn free_effort(&self) -> usize {
        match self {
            Value::Str(..) => 1,
            Value::List(l) => l.len(),
            Value::Hash(h) => effort(h.is_compact(), h.len()),
            Value::Set(s) => effort(s.is_compact(), s.len()),
            Value::ZSet(z) => effort(z.is_compact(), z.len()),
            // Redis: a node per listpack, plus each group's PEL entries.
            Value::Stream(st) => {
                st.node_count() + st.groups.values().map(|g| g.pel.len() + 1).sum::<usize>()
            }
        }
    }

    /// Whether freeing the value is worth moving off the shard thread
    /// (`store::lazyfree`): its free effort is over Redis's threshold, or it
    /// is a string large enough that jemalloc hands its pages straight back
    /// to the OS when freed (see `store::lazyfree::free_buffer`), which takes
    /// milliseconds though Redis counts it as one allocation.
    pub fn frees_slowly(&self) -> bool {
        match self {
            Value::Str(s) => s.len() >= crate::store::lazyfree::OFF_THREAD_FREE_BYTES,
            _ => self.free_effort() > crate::store::lazyfree::LAZYFREE_THRESHOLD,
        }
    }

    /// Rough heap footprint, used to decide whether freeing can move off the hot path.
    pub fn heap_size(&self) -> usize {
        match self {
            Value::Str(s) => s.heap_size(),
            Value::List(l) => l.iter().map(|e| e.len() + 32).sum(),
            Value::Hash(h) => h.heap_size(),
            Value::Set(s) => s.iter().map(|m| m.len() + 40).sum(),
            Value::ZSet(z) => z.heap_size(),
            Value::Stream(st) => st.heap_size(),
        }
    }
}

fn effort(compact: bool, len: usize) -> usize {
    if compact {
        1
    } else {
        len
    }
}

fn compact_or(compact: bool, small: &'static str, big: &'static str) -> &'static str {
    if compact {
        small
    } else {
        big
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_takes_40_bytes() {
        // Every dict entry holds a Value: a hash must fit where a string's
        // `Bytes` does, and a string's inline form fills the 40 bytes with
        // its own tag (`store::string`), leaving the value's tag a niche.
        assert!(std::mem::size_of::<Hash>() <= std::mem::size_of::<Bytes>());
        assert_eq!(std::mem::size_of::<Value>(), 40);
    }

    #[test]
    fn object_encoding_does_not_depend_on_where_a_string_lives() {
        let of = |len: usize, form| Value::Str(Str::copy_of(&vec![b'7'; len], form)).encoding();
        assert_eq!(of(20, StrForm::Given), "embstr", "past a long");
        assert_eq!(of(18, StrForm::Given), "int");
        assert_eq!(of(18, StrForm::Text), "embstr");
        assert_eq!(of(37, StrForm::Raw), "raw", "inline but edited");
        assert_eq!(of(38, StrForm::Given), "embstr", "on the heap");
        assert_eq!(of(44, StrForm::Text), "embstr");
        assert_eq!(of(45, StrForm::Given), "raw");
    }
}
