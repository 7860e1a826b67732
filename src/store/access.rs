//! Per-key access data for eviction: one `u32` in each entry holding
//! either Redis's LRU clock or its LFU counter, by `maxmemory-policy`.
//!
//! The word is Redis's `lru` field, with its two meanings:
//!
//! - LRU (every policy but the LFU ones): the time of the last access, in
//!   10 ms ticks modulo 2^32 (Redis keeps seconds modulo 2^24: see
//!   [`lru_clock`]); an idle time across a wrap is still right.
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

/// The LRU clock's tick, ms. Redis ticks once a second in 24 bits (a wrap
/// every 194 days); ember has the whole word for it, so 10 ms ticks wrap
/// only every 497 days and tell apart keys read within the same second (a
/// hot set read every 50 ms from cold keys written a few hundred ms ago).
const LRU_TICK_MS: u64 = 10;

/// Idle times up to this many ticks are told exactly (half the clock's
/// range: 248 days); a RESTORE IDLETIME beyond it is kept as this.
const LRU_MAX_IDLE_TICKS: u32 = 1 << 31;

/// The counter of a new key (Redis's `LFU_INIT_VAL`).
pub const LFU_INIT: u8 = 5;

/// The LRU clock at `now_ms`.
pub fn lru_clock(now_ms: u64) -> u32 {
    (now_ms / LRU_TICK_MS) as u32
}

/// Milliseconds since the access an LRU word records (at the clock's tick).
pub fn lru_idle_ms(word: u32, now_ms: u64) -> u64 {
    // Wrapping: a word from before the clock wrapped is still behind it.
    u64::from(lru_clock(now_ms).wrapping_sub(word)) * LRU_TICK_MS
}

/// Redis's 24-bit, one-second LRU clock for the word as of `now_ms`
/// (DEBUG OBJECT's `lru:`).
pub fn lru_seconds_clock(word: u32, now_ms: u64) -> u32 {
    let at_s = now_ms.saturating_sub(lru_idle_ms(word, now_ms)) / 1000;
    (at_s as u32) & 0xFF_FFFF
}

/// The LRU word of a key last accessed `idle_s` seconds before `now_ms`
/// (RESTORE ... IDLETIME); at most [`LRU_MAX_IDLE_TICKS`] back.
pub fn lru_with_idle(now_ms: u64, idle_s: u64) -> u32 {
    let ticks = idle_s
        .saturating_mul(1000 / LRU_TICK_MS)
        .min(u64::from(LRU_MAX_IDLE_TICKS)) as u32;
    lru_clock(now_ms).wrapping_sub(ticks)
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

/// How evictable a key is under `allkeys-tinylfu`: fewer recent requests
/// (`store::tinylfu`, 0..=15) go first, and among equals the longer idle.
pub fn tinylfu_score(requests: u8, word: u32, now_ms: u64) -> u64 {
    const IDLE_BITS: u32 = 48;
    let idle = lru_idle_ms(word, now_ms).min((1 << IDLE_BITS) - 1);
    (u64::from(15u8.saturating_sub(requests)) << IDLE_BITS) | idle
}

thread_local! {
    /// xorshift64* state for the LFU draws: statistical, not secret.
    static RNG: Cell<u64> = Cell::new(splitmix(thread_seed()));
}

/// One splitmix64 step: spreads a seed's bits over the whole state.
fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) | 1
}

fn thread_seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(std::thread::current().id()) | 1
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
    fn lru_idle_survives_the_clock_wrapping() {
        let now = 1_700_000_000_000;
        assert_eq!(lru_idle_ms(lru_clock(now), now), 0);
        assert_eq!(lru_idle_ms(lru_clock(now - 7_000), now), 7_000);
        assert_eq!(lru_idle_ms(lru_clock(now - 50), now), 50, "10 ms ticks");
        let wrap_ms = (1u64 << 32) * LRU_TICK_MS;
        let at = (now / wrap_ms + 1) * wrap_ms - 3_000; // 3 s before a wrap
        assert_eq!(lru_idle_ms(lru_clock(at), at + 10_000), 10_000);
        assert_eq!(lru_idle_ms(lru_with_idle(now, 100), now), 100_000);
        let long = lru_with_idle(now, u64::MAX);
        assert_eq!(
            lru_idle_ms(long, now),
            u64::from(LRU_MAX_IDLE_TICKS) * LRU_TICK_MS
        );
        assert_eq!(
            lru_seconds_clock(lru_clock(now), now),
            ((now / 1000) as u32) & 0xFF_FFFF
        );
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
        // Redis's table for lfu-log-factor 10: 1K hits give about 18, 100K
        // about 142.
        let mut c = LFU_INIT;
        for _ in 0..1_000 {
            c = lfu_log_incr(c, 10, draw());
        }
        assert!((13..=24).contains(&c), "1K hits: {c}");
    }

    #[test]
    fn tinylfu_scores_requests_first_and_idle_time_among_equals() {
        let now = 1_700_000_000_000;
        let (old, new) = (lru_clock(now - 60_000), lru_clock(now));
        assert!(tinylfu_score(1, new, now) > tinylfu_score(2, old, now));
        assert!(tinylfu_score(3, old, now) > tinylfu_score(3, new, now));
        assert!(tinylfu_score(15, old, now) < tinylfu_score(0, new, now));
    }
}
