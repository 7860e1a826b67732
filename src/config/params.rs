//! The parameters: one row each, the only place a parameter is declared.
//! The config file, `--name value` flags, CONFIG GET / SET, `--help` and
//! the values the shards read ([`Live`]) all come from these rows.
//!
//! A row gives the name and its aliases, the type with its default and
//! bounds ([`Kind`], which also names the [`Live`] slot that holds the
//! value), what CONFIG SET may do with it ([`Set`]), and the hook that
//! makes a change take effect beyond the slot, if any. Parameters without
//! a hook take effect through the shards reading their slot: at once for
//! most, on new connections for `tcp-keepalive`, at the next tick for the
//! expiry knobs.

use std::sync::atomic::Ordering::Relaxed;

use super::kind::{one_of, parse_bool, Kind, Value};
use super::live::{
    ListpackLimits, Live, APPENDFSYNC, CLIENTS_PERCENT, DEBUG_COMMAND, ENCODINGS, EVICTION,
    LAZYFREE, LOGLEVELS, POLICIES,
};
use super::{compat, events, obuf, persist, repl, shutdown, tls};

/// One configuration parameter.
pub struct Param {
    pub name: &'static str,
    /// Other names for it (Redis 6's `hash-max-ziplist-*`); CONFIG GET
    /// lists each name that matches, with the same value.
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    pub set: Set,
    /// Makes a new value take effect where reading the slot is not enough
    /// (the logger, the allocator); run at start-up and
    /// after a CONFIG SET that changes the value.
    pub apply: Option<fn(&Live)>,
    /// One line for `--help`.
    pub doc: &'static str,
}

/// What CONFIG SET may do with a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// Change it.
    Yes,
    /// Nothing (Redis's immutable configs): `can't set immutable config`.
    Immutable,
    /// Set it to the value it has, which changes nothing, as Redis's
    /// CONFIG SET of an unchanged value does; another value is refused as
    /// immutable. For what Redis can change at run time but ember not yet
    /// (`tls-port`) and for `shards` (the threads are started
    /// once). Tools that write back
    /// every value CONFIG GET gave them, as Redis's own tests do, work.
    StartUp,
    /// Redis's protected configs (`dir`, `dbfilename`): CONFIG SET takes
    /// them only where `enable-protected-configs` allows it for the
    /// client, else `can't set protected config`.
    Protected,
}

impl Param {
    /// The name, then the aliases.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }

    /// Whether `name` (any case) names this parameter.
    pub fn is_named(&self, name: &[u8]) -> bool {
        self.names()
            .any(|n| n.as_bytes().eq_ignore_ascii_case(name))
    }

    /// The current value as CONFIG GET prints it.
    pub fn show(&self, live: &Live) -> String {
        self.kind.show(&self.kind.read(live))
    }
}

/// Parameters that a pattern of CONFIG GET does not list, only their own
/// name asks for them (Redis's HIDDEN_CONFIG: knobs for its tests).
pub const HIDDEN: &[&str] = &[
    "rdb-key-save-delay",
    "key-load-delay",
    "loading-process-events-interval-bytes",
];

impl Param {
    /// Whether CONFIG GET leaves it out of what a pattern matches.
    pub fn hidden(&self) -> bool {
        HIDDEN.contains(&self.name)
    }
}

/// The parameter called `name` (or an alias of it), any case.
pub fn find_param(name: &[u8]) -> Option<&'static Param> {
    PARAMS.iter().find(|p| p.is_named(name))
}

const INT_MAX: i64 = i32::MAX as i64;
const LLONG_MAX: u64 = i64::MAX as u64;
const MB: u64 = 1024 * 1024;

/// The shard threads `shards 0` (and the default) stands for. Counted
/// once, at start-up: a shard thread pinned to its core sees one core
/// (`available_parallelism` reads the thread's affinity), which would
/// make the default look changed to CONFIG SET and CONFIG REWRITE there.
fn available_cores() -> u64 {
    static CORES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u64))
}

/// `bind`: one or more addresses (a `-` prefix makes one optional), as
/// Redis takes them; the shipped redis.conf's loopback default.
static BIND: super::kind::Custom = super::kind::Custom {
    default: "127.0.0.1 -::1",
    parse: |_, text| {
        let words: Vec<&str> = text.split_whitespace().collect();
        if words.is_empty() {
            return Err("Invalid argument".into());
        }
        // Redis's CONFIG_BINDADDR_MAX.
        if words.len() > 16 {
            return Err("Too many bind addresses specified.".into());
        }
        Ok(Value::Text(words.join(" ")))
    },
    read: |live| Value::Text(live.bind()),
    store: |live, value| {
        if let (Value::Text(addr), Ok(mut slot)) = (value, live.v.bind.write()) {
            *slot = addr;
        }
    },
};

/// `latency-tracking-info-percentiles`, kept as CONFIG GET prints it.
static LATENCY_PERCENTILES: super::kind::Custom = super::kind::Custom {
    default: "50 99 99.9",
    parse: |_, text| compat::normal_percentiles(text).map(Value::Text),
    read: |live| {
        let slot = &live.v.latency_tracking_percentiles;
        Value::Text(slot.read().map_or_else(|_| String::new(), |t| t.clone()))
    },
    store: |live, value| {
        if let (Value::Text(text), Ok(mut slot)) =
            (value, live.v.latency_tracking_percentiles.write())
        {
            *slot = text;
        }
    },
};

/// `maxmemory-clients`: bytes (with units) or a percentage of `maxmemory`
/// up to 100, as Redis takes it.
static MAXMEMORY_CLIENTS: super::kind::Custom = super::kind::Custom {
    default: "0",
    parse: |_, text| parse_clients_limit(text).map(|n| Value::Text(show_clients_limit(n))),
    read: |_| Value::Text(show_clients_limit(EVICTION.maxmemory_clients.load(Relaxed))),
    store: |_, value| {
        if let Value::Text(text) = value {
            if let Ok(n) = parse_clients_limit(&text) {
                EVICTION.maxmemory_clients.store(n, Relaxed);
            }
        }
    },
};

/// `maxmemory-clients` text to its slot's form (see [`CLIENTS_PERCENT`]).
fn parse_clients_limit(text: &str) -> Result<u64, String> {
    const BAD: &str = "argument must be a memory or percent value";
    if let Some(pct) = text.strip_suffix('%') {
        let n = crate::util::num::parse_i64(pct.as_bytes())
            .filter(|&n| n >= 0)
            .ok_or(BAD)?;
        if n > 100 {
            return Err("percentage argument must be less or equal to 100".into());
        }
        return Ok(CLIENTS_PERCENT | n as u64);
    }
    super::kind::parse_memory(text)
        .filter(|&n| n <= LLONG_MAX)
        .ok_or_else(|| BAD.into())
}

/// What CONFIG GET prints: bytes, or `n%`.
fn show_clients_limit(n: u64) -> String {
    if n & CLIENTS_PERCENT != 0 {
        format!("{}%", n & !CLIENTS_PERCENT)
    } else {
        n.to_string()
    }
}

/// A text parameter kept as given (`requirepass`, `aclfile`, `pidfile`, `logfile`).
macro_rules! text_param {
    ($name:ident, $slot:ident) => {
        static $name: super::kind::Custom = super::kind::Custom {
            default: "",
            parse: |_, text| Ok(Value::Text(text.to_string())),
            read: |live| {
                Value::Text(
                    live.v
                        .$slot
                        .read()
                        .map_or_else(|_| String::new(), |v| v.clone()),
                )
            },
            store: |live, value| {
                if let (Value::Text(text), Ok(mut slot)) = (value, live.v.$slot.write()) {
                    *slot = text;
                }
            },
        };
    };
}
text_param!(REQUIREPASS, requirepass);
text_param!(ACLFILE, aclfile);
text_param!(PIDFILE, pidfile);
text_param!(LOGFILE, logfile);

#[rustfmt::skip]
pub static PARAMS: &[Param] = &[
    // The listeners and threads, set up once.
    Param {
        name: "port", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 6379, min: 0, max: 65535, fit: None, slot: |l| &l.v.port },
        doc: "TCP port (0: any free port)",
    },
    Param {
        name: "bind", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&BIND),
        doc: "listen addresses (`-` before one: optional; `*` every IPv4, `::*` every IPv6 address)",
    },
    Param {
        name: "shards", aliases: &[], set: Set::StartUp, apply: None,
        kind: Kind::Int { default: 0, min: 0, max: 1024, fit: Some(|n| if n == 0 { available_cores() } else { n }), slot: |l| &l.v.shards },
        doc: "ember: shard threads, one per core (0: as many as there are cores; 1: the single-threaded design)",
    },
    Param {
        name: "databases", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Int { default: 16, min: 1, max: INT_MAX, fit: None, slot: |l| &l.v.databases },
        doc: "number of databases (SELECT 0..N-1)",
    },
    // Active expiry, read at every tick.
    Param {
        name: "hz", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 10, min: 0, max: INT_MAX, fit: Some(|n| n.clamp(1, 500)), slot: |l| &l.v.hz },
        doc: "expiry timer ticks per second, clamped to 1..500 as Redis does",
    },
    Param {
        name: "active-expire-effort", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 1, min: 1, max: 10, fit: None, slot: |l| &l.v.active_expire_effort },
        doc: "keys per sample, CPU share and acceptable stale share of the expiry sweep, as Redis scales them",
    },
    Param {
        name: "active-expire-slice-us", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 100, min: 10, max: 1_000_000, fit: None, slot: |l| &l.v.active_expire_slice_us },
        doc: "ember: longest uninterrupted run of expiry work, microseconds",
    },
    Param {
        name: "active-expire-storm-cpu-perc", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 90, min: 1, max: 100, fit: None, slot: |l| &l.v.active_expire_storm_cpu_perc },
        doc: "ember: share of a tick an expiry cycle may use while reclaiming a storm",
    },
    // Why 95 and not 85: the sweep runs in slices of
    // `active-expire-slice-us` between socket passes, so it delays no
    // request by more than a slice however busy the shard gets; the cap
    // only has to leave the clients what they used last tick. In six
    // alternating storm runs of 2M keys on the 2-core VM (clients taking
    // 34-58% of the shard), busy 95 reclaimed 99% in 0.7-1.4 s (median
    // 1.0 s) against 0.8-2.1 s (median 1.4 s) at 85/50, with a storm p99.9
    // no worse (median 1.9 ms against 3.8 ms; the spikes of both came from
    // the VM). Those runs had a cpu share of 100, which at that load binds
    // no sooner than 90.
    Param {
        name: "active-expire-storm-busy-perc", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 95, min: 1, max: 100, fit: None, slot: |l| &l.v.active_expire_storm_busy_perc },
        doc: "ember: the busiest (percent of a tick) clients plus a storm's extra share may make a shard",
    },
    Param {
        name: "notify-keyspace-events", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&events::NOTIFY_KEYSPACE_EVENTS),
        doc: "keyspace notification classes (K E g $ l s h z x e t m d n A)",
    },
    // Clients and the protocol, read per connection or per command.
    Param {
        name: "maxclients", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 10_000, min: 1, max: u32::MAX as i64, fit: None, slot: |l| &l.v.maxclients },
        doc: "connections accepted at once",
    },
    Param {
        name: "proto-max-bulk-len", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Memory { default: 512 * MB, min: MB, max: LLONG_MAX, slot: |l| &l.v.proto_max_bulk_len },
        doc: "longest bulk string a client may send",
    },
    Param {
        name: "client-query-buffer-limit", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Memory { default: 1024 * MB, min: MB, max: LLONG_MAX, slot: |l| &l.v.client_query_buffer_limit },
        doc: "unparsed input a client may hold before it is disconnected",
    },
    Param {
        name: "client-output-buffer-limit", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&obuf::CLIENT_OUTPUT_BUFFER_LIMIT),
        doc: "<class> <hard> <soft> <soft-seconds> per class (normal, replica, pubsub): unsent replies a client may hold",
    },
    Param {
        name: "loglevel", aliases: &[], set: Set::Yes, apply: Some(|l| crate::logging::set_level(l.loglevel())),
        kind: Kind::Enum { default: "notice", options: LOGLEVELS, slot: |l| &l.v.loglevel },
        doc: "log verbosity",
    },
    Param {
        name: "timeout", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 0, min: 0, max: INT_MAX, fit: None, slot: |l| &l.v.timeout },
        doc: "seconds a client may stay idle before it is closed (0: forever)",
    },
    Param {
        name: "tcp-keepalive", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 300, min: 0, max: INT_MAX, fit: None, slot: |l| &l.v.tcp_keepalive },
        doc: "TCP keepalive idle seconds of new connections, probes every third of it, 3 of them (0: off)",
    },
    // Memory and freeing.
    Param {
        name: "jemalloc-bg-thread", aliases: &[], set: Set::Yes,
        apply: Some(|l| crate::util::purge::set_background_thread(l.v.jemalloc_bg_thread.load(Relaxed))),
        kind: Kind::Bool { default: true, slot: |l| &l.v.jemalloc_bg_thread },
        doc: "jemalloc hands freed pages back to the OS from its own thread",
    },
    Param {
        name: "active-expire-storm-defer-purge", aliases: &[], set: Set::Yes,
        apply: Some(|l| crate::util::purge::set_defer(l.v.active_expire_storm_defer_purge.load(Relaxed))),
        kind: Kind::Bool { default: true, slot: |l| &l.v.active_expire_storm_defer_purge },
        doc: "ember: no freed pages go back to the OS while a shard reclaims a storm",
    },
    Param {
        name: "busy-reply-threshold", aliases: &["lua-time-limit"], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 5000, min: 0, max: i64::MAX, fit: None, slot: |l| &l.v.busy_reply_threshold },
        doc: "ms a script runs before other clients get BUSY and SCRIPT KILL may stop it (0: at once)",
    },
    Param {
        name: "latency-monitor-threshold", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 0, min: 0, max: i64::MAX, fit: None, slot: |l| &l.v.latency_monitor_threshold },
        doc: "events that block a shard this many ms or more are logged for LATENCY (0: off)",
    },
    Param {
        name: "slowlog-log-slower-than", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 10000, min: -1, max: i64::MAX, fit: None, slot: |l| &l.v.slowlog_log_slower_than },
        doc: "commands taking this many µs or more are logged for SLOWLOG (0: every command, -1: none)",
    },
    Param {
        name: "slowlog-max-len", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 128, min: 0, max: i64::MAX, fit: None, slot: |l| &l.v.slowlog_max_len },
        doc: "entries SLOWLOG keeps (the oldest go first)",
    },
    Param {
        name: "latency-tracking", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.latency_tracking },
        doc: "per-command latency histograms for INFO latencystats (about 25 KB per command and shard)",
    },
    Param {
        name: "lazyfree-lazy-eviction", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |_| &LAZYFREE.eviction },
        doc: "large evicted values are freed on the lazy-free thread",
    },
    Param {
        name: "lazyfree-lazy-expire", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |_| &LAZYFREE.expire },
        doc: "large expired values are freed on the lazy-free thread",
    },
    Param {
        name: "lazyfree-lazy-server-del", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |_| &LAZYFREE.server_del },
        doc: "large values a write replaces are freed on the lazy-free thread",
    },
    Param {
        name: "lazyfree-lazy-user-del", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |_| &LAZYFREE.user_del },
        doc: "DEL frees as UNLINK does",
    },
    Param {
        name: "lazyfree-lazy-user-flush", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |_| &LAZYFREE.user_flush },
        doc: "FLUSHALL / FLUSHDB without a mode are ASYNC (ember flushes off the shard either way)",
    },
    Param {
        name: "enable-debug-command", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Enum { default: "no", options: DEBUG_COMMAND, slot: |l| &l.v.enable_debug_command },
        doc: "who may run DEBUG: no one, anyone, or loopback clients only",
    },
    // The append-only file (`persist::aof`, `cmd::aof`).
    Param {
        name: "appendonly", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |l| &l.v.appendonly },
        doc: "log every write to the append-only files in appenddirname (CONFIG SET yes: a rewrite writes the base first)",
    },
    Param {
        name: "appendfilename", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Custom(&persist::APPENDFILENAME),
        doc: "the append-only files' name (the manifest, base and incr files start with it)",
    },
    Param {
        name: "appenddirname", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Custom(&persist::APPENDDIRNAME),
        doc: "the directory in dir that holds the append-only files",
    },
    Param {
        name: "appendfsync", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Enum { default: "everysec", options: APPENDFSYNC, slot: |l| &l.v.appendfsync },
        doc: "always: a write is on disk before its reply; everysec: fsync once a second; no: the OS decides",
    },
    Param {
        name: "no-appendfsync-on-rewrite", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |l| &l.v.no_appendfsync_on_rewrite },
        doc: "no fsync of the append-only file while a rewrite runs",
    },
    Param {
        name: "auto-aof-rewrite-percentage", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 100, min: 0, max: INT_MAX, fit: None, slot: |l| &l.v.auto_aof_rewrite_percentage },
        doc: "rewrite when the files grew by this percentage over the last rewrite's size (0: never)",
    },
    Param {
        name: "auto-aof-rewrite-min-size", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Memory { default: 64 * MB, min: 0, max: LLONG_MAX, slot: |l| &l.v.auto_aof_rewrite_min_size },
        doc: "no automatic rewrite while the files are smaller than this",
    },
    Param {
        name: "aof-load-truncated", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.aof_load_truncated },
        doc: "a torn last command is cut off at start-up (no: refuse to start)",
    },
    Param {
        name: "aof-use-rdb-preamble", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.aof_use_rdb_preamble },
        doc: "a rewrite writes the base as an RDB file (no: as commands)",
    },
    Param {
        name: "aof-rewrite-incremental-fsync", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.aof_rewrite_incremental_fsync },
        doc: "fsync a rewrite's base every 4 MB as it is written",
    },
    Param {
        name: "rdb-save-incremental-fsync", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.rdb_save_incremental_fsync },
        doc: "fsync a snapshot every 4 MB as it is written (ember writes it whole, then syncs)",
    },
    Param {
        name: "aof-timestamp-enabled", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |l| &l.v.aof_timestamp_enabled },
        doc: "write a #TS:<unix seconds> line before the commands of each new second",
    },
    Param {
        name: "aof-disable-auto-gc", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |l| &l.v.aof_disable_auto_gc },
        doc: "keep the files a rewrite made history (listed as such in the manifest)",
    },
    // Eviction (`store::evict`): process-wide slots, read by the store.
    Param {
        name: "maxmemory", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Memory { default: 0, min: 0, max: LLONG_MAX, slot: |_| &EVICTION.maxmemory },
        doc: "the memory limit (used_memory) past which keys are evicted by the policy (0: none)",
    },
    Param {
        name: "maxmemory-policy", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Enum { default: "noeviction", options: POLICIES, slot: |_| &EVICTION.policy },
        doc: "which keys go over maxmemory: noeviction, allkeys-/volatile- lru, lfu, random, volatile-ttl",
    },
    Param {
        name: "maxmemory-samples", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 5, min: 1, max: INT_MAX, fit: None, slot: |_| &EVICTION.samples },
        doc: "keys sampled per database for each eviction",
    },
    Param {
        name: "maxmemory-eviction-tenacity", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 10, min: 0, max: 100, fit: None, slot: |_| &EVICTION.tenacity },
        doc: "how long an eviction slice may run (10: 500 us, each step 15% more, 100: unbounded)",
    },
    Param {
        name: "lfu-log-factor", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 10, min: 0, max: INT_MAX, fit: None, slot: |_| &EVICTION.lfu_log_factor },
        doc: "how slowly the LFU counter grows with hits",
    },
    Param {
        name: "lfu-decay-time", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 1, min: 0, max: INT_MAX, fit: None, slot: |_| &EVICTION.lfu_decay_time },
        doc: "idle minutes per decrement of the LFU counter (0: never)",
    },
    Param {
        name: "maxmemory-clients", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&MAXMEMORY_CLIENTS),
        doc: "client memory limit, bytes or a percentage of maxmemory: kept (ember evicts no clients yet)",
    },
    Param {
        name: "daemonize", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Bool { default: false, slot: |l| &l.v.daemonize },
        doc: "run in the background: ember starts itself again detached (no terminal, its own process group) and the first one exits; writes `pidfile` (default /var/run/redis.pid)",
    },
    // RDB snapshots (`persist`).
    Param {
        name: "save", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&persist::SAVE),
        doc: "snapshot rules: <seconds> <changes> pairs; BGSAVE when one is met (\"\": none)",
    },
    Param {
        name: "dir", aliases: &[], set: Set::Protected, apply: None,
        kind: Kind::Custom(&persist::DIR),
        doc: "working directory: where dump.rdb is written and read",
    },
    Param {
        name: "dbfilename", aliases: &[], set: Set::Protected, apply: None,
        kind: Kind::Custom(&persist::DBFILENAME),
        doc: "the snapshot's file name in dir",
    },
    Param {
        name: "rdbcompression", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.rdbcompression },
        doc: "LZF-compress the strings of a snapshot",
    },
    Param {
        name: "rdbchecksum", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.rdbchecksum },
        doc: "end a snapshot with its CRC-64 (no: 0) and check it when loading",
    },
    Param {
        name: "stop-writes-on-bgsave-error", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.stop_writes_on_bgsave_error },
        doc: "refuse writes (MISCONF) while the last background save failed and save rules are set",
    },
    Param {
        name: "rdb-del-sync-files", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |l| &l.v.rdb_del_sync_files },
        doc: "delete snapshots made only for replication (ember makes none: accepted)",
    },
    Param {
        name: "rdb-key-save-delay", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 0, min: i32::MIN as i64, max: INT_MAX, fit: None, slot: |l| &l.v.rdb_key_save_delay },
        doc: "testing: microseconds a background save waits per key (the shard serves clients meanwhile)",
    },
    Param {
        name: "key-load-delay", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 0, min: i32::MIN as i64, max: INT_MAX, fit: None, slot: |l| &l.v.key_load_delay },
        doc: "testing: microseconds the start-up load waits per key (clients get LOADING meanwhile)",
    },
    Param {
        name: "loading-process-events-interval-bytes", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "2097152", check: |v| super::kind::parse_int(v, 1024, INT_MAX).map(|_| ()) },
        doc: "accepted: ember's shards serve clients (LOADING) all through a start-up load",
    },
    Param {
        name: "enable-protected-configs", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Enum { default: "no", options: DEBUG_COMMAND, slot: |l| &l.v.enable_protected_configs },
        doc: "who may CONFIG SET dir and dbfilename: no one, anyone, or loopback clients only",
    },
    // What redis-server's own test suite starts it with (its default.conf),
    // accepted so it can start ember the same way; ember keeps nothing of
    // them but `always-show-logo`.
    Param {
        name: "always-show-logo", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Bool { default: false, slot: |l| &l.v.always_show_logo },
        doc: "print the start-up banner (with the PID) and the log on standard output, as redis-server's log does there",
    },
    Param {
        name: "unixsocket", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: ember listens on TCP only",
    },
    Param {
        name: "pidfile", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Custom(&PIDFILE),
        doc: "write the process id to this file at start, remove it at shutdown",
    },
    Param {
        name: "logfile", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Custom(&LOGFILE),
        doc: "append the log to this file; empty: standard error (standard output with always-show-logo)",
    },
    Param {
        name: "repl-diskless-sync-delay", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 5, min: 0, max: INT_MAX, fit: None, slot: |l| &l.v.repl_diskless_sync_delay },
        doc: "seconds a diskless full sync waits for more replicas to share its snapshot",
    },
    Param {
        name: "replica-serve-stale-data", aliases: &["slave-serve-stale-data"], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.replica_serve_stale_data },
        doc: "a replica whose link is down still answers its clients (no: MASTERDOWN)",
    },
    Param {
        name: "activerehashing", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| parse_bool(v).map(|_| ()) },
        doc: "accepted: ember's index always resizes a step at a time",
    },
    Param {
        name: "enable-module-command", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| one_of(v, DEBUG_COMMAND).map(|_| ()) },
        doc: "accepted: ember has no modules",
    },
    Param {
        name: "propagation-error-behavior", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "ignore", check: |v| one_of(v, &["ignore", "panic", "panic-on-replicas"]).map(|_| ()) },
        doc: "accepted: ember has no replicas yet",
    },
    // The compact hash form, checked at every hash write.
    Param {
        name: "set-max-intset-entries", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 512, min: 0, max: i64::MAX, fit: None, slot: |_| &ENCODINGS.set_max_intset_entries },
        doc: "a set of integers is an intset up to this many members (OBJECT ENCODING)",
    },
    Param {
        name: "zset-max-listpack-entries", aliases: &["zset-max-ziplist-entries"], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 128, min: 0, max: i64::MAX, fit: None, slot: |_| &ENCODINGS.zset_max_listpack_entries },
        doc: "a sorted set is a listpack up to this many members (OBJECT ENCODING)",
    },
    Param {
        name: "zset-max-listpack-value", aliases: &["zset-max-ziplist-value"], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 64, min: 0, max: i64::MAX, fit: None, slot: |_| &ENCODINGS.zset_max_listpack_value },
        doc: "...with members at most this many bytes long",
    },
    Param {
        name: "list-max-listpack-size", aliases: &["list-max-ziplist-size"], set: Set::Yes, apply: None,
        kind: Kind::Int { default: -2i64 as u64, min: i32::MIN as i64, max: INT_MAX, fit: None, slot: |_| &ENCODINGS.list_max_listpack_size },
        doc: "a list node's size (negative: 4-64 KiB classes); accepted, lists are quicklists either way",
    },
    Param {
        name: "list-compress-depth", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 0, min: 0, max: INT_MAX, fit: None, slot: |_| &ENCODINGS.list_compress_depth },
        doc: "list nodes kept uncompressed at each end; accepted, ember compresses none",
    },
    Param {
        name: "hash-max-listpack-entries", aliases: &["hash-max-ziplist-entries"], set: Set::Yes, apply: None,
        kind: Kind::Int { default: ListpackLimits::DEFAULT.entries as u64, min: 0, max: i64::MAX, fit: None, slot: |l| &l.v.hash_max_listpack_entries },
        doc: "most fields of a hash in the compact form",
    },
    Param {
        name: "hash-max-listpack-value", aliases: &["hash-max-ziplist-value"], set: Set::Yes, apply: None,
        kind: Kind::Memory { default: ListpackLimits::DEFAULT.value as u64, min: 0, max: LLONG_MAX, slot: |l| &l.v.hash_max_listpack_value },
        doc: "longest field or value (bytes) of a hash in the compact form",
    },
    Param {
        name: "hll-sparse-max-bytes", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Memory { default: 3000, min: 0, max: LLONG_MAX, slot: |l| &l.v.hll_sparse_max_bytes },
        doc: "most bytes of a sparse HyperLogLog before it becomes dense",
    },
    Param {
        name: "stream-node-max-bytes", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Memory { default: 4096, min: 0, max: LLONG_MAX, slot: |l| &l.v.stream_node_max_bytes },
        doc: "most bytes of a stream node before XADD starts a new one (0: no limit)",
    },
    Param {
        name: "stream-node-max-entries", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 100, min: 0, max: i64::MAX, fit: None, slot: |l| &l.v.stream_node_max_entries },
        doc: "most entries of a stream node before XADD starts a new one (0: no limit)",
    },
    // Access control (`cmd::acl` applies `requirepass` to the default user).
    Param {
        name: "requirepass", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&REQUIREPASS),
        doc: "the default user's password (empty: none)",
    },
    Param {
        name: "aclfile", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Custom(&ACLFILE),
        doc: "file of ACL users, read at start and by ACL LOAD, written by ACL SAVE",
    },
    Param {
        name: "acllog-max-len", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 128, min: 0, max: i64::MAX, fit: None, slot: |l| &l.v.acllog_max_len },
        doc: "entries ACL LOG keeps",
    },
    Param {
        name: "acl-pubsub-default", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Enum { default: "resetchannels", options: ACL_PUBSUB, slot: |l| &l.v.acl_pubsub_default },
        doc: "channels a new user may use: allchannels or resetchannels",
    },
    Param {
        name: "unixsocketperm", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "0", check: |v| v.parse::<i64>().map(|_| ()).map_err(|_| "argument couldn't be parsed into an integer".into()) },
        doc: "accepted: ember listens on TCP only",
    },
    Param {
        name: "protected-mode", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.protected_mode },
        doc: "refuse clients not on loopback while the default user has no password",
    },    // Accepted for tools and config files written for Redis, not acted on
    // (`config::compat`; the README's table says so row by row).
    Param {
        name: "io-threads", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "1", check: |v| compat::int_in(v, 1, 128) },
        doc: "accepted: every shard thread does its own I/O (see shards)",
    },
    Param {
        name: "io-threads-do-reads", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::boolean(v) },
        doc: "accepted: every shard thread does its own I/O",
    },
    Param {
        name: "tcp-backlog", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "511", check: |v| compat::int_in(v, 0, i32::MAX as i64) },
        doc: "accepted: the listen backlog is the system's",
    },
    Param {
        name: "dynamic-hz", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: hz stays as set",
    },
    Param {
        name: "activedefrag", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::activedefrag(v) },
        doc: "only no: ember does not defragment",
    },
    Param {
        name: "active-defrag-cycle-min", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "1", check: |v| compat::int_in(v, 1, 99) },
        doc: "accepted: ember does not defragment",
    },
    Param {
        name: "active-defrag-cycle-max", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "25", check: |v| compat::int_in(v, 1, 99) },
        doc: "accepted: ember does not defragment",
    },
    Param {
        name: "active-defrag-threshold-lower", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "10", check: |v| compat::int_in(v, 0, 1000) },
        doc: "accepted: ember does not defragment",
    },
    Param {
        name: "active-defrag-threshold-upper", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "100", check: |v| compat::int_in(v, 0, 1000) },
        doc: "accepted: ember does not defragment",
    },
    Param {
        name: "active-defrag-max-scan-fields", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "1000", check: |v| compat::int_in(v, 1, i64::MAX) },
        doc: "accepted: ember does not defragment",
    },
    Param {
        name: "active-defrag-ignore-bytes", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "104857600", check: |v| super::kind::parse_memory_in(v, 1, i64::MAX as u64).map(|_| ()) },
        doc: "accepted: ember does not defragment",
    },
    Param {
        name: "cluster-enabled", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::boolean(v) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "supervised", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::choice(v, &["upstart", "systemd", "auto", "no"]) },
        doc: "accepted: ember does not notify a supervisor",
    },
    Param {
        name: "syslog-enabled", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::boolean(v) },
        doc: "accepted: ember logs to standard error",
    },
    Param {
        name: "syslog-ident", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "redis", check: |_| Ok(()) },
        doc: "accepted: ember logs to standard error",
    },
    Param {
        name: "syslog-facility", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "local0", check: |v| compat::choice(v, &["user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"]) },
        doc: "accepted: ember logs to standard error",
    },
    Param {
        name: "set-proc-title", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: ember keeps its process title",
    },
    Param {
        name: "proc-title-template", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&compat::PROC_TITLE_TEMPLATE),
        doc: "accepted and kept: ember keeps its process title",
    },
    Param {
        name: "crash-log-enabled", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: a panic prints Rust's report",
    },
    Param {
        name: "crash-memcheck-enabled", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: ember runs no memory test on a crash",
    },
    Param {
        name: "disable-thp", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: ember leaves transparent huge pages as the system has them",
    },
    Param {
        name: "oom-score-adj", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::choice(v, &["no", "yes", "relative", "absolute"]) },
        doc: "accepted: ember leaves its OOM score as it started",
    },
    Param {
        name: "oom-score-adj-values", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "0 200 800", check: |v| compat::oom_score_values(v) },
        doc: "accepted: ember leaves its OOM score as it started",
    },
    Param {
        name: "latency-tracking-info-percentiles", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&LATENCY_PERCENTILES),
        doc: "the percentiles INFO latencystats shows",
    },
    Param {
        name: "tracking-table-max-keys", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 1_000_000, min: 0, max: i64::MAX, fit: None, slot: |l| &l.v.tracking_table_max_keys },
        doc: "keys CLIENT TRACKING remembers at most, all shards together (0: no limit)",
    },
    Param {
        name: "shutdown-timeout", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "10", check: |v| compat::int_in(v, 0, i32::MAX as i64) },
        doc: "accepted: ember has no replicas to wait for",
    },
    Param {
        name: "shutdown-on-sigint", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&shutdown::ON_SIGINT),
        doc: "SIGINT shuts down as SHUTDOWN with these flags does (default: save when save rules are set)",
    },
    Param {
        name: "shutdown-on-sigterm", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&shutdown::ON_SIGTERM),
        doc: "SIGTERM shuts down as SHUTDOWN with these flags does (default: save when save rules are set)",
    },
    Param {
        name: "socket-mark-id", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "0", check: |v| compat::int_in(v, 0, u32::MAX as i64) },
        doc: "accepted: ember marks no socket",
    },
    Param {
        name: "ignore-warnings", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: ember prints no kernel warnings to ignore",
    },
    Param {
        name: "bind-source-addr", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "server_cpulist", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: shard threads are pinned one per core",
    },
    Param {
        name: "bio_cpulist", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: shard threads are pinned one per core",
    },
    Param {
        name: "aof_rewrite_cpulist", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: shard threads are pinned one per core",
    },
    Param {
        name: "bgsave_cpulist", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: shard threads are pinned one per core",
    },
    Param {
        name: "replicaof", aliases: &["slaveof"], set: Set::Immutable, apply: None,
        kind: Kind::Custom(&repl::REPLICAOF),
        doc: "<host> <port>: start as a replica of that master",
    },
    Param {
        name: "masterauth", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&repl::MASTERAUTH),
        doc: "the password a replica gives its master (AUTH)",
    },
    Param {
        name: "masteruser", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&repl::MASTERUSER),
        doc: "the user a replica logs in to its master as (AUTH user password)",
    },
    Param {
        name: "replica-read-only", aliases: &["slave-read-only"], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.replica_read_only },
        doc: "a replica refuses writes from its clients (READONLY)",
    },
    Param {
        name: "replica-lazy-flush", aliases: &["slave-lazy-flush"], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::boolean(v) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "replica-priority", aliases: &["slave-priority"], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "100", check: |v| compat::int_in(v, 0, i32::MAX as i64) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "replica-announced", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "replica-announce-ip", aliases: &["slave-announce-ip"], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "replica-announce-port", aliases: &["slave-announce-port"], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "0", check: |v| compat::int_in(v, 0, 65535) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "repl-diskless-sync", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.repl_diskless_sync },
        doc: "a full sync sends the snapshot as `$EOF:` without writing the file",
    },
    Param {
        name: "repl-diskless-sync-max-replicas", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 0, min: 0, max: i32::MAX as i64, fit: None, slot: |l| &l.v.repl_diskless_sync_max_replicas },
        doc: "this many replicas waiting end the delay at once (0: none do)",
    },
    Param {
        name: "repl-diskless-load", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "disabled", check: |v| compat::choice(v, &["disabled", "on-empty-db", "swapdb"]) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "repl-disable-tcp-nodelay", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::boolean(v) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "repl-backlog-size", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Memory { default: 1048576, min: 1, max: i64::MAX as u64, slot: |l| &l.v.repl_backlog_size },
        doc: "bytes of the replication stream kept for partial resyncs",
    },
    Param {
        name: "repl-backlog-ttl", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 3600, min: 0, max: i32::MAX as i64, fit: None, slot: |l| &l.v.repl_backlog_ttl },
        doc: "seconds a master without replicas keeps its backlog (0: for ever)",
    },
    Param {
        name: "repl-timeout", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 60, min: 1, max: i32::MAX as i64, fit: None, slot: |l| &l.v.repl_timeout },
        doc: "seconds without traffic before a replication link counts as dead",
    },
    Param {
        name: "repl-ping-replica-period", aliases: &["repl-ping-slave-period"], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 10, min: 1, max: i32::MAX as i64, fit: None, slot: |l| &l.v.repl_ping_replica_period },
        doc: "seconds between the PINGs a master sends its replicas",
    },
    Param {
        name: "min-replicas-to-write", aliases: &["min-slaves-to-write"], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 0, min: 0, max: i32::MAX as i64, fit: None, slot: |l| &l.v.min_replicas_to_write },
        doc: "writes are refused with fewer good replicas than this (0: off)",
    },
    Param {
        name: "min-replicas-max-lag", aliases: &["min-slaves-max-lag"], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 10, min: 0, max: i32::MAX as i64, fit: None, slot: |l| &l.v.min_replicas_max_lag },
        doc: "a good replica acknowledged within this many seconds",
    },    Param {
        name: "sanitize-dump-payload", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::choice(v, &["no", "yes", "clients"]) },
        doc: "accepted: RESTORE always checks a payload whole",
    },
    Param {
        name: "replica-ignore-maxmemory", aliases: &["slave-ignore-maxmemory"], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "replica-ignore-disk-write-errors", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::boolean(v) },
        doc: "accepted: ember has no replicas yet",
    },
    Param {
        name: "cluster-allow-pubsubshard-when-down", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-allow-reads-when-down", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::boolean(v) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-allow-replica-migration", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-announce-bus-port", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "0", check: |v| compat::int_in(v, 0, 65535) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-announce-hostname", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-announce-ip", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-announce-port", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "0", check: |v| compat::int_in(v, 0, 65535) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-announce-tls-port", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "0", check: |v| compat::int_in(v, 0, 65535) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-config-file", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "nodes.conf", check: |_| Ok(()) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-link-sendbuf-limit", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "0", check: |v| super::kind::parse_memory_in(v, 0, i64::MAX as u64).map(|_| ()) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-migration-barrier", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "1", check: |v| compat::int_in(v, 0, i32::MAX as i64) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-node-timeout", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "15000", check: |v| compat::int_in(v, 0, i64::MAX) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-port", aliases: &[], set: Set::Immutable, apply: None,
        kind: Kind::Fixed { answer: "0", check: |v| compat::int_in(v, 0, 65535) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-preferred-endpoint-type", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "ip", check: |v| compat::choice(v, &["ip", "hostname", "unknown-endpoint"]) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-replica-no-failover", aliases: &["cluster-slave-no-failover"], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::boolean(v) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-replica-validity-factor", aliases: &["cluster-slave-validity-factor"], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "10", check: |v| compat::int_in(v, 0, i32::MAX as i64) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "cluster-require-full-coverage", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "yes", check: |v| compat::boolean(v) },
        doc: "accepted: ember is not a cluster node",
    },
    Param {
        name: "tls-port", aliases: &[], set: Set::StartUp, apply: None,
        kind: Kind::Int { default: 0, min: 0, max: 65535, fit: None, slot: |l| &l.v.tls_port },
        doc: "TLS port on the `bind` addresses (0: none); read at start",
    },
    Param {
        name: "tls-auth-clients", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Enum { default: "yes", options: tls::AUTH_CLIENTS, slot: |l| &l.v.tls_auth_clients },
        doc: "TLS clients must show a certificate the CA signed (yes), may (optional), or need not (no)",
    },
    Param {
        name: "tls-ca-cert-dir", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::CA_CERT_DIR),
        doc: "a directory of PEM CA certificates for client certificates",
    },
    Param {
        name: "tls-ca-cert-file", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::CA_CERT_FILE),
        doc: "PEM CA certificates for client certificates",
    },
    Param {
        name: "tls-cert-file", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::CERT_FILE),
        doc: "the server's PEM certificate chain",
    },
    Param {
        name: "tls-ciphers", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::CIPHERS),
        doc: "TLS 1.2 suites by OpenSSL name, colon-separated (empty: rustls's defaults)",
    },
    Param {
        name: "tls-ciphersuites", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::CIPHERSUITES),
        doc: "TLS 1.3 suites, colon-separated (empty: rustls's defaults)",
    },
    Param {
        name: "tls-client-cert-file", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::CLIENT_CERT_FILE),
        doc: "the certificate a replica shows its master (empty: tls-cert-file)",
    },
    Param {
        name: "tls-client-key-file", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::CLIENT_KEY_FILE),
        doc: "the private key of tls-client-cert-file",
    },
    Param {
        name: "tls-client-key-file-pass", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::CLIENT_KEY_FILE_PASS),
        doc: "the password of an encrypted tls-client-key-file",
    },
    Param {
        name: "tls-dh-params-file", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "", check: |_| Ok(()) },
        doc: "accepted, not acted on: ember's TLS takes rustls's defaults",
    },
    Param {
        name: "tls-key-file", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::KEY_FILE),
        doc: "the server's PEM private key (encrypted: see tls-key-file-pass)",
    },
    Param {
        name: "tls-key-file-pass", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::KEY_FILE_PASS),
        doc: "the password of an encrypted tls-key-file (PKCS#8, PBES2)",
    },
    Param {
        name: "tls-protocols", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Custom(&tls::PROTOCOLS),
        doc: "TLS versions offered: TLSv1.2 and/or TLSv1.3 (empty: both)",
    },
    Param {
        name: "tls-cluster", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "no", check: |v| compat::boolean(v) },
        doc: "accepted, not acted on: ember's TLS takes rustls's defaults",
    },
    Param {
        name: "tls-replication", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |l| &l.v.tls_replication },
        doc: "a replica connects to its master over TLS (the next link it makes)",
    },
    Param {
        name: "tls-prefer-server-ciphers", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: false, slot: |l| &l.v.tls_prefer_server_ciphers },
        doc: "the server's suite order wins over the client's",
    },
    Param {
        name: "tls-session-caching", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Bool { default: true, slot: |l| &l.v.tls_session_caching },
        doc: "keep TLS sessions so clients can resume them",
    },
    Param {
        name: "tls-session-cache-size", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Int { default: 20480, min: 0, max: i32::MAX as i64, fit: None, slot: |l| &l.v.tls_session_cache_size },
        doc: "TLS sessions kept (0: none)",
    },
    Param {
        name: "tls-session-cache-timeout", aliases: &[], set: Set::Yes, apply: None,
        kind: Kind::Fixed { answer: "300", check: |v| compat::int_in(v, 0, i32::MAX as i64) },
        doc: "accepted, not acted on: ember's TLS takes rustls's defaults",
    },
];

/// `acl-pubsub-default`'s options; [`Live::acl_pubsub_all`] reads index 0.
const ACL_PUBSUB: &[&str] = &["allchannels", "resetchannels"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_unique_and_lowercase() {
        let mut seen = std::collections::HashSet::new();
        for name in PARAMS.iter().flat_map(Param::names) {
            assert!(seen.insert(name), "{name} declared twice");
            assert_eq!(name, name.to_ascii_lowercase());
            assert!(find_param(name.to_ascii_uppercase().as_bytes()).is_some());
        }
    }

    #[test]
    fn every_default_is_in_bounds_and_reads_back_as_its_text() {
        let live = Live::new();
        for p in PARAMS {
            match &p.kind {
                Kind::Int {
                    default, min, max, ..
                } => {
                    assert!((*min..=*max).contains(&(*default as i64)), "{}", p.name)
                }
                Kind::Memory {
                    default, min, max, ..
                } => {
                    assert!((min..=max).contains(&default), "{}", p.name)
                }
                Kind::Enum {
                    default, options, ..
                } => {
                    assert!(options.contains(default), "{}", p.name)
                }
                _ => {}
            }
            // `dir` reads back as the directory it names, not as written.
            if p.name == "dir" {
                continue;
            }
            // The default, written as a config file would, parses back to it.
            let text = p.kind.default_text();
            let parsed = p.kind.parse(&live, &text);
            assert_eq!(parsed, Ok(p.kind.read(&live)), "{} {text:?}", p.name);
        }
    }

    #[test]
    fn defaults_are_redis_and_embers_documented_ones() {
        let live = Live::new();
        let get = |name: &str| find_param(name.as_bytes()).unwrap().show(&live);
        for (name, want) in [
            ("port", "6379"),
            ("bind", "127.0.0.1 -::1"),
            ("databases", "16"),
            ("hz", "10"),
            ("maxclients", "10000"),
            ("proto-max-bulk-len", "536870912"),
            ("client-query-buffer-limit", "1073741824"),
            (
                "client-output-buffer-limit",
                "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
            ),
            ("loglevel", "notice"),
            ("timeout", "0"),
            ("tcp-keepalive", "300"),
            ("enable-debug-command", "no"),
            ("notify-keyspace-events", ""),
            ("hash-max-ziplist-entries", "512"),
            ("hash-max-listpack-value", "64"),
            ("active-expire-storm-defer-purge", "yes"),
            ("lazyfree-lazy-user-del", "no"),
            ("save", "3600 1 300 100 60 10000"),
            ("dbfilename", "dump.rdb"),
            ("rdbcompression", "yes"),
            ("maxmemory-policy", "noeviction"),
            ("maxmemory", "0"),
            ("maxmemory-samples", "5"),
            ("maxmemory-eviction-tenacity", "10"),
            ("lfu-log-factor", "10"),
            ("lfu-decay-time", "1"),
            ("maxmemory-clients", "0"),
        ] {
            assert_eq!(get(name), want, "{name}");
        }
        assert_eq!(live.shards() as u64, available_cores());
        assert_eq!(live.hash_listpack(), ListpackLimits::DEFAULT);
    }

    /// The README's configuration table names every parameter, with what
    /// CONFIG SET does to it, so the two cannot drift apart.
    #[test]
    fn the_readme_lists_every_parameter_with_its_config_set_column() {
        let readme = include_str!("../../README.md");
        let section = readme
            .split("\n## Configuration\n")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .expect("README has a Configuration section");
        let mut listed = std::collections::HashMap::new();
        for line in section.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split(" | ").collect();
            let column = cells.get(1).copied().unwrap_or("").trim();
            for name in cells[0].split('`').skip(1).step_by(2) {
                listed.insert(name.to_string(), column.to_string());
            }
        }
        for p in PARAMS {
            let want = match p.set {
                Set::Yes => "yes",
                Set::Immutable => "no",
                Set::StartUp => "same value",
                Set::Protected => "protected",
            };
            for name in p.names() {
                assert_eq!(
                    listed.get(name).map(String::as_str),
                    Some(want),
                    "README's configuration table: {name}"
                );
            }
        }
        for name in listed.keys() {
            assert!(
                find_param(name.as_bytes()).is_some(),
                "README lists {name}, no row has it"
            );
        }
    }
}
