//! A [`Value`] to its type byte and body, in the encodings redis-server
//! 7.0 writes for the same value where that is simple (see the table in
//! the module docs): so a payload from ember reads in Redis as Redis's own
//! would, and its compact forms keep Redis's limits.

use super::listpack::Writer;
use super::types::*;
use super::writer::{put_len, put_string};
use super::{intset, RDB_VERSION, RDB_VERSION_7_0};
use crate::store::hash::Hash;
use crate::store::value::{Set, Value};
use crate::store::zset::ZSet;

/// A quicklist node's listpack stays within this many bytes (Redis's
/// default `list-max-listpack-size -2`: 8 KiB); an element larger than that
/// gets a node of its own.
const NODE_MAX_BYTES: usize = 8 * 1024;
/// Elements from this size on are stored as plain nodes, not inside a
/// listpack (Redis's `packed_threshold`, 1 GiB).
const PLAIN_MIN_BYTES: usize = 1 << 30;
/// A listpack Redis still accepts (`LISTPACK_MAX_SAFETY_SIZE`, 1 GiB); a
/// compact hash whose blob would pass it is written in the plain form.
const LISTPACK_MAX_BYTES: usize = 1 << 30;

const NODE_PLAIN: u64 = 1;
const NODE_PACKED: u64 = 2;

/// Appends the type byte and body of `value` to `out`; returns the RDB
/// version the encoding needs.
pub fn encode_value(value: &Value, out: &mut Vec<u8>) -> u16 {
    match value {
        Value::Str(s) => {
            out.push(STRING);
            put_string(out, s);
        }
        Value::List(list) => put_list(out, list.iter().map(|e| &e[..])),
        Value::Set(set) => put_set(out, set, set.is_compact()),
        Value::ZSet(zset) => put_zset(out, zset, zset.is_compact()),
        Value::Hash(hash) => return put_hash(out, hash),
        Value::Stream(stream) => super::stream::put_stream(out, stream),
    }
    RDB_VERSION_7_0
}

/// `LIST_QUICKLIST_2`: listpack nodes filled up to [`NODE_MAX_BYTES`].
fn put_list<'a>(out: &mut Vec<u8>, elements: impl Iterator<Item = &'a [u8]>) {
    enum Node<'a> {
        Packed(Vec<u8>),
        Plain(&'a [u8]),
    }
    let mut nodes = Vec::new();
    let mut node = Writer::default();
    for e in elements {
        let large = e.len() >= PLAIN_MIN_BYTES;
        let full = !node.is_empty() && node.bytes() + Writer::entry_size(e) > NODE_MAX_BYTES;
        if (large || full) && !node.is_empty() {
            nodes.push(Node::Packed(std::mem::take(&mut node).finish()));
        }
        if large {
            nodes.push(Node::Plain(e));
        } else {
            node.push(e);
        }
    }
    if !node.is_empty() {
        nodes.push(Node::Packed(node.finish()));
    }
    out.push(LIST_QUICKLIST_2);
    put_len(out, nodes.len() as u64);
    for node in &nodes {
        match node {
            Node::Packed(blob) => {
                put_len(out, NODE_PACKED);
                put_string(out, blob);
            }
            Node::Plain(e) => {
                put_len(out, NODE_PLAIN);
                put_string(out, e);
            }
        }
    }
}

/// `SET_INTSET` for a set OBJECT ENCODING calls an intset, else `SET`.
fn put_set(out: &mut Vec<u8>, set: &Set, compact: bool) {
    if compact {
        let mut members: Option<Vec<i64>> =
            set.iter().map(|m| crate::util::num::parse_i64(m)).collect();
        if let Some(members) = members.as_mut() {
            members.sort_unstable();
            out.push(SET_INTSET);
            put_string(out, &intset::build(members));
            return;
        }
    }
    out.push(SET);
    put_len(out, set.len() as u64);
    for member in set {
        put_string(out, member);
    }
}

/// `ZSET_LISTPACK` (member, score, ... ascending) while compact, else
/// `ZSET_2` with binary scores, highest first as Redis writes it (so a
/// loader that inserts at the head builds the list in order).
fn put_zset(out: &mut Vec<u8>, zset: &ZSet, compact: bool) {
    if compact {
        let mut lp = Writer::default();
        let mut score = Vec::with_capacity(32);
        for (member, s) in zset.iter() {
            lp.push(member);
            score.clear();
            // Shortest round-trip digits: `strtod` reads back the same double.
            crate::util::num::write_double(s, &mut score);
            lp.push(&score);
        }
        out.push(ZSET_LISTPACK);
        put_string(out, &lp.finish());
        return;
    }
    out.push(ZSET_2);
    put_len(out, zset.len() as u64);
    if zset.is_empty() {
        return;
    }
    for (member, s) in zset.between(0, zset.len() - 1, true) {
        put_string(out, member);
        out.extend_from_slice(&s.to_le_bytes());
    }
}

/// `HASH_LISTPACK` while compact, `HASH` for a table, `HASH_METADATA`
/// (RDB version 12, Redis 7.4) when some field has a deadline.
fn put_hash(out: &mut Vec<u8>, hash: &Hash) -> u16 {
    if let Some(min) = hash.next_deadline() {
        out.push(HASH_METADATA);
        out.extend_from_slice(&min.to_le_bytes());
        put_len(out, hash.len() as u64);
        for (field, value) in hash {
            // 0: no deadline; else relative to the minimum, plus one.
            let ttl = hash.deadline(field).map_or(0, |at| at - min + 1);
            put_len(out, ttl);
            put_string(out, field);
            put_string(out, value);
        }
        return RDB_VERSION;
    }
    if hash.is_compact() {
        let mut lp = Writer::default();
        for (field, value) in hash {
            lp.push(field);
            lp.push(value);
            if lp.bytes() > LISTPACK_MAX_BYTES {
                break;
            }
        }
        if lp.bytes() <= LISTPACK_MAX_BYTES {
            out.push(HASH_LISTPACK);
            put_string(out, &lp.finish());
            return RDB_VERSION_7_0;
        }
    }
    out.push(HASH);
    put_len(out, hash.len() as u64);
    for (field, value) in hash {
        put_string(out, field);
        put_string(out, value);
    }
    RDB_VERSION_7_0
}
