//! INFO: every shard's figures (`exec::stats`) gathered into Redis's
//! sections and field names.

use std::fmt::Write as _;
use std::sync::atomic::Ordering::Relaxed;

use crate::exec::stats::{CmdStat, ShardCounters, ShardReport};
use crate::exec::Shared;
use crate::store::ExpiryStats;
use crate::util::memory::{cpu_times, human_bytes, main_thread_cpu_times, memory_stats};

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
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
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
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
    let config = &shared.config;
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
                // ember is not built from Redis's sources: Redis's own
                // neutral values for a build without git.
                line("redis_git_sha1", "00000000".into());
                line("redis_git_dirty", "0".into());
                line("redis_build_id", "0".into());
                line("ember_version", env!("CARGO_PKG_VERSION").into());
                line("redis_mode", "standalone".into());
                line("os", os_text());
                line("arch_bits", (usize::BITS).to_string());
                line("monotonic_clock", "POSIX clock_gettime".into());
                line("multiplexing_api", "epoll".into());
                line("atomicvar_api", "c11-builtin".into());
                line("gcc_version", "0.0.0".into());
                line("process_id", std::process::id().to_string());
                line("process_supervised", "no".into());
                line("run_id", shared.run_id.clone());
                line("tcp_port", config.port().to_string());
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                line("server_time_usec", now.as_micros().to_string());
                line("uptime_in_seconds", uptime.to_string());
                line("uptime_in_days", (uptime / 86_400).to_string());
                line("hz", config.hz().to_string());
                line("configured_hz", config.hz().to_string());
                // Redis's LRU clock: seconds, in its 24 bits.
                line("lru_clock", (now.as_secs() & ((1 << 24) - 1)).to_string());
                line("shards", shared.nshards.to_string());
                line(
                    "executable",
                    std::env::current_exe()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                );
                line(
                    "config_file",
                    config
                        .config_file()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                );
                line("io_threads_active", "0".into());
            }
            "clients" => {
                line(
                    "connected_clients",
                    shared.counters.connected_clients.load(Relaxed).to_string(),
                );
                line("cluster_connections", "0".into());
                line("maxclients", config.maxclients().to_string());
                // Redis samples these in its cron; ember keeps no such
                // window (CLIENT LIST has each client's buffers).
                line("client_recent_max_input_buffer", "0".into());
                line("client_recent_max_output_buffer", "0".into());
                line(
                    "blocked_clients",
                    shared.counters.blocked_clients.load(Relaxed).to_string(),
                );
                line(
                    "tracking_clients",
                    shared.tracking.tracking_clients().to_string(),
                );
                line("clients_in_timeout_table", "0".into());
                line("pubsub_clients", "0".into());
            }
            "memory" => memory_section(&mut line, shared, reports),
            "persistence" => {
                // The shards' change counters (Redis's `server.dirty`)
                // since the instant the last save was taken at.
                let changes = reports
                    .iter()
                    .fold(0u64, |sum, r| sum.wrapping_add(r.changes));
                let status = shared.persist.status();
                let now_ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                let in_progress = status.bgsave_started_ms;
                // Redis 7.0.15's fields, in its order. ember forks nothing,
                // so nothing is copied on write; what it copies instead is
                // the old record of a key a write changes ahead of the
                // snapshot's cursor, written early (`store::snapshot`):
                // those bytes are its copy-on-write figures.
                let loading = shared.aof.is_loading();
                line("loading", u8::from(loading).to_string());
                line("async_loading", "0".into());
                let saving = in_progress.is_some() || shared.aof.rewriting.load(Relaxed);
                let mut save = crate::store::SnapshotProgress::default();
                if saving {
                    for r in reports {
                        save.total += r.snapshot.total;
                        save.processed += r.snapshot.processed;
                        save.copied += r.snapshot.copied;
                    }
                }
                let perc = if save.total == 0 {
                    0.0
                } else {
                    save.processed.min(save.total) as f64 * 100.0 / save.total as f64
                };
                line("current_cow_peak", save.copied.to_string());
                line("current_cow_size", save.copied.to_string());
                line("current_cow_size_age", "0".into());
                line("current_fork_perc", format!("{perc:.2}"));
                line("current_save_keys_processed", save.processed.to_string());
                line("current_save_keys_total", save.total.to_string());
                line(
                    "rdb_changes_since_last_save",
                    changes.wrapping_sub(status.changes_at_save).to_string(),
                );
                line(
                    "rdb_bgsave_in_progress",
                    u8::from(in_progress.is_some()).to_string(),
                );
                line("rdb_last_save_time", status.last_save_s.to_string());
                line(
                    "rdb_last_bgsave_status",
                    if status.last_bgsave_ok { "ok" } else { "err" }.into(),
                );
                line(
                    "rdb_last_bgsave_time_sec",
                    status.last_bgsave_time_s.to_string(),
                );
                line(
                    "rdb_current_bgsave_time_sec",
                    in_progress
                        .map_or(-1, |t| (now_ms.saturating_sub(t) / 1000) as i64)
                        .to_string(),
                );
                line("rdb_saves", status.saves.to_string());
                line("rdb_last_cow_size", status.last_cow_size.to_string());
                line(
                    "rdb_last_load_keys_expired",
                    status.last_load_keys_expired.to_string(),
                );
                line(
                    "rdb_last_load_keys_loaded",
                    status.last_load_keys_loaded.to_string(),
                );
                for (k, v) in super::aof::info_fields(shared) {
                    line(k, v);
                }
                if loading {
                    for (k, v) in super::aof::loading_fields(shared) {
                        line(k, v);
                    }
                }
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
                // Not counted apart: a replica's link is a connection
                // like the others (its bytes are in the totals above).
                for name in ["total_net_repl_input_bytes", "total_net_repl_output_bytes"] {
                    line(name, "0".into());
                }
                for name in [
                    "instantaneous_input_kbps",
                    "instantaneous_output_kbps",
                    "instantaneous_input_repl_kbps",
                    "instantaneous_output_repl_kbps",
                ] {
                    line(name, "0.00".into());
                }
                line(
                    "rejected_connections",
                    c.rejected_connections.load(Relaxed).to_string(),
                );
                let repl = &shared.repl;
                line("sync_full", repl.sync_full.load(Relaxed).to_string());
                line(
                    "sync_partial_ok",
                    repl.sync_partial_ok.load(Relaxed).to_string(),
                );
                line(
                    "sync_partial_err",
                    repl.sync_partial_err.load(Relaxed).to_string(),
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
                line("evicted_keys", expiry.evicted_keys.to_string());
                line(
                    "evicted_clients",
                    crate::exec::client_evict::evicted().to_string(),
                );
                let (total, current) = crate::exec::evict::exceeded_time_ms();
                line("total_eviction_exceeded_time", total.to_string());
                line("current_eviction_exceeded_time", current.to_string());
                line("keyspace_hits", expiry.hits.to_string());
                line("keyspace_misses", expiry.misses.to_string());
                let pubsub = &shared.pubsub;
                line("pubsub_channels", pubsub.channel_count().to_string());
                line("pubsub_patterns", pubsub.numpat().to_string());
                line(
                    "pubsubshard_channels",
                    pubsub.shard_channel_count().to_string(),
                );
                // ember never forks (snapshots are taken in slices by the
                // shards): no fork stall to report. `total_forks` counts the
                // save processes that wrote background saves'
                // files (`persist::child`), where Redis's children do.
                line("latest_fork_usec", "0".into());
                line(
                    "total_forks",
                    shared.persist.forks.load(Relaxed).to_string(),
                );
                line(
                    "migrate_cached_sockets",
                    super::migrate::cached_sockets().to_string(),
                );
                // A replica expires nothing itself (it waits for the
                // master's DEL), so it tracks no keys of its own writes;
                // and ember does not defragment.
                for name in [
                    "slave_expires_tracked_keys",
                    "active_defrag_hits",
                    "active_defrag_misses",
                    "active_defrag_key_hits",
                    "active_defrag_key_misses",
                    "total_active_defrag_time",
                    "current_active_defrag_time",
                ] {
                    line(name, "0".into());
                }
                let tracking = &shared.tracking;
                line(
                    "tracking_total_keys",
                    tracking.keys.load(Relaxed).to_string(),
                );
                line(
                    "tracking_total_items",
                    tracking.items.load(Relaxed).to_string(),
                );
                line(
                    "tracking_total_prefixes",
                    tracking.prefix_count().to_string(),
                );
                line("unexpected_error_replies", "0".into());
                let errors: u64 = counters.errors.values().sum();
                line("total_error_replies", errors.to_string());
                line("dump_payload_sanitizations", "0".into());
                // Not counted: the shards read and write in their own
                // loops, none through I/O threads.
                for name in [
                    "total_reads_processed",
                    "total_writes_processed",
                    "io_threaded_reads_processed",
                    "io_threaded_writes_processed",
                    "reply_buffer_shrinks",
                    "reply_buffer_expands",
                ] {
                    line(name, "0".into());
                }
                // Redis 7.2's ACL refusal counters (7.0 has none).
                let denied = &shared.acl.denied;
                for (name, counter) in [
                    ("acl_access_denied_auth", &denied.auth),
                    ("acl_access_denied_cmd", &denied.cmd),
                    ("acl_access_denied_key", &denied.key),
                    ("acl_access_denied_channel", &denied.channel),
                ] {
                    line(name, counter.load(Relaxed).to_string());
                }
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
                for (name, value) in super::replication::info::lines(shared) {
                    line(&name, value);
                }
            }
            // ember loads no modules: the section has its header only.
            "modules" => {}
            "errorstats" => {
                for (code, count) in &counters.errors {
                    line(&format!("errorstat_{code}"), format!("count={count}"));
                }
            }
            "cluster" => line("cluster_enabled", "0".into()),
            "cpu" => {
                let (sys, user) = cpu_times();
                line("used_cpu_sys", format!("{sys:.6}"));
                line("used_cpu_user", format!("{user:.6}"));
                // No child processes: ember forks nothing.
                line("used_cpu_sys_children", "0.000000".into());
                line("used_cpu_user_children", "0.000000".into());
                // The main thread only starts the shards and waits.
                let (sys, user) = main_thread_cpu_times();
                line("used_cpu_sys_main_thread", format!("{sys:.6}"));
                line("used_cpu_user_main_thread", format!("{user:.6}"));
            }
            "commandstats" => {
                for (name, s) in by_name(&counters) {
                    let per_call = if s.calls > 0 {
                        s.usec as f64 / s.calls as f64
                    } else {
                        0.0
                    };
                    line(
                        &format!("cmdstat_{name}"),
                        format!("calls={},usec={},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}", s.calls, s.usec, s.rejected, s.failed),
                    );
                }
            }
            "latencystats" => {
                let percentiles = shared.config.latency_tracking_percentiles();
                for (name, s) in by_name(&counters) {
                    // Commands called only while latency-tracking was off
                    // have no histogram and no line, as in Redis.
                    let Some(latency) = &s.latency else {
                        continue;
                    };
                    let shown: Vec<String> = percentiles
                        .iter()
                        .map(|&p| {
                            let at = latency.value_at_quantile(p / 100.0) as f64;
                            format!("p{p}={at:.3}")
                        })
                        .collect();
                    line(&format!("latency_percentiles_usec_{name}"), shown.join(","));
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

/// INFO's `os`, as Redis prints uname's: the kernel's name and release,
/// then the machine.
fn os_text() -> String {
    let read = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
            .map(|t| t.trim().to_string())
            .unwrap_or_default()
    };
    let kernel = match read("ostype") {
        name if name.is_empty() => std::env::consts::OS.to_string(),
        name => name,
    };
    format!("{kernel} {} {}", read("osrelease"), std::env::consts::ARCH)
}

/// The commands called so far with their statistics, by name.
fn by_name(counters: &ShardCounters) -> Vec<(&'static str, &CmdStat)> {
    let mut called: Vec<(&'static str, &CmdStat)> = counters
        .commands
        .called()
        .map(|(id, stat)| (super::table::by_id(id).name, stat))
        .collect();
    called.sort_by_key(|(name, _)| *name);
    called
}

/// INFO memory's scripting fields, named and ordered as Redis 7.0.15 prints
/// them. Redis keeps one Lua VM for EVAL and one for functions; each ember
/// shard has one VM running both, so the sum of the shards' VMs is
/// reported as the eval VM (`used_memory_lua` is its old name) and the
/// functions VM, which does not exist apart from it, as 0.
/// INFO memory: Redis 7.0.15's fields in its order; the overhead counted
/// as MEMORY STATS counts it (`memory::Overhead`).
fn memory_section(line: &mut impl FnMut(&str, String), shared: &Shared, reports: &[ShardReport]) {
    let mem = memory_stats();
    let (used, peak, rss) = (mem.allocated, mem.peak, mem.rss);
    let clients: u64 = reports.iter().map(|r| r.clients_mem).sum();
    let tables: u64 = reports.iter().map(|r| r.tables_mem).sum();
    let parts = super::memory::Overhead::of(shared, clients, tables);
    let startup = parts.startup.min(used);
    let (backlog_mem, aof_buffer) = (parts.backlog, parts.aof);
    let overhead = parts.total().min(used);
    let dataset = used - overhead;
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let percent = |a: u64, b: u64| format!("{:.2}%", ratio(a, b) * 100.0);
    let system = crate::util::memory::total_system_memory();
    line("used_memory", used.to_string());
    line("used_memory_human", human_bytes(used));
    line("used_memory_rss", rss.to_string());
    line("used_memory_rss_human", human_bytes(rss));
    line("used_memory_peak", peak.to_string());
    line("used_memory_peak_human", human_bytes(peak));
    line("used_memory_peak_perc", percent(used, peak));
    line("used_memory_overhead", overhead.to_string());
    line("used_memory_startup", startup.to_string());
    line("used_memory_dataset", dataset.to_string());
    line(
        "used_memory_dataset_perc",
        percent(dataset, used.saturating_sub(startup)),
    );
    line("allocator_allocated", mem.allocated.to_string());
    line("allocator_active", mem.active.to_string());
    line("allocator_resident", mem.resident.to_string());
    line("total_system_memory", system.to_string());
    line("total_system_memory_human", human_bytes(system));
    scripts_memory(line, shared, reports);
    let eviction = &crate::config::EVICTION;
    line("maxmemory", eviction.maxmemory().to_string());
    line("maxmemory_human", human_bytes(eviction.maxmemory()));
    line("maxmemory_policy", eviction.policy().name().into());
    let signed = |a: u64, b: u64| (a as i64).wrapping_sub(b as i64).to_string();
    line(
        "allocator_frag_ratio",
        format!("{:.2}", ratio(mem.active, mem.allocated)),
    );
    line("allocator_frag_bytes", signed(mem.active, mem.allocated));
    line(
        "allocator_rss_ratio",
        format!("{:.2}", ratio(mem.resident, mem.active)),
    );
    line("allocator_rss_bytes", signed(mem.resident, mem.active));
    line(
        "rss_overhead_ratio",
        format!("{:.2}", ratio(rss, mem.resident)),
    );
    line("rss_overhead_bytes", signed(rss, mem.resident));
    line(
        "mem_fragmentation_ratio",
        format!("{:.2}", ratio(rss, used)),
    );
    line("mem_fragmentation_bytes", signed(rss, used));
    // As Redis: what eviction leaves out of its count (the replication
    // buffers past the backlog's size, the AOF buffer).
    line(
        "mem_not_counted_for_evict",
        (parts.beyond_backlog + aof_buffer).to_string(),
    );
    // As Redis 7.0 splits its shared replication buffer: past the
    // backlog's size, with replicas connected, it is theirs.
    let replicas_mem = if parts.replicas {
        parts.beyond_backlog
    } else {
        0
    };
    line(
        "mem_replication_backlog",
        (backlog_mem - replicas_mem).to_string(),
    );
    line("mem_total_replication_buffers", backlog_mem.to_string());
    // Replicas are served from the backlog by threads of their own; every
    // client in the shards' counts is a normal one.
    line("mem_clients_slaves", replicas_mem.to_string());
    line("mem_clients_normal", clients.to_string());
    line("mem_cluster_links", "0".into());
    line("mem_aof_buffer", aof_buffer.to_string());
    line("mem_allocator", "jemalloc".into());
    line("active_defrag_running", "0".into());
    // Redis 7.0 lists both here, in the memory section.
    line(
        "lazyfree_pending_objects",
        crate::store::lazyfree::pending_objects().to_string(),
    );
    line(
        "lazyfreed_objects",
        crate::store::lazyfree::freed_objects().to_string(),
    );
}

fn scripts_memory(line: &mut impl FnMut(&str, String), shared: &Shared, reports: &[ShardReport]) {
    let vm_eval: u64 = reports.iter().map(|r| r.lua_mem).sum();
    let vm_functions = 0u64;
    let scripts_eval = shared.scripts.memory();
    let (cached, _) = shared.scripts.stats();
    let (libraries, functions) = shared.libraries.counts();
    let functions_mem = shared.libraries.memory();
    line("used_memory_lua", vm_eval.to_string());
    line("used_memory_vm_eval", vm_eval.to_string());
    line("used_memory_lua_human", human_bytes(vm_eval));
    line("used_memory_scripts_eval", scripts_eval.to_string());
    line("number_of_cached_scripts", cached.to_string());
    line("number_of_functions", functions.to_string());
    line("number_of_libraries", libraries.to_string());
    line("used_memory_vm_functions", vm_functions.to_string());
    let vm_total = vm_eval + vm_functions;
    line("used_memory_vm_total", vm_total.to_string());
    line("used_memory_vm_total_human", human_bytes(vm_total));
    line("used_memory_functions", functions_mem.to_string());
    let scripts = scripts_eval + functions_mem;
    line("used_memory_scripts", scripts.to_string());
    line("used_memory_scripts_human", human_bytes(scripts));
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
}
