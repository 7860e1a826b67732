//! The shard's clients: accepting and closing connections, CLIENT LIST,
//! KILL and UNBLOCK, output buffer limits and idle timeouts.

use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use mio::net::TcpListener;
use mio::{Interest, Registry, Token};
use slab::Slab;

use super::Worker;
use crate::cmd::{self, Session};
use crate::exec::{ClientType, ClientsOp, KillFilter, Msg, Out, Shared};
use crate::net::Conn;
use crate::resp::{ParseLimits, Parser};

impl Worker {
    pub(super) fn cron(&mut self) {
        if self.data.shared.repl.is_replica() && !self.data.store.stats.local_volatile.is_empty() {
            let now = self.data.now_ms;
            self.data.store.expire_local(now);
            self.data.publish_expired();
        }
        // For the `save` rules, which one thread checks over every shard.
        if let Some(slot) = self.data.shared.persist.shard_changes.get(self.data.id) {
            slot.store(self.data.store.stats.notify.dirty, Relaxed);
        }
        let c = &mut self.data.counters;
        c.ops_per_sec = c.commands_processed - c.ops_at_sample;
        c.ops_at_sample = c.commands_processed;
        cmd::migrate::close_idle();
        self.data.shared.repl.tick(self.data.id, self.data.now_ms);
        if self.data.id == 0 {
            cmd::replication::backlog_cron(&self.data.shared);
        }
        let now = self.data.now_ms;
        for (_, c) in self.conns.iter_mut() {
            c.trim_read_buffer(now.saturating_sub(c.session.last_ms) >= 2000);
        }
        // What the trims gave back, and anything the points that account
        // a client as it changes missed (Redis's clientsCron does both).
        self.account_all_clients();
        let timeout_s = self.data.shared.config.timeout_s();
        if timeout_s > 0 {
            let now = self.data.now_ms;
            let idle: Vec<usize> = self
                .conns
                .iter()
                .filter(|(_, c)| {
                    !c.session.master
                        && !c.has_pending()
                        && now.saturating_sub(c.session.last_ms) > timeout_s * 1000
                })
                .map(|(t, _)| t)
                .collect();
            for token in idle {
                self.close(token);
            }
        }
    }

    /// Every [`GROWN_TRIM_MS`](super::GROWN_TRIM_MS): gives back the read
    /// buffers that grew for a large command once their clients send
    /// small ones again (`Conn::trim_read_buffer`), so a busy client's
    /// buffer goes back within a few hundred ms, as in Redis, not only at
    /// the cron. Only the connections that grew one are visited.
    pub(super) fn trim_grown(&mut self) {
        let now = self.data.now_ms;
        if now < self.grown_trim_at_ms {
            return;
        }
        self.grown_trim_at_ms = now + super::GROWN_TRIM_MS;
        // A token closed and reused may be listed twice.
        self.grown.sort_unstable();
        self.grown.dedup();
        let conns = &mut self.conns;
        self.grown.retain(|&token| match conns.get_mut(token) {
            Some(c) if c.read_buffer_grown() => {
                c.trim_read_buffer(false);
                c.read_buffer_grown()
            }
            _ => false,
        });
    }

    /// CONFIG SET port: `listeners` (already bound and listening) take
    /// the place of those on the old port, which close as they drop; the
    /// `tls-port` ones stay, after them. Every listener is registered
    /// again, as its index (its token) may have moved.
    pub(super) fn listen_on(&mut self, listeners: Vec<TcpListener>) {
        let registry = self.poll.registry();
        for listener in &mut self.listeners {
            let _ = registry.deregister(listener);
        }
        let plain = self.tls_from.unwrap_or(self.listeners.len());
        let tls = self.listeners.split_off(plain);
        self.tls_from = self.tls_from.map(|_| listeners.len());
        self.listeners = listeners;
        self.listeners.extend(tls);
        self.register_listeners();
    }

    /// Replaces the `tls-port` listeners (CONFIG SET bind); the plain
    /// ones stay. Nothing without `tls-port`, which has none.
    pub(super) fn listen_tls_on(&mut self, listeners: Vec<TcpListener>) {
        let Some(first) = self.tls_from else {
            return;
        };
        let registry = self.poll.registry();
        for listener in &mut self.listeners {
            let _ = registry.deregister(listener);
        }
        self.listeners.truncate(first);
        self.listeners.extend(listeners);
        self.register_listeners();
    }

    /// Accepts what listener `which` has waiting.
    pub(super) fn accept(&mut self, which: usize) {
        if let Some(listener) = self.listeners.get(which) {
            let registry = self.poll.registry();
            let (shared, now_ms) = (&self.data.shared, self.data.now_ms);
            let tls = self.tls_from.is_some_and(|first| which >= first);
            accept_from(
                listener,
                tls,
                &mut self.conns,
                registry,
                shared,
                self.data.id,
                now_ms,
            );
        }
    }

    /// Serves a socket another thread made as a client here
    /// (`exec::Msg::Adopt`): the connection a replica applies its master's
    /// stream through, logged in and obeyed as Redis obeys its master.
    pub(super) fn adopt(&mut self, stream: std::net::TcpStream, master: bool, addr: String) {
        let _ = stream.set_nonblocking(true);
        let mut stream = mio::net::TcpStream::from_std(stream);
        let shared = &self.data.shared;
        let laddr = stream
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let id = shared.counters.next_client_id.fetch_add(1, Relaxed);
        let mut session = Session::new(id, addr, laddr, self.data.now_ms);
        session.shard = self.data.id;
        session.master = master;
        session.auth.authenticated = true;
        session.auth.user = Arc::new(cmd::acl::default_user());
        let entry = self.conns.vacant_entry();
        let token = entry.key();
        if let Err(e) = self
            .poll
            .registry()
            .register(&mut stream, Token(token), Interest::READABLE)
        {
            log::warn!("cannot register the master's connection: {e}");
            return;
        }
        shared.counters.connected_clients.fetch_add(1, Relaxed);
        if master {
            shared.repl.set_master_conn(id);
        }
        session.token = token;
        let limits = ParseLimits {
            max_bulk_len: shared.config.max_bulk_len(),
            ..ParseLimits::default()
        };
        entry.insert(Conn::new(stream, session, Parser::new(limits)));
    }

    /// Redis's `closeClientOnOutputBufferLimitReached`, checked whenever a
    /// client's output grows: a client whose unsent replies hold its
    /// class's `client-output-buffer-limit` hard bytes or more, or the soft
    /// bytes or more for longer than the soft seconds, gets no more replies
    /// and is closed at the end of the pass (`Conn::close_asap`). Without
    /// it a client that sends and never reads holds memory without bound.
    pub(super) fn check_output_limit(&mut self, token: usize) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        if conn.close_asap {
            return;
        }
        let limit = self.data.shared.config.obuf(obuf_class(&conn.session));
        let used = conn.out.mem() as u64;
        let (hard, soft) = (limit.hard, limit.soft);
        let over_hard = hard > 0 && used >= hard;
        let mut over_soft = false;
        if soft > 0 && used >= soft {
            // As Redis: the first time over only starts the clock, and the
            // soft limit counts once more than its seconds have passed.
            let now_s = self.data.now_ms / 1000;
            match conn.soft_limit_since {
                None => conn.soft_limit_since = Some(now_s),
                Some(since) => over_soft = now_s.saturating_sub(since) > limit.soft_seconds,
            }
        } else {
            conn.soft_limit_since = None;
        }
        if !(over_hard || over_soft) {
            return;
        }
        log::warn!(
            "Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
            client_line(conn, self.data.now_ms)
        );
        conn.close_asap = true;
        conn.closing = true;
        self.dirty.push(token);
    }

    pub(super) fn close(&mut self, token: usize) {
        drop(self.forget(token));
    }

    /// Takes a connection out of the loop with everything it held here
    /// (blocked waits, subscriptions, locks, watches) and hands it back.
    fn forget(&mut self, token: usize) -> Option<crate::net::Conn> {
        let mut conn = self.conns.try_remove(token)?;
        let _ = self.poll.registry().deregister(&mut conn.stream);
        self.data.clients_mem = self
            .data
            .clients_mem
            .saturating_sub(conn.accounted_mem as u64);
        let share = std::mem::take(&mut conn.share);
        crate::exec::client_evict::publish(self.data.id, share, Default::default());
        self.forget_blocked(conn.session.id);
        cmd::pubsub::forget(&self.data.shared.pubsub, &conn.session);
        cmd::tracking::disable(&self.data, &mut conn.session);
        cmd::monitor::stop(&self.data, &mut conn.session);
        if conn.postponed.is_some() {
            let blocked = &self.data.shared.counters.blocked_clients;
            blocked.fetch_sub(1, Relaxed);
        }
        self.data.shared.tracking.disconnected(conn.session.id);
        if let Some(tx) = conn.tx {
            self.end_tx(tx);
        }
        for (shard, op) in
            cmd::transaction::unwatch_ops(&mut conn.session, self.data.shared.nshards)
        {
            if shard == self.data.id {
                self.run_op(op);
            } else {
                self.outbox[shard].push(Msg::Post(op));
            }
        }
        self.data
            .shared
            .counters
            .connected_clients
            .fetch_sub(1, Relaxed);
        Some(conn)
    }

    /// A connection leaves the loop for a thread of its own (a replica,
    /// `exec::Action::Handoff`): forgotten here as a closed client is, its
    /// socket, TLS session and unread input handed on.
    pub(super) fn hand_off(&mut self, token: usize) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        let Some(handoff) = conn.handoff.take() else {
            return;
        };
        let Some(conn) = self.forget(token) else {
            return;
        };
        handoff(crate::exec::handoff::Detached {
            unread: conn.rbuf.to_vec(),
            tls: conn.tls,
            stream: conn.stream.into(),
        });
    }

    pub(super) fn clients_op(&mut self, op: ClientsOp) -> Out {
        match op {
            ClientsOp::List { ids, kind } => {
                // A set: CLIENT LIST ID with thousands of ids is O(clients + ids).
                let ids: Option<std::collections::HashSet<u64>> =
                    ids.map(|ids| ids.into_iter().collect());
                Out::Lines(
                    self.conns
                        .iter()
                        .filter(|(_, c)| ids.as_ref().is_none_or(|ids| ids.contains(&c.session.id)))
                        .filter(|(_, c)| kind.is_none_or(|k| k == client_type(&c.session)))
                        .map(|(_, c)| client_line(c, self.data.now_ms))
                        .collect(),
                )
            }
            ClientsOp::Kill(filter) => {
                let victims: Vec<usize> = self
                    .conns
                    .iter()
                    .filter(|(_, c)| kill_matches(&filter, &c.session))
                    .map(|(t, _)| t)
                    .collect();
                let count = victims.len() as i64;
                for token in victims {
                    let conn = &self.conns[token];
                    // A replica's master client in the middle of a command
                    // over several shards finishes it first: its offset
                    // already counts the command (Redis's single thread is
                    // never killed mid-command), so the link resumes after it.
                    let mid_command =
                        conn.session.master && (conn.has_pending() || conn.tx.is_some());
                    if conn.session.id == filter.asker || mid_command {
                        // As Redis: the reply to CLIENT KILL goes out, then
                        // the connection closes; it reads nothing more.
                        self.conns[token].closing = true;
                    } else {
                        self.close(token);
                    }
                }
                Out::Count(count)
            }
            ClientsOp::EvictClients => {
                self.evict_clients();
                Out::Count(0)
            }
            ClientsOp::Unblock { id, error } => Out::Count(self.unblock_client(id, error)),
            ClientsOp::UnblockAll(error) => Out::Count(self.unblock_all(error)),
            ClientsOp::AclChanged {
                user,
                reloaded,
                asker,
            } => {
                let acl = &self.data.shared.acl;
                let victims: Vec<usize> = self
                    .conns
                    .iter()
                    .filter(|(_, c)| {
                        let name = &c.session.auth.user.name;
                        let replaced = reloaded && name != "default";
                        user.as_ref().is_none_or(|u| u == name)
                            && (replaced
                                || !cmd::acl::may_stay(acl.get(name).as_deref(), &c.session))
                    })
                    .map(|(t, _)| t)
                    .collect();
                let count = victims.len() as i64;
                for token in victims {
                    if self.conns[token].session.id == asker {
                        self.conns[token].closing = true;
                    } else {
                        self.close(token);
                    }
                }
                Out::Count(count)
            }
        }
    }
}

/// What a client not on loopback gets in protected mode (7.0.15's text,
/// its typo included).
const PROTECTED_MODE_DENIED: &str = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";

/// Redis 7.0's protected mode: while it is on and the default user has no
/// password, only loopback clients (127.0.0.1, ::1) are served.
fn protected_refusal(shared: &crate::exec::Shared, peer: &std::net::SocketAddr) -> bool {
    let loopback = match peer.ip() {
        std::net::IpAddr::V4(ip) => ip == std::net::Ipv4Addr::LOCALHOST,
        std::net::IpAddr::V6(ip) => ip == std::net::Ipv6Addr::LOCALHOST,
    };
    !loopback && shared.config.protected_mode() && shared.acl.default_nopass()
}

/// The `client-output-buffer-limit` class of a client (no replicas yet).
fn obuf_class(s: &Session) -> crate::config::ObufClass {
    match client_type(s) {
        ClientType::PubSub => crate::config::ObufClass::PubSub,
        ClientType::Replica => crate::config::ObufClass::Replica,
        _ => crate::config::ObufClass::Normal,
    }
}

fn client_type(s: &Session) -> ClientType {
    if s.master {
        ClientType::Master
    } else if s.subscriptions() > 0 {
        ClientType::PubSub
    } else {
        ClientType::Normal
    }
}

fn kill_matches(filter: &KillFilter, s: &Session) -> bool {
    filter.skip_id != Some(s.id)
        && filter.id.is_none_or(|id| id == s.id)
        && filter.addr.as_ref().is_none_or(|a| *a == s.addr)
        && filter.laddr.as_ref().is_none_or(|a| *a == s.laddr)
        && filter.user.as_ref().is_none_or(|u| *u == s.auth.user.name)
        && filter.kind.is_none_or(|k| k == client_type(s))
}

/// CLIENT LIST's flags: `b` blocked, `P` subscribed, `N` nothing special.
fn client_flags(s: &Session) -> String {
    // Redis's letters, in Redis's order: O monitor, P pubsub, x in MULTI, b blocked,
    // t tracking, R its redirect broken, B broadcasting, e no-evict; N none.
    let mut flags = String::new();
    let tracking = s.tracking.as_deref();
    for (on, letter) in [
        (s.monitor, 'O'),
        (s.subscriptions() > 0, 'P'),
        (s.multi.is_some(), 'x'),
        (s.blocked, 'b'),
        (tracking.is_some(), 't'),
        (tracking.is_some_and(|t| t.broken), 'R'),
        (tracking.is_some_and(|t| t.bcast), 'B'),
        (s.no_evict, 'e'),
    ] {
        if on {
            flags.push(letter);
        }
    }
    if flags.is_empty() {
        flags.push('N');
    }
    flags
}

pub(super) use crate::util::repr::repr;

/// What the commands queued in MULTI hold (CLIENT LIST `multi-mem`).
fn multi_mem(s: &Session) -> usize {
    s.multi.as_ref().map_or(0, |tx| tx.mem)
}

/// Everything a client holds: the connection itself, its read buffer (with
/// the arguments of an unfinished command), its pending and spare output
/// and its queued MULTI commands (CLIENT LIST `tot-mem`, INFO
/// `mem_clients_normal`).
pub fn client_memory(c: &Conn) -> usize {
    std::mem::size_of::<Conn>()
        + c.read_buffer_size()
        + c.parser.stashed()
        // At least a block, kept or not: Redis counts its 16 KiB reply
        // buffer whether it holds anything, and a figure that moves with
        // the spare block's coming and going would make the clients'
        // total, and so `maxmemory-clients`, jitter by a block each.
        + (c.out.mem() + c.out.spare_mem()).max(crate::net::OUTPUT_BLOCK)
        + multi_mem(&c.session)
        + session_mem(&c.session)
}

/// Bytes per entry of a client's lists (its WATCHed keys, subscriptions,
/// BCAST prefixes): what ember's own tables spend on one, the client's
/// entry and the shared registry's. Redis counts these per entry too,
/// the names apart, so `maxmemory-clients` stops a client that watches
/// or subscribes without end.
const WATCHED_ENTRY: usize = 96;
const SUBSCRIPTION_ENTRY: usize = 128;
const PREFIX_ENTRY: usize = 96;

/// What a client's session holds beyond its buffers, by its lists'
/// lengths (a few loads: it is worked out after every command).
fn session_mem(s: &Session) -> usize {
    let subscriptions = s.channels.len() + s.patterns.len() + s.shard_channels.len();
    let prefixes = s.tracking.as_ref().map_or(0, |t| t.prefixes.len());
    s.watched.len() * WATCHED_ENTRY + subscriptions * SUBSCRIPTION_ENTRY + prefixes * PREFIX_ENTRY
}

/// One CLIENT LIST line, with Redis's field names.
pub fn client_line(c: &Conn, now_ms: u64) -> String {
    let s = &c.session;
    format!(
        "id={} addr={} laddr={} fd=0 name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp=0 obl={} oll={} omem={} tot-mem={} events={} cmd={} user={} redir={} resp={}",
        s.id,
        s.addr,
        s.laddr,
        s.name.as_deref().unwrap_or(""),
        now_ms.saturating_sub(s.created_ms) / 1000,
        now_ms.saturating_sub(s.last_ms) / 1000,
        client_flags(s),
        s.db,
        s.channels.len(),
        s.patterns.len(),
        s.shard_channels.len(),
        s.multi.as_ref().map_or(-1, |tx| tx.queued.len() as i64),
        // The arguments of an unfinished multibulk stay in the read
        // buffer; Redis counts them as argv, not query buffer.
        c.rbuf.len() - c.parser.held() + c.running_len,
        // The room left in the buffer's allocation, as Redis's `sdsavail`
        // of its query buffer (0 once an idle client's is given back).
        c.read_buffer_size()
            .saturating_sub(c.rbuf.len() + c.running_len),
        c.parser.argv_len(),
        multi_mem(s),
        c.rbuf.capacity(),
        c.out.front_len(),
        c.out.blocks().saturating_sub(1),
        c.out.mem(),
        client_memory(c),
        if c.wants_write { "rw" } else { "r" },
        match &s.last_sub {
            Some(sub) => format!("{}|{sub}", s.last_cmd),
            None => s.last_cmd.to_string(),
        },
        s.auth.user.name,
        s.tracking.as_ref().map_or(-1, |t| t.redirect as i64),
        if s.proto == crate::resp::Protocol::Resp3 { 3 } else { 2 },
    )
}

/// Accepts what `listener` has waiting into `conns` (the loop's accept,
/// and a busy pass's).
pub(super) fn accept_from(
    listener: &TcpListener,
    tls: bool,
    conns: &mut Slab<Conn>,
    registry: &Registry,
    shared: &Shared,
    shard: usize,
    now_ms: u64,
) {
    loop {
        match listener.accept() {
            Ok((mut stream, addr)) => {
                let counters = &shared.counters;
                counters.total_connections.fetch_add(1, Relaxed);
                let count = counters.connected_clients.fetch_add(1, Relaxed) + 1;
                if count > shared.config.maxclients() {
                    counters.connected_clients.fetch_sub(1, Relaxed);
                    counters.rejected_connections.fetch_add(1, Relaxed);
                    use std::io::Write;
                    let _ = stream.write(b"-ERR max number of clients reached\r\n");
                    continue;
                }
                if protected_refusal(shared, &addr) {
                    counters.connected_clients.fetch_sub(1, Relaxed);
                    use std::io::Write;
                    let _ = stream.write(PROTECTED_MODE_DENIED.as_bytes());
                    continue;
                }
                crate::net::tune_accepted(&stream, shared.config.tcp_keepalive_s());
                let laddr = stream
                    .local_addr()
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                let id = counters.next_client_id.fetch_add(1, Relaxed);
                let mut session = Session::new(id, addr.to_string(), laddr, now_ms);
                session.shard = shard;
                let limits = ParseLimits {
                    max_bulk_len: shared.config.max_bulk_len(),
                    ..ParseLimits::default()
                };
                let entry = conns.vacant_entry();
                let token = entry.key();
                if let Err(e) = registry.register(&mut stream, Token(token), Interest::READABLE) {
                    log::warn!("cannot register a client: {e}");
                    counters.connected_clients.fetch_sub(1, Relaxed);
                    continue;
                }
                session.token = token;
                shared.tracking.connected(id, session.subscriber());
                let mut conn = Conn::new(stream, session, Parser::new(limits));
                if tls {
                    // A client of `tls-port`: its bytes pass through rustls.
                    let started = crate::config::tls::current()
                        .ok_or_else(|| "no TLS set-up".to_string())
                        .and_then(|c| rustls::ServerConnection::new(c).map_err(|e| e.to_string()));
                    match started {
                        Ok(tls) => conn.tls = Some(Box::new(tls)),
                        Err(e) => {
                            log::warn!("cannot start TLS for a client: {e}");
                            counters.connected_clients.fetch_sub(1, Relaxed);
                            let _ = registry.deregister(&mut conn.stream);
                            continue;
                        }
                    }
                }
                entry.insert(conn);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // Out of file descriptors and the like: try again on the next event.
                log::warn!("accept failed: {e}");
                return;
            }
        }
    }
}
