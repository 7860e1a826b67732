//! The process's memory and CPU figures: jemalloc's statistics refreshed by
//! a sampler thread (shards read the last sample, never the allocator),
//! RSS, and the CPU time getrusage reports.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

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

/// Reads jemalloc's statistics now. Refreshing them (`epoch`) takes
/// allocator locks that its purging thread may hold for milliseconds, so
/// shard threads never call this: they read what the sampler last saw.
fn sample_memory() {
    use tikv_jemalloc_ctl::{epoch, stats};
    let _ = epoch::advance();
    ALLOCATED.store(stats::allocated::read().unwrap_or(0) as u64, Relaxed);
    ACTIVE.store(stats::active::read().unwrap_or(0) as u64, Relaxed);
    RESIDENT.store(stats::resident::read().unwrap_or(0) as u64, Relaxed);
    RSS.store(rss_bytes(), Relaxed);
}

/// Starts the thread that refreshes memory figures every 100 ms (once).
pub fn start_memory_sampler() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        sample_memory();
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

/// Memory figures as of the last sample (at most 100 ms old).
pub fn memory_stats() -> MemoryStats {
    MemoryStats {
        allocated: ALLOCATED.load(Relaxed),
        active: ACTIVE.load(Relaxed),
        resident: RESIDENT.load(Relaxed),
        rss: RSS.load(Relaxed),
        peak: PEAK.load(Relaxed).max(ALLOCATED.load(Relaxed)),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
