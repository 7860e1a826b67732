//! One database of one shard: the key table with its deadlines (`dict`),
//! the deadline windows the sweep drains, and the index of hashes with field
//! deadlines (Redis 7.4's HEXPIRE).
//!
//! The table gives O(1) random picks of any key (RANDOMKEY) and of volatile
//! keys (the sweep), and O(1) removal. SCAN walks the table's positions from
//! the top down: a removal only ever moves the last entry (already visited)
//! into the hole, and inserts append at the end (also visited), so a key
//! present for the whole scan is never skipped.

use bytes::Bytes;
use rand_core::RngCore;

use super::buckets::{window, window_ended, DeadlineBuckets};
use super::dict::Dict;
pub use super::dict::{Entry, Removed};
use super::hash::Hash;
use super::key::Key;
use super::notify::GENERIC;
use super::{ExpiryStats, Value};

/// What the sweep found at a volatile key it sampled.
pub enum Sampled {
    /// Its deadline had passed: it was removed.
    Expired(Key, u64),
    /// Its deadline had passed but its deadline window has not ended: left
    /// for the window's drain (see [`Db::sample_volatile`]).
    Pending,
    /// Still live, with this deadline.
    Live(u64),
}

impl Entry {
    /// Whether the value is a hash with a field deadline before `now_ms`
    /// (cheap: one comparison for hashes, nothing for other types).
    fn hash_fields_due(&self, now_ms: u64) -> bool {
        matches!(&self.value, Value::Hash(h) if h.may_have_expired(now_ms))
    }
}

#[derive(Default)]
pub struct Db {
    dict: Dict,
    /// Volatile keys by deadline window, for the sweep (see `buckets`).
    buckets: DeadlineBuckets,
    /// Hashes with field deadlines, by the window of their earliest one
    /// (hints, like `buckets`; see `file_field_deadlines`).
    field_buckets: DeadlineBuckets,
    /// Estimated average remaining TTL of volatile keys in ms (INFO `avg_ttl`),
    /// refreshed by the sweep as Redis does.
    pub avg_ttl_ms: f64,
}

impl Db {
    pub fn len(&self) -> usize {
        self.dict.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dict.is_empty()
    }

    pub fn volatile_len(&self) -> usize {
        self.dict.volatile_len()
    }

    /// MEMORY STATS's `overhead.hashtable.main` and `.expires`: the table
    /// (`Dict::overhead`), and what keeping deadlines costs besides (the
    /// volatile list, the deadline buckets of keys and of hash fields).
    pub fn overhead(&self) -> (usize, usize) {
        let (table, volatile) = self.dict.overhead();
        let expires = volatile + self.buckets.heap_size() + self.field_buckets.heap_size();
        (table, expires)
    }

    /// Work for a timer tick: moves the index through a resize (see
    /// `Dict::tidy`), at most `buckets` buckets.
    pub fn tidy(&mut self, buckets: usize) {
        self.dict.tidy(buckets);
    }

    /// Empties the database, returning what it held. A snapshot running
    /// on it is finished first (it must hold the keys as they were at its
    /// start) and stays with the empty table, to be taken with the others.
    pub fn clear(&mut self) -> Db {
        let mut old = std::mem::take(self);
        if old.dict.snapshot().is_some() {
            old.dict.snapshot_step(usize::MAX);
            self.dict.put_snapshot(old.dict.take_snapshot());
        }
        old
    }

    /// Starts a snapshot of this database (numbered `index`) as of `start_ms`.
    pub fn begin_snapshot(&mut self, index: usize, start_ms: u64, compress: bool) {
        self.dict.begin_snapshot(index, start_ms, compress);
    }

    /// Moves the snapshot on by up to `max` keys; returns how many it visited.
    pub fn snapshot_step(&mut self, max: usize) -> usize {
        self.dict.snapshot_step(max)
    }

    pub fn snapshot(&self) -> Option<&super::snapshot::Cursor> {
        self.dict.snapshot()
    }

    pub fn take_snapshot(&mut self) -> Option<Box<super::snapshot::Cursor>> {
        self.dict.take_snapshot()
    }

    /// Removes an evicted key, with its deadline window entry where that is
    /// cheap to find (`DeadlineBuckets::forget`).
    pub fn remove_evicted(&mut self, key: &[u8]) -> Option<Removed> {
        let hash = self.dict.hash(key);
        let pos = self.dict.find(key)?;
        let entry = self.dict.remove_at(pos).1;
        if let Some(at) = entry.expire_at() {
            self.buckets.forget(hash, at);
        }
        Some(entry)
    }

    /// Removes a key unconditionally.
    pub fn remove_raw(&mut self, key: &[u8]) -> Option<Removed> {
        let pos = self.dict.find(key)?;
        Some(self.dict.remove_at(pos).1)
    }

    /// Inserts or replaces a key with the given deadline (None clears it).
    /// A hash with field deadlines (moved, renamed or copied here) is filed
    /// for the sweep under its new name.
    pub fn insert_raw(&mut self, key: &[u8], value: Value, expire_at: Option<u64>, now_ms: u64) {
        let pos = self.dict.find(key);
        self.put(pos, key, value, expire_at, now_ms);
    }

    /// Stores `value` under `key`, found at `pos` (None: not here).
    fn put(
        &mut self,
        pos: Option<usize>,
        key: &[u8],
        mut value: Value,
        expire_at: Option<u64>,
        now_ms: u64,
    ) {
        let field_deadlines = match &mut value {
            Value::Hash(h) if h.next_deadline().is_some() => {
                // Its filing was under another name or database.
                h.set_filed_under(None);
                true
            }
            _ => false,
        };
        let pos = match pos {
            Some(pos) => {
                self.set_deadline_at(pos, expire_at);
                let entry = self.dict.entry_mut(pos);
                let old = std::mem::replace(&mut entry.value, value);
                entry.access = super::access::overwritten(entry.access, now_ms);
                // SET, RENAME onto the key, SUNIONSTORE, ...: what Redis
                // calls a server-side delete.
                crate::store::lazyfree::free_value_if(crate::store::lazyfree::server_del(), old);
                pos
            }
            None => {
                let hash = self.dict.hash(key);
                if let Some(at) = expire_at {
                    self.buckets.file(hash, at);
                }
                self.dict
                    .insert_new(hash, key, value, expire_at, super::access::fresh(now_ms))
            }
        };
        if field_deadlines {
            self.file_field_deadlines_at(pos);
        }
    }

    /// Sets or clears the deadline of the key at `pos`, filing it for the
    /// sweep when it needs a new bucket entry.
    fn set_deadline_at(&mut self, pos: usize, expire_at: Option<u64>) {
        if let Some(at) = expire_at {
            if needs_filing(self.dict.deadline(pos), at) {
                let hash = self.dict.hash(self.dict.key(pos));
                self.buckets.file(hash, at);
            }
        }
        self.dict.set_deadline(pos, expire_at);
    }

    /// Sets or clears the deadline of an existing key. Returns false if absent.
    pub fn set_expire_raw(&mut self, key: &[u8], expire_at: Option<u64>) -> bool {
        let Some(pos) = self.dict.find(key) else {
            return false;
        };
        self.set_deadline_at(pos, expire_at);
        true
    }

    pub fn peek(&self, key: &[u8]) -> Option<&Entry> {
        self.dict.find(key).map(|pos| self.dict.entry(pos))
    }

    /// The deadline of `key` (expired or not), None without one or without
    /// the key.
    pub fn expire_at(&self, key: &[u8]) -> Option<u64> {
        self.dict.find(key).and_then(|pos| self.dict.deadline(pos))
    }

    /// The key, entry and deadline at position `index` (for SCAN,
    /// RANDOMKEY).
    pub fn at(&self, index: usize) -> Option<(&[u8], &Entry, Option<u64>)> {
        (index < self.dict.len()).then(|| {
            (
                self.dict.key(index),
                self.dict.entry(index),
                self.dict.deadline(index),
            )
        })
    }

    /// The `nth` volatile key, its entry and deadline (`nth <
    /// volatile_len()`; eviction samples them).
    pub fn volatile_at(&self, nth: usize) -> (&[u8], &Entry, u64) {
        let (pos, at) = self.dict.volatile_entry(nth);
        (self.dict.key(pos), self.dict.entry(pos), at)
    }

    /// Every key with its entry and deadline, by position (KEYS, DEBUG,
    /// tests).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &Entry, Option<u64>)> {
        self.dict.iter()
    }

    /// Looks at the `nth` volatile key (`nth < volatile_len()`) and removes
    /// it if its deadline passed, unless the deadline window it is filed
    /// under has yet to end (at most 64 ms). Then its window will hand it
    /// back in order, last filed first, which takes the dict's last slots
    /// and moves none; a sampling cycle that ran in those milliseconds of a
    /// storm removed thousands of its keys at random, and that disorder
    /// cost the whole storm's reclaim (see [`Db::expire_due`]).
    pub fn sample_volatile(&mut self, nth: usize, now_ms: u64) -> Sampled {
        // The deadline is in the list: a live key's slot is not read.
        let (pos, at) = self.dict.volatile_entry(nth);
        if now_ms <= at {
            return Sampled::Live(at);
        }
        if !window_ended(at, now_ms) {
            return Sampled::Pending;
        }
        let (key, entry) = self.dict.remove_at(pos);
        discard_expired(entry);
        Sampled::Expired(key, at)
    }
}

/// Frees an expired key's value, on the lazy-free thread when
/// `lazyfree-lazy-expire` asks and it is large (`store::lazyfree`).
fn discard_expired(entry: Removed) {
    crate::store::lazyfree::free_value_if(crate::store::lazyfree::expire(), entry.value);
}

/// Keys taken from the deadline windows at once, their index buckets loaded
/// together before any is removed (`Index::prefetch`).
const PREFETCH_BATCH: usize = 16;

/// Whether a key moving from deadline `old` to `new` needs a new bucket entry:
/// only when it had none, or its deadline moved to an earlier window (an entry
/// in a later window is re-filed when met).
fn needs_filing(old: Option<u64>, new: u64) -> bool {
    old.is_none_or(|old| window(new) < window(old))
}

impl Db {
    /// Removes up to `max` keys from deadline windows that have passed.
    /// Returns (entries examined, keys expired). `db` is this database's
    /// number, for the `expired` events.
    pub fn expire_due(
        &mut self,
        db: usize,
        now_ms: u64,
        max: usize,
        stats: &mut ExpiryStats,
    ) -> (usize, usize) {
        let (mut examined, mut expired) = (0, 0);
        // Entries examined plus keys taken off the end of the dict.
        let mut work = 0;
        let mut batch = [0u64; PREFETCH_BATCH];
        while work < max {
            let mut taken = 0;
            while taken < PREFETCH_BATCH.min(max - work) {
                let Some(hash) = self.buckets.pop_due(now_ms) else {
                    break;
                };
                self.dict.prefetch_hashed(hash);
                batch[taken] = hash;
                taken += 1;
            }
            if taken == 0 {
                break;
            }
            examined += taken;
            work += taken;
            for &hash in &batch[..taken] {
                let Some(pos) = self.dict.find_hashed(hash) else {
                    continue; // deleted since it was filed
                };
                match self.dict.deadline(pos) {
                    Some(at) if now_ms > at => {
                        let stripped = self.expire_tail_above(db, pos, now_ms, max - work, stats);
                        work += stripped;
                        expired += stripped;
                        let (key, entry) = self.dict.remove_at(pos);
                        discard_expired(entry);
                        stats.record_expired(db, &key, at, now_ms);
                        expired += 1;
                    }
                    // The deadline moved later: file it where it belongs now.
                    Some(at) => self.buckets.file(hash, at),
                    // Persisted since it was filed.
                    None => {}
                }
            }
        }
        (examined, expired)
    }

    /// Removes expired keys from the end of the dict while the last one
    /// lies above position `above` (which must stay where it is), at most
    /// `max`; returns how many.
    ///
    /// Why: removing a key from the middle moves the last slot into its
    /// place, and a moved slot costs a probe of its index bucket, a cache
    /// miss in a large table. A storm's window hands keys back last filed
    /// first, which are the dict's last slots, so normally nothing moves.
    /// But once some of them were removed out of that order (sampled by a
    /// cycle that ran between their deadline and the window's end, or
    /// deleted by a client), every later removal moved a slot that was due
    /// soon itself, and the storm cost three to four times as much
    /// (`cargo bench --bench expire_sweep`). Taking expired keys off the end
    /// first moves nothing; their bucket entries are dropped when met.
    fn expire_tail_above(
        &mut self,
        db: usize,
        above: usize,
        now_ms: u64,
        max: usize,
        stats: &mut ExpiryStats,
    ) -> usize {
        let tail_expired = |dict: &super::dict::Dict| {
            let last = dict.len() - 1;
            (last > above)
                .then(|| dict.deadline(last))
                .flatten()
                .filter(|&at| now_ms > at)
        };
        // Last slots whose index buckets are being loaded.
        let (mut removed, mut prefetched) = (0, 0);
        // Checked before any prefetch: in a keyspace of mixed deadlines the
        // last key is usually live, and this must then cost next to nothing.
        while removed < max {
            let Some(at) = tail_expired(&self.dict) else {
                break;
            };
            if prefetched == 0 {
                let len = self.dict.len();
                prefetched = PREFETCH_BATCH.min(max - removed).min(len - 1 - above);
                for pos in len - prefetched..len {
                    self.dict
                        .prefetch_hashed(self.dict.hash(self.dict.key(pos)));
                }
            }
            let (key, entry) = self.dict.remove_at(self.dict.len() - 1);
            discard_expired(entry);
            stats.record_expired(db, &key, at, now_ms);
            removed += 1;
            prefetched -= 1;
        }
        removed
    }

    /// Whether some deadline window has passed with keys filed in it.
    pub fn has_due(&self, now_ms: u64) -> bool {
        self.buckets.has_due(now_ms)
    }

    /// Whether the key table's index is being resized (each removal then
    /// also zeroes a page or moves buckets of it).
    pub fn index_resizing(&self) -> bool {
        self.dict.resizing()
    }

    /// Keys (stale entries included) filed in deadline windows that have
    /// passed.
    pub fn due_len(&self, now_ms: u64) -> usize {
        self.buckets.due_len(now_ms)
    }

    /// When the earliest deadline window of keys or of hash fields ends
    /// (unix ms).
    pub fn next_window_end_ms(&self) -> Option<u64> {
        let fields = self.field_buckets.next_end_ms();
        self.buckets.next_end_ms().into_iter().chain(fields).min()
    }

    /// Bucket entries, stale ones included (memory accounting, tests).
    pub fn bucket_entries(&self) -> usize {
        self.buckets.len()
    }
}

/// The keyspace invariants the fuzz harness checks (`DEBUG EMBER-CHECK`).
impl Db {
    /// Checks, as of `now_ms`: the table and its index agree (`Dict`);
    /// every volatile key is filed in a deadline window no later than its
    /// deadline's, so the sweep meets it in time; every hash with field
    /// deadlines is consistent and filed no later than its earliest one
    /// (unless the key itself has expired: then the key sweep takes it
    /// whole); no container is empty; sorted sets' map and list agree.
    /// O(keys + elements of hashes and sorted sets).
    #[doc(hidden)]
    pub fn check_invariants(&self, now_ms: u64) -> Result<(), String> {
        self.dict.check_invariants()?;
        let filed = self.buckets.earliest_windows()?;
        let fields_filed = self.field_buckets.earliest_windows()?;
        for (key, entry, deadline) in self.dict.iter() {
            let name = || String::from_utf8_lossy(key).into_owned();
            let key_hash = self.dict.hash(key);
            if let Some(at) = deadline {
                match filed.get(&key_hash) {
                    Some(&w) if w <= window(at) => {}
                    w => {
                        return Err(format!(
                            "key {:?} with deadline {at} (window {}) filed in window {w:?}",
                            name(),
                            window(at)
                        ))
                    }
                }
            }
            let empty = match &entry.value {
                Value::Str(..) => false,
                Value::List(l) => l.is_empty(),
                Value::Set(s) => s.is_empty(),
                Value::Stream(st) => {
                    st.check_invariants()
                        .map_err(|e| format!("stream {:?}: {e}", name()))?;
                    false
                }
                Value::ZSet(z) => {
                    z.check_invariants()
                        .map_err(|e| format!("sorted set {:?}: {e}", name()))?;
                    z.is_empty()
                }
                Value::Hash(h) => {
                    let earliest = h
                        .check_invariants()
                        .map_err(|e| format!("hash {:?}: {e}", name()))?;
                    let key_expired = deadline.is_some_and(|at| now_ms > at);
                    if let Some(first) = earliest.filter(|_| !key_expired) {
                        match fields_filed.get(&key_hash) {
                            Some(&w) if w <= window(first) => {}
                            w => {
                                return Err(format!(
                                    "hash {:?} with a field deadline {first} (window {}) filed in window {w:?}",
                                    name(),
                                    window(first)
                                ))
                            }
                        }
                    }
                    h.is_empty()
                }
            };
            if empty {
                return Err(format!(
                    "empty {} kept at {:?}",
                    entry.value.type_name(),
                    name()
                ));
            }
        }
        Ok(())
    }
}

/// Hash field expiry: the sweep's candidates are the hashes filed in
/// `field_buckets`; a visit removes every expired field of the hash at once.
impl Db {
    /// After field deadlines of the hash at `key` changed: files it under
    /// its earliest deadline unless an entry filed earlier already brings
    /// the sweep there in time.
    pub fn file_field_deadlines(&mut self, key: &[u8]) {
        if let Some(pos) = self.dict.find(key) {
            self.file_field_deadlines_at(pos);
        }
    }

    fn file_field_deadlines_at(&mut self, pos: usize) {
        let hash = self.dict.hash(self.dict.key(pos));
        if let Value::Hash(h) = &mut self.dict.entry_mut(pos).value {
            file_hash(&mut self.field_buckets, hash, h, None);
        }
    }

    /// Removes the expired fields of the hash at `pos` (counted in
    /// `expired_subkeys`, one `hexpired` event), deletes the hash with a
    /// `del` event when none is left, and otherwise files it under its next
    /// deadline. Returns true when the key was deleted. `db` is this
    /// database's number, for the events.
    fn reclaim_fields_at(
        &mut self,
        db: usize,
        pos: usize,
        now_ms: u64,
        stats: &mut ExpiryStats,
    ) -> bool {
        let key_hash = self.dict.hash(self.dict.key(pos));
        if self.dict.deadline(pos).is_some_and(|at| now_ms > at) {
            return false; // the whole key is expired: the key sweep's job
        }
        let (key, entry) = self.dict.slot_mut(pos);
        let Value::Hash(hash) = &mut entry.value else {
            return false;
        };
        if stats.propagate.is_on() {
            stats
                .propagate
                .fields_expired(db, key, hash.expired_fields(now_ms));
        }
        let removed = hash.remove_expired(now_ms);
        if removed > 0 {
            stats.record_expired_fields(db, key, removed);
        }
        if hash.is_empty() {
            let (key, _) = self.dict.remove_at(pos);
            // The feed's HDEL of the last fields deletes it there too.
            stats.notify.notify_expired(GENERIC, "del", db, &key);
            return true;
        }
        file_hash(&mut self.field_buckets, key_hash, hash, Some(now_ms));
        false
    }

    /// Visits up to `max` hashes filed under deadline windows that have
    /// passed, reclaiming their expired fields. Returns (hashes visited,
    /// fields removed).
    pub fn expire_due_fields(
        &mut self,
        db: usize,
        now_ms: u64,
        max: usize,
        stats: &mut ExpiryStats,
    ) -> (usize, u64) {
        let before = stats.expired_subkeys;
        let mut visited = 0;
        while visited < max {
            let Some(hash) = self.field_buckets.pop_due(now_ms) else {
                break;
            };
            visited += 1;
            if let Some(pos) = self.dict.find_hashed(hash) {
                self.reclaim_fields_at(db, pos, now_ms, stats);
            }
        }
        (visited, stats.expired_subkeys - before)
    }

    /// Whether a hash is filed under a deadline window that has passed.
    pub fn has_due_fields(&self, now_ms: u64) -> bool {
        self.field_buckets.has_due(now_ms)
    }

    /// Whether any hash is filed for field expiry (stale entries included).
    pub fn has_field_deadlines(&self) -> bool {
        !self.field_buckets.is_empty()
    }
}

/// Files the hash whose key hashes to `key_hash` under its earliest field
/// deadline unless the entry it was last filed under comes no later (by
/// window) and is still pending. With `now_ms`, an entry whose window has
/// ended counts as gone: the sweep is taking (or took) it, so the hash must
/// be filed again.
fn file_hash(buckets: &mut DeadlineBuckets, key_hash: u64, hash: &mut Hash, now_ms: Option<u64>) {
    let Some(next) = hash.next_deadline() else {
        return;
    };
    let pending = hash
        .filed_under()
        .filter(|&filed| now_ms.is_none_or(|now| !window_ended(filed, now)));
    if pending.is_none_or(|filed| window(next) < window(filed)) {
        buckets.file(key_hash, next);
        hash.set_filed_under(Some(next));
    }
}

/// A database seen at one instant: every lookup first removes the key if its
/// deadline has passed (lazy expiry) and accounts for it.
/// `allkeys-tinylfu` is the policy (`store::tinylfu`).
#[inline]
fn tinylfu_on() -> bool {
    crate::config::EVICTION.policy() == crate::config::Policy::AllkeysTinylfu
}

pub struct Keyspace<'a> {
    db: &'a mut Db,
    stats: &'a mut ExpiryStats,
    now_ms: u64,
    /// The database's number, for keyspace events.
    index: usize,
    expiry: Expiry,
}

/// What a lookup does with a logically expired key (the seeds' replica
/// rules: a replica never expires keys itself, it waits for its master's
/// DEL; meanwhile its clients read such a key as missing, while DBSIZE
/// still counts it, and the master's own commands see it as live).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Expiry {
    /// A master: the key is removed (lazy expiry) and reads as missing.
    #[default]
    Remove,
    /// A replica's client: reads see it missing, the key stays; a write
    /// (on a writable replica) removes it first, as Redis 7 does.
    Hide,
    /// The master's command on a replica: the key is live.
    Keep,
}

impl<'a> Keyspace<'a> {
    pub fn new(db: &'a mut Db, stats: &'a mut ExpiryStats, now_ms: u64) -> Keyspace<'a> {
        Keyspace {
            db,
            stats,
            now_ms,
            index: 0,
            expiry: Expiry::Remove,
        }
    }

    /// A writable replica's client gave `key` a TTL: the replica expires
    /// it itself (`Store::expire_local`).
    fn note_local_ttl(&mut self, key: &[u8], expire_at: Option<u64>) {
        if self.expiry == Expiry::Hide && expire_at.is_some() {
            self.stats
                .local_volatile
                .insert((self.index, Bytes::copy_from_slice(key)));
        }
    }

    /// Sets how lookups treat logically expired keys.
    pub fn with_expiry(mut self, expiry: Expiry) -> Keyspace<'a> {
        self.expiry = expiry;
        self
    }

    /// Fires keyspace event `event` of `class` (`store::notify`) for `key`.
    pub fn notify(&mut self, class: u32, event: &'static str, key: &[u8]) {
        self.stats.notify.notify(class, event, self.index, key);
    }

    /// A change no keyspace event describes (a consumer group's read
    /// position or pending entries): counted as Redis's `server.dirty`
    /// counts it, so the command is propagated.
    pub fn dirtied(&mut self) {
        self.stats.notify.dirty = self.stats.notify.dirty.wrapping_add(1);
    }

    /// After elements were removed from the container at `key`: fires
    /// `event` of `class` if any were, and when the container is now empty
    /// removes the key with its TTL and fires `del`, as Redis does for lists,
    /// hashes, sets and sorted sets.
    pub fn after_removal(
        &mut self,
        key: &[u8],
        class: u32,
        event: &'static str,
        removed: bool,
        emptied: bool,
    ) {
        if removed {
            self.notify(class, event, key);
        }
        if emptied {
            self.remove(key);
            self.notify(super::notify::GENERIC, "del", key);
        }
    }

    /// Names the database this view is of (for events).
    pub fn in_db(mut self, index: usize) -> Keyspace<'a> {
        self.index = index;
        self
    }

    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    pub fn db(&mut self) -> &mut Db {
        self.db
    }

    /// The position of `key` if it is live. On the way it removes the key
    /// if it is logically expired, and the expired fields of a hash (the
    /// hash too when none is left). One probe of the table serves the
    /// check and what the caller does next.
    fn live(&mut self, key: &[u8]) -> Option<usize> {
        self.live_as(key, self.expiry)
    }

    /// [`live`](Self::live) for a write: a replica's client removes the
    /// expired key it writes over.
    fn live_for_write(&mut self, key: &[u8]) -> Option<usize> {
        let expiry = match self.expiry {
            Expiry::Hide => Expiry::Remove,
            other => other,
        };
        self.live_as(key, expiry)
    }

    fn live_as(&mut self, key: &[u8], expiry: Expiry) -> Option<usize> {
        // Lookups help a resize along, as Redis's do its rehash: after a
        // storm the traffic left may be reads and overwrites only.
        self.db.dict.tidy(super::index::STEP);
        let pos = self.db.dict.find(key)?;
        // A key without a deadline (most of a cache) is told by its slot;
        // only a volatile one reads its deadline from the list.
        let deadline = self.db.dict.deadline(pos);
        if expiry != Expiry::Remove {
            let entry = self.db.dict.entry(pos);
            let expired = deadline.is_some_and(|at| self.now_ms > at)
                || matches!(&entry.value, Value::Hash(h) if h.all_expired(self.now_ms));
            return (expiry == Expiry::Keep || !expired).then_some(pos);
        }
        let entry = self.db.dict.entry(pos);
        if let Some(at) = deadline {
            if self.now_ms > at {
                if self.stats.expiry_paused {
                    return None; // kept until the pause ends (`set` reuses it)
                }
                discard_expired(self.db.dict.remove_at(pos).1);
                self.stats.record_expired(self.index, key, at, self.now_ms);
                return None;
            }
        }
        if !self.stats.expiry_paused
            && entry.hash_fields_due(self.now_ms)
            && self
                .db
                .reclaim_fields_at(self.index, pos, self.now_ms, self.stats)
        {
            return None;
        }
        Some(pos)
    }

    /// After a command changed field deadlines of the hash at `key`.
    pub fn file_field_deadlines(&mut self, key: &[u8]) {
        self.db.file_field_deadlines(key);
    }

    /// Counts fields removed because a command gave them a deadline already
    /// past (Redis counts them in `expired_subkeys`, with an `hdel` event).
    pub fn count_expired_fields(&mut self, n: usize) {
        self.stats.expired_subkeys += n as u64;
    }

    /// Looks a key up for reading or in-place change; touches its access time.
    pub fn get(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.note_request(key);
        let pos = self.live(key)?;
        let entry = self.db.dict.entry_mut(pos);
        entry.access = super::access::touched(entry.access, self.now_ms);
        Some(entry)
    }

    /// Like [`get`](Self::get) but counts a keyspace hit or miss (read commands).
    pub fn read(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.note_request(key);
        let Some(pos) = self.live(key) else {
            self.stats.misses += 1;
            return None;
        };
        self.stats.hits += 1;
        let entry = self.db.dict.entry_mut(pos);
        entry.access = super::access::touched(entry.access, self.now_ms);
        Some(entry)
    }

    /// Counts a request for `key`, found or not, in the frequency sketch
    /// while `allkeys-tinylfu` evicts by it; one load and a compare else.
    #[inline]
    fn note_request(&mut self, key: &[u8]) {
        if tinylfu_on() {
            self.stats.tinylfu.record(self.index, key, self.db.len());
        }
    }

    /// Looks a key up without touching its access time (OBJECT IDLETIME, TYPE).
    pub fn peek(&mut self, key: &[u8]) -> Option<&Entry> {
        let pos = self.live(key)?;
        Some(self.db.dict.entry(pos))
    }

    /// [`peek`](Self::peek) with the key's deadline (Unix ms).
    pub fn peek_with_ttl(&mut self, key: &[u8]) -> Option<(&Entry, Option<u64>)> {
        let pos = self.live(key)?;
        Some((self.db.dict.entry(pos), self.db.dict.deadline(pos)))
    }

    /// The deadline of a live key (Unix ms); None without one or without
    /// the key.
    pub fn expire_at(&mut self, key: &[u8]) -> Option<u64> {
        let pos = self.live(key)?;
        self.db.dict.deadline(pos)
    }

    /// Sets the access word of a live key (RESTORE's IDLETIME and FREQ);
    /// false if the key does not exist.
    pub fn set_access(&mut self, key: &[u8], word: u32) -> bool {
        let Some(pos) = self.live(key) else {
            return false;
        };
        self.db.dict.entry_mut(pos).access = word;
        true
    }

    pub fn exists(&mut self, key: &[u8]) -> bool {
        self.live(key).is_some()
    }

    /// Stores `value` replacing whatever was there; `expire_at` None clears the TTL.
    pub fn set(&mut self, key: &[u8], value: Value, expire_at: Option<u64>) {
        let pos = self.live_for_write(key);
        self.note_local_ttl(key, expire_at);
        if pos.is_none() && self.stats.notify.wants(super::notify::NEW) {
            self.stats.record_new(self.index, key);
        }
        let pos = pos.or_else(|| self.kept_expired(key));
        if pos.is_none() && tinylfu_on() {
            self.stats.tinylfu.created(self.index, key, self.db.len());
        }
        self.db.put(pos, key, value, expire_at, self.now_ms);
    }

    /// Under CLIENT PAUSE an expired key stays in the table though it reads
    /// as missing: a write to its name takes its slot.
    fn kept_expired(&self, key: &[u8]) -> Option<usize> {
        if self.stats.expiry_paused {
            self.db.dict.find(key)
        } else {
            None
        }
    }

    /// Stores `value`, keeping the current TTL of a live key (KEEPTTL, in-place changes).
    pub fn set_keep_ttl(&mut self, key: &[u8], value: Value) {
        let pos = self.live_for_write(key);
        let ttl = match pos {
            Some(pos) => self.db.dict.deadline(pos),
            None => {
                // INCR, APPEND, SETRANGE, ... creating the key.
                if self.stats.notify.wants(super::notify::NEW) {
                    self.stats.record_new(self.index, key);
                }
                None
            }
        };
        let pos = pos.or_else(|| self.kept_expired(key));
        self.db.put(pos, key, value, ttl, self.now_ms);
    }

    /// Deletes a live key, returning it.
    pub fn remove(&mut self, key: &[u8]) -> Option<Removed> {
        let pos = self.live_for_write(key)?;
        Some(self.db.dict.remove_at(pos).1)
    }

    /// Sets the deadline of a live key; false if the key does not exist.
    pub fn set_expire(&mut self, key: &[u8], expire_at: Option<u64>) -> bool {
        let Some(pos) = self.live_for_write(key) else {
            return false;
        };
        self.note_local_ttl(key, expire_at);
        self.db.set_deadline_at(pos, expire_at);
        true
    }

    pub fn len(&self) -> usize {
        self.db.len()
    }

    pub fn is_empty(&self) -> bool {
        self.db.is_empty()
    }

    /// A random live key, deleting expired ones met on the way (RANDOMKEY).
    pub fn random_key(&mut self, rng: &mut impl RngCore) -> Option<Bytes> {
        // Bounded like Redis: if nearly everything is expired, give up after
        // enough tries rather than spin.
        for _ in 0..100 {
            let len = self.db.len();
            if len == 0 {
                return None;
            }
            let index = (rng.next_u64() % len as u64) as usize;
            let key = Bytes::copy_from_slice(self.db.dict.key(index));
            if self.live(&key).is_some() {
                return Some(key);
            }
        }
        None
    }

    /// One SCAN step: visits up to `count` positions below `from`
    /// (None = start at the top), deleting expired keys met.
    /// Returns the live keys visited and the next position (None = done).
    pub fn scan(&mut self, from: Option<usize>, count: usize) -> (Vec<Bytes>, Option<usize>) {
        let mut pos = from.unwrap_or(usize::MAX).min(self.db.len());
        let mut keys = Vec::with_capacity(count.min(pos));
        let mut visited = 0;
        while pos > 0 && visited < count {
            pos -= 1;
            visited += 1;
            if pos >= self.db.len() {
                continue;
            }
            // A removal swaps the last entry (already visited) into `pos`.
            let key = Bytes::copy_from_slice(self.db.dict.key(pos));
            if self.live(&key).is_some() {
                keys.push(key);
            }
        }
        (keys, (pos > 0).then_some(pos))
    }

    /// Live keys matching `keep` without deleting expired ones (KEYS).
    pub fn live_keys(&self, mut keep: impl FnMut(&[u8]) -> bool) -> Vec<Bytes> {
        self.db
            .iter()
            .filter(|&(_, e, at)| super::snapshot::is_live(&e.value, at, self.now_ms))
            .filter(|(k, _, _)| keep(k))
            .map(|(k, _, _)| Bytes::copy_from_slice(k))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn s(v: &str) -> Value {
        Value::copy_of(v.as_bytes())
    }

    #[test]
    fn expires_index_follows_the_dict() {
        let mut db = Db::default();
        db.insert_raw(b"a", s("1"), Some(100), 0);
        db.insert_raw(b"b", s("2"), None, 0);
        assert_eq!((db.len(), db.volatile_len()), (2, 1));
        db.insert_raw(b"a", s("3"), None, 0);
        assert_eq!(db.volatile_len(), 0);
        assert!(db.set_expire_raw(b"b", Some(5)));
        assert_eq!(db.volatile_len(), 1);
        db.remove_raw(b"b");
        assert_eq!((db.len(), db.volatile_len()), (1, 0));
        assert!(!db.set_expire_raw(b"zz", Some(1)));
    }

    #[test]
    fn due_windows_expire_keys_and_refile_moved_ones() {
        let mut db = Db::default();
        let mut stats = ExpiryStats::default();
        db.insert_raw(b"soon", s("v"), Some(100), 0);
        db.insert_raw(b"moved", s("v"), Some(100), 0);
        db.insert_raw(b"gone", s("v"), Some(100), 0);
        db.insert_raw(b"later", s("v"), Some(10_000), 0);
        // Refreshing to a later deadline adds no entry; deleting leaves a stale one.
        assert!(db.set_expire_raw(b"moved", Some(5_000)));
        db.remove_raw(b"gone");
        assert_eq!(db.bucket_entries(), 4);
        // An earlier deadline is filed again.
        assert!(db.set_expire_raw(b"later", Some(150)));
        assert_eq!(db.bucket_entries(), 5);
        let (examined, expired) = db.expire_due(0, 1_000, usize::MAX, &mut stats);
        assert_eq!(
            (examined, expired),
            (4, 2),
            "soon and later expire, moved is re-filed, gone dropped"
        );
        assert!(db.peek(b"moved").is_some());
        assert_eq!(
            db.bucket_entries(),
            2,
            "moved re-filed, the late entry of later left"
        );
        assert_eq!(db.expire_due(0, 6_000, usize::MAX, &mut stats), (1, 1));
        assert_eq!(db.expire_due(0, 20_000, usize::MAX, &mut stats), (1, 0));
        assert_eq!(
            (db.len(), db.volatile_len(), db.bucket_entries()),
            (0, 0, 0)
        );
        assert_eq!(stats.expired_keys, 3);
    }

    #[test]
    fn a_storm_out_of_window_order_is_taken_off_the_end() {
        let mut db = Db::default();
        let mut stats = ExpiryStats::default();
        let key = |name: &str, i: usize| format!("{name}:{i}").into_bytes();
        for i in 0..100 {
            db.insert_raw(&key("live", i), s("v"), None, 0);
        }
        db.insert_raw(b"late", s("v"), Some(1_000_000), 0);
        for i in 0..1_000 {
            db.insert_raw(&key("dead", i), s("v"), Some(100), 0);
        }
        // Removed out of the window's order, as a sampling cycle does: the
        // dict's slots no longer match the order the window hands back.
        let early: Vec<usize> = (0..1_000).step_by(37).collect();
        for &i in &early {
            db.remove_raw(&key("dead", i));
        }
        let (mut expired, mut taken_off_the_end) = (0, false);
        loop {
            let (examined, n) = db.expire_due(0, 1_000, 64, &mut stats);
            assert!(examined + n <= 2 * 64, "a call stays within its work");
            if examined == 0 {
                break;
            }
            // More expired than entries examined: keys came off the end.
            taken_off_the_end |= n > examined;
            expired += n;
        }
        assert!(taken_off_the_end);
        assert_eq!(expired, 1_000 - early.len());
        assert_eq!(stats.expired_keys as usize, expired);
        assert_eq!(db.len(), 101, "the live keys and `late` stay");
        assert!(db.peek(b"late").is_some());
        assert!((0..100).all(|i| db.peek(&key("live", i)).is_some()));
        assert_eq!(db.bucket_entries(), 1, "late's entry is all that is left");
        assert_eq!(db.volatile_len(), 1);
    }

    #[test]
    fn a_live_last_key_stops_the_tail() {
        let mut db = Db::default();
        let mut stats = ExpiryStats::default();
        for i in 0..50 {
            db.insert_raw(format!("dead:{i}").as_bytes(), s("v"), Some(100), 0);
        }
        db.insert_raw(b"live", s("v"), None, 0);
        db.remove_raw(b"dead:0");
        while db.expire_due(0, 1_000, 16, &mut stats).0 > 0 {}
        assert_eq!((db.len(), stats.expired_keys), (1, 49));
        assert!(db.peek(b"live").is_some());
    }

    #[test]
    fn refreshing_a_ttl_adds_no_bucket_entries() {
        let mut db = Db::default();
        db.insert_raw(b"session", s("v"), Some(60_000), 0);
        for t in 1..1_000u64 {
            assert!(db.set_expire_raw(b"session", Some(60_000 + t * 100)));
        }
        assert_eq!(db.bucket_entries(), 1);
    }

    #[test]
    fn lookups_expire_lazily_and_count() {
        let mut db = Db::default();
        let mut stats = ExpiryStats::default();
        db.insert_raw(b"k", s("v"), Some(1_000), 0);
        let mut ks = Keyspace::new(&mut db, &mut stats, 1_000);
        assert!(ks.get(b"k").is_some(), "not expired at its deadline");
        let mut ks = Keyspace::new(&mut db, &mut stats, 1_001);
        assert!(ks.get(b"k").is_none());
        assert_eq!(stats.expired_keys, 1);
        assert_eq!(db.len(), 0);
        assert_eq!(db.volatile_len(), 0);
    }

    #[test]
    fn keep_ttl_keeps_and_set_clears() {
        let mut db = Db::default();
        let mut stats = ExpiryStats::default();
        let mut ks = Keyspace::new(&mut db, &mut stats, 10);
        ks.set(b"k", s("v"), Some(500));
        ks.set_keep_ttl(b"k", s("w"));
        assert_eq!(ks.expire_at(b"k"), Some(500));
        ks.set(b"k", s("x"), None);
        assert_eq!(ks.expire_at(b"k"), None);
        assert_eq!(db.volatile_len(), 0);
    }

    #[test]
    fn scan_never_misses_a_key_present_throughout() {
        let mut db = Db::default();
        let mut stats = ExpiryStats::default();
        for i in 0..1000u32 {
            // Every third key is already expired and will be deleted when met.
            let ttl = i.is_multiple_of(3).then_some(5);
            db.insert_raw(format!("k{i}").as_bytes(), s("v"), ttl, 0);
        }
        let mut seen = std::collections::HashSet::new();
        let mut cursor = None;
        let mut round = 0u32;
        loop {
            let mut ks = Keyspace::new(&mut db, &mut stats, 10);
            let (keys, next) = ks.scan(cursor, 7);
            seen.extend(keys);
            // Churn between steps: new keys appear, some live keys vanish.
            ks.set(format!("new{round}").as_bytes(), s("v"), None);
            round += 1;
            match next {
                Some(p) => cursor = Some(p),
                None => break,
            }
        }
        for i in (0..1000u32).filter(|i| !i.is_multiple_of(3)) {
            assert!(seen.contains(format!("k{i}").as_bytes()), "missed k{i}");
        }
        assert!(seen.iter().all(|k| !k.starts_with(b"k") || {
            let n: u32 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
            !n.is_multiple_of(3)
        }));
    }

    /// A hash value with `fields`, each given `deadline` when Some.
    fn hash_value(fields: &[&str], deadline: Option<u64>) -> Value {
        let mut h: Hash = fields
            .iter()
            .map(|f| {
                (
                    Bytes::copy_from_slice(f.as_bytes()),
                    Bytes::from_static(b"v"),
                )
            })
            .collect();
        if let Some(at) = deadline {
            for f in fields {
                h.set_deadline(f.as_bytes(), at);
            }
        }
        Value::Hash(h)
    }

    fn hash_mut<'a>(db: &'a mut Db, key: &[u8]) -> &'a mut Hash {
        let pos = db.dict.find(key).expect("key");
        match &mut db.dict.entry_mut(pos).value {
            Value::Hash(h) => h,
            other => panic!("not a hash: {other:?}"),
        }
    }

    fn hash_of(db: &Db, key: &[u8]) -> Hash {
        match &db.peek(key).expect("key").value {
            Value::Hash(h) => h.clone(),
            other => panic!("not a hash: {other:?}"),
        }
    }

    fn events(stats: &mut ExpiryStats) -> Vec<(&'static str, Bytes)> {
        std::mem::take(&mut stats.notify.events)
            .into_iter()
            .map(|e| (e.event, e.key))
            .collect()
    }

    fn notifying() -> ExpiryStats {
        let mut stats = ExpiryStats::default();
        stats.notify.flags = super::super::notify::parse_flags("KEA");
        stats
    }

    #[test]
    fn lookups_drop_expired_fields_then_the_emptied_hash() {
        let mut db = Db::default();
        let mut stats = notifying();
        db.insert_raw(b"h", hash_value(&["a", "b"], None), None, 0);
        let mut ks = Keyspace::new(&mut db, &mut stats, 0);
        let Value::Hash(h) = &mut ks.get(b"h").unwrap().value else {
            unreachable!()
        };
        h.set_deadline(b"a", 100);
        h.set_deadline(b"b", 200);
        ks.file_field_deadlines(b"h");
        assert_eq!(db.field_buckets.len(), 1, "filed once, under a's deadline");
        let mut ks = Keyspace::new(&mut db, &mut stats, 100);
        assert!(ks.get(b"h").is_some(), "nothing due at the deadline itself");
        let mut ks = Keyspace::new(&mut db, &mut stats, 150);
        assert!(ks.peek(b"h").is_some());
        assert_eq!(hash_of(&db, b"h").len(), 1);
        assert_eq!(events(&mut stats), [("hexpired", Bytes::from_static(b"h"))]);
        let mut ks = Keyspace::new(&mut db, &mut stats, 201);
        assert!(!ks.exists(b"h"));
        assert_eq!(
            events(&mut stats),
            [
                ("hexpired", Bytes::from_static(b"h")),
                ("del", Bytes::from_static(b"h"))
            ]
        );
        assert_eq!((stats.expired_subkeys, stats.expired_keys), (2, 0));
    }

    #[test]
    fn the_field_index_reclaims_hashes_nobody_reads() {
        let mut db = Db::default();
        let mut stats = notifying();
        db.insert_raw(b"gone", hash_value(&["a", "b"], Some(100)), None, 0);
        db.insert_raw(b"kept", hash_value(&["a"], Some(100)), None, 0);
        db.insert_raw(b"plain", hash_value(&["a"], None), None, 0);
        let kept = hash_mut(&mut db, b"kept");
        kept.insert(b"z", b"v", Default::default());
        kept.set_deadline(b"z", 1_000);
        assert_eq!(db.expire_due_fields(0, 127, usize::MAX, &mut stats), (0, 0));
        assert!(db.has_due_fields(128), "the window of 100 ends at 128");
        assert_eq!(db.expire_due_fields(0, 128, usize::MAX, &mut stats), (2, 3));
        assert!(db.peek(b"gone").is_none());
        assert_eq!(
            hash_of(&db, b"kept")
                .iter()
                .map(|(f, _)| f)
                .collect::<Vec<_>>(),
            [&b"z"[..]]
        );
        // kept is filed again under z's deadline.
        assert_eq!(db.field_buckets.len(), 1);
        assert_eq!(
            db.expire_due_fields(0, 1_100, usize::MAX, &mut stats),
            (1, 1)
        );
        assert_eq!(db.len(), 1, "only the hash without deadlines is left");
        assert!(!db.has_field_deadlines());
    }

    #[test]
    fn moved_hashes_are_filed_under_their_new_name_and_refreshing_adds_nothing() {
        let mut db = Db::default();
        let mut stats = ExpiryStats::default();
        db.insert_raw(b"old", hash_value(&["a"], Some(100)), None, 0);
        let moved = db.remove_raw(b"old").unwrap().value;
        db.insert_raw(b"new", moved, None, 0);
        assert_eq!(
            db.field_buckets.len(),
            2,
            "a stale entry for old, one for new"
        );
        for t in 1..100u64 {
            let h = hash_mut(&mut db, b"new");
            h.set_deadline(b"a", 100 + t * 64);
            db.file_field_deadlines(b"new");
        }
        assert_eq!(db.field_buckets.len(), 2, "later deadlines file nothing");
        assert_eq!(db.expire_due_fields(0, 200, usize::MAX, &mut stats), (2, 0));
        assert_eq!(db.field_buckets.len(), 1, "new is filed again, old dropped");
        assert_eq!(
            db.expire_due_fields(0, 7_000, usize::MAX, &mut stats),
            (1, 1)
        );
        assert!(db.is_empty());
    }

    #[test]
    fn the_invariant_check_finds_unfiled_deadlines_and_empty_containers() {
        let mut db = Db::default();
        db.insert_raw(b"k", s("v"), Some(100_000), 0);
        db.insert_raw(b"h", hash_value(&["a"], Some(50_000)), None, 0);
        assert_eq!(db.check_invariants(0), Ok(()));
        let buckets = std::mem::take(&mut db.buckets);
        let e = db.check_invariants(0).unwrap_err();
        assert!(
            e.contains("key \"k\"") && e.contains("filed in window None"),
            "{e}"
        );
        db.buckets = buckets;
        let fields = std::mem::take(&mut db.field_buckets);
        let e = db.check_invariants(0).unwrap_err();
        assert!(e.contains("hash \"h\""), "{e}");
        db.field_buckets = fields;
        db.insert_raw(b"l", Value::List(Default::default()), None, 0);
        let e = db.check_invariants(0).unwrap_err();
        assert!(e.contains("empty list"), "{e}");
    }

    #[test]
    fn random_key_skips_and_removes_expired() {
        let mut db = Db::default();
        let mut stats = ExpiryStats::default();
        db.insert_raw(b"dead", s("v"), Some(1), 0);
        db.insert_raw(b"live", s("v"), None, 0);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut ks = Keyspace::new(&mut db, &mut stats, 100);
        for _ in 0..20 {
            assert_eq!(ks.random_key(&mut rng).as_deref(), Some(&b"live"[..]));
        }
    }
}
