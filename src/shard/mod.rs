//! Shard threads: one per core, each with its own mio loop, listener,
//! connections, store and inbox. Shards talk only through inboxes.
//! `blocking` holds the clients waiting in BLPOP and friends.

pub mod blocking;
mod job;
pub mod locks;
mod worker;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use mio::{Poll, Waker};

pub use blocking::Wait;
pub use job::{Action, ClientType, ClientsOp, Job, KillFilter, LockPlan, Op, Out, StoreOp, Then};
pub use locks::{LockKey, Need, TxId};
pub use worker::{Msg, Parked};

use crate::config::Config;
use crate::store::hash::ListpackLimits;

/// Token of the inbox waker in every shard's poll.
pub const WAKER_TOKEN: mio::Token = mio::Token(usize::MAX - 1);

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
    /// The propagation feed every shard hands its records to.
    pub feed: crate::feed::Feed,
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
            feed: Default::default(),
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
        crate::util::lazyfree::set_params(
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

/// Failures starting the server.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("could not listen on {addr}: {source}")]
    Listen {
        addr: String,
        source: std::io::Error,
    },
    #[error("could not set up the event loop: {0}")]
    Poll(std::io::Error),
    #[error("could not start a shard thread: {0}")]
    Thread(std::io::Error),
}

/// Starts every shard thread and returns their handles. Shard i is pinned to
/// core i (mod the number of cores) when the platform allows it.
pub fn start(
    config: Config,
) -> Result<(Arc<Shared>, Vec<std::thread::JoinHandle<()>>), StartError> {
    let n = config.shards;
    let addr = format!("{}:{}", config.bind, config.port);
    let shared = Arc::new(Shared::new(config));
    let mut polls = Vec::with_capacity(n);
    let mut peers = Vec::with_capacity(n);
    let mut inboxes: Vec<Receiver<Vec<Msg>>> = Vec::with_capacity(n);
    for _ in 0..n {
        let poll = Poll::new().map_err(StartError::Poll)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER_TOKEN).map_err(StartError::Poll)?);
        let (tx, rx) = crossbeam_channel::unbounded();
        peers.push(Peer { inbox: tx, waker });
        inboxes.push(rx);
        polls.push(poll);
    }
    let _ = shared.peers.set(peers);
    // Bind every listener before any thread runs, so a port in use fails start-up.
    let listeners = crate::net::listen(&addr, n).map_err(|source| StartError::Listen {
        addr: addr.clone(),
        source,
    })?;
    crate::info::start_memory_sampler();
    // Before any shard pins itself: a thread inherits its creator's cores.
    crate::util::lazyfree::start();
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let mut handles = Vec::with_capacity(n);
    for (id, ((poll, inbox), listener)) in polls.into_iter().zip(inboxes).zip(listeners).enumerate()
    {
        let shared = Arc::clone(&shared);
        let core = (!cores.is_empty()).then(|| cores[id % cores.len()]);
        let handle = std::thread::Builder::new()
            .name(format!("ember-shard-{id}"))
            .spawn(move || {
                if let Some(core) = core {
                    core_affinity::set_for_current(core);
                }
                worker::Worker::new(id, shared, poll, listener, inbox).run();
            })
            .map_err(StartError::Thread)?;
        handles.push(handle);
    }
    Ok((shared, handles))
}
