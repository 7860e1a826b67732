//! INFO: per-shard counters kept beside the code that moves them, gathered
//! from every shard into Redis's sections and field names.

use std::fmt::Write as _;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use hdrhistogram::Histogram;

use crate::cmd::{ShardData, COMMANDS};
use crate::shard::Shared;
use crate::store::ExpiryStats;

/// Calls, time and latency of one command on one shard.
#[derive(Clone)]
pub struct CmdStat {
    pub calls: u64,
    pub usec: u64,
    pub failed: u64,
    /// Microseconds per call (INFO latencystats).
    pub latency: Histogram<u64>,
}

impl Default for CmdStat {
    fn default() -> Self {
        CmdStat {
            calls: 0,
            usec: 0,
            failed: 0,
            latency: Histogram::new_with_bounds(1, 1_000_000_000, 2).expect("static bounds"),
        }
    }
}

/// One shard's per-command statistics, by command id (`CommandSpec::id`):
/// every request records into them, so no hashing.
#[derive(Default, Clone)]
pub struct CommandStats(Vec<Option<CmdStat>>);

impl CommandStats {
    fn entry(&mut self, id: usize) -> &mut CmdStat {
        if self.0.len() <= id {
            self.0.resize_with(id + 1, || None);
        }
        self.0[id].get_or_insert_with(CmdStat::default)
    }

    /// The commands called so far with their statistics, by name.
    pub fn by_name(&self) -> Vec<(&'static str, &CmdStat)> {
        let mut called: Vec<(&'static str, &CmdStat)> = self
            .0
            .iter()
            .enumerate()
            .filter_map(|(id, stat)| Some((COMMANDS[id].name, stat.as_ref()?)))
            .collect();
        called.sort_by_key(|(name, _)| *name);
        called
    }

    fn merge(&mut self, other: &CommandStats) {
        for (id, stat) in other.0.iter().enumerate() {
            if let Some(stat) = stat {
                let mine = self.entry(id);
                mine.calls += stat.calls;
                mine.usec += stat.usec;
                mine.failed += stat.failed;
                let _ = mine.latency.add(&stat.latency);
            }
        }
    }
}

/// Counters one shard's loop moves.
#[derive(Default, Clone)]
pub struct ShardCounters {
    pub commands: CommandStats,
    pub commands_processed: u64,
    pub net_input_bytes: u64,
    pub net_output_bytes: u64,
    /// Commands processed at the last ops/sec sample, and the rate then.
    pub ops_at_sample: u64,
    pub ops_per_sec: u64,
}

impl ShardCounters {
    /// The totals without the per-command table.
    pub fn clone_totals(&self) -> ShardCounters {
        ShardCounters {
            commands: CommandStats::default(),
            ..*self
        }
    }

    /// Counts a call of the command `id` (`CommandSpec::id`).
    pub fn record(&mut self, id: usize, usec: u64, failed: bool) {
        self.commands_processed += 1;
        let stat = self.commands.entry(id);
        stat.calls += 1;
        stat.usec += usec;
        stat.failed += failed as u64;
        stat.latency.saturating_record(usec.max(1));
    }

    fn merge(&mut self, other: &ShardCounters) {
        self.commands.merge(&other.commands);
        self.commands_processed += other.commands_processed;
        self.net_input_bytes += other.net_input_bytes;
        self.net_output_bytes += other.net_output_bytes;
        self.ops_per_sec += other.ops_per_sec;
    }
}

/// What one shard reports for INFO.
pub struct ShardReport {
    pub shard: usize,
    /// Per database: (keys, volatile keys, avg_ttl ms).
    pub dbs: Vec<(usize, usize, f64)>,
    pub expiry: ExpiryStats,
    pub counters: ShardCounters,
    /// What the shard's clients hold (`ShardData::clients_mem`).
    pub clients_mem: u64,
}

impl ShardReport {
    /// `with_commands`: copy the per-command statistics too (commandstats,
    /// latencystats); they are the costly part, so only when asked for.
    pub fn of(data: &ShardData, with_commands: bool) -> ShardReport {
        let mut counters = data.counters.clone_totals();
        if with_commands {
            counters.commands = data.counters.commands.clone();
        }
        ShardReport {
            shard: data.id,
            dbs: data
                .store
                .dbs
                .iter()
                .map(|db| (db.len(), db.volatile_len(), db.avg_ttl_ms))
                .collect(),
            expiry: data.store.stats.clone(),
            counters,
            clients_mem: data.clients_mem,
        }
    }
}

/// Jemalloc's view of memory, in bytes.
pub struct MemoryStats {
    pub allocated: u64,
    pub active: u64,
    pub resident: u64,
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

fn cpu_times() -> (f64, f64) {
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

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "keyspace",
];
const ALL_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "commandstats",
    "latencystats",
    "shards",
    "keyspace",
];

/// Which sections INFO's arguments ask for.
pub fn sections_for(args: &[String]) -> Vec<&'static str> {
    if args.is_empty() || args.iter().any(|a| a == "default") {
        return DEFAULT_SECTIONS.to_vec();
    }
    if args.iter().any(|a| a == "all" || a == "everything") {
        return ALL_SECTIONS.to_vec();
    }
    ALL_SECTIONS
        .iter()
        .copied()
        .filter(|s| args.iter().any(|a| a == s))
        .collect()
}

/// Builds the INFO text from every shard's report.
pub fn render(shared: &Shared, reports: &[ShardReport], sections: &[&str]) -> String {
    let mut expiry = ExpiryStats::default();
    let mut counters = ShardCounters::default();
    for r in reports {
        expiry.merge(&r.expiry);
        counters.merge(&r.counters);
    }
    let config = shared.config.read().expect("config lock").clone();
    let mut out = String::new();
    for section in sections {
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        let title = match *section {
            "cpu" => "CPU".to_string(),
            s => format!("{}{}", s[..1].to_ascii_uppercase(), &s[1..]),
        };
        let _ = write!(out, "# {title}\r\n");
        let mut line = |k: &str, v: String| {
            let _ = write!(out, "{k}:{v}\r\n");
        };
        match *section {
            "server" => {
                let uptime = shared.started.elapsed().as_secs();
                line("redis_version", "7.0.15".into());
                line("ember_version", env!("CARGO_PKG_VERSION").into());
                line("redis_mode", "standalone".into());
                line(
                    "os",
                    format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
                );
                line("arch_bits", (usize::BITS).to_string());
                line("multiplexing_api", "epoll".into());
                line("process_id", std::process::id().to_string());
                line("tcp_port", config.port.to_string());
                line("uptime_in_seconds", uptime.to_string());
                line("uptime_in_days", (uptime / 86_400).to_string());
                line("hz", config.hz.to_string());
                line("configured_hz", config.hz.to_string());
                line("shards", shared.nshards.to_string());
                line("io_threads_active", "0".into());
                line(
                    "executable",
                    std::env::current_exe()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                );
                line(
                    "config_file",
                    config
                        .config_file
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                );
            }
            "clients" => {
                line(
                    "connected_clients",
                    shared.counters.connected_clients.load(Relaxed).to_string(),
                );
                line("maxclients", config.maxclients.to_string());
                line(
                    "blocked_clients",
                    shared.counters.blocked_clients.load(Relaxed).to_string(),
                );
                line("pubsub_clients", "0".into());
            }
            "memory" => {
                let mem = memory_stats();
                let peak = PEAK.load(Relaxed).max(mem.allocated);
                let rss = RSS.load(Relaxed);
                line("used_memory", mem.allocated.to_string());
                line("used_memory_human", human_bytes(mem.allocated));
                line("used_memory_rss", rss.to_string());
                line("used_memory_rss_human", human_bytes(rss));
                line("used_memory_peak", peak.to_string());
                line("used_memory_peak_human", human_bytes(peak));
                line("allocator_allocated", mem.allocated.to_string());
                line("allocator_active", mem.active.to_string());
                line("allocator_resident", mem.resident.to_string());
                line("maxmemory", "0".into());
                line("maxmemory_policy", "noeviction".into());
                // No replicas yet; every client is a normal one (Redis
                // counts Pub/Sub clients there too).
                line("mem_clients_slaves", "0".into());
                let clients: u64 = reports.iter().map(|r| r.clients_mem).sum();
                line("mem_clients_normal", clients.to_string());
                line("mem_allocator", "jemalloc".into());
                // Redis 7.0 lists both here, in the memory section.
                line(
                    "lazyfree_pending_objects",
                    crate::util::lazyfree::pending_objects().to_string(),
                );
                line(
                    "lazyfreed_objects",
                    crate::util::lazyfree::freed_objects().to_string(),
                );
            }
            "persistence" => {
                line("loading", "0".into());
                line("rdb_changes_since_last_save", "0".into());
                line("aof_enabled", "0".into());
            }
            "stats" => {
                let c = &shared.counters;
                line(
                    "total_connections_received",
                    c.total_connections.load(Relaxed).to_string(),
                );
                line(
                    "total_commands_processed",
                    counters.commands_processed.to_string(),
                );
                line(
                    "instantaneous_ops_per_sec",
                    counters.ops_per_sec.to_string(),
                );
                line(
                    "total_net_input_bytes",
                    counters.net_input_bytes.to_string(),
                );
                line(
                    "total_net_output_bytes",
                    counters.net_output_bytes.to_string(),
                );
                line(
                    "rejected_connections",
                    c.rejected_connections.load(Relaxed).to_string(),
                );
                // Redis 7.4 lists expired hash fields just before expired keys.
                line("expired_subkeys", expiry.expired_subkeys.to_string());
                line("expired_keys", expiry.expired_keys.to_string());
                line("expired_stale_perc", format!("{:.2}", expiry.stale_perc));
                line(
                    "expired_time_cap_reached_count",
                    expiry.time_cap_reached.to_string(),
                );
                line(
                    "expire_cycle_cpu_milliseconds",
                    (expiry.cycle_cpu_us / 1000).to_string(),
                );
                line("evicted_keys", "0".into());
                line("keyspace_hits", expiry.hits.to_string());
                line("keyspace_misses", expiry.misses.to_string());
                line(
                    "expire_lag_p50_ms",
                    expiry.lag_ms.value_at_quantile(0.5).to_string(),
                );
                line(
                    "expire_lag_p99_ms",
                    expiry.lag_ms.value_at_quantile(0.99).to_string(),
                );
                line("expire_lag_max_ms", expiry.lag_ms.max().to_string());
                line("expire_slices", expiry.slices.to_string());
                line("expire_slice_max_us", expiry.slice_max_us.to_string());
            }
            "replication" => {
                line("role", "master".into());
                line("connected_slaves", "0".into());
            }
            "cpu" => {
                let (sys, user) = cpu_times();
                line("used_cpu_sys", format!("{sys:.6}"));
                line("used_cpu_user", format!("{user:.6}"));
            }
            "commandstats" => {
                for (name, s) in counters.commands.by_name() {
                    let per_call = if s.calls > 0 {
                        s.usec as f64 / s.calls as f64
                    } else {
                        0.0
                    };
                    line(
                        &format!("cmdstat_{name}"),
                        format!("calls={},usec={},usec_per_call={per_call:.2},rejected_calls=0,failed_calls={}", s.calls, s.usec, s.failed),
                    );
                }
            }
            "latencystats" => {
                for (name, s) in counters.commands.by_name() {
                    let q = |p: f64| s.latency.value_at_quantile(p) as f64;
                    line(
                        &format!("latency_percentiles_usec_{name}"),
                        format!("p50={:.3},p99={:.3},p99.9={:.3}", q(0.5), q(0.99), q(0.999)),
                    );
                }
            }
            "shards" => {
                for r in reports {
                    let keys: usize = r.dbs.iter().map(|d| d.0).sum();
                    let volatile: usize = r.dbs.iter().map(|d| d.1).sum();
                    line(
                        &format!("shard{}", r.shard),
                        format!(
                            "keys={keys},expires={volatile},expired_keys={},expire_slice_max_us={},commands={}",
                            r.expiry.expired_keys, r.expiry.slice_max_us, r.counters.commands_processed
                        ),
                    );
                }
            }
            "keyspace" => {
                let ndbs = reports.first().map_or(0, |r| r.dbs.len());
                for db in 0..ndbs {
                    let keys: usize = reports.iter().map(|r| r.dbs[db].0).sum();
                    if keys == 0 {
                        continue;
                    }
                    let expires: usize = reports.iter().map(|r| r.dbs[db].1).sum();
                    let weighted: f64 = reports
                        .iter()
                        .map(|r| r.dbs[db].2 * r.dbs[db].1 as f64)
                        .sum();
                    let avg_ttl = if expires > 0 {
                        (weighted / expires as f64) as u64
                    } else {
                        0
                    };
                    line(
                        &format!("db{db}"),
                        format!("keys={keys},expires={expires},avg_ttl={avg_ttl}"),
                    );
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_selection() {
        assert_eq!(sections_for(&[]), DEFAULT_SECTIONS);
        assert!(sections_for(&["all".into()]).contains(&"commandstats"));
        assert_eq!(
            sections_for(&["keyspace".into(), "stats".into()]),
            vec!["stats", "keyspace"]
        );
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
