//! The dict's index: key hash to slot position, one cache line per probe.
//!
//! An open-addressing table with linear probing where each bucket is one
//! `u64`: 32 bits of the key's hash beside the slot position. Finding a key
//! reads one run of adjacent buckets (usually one cache line) and then the
//! slot to compare the key. A general-purpose map keeps its control bytes
//! and its entries in separate arrays, so every probe of a large table
//! misses the cache twice; at millions of keys, where every probe misses,
//! that was most of the cost of expiring a key.
//!
//! Because a bucket carries its hash bits, the table grows, shrinks and
//! deletes (backward shift, no tombstones) without hashing a key again.
//!
//! The home bucket of a hash is its upper 32 bits masked to the table size,
//! so a table has at most 2^32 buckets.

/// Most of the table filled before it doubles: 3/4 keeps probe runs short
/// (about 2.5 buckets for a hit, 8.5 for a miss).
const MAX_LOAD_NUM: usize = 3;
const MAX_LOAD_DEN: usize = 4;
const MIN_BUCKETS: usize = 8;

/// An empty bucket.
const EMPTY: u64 = 0;

/// The 32 bits of a 64-bit hash that the index keeps.
pub fn short_hash(hash: u64) -> u32 {
    (hash >> 32) as u32
}

fn pack(short: u32, pos: usize) -> u64 {
    (u64::from(short) << 32) | (pos as u64 + 1)
}

fn short_of(bucket: u64) -> u32 {
    (bucket >> 32) as u32
}

fn pos_of(bucket: u64) -> usize {
    (bucket & u64::from(u32::MAX)) as usize - 1
}

#[derive(Default)]
pub struct Index {
    buckets: Vec<u64>,
    len: usize,
}

impl Index {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Keys the table holds before it grows.
    pub fn capacity(&self) -> usize {
        self.buckets.len() / MAX_LOAD_DEN * MAX_LOAD_NUM
    }

    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    fn home(&self, short: u32) -> usize {
        short as usize & self.mask()
    }

    /// The bucket and position of the first entry with hash bits `short`
    /// whose position satisfies `is_it`.
    pub fn find(&self, short: u32, mut is_it: impl FnMut(usize) -> bool) -> Option<(usize, usize)> {
        if self.is_empty() {
            return None;
        }
        let mask = self.mask();
        let mut at = self.home(short);
        loop {
            let bucket = self.buckets[at];
            if bucket == EMPTY {
                return None;
            }
            if short_of(bucket) == short && is_it(pos_of(bucket)) {
                return Some((at, pos_of(bucket)));
            }
            at = (at + 1) & mask;
        }
    }

    /// Loads the home bucket of `short` into the cache, so that a `find`
    /// soon after does not wait for memory. Issued for a batch of keys
    /// before working on them, the loads overlap instead of queueing.
    pub fn prefetch(&self, short: u32) {
        if !self.is_empty() {
            std::hint::black_box(self.buckets[self.home(short)]);
        }
    }

    /// Adds an entry for a key not in the table.
    pub fn insert(&mut self, short: u32, pos: usize) {
        if self.len + 1 > self.capacity() {
            self.resize((self.buckets.len() * 2).max(MIN_BUCKETS));
        }
        self.place(pack(short, pos));
        self.len += 1;
    }

    fn place(&mut self, bucket: u64) {
        let mask = self.mask();
        let mut at = self.home(short_of(bucket));
        while self.buckets[at] != EMPTY {
            at = (at + 1) & mask;
        }
        self.buckets[at] = bucket;
    }

    /// Points the entry in bucket `at` (from [`find`](Self::find)) at `pos`.
    pub fn set_position(&mut self, at: usize, pos: usize) {
        self.buckets[at] = pack(short_of(self.buckets[at]), pos);
    }

    /// Removes the entry in bucket `at`. The entries after it in its run
    /// move back where their probe allows, so no tombstone is left.
    pub fn remove(&mut self, at: usize) {
        let mask = self.mask();
        let mut hole = at;
        let mut next = at;
        loop {
            next = (next + 1) & mask;
            let bucket = self.buckets[next];
            if bucket == EMPTY {
                break;
            }
            let home = self.home(short_of(bucket));
            // The entry may move into the hole if the hole lies on its probe
            // path: from its home, the hole comes no later than where it is.
            if next.wrapping_sub(home) & mask >= next.wrapping_sub(hole) & mask {
                self.buckets[hole] = bucket;
                hole = next;
            }
        }
        self.buckets[hole] = EMPTY;
        self.len -= 1;
    }

    /// Rebuilds the table with `buckets` buckets (a power of two that holds
    /// every entry). Needs no key: each bucket carries its hash bits.
    fn resize(&mut self, buckets: usize) {
        debug_assert!(
            buckets.is_power_of_two() && buckets / MAX_LOAD_DEN * MAX_LOAD_NUM >= self.len
        );
        assert!(buckets <= 1 << 32, "at most 2^32 buckets");
        let old = std::mem::replace(&mut self.buckets, vec![EMPTY; buckets]);
        for bucket in old.into_iter().filter(|&b| b != EMPTY) {
            self.place(bucket);
        }
    }

    /// Shrinks the table to the smallest size that holds `len` entries at
    /// half load, if that is smaller than it is.
    pub fn shrink(&mut self) {
        let wanted = (self.len * 2).next_power_of_two().max(MIN_BUCKETS);
        if wanted < self.buckets.len() {
            self.resize(wanted);
        }
    }

    /// Heap bytes held (memory accounting, tests).
    #[cfg(test)]
    pub fn heap_size(&self) -> usize {
        self.buckets.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// Short hashes from a tiny range so that runs collide and wrap around.
    fn short() -> impl Strategy<Value = u32> {
        prop_oneof![0u32..4, (u32::MAX - 3)..=u32::MAX, any::<u32>()]
    }

    proptest! {
        /// Against a model map of position -> short hash: every entry is
        /// found by its hash and position after any mix of inserts, moves
        /// and removals, and nothing else is found.
        #[test]
        fn the_index_matches_a_model(ops in proptest::collection::vec((0u8..3, short(), 0usize..64), 1..600)) {
            let mut index = Index::default();
            let mut model: HashMap<usize, u32> = HashMap::new();
            for (op, short, pos) in ops {
                match op {
                    0 if !model.contains_key(&pos) => {
                        index.insert(short, pos);
                        model.insert(pos, short);
                    }
                    1 => {
                        if let Some(short) = model.remove(&pos) {
                            let (at, found) = index.find(short, |p| p == pos).unwrap();
                            prop_assert_eq!(found, pos);
                            index.remove(at);
                        }
                    }
                    _ => {
                        // Move an entry to a free position.
                        let free = (0..64).find(|p| !model.contains_key(p));
                        if let (Some(short), Some(free)) = (model.remove(&pos), free) {
                            let (at, _) = index.find(short, |p| p == pos).unwrap();
                            index.set_position(at, free);
                            model.insert(free, short);
                        }
                    }
                }
                if model.len() < index.capacity() / 8 {
                    index.shrink();
                }
                prop_assert_eq!(index.len(), model.len());
                for (&pos, &short) in &model {
                    prop_assert_eq!(index.find(short, |p| p == pos).map(|f| f.1), Some(pos));
                }
                for pos in (0..64).filter(|p| !model.contains_key(p)) {
                    prop_assert!(index.find(short, |p| p == pos).is_none());
                }
            }
        }
    }

    #[test]
    fn the_table_grows_at_three_quarters_and_shrinks_on_request() {
        let mut index = Index::default();
        for pos in 0..6 {
            index.insert(pos as u32 * 7, pos);
        }
        assert_eq!(index.heap_size(), 8 * 8);
        index.insert(99, 6);
        assert_eq!(
            index.heap_size(),
            16 * 8,
            "7 entries do not fit 8 buckets at 3/4"
        );
        for pos in 1..7 {
            let short = if pos == 6 { 99 } else { pos as u32 * 7 };
            let (at, _) = index.find(short, |p| p == pos).unwrap();
            index.remove(at);
        }
        index.shrink();
        assert_eq!(index.heap_size(), MIN_BUCKETS * 8);
        assert_eq!(index.find(0, |p| p == 0), Some((0, 0)));
    }
}
