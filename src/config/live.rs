//! [`Live`]: the current value of every parameter, one slot per row of
//! [`super::params::PARAMS`]. The rows say what goes into a slot and when;
//! this file only holds the slots and gives the shards typed reads of them.
//!
//! Every read here is one relaxed atomic load (three for an output buffer
//! limit): a shard reads a setting when it needs it (per connection, per
//! tick, per pass), and a CONFIG SET on another shard is seen from that
//! read on. The few text values (`bind`, the `notify-keyspace-events`
//! letters) sit behind locks that only start-up and CONFIG take.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::{Mutex, RwLock};

use super::obuf::{ObufAtomics, ObufClass, ObufLimit};
use super::params::PARAMS;

/// The value of every parameter.
pub struct Live {
    pub(super) v: Slots,
    /// The config file the server started from (INFO's `config_file`).
    pub(super) config_file: Option<PathBuf>,
    /// Held through a CONFIG SET (so several pairs land together) and a
    /// CONFIG GET (so it sees all of a SET or none of it).
    pub(super) writer: Mutex<()>,
    /// The config file's `user` lines (and `--user` flags), each the
    /// user's name then its rules: ACL users to create at start.
    pub(super) user_lines: Mutex<Vec<Vec<String>>>,
    /// Moves the server's listeners to a new `port` or `bind` (installed
    /// by the shard layer once they exist, [`Live::set_rebind`]); CONFIG
    /// SET of either runs it and rolls back when it fails.
    pub(super) rebind: std::sync::OnceLock<Rebind>,
}

/// See [`Live::set_rebind`]: `Err` is the line to log, in Redis's words.
/// Its arguments: the plain port to listen on, and whether `tls-port`'s
/// listeners move too (a new `bind`).
pub type Rebind = Box<dyn Fn(u16, bool) -> Result<(), String> + Send + Sync>;

/// The slots, named after their parameters. Their `Default` (zeros) is
/// never seen: [`Live::new`] stores every row's default before anyone reads.
#[derive(Default)]
pub(super) struct Slots {
    pub port: AtomicU64,
    pub bind: RwLock<String>,
    pub shards: AtomicU64,
    pub databases: AtomicU64,
    pub maxclients: AtomicU64,
    pub timeout: AtomicU64,
    pub tcp_keepalive: AtomicU64,
    pub proto_max_bulk_len: AtomicU64,
    pub client_query_buffer_limit: AtomicU64,
    pub obuf: [ObufAtomics; 3],
    pub hz: AtomicU64,
    pub active_expire_effort: AtomicU64,
    pub active_expire_slice_us: AtomicU64,
    pub active_expire_storm_cpu_perc: AtomicU64,
    pub active_expire_storm_busy_perc: AtomicU64,
    pub active_expire_storm_defer_purge: AtomicBool,
    pub notify_text: RwLock<String>,
    pub notify_flags: AtomicU32,
    pub latency_monitor_threshold: AtomicU64,
    pub slowlog_log_slower_than: AtomicU64,
    pub slowlog_max_len: AtomicU64,
    pub latency_tracking: AtomicBool,
    /// `latency-tracking-info-percentiles`, as CONFIG GET prints them.
    pub latency_tracking_percentiles: RwLock<String>,
    pub tracking_table_max_keys: AtomicU64,
    pub busy_reply_threshold: AtomicU64,
    pub loglevel: AtomicU8,
    pub enable_debug_command: AtomicU8,
    /// `shutdown-on-sigint` / `-sigterm`, as [`super::shutdown::ShutdownFlags`] bits.
    pub shutdown_on_sigint: AtomicU8,
    pub shutdown_on_sigterm: AtomicU8,
    pub proc_title_template: RwLock<String>,
    pub daemonize: AtomicBool,
    pub pidfile: RwLock<String>,
    pub logfile: RwLock<String>,
    pub jemalloc_bg_thread: AtomicBool,
    pub hash_max_listpack_entries: AtomicU64,
    pub hash_max_listpack_value: AtomicU64,
    pub hll_sparse_max_bytes: AtomicU64,
    pub stream_node_max_bytes: AtomicU64,
    pub stream_node_max_entries: AtomicU64,
    // RDB persistence (`config::persist`).
    pub save: RwLock<String>,
    pub dbfilename: RwLock<String>,
    pub rdbcompression: AtomicBool,
    pub rdbchecksum: AtomicBool,
    pub stop_writes_on_bgsave_error: AtomicBool,
    pub rdb_del_sync_files: AtomicBool,
    pub enable_protected_configs: AtomicU8,
    pub always_show_logo: AtomicBool,
    pub rdb_key_save_delay: AtomicU64,
    pub key_load_delay: AtomicU64,
    // The append-only file (`config::persist`).
    pub appendonly: AtomicBool,
    pub appendfilename: RwLock<String>,
    pub appenddirname: RwLock<String>,
    pub appendfsync: AtomicU8,
    pub no_appendfsync_on_rewrite: AtomicBool,
    pub auto_aof_rewrite_percentage: AtomicU64,
    pub auto_aof_rewrite_min_size: AtomicU64,
    pub aof_load_truncated: AtomicBool,
    pub aof_use_rdb_preamble: AtomicBool,
    pub aof_rewrite_incremental_fsync: AtomicBool,
    pub rdb_save_incremental_fsync: AtomicBool,
    pub aof_timestamp_enabled: AtomicBool,
    pub aof_disable_auto_gc: AtomicBool,
    pub requirepass: RwLock<String>,
    pub aclfile: RwLock<String>,
    pub acllog_max_len: AtomicU64,
    pub acl_pubsub_default: AtomicU8,
    pub protected_mode: AtomicBool,
    // TLS (`config::tls`).
    pub tls_port: AtomicU64,
    pub tls_cert_file: RwLock<String>,
    pub tls_key_file: RwLock<String>,
    pub tls_key_file_pass: RwLock<String>,
    pub tls_client_cert_file: RwLock<String>,
    pub tls_client_key_file: RwLock<String>,
    pub tls_client_key_file_pass: RwLock<String>,
    pub tls_replication: AtomicBool,
    pub tls_ca_cert_file: RwLock<String>,
    pub tls_ca_cert_dir: RwLock<String>,
    pub tls_auth_clients: AtomicU8,
    pub tls_protocols: RwLock<String>,
    pub tls_ciphers: RwLock<String>,
    pub tls_ciphersuites: RwLock<String>,
    pub tls_prefer_server_ciphers: AtomicBool,
    pub tls_session_caching: AtomicBool,
    pub tls_session_cache_size: AtomicU64,
    // Replication (`config::repl`).
    pub masterauth: RwLock<String>,
    pub masteruser: RwLock<String>,
    pub replicaof: RwLock<String>,
    pub replica_read_only: AtomicBool,
    pub replica_serve_stale_data: AtomicBool,
    pub repl_diskless_sync: AtomicBool,
    pub repl_diskless_sync_delay: AtomicU64,
    pub repl_diskless_sync_max_replicas: AtomicU64,
    pub repl_backlog_size: AtomicU64,
    pub repl_timeout: AtomicU64,
    pub repl_ping_replica_period: AtomicU64,
    pub repl_backlog_ttl: AtomicU64,
    pub min_replicas_to_write: AtomicU64,
    pub min_replicas_max_lag: AtomicU64,
}

/// The `lazyfree-lazy-*` switches. Unlike the other slots these are one
/// per process, not per [`Live`]: the store reads them where it frees a
/// value (`store::lazyfree`), with no `Shared` at hand, and the lazy-free
/// thread they feed is one per process too. So `Live::new` (which stores
/// every default) resets them; a server makes one `Live`.
pub static LAZYFREE: LazyFree = LazyFree {
    eviction: AtomicBool::new(false),
    expire: AtomicBool::new(false),
    server_del: AtomicBool::new(false),
    user_del: AtomicBool::new(false),
    user_flush: AtomicBool::new(false),
};

/// See [`LAZYFREE`].
pub struct LazyFree {
    /// Freeing for an eviction; ember evicts nothing yet.
    pub eviction: AtomicBool,
    /// An expired key's value (the sweep and lazy expiry).
    pub expire: AtomicBool,
    /// A value a write replaces.
    pub server_del: AtomicBool,
    /// DEL frees as UNLINK does.
    pub user_del: AtomicBool,
    /// FLUSHALL / FLUSHDB naming no mode are ASYNC.
    pub user_flush: AtomicBool,
}

/// The container encodings' thresholds (`set-max-intset-entries`,
/// `zset-max-listpack-*`, `list-max-listpack-size`, `list-compress-depth`).
/// One per process, as [`LAZYFREE`] and for the same reason: the store
/// reads them where a container grows (`store::encoding`).
pub static ENCODINGS: Encodings = Encodings {
    set_max_intset_entries: AtomicU64::new(512),
    zset_max_listpack_entries: AtomicU64::new(128),
    zset_max_listpack_value: AtomicU64::new(64),
    list_max_listpack_size: AtomicU64::new(-2i64 as u64),
    list_compress_depth: AtomicU64::new(0),
};

/// See [`ENCODINGS`].
pub struct Encodings {
    /// A set of integers keeps the `intset` encoding up to this many members.
    pub set_max_intset_entries: AtomicU64,
    /// A sorted set keeps the `listpack` encoding up to this many members...
    pub zset_max_listpack_entries: AtomicU64,
    /// ...each at most this long (bytes).
    pub zset_max_listpack_value: AtomicU64,
    /// A quicklist node's size (negative: a size class); lists are always
    /// `quicklist` in Redis 7.0, so this shapes nothing a client sees here.
    pub list_max_listpack_size: AtomicU64,
    /// Quicklist nodes left uncompressed at each end; ember compresses none.
    pub list_compress_depth: AtomicU64,
}

impl Encodings {
    pub fn set_max_intset_entries(&self) -> usize {
        self.set_max_intset_entries.load(Relaxed) as usize
    }

    pub fn zset_max_listpack_entries(&self) -> usize {
        self.zset_max_listpack_entries.load(Relaxed) as usize
    }

    pub fn zset_max_listpack_value(&self) -> usize {
        self.zset_max_listpack_value.load(Relaxed) as usize
    }
}

/// The memory limit and how keys are chosen to go (`maxmemory`,
/// `maxmemory-policy`, `maxmemory-samples`, `maxmemory-eviction-tenacity`,
/// `lfu-log-factor`, `lfu-decay-time`, `maxmemory-clients`). One per
/// process, as [`LAZYFREE`] and for the same reason: the store reads the
/// policy at every key access (`store::access` keeps LRU or LFU data by it)
/// and the eviction slices read the rest with no `Shared` at hand.
pub static EVICTION: Eviction = Eviction {
    maxmemory: AtomicU64::new(0),
    policy: AtomicU8::new(Policy::NoEviction as u8),
    samples: AtomicU64::new(5),
    tenacity: AtomicU64::new(10),
    lfu_log_factor: AtomicU64::new(10),
    lfu_decay_time: AtomicU64::new(1),
    maxmemory_clients: AtomicU64::new(0),
};

/// See [`EVICTION`].
pub struct Eviction {
    /// Bytes; 0: no limit.
    pub maxmemory: AtomicU64,
    /// A [`Policy`], as its index in [`POLICIES`].
    pub policy: AtomicU8,
    /// Keys sampled per database for each eviction.
    pub samples: AtomicU64,
    /// 0..100: how long one eviction slice may run (Redis's scale: 10 is
    /// 500 µs, each step 15% more, 100 no limit).
    pub tenacity: AtomicU64,
    pub lfu_log_factor: AtomicU64,
    /// Minutes per decrement of an idle key's LFU counter.
    pub lfu_decay_time: AtomicU64,
    /// Bytes, or `PERCENT | n` for `n%` of `maxmemory` (the limit in
    /// bytes: `exec::client_evict::limit`).
    pub maxmemory_clients: AtomicU64,
}

/// `maxmemory-clients` as a percentage: this bit and the number.
pub const CLIENTS_PERCENT: u64 = 1 << 63;

/// `maxmemory-policy`'s options, in Redis's order (its error lists them so).
pub const POLICIES: &[&str] = &[
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "noeviction",
    // ember's own, after Redis's eight (see `Policy::AllkeysTinylfu`).
    "allkeys-tinylfu",
];

/// The eviction policies, in the order of [`POLICIES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    VolatileLru,
    VolatileLfu,
    VolatileRandom,
    VolatileTtl,
    AllkeysLru,
    AllkeysLfu,
    AllkeysRandom,
    NoEviction,
    /// Not Redis's: any key, the least often requested lately first by a
    /// TinyLFU frequency sketch that remembers keys no longer stored, a
    /// new key admitted past a window only over a less requested one
    /// (`store::tinylfu`).
    AllkeysTinylfu,
}

impl Policy {
    pub fn from_index(i: u8) -> Policy {
        use Policy::*;
        [
            VolatileLru,
            VolatileLfu,
            VolatileRandom,
            VolatileTtl,
            AllkeysLru,
            AllkeysLfu,
            AllkeysRandom,
            NoEviction,
            AllkeysTinylfu,
        ]
        .get(usize::from(i))
        .copied()
        .unwrap_or(NoEviction)
    }

    pub fn name(self) -> &'static str {
        POLICIES[self as usize]
    }

    /// Keys keep an LFU counter (else an LRU clock).
    pub fn is_lfu(self) -> bool {
        matches!(self, Policy::VolatileLfu | Policy::AllkeysLfu)
    }

    /// Keys are chosen by their access data (LRU or LFU): Redis then
    /// stops sharing small integers between keys.
    pub fn tracks_access(self) -> bool {
        matches!(
            self,
            Policy::VolatileLru
                | Policy::VolatileLfu
                | Policy::AllkeysLru
                | Policy::AllkeysLfu
                | Policy::AllkeysTinylfu
        )
    }

    /// Only keys with a TTL may be evicted.
    pub fn volatile_only(self) -> bool {
        matches!(
            self,
            Policy::VolatileLru
                | Policy::VolatileLfu
                | Policy::VolatileRandom
                | Policy::VolatileTtl
        )
    }
}

impl Eviction {
    pub fn maxmemory(&self) -> u64 {
        self.maxmemory.load(Relaxed)
    }

    pub fn policy(&self) -> Policy {
        Policy::from_index(self.policy.load(Relaxed))
    }

    pub fn samples(&self) -> usize {
        self.samples.load(Relaxed) as usize
    }

    pub fn tenacity(&self) -> u64 {
        self.tenacity.load(Relaxed)
    }

    pub fn lfu_log_factor(&self) -> u64 {
        self.lfu_log_factor.load(Relaxed)
    }

    pub fn lfu_decay_time(&self) -> u64 {
        self.lfu_decay_time.load(Relaxed)
    }
}

/// `loglevel`'s options, Redis's names (`logging` maps them).
pub(super) const LOGLEVELS: &[&str] = &["debug", "verbose", "notice", "warning"];

/// `appendfsync`'s options, in Redis's order (its error lists them so).
pub(super) const APPENDFSYNC: &[&str] = &["everysec", "always", "no"];

/// When the append-only file is synced (`appendfsync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendFsync {
    EverySec,
    /// Before the reply of a write is sent.
    Always,
    /// When the OS decides.
    No,
}

/// `enable-debug-command`'s options, in Redis's order (its error lists them
/// so), and what each lets a client do.
pub(super) const DEBUG_COMMAND: &[&str] = &["no", "yes", "local"];

/// Who may run DEBUG (`enable-debug-command`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugCommand {
    No,
    Yes,
    /// From loopback connections only.
    Local,
}

/// `stream-node-max-bytes` and `stream-node-max-entries` (0: no limit):
/// when XADD starts a new node of a stream (`store::stream`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamNodeLimits {
    pub bytes: usize,
    pub entries: usize,
}

impl Default for StreamNodeLimits {
    /// Redis's defaults, 4096 bytes and 100 entries.
    fn default() -> Self {
        StreamNodeLimits {
            bytes: 4096,
            entries: 100,
        }
    }
}

/// Redis's `hash-max-listpack-entries` and `hash-max-listpack-value`: the
/// largest hash (fields) and the longest field or value (bytes) kept in
/// the compact form (`store::hash` converts by them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListpackLimits {
    pub entries: usize,
    pub value: usize,
}

impl ListpackLimits {
    /// Redis 7.0's built-in defaults, what `redis-server` without a config
    /// file reports (the sample redis.conf lowers `entries` to 128). The
    /// two rows take their defaults from here.
    pub const DEFAULT: ListpackLimits = ListpackLimits {
        entries: 512,
        value: 64,
    };

    /// Whether a field and value this long may stay in the compact form.
    pub fn fits(&self, field: &[u8], value: &[u8]) -> bool {
        field.len() <= self.value && value.len() <= self.value
    }
}

impl Default for ListpackLimits {
    fn default() -> Self {
        ListpackLimits::DEFAULT
    }
}

impl Default for Live {
    fn default() -> Self {
        Live::new()
    }
}

impl Live {
    /// Every parameter at its default.
    pub fn new() -> Live {
        let live = Live {
            v: Slots::default(),
            config_file: None,
            writer: Mutex::new(()),
            user_lines: Mutex::new(Vec::new()),
            rebind: std::sync::OnceLock::new(),
        };
        for param in PARAMS {
            param.kind.store(&live, param.kind.default_value(&live));
        }
        live
    }

    /// Runs every row's apply hook (the logger's level, the allocator's
    /// purging, the lazy-free switches): once, when the server starts.
    pub fn apply_all(&self) {
        for param in PARAMS {
            if let Some(apply) = param.apply {
                apply(self);
            }
        }
    }

    /// `requirepass`: the default user's password ("" for none).
    pub fn requirepass(&self) -> String {
        self.v
            .requirepass
            .read()
            .map_or_else(|_| String::new(), |p| p.clone())
    }

    /// `aclfile` ("" for none).
    pub fn aclfile(&self) -> String {
        self.v
            .aclfile
            .read()
            .map_or_else(|_| String::new(), |p| p.clone())
    }

    /// `acllog-max-len`.
    pub fn acllog_max_len(&self) -> usize {
        self.v.acllog_max_len.load(Relaxed) as usize
    }

    /// `acl-pubsub-default allchannels`: new users may use every channel.
    pub fn acl_pubsub_all(&self) -> bool {
        self.v.acl_pubsub_default.load(Relaxed) == 0
    }

    /// `protected-mode`.
    pub fn protected_mode(&self) -> bool {
        self.v.protected_mode.load(Relaxed)
    }

    /// The `user` lines of the config file and flags, in order.
    pub fn user_lines(&self) -> Vec<Vec<String>> {
        self.user_lines
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// Keeps a `user` directive's words for the ACL set-up at start.
    pub(super) fn add_user_line(&self, words: Vec<String>) {
        if let Ok(mut lines) = self.user_lines.lock() {
            lines.push(words);
        }
    }

    /// The percentiles INFO latencystats prints, in order.
    pub fn latency_tracking_percentiles(&self) -> Vec<f64> {
        self.v
            .latency_tracking_percentiles
            .read()
            .map(|t| {
                t.split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Installs what a CONFIG SET of `port` runs to listen on the new
    /// port (binding it on every `bind` address for every shard, and
    /// closing the old listeners once that worked). Without one, as in a
    /// bare `Live`, the value is only stored.
    pub fn set_rebind(&self, rebind: Rebind) {
        let _ = self.rebind.set(rebind);
    }

    pub fn port(&self) -> u16 {
        self.v.port.load(Relaxed) as u16
    }

    pub fn bind(&self) -> String {
        self.v
            .bind
            .read()
            .map_or_else(|_| String::new(), |b| b.clone())
    }

    /// `bind`'s addresses, each with whether it is optional (`-`).
    pub fn bind_addrs(&self) -> Vec<(String, bool)> {
        self.bind()
            .split_whitespace()
            .map(|w| match w.strip_prefix('-') {
                Some(addr) => (addr.to_string(), true),
                None => (w.to_string(), false),
            })
            .collect()
    }

    /// Shard threads (`shards`).
    pub fn shards(&self) -> usize {
        self.v.shards.load(Relaxed) as usize
    }

    pub fn databases(&self) -> usize {
        self.v.databases.load(Relaxed) as usize
    }

    pub fn maxclients(&self) -> usize {
        self.v.maxclients.load(Relaxed) as usize
    }

    /// Idle seconds after which a client is closed; 0: never (`timeout`).
    pub fn timeout_s(&self) -> u64 {
        self.v.timeout.load(Relaxed)
    }

    /// TCP keepalive idle seconds for new connections; 0: off.
    pub fn tcp_keepalive_s(&self) -> u64 {
        self.v.tcp_keepalive.load(Relaxed)
    }

    /// `proto-max-bulk-len`.
    pub fn max_bulk_len(&self) -> usize {
        self.v.proto_max_bulk_len.load(Relaxed) as usize
    }

    /// `client-query-buffer-limit`.
    pub fn query_buffer_limit(&self) -> usize {
        self.v.client_query_buffer_limit.load(Relaxed) as usize
    }

    /// One class's `client-output-buffer-limit`.
    pub fn obuf(&self, class: ObufClass) -> ObufLimit {
        self.v.obuf[class as usize].load()
    }

    /// `hz`, already clamped to 1..500.
    pub fn hz(&self) -> u32 {
        self.v.hz.load(Relaxed) as u32
    }

    /// `active-expire-effort`, 1..10.
    pub fn active_expire_effort(&self) -> u32 {
        self.v.active_expire_effort.load(Relaxed) as u32
    }

    pub fn active_expire_slice_us(&self) -> u64 {
        self.v.active_expire_slice_us.load(Relaxed)
    }

    pub fn active_expire_storm_cpu_perc(&self) -> u64 {
        self.v.active_expire_storm_cpu_perc.load(Relaxed)
    }

    pub fn active_expire_storm_busy_perc(&self) -> u64 {
        self.v.active_expire_storm_busy_perc.load(Relaxed)
    }

    /// `notify-keyspace-events` as [`super::events`] bits.
    pub fn notify_flags(&self) -> u32 {
        self.v.notify_flags.load(Relaxed)
    }

    /// `busy-reply-threshold` (`lua-time-limit`), ms.
    pub fn busy_reply_threshold_ms(&self) -> u64 {
        self.v.busy_reply_threshold.load(Relaxed)
    }

    /// `slowlog-log-slower-than`, µs: `None` while the slow log is off (-1).
    pub fn slowlog_threshold_us(&self) -> Option<u64> {
        let v = self.v.slowlog_log_slower_than.load(Relaxed) as i64;
        u64::try_from(v).ok()
    }

    /// `slowlog-max-len`.
    pub fn slowlog_max_len(&self) -> usize {
        usize::try_from(self.v.slowlog_max_len.load(Relaxed)).unwrap_or(usize::MAX)
    }

    /// `latency-monitor-threshold`, ms (0: the latency monitor is off).
    pub fn latency_threshold_ms(&self) -> u64 {
        self.v.latency_monitor_threshold.load(Relaxed)
    }

    /// `latency-tracking`: per-command latency histograms (INFO
    /// latencystats) are kept.
    pub fn latency_tracking(&self) -> bool {
        self.v.latency_tracking.load(Relaxed)
    }

    /// `tracking-table-max-keys`: the keys CLIENT TRACKING remembers at
    /// most, every shard's together (0: no limit).
    pub fn tracking_table_max_keys(&self) -> u64 {
        self.v.tracking_table_max_keys.load(Relaxed)
    }

    /// `loglevel`, Redis's name.
    pub fn loglevel(&self) -> &'static str {
        LOGLEVELS
            .get(self.v.loglevel.load(Relaxed) as usize)
            .copied()
            .unwrap_or("notice")
    }

    pub fn debug_command(&self) -> DebugCommand {
        match DEBUG_COMMAND.get(self.v.enable_debug_command.load(Relaxed) as usize) {
            Some(&"yes") => DebugCommand::Yes,
            Some(&"local") => DebugCommand::Local,
            _ => DebugCommand::No,
        }
    }

    /// The limits of the compact hash form, for a write.
    pub fn hash_listpack(&self) -> ListpackLimits {
        ListpackLimits {
            entries: self.v.hash_max_listpack_entries.load(Relaxed) as usize,
            value: self.v.hash_max_listpack_value.load(Relaxed) as usize,
        }
    }

    /// `hll-sparse-max-bytes`: the most bytes a sparse HyperLogLog may
    /// take before PFADD makes it dense (`store::hll`).
    pub fn hll_sparse_max_bytes(&self) -> usize {
        self.v.hll_sparse_max_bytes.load(Relaxed) as usize
    }

    /// `stream-node-max-bytes` and `stream-node-max-entries`: when a
    /// stream's tail node is full and XADD starts a new one (`store::stream`).
    pub fn stream_node_limits(&self) -> StreamNodeLimits {
        StreamNodeLimits {
            bytes: self.v.stream_node_max_bytes.load(Relaxed) as usize,
            entries: self.v.stream_node_max_entries.load(Relaxed) as usize,
        }
    }

    /// `save` as CONFIG GET prints it (`""`: no rules).
    pub fn save_text(&self) -> String {
        self.v
            .save
            .read()
            .map_or_else(|_| String::new(), |t| t.clone())
    }

    /// `dir`: the working directory, absolute.
    pub fn dir(&self) -> String {
        std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string())
    }

    pub fn dbfilename(&self) -> String {
        self.v
            .dbfilename
            .read()
            .map_or_else(|_| "dump.rdb".into(), |t| t.clone())
    }

    pub fn rdbcompression(&self) -> bool {
        self.v.rdbcompression.load(Relaxed)
    }

    pub fn rdbchecksum(&self) -> bool {
        self.v.rdbchecksum.load(Relaxed)
    }

    pub fn masterauth(&self) -> String {
        self.v
            .masterauth
            .read()
            .map_or_else(|_| String::new(), |t| t.clone())
    }

    /// `replicaof`: `host port` of the master this server follows (as
    /// given at start-up, then as REPLICAOF and FAILOVER change it), or
    /// empty; CONFIG REWRITE writes it as Redis writes its master.
    pub fn replicaof(&self) -> String {
        self.v
            .replicaof
            .read()
            .map_or_else(|_| String::new(), |t| t.clone())
    }

    /// The master this server follows now (`None`: it is a master).
    pub fn set_replicaof(&self, master: Option<(&str, u16)>) {
        if let Ok(mut slot) = self.v.replicaof.write() {
            *slot = master.map_or_else(String::new, |(host, port)| format!("{host} {port}"));
        }
    }

    pub fn masteruser(&self) -> String {
        self.v
            .masteruser
            .read()
            .map_or_else(|_| String::new(), |t| t.clone())
    }

    pub fn replica_serve_stale_data(&self) -> bool {
        self.v.replica_serve_stale_data.load(Relaxed)
    }

    pub fn replica_read_only(&self) -> bool {
        self.v.replica_read_only.load(Relaxed)
    }

    pub fn repl_diskless_sync(&self) -> bool {
        self.v.repl_diskless_sync.load(Relaxed)
    }

    pub fn repl_backlog_size(&self) -> u64 {
        self.v.repl_backlog_size.load(Relaxed)
    }

    pub fn repl_timeout_s(&self) -> u64 {
        self.v.repl_timeout.load(Relaxed)
    }

    pub fn repl_diskless_sync_delay_s(&self) -> u64 {
        self.v.repl_diskless_sync_delay.load(Relaxed)
    }

    pub fn repl_diskless_sync_max_replicas(&self) -> u64 {
        self.v.repl_diskless_sync_max_replicas.load(Relaxed)
    }

    pub fn repl_ping_replica_period_s(&self) -> u64 {
        self.v.repl_ping_replica_period.load(Relaxed)
    }

    /// `repl-backlog-ttl`: seconds a master without replicas keeps its
    /// backlog (0: for ever).
    pub fn repl_backlog_ttl_s(&self) -> u64 {
        self.v.repl_backlog_ttl.load(Relaxed)
    }

    pub fn min_replicas_to_write(&self) -> u64 {
        self.v.min_replicas_to_write.load(Relaxed)
    }

    pub fn min_replicas_max_lag_s(&self) -> u64 {
        self.v.min_replicas_max_lag.load(Relaxed)
    }

    pub fn stop_writes_on_bgsave_error(&self) -> bool {
        self.v.stop_writes_on_bgsave_error.load(Relaxed)
    }

    pub fn rdb_del_sync_files(&self) -> bool {
        self.v.rdb_del_sync_files.load(Relaxed)
    }

    /// `enable-protected-configs`: who may CONFIG SET `dir` and
    /// `dbfilename` (the values are `enable-debug-command`'s).
    pub fn protected_configs(&self) -> DebugCommand {
        match DEBUG_COMMAND.get(self.v.enable_protected_configs.load(Relaxed) as usize) {
            Some(&"yes") => DebugCommand::Yes,
            Some(&"local") => DebugCommand::Local,
            _ => DebugCommand::No,
        }
    }

    /// `rdb-key-save-delay`: µs a background save waits per key (0: none;
    /// negative values, nanoseconds in Redis, count as none).
    pub fn rdb_key_save_delay_us(&self) -> u64 {
        let v = self.v.rdb_key_save_delay.load(Relaxed) as i64;
        v.max(0) as u64
    }

    /// `key-load-delay`: µs the start-up load waits per key, as Redis's
    /// `debugDelay` reads it (negative -n: 1 µs once in n keys).
    pub fn key_load_delay(&self) -> i64 {
        self.v.key_load_delay.load(Relaxed) as i64
    }

    /// `appendonly`: writes are logged to the append-only file.
    pub fn appendonly(&self) -> bool {
        self.v.appendonly.load(Relaxed)
    }

    /// Sets `appendonly` without the checks of CONFIG SET: a failed
    /// switch on goes back to `no`, as Redis's does.
    pub fn set_appendonly(&self, on: bool) {
        self.v.appendonly.store(on, Relaxed);
    }

    pub fn appendfilename(&self) -> String {
        self.v
            .appendfilename
            .read()
            .map_or_else(|_| "appendonly.aof".into(), |t| t.clone())
    }

    pub fn appenddirname(&self) -> String {
        self.v
            .appenddirname
            .read()
            .map_or_else(|_| "appendonlydir".into(), |t| t.clone())
    }

    pub fn appendfsync(&self) -> AppendFsync {
        match self.v.appendfsync.load(Relaxed) {
            1 => AppendFsync::Always,
            2 => AppendFsync::No,
            _ => AppendFsync::EverySec,
        }
    }

    pub fn no_appendfsync_on_rewrite(&self) -> bool {
        self.v.no_appendfsync_on_rewrite.load(Relaxed)
    }

    /// `auto-aof-rewrite-percentage` and `auto-aof-rewrite-min-size`.
    pub fn auto_aof_rewrite(&self) -> (u64, u64) {
        (
            self.v.auto_aof_rewrite_percentage.load(Relaxed),
            self.v.auto_aof_rewrite_min_size.load(Relaxed),
        )
    }

    pub fn aof_load_truncated(&self) -> bool {
        self.v.aof_load_truncated.load(Relaxed)
    }

    pub fn aof_use_rdb_preamble(&self) -> bool {
        self.v.aof_use_rdb_preamble.load(Relaxed)
    }

    pub fn aof_rewrite_incremental_fsync(&self) -> bool {
        self.v.aof_rewrite_incremental_fsync.load(Relaxed)
    }

    pub fn aof_timestamp_enabled(&self) -> bool {
        self.v.aof_timestamp_enabled.load(Relaxed)
    }

    pub fn aof_disable_auto_gc(&self) -> bool {
        self.v.aof_disable_auto_gc.load(Relaxed)
    }

    /// `always-show-logo`: the banner and the log go to standard output.
    pub fn daemonize(&self) -> bool {
        self.v.daemonize.load(Relaxed)
    }

    /// `pidfile`, or Redis's default when daemonized without one.
    pub fn pidfile(&self) -> Option<String> {
        let set = self
            .v
            .pidfile
            .read()
            .map_or_else(|_| String::new(), |t| t.clone());
        match set {
            set if !set.is_empty() => Some(set),
            _ if self.daemonize() => Some("/var/run/redis.pid".into()),
            _ => None,
        }
    }

    pub fn logfile(&self) -> String {
        self.v
            .logfile
            .read()
            .map_or_else(|_| String::new(), |t| t.clone())
    }

    pub fn always_show_logo(&self) -> bool {
        self.v.always_show_logo.load(Relaxed)
    }

    pub fn config_file(&self) -> Option<&Path> {
        self.config_file.as_deref()
    }
}
