//! Shard threads: one per core, each with its own mio loop, listener,
//! connections, store and inbox. Shards talk only through inboxes.
//! `blocking` holds the clients waiting in BLPOP and friends.

pub mod blocking;
mod persist;
mod worker;

use std::sync::Arc;

use crossbeam_channel::Receiver;
use mio::{Poll, Waker};

use crate::config::Live;
use crate::exec::{Msg, Peer, Shared};

/// Token of the inbox waker in every shard's poll.
pub const WAKER_TOKEN: mio::Token = mio::Token(usize::MAX - 1);

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
    #[error("Fatal error loading the DB: {0}. Exiting.")]
    Load(String),
    /// The users of the config file or ACL file do not load.
    #[error("{0}")]
    Acl(String),
}

/// Starts every shard thread and returns their handles. Shard i is pinned to
/// core i (mod the number of cores) when the platform allows it.
pub fn start(config: Live) -> Result<(Arc<Shared>, Vec<std::thread::JoinHandle<()>>), StartError> {
    let n = config.shards();
    let addr = format!("{} port {}", config.bind(), config.port());
    let (bind, port) = (config.bind_addrs(), config.port());
    let shared = Arc::new(Shared::new(config));
    crate::cmd::acl::file::load_at_startup(&shared.acl, &shared.config).map_err(StartError::Acl)?;
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
    let listeners =
        crate::net::listen_all(&bind, port, n).map_err(|source| StartError::Listen {
            addr: addr.clone(),
            source,
        })?;
    crate::util::memory::start_memory_sampler();
    // Before any shard pins itself: a thread inherits its creator's cores.
    crate::store::lazyfree::start();
    let mut stores = persist::at_start(&shared)?.into_iter();
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let mut handles = Vec::with_capacity(n);
    for (id, ((poll, inbox), listener)) in polls.into_iter().zip(inboxes).zip(listeners).enumerate()
    {
        let shared = Arc::clone(&shared);
        let store = stores.next();
        let core = (!cores.is_empty()).then(|| cores[id % cores.len()]);
        let handle = std::thread::Builder::new()
            .name(format!("ember-shard-{id}"))
            .spawn(move || {
                if let Some(core) = core {
                    core_affinity::set_for_current(core);
                }
                crate::util::memory::register_thread();
                worker::Worker::new(id, shared, poll, listener, inbox, store).run();
            })
            .map_err(StartError::Thread)?;
        handles.push(handle);
    }
    // Loopback when ember listens on every address.
    let rules_addr = addr.replace("0.0.0.0:", "127.0.0.1:");
    persist::start_rules(Arc::clone(&shared), rules_addr);
    crate::cmd::replication::start_from_config(&shared);
    Ok((shared, handles))
}
