//! The hash value: a compact listpack while small, a table once it grows,
//! and per-field deadlines for the hashes that use them (Redis 7.4's
//! HEXPIRE family).
//!
//! # Two forms, as in Redis
//!
//! A new hash is a [`Listpack`]: its pairs in one buffer, looked up by a
//! walk. It stays so while it has at most `hash-max-listpack-entries`
//! fields, every field and value is at most `hash-max-listpack-value` bytes,
//! and no field has a deadline. The first write past a limit, or the first
//! deadline, converts it once and for all to a [`Table`] (an `IndexMap`:
//! O(1) lookup and removal); Redis never converts back either. The limits
//! come with each write ([`ListpackLimits`]), read from CONFIG by the caller.
//!
//! # Deadlines
//!
//! Only the table form has them. A table without field TTLs pays one null
//! pointer. The first deadline set allocates [`FieldTtls`]: one `u64` per
//! field, kept at the same position as the field in the map (0 = no
//! deadline), and the (deadline, position) pairs of the fields that have
//! one in a `BTreeSet`, earliest first. So a lookup asks "is anything
//! due?" in O(log n), and reclaiming k due fields costs O(k log n) however
//! many fields the hash holds, as Redis 7.4's per-hash `ebuckets` do; one
//! pass over the hash per reclaim made k fields expiring one by one cost
//! O(k x n). Every change goes through [`Hash`], which is how the positions
//! stay aligned and the form stays private.

use std::collections::BTreeSet;

use ahash::RandomState;
use bytes::Bytes;
use indexmap::IndexMap;

use super::listpack::{self, Listpack};
use crate::util::alloc_size;

/// The limits of the compact form come with each write; config declares
/// them (`hash-max-listpack-entries`, `hash-max-listpack-value`).
pub use crate::config::ListpackLimits;

/// Up to this many fields a table removes in order (O(n), n small), so a
/// hash converted early (by a deadline, a long value) lists its fields in
/// insertion order across deletes, as Redis 7.4's `listpackex` does; larger
/// ones remove in O(1).
const ORDERED_REMOVAL_MAX: usize = 128;

/// The fields of a hash in its table form.
type FieldMap = IndexMap<Box<[u8]>, Box<[u8]>, RandomState>;

/// "No deadline" in [`FieldTtls::at`]: a stored deadline is always in the
/// future, so never 0.
const NO_TTL: u64 = 0;

/// A hash: fields in insertion order, and optional per-field deadlines
/// (absolute Unix milliseconds).
#[derive(Clone, Debug, Default)]
pub struct Hash {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    Packed(Listpack),
    /// Boxed: keeps `Hash` as small as the compact form.
    Table(Box<Table>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Packed(Listpack::default())
    }
}

/// The large form: O(1) lookup and removal, and the deadlines.
#[derive(Clone, Debug, Default)]
struct Table {
    fields: FieldMap,
    /// Only hashes that ever had a field deadline allocate this.
    ttls: Option<Box<FieldTtls>>,
}

/// The deadlines of a hash's fields.
#[derive(Clone, Debug, PartialEq)]
struct FieldTtls {
    /// `at[i]` is the deadline of the field at position `i` of the map.
    at: Vec<u64>,
    /// `(at[i], i)` for every field with a deadline: the earliest first, so
    /// the due fields are found without looking at the others. Never empty
    /// (the box is dropped with the last deadline).
    order: BTreeSet<Due>,
    /// The deadline this hash was last filed under in its database's index
    /// of hashes with field deadlines (see `Db::file_field_deadlines`).
    filed: Option<u64>,
}

/// A deadline and the position of its field, packed into 12 bytes (a
/// `(u64, usize)` takes 16) and ordered as that pair: with std's B-tree
/// nodes about half full, as deadlines given in ascending order leave
/// them, the set costs some 29 bytes a field rather than 35 (1M fields:
/// +37 bytes each with the `at` entry, +43 with 16-byte entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Due([u32; 3]);

impl Due {
    fn new(at: u64, index: usize) -> Due {
        let index = u32::try_from(index).expect("a hash holds fewer than 2^32 fields");
        Due([(at >> 32) as u32, at as u32, index])
    }

    fn at(self) -> u64 {
        (u64::from(self.0[0]) << 32) | u64::from(self.0[1])
    }

    fn index(self) -> usize {
        self.0[2] as usize
    }
}

impl FieldTtls {
    /// Gives the field at `index` the deadline `at` (NO_TTL: none) and
    /// returns the one it had.
    fn set(&mut self, index: usize, at: u64) -> u64 {
        let old = std::mem::replace(&mut self.at[index], at);
        if old != NO_TTL {
            self.order.remove(&Due::new(old, index));
        }
        if at != NO_TTL {
            self.order.insert(Due::new(at, index));
        }
        old
    }

    /// After a swap remove moved the field at `from` (the last position)
    /// into `to`, and its deadline with it in `at`.
    fn moved(&mut self, from: usize, to: usize) {
        let at = self.at[to];
        if at != NO_TTL {
            self.order.remove(&Due::new(at, from));
            self.order.insert(Due::new(at, to));
        }
    }

    /// Files every deadline anew after positions shifted (ordered removal:
    /// small tables only, so O(ORDERED_REMOVAL_MAX log)).
    fn reindex(&mut self) {
        self.order = self
            .at
            .iter()
            .enumerate()
            .filter(|&(_, &at)| at != NO_TTL)
            .map(|(i, &at)| Due::new(at, i))
            .collect();
    }

    fn earliest(&self) -> Option<u64> {
        self.order.first().map(|due| due.at())
    }
}

/// Reads and writes: the same answers whatever the form.
impl Hash {
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Packed(lp) => lp.len(),
            Repr::Table(t) => t.fields.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the hash is in its compact form (OBJECT ENCODING `listpack`).
    pub fn is_compact(&self) -> bool {
        matches!(self.repr, Repr::Packed(_))
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match &self.repr {
            Repr::Packed(lp) => lp.get(field),
            Repr::Table(t) => t.fields.get(field).map(|v| &**v),
        }
    }

    pub fn contains_key(&self, field: &[u8]) -> bool {
        match &self.repr {
            Repr::Packed(lp) => lp.contains(field),
            Repr::Table(t) => t.fields.contains_key(field),
        }
    }

    /// The field and value at position `index` in insertion order (random
    /// picks, cursors): O(1) in the table form, O(index) in the compact one.
    pub fn get_index(&self, index: usize) -> Option<(&[u8], &[u8])> {
        match &self.repr {
            Repr::Packed(lp) => lp.get_index(index),
            Repr::Table(t) => t.fields.get_index(index).map(|(f, v)| (&**f, &**v)),
        }
    }

    /// Fields and values in insertion order (for a table that removed in
    /// O(1), in the order those removals left).
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.repr {
            Repr::Packed(lp) => Forms::Packed(lp.iter()),
            Repr::Table(t) => Forms::Table(t.fields.iter()),
        })
    }

    /// Sets a field's value; a field that existed loses its deadline, as
    /// HSET does in Redis 7.4. True when the field is new. Converts to the
    /// table form past `limits`.
    pub fn insert(&mut self, field: &[u8], value: &[u8], limits: ListpackLimits) -> bool {
        self.write(field, value, limits, false)
    }

    /// Sets a field's value keeping its deadline (HINCRBY, HINCRBYFLOAT).
    pub fn insert_keep_ttl(&mut self, field: &[u8], value: &[u8], limits: ListpackLimits) -> bool {
        self.write(field, value, limits, true)
    }

    /// Removes a field and its deadline; true if it was there. The compact
    /// form and small tables keep the order of the others.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Packed(lp) => lp.remove(field),
            Repr::Table(t) => t.remove(field),
        }
    }

    /// Heap bytes the hash holds beyond its own inline size, rounded to
    /// jemalloc's size classes: the buffer of the compact form; the table's
    /// slots, fields, values and deadlines.
    pub fn heap_size(&self) -> usize {
        match &self.repr {
            Repr::Packed(lp) => lp.heap_size(),
            Repr::Table(t) => alloc_size(std::mem::size_of::<Table>()) + t.heap_size(),
        }
    }

    /// Writes a pair, converting first when it is too long for the compact
    /// form and after when the compact form has too many fields, as Redis
    /// 7.0's `hashTypeSet` does.
    fn write(
        &mut self,
        field: &[u8],
        value: &[u8],
        limits: ListpackLimits,
        keep_ttl: bool,
    ) -> bool {
        if !limits.fits(field, value) {
            self.convert();
        }
        match &mut self.repr {
            Repr::Packed(lp) => {
                let added = lp.insert(field, value);
                if lp.len() > limits.entries {
                    self.convert();
                }
                added
            }
            Repr::Table(t) => t.insert(field, value, keep_ttl),
        }
    }

    /// Moves the pairs of the compact form into a table (no-op for a table).
    fn convert(&mut self) {
        let Repr::Packed(lp) = &self.repr else {
            return;
        };
        let mut fields = FieldMap::with_capacity_and_hasher(lp.len() + 1, RandomState::new());
        fields.extend(lp.iter().map(|(f, v)| (Box::from(f), Box::from(v))));
        self.repr = Repr::Table(Box::new(Table { fields, ttls: None }));
    }

    fn table(&self) -> Option<&Table> {
        match &self.repr {
            Repr::Table(t) => Some(t),
            Repr::Packed(_) => None,
        }
    }

    fn table_mut(&mut self) -> Option<&mut Table> {
        match &mut self.repr {
            Repr::Table(t) => Some(t),
            Repr::Packed(_) => None,
        }
    }
}

/// Field deadlines; a compact hash has none, and the first one converts it.
impl Hash {
    /// The deadline of `field`, if it exists and has one.
    pub fn deadline(&self, field: &[u8]) -> Option<u64> {
        let table = self.table()?;
        table.deadline_at(table.fields.get_index_of(field)?)
    }

    /// Gives `field` the deadline `at` (Unix ms, not 0). False when there is
    /// no such field.
    pub fn set_deadline(&mut self, field: &[u8], at: u64) -> bool {
        debug_assert_ne!(at, NO_TTL);
        if !self.contains_key(field) {
            return false;
        }
        self.convert();
        self.table_mut().expect("converted").set_deadline(field, at);
        true
    }

    /// Removes the deadline of `field`; true if it had one (HPERSIST).
    pub fn persist(&mut self, field: &[u8]) -> bool {
        self.table_mut().is_some_and(|t| t.persist(field))
    }

    /// The earliest field deadline; None when no field has one. O(log n).
    pub fn next_deadline(&self) -> Option<u64> {
        self.table()?.ttls.as_ref()?.earliest()
    }

    /// Whether some field has expired at `now_ms` (its deadline is before
    /// `now_ms`, the rule keys follow). O(log n).
    pub fn may_have_expired(&self, now_ms: u64) -> bool {
        self.next_deadline().is_some_and(|next| next < now_ms)
    }

    /// Whether every field has expired at `now_ms` (KEYS skips such a
    /// hash): every field has a deadline and the latest has passed.
    pub fn all_expired(&self, now_ms: u64) -> bool {
        let Some(table) = self.table() else {
            return false;
        };
        table.ttls.as_ref().is_some_and(|ttls| {
            ttls.order.len() == table.fields.len()
                && ttls.order.last().is_some_and(|due| due.at() < now_ms)
        })
    }

    /// Removes every field whose deadline is before `now_ms`, in O(k log n)
    /// for k such fields. Returns how many were removed.
    pub fn remove_expired(&mut self, now_ms: u64) -> usize {
        self.table_mut().map_or(0, |t| t.remove_expired(now_ms))
    }

    /// The names of the fields whose deadline is before `now_ms`, earliest
    /// first: what [`Hash::remove_expired`] would remove (for the feed's
    /// HDEL). O(k) for k such fields.
    pub fn expired_fields(&self, now_ms: u64) -> Vec<Bytes> {
        let Some(table) = self.table() else {
            return Vec::new();
        };
        let Some(ttls) = &table.ttls else {
            return Vec::new();
        };
        ttls.order
            .iter()
            .take_while(|due| expired(due.at(), now_ms))
            .filter_map(|due| table.fields.get_index(due.index()))
            .map(|(field, _)| Bytes::copy_from_slice(field))
            .collect()
    }

    /// The deadline this hash was last filed under in its database's index.
    pub fn filed_under(&self) -> Option<u64> {
        self.table()?.ttls.as_ref().and_then(|t| t.filed)
    }

    /// Records the deadline this hash is filed under (no effect without
    /// field deadlines).
    pub fn set_filed_under(&mut self, deadline: Option<u64>) {
        if let Some(ttls) = self.table_mut().and_then(|t| t.ttls.as_mut()) {
            ttls.filed = deadline;
        }
    }

    /// The deadline of the field at `index` (for comparing hashes).
    fn deadline_at(&self, index: usize) -> Option<u64> {
        self.table()?.deadline_at(index)
    }

    /// Checks that the deadlines line up with the fields (one per field;
    /// the ordered set holds exactly the (deadline, position) of each field
    /// that has one; the box only while some field has one) and returns the
    /// earliest field deadline, for the database's check of its filing. For
    /// the fuzz harness (`DEBUG EMBER-CHECK`) and tests; O(fields).
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<Option<u64>, String> {
        let Some(ttls) = self.table().and_then(|t| t.ttls.as_ref()) else {
            return Ok(None);
        };
        let fields = self.len();
        if ttls.at.len() != fields {
            return Err(format!(
                "{} field deadlines for {fields} fields",
                ttls.at.len()
            ));
        }
        let set = ttls.at.iter().filter(|&&at| at != NO_TTL).count();
        if set != ttls.order.len() || set == 0 {
            return Err(format!(
                "{set} fields with a deadline, {} in deadline order",
                ttls.order.len()
            ));
        }
        // As many entries as deadlines, each matching its field's, and at
        // most one per position: the two agree exactly.
        if let Some(due) = ttls
            .order
            .iter()
            .find(|due| ttls.at.get(due.index()) != Some(&due.at()))
        {
            return Err(format!(
                "deadline {} filed for position {}, which has {:?}",
                due.at(),
                due.index(),
                ttls.at.get(due.index())
            ));
        }
        Ok(ttls.earliest())
    }
}

/// Equal when they hold the same fields, values and deadlines in the same
/// order, whatever their forms.
impl PartialEq for Hash {
    fn eq(&self, other: &Hash) -> bool {
        self.len() == other.len()
            && self.iter().eq(other.iter())
            && (0..self.len()).all(|i| self.deadline_at(i) == other.deadline_at(i))
    }
}

/// A hash of `(field, value)` pairs, converted as Redis's default limits say.
impl<F: AsRef<[u8]>, V: AsRef<[u8]>> FromIterator<(F, V)> for Hash {
    fn from_iter<I: IntoIterator<Item = (F, V)>>(iter: I) -> Hash {
        let mut hash = Hash::default();
        for (field, value) in iter {
            hash.insert(field.as_ref(), value.as_ref(), ListpackLimits::DEFAULT);
        }
        hash
    }
}

/// The fields and values of a [`Hash`], in order.
pub struct Iter<'a>(Forms<'a>);

enum Forms<'a> {
    Packed(listpack::Iter<'a>),
    Table(indexmap::map::Iter<'a, Box<[u8]>, Box<[u8]>>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Forms::Packed(it) => it.next(),
            Forms::Table(it) => it.next().map(|(f, v)| (&**f, &**v)),
        }
    }
}

impl<'a> IntoIterator for &'a Hash {
    type Item = (&'a [u8], &'a [u8]);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl Table {
    fn insert(&mut self, field: &[u8], value: &[u8], keep_ttl: bool) -> bool {
        match self.fields.get_full_mut(field) {
            Some((index, _, old)) => {
                if old.len() == value.len() {
                    old.copy_from_slice(value);
                } else {
                    *old = Box::from(value);
                }
                if !keep_ttl {
                    self.clear_deadline_at(index);
                }
                false
            }
            None => {
                self.fields.insert(Box::from(field), Box::from(value));
                if let Some(ttls) = &mut self.ttls {
                    ttls.at.push(NO_TTL);
                }
                true
            }
        }
    }

    fn remove(&mut self, field: &[u8]) -> bool {
        let keep_order = self.fields.len() <= ORDERED_REMOVAL_MAX;
        let removed = if keep_order {
            self.fields.shift_remove_full(field)
        } else {
            self.fields.swap_remove_full(field)
        };
        let Some((index, _, _)) = removed else {
            return false;
        };
        if let Some(ttls) = &mut self.ttls {
            if keep_order {
                ttls.at.remove(index);
                ttls.reindex();
            } else {
                let at = ttls.at.swap_remove(index);
                if at != NO_TTL {
                    ttls.order.remove(&Due::new(at, index));
                }
                let last = ttls.at.len();
                if index < last {
                    ttls.moved(last, index);
                }
            }
            self.drop_ttls_if_none();
        }
        true
    }

    /// Requires: `field` is in the map.
    fn set_deadline(&mut self, field: &[u8], at: u64) {
        let index = self.fields.get_index_of(field).expect("field present");
        let len = self.fields.len();
        let ttls = self.ttls.get_or_insert_with(|| {
            Box::new(FieldTtls {
                at: vec![NO_TTL; len],
                order: BTreeSet::new(),
                filed: None,
            })
        });
        ttls.set(index, at);
    }

    fn persist(&mut self, field: &[u8]) -> bool {
        match self.fields.get_index_of(field) {
            Some(index) if self.deadline_at(index).is_some() => {
                self.clear_deadline_at(index);
                true
            }
            _ => false,
        }
    }

    fn remove_expired(&mut self, now_ms: u64) -> usize {
        let Table { fields, ttls } = self;
        let Some(ttls) = ttls else {
            return 0;
        };
        let mut removed = 0;
        // The due fields come first in `order`; each goes by a swap remove,
        // as `remove` does for a large table: O(log n) apiece.
        while let Some(&due) = ttls.order.first() {
            let index = due.index();
            if !expired(due.at(), now_ms) {
                break;
            }
            if fields.len() <= ORDERED_REMOVAL_MAX {
                removed += remove_expired_in_order(fields, ttls, now_ms);
                break;
            }
            ttls.order.pop_first();
            fields.swap_remove_index(index);
            ttls.at.swap_remove(index);
            let last = ttls.at.len();
            if index < last {
                ttls.moved(last, index);
            }
            removed += 1;
        }
        self.drop_ttls_if_none();
        removed
    }

    fn deadline_at(&self, index: usize) -> Option<u64> {
        let at = self.ttls.as_ref()?.at[index];
        (at != NO_TTL).then_some(at)
    }

    fn clear_deadline_at(&mut self, index: usize) {
        if let Some(ttls) = &mut self.ttls {
            ttls.set(index, NO_TTL);
            self.drop_ttls_if_none();
        }
    }

    /// The deadlines go with the last one.
    fn drop_ttls_if_none(&mut self) {
        if self.ttls.as_ref().is_some_and(|t| t.order.is_empty()) {
            self.ttls = None;
        }
    }

    /// Slots (map entry plus its index, at the capacity reserved), the
    /// bytes of fields and values, and the deadlines.
    fn heap_size(&self) -> usize {
        const SLOT: usize = std::mem::size_of::<(u64, Box<[u8]>, Box<[u8]>)>()
            + (std::mem::size_of::<usize>() + 1) * 8 / 7;
        let strings: usize = self
            .fields
            .iter()
            .map(|(f, v)| alloc_size(f.len()) + alloc_size(v.len()))
            .sum();
        let deadlines = self.ttls.as_ref().map_or(0, |t| {
            alloc_size(std::mem::size_of::<FieldTtls>())
                + alloc_size(t.at.capacity() * std::mem::size_of::<u64>())
                + ordered_set_size(t.order.len())
        });
        self.fields.capacity() * SLOT + strings + deadlines
    }
}

/// Removes the expired fields of a small table in one ordered pass (so the
/// others keep their order, as `remove` keeps it there) and files the
/// deadlines left anew. O(fields), at most `ORDERED_REMOVAL_MAX`.
fn remove_expired_in_order(fields: &mut FieldMap, ttls: &mut FieldTtls, now_ms: u64) -> usize {
    // `retain` visits the fields in position order, so the deadline of the
    // field it is looking at is `at[position]`.
    let before = fields.len();
    let mut position = 0;
    fields.retain(|_, _| {
        let keep = !expired(ttls.at[position], now_ms);
        position += 1;
        keep
    });
    ttls.at.retain(|&at| !expired(at, now_ms));
    ttls.reindex();
    before - fields.len()
}

/// Estimated bytes of a `BTreeSet<Due>` of `len` entries: std's nodes
/// hold up to 11 entries (a leaf: a parent pointer, two `u16`s and the
/// entries; an inner node adds 12 child pointers) and are about half full
/// (6 of 11) when deadlines come in ascending order, more otherwise: one
/// leaf per 6 entries and one inner node per 6 leaves.
fn ordered_set_size(len: usize) -> usize {
    const LEAF: usize = 8 + 2 + 2 + 11 * std::mem::size_of::<Due>();
    const INNER: usize = LEAF + 12 * 8;
    let leaves = len.div_ceil(6);
    let inner = if leaves > 1 { leaves.div_ceil(6) } else { 0 };
    leaves * alloc_size(LEAF) + inner * alloc_size(INNER)
}

/// Whether deadline `at` (NO_TTL: none) has passed at `now_ms`.
fn expired(at: u64, now_ms: u64) -> bool {
    at != NO_TTL && at < now_ms
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DEFAULT: ListpackLimits = ListpackLimits::DEFAULT;

    fn hash(fields: &[&str]) -> Hash {
        fields.iter().map(|f| (f.as_bytes(), b"v")).collect()
    }

    fn names(h: &Hash) -> Vec<&str> {
        h.iter()
            .map(|(k, _)| std::str::from_utf8(k).unwrap())
            .collect()
    }

    #[test]
    fn the_compact_form_stays_small() {
        assert!(std::mem::size_of::<Hash>() <= 24);
        let h = hash(&["name", "mail", "city", "zip0", "lang"]);
        assert!(h.is_compact());
        assert_eq!(
            h.heap_size(),
            48,
            "5 * (1 + 4 + 1 + 1) bytes, in one 48-byte class"
        );
    }

    #[test]
    fn converts_past_the_entry_limit_and_never_back() {
        let mut h = Hash::default();
        for i in 0..512 {
            h.insert(format!("f{i}").as_bytes(), b"v", DEFAULT);
        }
        assert!(h.is_compact(), "512 fields fit");
        h.insert(b"f0", b"w", DEFAULT);
        assert!(h.is_compact(), "an overwrite adds nothing");
        h.insert(b"f512", b"v", DEFAULT);
        assert!(!h.is_compact(), "the 513th converts");
        assert_eq!(h.len(), 513);
        assert_eq!(h.get_index(0), Some((&b"f0"[..], &b"w"[..])));
        assert_eq!(h.get_index(512), Some((&b"f512"[..], &b"v"[..])));
        for i in 0..500 {
            h.remove(format!("f{i}").as_bytes());
        }
        assert!(!h.is_compact(), "shrinking keeps the table");
        let lower = ListpackLimits {
            entries: 128,
            ..DEFAULT
        };
        let mut h = Hash::default();
        for i in 0..=128 {
            assert!(h.is_compact(), "{i} fields");
            h.insert(format!("f{i}").as_bytes(), b"v", lower);
        }
        assert!(!h.is_compact(), "129 fields over a limit of 128");
    }

    #[test]
    fn converts_on_a_long_field_or_value() {
        let long = [b'x'; 65];
        let mut h = hash(&["a"]);
        h.insert(b"b", &long[..64], DEFAULT);
        h.insert(&long[..64], b"c", DEFAULT);
        assert!(h.is_compact(), "64 bytes fit");
        h.insert(b"a", &long, DEFAULT);
        assert!(!h.is_compact(), "a 65-byte value converts");
        assert_eq!(h.get(b"a"), Some(&long[..]));
        let mut h = hash(&["a"]);
        h.insert_keep_ttl(&long, b"1", DEFAULT);
        assert!(!h.is_compact(), "so does a 65-byte field (HINCRBY)");
    }

    #[test]
    fn a_deadline_converts_an_existing_field_only() {
        let mut h = hash(&["a", "b"]);
        assert!(!h.set_deadline(b"zz", 100));
        assert!(h.is_compact());
        assert!(!h.persist(b"a"));
        assert!(h.set_deadline(b"a", 100));
        assert!(!h.is_compact());
        assert_eq!(names(&h), ["a", "b"], "order kept");
        assert_eq!(h.deadline(b"a"), Some(100));
    }

    #[test]
    fn equality_ignores_the_form() {
        let compact = hash(&["a", "b"]);
        let mut table = hash(&["a", "b"]);
        table.convert();
        assert_eq!(compact, table);
        table.set_deadline(b"b", 5);
        assert_ne!(compact, table);
    }

    #[test]
    fn deadlines_follow_their_fields_through_removals() {
        let mut h = hash(&["a", "b", "c", "d"]);
        assert!(h.set_deadline(b"b", 200));
        assert!(h.set_deadline(b"d", 400));
        assert!(!h.set_deadline(b"zz", 1));
        h.remove(b"a");
        assert_eq!(names(&h), ["b", "c", "d"]);
        assert_eq!(
            (h.deadline(b"b"), h.deadline(b"c"), h.deadline(b"d")),
            (Some(200), None, Some(400))
        );
        h.insert(b"e", b"v", DEFAULT);
        assert_eq!(h.deadline(b"e"), None);
        assert_eq!(h.next_deadline(), Some(200));
    }

    #[test]
    fn large_hashes_swap_remove_and_keep_deadlines_aligned() {
        let names: Vec<String> = (0..200).map(|i| format!("f{i}")).collect();
        let mut h = hash(&names.iter().map(String::as_str).collect::<Vec<_>>());
        for i in (0..200).step_by(2) {
            h.set_deadline(format!("f{i}").as_bytes(), 1_000 + i as u64);
        }
        // Swap-removes move the last field into the hole.
        for i in 0..50 {
            h.remove(format!("f{i}").as_bytes());
        }
        for i in 50..200u64 {
            let want = (i % 2 == 0).then_some(1_000 + i);
            assert_eq!(h.deadline(format!("f{i}").as_bytes()), want, "f{i}");
        }
    }

    #[test]
    fn overwriting_clears_the_deadline_and_increments_keep_it() {
        let mut h = hash(&["a", "b"]);
        h.set_deadline(b"a", 100);
        h.set_deadline(b"b", 100);
        h.insert_keep_ttl(b"a", b"2", DEFAULT);
        assert_eq!(h.deadline(b"a"), Some(100));
        h.insert(b"a", b"3", DEFAULT);
        assert_eq!(h.deadline(b"a"), None);
        assert!(h.persist(b"b"));
        assert!(!h.persist(b"b"));
        assert_eq!(
            h.next_deadline(),
            None,
            "no deadline left: nothing allocated"
        );
    }

    #[test]
    fn the_earliest_deadline_is_exact_through_changes_and_purges() {
        let mut h = hash(&["a", "b", "c"]);
        h.set_deadline(b"a", 100);
        h.set_deadline(b"b", 300);
        h.set_deadline(b"c", 500);
        assert_eq!(h.next_deadline(), Some(100));
        h.persist(b"a");
        assert_eq!(h.next_deadline(), Some(300), "a's deadline left with it");
        assert!(!h.may_have_expired(101));
        assert_eq!(h.remove_expired(101), 0);
        h.set_deadline(b"c", 200);
        assert_eq!(h.next_deadline(), Some(200), "moved earlier");
        h.set_deadline(b"c", 500);
        assert_eq!(h.next_deadline(), Some(300), "and back");
        assert!(!h.may_have_expired(300), "due only after the deadline");
        assert_eq!(h.remove_expired(301), 1);
        assert_eq!(names(&h), ["a", "c"]);
        assert_eq!(h.deadline(b"c"), Some(500));
        assert!(!h.all_expired(501), "a has no deadline");
        assert_eq!(h.remove_expired(600), 1);
        assert_eq!(h.next_deadline(), None);
        assert_eq!(names(&h), ["a"]);
    }

    #[test]
    fn expired_fields_names_what_a_purge_removes() {
        let mut h = hash(&["a", "b", "c", "d"]);
        assert!(h.expired_fields(1_000).is_empty(), "no deadlines at all");
        h.set_deadline(b"c", 100);
        h.set_deadline(b"a", 200);
        h.set_deadline(b"d", 900);
        let names = |v: Vec<Bytes>| -> Vec<String> {
            v.iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect()
        };
        assert!(
            h.expired_fields(100).is_empty(),
            "due only after the deadline"
        );
        assert_eq!(names(h.expired_fields(201)), ["c", "a"], "earliest first");
        assert_eq!(h.remove_expired(201), 2);
        assert!(h.expired_fields(201).is_empty());
    }

    #[test]
    fn purging_keeps_the_order_of_the_survivors() {
        let mut h = hash(&["a", "b", "c", "d", "e"]);
        h.set_deadline(b"b", 10);
        h.set_deadline(b"d", 10);
        h.set_deadline(b"e", 90);
        assert_eq!(h.remove_expired(50), 2);
        assert_eq!(names(&h), ["a", "c", "e"]);
        assert_eq!(h.deadline(b"e"), Some(90));
        let mut all = hash(&["x", "y"]);
        all.set_deadline(b"x", 5);
        all.set_deadline(b"y", 7);
        assert!(all.all_expired(8));
        assert_eq!(all.remove_expired(8), 2);
        assert!(all.is_empty());
    }

    #[test]
    fn reclaiming_a_few_fields_of_a_large_hash_looks_at_those_only() {
        let mut h = Hash::default();
        for i in 0..10_000 {
            h.insert(format!("f{i}").as_bytes(), b"v", DEFAULT);
        }
        for i in 0..1_000u64 {
            h.set_deadline(format!("f{i}").as_bytes(), 1_000 + i);
        }
        // One field due per reclaim, as when they expire a millisecond
        // apart between lookups: each finds its field at the front of
        // `order`, and the others keep their positions and deadlines.
        for now in 1_001..=2_000u64 {
            assert_eq!(h.remove_expired(now), 1, "at {now}");
            assert_eq!(h.next_deadline(), (now < 2_000).then_some(now));
        }
        assert_eq!(h.len(), 9_000);
        assert!(h.check_invariants().is_ok());
        assert_eq!(
            h.next_deadline(),
            None,
            "no deadline left: nothing allocated"
        );
        assert!(h.table().unwrap().ttls.is_none());
    }

    #[test]
    fn packed_deadlines_order_as_deadline_then_position() {
        let max = (1u64 << 46) - 1; // the latest deadline HEXPIRE accepts
        let dues = [
            (1, 5),
            (2, 0),
            ((1 << 32) - 1, 9),
            (1 << 32, 0),
            (1 << 32, 3),
            (max, 0),
            (max, u32::MAX as usize),
        ];
        for pair in dues.windows(2) {
            let [(a, i), (b, j)] = [pair[0], pair[1]];
            assert!(Due::new(a, i) < Due::new(b, j), "{pair:?}");
        }
        for (at, index) in dues {
            let due = Due::new(at, index);
            assert_eq!((due.at(), due.index()), (at, index));
        }
        assert_eq!(std::mem::size_of::<Due>(), 12);
    }

    #[test]
    fn the_invariant_check_finds_deadlines_out_of_order() {
        let mut h = hash(&["a", "b", "c"]);
        h.set_deadline(b"a", 100);
        h.set_deadline(b"c", 300);
        assert_eq!(h.check_invariants(), Ok(Some(100)));
        fn ttls(h: &mut Hash) -> &mut FieldTtls {
            h.table_mut().unwrap().ttls.as_mut().unwrap()
        }
        ttls(&mut h).order.remove(&Due::new(100, 0));
        let e = h.check_invariants().unwrap_err();
        assert!(
            e.contains("2 fields with a deadline, 1 in deadline order"),
            "{e}"
        );
        ttls(&mut h).order.insert(Due::new(100, 1));
        let e = h.check_invariants().unwrap_err();
        assert!(e.contains("deadline 100 filed for position 1"), "{e}");
        ttls(&mut h).order.remove(&Due::new(100, 1));
        ttls(&mut h).order.insert(Due::new(100, 0));
        assert_eq!(h.check_invariants(), Ok(Some(100)));
        ttls(&mut h).order.remove(&Due::new(300, 2));
        ttls(&mut h).order.insert(Due::new(300, 7));
        let e = h.check_invariants().unwrap_err();
        assert!(
            e.contains("deadline 300 filed for position 7, which has None"),
            "{e}"
        );
    }

    /// One step of the deadline model test.
    #[derive(Clone, Debug)]
    enum TtlOp {
        Insert(u16),
        InsertKeepTtl(u16),
        Remove(u16),
        SetDeadline(u16, u64),
        Persist(u16),
        RemoveExpired(u64),
    }

    fn ttl_op() -> impl Strategy<Value = TtlOp> {
        let field = 0u16..300;
        prop_oneof![
            3 => field.clone().prop_map(TtlOp::Insert),
            1 => field.clone().prop_map(TtlOp::InsertKeepTtl),
            2 => field.clone().prop_map(TtlOp::Remove),
            3 => (field.clone(), 1u64..60).prop_map(|(f, at)| TtlOp::SetDeadline(f, at)),
            1 => field.prop_map(TtlOp::Persist),
            1 => (0u64..70).prop_map(TtlOp::RemoveExpired),
        ]
    }

    proptest! {
        /// Deadlines against a map of field to deadline, on hashes that
        /// cross `ORDERED_REMOVAL_MAX` both ways (swap and ordered removals,
        /// reclaims of either kind), checking the invariants at every step.
        #[test]
        fn deadlines_behave_like_a_map(
            prefill in 0u16..300,
            ops in prop::collection::vec(ttl_op(), 1..400),
        ) {
            let name = |f: u16| format!("f{f}").into_bytes();
            let mut h = Hash::default();
            let mut model: std::collections::HashMap<u16, Option<u64>> = Default::default();
            for f in 0..prefill {
                h.insert(&name(f), b"v", DEFAULT);
                model.insert(f, None);
            }
            for op in ops {
                match op {
                    TtlOp::Insert(f) => {
                        prop_assert_eq!(h.insert(&name(f), b"w", DEFAULT), !model.contains_key(&f));
                        model.insert(f, None);
                    }
                    TtlOp::InsertKeepTtl(f) => {
                        prop_assert_eq!(h.insert_keep_ttl(&name(f), b"w", DEFAULT), !model.contains_key(&f));
                        model.entry(f).or_insert(None);
                    }
                    TtlOp::Remove(f) => {
                        prop_assert_eq!(h.remove(&name(f)), model.remove(&f).is_some());
                    }
                    TtlOp::SetDeadline(f, at) => {
                        prop_assert_eq!(h.set_deadline(&name(f), at), model.contains_key(&f));
                        if let Some(d) = model.get_mut(&f) {
                            *d = Some(at);
                        }
                    }
                    TtlOp::Persist(f) => {
                        let had = model.get(&f).is_some_and(|d| d.is_some());
                        prop_assert_eq!(h.persist(&name(f)), had);
                        if let Some(d) = model.get_mut(&f) {
                            *d = None;
                        }
                    }
                    TtlOp::RemoveExpired(now) => {
                        let all = !model.is_empty()
                            && model.values().all(|d| d.is_some_and(|at| at < now));
                        prop_assert_eq!(h.all_expired(now), all);
                        let before = model.len();
                        model.retain(|_, d| !d.is_some_and(|at| at < now));
                        prop_assert_eq!(h.remove_expired(now), before - model.len());
                        prop_assert!(!h.may_have_expired(now));
                    }
                }
                let earliest = h.check_invariants().map_err(TestCaseError::fail)?;
                let want = model.values().flatten().copied().min();
                prop_assert_eq!(earliest, want);
                prop_assert_eq!(h.next_deadline(), want);
                prop_assert_eq!(h.len(), model.len());
                for (&f, &d) in &model {
                    prop_assert_eq!(h.deadline(&name(f)), d, "f{}", f);
                }
            }
        }
    }

    /// One step of the model test.
    #[derive(Clone, Debug)]
    enum Op {
        Insert(Vec<u8>, Vec<u8>),
        InsertKeepTtl(Vec<u8>, Vec<u8>),
        Remove(Vec<u8>),
        SetDeadline(Vec<u8>),
    }

    /// Short strings over a tiny alphabet, so fields repeat and lengths
    /// straddle small limits.
    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(b'a'..b'd', 0..7)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (bytes(), bytes()).prop_map(|(f, v)| Op::Insert(f, v)),
            1 => (bytes(), bytes()).prop_map(|(f, v)| Op::InsertKeepTtl(f, v)),
            3 => bytes().prop_map(Op::Remove),
            1 => bytes().prop_map(Op::SetDeadline),
        ]
    }

    proptest! {
        /// Against an `IndexMap` (order kept by removals: the alphabet
        /// keeps every hash under `ORDERED_REMOVAL_MAX`), with small limits
        /// so both forms and both conversions are exercised.
        #[test]
        fn behaves_like_an_ordered_map(
            entries in 0usize..10,
            value in 0usize..6,
            ops in prop::collection::vec(op(), 1..80),
        ) {
            let limits = ListpackLimits { entries, value };
            let mut h = Hash::default();
            let mut model: IndexMap<Vec<u8>, Vec<u8>> = IndexMap::new();
            let mut compact = true;
            for op in ops {
                match op {
                    Op::Insert(f, v) => {
                        let added = h.insert(&f, &v, limits);
                        compact &= f.len() <= value && v.len() <= value;
                        prop_assert_eq!(added, model.insert(f, v).is_none());
                        compact &= model.len() <= entries;
                    }
                    Op::InsertKeepTtl(f, v) => {
                        let added = h.insert_keep_ttl(&f, &v, limits);
                        compact &= f.len() <= value && v.len() <= value;
                        prop_assert_eq!(added, model.insert(f, v).is_none());
                        compact &= model.len() <= entries;
                    }
                    Op::Remove(f) => {
                        prop_assert_eq!(h.remove(&f), model.shift_remove(&f).is_some());
                    }
                    Op::SetDeadline(f) => {
                        prop_assert_eq!(h.set_deadline(&f, 1_000), model.contains_key(&f));
                        compact &= !model.contains_key(&f);
                    }
                }
                prop_assert_eq!(h.is_compact(), compact);
                prop_assert_eq!(h.len(), model.len());
                let pairs: Vec<_> = h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
                let want: Vec<_> = model.iter().map(|(f, v)| (f.clone(), v.clone())).collect();
                prop_assert_eq!(pairs, want);
                for (i, (f, v)) in model.iter().enumerate() {
                    prop_assert_eq!(h.get(f), Some(&v[..]));
                    prop_assert_eq!(h.get_index(i), Some((&f[..], &v[..])));
                }
                prop_assert_eq!(h.get_index(model.len()), None);
                prop_assert!(!h.contains_key(b"zzz"));
            }
        }
    }
}
