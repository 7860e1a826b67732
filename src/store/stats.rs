//! Counters the expiry machinery moves, summed across shards for INFO.

use hdrhistogram::Histogram;

use super::notify::{Notifier, EXPIRED, HASH, NEW};
use super::propagate::Log;

/// Expiry accounting for one shard.
pub struct ExpiryStats {
    /// Keys removed because their deadline passed (lazy or active): `expired_keys`.
    pub expired_keys: u64,
    /// Hash fields removed because their deadline passed, or was set in the
    /// past (Redis 7.4's `expired_subkeys`).
    pub expired_subkeys: u64,
    /// Running estimate of the share of sampled volatile keys found expired
    /// (Redis's `expired_stale_perc`, 0..100).
    pub stale_perc: f64,
    /// Cycles stopped by their time budget: `expired_time_cap_reached_count`.
    pub time_cap_reached: u64,
    /// CPU time spent in active expiry, microseconds.
    pub cycle_cpu_us: u64,
    /// Slices of active expiry run, and the longest one (microseconds).
    pub slices: u64,
    pub slice_max_us: u64,
    /// How late keys were removed: deadline to removal, milliseconds.
    pub lag_ms: Histogram<u64>,
    /// Keys evicted over `maxmemory` (`store::evict`): `evicted_keys`.
    pub evicted_keys: u64,
    /// Reads that found / missed their key (`keyspace_hits` / `keyspace_misses`).
    pub hits: u64,
    pub misses: u64,
    /// Keyspace events not yet published; every removal by expiry passes
    /// here, which is why the buffer lives beside the expiry counters.
    pub notify: Notifier,
    /// Records for the propagation feed not yet handed to it (expiry's
    /// deletions among them, for the same reason).
    pub propagate: Log,
    /// CLIENT PAUSE is in force: an expired key reads as missing but is
    /// not removed (nor its expired hash fields), as in Redis 7, so the
    /// paused server changes nothing by itself. Set by the shard loop.
    pub expiry_paused: bool,
    /// On a writable replica: keys its own clients gave a TTL, which it
    /// expires itself (Redis's `slaveKeysWithExpire`); the master's keys
    /// wait for the master's DEL.
    pub local_volatile: std::collections::HashSet<(usize, bytes::Bytes)>,
    /// Requests per key lately, stored or not, and the keys written last,
    /// while `allkeys-tinylfu` evicts by them (`store::tinylfu`): counted
    /// at every lookup, as the hits and misses above are.
    pub tinylfu: super::tinylfu::TinyLfu,
}

impl Default for ExpiryStats {
    fn default() -> Self {
        ExpiryStats {
            expired_keys: 0,
            expired_subkeys: 0,
            stale_perc: 0.0,
            time_cap_reached: 0,
            cycle_cpu_us: 0,
            slices: 0,
            slice_max_us: 0,
            // One hour at 2 significant digits; later removals saturate.
            lag_ms: Histogram::new_with_bounds(1, 3_600_000, 2).expect("static bounds"),
            evicted_keys: 0,
            hits: 0,
            misses: 0,
            notify: Notifier::default(),
            propagate: Log::default(),
            expiry_paused: false,
            local_volatile: Default::default(),
            tinylfu: Default::default(),
        }
    }
}

impl ExpiryStats {
    /// Records `key` of database `db` removed at `now_ms` because its
    /// deadline `deadline_ms` passed, fires its `expired` event and records
    /// its deletion for the feed.
    pub fn record_expired(&mut self, db: usize, key: &[u8], deadline_ms: u64, now_ms: u64) {
        self.notify.notify_expired(EXPIRED, "expired", db, key);
        self.propagate
            .expired(db, key, crate::store::lazyfree::expire());
        self.expired_keys += 1;
        let lag = now_ms.saturating_sub(deadline_ms).max(1);
        self.lag_ms.saturating_record(lag);
    }

    /// Records `n` expired fields removed from the hash `key` of database
    /// `db`, and fires its `hexpired` event (one per hash, as Redis). The
    /// fields' names go to the feed apart (`Log::fields_expired`): they are
    /// only gathered while something records.
    pub fn record_expired_fields(&mut self, db: usize, key: &[u8], n: usize) {
        self.notify.notify_expired(HASH, "hexpired", db, key);
        self.expired_subkeys += n as u64;
    }

    /// Adds `other` into `self` (INFO sums shards).
    pub fn merge(&mut self, other: &ExpiryStats) {
        self.expired_keys += other.expired_keys;
        self.expired_subkeys += other.expired_subkeys;
        self.stale_perc = self.stale_perc.max(other.stale_perc);
        self.time_cap_reached += other.time_cap_reached;
        self.cycle_cpu_us += other.cycle_cpu_us;
        self.slices += other.slices;
        self.slice_max_us = self.slice_max_us.max(other.slice_max_us);
        let _ = self.lag_ms.add(&other.lag_ms);
        self.evicted_keys += other.evicted_keys;
        self.hits += other.hits;
        self.misses += other.misses;
    }

    /// Fires the `new` event for a key just created.
    pub fn record_new(&mut self, db: usize, key: &[u8]) {
        self.notify.notify(NEW, "new", db, key);
    }

    /// Zeroes the counters (CONFIG RESETSTAT), keeping the notification
    /// settings and the feed's log.
    pub fn reset(&mut self) {
        let notify = std::mem::take(&mut self.notify);
        let propagate = std::mem::take(&mut self.propagate);
        let local_volatile = std::mem::take(&mut self.local_volatile);
        *self = ExpiryStats {
            notify,
            propagate,
            local_volatile,
            ..ExpiryStats::default()
        };
    }
}

impl Clone for ExpiryStats {
    fn clone(&self) -> Self {
        let mut copy = ExpiryStats::default();
        copy.merge(self);
        copy.stale_perc = self.stale_perc;
        copy
    }
}
