//! Per-key access data for eviction: one `u32` in each entry holding
//! either Redis's LRU clock or its LFU counter, by `maxmemory-policy`.
//!
//! The word is Redis's 24-bit `lru` field, with its two meanings:
//!
//! - LRU (every policy but the LFU ones): the time of the last access,
//!   Unix seconds modulo 2^24 (194 days; an idle time across a wrap is
//!   still right, as Redis computes it).
//! - LFU (`allkeys-lfu`, `volatile-lfu`): bits 8..24 are the minute of the
//!   last decrement, modulo 2^16; bits 0..8 a logarithmic hit counter that
//!   starts at [`LFU_INIT`] so a new key is not evicted first, grows with
//!   probability `1 / ((c - LFU_INIT) * lfu-log-factor + 1)` per access, and
//!   loses one per `lfu-decay-time` minutes idle.
//!
//! As in Redis, switching policy at run time leaves the words of the old
//! meaning in place: they read as nonsense until the keys are touched again
//! (OBJECT IDLETIME and FREQ warn so in their errors).
//!
//! The word lives in the 4 bytes of the entry that held the access second
//! before, so keeping it costs no memory.

use std::cell::Cell;

use crate::config::{Policy, EVICTION};

/// Bits of the LRU clock.
const LRU_BITS: u32 = 24;
const LRU_CLOCK_MAX: u32 = (1 << LRU_BITS) - 1;

/// The counter of a new key (Redis's `LFU_INIT_VAL`).
pub const LFU_INIT: u8 = 5;

/// The LRU clock at `now_ms`: Unix seconds in 24 bits.
pub fn lru_clock(now_ms: u64) -> u32 {
    ((now_ms / 1000) as u32) & LRU_CLOCK_MAX
}

/// Milliseconds since the access an LRU word records (at seconds' grain).
pub fn lru_idle_ms(word: u32, now_ms: u64) -> u64 {
    let clock = lru_clock(now_ms);
    let word = word & LRU_CLOCK_MAX;
    let secs = if clock >= word {
        clock - word
    } else {
        // The clock wrapped since.
        clock + (LRU_CLOCK_MAX - word)
    };
    u64::from(secs) * 1000
}

/// The LRU word of a key last accessed `idle_s` seconds before `now_ms`
/// (RESTORE ... IDLETIME). An idle time reaching back past the clock's
/// start gives a word half the clock's range away, so the key reads as
/// long idle for a long while, as in Redis.
pub fn lru_with_idle(now_ms: u64, idle_s: u64) -> u32 {
    let clock = i64::from(lru_clock(now_ms));
    let at = clock - idle_s.min(i64::MAX as u64) as i64;
    if at < 0 {
        ((clock + i64::from(LRU_CLOCK_MAX / 2)) % i64::from(LRU_CLOCK_MAX)) as u32
    } else {
        at as u32
    }
}

/// The LFU clock: Unix minutes in 16 bits.
fn lfu_minutes(now_ms: u64) -> u32 {
    ((now_ms / 60_000) as u32) & 0xFFFF
}

/// The LFU word of a counter `counter` as of `now_ms`.
pub fn lfu_word(now_ms: u64, counter: u8) -> u32 {
    (lfu_minutes(now_ms) << 8) | u32::from(counter)
}

/// The counter of an LFU word after its idle decay as of `now_ms`, with
/// one decrement per `decay_min` minutes (0: none). Reads only.
pub fn lfu_decayed(word: u32, now_ms: u64, decay_min: u64) -> u8 {
    let counter = (word & 0xFF) as u8;
    if decay_min == 0 {
        return counter;
    }
    let then = (word >> 8) & 0xFFFF;
    let now = lfu_minutes(now_ms);
    let elapsed = if now >= then {
        now - then
    } else {
        // The minute clock wrapped since.
        0xFFFF - then + now
    };
    let periods = u64::from(elapsed) / decay_min;
    counter.saturating_sub(periods.min(255) as u8)
}

/// The counter after one access, given a uniform draw `r` in [0, 1).
pub fn lfu_log_incr(counter: u8, log_factor: u64, r: f64) -> u8 {
    if counter == 255 {
        return 255;
    }
    let base = counter.saturating_sub(LFU_INIT) as f64;
    let p = 1.0 / (base * log_factor as f64 + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

/// The word of a key created at `now_ms` under the current policy.
pub fn fresh(now_ms: u64) -> u32 {
    if EVICTION.policy().is_lfu() {
        lfu_word(now_ms, LFU_INIT)
    } else {
        lru_clock(now_ms)
    }
}

/// The word of a key read or written at `now_ms` whose word was `word`.
pub fn touched(word: u32, now_ms: u64) -> u32 {
    if EVICTION.policy().is_lfu() {
        let counter = lfu_decayed(word, now_ms, EVICTION.lfu_decay_time());
        lfu_word(
            now_ms,
            lfu_log_incr(counter, EVICTION.lfu_log_factor(), draw()),
        )
    } else {
        lru_clock(now_ms)
    }
}

/// The word a value stored over an existing key gets: an LFU key keeps
/// its counter (it was touched by the lookup), an LRU key is new now, as a
/// new object is in Redis.
pub fn overwritten(word: u32, now_ms: u64) -> u32 {
    if EVICTION.policy().is_lfu() {
        word
    } else {
        lru_clock(now_ms)
    }
}

/// How evictable a key is under `policy`: higher goes first. LRU: idle
/// milliseconds; LFU: 255 minus the decayed counter; volatile-ttl: the
/// nearer the deadline the higher; random: unused.
pub fn evict_score(policy: Policy, word: u32, deadline: Option<u64>, now_ms: u64) -> u64 {
    match policy {
        Policy::AllkeysLfu | Policy::VolatileLfu => {
            255 - u64::from(lfu_decayed(word, now_ms, EVICTION.lfu_decay_time()))
        }
        Policy::VolatileTtl => u64::MAX - deadline.unwrap_or(u64::MAX),
        _ => lru_idle_ms(word, now_ms),
    }
}

thread_local! {
    /// xorshift64* state for the LFU draws: statistical, not secret.
    static RNG: Cell<u64> = Cell::new(0x9E37_79B9_7F4A_7C15 ^ thread_seed());
}

fn thread_seed() -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    std::thread::current().id().hash(&mut h);
    h.finish() | 1
}

/// A uniform draw in [0, 1).
fn draw() -> f64 {
    RNG.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_idle_is_seconds_and_survives_the_clock_wrapping() {
        let now = 1_700_000_000_000;
        assert_eq!(lru_idle_ms(lru_clock(now), now), 0);
        assert_eq!(lru_idle_ms(lru_clock(now - 7_000), now), 7_000);
        let wrap_ms = u64::from(LRU_CLOCK_MAX + 1) * 1000;
        let at = (now / wrap_ms + 1) * wrap_ms - 3_000; // 3 s before a wrap
        assert_eq!(
            lru_idle_ms(lru_clock(at), at + 10_000),
            9_000,
            "Redis's off-by-one at the wrap"
        );
        assert_eq!(lru_idle_ms(lru_with_idle(now, 100), now), 100_000);
        let long = lru_with_idle(now, u64::from(LRU_CLOCK_MAX) * 2);
        assert!(lru_idle_ms(long, now) >= u64::from(LRU_CLOCK_MAX / 2 - 1) * 1000);
    }

    #[test]
    fn lfu_counters_grow_logarithmically_and_decay_by_the_minute() {
        assert_eq!(lfu_log_incr(255, 10, 0.0), 255);
        assert_eq!(
            lfu_log_incr(LFU_INIT, 10, 0.99),
            LFU_INIT + 1,
            "p = 1 at the start"
        );
        assert_eq!(lfu_log_incr(15, 10, 0.5), 15, "p = 1/101");
        assert_eq!(lfu_log_incr(15, 10, 0.009), 16);
        let now = 1_700_000_000_000;
        let word = lfu_word(now, 20);
        assert_eq!(lfu_decayed(word, now, 1), 20);
        assert_eq!(lfu_decayed(word, now + 3 * 60_000, 1), 17);
        assert_eq!(lfu_decayed(word, now + 3 * 60_000, 2), 19);
        assert_eq!(lfu_decayed(word, now + 3 * 60_000, 0), 20);
        assert_eq!(lfu_decayed(word, now + 300 * 60_000, 1), 0);
    }

    #[test]
    fn a_million_hits_reach_about_redis_s_counter() {
        // Redis's table for lfu-log-factor 10: 1M hits give 255; 1K about 18.
        let mut c = LFU_INIT;
        for _ in 0..1_000 {
            c = lfu_log_incr(c, 10, draw());
        }
        assert!((12..=25).contains(&c), "1K hits: {c}");
    }
}
