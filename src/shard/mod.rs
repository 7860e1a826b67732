//! Shard threads: one per core, each with its own mio loop, listener,
//! connections, store and inbox. Shards talk only through inboxes.
//! `blocking` holds the clients waiting in BLPOP and friends.

mod aof_load;
pub mod blocking;
mod loading;
mod persist;
mod signals;
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
    /// Redis's two lines: the bind error, then the abort.
    #[error("Warning: Could not create server TCP listening socket {bind}:{port}: bind: {}\nFailed listening on port {port} ({kind}), aborting.", crate::net::os_reason(source))]
    Listen {
        bind: String,
        port: u16,
        /// `TCP` or `TLS`.
        kind: &'static str,
        source: std::io::Error,
    },
    #[error("could not set up the event loop: {0}")]
    Poll(std::io::Error),
    #[error("could not start a shard thread: {0}")]
    Thread(std::io::Error),
    #[error("Fatal error loading the DB: {0}. Exiting.")]
    Load(String),
    /// The append-only file does not load: Redis's last line of why (the
    /// lines before it were logged; Redis's tests count them and read
    /// the last line of the log).
    #[error("{0}")]
    Aof(String),
    /// The users of the config file or ACL file do not load.
    #[error("{0}")]
    Acl(String),
    /// The `tls-*` files do not make a TLS set-up.
    #[error("{0}")]
    Tls(String),
}

/// An address this server can reach itself at (the save rules' BGSAVE,
/// the AOF's replay): loopback when a bind address is a loopback or a
/// wildcard one, else the first address.
fn loopback(config: &Live) -> String {
    let port = config.port();
    let addrs = config.bind_addrs();
    let local = |a: &str| matches!(a, "127.0.0.1" | "*" | "0.0.0.0" | "localhost");
    if addrs.iter().any(|(a, _)| local(a)) || addrs.is_empty() {
        return format!("127.0.0.1:{port}");
    }
    if addrs
        .iter()
        .any(|(a, _)| matches!(a.as_str(), "::1" | "::*" | "::"))
    {
        return format!("[::1]:{port}");
    }
    let first = &addrs[0].0;
    if first.contains(':') {
        format!("[{first}]:{port}")
    } else {
        format!("{first}:{port}")
    }
}

/// Starts every shard thread and returns their handles. Shard i is pinned to
/// core i (mod the number of cores) when the platform allows it.
pub fn start(config: Live) -> Result<(Arc<Shared>, Vec<std::thread::JoinHandle<()>>), StartError> {
    let n = config.shards();
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
    let mut listeners =
        crate::net::listen_all(&bind, port, n).map_err(|source| StartError::Listen {
            bind: shared.config.bind(),
            port,
            kind: "TCP",
            source,
        })?;
    let tls_from = listen_tls(&shared.config, &bind, n, &mut listeners)?;
    crate::logging::banner(port);
    install_rebind(&shared);
    // Redis's line (at warning level, as Redis logs it) once it listens,
    // before the data loads.
    log::warn!("Server initialized");
    crate::util::memory::start_memory_sampler();
    // Before any shard pins itself: a thread inherits its creator's cores.
    crate::store::lazyfree::start();
    signals::start(Arc::clone(&shared));
    // The shards start empty and the data set loads into them while they
    // run, answering LOADING meanwhile (`loading`).
    let plan = loading::plan(&shared)?;
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
                crate::util::memory::register_thread();
                let worker = worker::Worker::new(id, shared, poll, listener, inbox);
                match tls_from {
                    Some(first) => worker.with_tls_from(first).run(),
                    None => worker.run(),
                }
            })
            .map_err(StartError::Thread)?;
        handles.push(handle);
    }
    let own = loopback(&shared.config);
    loading::start(Arc::clone(&shared), plan, own.clone());
    persist::start_rules(Arc::clone(&shared), own);
    Ok((shared, handles))
}

/// What CONFIG SET port and bind run (`Live::set_rebind`): binds `port`
/// (and, for a new `bind`, `tls-port` too) on every `bind` address for
/// every shard, then hands each shard its listeners, which replace those
/// it had. Binding everything first means an address or port that cannot
/// be bound fails the command with the old listeners still open, and the
/// new ones listen (the kernel queues connections) before the reply.
/// Port 0 closes the TCP listeners, as Redis's CONFIG SET port 0 does.
/// The closure holds the server weakly: the config it lives in is the
/// server's.
fn install_rebind(shared: &Arc<Shared>) {
    let server = Arc::downgrade(shared);
    shared.config.set_rebind(Box::new(move |port, tls_too| {
        let shared = server.upgrade().ok_or("the server is stopping")?;
        let n = shared.nshards;
        let bind = |port: u16| {
            crate::net::listen_all(&shared.config.bind_addrs(), port, n).map_err(|e| {
                format!(
                    "Warning: Could not create server TCP listening socket {}:{port}: bind: {}",
                    shared.config.bind(),
                    crate::net::os_reason(&e)
                )
            })
        };
        let per_shard = if port == 0 {
            (0..n).map(|_| Vec::new()).collect()
        } else {
            bind(port)?
        };
        let tls_port = shared.config.tls_port();
        let tls = match tls_too && tls_port != 0 {
            true => Some(bind(tls_port)?),
            false => None,
        };
        let mut tls = tls.map(Vec::into_iter);
        for (peer, listeners) in shared.peers().iter().zip(per_shard) {
            let mut msgs = vec![Msg::Listen(listeners)];
            if let Some(theirs) = tls.as_mut().and_then(Iterator::next) {
                msgs.push(Msg::ListenTls(theirs));
            }
            if peer.inbox.send(msgs).is_ok() {
                let _ = peer.waker.wake();
            }
        }
        Ok(())
    }));
}

/// The TLS set-up from the `tls-*` files (with `tls-port` or
/// `tls-replication`), and with `tls-port` each
/// shard's listeners on that port after its plain ones; returns where they
/// start in each shard's list.
fn listen_tls(
    config: &Live,
    bind: &[(String, bool)],
    n: usize,
    listeners: &mut [Vec<mio::net::TcpListener>],
) -> Result<Option<usize>, StartError> {
    // tls-replication alone needs the set-up too (a replica's link).
    crate::config::tls::rebuild(config).map_err(StartError::Tls)?;
    let port = config.tls_port();
    if port == 0 {
        return Ok(None);
    }
    let first = listeners.first().map_or(0, Vec::len);
    let on_port = crate::net::listen_all(bind, port, n).map_err(|source| StartError::Listen {
        bind: config.bind(),
        port,
        kind: "TLS",
        source,
    })?;
    for (mine, theirs) in listeners.iter_mut().zip(on_port) {
        mine.extend(theirs);
    }
    Ok(Some(first))
}
