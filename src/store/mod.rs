//! Per-shard keyspace: databases, values, deadlines, the active expiry sweep,
//! and the keys blocked clients wait on (`ready`).
//!
//! A database (`db`) is one table (`dict`) of slots holding a key (`key`:
//! inline up to 22 bytes) and its value (`string`: short strings inline),
//! found through a hash index (`index`) and listed, when volatile, with its
//! deadline in a dense array the sweep samples from; deadline windows (`buckets`) hand the sweep the keys whose
//! time has come. The sweep itself is `expire`. `rdb` is Redis's
//! serialization of one value (DUMP/RESTORE and snapshots); `snapshot` the
//! cursor that writes a table in slices as it was when BGSAVE began.
//! `stream` holds streams and their consumer groups.
//!
//! What the store changes without a command's doing (expired keys and
//! hash fields, evictions later) it records for the propagation feed
//! (`propagate`).
//!
//! A shard owns one [`Store`]; nothing here is shared between threads.

pub mod access;
pub mod buckets;
pub mod db;
pub mod dict;
pub mod encoding;
pub mod evict;
pub mod expire;
pub mod hash;
pub mod hll;
pub mod index;
pub mod key;
pub mod lazyfree;
pub mod list;
pub mod listpack;
pub mod notify;
pub mod propagate;
pub mod rdb;
pub mod ready;
pub mod snapshot;
pub mod stats;
pub mod stream;
pub mod string;
pub mod tinylfu;
pub mod tracking;
pub mod value;
pub mod watch;
pub mod zset;

pub use db::{Db, Entry, Expiry, Keyspace};
pub use expire::{ActiveExpire, ExpireParams, SliceOutcome};
pub use stats::ExpiryStats;
pub use value::{Str, StrForm, Value};

/// Index buckets a timer tick moves per database while it resizes: 16Ki
/// buckets (128 KiB) cost a few hundred microseconds at most.
const TIDY_BUCKETS: usize = 16 * 1024;

/// Every database of one shard plus its expiry accounting.
pub struct Store {
    pub dbs: Vec<Db>,
    pub stats: ExpiryStats,
    /// The eviction pool and counters (`evict`).
    pub evictor: evict::Evictor,
    /// A background snapshot runs (`store::snapshot`), started when the
    /// change counter stood at this.
    pub snapshot_changes: Option<u64>,
    /// The running (or last) snapshot's progress, for INFO.
    pub snapshot_progress: SnapshotProgress,
}

/// How far a shard's background snapshot is (INFO's
/// `current_save_keys_processed`, `current_save_keys_total`,
/// `current_cow_size`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotProgress {
    /// Keys in the tables when it started.
    pub total: u64,
    /// Slots the cursors have visited.
    pub processed: u64,
    /// Bytes written early, before a write changed the key
    /// (`snapshot::Cursor::copied`), of the tables already handed over.
    pub copied: u64,
}

/// A shard's finished snapshot: each database's part, by the number it
/// had at the start.
pub struct ShardSnapshot {
    pub changes: u64,
    pub parts: Vec<(usize, snapshot::DbPart, u16)>,
    /// Bytes its tables wrote early (`SnapshotProgress::copied`).
    pub copied: u64,
}

impl Store {
    /// A writable replica expires the keys its own clients gave a TTL
    /// (Redis's `expireSlaveKeys`); returns how many it removed.
    pub fn expire_local(&mut self, now_ms: u64) -> usize {
        let tracked = std::mem::take(&mut self.stats.local_volatile);
        let mut removed = 0;
        for (db, key) in tracked {
            let Some(table) = self.dbs.get_mut(db) else {
                continue;
            };
            match table.expire_at(&key) {
                Some(at) if now_ms > at => {
                    table.remove_raw(&key);
                    self.stats.record_expired(db, &key, at, now_ms);
                    removed += 1;
                }
                Some(_) => {
                    self.stats.local_volatile.insert((db, key));
                }
                None => {}
            }
        }
        removed
    }

    pub fn new(databases: usize) -> Store {
        Store {
            dbs: (0..databases).map(|_| Db::default()).collect(),
            stats: ExpiryStats::default(),
            snapshot_changes: None,
            snapshot_progress: SnapshotProgress::default(),
            evictor: evict::Evictor::default(),
        }
    }

    /// Starts a background snapshot of every database as of `now_ms`.
    pub fn begin_snapshot(&mut self, now_ms: u64, compress: bool) {
        for (i, db) in self.dbs.iter_mut().enumerate() {
            db.begin_snapshot(i, now_ms, compress);
        }
        self.snapshot_changes = Some(self.stats.notify.dirty);
        self.snapshot_progress = SnapshotProgress {
            total: self.dbs.iter().map(|db| db.len() as u64).sum(),
            ..SnapshotProgress::default()
        };
    }

    /// The snapshot's progress, the early writes of the tables still being
    /// walked included.
    pub fn snapshot_progress(&self) -> SnapshotProgress {
        let mut p = self.snapshot_progress;
        p.copied += self
            .dbs
            .iter()
            .filter_map(|db| db.snapshot())
            .map(|c| c.copied)
            .sum::<u64>();
        p
    }

    /// Drops a running snapshot (FLUSHALL aborts a background save);
    /// whether one was running.
    pub fn abort_snapshot(&mut self) -> bool {
        if self.snapshot_changes.take().is_none() {
            return false;
        }
        for db in &mut self.dbs {
            drop(db.take_snapshot());
        }
        true
    }

    pub fn snapshot_running(&self) -> bool {
        self.snapshot_changes.is_some()
    }

    /// One slice of the snapshot: up to `max` keys visited; returns the
    /// shard's parts once every database is written.
    pub fn snapshot_slice(&mut self, max: usize) -> Option<ShardSnapshot> {
        let changes = self.snapshot_changes?;
        let mut left = max;
        for db in &mut self.dbs {
            if left == 0 {
                break;
            }
            left -= db.snapshot_step(left);
        }
        self.snapshot_progress.processed += (max - left) as u64;
        let done = self
            .dbs
            .iter()
            .all(|db| db.snapshot().is_none_or(|s| s.is_done()));
        if !done {
            return None;
        }
        self.snapshot_changes = None;
        let mut copied = 0;
        let parts = self
            .dbs
            .iter_mut()
            .filter_map(|db| db.take_snapshot())
            .map(|c| {
                copied += c.copied;
                (c.db, c.out, c.version)
            })
            .collect();
        self.snapshot_progress.copied += copied;
        Some(ShardSnapshot {
            changes,
            parts,
            copied: self.snapshot_progress.copied,
        })
    }

    /// The store recording for the propagation feed whose switch is `on`
    /// (`crate::exec::feed::Feed::switch`).
    pub fn feeding(mut self, on: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Store {
        self.stats.propagate = propagate::Log::new(on);
        self
    }

    /// A view of database `db` that expires keys lazily as of `now_ms`.
    pub fn keyspace(&mut self, db: usize, now_ms: u64) -> Keyspace<'_> {
        Keyspace::new(&mut self.dbs[db], &mut self.stats, now_ms).in_db(db)
    }

    /// Empties every database (FLUSHALL, a reload from a file): their
    /// watched keys change for their watchers, the values are freed as
    /// `store::lazyfree` decides.
    pub fn empty_every_db(&mut self) {
        for db in 0..self.dbs.len() {
            self.touch_watched_db(db, None);
        }
        let old: Vec<_> = self.dbs.iter_mut().map(|db| db.clear()).collect();
        let keys = old.iter().map(|db| db.len()).sum();
        lazyfree::free_keys(old, keys);
    }

    /// FLUSHDB/FLUSHALL of `db`, or SWAPDB of `db` with `other`: the watched
    /// keys that exist in either are changed for their watchers.
    pub fn touch_watched_db(&mut self, db: usize, other: Option<usize>) {
        let watches = &mut self.stats.notify.watches;
        if watches.is_empty() {
            return;
        }
        for (mine, theirs) in [(Some(db), other), (other, Some(db))] {
            let Some(mine) = mine else { continue };
            let dbs = &self.dbs;
            watches.touch_db(mine, |k| {
                dbs[mine].peek(k).is_some() || theirs.is_some_and(|t| dbs[t].peek(k).is_some())
            });
        }
    }

    /// When the earliest deadline window of any database ends (unix ms):
    /// the sweep starts a cycle then rather than wait for the next tick.
    pub fn next_window_end_ms(&self) -> Option<u64> {
        self.dbs.iter().filter_map(Db::next_window_end_ms).min()
    }

    /// Timer-tick housekeeping of every database: index resizes move on
    /// by up to `TIDY_BUCKETS` buckets each, so a shard without traffic
    /// still finishes them.
    pub fn tidy(&mut self) {
        for db in &mut self.dbs {
            db.tidy(TIDY_BUCKETS);
        }
    }

    /// Checks the keyspace invariants of every database as of `now_ms`
    /// (see `Db::check_invariants`); the error names the database.
    #[doc(hidden)]
    pub fn check_invariants(&self, now_ms: u64) -> Result<(), String> {
        for (i, db) in self.dbs.iter().enumerate() {
            db.check_invariants(now_ms)
                .map_err(|e| format!("db{i}: {e}"))?;
        }
        Ok(())
    }
}
