//! No pages go back to the OS while a shard reclaims an expiry storm.
//!
//! jemalloc hands freed pages back to the OS (madvise) from its purging
//! thread, at the lowest priority (`util::priority`). Next to a shard that
//! sleeps now and then this costs the shard nothing: a shard woken by a
//! request preempts it. But a shard reclaiming a storm never sleeps (it
//! polls without waiting between slices), so the purging thread gets its
//! core only when the scheduler picks it at a tick, and then keeps it until
//! its madvise calls are done or the next tick (4 ms at HZ 250). In a 10M
//! key storm on the 2-core VM (`perf record -e sched:sched_switch -C 1`),
//! it took the shard's core 14 times in 3.7 s, for 0.35-3.6 ms each.
//!
//! So while any shard is in storm mode (`active-expire-storm-defer-purge
//! yes`, the default), every arena's dirty decay is -1: jemalloc keeps its
//! free pages for reuse and purges nothing. When the last storm ends, the
//! configured decay (`opt.dirty_decay_ms`, 10 s) comes back and the pages
//! go back over that time, while the shards have idle moments again.
//! `used_memory` does not change; only RSS comes down after the storm
//! rather than during it.
//!
//! The shards only count their storms here; the memory sampler's thread
//! (`info::start_memory_sampler`) changes the decay, since a decay change
//! takes locks the purging thread may hold for milliseconds.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// Shards in storm mode now.
static STORMS: AtomicUsize = AtomicUsize::new(0);
/// `active-expire-storm-defer-purge`.
static DEFER: AtomicBool = AtomicBool::new(true);

/// `active-expire-storm-defer-purge`.
pub fn set_defer(on: bool) {
    DEFER.store(on, Relaxed);
}

/// A shard tells whether it is in storm mode now; `reported` is what it
/// told last (so each storm counts once).
pub fn report_storm(reported: &mut bool, in_storm: bool) {
    count_storm(&STORMS, reported, in_storm);
}

fn count_storm(storms: &AtomicUsize, reported: &mut bool, in_storm: bool) {
    if *reported == in_storm {
        return;
    }
    *reported = in_storm;
    if in_storm {
        storms.fetch_add(1, Relaxed);
    } else {
        storms.fetch_sub(1, Relaxed);
    }
}

/// Whether purging should wait: deferral is on and some shard is in a storm.
fn wanted(defer: bool, storms: usize) -> bool {
    defer && storms > 0
}

/// Called by the memory sampler every round: pauses or resumes purging as
/// the shards' storms say. `paused` is the state this thread set last.
pub fn follow_storms(paused: &mut bool) {
    let want = wanted(DEFER.load(Relaxed), STORMS.load(Relaxed));
    if want == *paused {
        return;
    }
    let decay_ms = if want {
        Some(-1)
    } else {
        configured_decay_ms()
    };
    if let Some(decay_ms) = decay_ms {
        set_dirty_decay_ms(decay_ms);
        *paused = want;
    }
}

/// jemalloc's configured dirty decay (`opt.dirty_decay_ms`).
fn configured_decay_ms() -> Option<isize> {
    // SAFETY: `opt.dirty_decay_ms` is a `ssize_t`, which `isize` is on
    // every target Rust supports; the name is NUL-terminated.
    // Tested by `purging_pauses_and_comes_back_to_the_configured_decay`.
    unsafe { tikv_jemalloc_ctl::raw::read::<isize>(b"opt.dirty_decay_ms\0") }.ok()
}

/// Sets every initialised arena's dirty decay; -1 stops purging.
fn set_dirty_decay_ms(decay_ms: isize) {
    let arenas = tikv_jemalloc_ctl::arenas::narenas::read().unwrap_or(0);
    for arena in 0..arenas {
        let name = format!("arena.{arena}.dirty_decay_ms\0");
        // SAFETY: `arena.<i>.dirty_decay_ms` is a `ssize_t` (`isize`), and
        // the name is NUL-terminated; an arena not initialised yet answers
        // EFAULT, which leaves it at the default decay.
        let _ = unsafe { tikv_jemalloc_ctl::raw::write(name.as_bytes(), decay_ms) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arena0_decay_ms() -> isize {
        // SAFETY: as in `configured_decay_ms`.
        unsafe { tikv_jemalloc_ctl::raw::read::<isize>(b"arena.0.dirty_decay_ms\0") }.unwrap()
    }

    #[test]
    fn purging_waits_only_for_a_storm_when_deferral_is_on() {
        assert!(!wanted(true, 0));
        assert!(wanted(true, 2));
        assert!(!wanted(false, 2));
    }

    #[test]
    fn each_storm_counts_once() {
        let storms = AtomicUsize::new(0);
        let (mut a, mut b) = (false, false);
        count_storm(&storms, &mut a, true);
        count_storm(&storms, &mut a, true);
        count_storm(&storms, &mut b, true);
        assert_eq!(storms.load(Relaxed), 2);
        count_storm(&storms, &mut a, false);
        count_storm(&storms, &mut a, false);
        assert_eq!(storms.load(Relaxed), 1);
        assert!(!a && b);
    }

    // The only test that changes the decay: tests run in parallel.
    #[test]
    fn purging_pauses_and_comes_back_to_the_configured_decay() {
        let configured = configured_decay_ms().expect("jemalloc answers");
        assert_ne!(configured, -1);
        set_dirty_decay_ms(-1);
        assert_eq!(arena0_decay_ms(), -1);
        set_dirty_decay_ms(configured);
        assert_eq!(arena0_decay_ms(), configured);
    }
}
