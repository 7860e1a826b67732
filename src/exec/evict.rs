//! Keeping the server under `maxmemory`: when a shard evicts, and how much.
//! Which key goes is `store::evict`; the memory figure is
//! `util::memory::used_memory` (fresh at every command, see there).
//!
//! # One budget, many shards
//!
//! The limit is the whole server's `used_memory`; no shard has a budget of
//! its own, so a shard holding more of the data is not starved by an even
//! split, and the limit moves with the data as it moves. The excess is
//! shared out instead, as debts:
//!
//! 1. A shard that finds the server over the limit assigns the part of
//!    the excess no shard owes yet to every shard by its share: its
//!    fraction of the server's keys (each shard publishes its key count in
//!    [`SHARD_KEYS`] every pass). Keys count, not bytes: a shard's bytes are
//!    not known apart from the others' (a value is freed by whichever
//!    thread drops it last), and each shard holds a uniform slice of the
//!    keyspace by its hash.
//! 2. Each shard frees what it owes from its own keys, measured by its own
//!    thread's allocation counter (the global figure also moves with what
//!    the others add meanwhile), then owes that much less; once it sees the
//!    server under the limit it owes nothing. Keys are freed whole, so a
//!    shard usually frees more than it owed: the rest is credit (at most
//!    [`credit_limit`], about a key's worth), spent on its next shares, so
//!    the shard that looks first does not pay every share of a small
//!    excess alone. The credits are what the server may stay over the
//!    limit by while every shard has one, so they are kept small.
//! 3. Where the others owe more than [`overdue_limit`] (a busy or sleeping
//!    shard falls behind), the shard that admits a write (a `denyoom`
//!    command) frees the rest too, so the overshoot stays bounded whatever
//!    the others do.
//!
//! Without the debts, the shard that admits the writes (a client's home
//! shard, whatever shard its keys live on) looks far more often than the
//! others, would always find the excess first, and would empty itself of
//! its keys, hot or cold, while the others kept theirs.
//!
//! A shard pays its debt on two paths:
//!
//! - **Before a command** (Redis's `processCommand`), when the server is
//!   over the limit, for at most one slice (`maxmemory-eviction-tenacity`:
//!   500 µs by default). If no shard has anything the policy may evict
//!   (`noeviction`, `volatile-*` with no key with a TTL; each shard
//!   publishes whether it has in [`SHARD_EVICTABLE`]) and the server is
//!   still over, a `denyoom` command is refused with `-OOM`; everything
//!   else runs.
//! - **From the loop**, every pass while the server is over the limit; the
//!   loop does not sleep while its last slice evicted and the server is
//!   still over, as Redis's eviction timer runs again at once (clients are
//!   served between slices). So a CONFIG SET of a lower limit is reached
//!   within moments with no writes.
//!
//! Evicting removes the key as a deletion does (see `store::evict`); the
//! records go to the feed like expiry's, with the transaction that holds
//! the key if any. Keys under a transaction's lock are not evicted.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};
use std::time::Instant;

use bytes::Bytes;

use super::{LockKey, ShardData};
use crate::config::EVICTION;
use crate::util::memory::{publish_thread, used_memory};

/// Redis's reply to a `denyoom` command that nothing can make room for.
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// Evictions between clock reads in a slice.
const EVICTIONS_PER_CLOCK: usize = 16;

const MAX_SHARDS: usize = 1024;

/// Each shard's key count (all databases), published by its loop: the
/// shares of the excess.
static SHARD_KEYS: [AtomicU64; MAX_SHARDS] = [const { AtomicU64::new(0) }; MAX_SHARDS];

/// Whether each shard has keys the policy may evict, as of its last pass:
/// a shard with none refuses a `denyoom` command only when no shard has any
/// (the others free the memory from their loops within moments).
static SHARD_EVICTABLE: [AtomicBool; MAX_SHARDS] = [const { AtomicBool::new(false) }; MAX_SHARDS];

/// What each shard owes of the excess, bytes (see the module docs).
static DEBT: [AtomicI64; MAX_SHARDS] = [const { AtomicI64::new(0) }; MAX_SHARDS];

/// When the server went over the limit (Unix ms; 0: it is not), and the
/// time spent over it before (ms): INFO's `*_eviction_exceeded_time`.
static OVER_SINCE_MS: AtomicU64 = AtomicU64::new(0);
static EXCEEDED_TOTAL_MS: AtomicU64 = AtomicU64::new(0);

/// How one slice ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slice {
    /// The server is under the limit (or the shard freed its goal).
    Done,
    /// Keys were evicted, the server is still over: more next time.
    Running,
    /// Nothing could be evicted here and the server is over the limit.
    Failed,
}

/// How long one slice may run, µs, by `maxmemory-eviction-tenacity`
/// (Redis's scale: 50 µs a step up to 10, then 15% more a step; 100: no
/// limit).
pub fn slice_limit_us(tenacity: u64) -> u64 {
    match tenacity {
        0..=10 => 50 * tenacity,
        11..=99 => (500.0 * 1.15f64.powi(tenacity as i32 - 10)) as u64,
        _ => u64::MAX,
    }
}

/// INFO's `total_eviction_exceeded_time` and `current_eviction_exceeded_time`, ms.
pub fn exceeded_time_ms() -> (u64, u64) {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let since = OVER_SINCE_MS.load(Relaxed);
    let current = if since == 0 {
        0
    } else {
        now_ms.saturating_sub(since)
    };
    (EXCEEDED_TOTAL_MS.load(Relaxed) + current, current)
}

/// Zeroes the total (CONFIG RESETSTAT).
pub fn reset_stats() {
    EXCEEDED_TOTAL_MS.store(0, Relaxed);
}

/// Notes whether the server is over the limit at `now_ms`.
fn note_over(over: bool, now_ms: u64) {
    let since = OVER_SINCE_MS.load(Relaxed);
    if over && since == 0 {
        let _ = OVER_SINCE_MS.compare_exchange(0, now_ms.max(1), Relaxed, Relaxed);
    } else if !over
        && since != 0
        && OVER_SINCE_MS
            .compare_exchange(since, 0, Relaxed, Relaxed)
            .is_ok()
    {
        EXCEEDED_TOTAL_MS.fetch_add(now_ms.saturating_sub(since), Relaxed);
    }
}

/// The server's memory now, with this thread's latest allocations in it,
/// as eviction counts it (see [`counted`]).
fn used_now(shared: &super::Shared) -> u64 {
    let _ = publish_thread();
    counted(shared, used_memory())
}

/// `used` less what Redis leaves out of the memory eviction counts
/// (`freeMemoryGetNotCountedMemory`): the replication buffers past the
/// backlog's size (a replica that reads slowly must not make the
/// server evict its keys) and the AOF buffer. INFO's
/// `mem_not_counted_for_evict`.
fn counted(shared: &super::Shared, used: u64) -> u64 {
    let mut not_counted = super::repl::not_counted_for_evict(&shared.repl);
    if shared.config.appendonly() {
        not_counted += shared.aof.stats.buffered.load(Relaxed);
    }
    used.saturating_sub(not_counted)
}

/// What the other shards may owe before the shard that sees it frees the
/// rest from its own keys (see the module docs): 0.5% of the limit, at
/// least 256 KiB.
fn overdue_limit(max: u64) -> u64 {
    (max / 200).max(256 * 1024)
}

/// The most credit a shard keeps (see the module docs): 0.1% of the limit,
/// between 1 KiB and 256 KiB. A shard with credit pays nothing of a new
/// share until the share passes its credit, so the server can stay over
/// the limit by the shards' credits together; bounded by the overdue
/// limit instead, that was hundreds of KiB at a 1 MB limit, and Redis's
/// suite allows 4 KiB. About a key of the sizes a small limit holds
/// still keeps one shard from paying every small share alone.
fn credit_limit(max: u64) -> u64 {
    (max / 1000).clamp(1024, 256 * 1024)
}

/// Assigns the part of `excess` that no shard owes yet to every shard by
/// `shares` (see the module docs). Two shards assigning at once may owe a
/// little more than the excess between them; it is cleared once the
/// server is under the limit.
fn assign(excess: u64, shares: &[u64]) {
    let total: u64 = shares.iter().sum();
    if total == 0 {
        return;
    }
    let owed: i64 = DEBT[..shares.len()]
        .iter()
        .map(|d| d.load(Relaxed).max(0))
        .sum();
    let new = excess as i64 - owed;
    if new <= 0 {
        return;
    }
    for (debt, &keys) in DEBT.iter().zip(shares) {
        let part = (new as u128 * keys as u128 / total as u128) as i64;
        debt.fetch_add(part, Relaxed);
    }
}

/// Takes up to `bytes` off the debts of the shards other than `me` (of
/// the first `n`), in shard order, never below zero; returns how much.
fn relieve_others(me: usize, n: usize, bytes: u64) -> u64 {
    let mut left = bytes;
    for (i, debt) in DEBT[..n].iter().enumerate() {
        if left == 0 {
            break;
        }
        if i == me {
            continue;
        }
        let taken = debt.fetch_update(Relaxed, Relaxed, |d| {
            (d > 0).then(|| d - d.min(left as i64))
        });
        if let Ok(before) = taken {
            left -= (before as u64).min(left);
        }
    }
    bytes - left
}

impl ShardData {
    /// Before a command: makes room if the server is over `maxmemory`
    /// (path 1 of the module docs); `grows`: the command may grow memory
    /// (`denyoom`), so this shard also frees what the others owe past the
    /// overdue limit. False: over the limit and nothing to evict on any
    /// shard, so a `denyoom` command is refused.
    pub fn evict_before_command(&mut self, grows: bool) -> bool {
        let max = EVICTION.maxmemory();
        // Nothing is evicted under CLIENT PAUSE, as in Redis 7.
        if max == 0 || self.store.stats.expiry_paused {
            return true;
        }
        match self.evict_owed(max, grows) {
            Slice::Failed => self.others_can_evict(),
            Slice::Done | Slice::Running => {
                used_now(&self.shared) <= max
                    || self.store.has_evictable(EVICTION.policy())
                    || self.others_can_evict()
            }
        }
    }

    /// From the loop: while the server is over `maxmemory`, frees what this
    /// shard owes in one slice (path 2). Returns whether it evicted and
    /// the server is still over the limit, so the loop comes back at once.
    pub fn evict_in_background(&mut self) -> bool {
        // INFO's used_memory reads every shard's latest figure.
        let _ = publish_thread();
        let keys: usize = self.store.dbs.iter().map(|db| db.len()).sum();
        if let Some(slot) = SHARD_KEYS.get(self.id) {
            slot.store(keys as u64, Relaxed);
        }
        let max = EVICTION.maxmemory();
        self.publish_evictable();
        if max == 0 || self.store.stats.expiry_paused {
            note_over(false, self.now_ms);
            return false;
        }
        let outcome = self.evict_owed(max, false);
        self.publish_evictable();
        // Nothing evictable here: the timer tick tries again, the loop
        // does not spin on it.
        outcome == Slice::Running && used_now(&self.shared) > max
    }

    /// If the server is over `max`: assigns the new excess, then evicts
    /// what this shard owes (and with `cover`, what the others owe past the
    /// overdue limit), for one slice at most. Only a write covers: a lower
    /// limit just set makes every shard owe its share at once, and the
    /// loops pay that in proportion unless writes outrun them.
    fn evict_owed(&mut self, max: u64, cover: bool) -> Slice {
        let used = used_now(&self.shared);
        let over = used > max;
        note_over(over, self.now_ms);
        let Some(debt) = DEBT.get(self.id) else {
            return Slice::Done;
        };
        if !over {
            // It owes nothing now; a credit it earned stays.
            let _ = debt.fetch_update(Relaxed, Relaxed, |d| Some(d.min(0)));
            return Slice::Done;
        }
        let excess = used - max;
        let n = self.shared.nshards.min(MAX_SHARDS);
        let keys: u64 = self.store.dbs.iter().map(|db| db.len() as u64).sum();
        let shares: Vec<u64> = (0..n)
            .map(|i| {
                if i == self.id {
                    keys
                } else {
                    SHARD_KEYS[i].load(Relaxed)
                }
            })
            .collect();
        assign(excess, &shares);
        let owed = debt.load(Relaxed).max(0) as u64;
        // What the others owe past the overdue limit, this shard frees now.
        let others_owe: u64 = (0..n)
            .filter(|&i| i != self.id)
            .map(|i| DEBT[i].load(Relaxed).max(0) as u64)
            .sum();
        let covered = if cover {
            others_owe.saturating_sub(overdue_limit(max))
        } else {
            0
        };
        let goal = owed + covered;
        let (outcome, freed) = self.evict_slice(max, goal);
        // What it freed past its own debt pays the others' overdue part
        // first (they owe that much less, or every write here would cover
        // them once more), and the rest is credit: a key is freed whole,
        // so a shard that owed a few bytes freed a kilobyte, and without
        // the credit the shard that looks first (the one admitting the
        // writes) would free a key at every write and empty itself of its
        // keys, hot ones included, while the others kept theirs.
        let relieved = relieve_others(self.id, n, freed.saturating_sub(owed).min(covered));
        let credit_floor = -(credit_limit(max) as i64);
        let paid = (freed - relieved) as i64;
        let _ = debt.fetch_update(Relaxed, Relaxed, |d| Some((d - paid).max(credit_floor)));
        self.publish_expired();
        outcome
    }

    /// The other shards that owe part of the excess and have keys to pay
    /// it with (a command may wait for them: `shard::worker::tracking`).
    pub fn others_owing(&self) -> Vec<usize> {
        if EVICTION.maxmemory() == 0 || self.store.stats.expiry_paused {
            return Vec::new();
        }
        let n = self.shared.nshards.min(MAX_SHARDS);
        (0..n)
            .filter(|&i| i != self.id)
            .filter(|&i| DEBT[i].load(Relaxed) > 0 && SHARD_EVICTABLE[i].load(Relaxed))
            .collect()
    }

    /// Whether another shard said in its last pass that it has keys the
    /// policy may evict.
    fn others_can_evict(&self) -> bool {
        let n = self.shared.nshards.min(MAX_SHARDS);
        (0..n).any(|i| i != self.id && SHARD_EVICTABLE[i].load(Relaxed))
    }

    /// Says in [`SHARD_EVICTABLE`] whether this shard has keys to evict
    /// (whatever the limit, so that a limit just set finds it right).
    fn publish_evictable(&self) {
        if let Some(slot) = SHARD_EVICTABLE.get(self.id) {
            let evictable = self.store.has_evictable(EVICTION.policy());
            slot.store(evictable, Relaxed);
        }
    }

    /// Evicts until the server is under `max` or `goal` bytes were freed
    /// (as this thread's figure sees them; a goal of 0 evicts nothing), for
    /// one slice at most.
    fn evict_slice(&mut self, max: u64, goal: u64) -> (Slice, u64) {
        let policy = EVICTION.policy();
        let samples = EVICTION.samples();
        let limit_us = slice_limit_us(EVICTION.tenacity());
        let started = Instant::now();
        // Freed bytes are what each removal freed on this thread
        // (`Store::evict_one`): the global figure also moves with what
        // other shards add meanwhile, which would make this shard evict
        // their share too, and so does this thread's own counter with the
        // records and invalidations of the evictions.
        let _ = publish_thread();
        let mut used = counted(&self.shared, used_memory());
        let mut freed = 0u64;
        let mut evicted = 0usize;
        loop {
            if used <= max || freed >= goal {
                return (Slice::Done, freed);
            }
            if evicted > 0
                && evicted.is_multiple_of(EVICTIONS_PER_CLOCK)
                && started.elapsed().as_micros() as u64 >= limit_us
            {
                return (Slice::Running, freed);
            }
            let locks = &self.locks;
            let locked = |db: usize, key: &[u8]| {
                !locks.is_idle()
                    && locks
                        .holder(&LockKey {
                            db,
                            key: Bytes::copy_from_slice(key),
                        })
                        .is_some()
            };
            let Some(bytes) = self.store.evict_one(policy, samples, self.now_ms, locked) else {
                let outcome = if evicted > 0 {
                    Slice::Running
                } else {
                    Slice::Failed
                };
                return (outcome, freed);
            };
            evicted += 1;
            freed += bytes as u64;
            let _ = publish_thread();
            used = counted(&self.shared, used_memory());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenacity_scales_as_redis() {
        assert_eq!(slice_limit_us(0), 0);
        assert_eq!(slice_limit_us(10), 500);
        assert_eq!(slice_limit_us(11), 575);
        assert_eq!(slice_limit_us(100), u64::MAX);
    }
}
