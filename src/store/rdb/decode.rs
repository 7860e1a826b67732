//! A type byte and its body to a [`Value`]: every encoding redis-server
//! 7.0 can write (and 7.2's listpack sets, 7.4's hashes with field TTLs),
//! in the form ember would hold the same value in.
//!
//! What a decoded value looks like in memory follows what Redis does on
//! load: a set of at most 512 integers is an intset, a small sorted set a
//! listpack (`store::encoding`), a hash compact within `hash-max-listpack-*`
//! ([`Limits`]). What Redis refuses on load is refused here too: empty
//! containers, a member or field twice, a NaN score.
//!
//! Nothing is reserved for a count before the count is checked against the
//! bytes left ([`Reader::count`]), and blobs are validated whole before
//! anything is built from them, so a hostile body fails in time and memory
//! bounded by its own size.

use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};

use ahash::RandomState;
use bytes::Bytes;

use super::reader::{parse_score, Reader};
use super::types::*;
use super::{intset, listpack, ziplist, zipmap, BadData, Elem, Limits};
use crate::store::encoding::Encoded;
use crate::store::hash::Hash;
use crate::store::value::{Set, Value};
use crate::store::zset::ZSet;

/// Quicklist node containers (`LIST_QUICKLIST_2`).
const NODE_PLAIN: u64 = 1;
const NODE_PACKED: u64 = 2;

/// The latest field deadline Redis 7.4 holds (`EB_EXPIRE_TIME_MAX`, Unix ms).
const FIELD_DEADLINE_MAX: u64 = (1 << 48) - 1;

/// The smallest an RDB string takes (its one length byte).
const MIN_STRING: usize = 1;

/// Most items reserved for up front: a count is only known to fit the
/// bytes left, and one byte of input per 32-byte `Bytes` would let a
/// payload reserve 32 times its size before a single item is read. Past
/// this the containers grow as items actually arrive.
const RESERVE_MAX: usize = 1 << 16;

/// Decodes the body of a value of type `kind` from `r`.
pub fn decode_value(kind: u8, r: &mut Reader<'_>, limits: &Limits) -> Result<Value, BadData> {
    match kind {
        STRING => Ok(Value::string(bytes(r.string()?))),
        LIST => {
            let n = r.count(MIN_STRING)?;
            let mut list = VecDeque::with_capacity(n.min(RESERVE_MAX));
            for _ in 0..n {
                list.push_back(bytes(r.string()?));
            }
            list_value(list)
        }
        LIST_ZIPLIST => {
            let blob = r.string()?;
            list_value(
                ziplist::entries(&blob)?
                    .iter()
                    .map(Elem::to_bytes)
                    .collect(),
            )
        }
        LIST_QUICKLIST | LIST_QUICKLIST_2 => quicklist(kind, r),
        SET => {
            let n = r.count(MIN_STRING)?;
            let mut members = Vec::with_capacity(n.min(RESERVE_MAX));
            for _ in 0..n {
                members.push(bytes(r.string()?));
            }
            set_value(members)
        }
        SET_INTSET => {
            let blob = r.string()?;
            let members = intset::members(&blob)?;
            set_value(members.iter().map(|&v| Elem::Int(v).to_bytes()).collect())
        }
        SET_LISTPACK => {
            let blob = r.string()?;
            set_value(
                listpack::entries(&blob)?
                    .iter()
                    .map(Elem::to_bytes)
                    .collect(),
            )
        }
        ZSET | ZSET_2 => {
            // A member (1 byte at least) and a score (1 or 8 bytes).
            let n = r.count(MIN_STRING + if kind == ZSET { 1 } else { 8 })?;
            let mut pairs = Vec::with_capacity(n.min(RESERVE_MAX));
            for _ in 0..n {
                let member = bytes(r.string()?);
                let score = if kind == ZSET {
                    r.text_double()?
                } else {
                    r.binary_double()?
                };
                pairs.push((member, score));
            }
            zset_value(pairs)
        }
        ZSET_ZIPLIST | ZSET_LISTPACK => {
            let blob = r.string()?;
            let entries = if kind == ZSET_ZIPLIST {
                ziplist::entries(&blob)?
            } else {
                listpack::entries(&blob)?
            };
            if entries.len() % 2 != 0 {
                return Err(BadData("odd sorted-set blob"));
            }
            let pairs = entries
                .chunks_exact(2)
                .map(|pair| Ok((pair[0].to_bytes(), elem_score(pair[1])?)))
                .collect::<Result<Vec<_>, BadData>>()?;
            zset_value(pairs)
        }
        HASH => {
            let n = r.count(2 * MIN_STRING)?;
            let mut hash = HashBuilder::new(limits);
            for _ in 0..n {
                let field = r.string()?;
                let value = r.string()?;
                hash.add(&field, &value, 0)?;
            }
            hash.finish()
        }
        HASH_ZIPMAP => {
            let blob = r.string()?;
            let mut hash = HashBuilder::new(limits);
            for (field, value) in zipmap::pairs(&blob)? {
                hash.add(field, value, 0)?;
            }
            hash.finish()
        }
        HASH_ZIPLIST | HASH_LISTPACK => {
            let blob = r.string()?;
            let entries = if kind == HASH_ZIPLIST {
                ziplist::entries(&blob)?
            } else {
                listpack::entries(&blob)?
            };
            if entries.len() % 2 != 0 {
                return Err(BadData("odd hash blob"));
            }
            let mut hash = HashBuilder::new(limits);
            for pair in entries.chunks_exact(2) {
                hash.add(&pair[0].text(), &pair[1].text(), 0)?;
            }
            hash.finish()
        }
        HASH_METADATA | HASH_METADATA_PRE_GA => hash_metadata(kind, r, limits),
        HASH_LISTPACK_EX | HASH_LISTPACK_EX_PRE_GA => {
            if kind == HASH_LISTPACK_EX {
                // The earliest deadline, kept for a future use; the fields say it too.
                r.millis()?;
            }
            let blob = r.string()?;
            let entries = listpack::entries(&blob)?;
            if entries.len() % 3 != 0 {
                return Err(BadData("hash listpack-ex not in triples"));
            }
            let mut hash = HashBuilder::new(limits);
            for triple in entries.chunks_exact(3) {
                let Elem::Int(at) = triple[2] else {
                    return Err(BadData("hash listpack-ex TTL is not an integer"));
                };
                let at = u64::try_from(at).map_err(|_| BadData("negative field TTL"))?;
                hash.add(&triple[0].text(), &triple[1].text(), at)?;
            }
            hash.finish()
        }
        STREAM_LISTPACKS | STREAM_LISTPACKS_2 | STREAM_LISTPACKS_3 => {
            super::stream::decode_stream(kind, r)
        }
        MODULE_PRE_GA | MODULE_2 => Err(BadData("module values are not supported")),
        _ => Err(BadData("unknown object type")),
    }
}

fn bytes(s: Cow<'_, [u8]>) -> Bytes {
    match s {
        Cow::Borrowed(s) => Bytes::copy_from_slice(s),
        Cow::Owned(v) => Bytes::from(v),
    }
}

/// `LIST_QUICKLIST` (nodes are ziplists) and `LIST_QUICKLIST_2` (each
/// node says whether it is a listpack or one plain element). Empty nodes
/// are skipped, as Redis does; an empty list is refused.
fn quicklist(kind: u8, r: &mut Reader<'_>) -> Result<Value, BadData> {
    let nodes = r.count(MIN_STRING)?;
    let mut list = VecDeque::new();
    for _ in 0..nodes {
        let container = if kind == LIST_QUICKLIST_2 {
            r.length()?
        } else {
            NODE_PACKED
        };
        let data = r.string()?;
        if data.is_empty() {
            return Err(BadData("empty quicklist node"));
        }
        match container {
            NODE_PLAIN => list.push_back(bytes(data)),
            NODE_PACKED => {
                let entries = if kind == LIST_QUICKLIST_2 {
                    listpack::entries(&data)?
                } else {
                    ziplist::entries(&data)?
                };
                list.extend(entries.iter().map(Elem::to_bytes));
            }
            _ => return Err(BadData("quicklist node container")),
        }
    }
    list_value(list)
}

/// Redis 7.4's hash with field TTLs: `[min deadline]` (not in the pre-GA
/// form), a count, then `<ttl> <field> <value>` per field, where the TTL is
/// 0 for none, else the deadline relative to the minimum plus one (pre-GA:
/// the deadline itself).
fn hash_metadata(kind: u8, r: &mut Reader<'_>, limits: &Limits) -> Result<Value, BadData> {
    let min = if kind == HASH_METADATA {
        let min = r.millis()?;
        if min > FIELD_DEADLINE_MAX + 1 {
            return Err(BadData("hash minimum deadline"));
        }
        Some(min)
    } else {
        None
    };
    // A TTL, a field and a value: one byte each at least.
    let n = r.count(1 + 2 * MIN_STRING)?;
    let mut hash = HashBuilder::new(limits);
    for _ in 0..n {
        let ttl = r.length()?;
        let at = match (ttl, min) {
            (0, _) => 0,
            (rel, Some(min)) => (rel - 1)
                .checked_add(min)
                .ok_or(BadData("field deadline overflows"))?,
            (abs, None) => abs,
        };
        let field = r.string()?;
        let value = r.string()?;
        hash.add(&field, &value, at)?;
    }
    hash.finish()
}

fn list_value(list: VecDeque<Bytes>) -> Result<Value, BadData> {
    if list.is_empty() {
        return Err(BadData("empty list"));
    }
    Ok(Value::List(list))
}

fn set_value(members: Vec<Bytes>) -> Result<Value, BadData> {
    let mut set = Set::with_capacity_and_hasher(members.len(), RandomState::new());
    for member in members {
        if !set.insert(member) {
            return Err(BadData("duplicate set member"));
        }
    }
    if set.is_empty() {
        return Err(BadData("empty set"));
    }
    Ok(Value::Set(Box::new(Encoded::new(set))))
}

fn zset_value(pairs: Vec<(Bytes, f64)>) -> Result<Value, BadData> {
    if pairs.is_empty() {
        return Err(BadData("empty sorted set"));
    }
    let mut seen: HashSet<&[u8], RandomState> =
        HashSet::with_capacity_and_hasher(pairs.len(), RandomState::new());
    if !pairs.iter().all(|(member, _)| seen.insert(member)) {
        return Err(BadData("duplicate sorted-set member"));
    }
    drop(seen);
    Ok(Value::ZSet(Box::new(Encoded::new(ZSet::from_pairs(pairs)))))
}

/// A sorted-set score stored in a blob: an integer entry, or text.
fn elem_score(elem: Elem<'_>) -> Result<f64, BadData> {
    match elem {
        Elem::Int(v) => Ok(v as f64),
        Elem::Str(text) => parse_score(text).ok_or(BadData("bad score text")),
    }
}

/// A hash built field by field, as HSET builds one: compact while the
/// limits allow.
struct HashBuilder {
    hash: Hash,
    limits: Limits,
}

impl HashBuilder {
    fn new(limits: &Limits) -> HashBuilder {
        HashBuilder {
            hash: Hash::default(),
            limits: *limits,
        }
    }

    /// Adds a field with deadline `at` (0: none).
    fn add(&mut self, field: &[u8], value: &[u8], at: u64) -> Result<(), BadData> {
        if at > FIELD_DEADLINE_MAX {
            return Err(BadData("field deadline past the largest"));
        }
        if !self.hash.insert(field, value, self.limits.hash) {
            return Err(BadData("duplicate hash field"));
        }
        if at != 0 {
            self.hash.set_deadline(field, at);
        }
        Ok(())
    }

    fn finish(self) -> Result<Value, BadData> {
        if self.hash.is_empty() {
            return Err(BadData("empty hash"));
        }
        Ok(Value::Hash(self.hash))
    }
}
