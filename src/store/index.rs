//! The dict's index: key hash to slot position, one cache line per probe,
//! resized a little at a time.
//!
//! An open-addressing table with linear probing where each bucket is one
//! `u64`: 32 bits of the key's hash beside the slot position. Finding a key
//! reads one run of adjacent buckets (usually one cache line) and then the
//! slot to compare the key. A general-purpose map keeps its control bytes
//! and its entries in separate arrays, so every probe of a large table
//! misses the cache twice; at millions of keys, where every probe misses,
//! that was most of the cost of expiring a key.
//!
//! Because a bucket carries its hash bits, entries move between tables and
//! deletes shift later entries back (no tombstones) without hashing a key.
//! The home bucket of a hash is its 32 bits scaled to the table size
//! (`short * buckets >> 32`, a multiply where a power-of-two table would
//! mask), so a table may have any size up to 2^32 buckets, and it grows by
//! half ([`GROW_NUM`]/[`GROW_DEN`]) rather than doubling: between 1/2 and
//! 3/4 full, an index takes 13.0 bytes a key on average where a doubling
//! one, between 3/8 and 3/4, takes 14.8 (at 1M keys 12.9 against 16.8, 1M
//! being just past a power of two's 3/4). The price: each key is moved by about two resizes
//! over the table's growth instead of one, 8 bytes copied each time.
//!
//! # Resizing without a stall
//!
//! Rebuilding a table of millions of entries in one go would stop the
//! shard for tens of milliseconds, so, like Redis's incremental rehash, a
//! resize allocates the new table and moves [`STEP`] buckets of the old one
//! on every insert, removal and lookup through the keyspace (and a batch
//! at every timer tick, for a shard with little traffic). Meanwhile:
//! - inserts go to the new table; lookups try the new table, then the old;
//! - a removal from the old table leaves a tombstone instead of shifting
//!   entries back (a shift could move an entry behind the mover);
//! - the mover starts at an empty bucket of the old table and goes round it
//!   once. No run of entries crosses an empty bucket, so no run straddles
//!   the start; and an entry still in the old table whose home the mover
//!   has passed is found by probing from the mover onwards.
//!
//! Before that, the new table itself is zeroed a page at a time
//! ([`PREPARE_STEP`]): a fresh allocation of tens of megabytes often reuses pages the
//! allocator must clear or fault in again, which took 20 ms in one go in an
//! expiry storm's shrink. While it is prepared the current table serves
//! everything, filling past three quarters if inserts keep coming.
//!
//! The table grows by half when three quarters full (back to half full)
//! and shrinks when a quarter full, back to half full, so the two never
//! chase each other.

/// Buckets of the old table moved per insert or removal while resizing.
pub const STEP: usize = 64;
/// Buckets of the new table zeroed per step before the move begins: one
/// 4 KiB page, at most one page fault. The sweep removes thousands of keys
/// a millisecond, each a step, so a step must stay this small. Unit tests
/// use smaller steps so that their small tables go through every phase.
pub const PREPARE_STEP: usize = if cfg!(test) { 128 } else { 512 };
/// Most of the table filled before it grows: 3/4 keeps probe runs short
/// (about 2.5 buckets for a hit, 8.5 for a miss).
const MAX_LOAD_NUM: usize = 3;
const MAX_LOAD_DEN: usize = 4;
/// A full table grows to this many times its size: 3/2, so that it is half
/// full after the resize.
const GROW_NUM: usize = 3;
const GROW_DEN: usize = 2;
/// Tables this small are rebuilt in one go and never shrunk.
const MIN_BUCKETS: usize = 64;
/// Past 7/8 full while a resize is still under way, it is finished at once
/// rather than let probe runs grow long.
const FULL_NUM: usize = 7;
const FULL_DEN: usize = 8;

/// An empty bucket.
const EMPTY: u64 = 0;
/// A removed entry of the old table while it is being moved. Its position
/// part (`u32::MAX`) is one no entry has (see [`MAX_POSITION`]).
const TOMBSTONE: u64 = u64::MAX;
/// Positions must stay below this.
pub const MAX_POSITION: usize = u32::MAX as usize - 1;

/// The 32 bits of a 64-bit hash that the index keeps.
pub fn short_hash(hash: u64) -> u32 {
    (hash >> 32) as u32
}

fn pack(short: u32, pos: usize) -> u64 {
    debug_assert!(pos < MAX_POSITION);
    (u64::from(short) << 32) | (pos as u64 + 1)
}

fn short_of(bucket: u64) -> u32 {
    (bucket >> 32) as u32
}

fn pos_of(bucket: u64) -> usize {
    (bucket & u64::from(u32::MAX)) as usize - 1
}

/// Asks the CPU to start loading the cache line holding `value`, without
/// waiting for it (a plain load would hold the loop up until it arrived).
#[inline]
fn prefetch_line<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is part of SSE, which every x86-64 CPU has; it is a
    // hint that never faults and changes no memory, and the pointer comes
    // from a live reference anyway.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::hint::black_box(value);
}

/// Where [`Index::find`] found an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// In the table being moved out of.
    in_old: bool,
    bucket: usize,
}

/// One open-addressing table.
#[derive(Default)]
struct Table {
    buckets: Vec<u64>,
    /// Entries (tombstones not counted).
    len: usize,
}

impl Table {
    fn home(&self, short: u32) -> usize {
        ((u64::from(short) * self.buckets.len() as u64) >> 32) as usize
    }

    /// The bucket after `at`, round the end of the table.
    fn next(&self, at: usize) -> usize {
        if at + 1 == self.buckets.len() {
            0
        } else {
            at + 1
        }
    }

    /// How many buckets on from `from` (round the end) `to` is.
    fn distance(&self, from: usize, to: usize) -> usize {
        if to >= from {
            to - from
        } else {
            to + self.buckets.len() - from
        }
    }

    /// Entries the table takes before it must grow.
    fn capacity(&self) -> usize {
        self.buckets.len() / MAX_LOAD_DEN * MAX_LOAD_NUM
    }

    /// Probes from bucket `from` to the end of its run.
    fn find_from(
        &self,
        from: usize,
        short: u32,
        is_it: &mut impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let mut at = from;
        loop {
            let bucket = self.buckets[at];
            if bucket == EMPTY {
                return None;
            }
            if bucket != TOMBSTONE && short_of(bucket) == short && is_it(pos_of(bucket)) {
                return Some(at);
            }
            at = self.next(at);
        }
    }

    fn place(&mut self, bucket: u64) {
        let mut at = self.home(short_of(bucket));
        while self.buckets[at] != EMPTY {
            at = self.next(at);
        }
        self.buckets[at] = bucket;
        self.len += 1;
    }

    /// Removes the entry at `at`, shifting the rest of its run back where
    /// their probe allows, so no tombstone is left.
    fn remove_shifting(&mut self, at: usize) {
        let mut hole = at;
        let mut next = at;
        loop {
            next = self.next(next);
            let bucket = self.buckets[next];
            if bucket == EMPTY {
                break;
            }
            let home = self.home(short_of(bucket));
            // The entry may move into the hole if the hole lies on its probe
            // path: from its home, the hole comes no later than where it is.
            if self.distance(home, next) >= self.distance(hole, next) {
                self.buckets[hole] = bucket;
                hole = next;
            }
        }
        self.buckets[hole] = EMPTY;
        self.len -= 1;
    }
}

/// The table being moved out of, and how far the mover got.
struct Moving {
    table: Table,
    /// The empty bucket the mover started from.
    start: usize,
    /// Next bucket to move; buckets from `start` up to here (round the
    /// table) are empty.
    cursor: usize,
    /// Buckets moved so far.
    moved: usize,
}

impl Moving {
    /// Where a probe for `short` starts: its home, or the mover's position
    /// if the mover has passed its home (the entry, if still here, sits
    /// further along its run).
    fn probe_start(&self, short: u32) -> usize {
        let home = self.table.home(short);
        let passed = self.table.distance(self.start, home) < self.moved;
        if passed {
            self.cursor
        } else {
            home
        }
    }
}

#[derive(Default)]
pub struct Index {
    table: Table,
    /// The next table, being zeroed before the move (`wanted` buckets).
    preparing: Option<(Vec<u64>, usize)>,
    old: Option<Moving>,
}

impl Index {
    pub fn len(&self) -> usize {
        self.table.len + self.old.as_ref().map_or(0, |m| m.table.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a resize is under way: every insert and removal then also
    /// zeroes a page of the next table or moves [`STEP`] buckets.
    pub fn resizing(&self) -> bool {
        self.old.is_some() || self.preparing.is_some()
    }

    /// Heap bytes held by the buckets, both tables while resizing.
    pub fn heap_size(&self) -> usize {
        let old = self.old.as_ref().map_or(0, |m| m.table.buckets.len());
        let next = self.preparing.as_ref().map_or(0, |(b, _)| b.capacity());
        8 * (self.table.buckets.len() + old + next)
    }

    /// The first entry with hash bits `short` whose position satisfies
    /// `is_it`: where it is, and the position.
    pub fn find(&self, short: u32, mut is_it: impl FnMut(usize) -> bool) -> Option<(Found, usize)> {
        if !self.table.buckets.is_empty() {
            let from = self.table.home(short);
            if let Some(at) = self.table.find_from(from, short, &mut is_it) {
                return Some((
                    Found {
                        in_old: false,
                        bucket: at,
                    },
                    pos_of(self.table.buckets[at]),
                ));
            }
        }
        let moving = self.old.as_ref()?;
        let from = moving.probe_start(short);
        let at = moving.table.find_from(from, short, &mut is_it)?;
        Some((
            Found {
                in_old: true,
                bucket: at,
            },
            pos_of(moving.table.buckets[at]),
        ))
    }

    /// Loads the home bucket of `short` into the cache, so that a `find`
    /// soon after does not wait for memory. Issued for a batch of keys
    /// before working on them, the loads overlap instead of queueing.
    pub fn prefetch(&self, short: u32) {
        if !self.table.buckets.is_empty() {
            prefetch_line(&self.table.buckets[self.table.home(short)]);
        }
    }

    /// Adds an entry for a key not in the index.
    pub fn insert(&mut self, short: u32, pos: usize) {
        let resizing = self.old.is_some() || self.preparing.is_some();
        let full = self.table.buckets.len() / FULL_DEN * FULL_NUM;
        if resizing && self.len() + 1 > full {
            self.finish_resize();
        }
        if self.old.is_none() && self.preparing.is_none() && self.len() + 1 > self.table.capacity()
        {
            let buckets = (self.table.buckets.len() / GROW_DEN * GROW_NUM).max(MIN_BUCKETS);
            self.start_resize(buckets);
        }
        self.table.place(pack(short, pos));
        self.step();
    }

    /// Points the entry at `found` (from [`find`](Self::find)) at `pos`.
    /// Requires: no insert or removal since that `find`.
    pub fn set_position(&mut self, found: Found, pos: usize) {
        let table = self.table_of(found);
        let bucket = &mut table.buckets[found.bucket];
        *bucket = pack(short_of(*bucket), pos);
    }

    /// Removes the entry at `found` (from [`find`](Self::find)).
    /// Requires: no insert or removal since that `find`.
    pub fn remove(&mut self, found: Found) {
        if found.in_old {
            let table = self.table_of(found);
            table.buckets[found.bucket] = TOMBSTONE;
            table.len -= 1;
        } else {
            self.table.remove_shifting(found.bucket);
        }
        if self.old.is_none() && self.preparing.is_none() && self.table.buckets.len() > MIN_BUCKETS
        {
            let len = self.table.len;
            if len <= self.table.buckets.len() / 4 {
                self.start_resize((len * 2).max(MIN_BUCKETS));
            }
        }
        self.step();
    }

    fn table_of(&mut self, found: Found) -> &mut Table {
        match (&mut self.old, found.in_old) {
            (Some(moving), true) => &mut moving.table,
            _ => &mut self.table,
        }
    }

    /// Moves every entry into a new table of `buckets` buckets, a few at a
    /// time from here on ([`step`](Self::step)), after zeroing the new
    /// table the same way; small tables at once.
    fn start_resize(&mut self, buckets: usize) {
        debug_assert!(self.old.is_none() && self.preparing.is_none());
        assert!(buckets <= 1 << 32, "at most 2^32 buckets");
        if buckets <= MIN_BUCKETS * 4 {
            self.begin_moving(vec![EMPTY; buckets]);
            self.finish_resize();
        } else {
            self.preparing = Some((Vec::with_capacity(buckets), buckets));
        }
    }

    /// Zeroes up to `n` more buckets of the next table; once it is whole,
    /// the move begins.
    fn prepare(&mut self, n: usize) {
        let Some((next, wanted)) = self.preparing.as_mut() else {
            return;
        };
        let len = (next.len() + n).min(*wanted);
        next.resize(len, EMPTY);
        if len == *wanted {
            let (next, _) = self.preparing.take().expect("checked above");
            self.begin_moving(next);
        }
    }

    /// Makes `buckets` (all empty) the table and the current one the table
    /// being moved out of.
    fn begin_moving(&mut self, buckets: Vec<u64>) {
        let old = std::mem::replace(&mut self.table, Table { buckets, len: 0 });
        if old.len == 0 {
            return;
        }
        // Start at an empty bucket: no run crosses it. One exists since the
        // table is never full.
        let start = old
            .buckets
            .iter()
            .position(|&b| b == EMPTY)
            .expect("a table is never full");
        self.old = Some(Moving {
            table: old,
            start,
            cursor: start,
            moved: 0,
        });
    }

    /// One step of a resize under way: zeroes [`PREPARE_STEP`] buckets of
    /// the next table, or moves [`STEP`] buckets into it.
    pub fn step(&mut self) {
        self.step_many(STEP);
    }

    /// Moves up to `n` buckets, or zeroes `n` (at least [`PREPARE_STEP`])
    /// while preparing: for lulls with no inserts or removals.
    pub fn step_many(&mut self, n: usize) {
        if self.preparing.is_some() {
            self.prepare(n.max(PREPARE_STEP));
        } else {
            self.move_buckets(n);
        }
    }

    fn finish_resize(&mut self) {
        self.prepare(usize::MAX);
        self.move_buckets(usize::MAX);
    }

    fn move_buckets(&mut self, mut n: usize) {
        let Some(moving) = self.old.as_mut() else {
            return;
        };
        while n > 0 && moving.table.len > 0 {
            let bucket = std::mem::replace(&mut moving.table.buckets[moving.cursor], EMPTY);
            if bucket != EMPTY && bucket != TOMBSTONE {
                moving.table.len -= 1;
                self.table.place(bucket);
            }
            moving.cursor = moving.table.next(moving.cursor);
            moving.moved += 1;
            n -= 1;
        }
        if moving.table.len == 0 {
            if let Some(done) = self.old.take() {
                crate::store::lazyfree::free_buffer(done.table.buckets);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// Short hashes from tiny ranges so that runs collide and wrap around
    /// the end of the table, and from the whole range.
    fn short() -> impl Strategy<Value = u32> {
        prop_oneof![0u32..4, (u32::MAX - 3)..=u32::MAX, 60u32..64, any::<u32>()]
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u32),
        Remove(usize),
        Move(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => short().prop_map(Op::Insert),
            2 => any::<usize>().prop_map(Op::Remove),
            1 => any::<usize>().prop_map(Op::Move),
        ]
    }

    proptest! {
        /// Against a model map of position -> short hash, through growth,
        /// shrinking and resizes caught half way: every entry is found by
        /// its hash and position, and nothing else is.
        #[test]
        fn the_index_matches_a_model(ops in proptest::collection::vec(op(), 1..3000)) {
            let mut index = Index::default();
            let mut model: HashMap<usize, u32> = HashMap::new();
            let mut next_pos = 0;
            for op in ops {
                match op {
                    Op::Insert(short) => {
                        index.insert(short, next_pos);
                        model.insert(next_pos, short);
                        next_pos += 1;
                    }
                    Op::Remove(n) if !model.is_empty() => {
                        let pos = *model.keys().nth(n % model.len()).unwrap();
                        let short = model.remove(&pos).unwrap();
                        let (found, at) = index.find(short, |p| p == pos).unwrap();
                        prop_assert_eq!(at, pos);
                        index.remove(found);
                    }
                    Op::Move(n) if !model.is_empty() => {
                        let pos = *model.keys().nth(n % model.len()).unwrap();
                        let short = model.remove(&pos).unwrap();
                        let (found, _) = index.find(short, |p| p == pos).unwrap();
                        index.set_position(found, next_pos);
                        model.insert(next_pos, short);
                        next_pos += 1;
                    }
                    _ => {}
                }
                prop_assert_eq!(index.len(), model.len());
            }
            for (&pos, &short) in &model {
                prop_assert_eq!(index.find(short, |p| p == pos).map(|f| f.1), Some(pos));
            }
            for short in [0, 1, 2, 3, 61, u32::MAX] {
                prop_assert!(index.find(short, |p| !model.contains_key(&p)).is_none());
            }
            // Empty it, through the shrinking resizes, checking as it goes.
            let mut left: Vec<(usize, u32)> = model.into_iter().collect();
            while let Some((pos, short)) = left.pop() {
                let (found, _) = index.find(short, |p| p == pos).unwrap();
                index.remove(found);
                if left.len().is_multiple_of(16) {
                    for &(pos, short) in &left {
                        prop_assert_eq!(index.find(short, |p| p == pos).map(|f| f.1), Some(pos));
                    }
                }
            }
            prop_assert!(index.is_empty());
            prop_assert!(index.heap_size() <= 8 * 2 * MIN_BUCKETS);
        }
    }

    #[test]
    fn prefetching_reads_nothing_and_changes_nothing() {
        let mut index = Index::default();
        // An empty index has no bucket to load.
        index.prefetch(7);
        for pos in 0..1000 {
            index.insert(pos as u32 * 7919, pos);
        }
        for short in (0..2000).map(|i| i as u32 * 7919) {
            index.prefetch(short);
            let found = index
                .find(short, |p| p as u32 * 7919 == short)
                .map(|(_, p)| p);
            assert_eq!(
                found,
                (short / 7919 < 1000).then_some((short / 7919) as usize)
            );
        }
        assert_eq!(index.len(), 1000);
    }

    /// The sizes a table goes through as it grows from empty.
    fn growth() -> impl Iterator<Item = usize> {
        std::iter::successors(Some(MIN_BUCKETS), |&n| Some(n / GROW_DEN * GROW_NUM))
    }

    #[test]
    fn a_big_table_resizes_a_step_at_a_time_and_shrinks_when_a_quarter_full() {
        let short = |pos: usize| (pos as u32).wrapping_mul(2_654_435_761);
        let mut index = Index::default();
        // Just past a size's 3/4 (the first past 100k entries), so that the
        // last insert finds the growth to the next size under way.
        let before = growth().find(|&b| b / 4 * 3 >= 100_000).unwrap();
        let last = before / GROW_DEN * GROW_NUM;
        let n = before / 4 * 3 + 1000;
        for pos in 0..n {
            index.insert(short(pos), pos);
            assert!(index.heap_size() <= 8 * (last + before + 1), "{pos}");
        }
        assert!(index.resizing(), "still moving at the last insert");
        while index.resizing() {
            index.step();
        }
        assert_eq!(index.heap_size(), 8 * last);
        // Remove down to a quarter: the table starts to shrink.
        let mut pos = n;
        let remove = |pos: usize, index: &mut Index| {
            let (found, _) = index.find(short(pos), |p| p == pos).unwrap();
            index.remove(found);
        };
        while pos > last / 4 {
            pos -= 1;
            remove(pos, &mut index);
        }
        assert!(index.resizing(), "shrinking began");
        let shrunk = pos * 2;
        while pos > last / 4 - 5000 {
            pos -= 1;
            remove(pos, &mut index);
        }
        assert!(
            !index.resizing(),
            "the old table was moved in steps and freed"
        );
        assert_eq!(index.heap_size(), 8 * shrunk, "back to half full");
        for p in (0..pos).step_by(97) {
            assert_eq!(index.find(short(p), |q| q == p).map(|f| f.1), Some(p));
        }
    }

    #[test]
    fn tables_of_any_size_wrap_around() {
        // Odd sizes: homes at the very end run over into bucket 0, and
        // removals shift entries back across the end.
        for size in [64, 97, 1000, 4097] {
            let mut table = Table {
                buckets: vec![EMPTY; size],
                len: 0,
            };
            let top = u32::MAX;
            for pos in 0..20 {
                table.place(pack(top - pos as u32 % 3, pos));
            }
            assert_eq!(table.home(top), size - 1);
            for pos in (0..20).step_by(3) {
                let at = table.find_from(size - 1, top - pos as u32 % 3, &mut |p| p == pos);
                table.remove_shifting(at.unwrap());
            }
            for pos in (0..20).filter(|p| p % 3 != 0) {
                let short = top - pos as u32 % 3;
                let from = table.home(short);
                assert!(table.find_from(from, short, &mut |p| p == pos).is_some());
            }
            assert_eq!(table.len, 20 - 7);
        }
    }
}
