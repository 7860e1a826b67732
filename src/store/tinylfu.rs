//! The state of the `allkeys-tinylfu` policy, after W-TinyLFU (Einziger,
//! Friedman and Manes, "TinyLFU: A Highly Efficient Cache Admission
//! Policy", 2017; Caffeine's policy): a frequency sketch of how often each
//! key was asked for lately, stored or not, and an admission window of the
//! keys written last.
//!
//! Redis's LFU keeps a counter in each key, so a key evicted and then asked
//! for again starts from nothing, and a new key starts protected: a burst
//! of once-read keys (a scan, a crawler, the long tail of a Zipfian
//! workload) each takes room until sampling happens upon it. Here:
//!
//! - [`Sketch`] counts requests by key hash whether the key is stored or
//!   not, misses included: a popular key comes back with its history, and a
//!   once-read key stays at 1 or 2 however recent it is.
//! - [`TinyLfu::window`] holds the keys written last (about 1% of the
//!   shard's keys). When the shard must evict and the window is over its
//!   size, its oldest key is the candidate: it stays only if it was asked
//!   for more often than the victim the sampled pool offers, else it goes
//!   itself. So a key gets the window's time to be asked for again, and a
//!   once-read key leaves before it displaces a popular one.
//!
//! # The sketch
//!
//! A count-min sketch of 4-bit counters, sixteen to a `u64` word, in blocks
//! of eight words (64 bytes, one cache line, as Caffeine lays its sketch
//! out). A key's hash picks one block and, in it, four counters in four
//! different words: recording or reading a key touches one cache line. The
//! estimate is the least of the four; an increment raises only the counters
//! at that least value (conservative update), which keeps collisions from
//! inflating counts.
//!
//! After [`RESET_PER_KEY`] increments per key the sketch is sized for,
//! every counter is halved, so what was popular an hour ago gives way to
//! what is popular now (the paper's reset). The sketch grows with the
//! shard's keys: twice as many blocks, each old counter copied to both of
//! its new places, so estimates stay as they were.
//!
//! Memory: one word per [`KEYS_PER_WORD`] keys (4 to 8 bytes a key) and the
//! window's copies of 1% of the keys' names, built on the first request
//! under the policy, freed when the policy changes ([`TinyLfu::clear`]).

use std::collections::VecDeque;

use ahash::RandomState;

/// Keys per sketch word when sized: each key reads 4 of the word's 16
/// counters' worth of room, so about 8 counters a key.
const KEYS_PER_WORD: usize = 2;

/// The smallest sketch: 64 blocks (4 KiB).
const MIN_BLOCKS: usize = 64;

/// Increments per key of the sketch's size between two halvings (the
/// paper's sample size W = 10 × the cache's capacity).
const RESET_PER_KEY: usize = 10;

/// Words per block (one 64-byte cache line).
const BLOCK_WORDS: usize = 8;

/// The highest count a 4-bit counter holds.
const MAX_COUNT: u64 = 15;

/// The window's share of the shard's keys (Caffeine's default, 1%).
const WINDOW_PER_KEYS: usize = 100;

/// See the module docs.
#[derive(Default)]
pub struct TinyLfu {
    pub sketch: Sketch,
    /// (database, key) of the keys written last, oldest first; a key
    /// deleted or evicted since is dropped when it comes up.
    window: VecDeque<(usize, bytes::Bytes)>,
}

impl TinyLfu {
    /// Notes a request for `key` of `db`, the shard holding `keys` keys.
    pub fn record(&mut self, db: usize, key: &[u8], keys: usize) {
        self.sketch.record(db, key, keys);
    }

    /// A key of `db` just created by a write, the shard holding `keys`
    /// keys: it enters the window. A window twice its size (no eviction
    /// for a while) lets its oldest pass without a contest.
    pub fn created(&mut self, db: usize, key: &[u8], keys: usize) {
        self.window
            .push_back((db, bytes::Bytes::copy_from_slice(key)));
        if self.window.len() > 2 * window_size(keys) {
            self.window.pop_front();
        }
    }

    /// The window's oldest key if the window is over its size for `keys`
    /// keys: the candidate of the next eviction (see the module docs).
    pub fn candidate(&mut self, keys: usize) -> Option<(usize, bytes::Bytes)> {
        if self.window.len() > window_size(keys) {
            self.window.pop_front()
        } else {
            None
        }
    }

    /// Frees the sketch and the window (the policy changed away).
    pub fn clear(&mut self) {
        self.sketch.clear();
        self.window = VecDeque::new();
    }
}

fn window_size(keys: usize) -> usize {
    (keys / WINDOW_PER_KEYS).max(1)
}

/// The frequency sketch (see the module docs).
#[derive(Default)]
pub struct Sketch {
    /// `blocks * BLOCK_WORDS` words; empty until first used.
    words: Vec<u64>,
    /// Increments since the last halving.
    additions: usize,
    hasher: RandomState,
}

impl Sketch {
    /// The keys this sketch is sized for.
    fn capacity(&self) -> usize {
        self.words.len() * KEYS_PER_WORD
    }

    /// Grows the sketch to cover `keys` keys (never shrinks: a shard
    /// emptied by eviction refills).
    fn fit(&mut self, keys: usize) {
        if self.words.is_empty() {
            let blocks = (keys / (KEYS_PER_WORD * BLOCK_WORDS))
                .next_power_of_two()
                .max(MIN_BLOCKS);
            self.words = vec![0; blocks * BLOCK_WORDS];
            return;
        }
        while keys > self.capacity() {
            // A block's index is the hash's top bits masked to the block
            // count, so doubling adds one bit: block b splits into b and
            // b + old, and both get b's counters.
            self.words.extend_from_within(..);
        }
    }

    /// The four counters of `hash`: (word index, bit shift).
    fn counters(&self, hash: u64) -> [(usize, u32); 4] {
        let blocks = self.words.len() / BLOCK_WORDS;
        let block = ((hash >> 32) as usize & (blocks - 1)) * BLOCK_WORDS;
        std::array::from_fn(|i| {
            let bits = (hash >> (i * 8)) as u32;
            // Counter i lives in word 2i or 2i + 1 of the block, so the
            // four are in four different words.
            let word = block + 2 * i + (bits & 1) as usize;
            let nibble = (bits >> 1) & 15;
            (word, nibble * 4)
        })
    }

    fn hash(&self, db: usize, key: &[u8]) -> u64 {
        self.hasher.hash_one((db, key))
    }

    /// Counts one request for `key` of database `db`, the shard holding
    /// `keys` keys.
    pub fn record(&mut self, db: usize, key: &[u8], keys: usize) {
        self.fit(keys);
        let at = self.counters(self.hash(db, key));
        let least = at
            .iter()
            .map(|&(w, shift)| (self.words[w] >> shift) & MAX_COUNT)
            .min()
            .unwrap_or(MAX_COUNT);
        if least == MAX_COUNT {
            return;
        }
        for (w, shift) in at {
            if (self.words[w] >> shift) & MAX_COUNT == least {
                self.words[w] += 1 << shift;
            }
        }
        self.additions += 1;
        if self.additions >= self.capacity() * RESET_PER_KEY {
            self.halve();
        }
    }

    /// About how many requests `key` of `db` had lately (0..=15).
    pub fn estimate(&self, db: usize, key: &[u8]) -> u8 {
        if self.words.is_empty() {
            return 0;
        }
        self.counters(self.hash(db, key))
            .iter()
            .map(|&(w, shift)| (self.words[w] >> shift) & MAX_COUNT)
            .min()
            .unwrap_or(0) as u8
    }

    /// Halves every counter (the reset that ages the counts).
    fn halve(&mut self) {
        for word in &mut self.words {
            // Shifting the whole word moves each counter's low bit into its
            // neighbour's high bit; the mask drops those.
            *word = (*word >> 1) & 0x7777_7777_7777_7777;
        }
        self.additions /= 2;
    }

    /// Frees the sketch.
    pub fn clear(&mut self) {
        self.words = Vec::new();
        self.additions = 0;
    }

    /// Bytes the sketch holds.
    pub fn bytes(&self) -> usize {
        self.words.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_requests_up_to_fifteen() {
        let mut s = Sketch::default();
        assert_eq!(s.estimate(0, b"k"), 0);
        for n in 1..=20u8 {
            s.record(0, b"k", 100);
            assert_eq!(s.estimate(0, b"k"), n.min(15));
        }
        assert_eq!(s.estimate(1, b"k"), 0, "databases are apart");
        assert_eq!(s.bytes(), MIN_BLOCKS * BLOCK_WORDS * 8);
    }

    #[test]
    fn frequent_keys_stand_out_of_many_once_read_ones() {
        let keys = 100_000;
        let mut s = Sketch::default();
        for round in 0..8 {
            for hot in 0..1_000u32 {
                s.record(0, &hot.to_be_bytes(), keys);
            }
            for cold in 0..keys as u32 / 8 {
                let cold = 1_000_000 + round * keys as u32 + cold;
                s.record(0, &cold.to_be_bytes(), keys);
            }
        }
        let hot_low = (0..1_000u32)
            .filter(|k| s.estimate(0, &k.to_be_bytes()) < 8)
            .count();
        assert_eq!(hot_low, 0, "every hot key reads at least 8");
        let cold_high = (0..10_000u32)
            .filter(|k| s.estimate(0, &(1_000_000 + k).to_be_bytes()) > 3)
            .count();
        assert!(cold_high < 100, "{cold_high} of 10k once-read keys over 3");
    }

    #[test]
    fn halving_ages_every_counter_and_growth_keeps_them() {
        let mut s = Sketch::default();
        for _ in 0..12 {
            s.record(0, b"a", 10);
        }
        s.halve();
        assert_eq!(s.estimate(0, b"a"), 6);
        let before = s.words.len();
        s.fit(before * KEYS_PER_WORD * 4);
        assert_eq!(s.words.len(), before * 4);
        assert_eq!(s.estimate(0, b"a"), 6, "growth keeps the counts");
        s.clear();
        assert_eq!((s.estimate(0, b"a"), s.bytes()), (0, 0));
    }

    #[test]
    fn resets_come_after_ten_increments_per_key() {
        let mut s = Sketch::default();
        s.record(0, b"x", 1);
        let period = s.capacity() * RESET_PER_KEY;
        for i in 0..period as u64 {
            s.record(0, &i.to_le_bytes(), 1);
        }
        assert!(s.additions < period / 2 + 16, "halved: {}", s.additions);
    }
}
