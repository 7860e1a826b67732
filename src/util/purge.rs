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
//! free pages for reuse and purges nothing. The purging thread is stopped
//! too: with nothing to purge it sleeps until woken, and every batch of
//! frees woke it (about 1,000 times a second in a storm, each a context
//! switch on the shard's core). When the last storm ends, the thread (if
//! `jemalloc-bg-thread` wants it) and then the configured decay
//! (`opt.dirty_decay_ms`, 10 s) come back, and the pages go back over that
//! time, while the shards have idle moments again. `used_memory` does not
//! change; only RSS comes down after the storm rather than during it.
//!
//! The shards only count their storms here; the memory sampler's thread
//! (`util::memory::start_memory_sampler`) pauses and resumes purging, since that
//! takes locks the purging thread may hold for milliseconds.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// Shards in storm mode now.
static STORMS: AtomicUsize = AtomicUsize::new(0);
/// `active-expire-storm-defer-purge`.
static DEFER: AtomicBool = AtomicBool::new(true);
/// `jemalloc-bg-thread`.
static BACKGROUND: AtomicBool = AtomicBool::new(true);
/// Purging is paused for a storm.
static PAUSED: AtomicBool = AtomicBool::new(false);

/// `active-expire-storm-defer-purge`.
pub fn set_defer(on: bool) {
    DEFER.store(on, Relaxed);
}

/// `jemalloc-bg-thread`: whether jemalloc returns freed memory to the OS
/// from its own thread, as Redis does by default. Without it, purging runs
/// inside whichever thread frees, so a shard reclaiming a storm would also
/// pay for handing pages back. While purging is paused the thread stays
/// stopped; it starts when purging resumes.
pub fn set_background_thread(on: bool) {
    BACKGROUND.store(on, Relaxed);
    if !PAUSED.load(Relaxed) {
        write_background_thread(on);
    }
}

fn write_background_thread(on: bool) {
    match tikv_jemalloc_ctl::background_thread::write(on) {
        // jemalloc starts its threads at their creator's priority.
        Ok(_) if on => {
            super::priority::lower_allocator_threads();
        }
        Ok(_) => {}
        Err(e) => log::warn!("could not set jemalloc's background thread to {on}: {e}"),
    }
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
/// the shards' storms say. The order keeps the shards from purging inline
/// in between: no decay before the thread stops, the thread back before
/// the decay.
pub fn follow_storms() {
    let want = wanted(DEFER.load(Relaxed), STORMS.load(Relaxed));
    if want == PAUSED.load(Relaxed) {
        return;
    }
    if want {
        set_dirty_decay_ms(-1);
        write_background_thread(false);
        PAUSED.store(true, Relaxed);
    } else if let Some(decay_ms) = configured_decay_ms() {
        PAUSED.store(false, Relaxed);
        if BACKGROUND.load(Relaxed) {
            write_background_thread(true);
        }
        set_dirty_decay_ms(decay_ms);
    }
}

/// MEMORY PURGE: every arena's unused dirty pages go back to the OS now.
/// Setting an arena's decay time, even to the one it has, counts its
/// unused dirty pages as fully decayed and purges them at once (jemalloc's
/// `arena.<i>.dirty_decay_ms`). While a storm defers purging (decay -1)
/// nothing is purged, as the storm asked.
pub fn purge_now() {
    if PAUSED.load(Relaxed) {
        return;
    }
    if let Some(decay_ms) = configured_decay_ms() {
        set_dirty_decay_ms(decay_ms);
    }
    // A storm that began meanwhile keeps its deferral (the sampler's thread
    // set -1 only once, as the storm began).
    if PAUSED.load(Relaxed) {
        set_dirty_decay_ms(-1);
    }
}

/// jemalloc's configured dirty decay (`opt.dirty_decay_ms`).
fn configured_decay_ms() -> Option<isize> {
    // SAFETY: `opt.dirty_decay_ms` is a `ssize_t`, which `isize` is on
    // every target Rust supports; the name is NUL-terminated.
    // Tested by `purging_pauses_for_a_storm_and_comes_back_to_the_configured_decay`.
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

    fn background() -> bool {
        tikv_jemalloc_ctl::background_thread::read().unwrap()
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

    // The only test that touches the globals, since tests run in parallel
    // (and none of this crate's unit tests runs a shard).
    #[test]
    fn purging_pauses_for_a_storm_and_comes_back_to_the_configured_decay() {
        let configured = configured_decay_ms().expect("jemalloc answers");
        assert_ne!(configured, -1);
        set_background_thread(true);
        assert!(background());
        let mut reported = false;
        report_storm(&mut reported, true);
        follow_storms();
        assert_eq!((arena0_decay_ms(), background()), (-1, false));
        // A CONFIG SET meanwhile (each applies every parameter) does not
        // start the thread.
        set_background_thread(true);
        assert!(!background());
        report_storm(&mut reported, false);
        follow_storms();
        assert_eq!((arena0_decay_ms(), background()), (configured, true));
        // Deferral off: a storm changes nothing.
        set_defer(false);
        report_storm(&mut reported, true);
        follow_storms();
        assert_eq!((arena0_decay_ms(), background()), (configured, true));
        report_storm(&mut reported, false);
        set_defer(true);
    }
}
