//! Stored values: strings, lists and sorted sets so far; hashes and sets
//! join this enum with the data-types work.

use std::collections::VecDeque;

use bytes::Bytes;

use super::zset::ZSet;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(Bytes),
    /// A list: O(1) push and pop at both ends.
    List(VecDeque<Bytes>),
    /// Boxed: a sorted set is large and rare next to strings, and the box
    /// keeps every dict entry small.
    ZSet(Box<ZSet>),
}

impl Value {
    /// The name TYPE answers.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::ZSet(_) => "zset",
        }
    }

    /// The name OBJECT ENCODING answers, following Redis's rules for strings:
    /// an integer that fits in a long is `int`, up to 44 bytes `embstr`, else
    /// `raw`. A sorted set is a hash plus an ordered tree here, the role of
    /// Redis's `skiplist` encoding.
    pub fn encoding(&self) -> &'static str {
        match self {
            Value::Str(s) => {
                if s.len() <= 20 && crate::util::num::parse_i64(s).is_some() {
                    "int"
                } else if s.len() <= 44 {
                    "embstr"
                } else {
                    "raw"
                }
            }
            Value::List(_) => "quicklist",
            Value::ZSet(_) => "skiplist",
        }
    }

    /// Rough heap footprint, used to decide whether freeing can move off the hot path.
    pub fn heap_size(&self) -> usize {
        match self {
            Value::Str(s) => s.len(),
            Value::List(l) => l.iter().map(|e| e.len() + 32).sum(),
            Value::ZSet(z) => z.heap_size(),
        }
    }
}
