//! The process's memory and CPU figures: jemalloc's statistics refreshed by
//! a sampler thread (shards read the last sample, never the allocator),
//! RSS, and the CPU time getrusage reports.
//!
//! # `used_memory` fresh at every command
//!
//! Eviction must see a write flood as it happens: at 1M SETs a second a
//! 100 ms old figure is 100k values behind. jemalloc keeps two counters per
//! thread, bytes it allocated and bytes it freed, readable as plain loads
//! through pointers it hands out once (`thread.allocatedp`,
//! `thread.deallocatedp`). So:
//!
//! 1. each thread that allocates much (the shards, the lazy-free thread)
//!    registers once ([`register_thread`]) and takes one of [`SLOTS`];
//! 2. it publishes its net figure, allocated minus freed, into its slot
//!    ([`publish_thread`]: two loads and a store) after each piece of work;
//!    a thread's net may be negative (it frees what others allocated), the
//!    sum over threads is what is live;
//! 3. the sampler, every 100 ms, sets `BASE` to jemalloc's total (less what
//!    sits freed in thread caches, which the counters count as freed) minus
//!    the sum of the slots, which covers what unregistered threads hold;
//! 4. [`used_memory`] is `BASE` plus the sum of the slots: as fresh as the
//!    latest publish of every shard, for a load per slot in use.

use std::cell::Cell;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize};

/// Threads that may publish a net allocation figure; more go uncounted
/// until the next sample.
const MAX_SLOTS: usize = 1024;

/// Each registered thread's net allocation (allocated minus freed), bytes.
static SLOTS: [AtomicI64; MAX_SLOTS] = [const { AtomicI64::new(0) }; MAX_SLOTS];
/// Slots handed out so far.
static SLOTS_USED: AtomicUsize = AtomicUsize::new(0);
/// jemalloc's total less the slots' sum, as of the last sample.
static BASE: AtomicI64 = AtomicI64::new(0);

/// This thread's jemalloc counters and slot, once registered.
struct ThreadCounters {
    allocated: tikv_jemalloc_ctl::thread::ThreadLocal<u64>,
    deallocated: tikv_jemalloc_ctl::thread::ThreadLocal<u64>,
    slot: usize,
}

thread_local! {
    static COUNTERS: Cell<Option<ThreadCounters>> = const { Cell::new(None) };
}

impl Clone for ThreadCounters {
    fn clone(&self) -> Self {
        ThreadCounters {
            allocated: self.allocated,
            deallocated: self.deallocated,
            slot: self.slot,
        }
    }
}

/// Gives the calling thread a slot to publish its net allocation into
/// (see the module docs); once per thread, later calls change nothing.
pub fn register_thread() {
    COUNTERS.with(|c| {
        let current = c.take();
        if current.is_some() {
            c.set(current);
            return;
        }
        let (Ok(allocated), Ok(deallocated)) = (
            tikv_jemalloc_ctl::thread::allocatedp::read(),
            tikv_jemalloc_ctl::thread::deallocatedp::read(),
        ) else {
            return;
        };
        let slot = SLOTS_USED.fetch_add(1, Relaxed);
        if slot >= MAX_SLOTS {
            return;
        }
        c.set(Some(ThreadCounters {
            allocated,
            deallocated,
            slot,
        }));
    });
    publish_thread();
}

/// Publishes the calling thread's net allocation, if it registered, and
/// returns it (0 unregistered).
pub fn publish_thread() -> i64 {
    COUNTERS.with(|c| {
        let Some(t) = c.take() else { return 0 };
        let net = t.allocated.get().wrapping_sub(t.deallocated.get()) as i64;
        SLOTS[t.slot].store(net, Relaxed);
        c.set(Some(t));
        net
    })
}

fn slots_sum() -> i64 {
    let used = SLOTS_USED.load(Relaxed).min(MAX_SLOTS);
    SLOTS[..used]
        .iter()
        .fold(0i64, |sum, s| sum.wrapping_add(s.load(Relaxed)))
}

/// The server's `used_memory`, bytes: the last sample corrected by every
/// registered thread's latest publish (see the module docs).
pub fn used_memory() -> u64 {
    BASE.load(Relaxed).wrapping_add(slots_sum()).max(0) as u64
}

/// jemalloc's statistics report (MEMORY MALLOC-STATS), as its
/// `malloc_stats_print` writes it.
pub fn allocator_report() -> Vec<u8> {
    let mut out = Vec::new();
    let options = tikv_jemalloc_ctl::stats_print::Options::default();
    if tikv_jemalloc_ctl::stats_print::stats_print(&mut out, options).is_err() {
        out = b"Stats not supported for the current allocator".to_vec();
    }
    out
}

/// The machine's memory (`MemTotal` of /proc/meminfo), 0 where unknown.
pub fn total_system_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0)
}

/// Jemalloc's view of memory, in bytes.
pub struct MemoryStats {
    pub allocated: u64,
    pub active: u64,
    pub resident: u64,
    /// The process's resident set, from /proc.
    pub rss: u64,
    /// The most ever allocated (as of a sample, or now if more).
    pub peak: u64,
}

/// The latest figures of the memory sampler (see `start_memory_sampler`).
static ALLOCATED: AtomicU64 = AtomicU64::new(0);
static ACTIVE: AtomicU64 = AtomicU64::new(0);
static RESIDENT: AtomicU64 = AtomicU64::new(0);
static RSS: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
/// What was allocated when the sampler started, with the shards, before
/// any data was loaded (Redis's `used_memory_startup`).
static STARTUP: AtomicU64 = AtomicU64::new(0);

/// Reads jemalloc's statistics now. Refreshing them (`epoch`) takes
/// allocator locks that its purging thread may hold for milliseconds, so
/// shard threads never call this: they read what the sampler last saw.
fn sample_memory() {
    use tikv_jemalloc_ctl::{epoch, stats};
    let _ = epoch::advance();
    let allocated = stats::allocated::read().unwrap_or(0) as u64;
    ALLOCATED.store(allocated, Relaxed);
    // jemalloc counts what sits freed in the threads' caches as allocated;
    // the per-thread counters count it as freed. Without this the figure
    // rose by up to the caches' content (hundreds of KiB) at every sample,
    // and eviction freed that much more than it had to.
    use tikv_jemalloc_ctl::{Access, AsName};
    let cached: usize = b"stats.arenas.4096.tcache_bytes\0"
        .name()
        .read()
        .unwrap_or(0);
    let in_use = allocated.saturating_sub(cached as u64);
    BASE.store((in_use as i64).wrapping_sub(slots_sum()), Relaxed);
    ACTIVE.store(stats::active::read().unwrap_or(0) as u64, Relaxed);
    RESIDENT.store(stats::resident::read().unwrap_or(0) as u64, Relaxed);
    RSS.store(rss_bytes(), Relaxed);
}

/// Starts the thread that refreshes memory figures every 100 ms (once).
pub fn start_memory_sampler() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        sample_memory();
        STARTUP.store(used_memory(), Relaxed);
        let spawned = std::thread::Builder::new()
            .name("ember-memstats".into())
            .spawn(move || {
                crate::util::priority::lower_current_thread();
                for round in 0u64.. {
                    sample_memory();
                    crate::util::purge::follow_storms();
                    PEAK.fetch_max(ALLOCATED.load(Relaxed), Relaxed);
                    // jemalloc starts purging threads as it needs them.
                    if round.is_multiple_of(10) {
                        crate::util::priority::lower_allocator_threads();
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            });
        if let Err(e) = spawned {
            log::warn!("could not start the memory sampler: {e}");
        }
    });
}

/// Memory figures as of the last sample (at most 100 ms old), but for
/// `allocated`, which is [`used_memory`] now.
pub fn memory_stats() -> MemoryStats {
    let allocated = used_memory();
    PEAK.fetch_max(allocated, Relaxed);
    MemoryStats {
        allocated,
        active: ACTIVE.load(Relaxed),
        resident: RESIDENT.load(Relaxed),
        rss: RSS.load(Relaxed),
        peak: PEAK.load(Relaxed).max(allocated),
    }
}

/// The memory allocated at start-up (see `STARTUP`).
pub fn startup_allocated() -> u64 {
    STARTUP.load(Relaxed)
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Redis's human-readable sizes: 1.23M etc.
pub fn human_bytes(n: u64) -> String {
    let n = n as f64;
    let units = [
        ("B", 1.0),
        ("K", 1024.0),
        ("M", 1024.0 * 1024.0),
        ("G", 1024.0 * 1024.0 * 1024.0),
    ];
    let (unit, size) = units
        .iter()
        .rev()
        .find(|(_, s)| n >= *s)
        .copied()
        .unwrap_or(("B", 1.0));
    if unit == "B" {
        format!("{}B", n as u64)
    } else {
        format!("{:.2}{unit}", n / size)
    }
}

pub fn cpu_times() -> (f64, f64) {
    // SAFETY: `rusage` is plain old data (integers and timevals), so all-zero
    // bytes are a valid value; getrusage only writes into the struct we pass
    // by a valid exclusive reference, and RUSAGE_SELF is a valid target.
    // Tested by `cpu_times_read_this_process`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0;
    if !ok {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_stime), secs(usage.ru_utime))
}

/// (system, user) CPU seconds of the process's main thread (its thread id
/// is the process id), from `/proc/self/task/<pid>/stat`; zeros where it
/// cannot be read.
pub fn main_thread_cpu_times() -> (f64, f64) {
    let path = format!("/proc/self/task/{}/stat", std::process::id());
    std::fs::read_to_string(path).map_or((0.0, 0.0), |text| stat_cpu_times(&text))
}

/// (system, user) seconds of a `/proc/.../stat` line: after the `(comm)`
/// field, which may hold spaces and parentheses, utime and stime are the
/// 12th and 13th fields, in clock ticks (USER_HZ, 100 on Linux).
fn stat_cpu_times(text: &str) -> (f64, f64) {
    let fields: Vec<&str> = text
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let secs = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 100.0
    };
    (secs(12), secs(11))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_system_and_user_seconds() {
        let line =
            "4242 (ember shard (0)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0 1 2 3";
        assert_eq!(stat_cpu_times(line), (0.75, 2.5));
        assert_eq!(stat_cpu_times("garbage"), (0.0, 0.0));
        let (sys, user) = main_thread_cpu_times();
        assert!(sys >= 0.0 && user >= 0.0);
    }

    #[test]
    fn cpu_times_read_this_process() {
        // Exercises the getrusage call: the figures are sane and grow with work.
        let (sys0, user0) = cpu_times();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let (sys1, user1) = cpu_times();
        assert!(sys0 >= 0.0 && user0 >= 0.0);
        assert!(sys1 + user1 > sys0 + user0, "CPU time did not grow");
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(512), "512B");
        assert_eq!(human_bytes(1536), "1.50K");
        assert_eq!(human_bytes(3 * 1024 * 1024), "3.00M");
    }
}
