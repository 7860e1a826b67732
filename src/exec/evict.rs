//! Keeping the server under `maxmemory`: when a shard evicts, and how much.
//! Which key goes is `store::evict`; the memory figure is
//! `util::memory::used_memory` (fresh at every command, see there).
//!
//! # One budget, many shards
//!
//! The limit is the whole server's `used_memory`; no shard has a budget of
//! its own, so a shard holding more of the data is not starved by an even
//! split, and the limit moves with the data as it moves. Two paths evict:
//!
//! 1. **Before a command** (Redis's `processCommand`): the client's shard,
//!    when the server is over the limit, evicts from its own keys until the
//!    server is under it, for at most one slice (`maxmemory-eviction-tenacity`:
//!    500 µs by default). If the policy finds nothing to evict here
//!    (`noeviction`, `volatile-*` with no key with a TTL) and the server is
//!    still over, a `denyoom` command is refused with `-OOM`; everything
//!    else runs. This bounds a write flood: no write is admitted over the
//!    limit without an eviction first.
//! 2. **From the loop**, every pass while the server is over the limit
//!    (the loop does not sleep while its last slice evicted and the server
//!    is still over, as Redis's eviction timer runs again at once; clients
//!    are served between slices): each shard frees
//!    its share of the excess, the share being its fraction of the server's
//!    keys (each shard publishes its key count in [`SHARD_KEYS`]), in one
//!    slice. So every shard gives back in proportion to what it holds, a
//!    CONFIG SET of a lower limit is reached within moments with no writes,
//!    and the shards that admit the writes do not pay for all of them.
//!
//! Evicting removes the key as a deletion does (see `store::evict`); the
//! records go to the feed like expiry's, with the transaction that holds
//! the key if any. Keys under a transaction's lock are not evicted.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};
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

/// The server's memory now, with this thread's latest allocations in it.
fn used_now() -> u64 {
    publish_thread();
    used_memory()
}

impl ShardData {
    /// Before a command: makes room if the server is over `maxmemory`
    /// (path 1 of the module docs). False: over the limit and nothing to
    /// evict here, so a `denyoom` command is refused.
    pub fn evict_before_command(&mut self) -> bool {
        let max = EVICTION.maxmemory();
        if max == 0 {
            return true;
        }
        let used = used_now();
        let over = used > max;
        note_over(over, self.now_ms);
        if !over {
            return true;
        }
        let outcome = self.evict_slice(max, u64::MAX);
        self.publish_expired();
        outcome != Slice::Failed || self.others_can_evict()
    }

    /// Whether another shard said in its last pass that it has keys the
    /// policy may evict.
    fn others_can_evict(&self) -> bool {
        let n = self.shared.nshards.min(MAX_SHARDS);
        (0..n).any(|i| i != self.id && SHARD_EVICTABLE[i].load(Relaxed))
    }

    /// From the loop: while the server is over `maxmemory`, frees this
    /// shard's share of the excess in one slice (path 2). Returns whether
    /// it evicted and the server is still over the limit, so the loop
    /// comes back at once.
    pub fn evict_in_background(&mut self) -> bool {
        // INFO's used_memory reads every shard's latest figure.
        publish_thread();
        let keys: usize = self.store.dbs.iter().map(|db| db.len()).sum();
        if let Some(slot) = SHARD_KEYS.get(self.id) {
            slot.store(keys as u64, Relaxed);
        }
        let max = EVICTION.maxmemory();
        if let Some(slot) = SHARD_EVICTABLE.get(self.id) {
            let evictable = max > 0 && self.store.has_evictable(EVICTION.policy());
            slot.store(evictable, Relaxed);
        }
        if max == 0 {
            note_over(false, self.now_ms);
            return false;
        }
        let used = used_now();
        let over = used > max;
        note_over(over, self.now_ms);
        if !over {
            return false;
        }
        let n = self.shared.nshards.min(MAX_SHARDS);
        let total: u64 = SHARD_KEYS[..n].iter().map(|k| k.load(Relaxed)).sum();
        if keys == 0 || total == 0 {
            return true;
        }
        let excess = used - max;
        let goal = (excess as u128 * keys as u128 / total as u128) as u64;
        let outcome = self.evict_slice(max, goal.max(1));
        self.publish_expired();
        // Nothing evictable here: the timer tick tries again, the loop
        // does not spin on it.
        outcome != Slice::Failed && used_now() > max
    }

    /// Evicts until the server is under `max` or `goal` bytes were freed
    /// (as this thread's figure sees them), for one slice at most.
    fn evict_slice(&mut self, max: u64, goal: u64) -> Slice {
        let policy = EVICTION.policy();
        let samples = EVICTION.samples();
        let limit_us = slice_limit_us(EVICTION.tenacity());
        let started = Instant::now();
        let start_used = used_now();
        let mut evicted = 0usize;
        loop {
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
            if !self.store.evict_one(policy, samples, self.now_ms, locked) {
                break;
            }
            evicted += 1;
            let used = used_now();
            if used <= max || start_used.saturating_sub(used) >= goal {
                return Slice::Done;
            }
            if evicted.is_multiple_of(EVICTIONS_PER_CLOCK)
                && started.elapsed().as_micros() as u64 >= limit_us
            {
                return Slice::Running;
            }
        }
        if evicted > 0 {
            Slice::Running
        } else if used_now() > max {
            Slice::Failed
        } else {
            Slice::Done
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
