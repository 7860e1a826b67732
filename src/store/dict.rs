//! The table of one database: every key with its value and deadline in one
//! place, and the list of volatile keys the sweep samples from.
//!
//! # Layout
//!
//! - `slots`: the entries (key, value, access time, place in `volatile`), densely
//!   packed at positions `0..len`, in chunks of at most [`CHUNK`] slots. A
//!   full chunk never moves, so growing the table copies at most one
//!   chunk's entries (a `Vec` doubling at 10M keys would copy a gigabyte and
//!   stall the shard), and the chunks past the end are freed as keys go, so
//!   memory comes back after an expiry storm without a rehash. The last
//!   chunk grows and shrinks as a `Vec` does (from [`MIN_CHUNK`] slots,
//!   halved when a quarter full), so a small table holds little more than
//!   its keys; and it grows by [`MIN_CHUNK`] slots only while doubling it
//!   would pass `maxmemory`, as Redis does not expand a dict then
//!   (`dictExpandAllowed`): otherwise one insert could take 160 KiB that
//!   eviction, which frees keys and not capacity, could not give back.
//! - `index`: slot positions by key hash, 8 bytes a bucket with 32 bits of
//!   the hash beside the position, so a probe costs one cache line, and
//!   resized a step at a time (`index.rs`). Full hashes are not stored: the
//!   deadline buckets keep them as hints, and a key moved by a removal is
//!   hashed again.
//! - `volatile`: the slots that carry a deadline, each listed with its
//!   position and its deadline. Each such slot remembers its place in this
//!   list, so setting, clearing or moving a deadline is O(1), and the sweep
//!   picks a volatile key uniformly at random in O(1), as Redis does on its
//!   `expires` dict.
//!
//! The deadline lives in the list, not in the slot: most cached keys have
//! none, and 8 bytes in every slot cost them 8 bytes a key for nothing. A
//! key with a deadline costs 12 bytes more than one without (its entry in
//! `volatile`), where Redis keeps a second dict entry and ember used to keep
//! a second map; reading a deadline is one load more (the list entry), in
//! the line the sweep's sampling reads anyway.
//!
//! # Removal
//!
//! Removal is a swap-remove: the last slot moves into the hole and its index
//! entry (and `volatile` entry) is pointed at its new position. So positions
//! stay dense, which is what makes random picks O(1). SCAN relies on the
//! fact that only the last slot ever moves (see `Keyspace::scan`).

use ahash::RandomState;

use super::index::{short_hash, Index, MAX_POSITION};
use super::key::Key;
use super::snapshot::Cursor;
use super::Value;
use crate::config::EVICTION;
use crate::util::memory;

/// Slots per chunk (a power of two): 4096 slots of 72 bytes, 288 KiB.
const CHUNK_SHIFT: u32 = 12;
pub const CHUNK: usize = 1 << CHUNK_SHIFT;
const CHUNK_MASK: usize = CHUNK - 1;
/// The fewest slots a chunk holds room for (1,152 bytes): the step by which
/// the last chunk grows while doubling would pass `maxmemory`.
const MIN_CHUNK: usize = 16;

/// `volatile` is copied into a smaller buffer only with at most this many
/// entries left (256 KiB of copying).
const SHRINK_VOLATILE_MAX: usize = 64 * 1024;

/// `Entry::volatile_pos` of a key without a deadline.
const NOT_VOLATILE: u32 = u32::MAX;

/// A stored key's value and metadata. Its deadline, if any, is in the
/// volatile list ([`Dict::deadline`]).
#[derive(Clone, Debug)]
pub struct Entry {
    pub value: Value,
    /// Redis's `lru` word: the LRU clock or the LFU counter, by policy
    /// (`store::access`).
    pub access: u32,
    /// Where this slot is in `Dict::volatile`, or `NOT_VOLATILE`.
    volatile_pos: u32,
}

impl Entry {
    /// Whether the key has a deadline.
    pub fn is_volatile(&self) -> bool {
        self.volatile_pos != NOT_VOLATILE
    }
}

/// A key's value and metadata taken out of the table, with its deadline.
#[derive(Debug)]
pub struct Removed {
    pub value: Value,
    pub access: u32,
    deadline: Option<u64>,
}

impl Removed {
    /// The deadline it had (Unix milliseconds).
    pub fn expire_at(&self) -> Option<u64> {
        self.deadline
    }
}

/// A volatile slot in `Dict::volatile`: 12 bytes (the deadline as two
/// halves, so that the entry packs without padding).
#[derive(Clone, Copy, Debug)]
struct Listed {
    pos: u32,
    deadline: [u32; 2],
}

impl Listed {
    fn new(pos: usize, deadline: u64) -> Listed {
        Listed {
            pos: pos as u32,
            deadline: [deadline as u32, (deadline >> 32) as u32],
        }
    }

    fn deadline(&self) -> u64 {
        u64::from(self.deadline[0]) | (u64::from(self.deadline[1]) << 32)
    }
}

#[derive(Debug)]
struct Slot {
    key: Key,
    entry: Entry,
}

/// Dense storage in chunks that never move (see the module docs).
#[derive(Default)]
struct Slots {
    chunks: Vec<Vec<Slot>>,
    len: usize,
}

impl Slots {
    fn get(&self, pos: usize) -> &Slot {
        &self.chunks[pos >> CHUNK_SHIFT][pos & CHUNK_MASK]
    }

    fn get_mut(&mut self, pos: usize) -> &mut Slot {
        &mut self.chunks[pos >> CHUNK_SHIFT][pos & CHUNK_MASK]
    }

    fn push(&mut self, slot: Slot) {
        let chunk = self.len >> CHUNK_SHIFT;
        if chunk == self.chunks.len() {
            self.chunks.push(Vec::with_capacity(MIN_CHUNK));
        }
        let last = &mut self.chunks[chunk];
        if last.len() == last.capacity() {
            let room = CHUNK - last.capacity();
            let double = last.capacity().min(room);
            let bytes = double * std::mem::size_of::<Slot>();
            let extra = if growth_allowed(bytes) {
                double
            } else {
                MIN_CHUNK.min(room)
            };
            last.reserve_exact(extra);
        }
        last.push(slot);
        self.len += 1;
    }

    /// Removes the slot at `pos`, moving the last one into its place.
    fn swap_remove(&mut self, pos: usize) -> Slot {
        let last_pos = self.len - 1;
        let last_chunk = &mut self.chunks[last_pos >> CHUNK_SHIFT];
        let last = last_chunk.pop().expect("slots are dense up to len");
        // Halved when a quarter full, so that growing back (doubling) and
        // shrinking do not chase each other.
        if last_chunk.capacity() > MIN_CHUNK && last_chunk.len() <= last_chunk.capacity() / 4 {
            last_chunk.shrink_to((last_chunk.capacity() / 2).max(MIN_CHUNK));
        }
        self.len -= 1;
        // An emptied chunk goes at once: a new one costs one small
        // allocation.
        self.chunks.truncate(self.len.div_ceil(CHUNK));
        if pos == last_pos {
            last
        } else {
            std::mem::replace(self.get_mut(pos), last)
        }
    }

    fn iter(&self) -> impl Iterator<Item = &Slot> {
        self.chunks.iter().flatten()
    }
}

/// Whether `bytes` more for a table keep the server within `maxmemory`
/// (always, without a limit). The figure is this thread's latest.
fn growth_allowed(bytes: usize) -> bool {
    let max = EVICTION.maxmemory();
    max == 0 || {
        let _ = memory::publish_thread();
        memory::used_memory().saturating_add(bytes as u64) <= max
    }
}

/// The deadline `entry` has in `volatile`, if it is listed there.
fn listed_deadline(volatile: &[Listed], entry: &Entry) -> Option<u64> {
    entry
        .is_volatile()
        .then(|| volatile[entry.volatile_pos as usize].deadline())
}

#[derive(Default)]
pub struct Dict {
    hasher: RandomState,
    index: Index,
    slots: Slots,
    volatile: Vec<Listed>,
    /// A snapshot being written (BGSAVE): before a slot it has not reached
    /// changes, it writes the slot's old key (`store::snapshot`).
    snap: Option<Box<Cursor>>,
}

impl Dict {
    /// Writes the key at `pos` to a running snapshot first, if it has not
    /// reached it: every change of a slot's value, deadline or presence
    /// passes here. Without a snapshot, one branch.
    #[inline]
    fn before_change(&mut self, pos: usize) {
        if let Some(snap) = self.snap.as_deref_mut() {
            let slot = self.slots.get(pos);
            let deadline = listed_deadline(&self.volatile, &slot.entry);
            snap.before_change(pos, &slot.key, &slot.entry.value, deadline);
        }
    }

    /// Starts a snapshot of this table as database `db` at `start_ms`.
    pub fn begin_snapshot(&mut self, db: usize, start_ms: u64, compress: bool) {
        self.snap = Some(Box::new(Cursor::new(db, self.len(), start_ms, compress)));
    }

    /// The running (or finished, not yet taken) snapshot.
    pub fn snapshot(&self) -> Option<&Cursor> {
        self.snap.as_deref()
    }

    /// Moves the snapshot on by up to `max` slots; returns how many.
    pub fn snapshot_step(&mut self, max: usize) -> usize {
        let Some(snap) = self.snap.as_deref_mut() else {
            return 0;
        };
        let (slots, volatile) = (&self.slots, &self.volatile);
        let mut n = 0;
        while n < max
            && snap.step(|pos| {
                let s = slots.get(pos);
                let deadline = listed_deadline(volatile, &s.entry);
                (s.key.as_bytes(), &s.entry.value, deadline)
            })
        {
            n += 1;
        }
        n
    }

    /// Takes the snapshot away (finished, or abandoned).
    pub fn take_snapshot(&mut self) -> Option<Box<Cursor>> {
        self.snap.take()
    }

    /// Gives the table a snapshot (a finished one, moving to the empty
    /// table that replaces this one in a flush).
    pub fn put_snapshot(&mut self, snap: Option<Box<Cursor>>) {
        self.snap = snap;
    }

    pub fn len(&self) -> usize {
        self.slots.len
    }

    pub fn is_empty(&self) -> bool {
        self.slots.len == 0
    }

    pub fn volatile_len(&self) -> usize {
        self.volatile.len()
    }

    /// What the table holds besides the keys' and values' own heap bytes
    /// (MEMORY STATS's `overhead.hashtable.*`): the slots room is kept for
    /// (each a key's and value's inline part, its access word and place in
    /// the volatile list)
    /// with the index's buckets; and the volatile list.
    pub fn overhead(&self) -> (usize, usize) {
        let slots: usize = self.slots.chunks.iter().map(Vec::capacity).sum();
        let table = slots * std::mem::size_of::<Slot>() + self.index.heap_size();
        let volatile = self.volatile.capacity() * std::mem::size_of::<Listed>();
        (table, volatile)
    }

    /// The hash the index files `key` under; the deadline buckets keep it
    /// as a hint in place of the key (see [`find_hashed`](Self::find_hashed)).
    pub fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The position of `key`.
    pub fn find(&self, key: &[u8]) -> Option<usize> {
        let slots = &self.slots;
        self.index
            .find(short_hash(self.hash(key)), |pos| {
                slots.get(pos).key.as_bytes() == key
            })
            .map(|(_, pos)| pos)
    }

    /// The position of the key whose hash is `hash`, if it is still here.
    pub fn find_hashed(&self, hash: u64) -> Option<usize> {
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.index
            .find(short_hash(hash), |pos| {
                hasher.hash_one(slots.get(pos).key.as_bytes()) == hash
            })
            .map(|(_, pos)| pos)
    }

    /// Starts loading the index bucket of the key whose hash is `hash`
    /// (see [`Index::prefetch`]).
    pub fn prefetch_hashed(&self, hash: u64) {
        self.index.prefetch(short_hash(hash));
    }

    /// The key at `pos`. Requires: `pos < len()`.
    pub fn key(&self, pos: usize) -> &[u8] {
        &self.slots.get(pos).key
    }

    /// The entry at `pos`. Requires: `pos < len()`.
    pub fn entry(&self, pos: usize) -> &Entry {
        &self.slots.get(pos).entry
    }

    /// The deadline of the key at `pos` (Unix milliseconds). Requires:
    /// `pos < len()`.
    pub fn deadline(&self, pos: usize) -> Option<u64> {
        listed_deadline(&self.volatile, &self.slots.get(pos).entry)
    }

    /// The entry at `pos`, to change its value or access time (its deadline
    /// changes through [`set_deadline`](Self::set_deadline)).
    pub fn entry_mut(&mut self, pos: usize) -> &mut Entry {
        self.before_change(pos);
        &mut self.slots.get_mut(pos).entry
    }

    /// The key and entry at `pos`, the entry mutable.
    pub fn slot_mut(&mut self, pos: usize) -> (&[u8], &mut Entry) {
        self.before_change(pos);
        let slot = self.slots.get_mut(pos);
        (&slot.key, &mut slot.entry)
    }

    /// The position of the `nth` volatile key. Requires: `nth < volatile_len()`.
    pub fn volatile_position(&self, nth: usize) -> usize {
        self.volatile[nth].pos as usize
    }

    /// The position and deadline of the `nth` volatile key, read from the
    /// list alone. Requires: `nth < volatile_len()`.
    pub fn volatile_entry(&self, nth: usize) -> (usize, u64) {
        let listed = self.volatile[nth];
        (listed.pos as usize, listed.deadline())
    }

    /// Every key with its entry and deadline, by position.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &Entry, Option<u64>)> {
        self.slots.iter().map(|s| {
            (
                s.key.as_bytes(),
                &s.entry,
                listed_deadline(&self.volatile, &s.entry),
            )
        })
    }

    /// Adds `key`, which must not be here yet and hashes to `hash`
    /// ([`hash`](Self::hash)), and returns its position.
    pub fn insert_new(
        &mut self,
        hash: u64,
        key: &[u8],
        value: Value,
        deadline: Option<u64>,
        access: u32,
    ) -> usize {
        let pos = self.slots.len;
        assert!(pos < MAX_POSITION, "at most 4G keys per database and shard");
        self.slots.push(Slot {
            key: Key::new(key),
            entry: Entry {
                value,
                access,
                volatile_pos: NOT_VOLATILE,
            },
        });
        self.index.insert(short_hash(hash), pos);
        self.set_deadline(pos, deadline);
        pos
    }

    /// Sets or clears the deadline of the key at `pos`.
    pub fn set_deadline(&mut self, pos: usize, deadline: Option<u64>) {
        self.before_change(pos);
        let listed = self.volatile.len() as u32;
        let entry = &mut self.slots.get_mut(pos).entry;
        match (deadline, entry.volatile_pos) {
            (Some(at), NOT_VOLATILE) => {
                entry.volatile_pos = listed;
                self.volatile.push(Listed::new(pos, at.max(1)));
            }
            (Some(at), nth) => self.volatile[nth as usize] = Listed::new(pos, at.max(1)),
            (None, NOT_VOLATILE) => {}
            (None, nth) => {
                entry.volatile_pos = NOT_VOLATILE;
                self.unlist_volatile(nth as usize);
            }
        }
    }

    /// Removes the key at `pos`, returning it with its entry. The last slot
    /// moves into `pos`.
    pub fn remove_at(&mut self, pos: usize) -> (Key, Removed) {
        self.before_change(pos);
        let (found, _) = self
            .index
            .find(short_hash(self.hash(self.key(pos))), |p| p == pos)
            .expect("every slot is indexed");
        self.index.remove(found);
        let removed = self.slots.swap_remove(pos);
        if pos < self.slots.len {
            // The former last slot now lives at `pos`.
            let moved_from = self.slots.len;
            let (found, _) = self
                .index
                .find(short_hash(self.hash(self.key(pos))), |p| p == moved_from)
                .expect("every slot is indexed");
            self.index.set_position(found, pos);
            let moved = &self.slots.get(pos).entry;
            if moved.is_volatile() {
                self.volatile[moved.volatile_pos as usize].pos = pos as u32;
            }
        }
        let deadline = listed_deadline(&self.volatile, &removed.entry);
        if removed.entry.is_volatile() {
            self.unlist_volatile(removed.entry.volatile_pos as usize);
        }
        if let Some(snap) = self.snap.as_deref_mut() {
            let len = self.slots.len;
            let moved = (pos < len).then(|| (len, self.slots.get(pos).key.as_bytes()));
            snap.after_removal(pos, &removed.key, moved, len);
        }
        self.shrink_if_sparse();
        let Entry { value, access, .. } = removed.entry;
        (
            removed.key,
            Removed {
                value,
                access,
                deadline,
            },
        )
    }

    /// Drops the `nth` entry of `volatile`, moving the last one into its place.
    fn unlist_volatile(&mut self, nth: usize) {
        self.volatile.swap_remove(nth);
        if let Some(listed) = self.volatile.get(nth) {
            self.slots.get_mut(listed.pos as usize).entry.volatile_pos = nth as u32;
        }
    }

    /// Gives back the spare room of `volatile` once at most a quarter of it
    /// is used (after an expiry storm). Shrinking copies what is left in one
    /// go, so it waits until at most [`SHRINK_VOLATILE_MAX`] entries are
    /// left: copying the 2.5M entries left of a 10M-key storm took
    /// milliseconds. The index shrinks by itself, a step at a time.
    fn shrink_if_sparse(&mut self) {
        let listed = self.volatile.len();
        let capacity = self.volatile.capacity();
        if capacity > 1024 && listed <= capacity / 4 && listed <= SHRINK_VOLATILE_MAX {
            let old = std::mem::replace(&mut self.volatile, Vec::with_capacity(listed * 2));
            self.volatile.extend_from_slice(&old);
            crate::store::lazyfree::free_buffer(old);
        }
    }

    /// Whether the index is being resized, which makes every removal
    /// dearer (see `index.rs`).
    pub fn resizing(&self) -> bool {
        self.index.resizing()
    }

    /// Moves the index a step further through a resize, if one is under
    /// way (see `index.rs`); `buckets` bounds the work.
    pub fn tidy(&mut self, buckets: usize) {
        self.index.step_many(buckets);
    }

    /// Checks every cross-reference: the index finds every key at its
    /// position and counts as many as the table holds, and `volatile` lists
    /// exactly the slots with a deadline, each where the slot says. For the
    /// fuzz harness (`DEBUG EMBER-CHECK`) and tests; O(keys).
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.index.len() != self.len() {
            return Err(format!(
                "index holds {} keys, table {}",
                self.index.len(),
                self.len()
            ));
        }
        let mut volatile = 0;
        for pos in 0..self.len() {
            let key = self.key(pos);
            let found = self.find(key);
            if found != Some(pos) {
                return Err(format!(
                    "key {:?} at {pos} found at {found:?}",
                    String::from_utf8_lossy(key)
                ));
            }
            let entry = self.entry(pos);
            if entry.is_volatile() {
                volatile += 1;
                let listed = self.volatile.get(entry.volatile_pos as usize);
                if listed.map(|l| l.pos as usize) != Some(pos) {
                    return Err(format!(
                        "volatile key {:?} at {pos} listed as {listed:?}",
                        String::from_utf8_lossy(key)
                    ));
                }
            }
        }
        if volatile != self.volatile.len() {
            return Err(format!(
                "{volatile} keys with a deadline, {} listed",
                self.volatile.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn value(n: u64) -> Value {
        Value::string(Bytes::from(n.to_string()))
    }

    fn text(entry: &Entry) -> String {
        match &entry.value {
            Value::Str(s) => String::from_utf8(s.to_vec()).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u8, Option<u64>),
        Remove(u8),
        SetDeadline(u8, Option<u64>),
        RemoveVolatile(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let deadline = proptest::option::of(1u64..5);
        prop_oneof![
            (any::<u8>(), deadline.clone()).prop_map(|(k, d)| Op::Insert(k, d)),
            any::<u8>().prop_map(Op::Remove),
            (any::<u8>(), deadline).prop_map(|(k, d)| Op::SetDeadline(k, d)),
            any::<usize>().prop_map(Op::RemoveVolatile),
        ]
    }

    /// Keys long enough to live on the heap for half the names.
    fn name(k: u8) -> Vec<u8> {
        if k.is_multiple_of(2) {
            vec![k]
        } else {
            format!("a-long-key-that-does-not-fit-inline-{k}").into_bytes()
        }
    }

    proptest! {
        /// The dict against a model map, with every cross-reference checked
        /// after each step.
        #[test]
        fn the_dict_matches_a_model(ops in proptest::collection::vec(op(), 1..400)) {
            let mut dict = Dict::default();
            let mut model: HashMap<Vec<u8>, (u64, Option<u64>)> = HashMap::new();
            for (step, op) in ops.into_iter().enumerate() {
                let step = step as u64;
                match op {
                    Op::Insert(k, d) => {
                        let key = name(k);
                        match dict.find(&key) {
                            Some(pos) => {
                                dict.entry_mut(pos).value = value(step);
                                dict.set_deadline(pos, d);
                            }
                            None => {
                                dict.insert_new(dict.hash(&key), &key, value(step), d, 0);
                            }
                        }
                        model.insert(key, (step, d));
                    }
                    Op::Remove(k) => {
                        let key = name(k);
                        let removed = dict.find(&key).map(|pos| dict.remove_at(pos));
                        prop_assert_eq!(removed.is_some(), model.remove(&key).is_some());
                    }
                    Op::SetDeadline(k, d) => {
                        let key = name(k);
                        if let Some(pos) = dict.find(&key) {
                            dict.set_deadline(pos, d);
                            model.get_mut(&key).unwrap().1 = d;
                        }
                    }
                    Op::RemoveVolatile(n) => {
                        if dict.volatile_len() > 0 {
                            let pos = dict.volatile_position(n % dict.volatile_len());
                            let (key, entry) = dict.remove_at(pos);
                            prop_assert!(entry.expire_at().is_some());
                            prop_assert!(model.remove(key.as_bytes()).is_some());
                        }
                    }
                }
                dict.check_invariants().unwrap();
            }
            prop_assert_eq!(dict.len(), model.len());
            for (key, (v, d)) in &model {
                let pos = dict.find(key).unwrap();
                prop_assert_eq!(text(dict.entry(pos)), v.to_string());
                prop_assert_eq!(dict.deadline(pos), *d);
                prop_assert_eq!(dict.find_hashed(dict.hash(key)), Some(pos));
            }
        }
    }

    #[test]
    fn chunks_past_the_end_are_freed_and_the_index_shrinks() {
        let mut dict = Dict::default();
        let n: usize = 100_000;
        for i in 0..n {
            let key = format!("k{i}");
            dict.insert_new(
                dict.hash(key.as_bytes()),
                key.as_bytes(),
                value(1),
                Some(5),
                0,
            );
        }
        assert_eq!(dict.slots.chunks.len(), n.div_ceil(CHUNK));
        let grown = dict.index.heap_size();
        while dict.len() > 100 {
            let pos = dict.volatile_position(0);
            dict.remove_at(pos);
        }
        assert_eq!(dict.slots.chunks.len(), 1, "only the used chunk");
        assert!(
            dict.slots.chunks[0].capacity() <= 4 * 100,
            "the last chunk shrank"
        );
        assert!(dict.index.heap_size() <= grown / 64, "the index shrank");
        assert!(dict.volatile.capacity() <= 1024.max(4 * dict.volatile_len()));
        dict.check_invariants().unwrap();
    }

    #[test]
    fn a_deadline_of_zero_is_kept_as_past() {
        let mut dict = Dict::default();
        let pos = dict.insert_new(dict.hash(b"k"), b"k", value(1), Some(0), 0);
        assert_eq!(dict.deadline(pos), Some(1));
        assert_eq!(dict.volatile_len(), 1);
    }

    /// The key (24), the value (40), the access word and the place in the
    /// volatile list: what every key pays, whatever it holds.
    #[test]
    fn a_slot_is_72_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 72);
        assert_eq!(std::mem::size_of::<Listed>(), 12);
    }

    #[test]
    fn a_deadline_moves_with_its_slot_and_goes_with_its_key() {
        let mut dict = Dict::default();
        for (i, d) in [(0, None), (1, Some(10)), (2, Some(20)), (3, None)] {
            let key = [b'k', b'0' + i];
            dict.insert_new(dict.hash(&key), &key, value(1), d, 0);
        }
        // k1 goes: k3 moves into its slot, k2 keeps its deadline.
        let (_, removed) = dict.remove_at(1);
        assert_eq!(removed.expire_at(), Some(10));
        assert_eq!(dict.deadline(dict.find(b"k2").unwrap()), Some(20));
        assert_eq!(dict.deadline(dict.find(b"k3").unwrap()), None);
        let k2 = dict.find(b"k2").unwrap();
        dict.set_deadline(k2, Some(30));
        assert_eq!(dict.deadline(k2), Some(30));
        assert_eq!(dict.volatile_len(), 1);
        let k3 = dict.find(b"k3").unwrap();
        dict.set_deadline(k3, Some(u64::MAX));
        assert_eq!(dict.deadline(k3), Some(u64::MAX), "all 64 bits kept");
        dict.check_invariants().unwrap();
    }
}
