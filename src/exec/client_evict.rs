//! Client eviction (`maxmemory-clients`, Redis 7.0): when the memory of all
//! clients together passes the limit, the clients using the most are
//! disconnected until the total is within it again.
//!
//! # Summing over shards
//!
//! A client lives on the shard that accepted it, and only that shard's
//! thread may touch it. Each shard publishes what its clients hold in
//! atomics of its own, written only by its thread:
//!
//! - [`SHARD_TOTAL`]: the memory of its clients that count (Redis counts
//!   normal and Pub/Sub clients, `CLIENT NO-EVICT` ones included; a
//!   replica's master link does not count, and replicas are served by
//!   threads of their own, outside the shards);
//! - [`BUCKETS`]: the same memory, of the clients that may be evicted
//!   only, by size class: Redis's memory-usage buckets, powers of two from
//!   32 KiB ([`bucket_of`]).
//!
//! A client's figure is worked out again (CLIENT LIST's `tot-mem`: a few
//! lengths, nothing allocates) after each read of its socket, after each
//! of its commands, after a push or Pub/Sub message reaches it and after
//! its output is written; the atomics move only when it changed. The
//! server's total is the sum of the shards' [`SHARD_TOTAL`]: a load per
//! shard, only when a limit is set.
//!
//! # Who disconnects whom
//!
//! The shard whose client just grew, or any shard asked by CONFIG SET,
//! finds the total over the limit and makes a plan under [`PLAN`]:
//! the excess, less what shards already owe ([`OWED`]), is assigned to
//! the shards holding the largest clients, walking the buckets from the
//! largest down over every shard (an owing shard's largest clients are
//! already spoken for). It then pays its own part at once, closing its
//! own largest evictable clients first, and wakes the shards that owe a
//! part with a message; each pays from its loop, before its next message,
//! so a CLIENT LIST that follows the eviction's cause sees the clients
//! gone. A shard stops paying once the total is within the limit again,
//! whoever brought it there. Evicting whole clients, a shard frees more
//! than it owed by at most one client, as Redis does.
//!
//! A client being closed for its output buffer limit counts for nothing
//! (it goes at the end of the pass anyway), so an output-limit close is
//! never doubled by an eviction of another client, as in Redis.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicI64, AtomicU64};
use std::sync::Mutex;

use crate::config::{CLIENTS_PERCENT, EVICTION};

const MAX_SHARDS: usize = 1024;

/// Redis's buckets: the first holds clients under 32 KiB
/// (CLIENT_MEM_USAGE_BUCKET_MIN_LOG 15), the last those of 4 GiB and more
/// (MAX_LOG 33).
const MIN_LOG: u32 = 15;
const MAX_LOG: u32 = 33;
pub const BUCKET_COUNT: usize = (MAX_LOG - MIN_LOG + 1) as usize;

/// Redis's floor on the limit (`getClientEvictionLimit`): a smaller one
/// would leave no room to talk to the server at all.
const LIMIT_FLOOR: u64 = 128 * 1024;

/// What each shard's counted clients hold, bytes.
static SHARD_TOTAL: [AtomicU64; MAX_SHARDS] = [const { AtomicU64::new(0) }; MAX_SHARDS];

/// What each shard's evictable clients hold, by bucket.
static BUCKETS: [[AtomicU64; BUCKET_COUNT]; MAX_SHARDS] =
    [const { [const { AtomicU64::new(0) }; BUCKET_COUNT] }; MAX_SHARDS];

/// Bytes of clients each shard was told to evict and has not yet.
static OWED: [AtomicI64; MAX_SHARDS] = [const { AtomicI64::new(0) }; MAX_SHARDS];

/// Plans and payments, one shard at a time: two shards planning at once
/// would both assign the same excess. Taken only over the limit.
static PLAN: Mutex<()> = Mutex::new(());

/// INFO `evicted_clients`.
static EVICTED: AtomicU64 = AtomicU64::new(0);

/// The limit in bytes now (0: off): `maxmemory-clients`, or its
/// percentage of `maxmemory` (off while `maxmemory` is 0), never under
/// 128 KiB, as Redis's `getClientEvictionLimit`.
pub fn limit() -> u64 {
    let raw = EVICTION.maxmemory_clients.load(Relaxed);
    let bytes = if raw & CLIENTS_PERCENT != 0 {
        let pct = raw & !CLIENTS_PERCENT;
        (EVICTION.maxmemory() as u128 * pct as u128 / 100) as u64
    } else {
        raw
    };
    if bytes == 0 {
        0
    } else {
        bytes.max(LIMIT_FLOOR)
    }
}

/// The bucket of a client holding `mem` bytes (Redis's
/// `getMemUsageBucket`: its bit length, clamped to the buckets' range).
pub fn bucket_of(mem: usize) -> usize {
    let bits = usize::BITS - mem.leading_zeros();
    (bits.clamp(MIN_LOG, MAX_LOG) - MIN_LOG) as usize
}

/// How a client counts: not at all, in the total only (`CLIENT NO-EVICT`),
/// or in the total and in its bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Counted {
    #[default]
    No,
    Protected,
    Evictable,
}

/// One client's share of its shard's figures, as last published.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Share {
    pub mem: usize,
    pub counted: Counted,
}

/// Moves shard `shard`'s figures from a client's old share to its new one.
pub fn publish(shard: usize, old: Share, new: Share) {
    if old == new || shard >= MAX_SHARDS {
        return;
    }
    let counts = |s: Share| {
        if s.counted == Counted::No {
            0
        } else {
            s.mem as u64
        }
    };
    let total = &SHARD_TOTAL[shard];
    let (was, now) = (counts(old), counts(new));
    if now >= was {
        total.fetch_add(now - was, Relaxed);
    } else {
        total.fetch_sub(was - now, Relaxed);
    }
    if old.counted == Counted::Evictable {
        BUCKETS[shard][bucket_of(old.mem)].fetch_sub(old.mem as u64, Relaxed);
    }
    if new.counted == Counted::Evictable {
        BUCKETS[shard][bucket_of(new.mem)].fetch_add(new.mem as u64, Relaxed);
    }
}

/// What the counted clients of the first `nshards` shards hold together.
pub fn total(nshards: usize) -> u64 {
    SHARD_TOTAL[..nshards.min(MAX_SHARDS)]
        .iter()
        .map(|t| t.load(Relaxed))
        .sum()
}

/// Whether the clients are over a limit now (at it is still allowed: a
/// limit set to what the clients hold evicts none).
pub fn over(nshards: usize) -> bool {
    let limit = limit();
    limit > 0 && total(nshards) > limit
}

/// INFO `evicted_clients`, and its reset (CONFIG RESETSTAT).
pub fn evicted() -> u64 {
    EVICTED.load(Relaxed)
}

pub fn reset_stats() {
    EVICTED.store(0, Relaxed);
}

/// A shard's turn at eviction: holds [`PLAN`] while it plans and pays.
pub struct Turn {
    _guard: std::sync::MutexGuard<'static, ()>,
    me: usize,
    nshards: usize,
    limit: u64,
}

impl Turn {
    /// Takes the turn for shard `me`; None while no limit is set.
    pub fn take(me: usize, nshards: usize) -> Option<Turn> {
        let limit = limit();
        if limit == 0 || me >= MAX_SHARDS {
            return None;
        }
        let guard = PLAN.lock().unwrap_or_else(|p| p.into_inner());
        Some(Turn {
            _guard: guard,
            me,
            nshards: nshards.min(MAX_SHARDS),
            limit,
        })
    }

    /// Assigns the excess no shard owes yet, largest clients first (see
    /// the module docs); returns the other shards that now owe more, to
    /// be woken.
    pub fn plan(&self) -> Vec<usize> {
        let n = self.nshards;
        let total = total(n);
        if total <= self.limit {
            return Vec::new();
        }
        let owed: Vec<u64> = OWED[..n]
            .iter()
            .map(|o| o.load(Relaxed).max(0) as u64)
            .collect();
        let mut excess = (total - self.limit).saturating_sub(owed.iter().sum());
        let mut reserved = owed;
        let mut add = vec![0u64; n];
        'buckets: for b in (0..BUCKET_COUNT).rev() {
            for s in 0..n {
                if excess == 0 {
                    break 'buckets;
                }
                let mut held = BUCKETS[s][b].load(Relaxed);
                let spoken = held.min(reserved[s]);
                held -= spoken;
                reserved[s] -= spoken;
                let take = held.min(excess);
                add[s] += take;
                excess -= take;
            }
        }
        let mut woken = Vec::new();
        for (s, &bytes) in add.iter().enumerate() {
            if bytes > 0 {
                OWED[s].fetch_add(bytes as i64, Relaxed);
                if s != self.me {
                    woken.push(s);
                }
            }
        }
        woken
    }

    /// What this shard owes now, bytes.
    pub fn owed(&self) -> u64 {
        OWED[self.me].load(Relaxed).max(0) as u64
    }

    /// Whether the shard may stop: it paid what it owed, or the clients
    /// are within the limit again.
    pub fn settled(&self, freed: u64) -> bool {
        freed >= self.owed() || total(self.nshards) <= self.limit
    }

    /// Records a payment of `freed` bytes in `clients` clients; `done`:
    /// nothing more is owed here (the total is within the limit, or the
    /// shard has no evictable client left).
    pub fn paid(&self, freed: u64, clients: u64, done: bool) {
        EVICTED.fetch_add(clients, Relaxed);
        let owed = &OWED[self.me];
        if done || total(self.nshards) <= self.limit {
            owed.store(0, Relaxed);
        } else {
            let _ = owed.fetch_update(Relaxed, Relaxed, |o| Some((o - freed as i64).max(0)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_redis_powers_of_two() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(32 * 1024 - 1), 0);
        assert_eq!(bucket_of(32 * 1024), 1);
        assert_eq!(bucket_of(64 * 1024 - 1), 1);
        assert_eq!(bucket_of(1 << 20), 6);
        assert_eq!(bucket_of(usize::MAX), BUCKET_COUNT - 1);
    }
}
