//! What every shard thread shares: the peers' inboxes, the configuration
//! (`config::Live`, whose values the shards read with relaxed loads),
//! process-wide counters and the Pub/Sub registry.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crossbeam_channel::Sender;
use mio::Waker;

use super::hop::Msg;
use crate::config::Live;

/// A shard as others see it: where to send messages and how to wake it.
pub struct Peer {
    pub inbox: Sender<Vec<Msg>>,
    pub waker: Arc<Waker>,
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
/// data path reads only relaxed atomics (`config`'s, `active_expire`).
pub struct Shared {
    pub nshards: usize,
    /// Every parameter's value (`config::Live`); CONFIG SET changes it.
    pub config: Live,
    /// DEBUG SET-ACTIVE-EXPIRE 0 turns the sweep off (lazy expiry stays).
    pub active_expire: AtomicBool,
    pub counters: Counters,
    pub started: Instant,
    /// INFO's `run_id`: drawn at start, another every restart.
    pub run_id: String,
    pub peers: OnceLock<Vec<Peer>>,
    pub pubsub: crate::pubsub::Registry,
    /// Client-side caching: the tracking clients, BCAST prefixes and where
    /// every connection is (`crate::tracking`).
    pub tracking: crate::tracking::Registry,
    /// MONITOR's clients (`exec::monitors`).
    pub monitors: super::monitors::Monitors,
    /// CLIENT PAUSE (`exec::pause`).
    pub pause: super::pause::Pause,
    /// The propagation feed every shard hands its records to.
    pub feed: super::feed::Feed,
    /// The replication backlog and the connected replicas (`exec::repl`);
    /// its replication ID is 40 random hex digits drawn at start, as Redis
    /// draws its own.
    pub repl: Arc<super::repl::Repl>,
    /// Last save, background save status, the `save` rules' counters.
    pub persist: crate::persist::State,
    /// The append-only file: its files, writer and rewrite status.
    pub aof: crate::persist::aof::Aof,
    /// The ACL users, log and denial counters.
    pub acl: crate::acl::Acl,
    /// Lua scripts known to every shard (EVAL, SCRIPT LOAD).
    pub scripts: super::scripts::ScriptCache,
    /// FUNCTION LOAD's libraries, known to every shard.
    pub libraries: super::scripts::Libraries,
    /// SLOWLOG's entries from every shard (`crate::slowlog`).
    pub slowlog: crate::slowlog::SlowLog,
}

impl Shared {
    /// Takes the loaded configuration and applies what the rows' hooks
    /// apply (log level, allocator purging, lazy freeing).
    pub fn new(config: Live) -> Shared {
        config.apply_all();
        let nshards = config.shards();
        Shared {
            nshards,
            config,
            active_expire: AtomicBool::new(true),
            counters: Counters {
                next_client_id: AtomicU64::new(1),
                ..Counters::default()
            },
            started: Instant::now(),
            run_id: new_replid(),
            peers: OnceLock::new(),
            pubsub: Default::default(),
            tracking: Default::default(),
            monitors: Default::default(),
            pause: Default::default(),
            feed: Default::default(),
            repl: Arc::new(super::repl::Repl::new(new_replid())),
            persist: crate::persist::State::new(
                nshards,
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            ),
            aof: Default::default(),
            acl: Default::default(),
            scripts: Default::default(),
            libraries: Default::default(),
            slowlog: Default::default(),
        }
    }

    /// Whether the active expiry sweep runs: not after DEBUG
    /// SET-ACTIVE-EXPIRE 0, never on a replica (its master's DELs
    /// remove its expired keys), and not while the AOF replays (see
    /// `ShardData::expiry`).
    pub fn sweeping(&self) -> bool {
        self.active_expire
            .load(std::sync::atomic::Ordering::Relaxed)
            && !self.repl.is_replica()
            && !self.aof.is_loading()
    }

    pub fn peers(&self) -> &[Peer] {
        self.peers.get().expect("peers are set before shards start")
    }
}

/// 40 hex digits from a generator seeded by the clock and the process id
/// (an ID only has to differ between servers and restarts).
pub fn new_replid() -> String {
    use rand_xoshiro::rand_core::{RngCore, SeedableRng};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(
        nanos ^ u64::from(std::process::id()) << 32,
    );
    (0..5).map(|_| format!("{:08x}", rng.next_u32())).collect()
}
