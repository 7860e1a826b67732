//! Eviction: which key of a shard goes when the server is over
//! `maxmemory`, and its removal.
//!
//! The choice is Redis's approximated one (`evict.c`):
//!
//! 1. For the LRU, LFU and TTL policies, every database with candidates
//!    gives `maxmemory-samples` random keys (any key, or only keys with a
//!    TTL for the `volatile-*` policies), each scored by how evictable it is
//!    (`access::evict_score`: idle time, 255 minus the LFU counter, or the
//!    nearness of the deadline).
//! 2. The samples enter a pool of [`POOL_SIZE`] candidates kept in score
//!    order across calls, so the best candidates of earlier samples stay in
//!    the running: a sample below the pool's worst is dropped once it is full.
//! 3. The best candidate still present (and not under a transaction's key
//!    lock) is evicted; stale ones are dropped on the way.
//! 4. The random policies take a random key of the next database with
//!    candidates, round robin.
//!
//! `allkeys-tinylfu`, ember's own, samples as LRU does but scores a key by
//! how often it was requested lately, from the shard's frequency sketch
//! (`store::sketch`), which counts misses as well as hits and so remembers
//! keys evicted before; among keys of equal count the longest idle goes.
//!
//! An evicted key is gone as a deleted one is: its deletion is recorded for
//! the propagation feed (DEL, UNLINK under `lazyfree-lazy-eviction`), it
//! fires `evicted` (class `e`) and touches its watchers and waiters, and
//! its value is freed here or on the lazy-free thread; it counts in
//! `ExpiryStats::evicted_keys`.
//!
//! How much to evict, and when, is the shard's business (`exec::evict`);
//! this module knows nothing of memory.

use bytes::Bytes;

use super::access::{evict_score, tinylfu_score};
use super::notify::EVICTED;
use super::{Db, Store};
use crate::config::Policy;

/// Candidates kept between evictions (Redis's `EVPOOL_SIZE`).
pub const POOL_SIZE: usize = 16;

/// Random picks tried per random eviction before giving up (all locked).
const RANDOM_TRIES: usize = 16;

struct Candidate {
    score: u64,
    db: usize,
    key: Bytes,
}

/// One shard's eviction state.
pub struct Evictor {
    /// Ascending by score: the best candidate is last.
    pool: Vec<Candidate>,
    /// xorshift64 state: sampling needs spread, not secrecy.
    rng: u64,
    /// The database the next random eviction starts at.
    next_db: usize,
    /// The policy the pool's scores were taken under.
    scored_by: Option<Policy>,
}

impl Default for Evictor {
    fn default() -> Self {
        Evictor {
            pool: Vec::with_capacity(POOL_SIZE),
            rng: 0x2545_F491_4F6C_DD1D,
            next_db: 0,
            scored_by: None,
        }
    }
}

impl Evictor {
    /// Seeds the sampling (each shard its own).
    pub fn seeded(seed: u64) -> Evictor {
        Evictor {
            rng: seed | 1,
            ..Evictor::default()
        }
    }

    fn next(&mut self, below: usize) -> usize {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        (x % below.max(1) as u64) as usize
    }

    /// Enters one sample into the pool (step 2).
    fn offer(&mut self, score: u64, db: usize, key: &[u8]) {
        let full = self.pool.len() >= POOL_SIZE;
        if full && self.pool.first().is_some_and(|worst| score <= worst.score) {
            return;
        }
        if self.pool.iter().any(|c| c.db == db && c.key == key) {
            return;
        }
        if full {
            self.pool.remove(0);
        }
        let at = self.pool.partition_point(|c| c.score <= score);
        self.pool.insert(
            at,
            Candidate {
                score,
                db,
                key: Bytes::copy_from_slice(key),
            },
        );
    }

    /// Forgets every candidate (a FLUSHALL or SWAPDB made them stale).
    pub fn clear_pool(&mut self) {
        self.pool.clear();
    }
}

/// Whether `db` has keys `policy` may evict.
fn has_candidates(db: &Db, policy: Policy) -> bool {
    if policy.volatile_only() {
        db.volatile_len() > 0
    } else {
        !db.is_empty()
    }
}

impl Store {
    /// Whether any database has keys `policy` may evict.
    pub fn has_evictable(&self, policy: Policy) -> bool {
        policy != Policy::NoEviction && self.dbs.iter().any(|db| has_candidates(db, policy))
    }

    /// Evicts one key by `policy` with `samples` samples per database,
    /// skipping keys for which `locked(db, key)` holds. Returns None when
    /// no key could be evicted, else the bytes it freed: what this
    /// thread's allocation counter shows around the removal alone, with
    /// the bytes handed to the lazy-free thread (an estimate).
    pub fn evict_one(
        &mut self,
        policy: Policy,
        samples: usize,
        now_ms: u64,
        locked: impl Fn(usize, &[u8]) -> bool,
    ) -> Option<usize> {
        if self.evictor.scored_by != Some(policy) {
            // Scores of another policy (an idle time against a counter)
            // must not compete with this one's.
            self.evictor.clear_pool();
            self.evictor.scored_by = Some(policy);
            if policy != Policy::AllkeysTinylfu {
                self.stats.tinylfu.clear();
            }
        }
        let chosen = match policy {
            Policy::NoEviction => None,
            Policy::AllkeysRandom | Policy::VolatileRandom => self.pick_random(policy, &locked),
            Policy::AllkeysTinylfu => self.pick_tinylfu(samples, now_ms, &locked),
            _ => self.pick_from_pool(policy, samples, now_ms, &locked),
        };
        let (db, key) = chosen?;
        Some(self.remove_evicted(db, &key))
    }

    fn pick_random(
        &mut self,
        policy: Policy,
        locked: &impl Fn(usize, &[u8]) -> bool,
    ) -> Option<(usize, Bytes)> {
        let n = self.dbs.len();
        for step in 0..n {
            let i = (self.evictor.next_db + step) % n;
            let db = &self.dbs[i];
            if !has_candidates(db, policy) {
                continue;
            }
            for _ in 0..RANDOM_TRIES {
                let key = if policy.volatile_only() {
                    let nth = self.evictor.next(db.volatile_len());
                    db.volatile_at(nth).0
                } else {
                    let pos = self.evictor.next(db.len());
                    db.at(pos).map(|(k, _, _)| k).unwrap_or_default()
                };
                if !locked(i, key) {
                    self.evictor.next_db = i + 1;
                    return Some((i, Bytes::copy_from_slice(key)));
                }
            }
        }
        None
    }

    fn pick_from_pool(
        &mut self,
        policy: Policy,
        samples: usize,
        now_ms: u64,
        locked: &impl Fn(usize, &[u8]) -> bool,
    ) -> Option<(usize, Bytes)> {
        // A few rounds: a round can find only stale or locked candidates.
        for _ in 0..4 {
            let mut any = false;
            for i in 0..self.dbs.len() {
                if !has_candidates(&self.dbs[i], policy) {
                    continue;
                }
                any = true;
                // As Redis's `dictGetSomeKeys`: no more samples than keys
                // (`maxmemory-samples` goes up to 2^31).
                let db = &self.dbs[i];
                let candidates = if policy.volatile_only() {
                    db.volatile_len()
                } else {
                    db.len()
                };
                for _ in 0..samples.min(candidates) {
                    let db = &self.dbs[i];
                    let (key, entry, deadline) = if policy.volatile_only() {
                        let (key, entry, at) = db.volatile_at(self.evictor.next(db.volatile_len()));
                        (key, entry, Some(at))
                    } else {
                        match db.at(self.evictor.next(db.len())) {
                            Some(found) => found,
                            None => continue,
                        }
                    };
                    let score = if policy == Policy::AllkeysTinylfu {
                        let requests = self.stats.tinylfu.sketch.estimate(i, key);
                        tinylfu_score(requests, entry.access, now_ms)
                    } else {
                        evict_score(policy, entry.access, deadline, now_ms)
                    };
                    let key = key.to_vec();
                    self.evictor.offer(score, i, &key);
                }
            }
            if !any {
                return None;
            }
            while let Some(best) = self.evictor.pool.pop() {
                let present = self.dbs.get(best.db).and_then(|db| db.peek(&best.key));
                let fits = present.is_some_and(|e| !policy.volatile_only() || e.is_volatile());
                if fits && !locked(best.db, &best.key) {
                    return Some((best.db, best.key));
                }
            }
        }
        None
    }

    /// `allkeys-tinylfu`: the sampled pool's victim, unless the admission
    /// window has a candidate asked for no more often than it, which then
    /// goes instead (`store::tinylfu`); the spared victim returns to the
    /// pool.
    fn pick_tinylfu(
        &mut self,
        samples: usize,
        now_ms: u64,
        locked: &impl Fn(usize, &[u8]) -> bool,
    ) -> Option<(usize, Bytes)> {
        let policy = Policy::AllkeysTinylfu;
        let keys: usize = self.dbs.iter().map(Db::len).sum();
        let victim = self.pick_from_pool(policy, samples, now_ms, locked);
        while let Some((db, key)) = self.stats.tinylfu.candidate(keys) {
            if self.dbs.get(db).and_then(|d| d.peek(&key)).is_none() {
                continue; // deleted or evicted since it was written
            }
            let Some((victim_db, victim_key)) = victim.clone() else {
                return (!locked(db, &key)).then_some((db, key));
            };
            if locked(db, &key) || (db, &key) == (victim_db, &victim_key) {
                return Some((victim_db, victim_key));
            }
            let sketch = &self.stats.tinylfu.sketch;
            if sketch.estimate(db, &key) > sketch.estimate(victim_db, &victim_key) {
                return Some((victim_db, victim_key)); // the candidate stays
            }
            if let Some(spared) = self.dbs[victim_db].peek(&victim_key) {
                let requests = sketch.estimate(victim_db, &victim_key);
                let score = tinylfu_score(requests, spared.access, now_ms);
                self.evictor.offer(score, victim_db, &victim_key);
            }
            return Some((db, key));
        }
        victim
    }

    /// Removes an evicted key (see the module docs); returns the bytes
    /// its value holds if it went to the lazy-free thread.
    fn remove_evicted(&mut self, db: usize, key: &[u8]) -> usize {
        let before = crate::util::memory::publish_thread();
        let Some(entry) = self.dbs[db].remove_evicted(key) else {
            return 0;
        };
        let lazy = crate::store::lazyfree::eviction();
        let handed = if lazy && entry.value.frees_slowly() {
            entry.value.heap_size()
        } else {
            0
        };
        crate::store::lazyfree::free_value_if(lazy, entry.value);
        // What the removal freed, measured around it alone, as Redis
        // measures its delete: the eviction's record, event and
        // invalidations allocate a copy of the key each, and counted
        // against it (a 1 KB name, a one-byte value) an eviction freed
        // less than nothing and the shard evicted on to its last key.
        let freed = (before - crate::util::memory::publish_thread()).max(0) as usize + handed;
        self.stats.propagate.evicted(db, key, lazy);
        self.stats
            .notify
            .notify_expired(EVICTED, "evicted", db, key);
        self.stats.evicted_keys += 1;
        freed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Value;

    fn store_with(keys: &[(&str, Option<u64>, u32)]) -> Store {
        let mut store = Store::new(2);
        for &(k, ttl, access) in keys {
            store.dbs[0].insert_raw(
                k.as_bytes(),
                Value::string(Bytes::from_static(b"v")),
                ttl,
                0,
            );
            let mut ks = store.keyspace(0, 0);
            ks.set_access(k.as_bytes(), access);
        }
        store
    }

    fn keys(store: &Store) -> Vec<String> {
        let mut keys: Vec<String> = store.dbs[0]
            .iter()
            .map(|(k, _, _)| String::from_utf8_lossy(k).into_owned())
            .collect();
        keys.sort();
        keys
    }

    #[test]
    fn volatile_policies_never_take_a_key_without_ttl() {
        let mut store = store_with(&[("a", None, 0), ("b", Some(10_000), 0), ("c", None, 0)]);
        for policy in [
            Policy::VolatileLru,
            Policy::VolatileRandom,
            Policy::VolatileTtl,
            Policy::VolatileLfu,
        ] {
            let mut s = store_with(&[("a", None, 0), ("b", Some(10_000), 0), ("c", None, 0)]);
            assert!(
                s.evict_one(policy, 5, 0, |_, _| false).is_some(),
                "{policy:?}"
            );
            assert!(
                s.evict_one(policy, 5, 0, |_, _| false).is_none(),
                "{policy:?}"
            );
            assert_eq!(keys(&s), ["a", "c"]);
            assert_eq!(s.stats.evicted_keys, 1);
        }
        assert!(store
            .evict_one(Policy::NoEviction, 5, 0, |_, _| false)
            .is_none());
        assert!(store.has_evictable(Policy::VolatileTtl));
    }

    #[test]
    fn the_pool_evicts_the_best_scored_key_first() {
        // 3 keys, 5 samples each round: every key is seen, so the choice is exact.
        let now = 100_000;
        let mut s = store_with(&[("old", None, 1), ("mid", None, 50), ("new", None, 99)]);
        assert!(s
            .evict_one(Policy::AllkeysLru, 5, now, |_, _| false)
            .is_some());
        assert_eq!(keys(&s), ["mid", "new"]);
        let mut s = store_with(&[
            ("far", Some(90_000), 0),
            ("near", Some(20_000), 0),
            ("x", None, 0),
        ]);
        assert!(s
            .evict_one(Policy::VolatileTtl, 10, 0, |_, _| false)
            .is_some());
        assert_eq!(keys(&s), ["far", "x"]);
    }

    #[test]
    fn locked_keys_are_skipped() {
        let mut s = store_with(&[("a", None, 0), ("b", None, 0)]);
        assert!(s
            .evict_one(Policy::AllkeysRandom, 5, 0, |_, k| k == b"a")
            .is_some());
        assert_eq!(keys(&s), ["a"]);
        assert!(s
            .evict_one(Policy::AllkeysLru, 5, 0, |_, k| k == b"a")
            .is_none());
    }

    #[test]
    fn tinylfu_keeps_the_often_requested_keys_whatever_their_idle_time() {
        let now = 100_000;
        // The often requested keys are the longest idle: LRU would take
        // them first.
        let names: Vec<String> = (0..200).map(|i| format!("k{i}")).collect();
        let specs: Vec<(&str, Option<u64>, u32)> = names
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), None, if i < 100 { 1 } else { 9_000 }))
            .collect();
        let mut s = store_with(&specs);
        for (i, k) in names.iter().enumerate() {
            for _ in 0..if i < 100 { 6 } else { 1 } {
                s.stats.tinylfu.record(0, k.as_bytes(), names.len());
            }
        }
        for _ in 0..100 {
            assert!(s
                .evict_one(Policy::AllkeysTinylfu, 5, now, |_, _| false)
                .is_some());
        }
        let kept = (0..100)
            .filter(|i| s.dbs[0].peek(format!("k{i}").as_bytes()).is_some())
            .count();
        assert!(kept >= 95, "kept {kept} of the 100 often requested keys");
        assert!(s.stats.tinylfu.sketch.bytes() > 0);
        s.evict_one(Policy::AllkeysLru, 5, now, |_, _| false);
        assert_eq!(
            s.stats.tinylfu.sketch.bytes(),
            0,
            "another policy frees the sketch"
        );
    }
}
