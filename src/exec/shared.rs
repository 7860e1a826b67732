//! What every shard thread shares: the peers' inboxes, the configuration
//! and the hot settings copied out of it, process-wide counters and the
//! Pub/Sub registry.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

use crossbeam_channel::Sender;
use mio::Waker;

use super::hop::Msg;
use crate::config::Config;
use crate::store::hash::ListpackLimits;

/// A shard as others see it: where to send messages and how to wake it.
pub struct Peer {
    pub inbox: Sender<Vec<Msg>>,
    pub waker: Arc<Waker>,
}

/// Limits read on the request path; changed by CONFIG SET.
#[derive(Default)]
pub struct Limits {
    pub max_bulk_len: AtomicU64,
    pub query_buffer_limit: AtomicU64,
    /// `client-output-buffer-limit`, per class (`config::ObufClass`).
    pub obuf: [ObufAtomics; 3],
    pub maxclients: AtomicUsize,
    /// `hash-max-listpack-entries` and `hash-max-listpack-value`.
    pub hash_listpack_entries: AtomicUsize,
    pub hash_listpack_value: AtomicUsize,
    /// `latency-monitor-threshold`, ms (0: the latency monitor is off).
    pub latency_threshold_ms: AtomicU64,
}

/// One class's `client-output-buffer-limit` (`config::ObufLimit`).
#[derive(Default)]
pub struct ObufAtomics {
    pub hard: AtomicU64,
    pub soft: AtomicU64,
    pub soft_seconds: AtomicU64,
}

impl Limits {
    /// The limits of the compact hash form, for a write.
    pub fn hash_listpack(&self) -> ListpackLimits {
        ListpackLimits {
            entries: self.hash_listpack_entries.load(Relaxed),
            value: self.hash_listpack_value.load(Relaxed),
        }
    }

    pub fn max_bulk_len(&self) -> usize {
        self.max_bulk_len.load(Relaxed) as usize
    }
}

/// Expiry knobs read by every shard at each tick.
pub struct ExpireKnobs {
    pub hz: AtomicU32,
    pub effort: AtomicU32,
    pub slice_us: AtomicU64,
    pub storm_cpu_perc: AtomicU64,
    /// `active-expire-storm-busy-perc`.
    pub storm_busy_perc: AtomicU64,
    /// `notify-keyspace-events` as `store::notify` flags.
    pub notify_flags: AtomicU32,
    /// DEBUG SET-ACTIVE-EXPIRE 0 turns the sweep off (lazy expiry stays).
    pub enabled: AtomicBool,
}

/// Process-wide counters that are not per shard.
#[derive(Default)]
pub struct Counters {
    pub connected_clients: AtomicUsize,
    pub total_connections: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub next_client_id: AtomicU64,
    /// Clients waiting in a blocking command (INFO `blocked_clients`).
    pub blocked_clients: AtomicUsize,
}

/// State shared by every shard thread. Nothing here is touched per key: the
/// data path reads only the relaxed atomics in `limits` and `expire`.
pub struct Shared {
    pub nshards: usize,
    pub config: RwLock<Config>,
    pub limits: Limits,
    pub expire: ExpireKnobs,
    pub counters: Counters,
    pub started: Instant,
    pub peers: OnceLock<Vec<Peer>>,
    pub pubsub: crate::pubsub::Registry,
}

impl Shared {
    pub fn new(config: Config) -> Shared {
        let shared = Shared {
            nshards: config.shards,
            limits: Limits::default(),
            expire: ExpireKnobs {
                hz: AtomicU32::new(10),
                effort: AtomicU32::new(1),
                slice_us: AtomicU64::new(100),
                storm_cpu_perc: AtomicU64::new(90),
                storm_busy_perc: AtomicU64::new(95),
                notify_flags: AtomicU32::new(0),
                enabled: AtomicBool::new(true),
            },
            counters: Counters {
                next_client_id: AtomicU64::new(1),
                ..Counters::default()
            },
            started: Instant::now(),
            peers: OnceLock::new(),
            pubsub: Default::default(),
            config: RwLock::new(config),
        };
        shared.apply_config();
        shared
    }

    /// Copies the hot settings from `config` into the atomics.
    pub fn apply_config(&self) {
        let c = self.config.read().expect("config lock");
        self.limits
            .max_bulk_len
            .store(c.proto_max_bulk_len, Relaxed);
        self.limits
            .query_buffer_limit
            .store(c.client_query_buffer_limit, Relaxed);
        self.limits.maxclients.store(c.maxclients, Relaxed);
        for (to, from) in self.limits.obuf.iter().zip(&c.client_output_buffer_limit) {
            to.hard.store(from.hard, Relaxed);
            to.soft.store(from.soft, Relaxed);
            to.soft_seconds.store(from.soft_seconds, Relaxed);
        }
        self.limits
            .hash_listpack_entries
            .store(c.hash_max_listpack_entries, Relaxed);
        self.limits
            .hash_listpack_value
            .store(c.hash_max_listpack_value, Relaxed);
        self.limits
            .latency_threshold_ms
            .store(c.latency_monitor_threshold, Relaxed);
        self.expire.hz.store(c.hz, Relaxed);
        self.expire.effort.store(c.active_expire_effort, Relaxed);
        self.expire
            .slice_us
            .store(c.active_expire_slice_us, Relaxed);
        self.expire.notify_flags.store(
            crate::store::notify::parse_flags(&c.notify_keyspace_events),
            Relaxed,
        );
        self.expire
            .storm_cpu_perc
            .store(c.active_expire_storm_cpu_perc, Relaxed);
        self.expire
            .storm_busy_perc
            .store(c.active_expire_storm_busy_perc, Relaxed);
        crate::logging::set_level(&c.loglevel);
        crate::util::purge::set_background_thread(c.jemalloc_bg_thread);
        crate::util::purge::set_defer(c.active_expire_storm_defer_purge);
        let lazy = c.lazyfree;
        crate::store::lazyfree::set_params(
            lazy.user_del,
            lazy.server_del,
            lazy.expire,
            lazy.user_flush,
        );
    }

    pub fn peers(&self) -> &[Peer] {
        self.peers.get().expect("peers are set before shards start")
    }
}
