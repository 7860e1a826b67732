//! A connection's input and output: reading its socket, parsing and
//! running its commands in turns, delivering Pub/Sub messages, writing its
//! replies out.

use bytes::Bytes;
use mio::{Interest, Token};

use super::clients::{client_line, repr};
use super::{Worker, READ_CHUNK, TURN_COMMANDS, TURN_US};
use crate::cmd::{self, Admitted};
use crate::exec::{Action, Msg, ReplyTo};
use crate::latency::Event;
use crate::net::Received;
use crate::resp::Frame;
use crate::store::notify;
use crate::util::stamp::Stamp;

/// How much more of a large argument one turn reads once its first read
/// came full (see `read_turn`): 4 MiB, some 64 reads of [`READ_CHUNK`].
const BIG_ARGUMENT_TURN: usize = 4 * 1024 * 1024;

impl Worker {
    /// `peer_closed`: the poll reported the peer's FIN. A short read stops
    /// before seeing end of stream, and the poll is edge-triggered, so without
    /// this a client that sent a partial frame and closed would never be freed.
    pub(super) fn on_readable(&mut self, token: usize, peer_closed: bool) {
        self.read_turn(token, peer_closed, BIG_ARGUMENT_TURN);
    }

    /// One read of `token`'s socket and the commands it completed; while
    /// a large argument is still arriving and the socket has more, reads
    /// on in this turn, up to `budget` bytes more, as Redis reads the rest
    /// of a big argument in one read: so what the client sent is in its
    /// query buffer (and its `tot-mem`, and `maxmemory-clients`' count)
    /// before the next client's command runs.
    fn read_turn(&mut self, token: usize, peer_closed: bool, budget: usize) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        if conn.close_asap {
            return; // over its output limit: closed at the end of the pass
        }
        let limit = self.data.shared.config.query_buffer_limit();
        // A large bulk being received gets the room it needs at once (up
        // to just past the query buffer limit), where growing the buffer a
        // read at a time doubled it and copied what it held: a 1.5 GB bulk
        // cut at the 1 GB limit peaked at 2-3 GB of RSS. Redis sizes its
        // query buffer for a big argument the same way.
        if let Some(missing) = conn.parser.pending_bulk_bytes(conn.rbuf.len()) {
            let queued = conn.rbuf.len() - conn.parser.held();
            let room = missing.min((limit + READ_CHUNK).saturating_sub(queued));
            if room > READ_CHUNK && conn.rbuf.capacity() - conn.rbuf.len() < room {
                conn.rbuf.reserve(room);
            }
        }
        // With commands still to run from the last turn, reading more would
        // only grow the buffer.
        let received = if conn.commands_left {
            Ok(Received {
                bytes: 0,
                open: true,
                drained: false,
            })
        } else {
            conn.fill_read_buffer(&mut self.scratch)
        };
        match received {
            Ok(received) => {
                self.data.counters.net_input_bytes += received.bytes as u64;
                if conn.note_read_buffer() {
                    self.grown.push(token);
                }
                // The complete arguments of an unfinished multibulk are
                // not query buffer: Redis holds them in argv, unlimited.
                // The master's stream has no query buffer limit (Redis's
                // master client is exempt too).
                if conn.rbuf.len() - conn.parser.held() > limit && !conn.session.master {
                    log::warn!(
                        "Closing client that reached max query buffer length: {} (qbuf initial bytes: {})",
                        client_line(conn, self.data.now_ms),
                        repr(&conn.rbuf[conn.parser.held()..][..64.min(conn.rbuf.len() - conn.parser.held())])
                    );
                    self.close(token);
                    return;
                }
                // A query buffer grown past `maxmemory-clients` goes
                // before its command is even complete.
                self.account_client(token);
                if !self.conns.contains(token) {
                    return;
                }
                let all_run = self.process_input(token);
                let big_argument = |c: &crate::net::Conn| {
                    c.parser
                        .pending_bulk_bytes(c.rbuf.len())
                        .is_some_and(|m| m > 0)
                };
                if all_run
                    && received.open
                    && !received.drained
                    && received.bytes > 0
                    && budget > received.bytes
                    && self.conns.get(token).is_some_and(big_argument)
                {
                    return self.read_turn(token, peer_closed, budget - received.bytes);
                }
                if !(received.drained && all_run) {
                    // More to read or to run: next pass, after the others.
                    self.defer_input(token, peer_closed);
                } else if !received.open || peer_closed {
                    // The peer finished sending; answer what it sent, then close.
                    if let Some(conn) = self.conns.get_mut(token) {
                        conn.closing = true;
                        if self.blocking.clients.contains(conn.session.id) {
                            // Gone while blocked (or about to show as such):
                            // forget it now, as Redis does.
                            self.close(token);
                            return;
                        }
                    }
                }
                self.dirty.push(token);
            }
            Err(_) => self.close(token),
        }
    }

    /// Comes back to `token`'s input next pass (once, however often asked).
    pub(super) fn defer_input(&mut self, token: usize, peer_closed: bool) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        match &mut conn.deferred_input {
            Some(closed) => *closed |= peer_closed,
            None => {
                conn.deferred_input = Some(peer_closed);
                self.unread.push(token);
            }
        }
    }

    /// Parses and dispatches the complete commands in the read buffer, for
    /// at most [`TURN_US`]. False if its turn ended with commands left; they
    /// run next pass.
    pub(super) fn process_input(&mut self, token: usize) -> bool {
        // One clock reading per command: each command's end is the next
        // one's start (two readings a command cost 5% of the CPU).
        let turn_start = Stamp::now();
        let mut clock = turn_start;
        let mut run = 0;
        loop {
            let Some(conn) = self.conns.get_mut(token) else {
                return true;
            };
            conn.commands_left = false;
            if run == TURN_COMMANDS || clock.micros_since(turn_start) >= TURN_US {
                conn.commands_left = true;
                self.defer_input(token, false);
                return false;
            }
            if conn.closing
                || conn.barrier.is_some()
                || conn.postponed.is_some()
                || conn.handoff.is_some()
            {
                return true;
            }
            conn.parser
                .set_max_bulk_len(self.data.shared.config.max_bulk_len());
            // Redis's smaller limits until the client logs in.
            let unauthenticated =
                !conn.session.auth.free && !cmd::acl::logged_in(&self.data, &conn.session);
            conn.parser.set_unauthenticated(unauthenticated);
            let before = conn.rbuf.len();
            let next = match conn.held.take() {
                Some(argv) => Ok(Some(argv)),
                None => conn.parser.next_command(&mut conn.rbuf),
            };
            let argv = match next {
                Ok(Some(argv)) => argv,
                Ok(None) => return true,
                Err(e) => {
                    conn.push_reply(Frame::Error(format!("ERR {}", e.0)));
                    conn.closing = true;
                    return true;
                }
            };
            if let Some(mode) = self.data.shared.pause.active(self.data.now_ms) {
                if cmd::pause::must_wait(&self.data, &conn.session, mode, &argv) {
                    conn.postponed = Some(argv);
                    self.postponed.push(token);
                    let blocked = &self.data.shared.counters.blocked_clients;
                    blocked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return true;
                }
            }
            let running_len = before.saturating_sub(conn.rbuf.len());
            let mut waiting = Some(argv);
            if self.wait_for_evictions(token, &mut waiting) {
                return true;
            }
            let Some(argv) = waiting else { return true };
            if let Some(conn) = self.conns.get_mut(token) {
                conn.running_len = running_len;
            }
            clock = self.execute(token, argv, clock);
            if let Some(conn) = self.conns.get_mut(token) {
                conn.running_len = 0;
            }
            self.check_output_limit(token);
            self.account_client(token);
            run += 1;
            self.serve_ready_keys();
            self.route_deliveries();
        }
    }

    /// Runs a command that started at `started` (its parsing included);
    /// returns when it was done, the next command's start (`started` itself
    /// for a command refused before it ran: not worth a clock reading).
    pub(super) fn execute(&mut self, token: usize, argv: Vec<Bytes>, started: Stamp) -> Stamp {
        let conn = &mut self.conns[token];
        conn.session.reply = conn.session.reply.starting();
        conn.silent = conn.session.reply.silent();
        let session = &conn.session;
        let (id, reads) = (session.id, session.tracks_reads());
        // MONITOR needs the arguments after the command took them.
        let watched = self.data.shared.monitors.active().then(|| argv.clone());
        if let Some(argv) = &watched {
            self.monitor_script_call(token, argv);
        }
        self.data.set_caller(Some(id), reads);
        self.executing = Some(token);
        let done = self.execute_command(token, argv, started, watched);
        self.executing = None;
        self.data.set_caller(None, false);
        if let Some(conn) = self.conns.get_mut(token) {
            conn.session.command_done();
            conn.session.reply = conn.session.reply.finished();
            conn.silent = conn.session.reply.silent();
        }
        done
    }

    /// EVAL and FCALL (`skip_monitor`) show themselves before their
    /// script's commands, as in Redis.
    fn monitor_script_call(&mut self, token: usize, argv: &[Bytes]) {
        let Some(spec) = cmd::lookup(&argv[0]) else {
            return;
        };
        let flags = spec.flags;
        if flags.contains(cmd::CommandFlags::SKIP_MONITOR)
            && !flags.contains(cmd::CommandFlags::ADMIN)
        {
            let s = &self.conns[token].session;
            let (db, addr) = (s.db, s.addr.clone());
            cmd::monitor::feed(&mut self.data, db, &addr, argv);
        }
    }

    fn execute_command(
        &mut self,
        token: usize,
        mut argv: Vec<Bytes>,
        started: Stamp,
        watched: Option<Vec<Bytes>>,
    ) -> Stamp {
        let conn = &mut self.conns[token];
        conn.session.last_ms = self.data.now_ms;
        self.data.from_master = conn.session.master;
        // The master's stream as it came, for a replica's backlog.
        let master_cmd = conn
            .session
            .master
            .then(|| (argv[0].to_ascii_lowercase(), wire_form(&argv)))
            .filter(|_| !cmd::replication::is_internal(&argv));
        let admitted = if cmd::scripting::may_run_script(&argv[0]) {
            // The script's busy passes serve the other clients meanwhile.
            self.lending(Some(token), |data, session| {
                cmd::admit(data, session, &mut argv)
            })
        } else {
            cmd::admit(&mut self.data, &mut self.conns[token].session, &mut argv)
        };
        self.data.from_master = false;
        if let Some((name, bytes)) = master_cmd {
            let name = String::from_utf8_lossy(&name);
            let session = &mut self.conns[token].session;
            cmd::replication::applied(&self.data.shared, session, &name, bytes);
        }
        // A container's figures are its subcommand's (`config|get`), as
        // Redis keeps them; keyed() leaves a container's argv whole.
        let admitted = match admitted {
            Admitted::Dispatched(spec, action) if spec.container => {
                Admitted::Dispatched(cmd::table::subcommand_row(spec, &argv), action)
            }
            other => other,
        };
        self.data.publish_records(None);
        if !self.data.store.stats.notify.tracking.evicted.is_empty() {
            self.route_evicted();
        }
        let conn = &mut self.conns[token];
        // The argv stays for the slow log: until the reply for a command
        // answered here, with the reply slot for one answered later.
        let logging = self.data.shared.config.slowlog_threshold_us().is_some();
        // A known command refused before it ran counts as rejected (INFO
        // commandstats' rejected_calls), as Redis's rejectCommand does.
        let rejected = match &admitted {
            Admitted::Answered(frame) if frame.is_error() => {
                cmd::lookup(&argv[0]).map(|spec| cmd::table::subcommand_row(spec, &argv))
            }
            _ => None,
        };
        if !logging || !matches!(admitted, Admitted::Dispatched(..)) {
            conn.parser.recycle(std::mem::take(&mut argv));
        }
        let (spec, action) = match admitted {
            Admitted::Answered(frame) => {
                if frame.is_error() {
                    self.data.counters.record_errors(&frame, false);
                    if conn.session.master {
                        cmd::replication::log_error_to_master(&frame, "<unknown>");
                    }
                }
                if let Some(spec) = rejected {
                    self.data.counters.record_rejected(spec.id());
                }
                conn.push_reply(frame);
                return started;
            }
            Admitted::Dispatched(spec, action) => (spec, action),
            Admitted::Close => {
                conn.closing = true;
                return started;
            }
        };
        // CLIENT REPLY ON answers; OFF and SKIP do not.
        conn.silent = conn.session.reply.silent();
        if let Some(watched) = &watched {
            // EXEC is shown after the commands it runs (`finish`), unless
            // it answered at once.
            let answered = matches!(action, Action::Reply(_) | Action::Close(_));
            if spec.name == "exec" && !answered {
                conn.session.monitored_exec = Some(watched.clone());
            } else if cmd::monitor::shown(spec, watched) {
                let (db, addr) = (conn.session.db, conn.session.addr.clone());
                cmd::monitor::feed(&mut self.data, db, &addr, watched);
            }
        }
        match action {
            Action::Reply(frame) => {
                let done = Stamp::now();
                let elapsed_us = done.micros_since(started);
                let data = &mut self.data;
                let track = data.shared.config.latency_tracking();
                data.counters
                    .record(spec.id(), elapsed_us, frame.is_error(), track);
                if frame.is_error() {
                    data.counters.record_errors(&frame, false);
                }
                let latency_ms = data.shared.config.latency_threshold_ms();
                if latency_ms > 0 && elapsed_us >= latency_ms * 1000 {
                    let event = if spec.flags.contains(cmd::CommandFlags::FAST) {
                        Event::FastCommand
                    } else {
                        Event::Command
                    };
                    data.latency
                        .record(event, elapsed_us, latency_ms, data.now_ms);
                }
                if logging {
                    cmd::slowlog::log_if_slow(data, &conn.session, spec, &argv, elapsed_us);
                    conn.parser.recycle(argv);
                }
                if conn.session.master && frame.is_error() {
                    cmd::replication::log_error_to_master(&frame, spec.name);
                }
                conn.push_reply(frame);
                return done;
            }
            Action::Close(frame) => {
                conn.push_reply(frame);
                conn.closing = true;
            }
            Action::Block(wait) => {
                // Later commands of this client wait for the reply.
                let to = self.open_slot(token, spec, started, true, argv);
                // The slow log counts a blocked command's own work, not
                // its wait (as Redis does).
                let own_us = started.elapsed_us();
                if let Some(conn) = self.conns.get_mut(token) {
                    conn.set_own_us(to.seq, own_us);
                }
                self.on_wait(to, *wait);
            }
            Action::Job(job) => {
                let to = self.open_slot(token, spec, started, job.ordered, argv);
                self.launch(to, job);
            }
            Action::Exec { plan, check } => {
                let to = self.open_slot(token, spec, started, true, argv);
                let conn = &mut self.conns[token];
                if let Some(run) = conn.session.exec.as_mut() {
                    run.seq = to.seq;
                }
                let job = if plan.is_empty() {
                    check
                } else {
                    check.locked(plan)
                };
                self.launch(to, job);
            }
            Action::RunQueued => {
                conn.push_reply(Frame::error("ERR internal: nothing to run"));
            }
            Action::Handoff(handoff) => {
                conn.handoff = Some(handoff);
                self.dirty.push(token);
            }
            Action::Later(later) => {
                let to = self.open_slot(token, spec, started, true, argv);
                self.answer_later(to, later);
            }
        }
        Stamp::now()
    }

    /// A slot answered from another thread (`Action::Later`): one part,
    /// whose answer is the reply.
    pub(super) fn answer_later(&mut self, to: ReplyTo, later: crate::exec::Later) {
        let Some(conn) = self.conns.get_mut(to.token) else {
            return;
        };
        conn.rearm(
            to.seq,
            1,
            Box::new(|outs: Vec<crate::exec::Out>| {
                Action::Reply(outs.into_iter().next().map_or(Frame::Null, |o| o.frame()))
            }),
        );
        let peer = &self.data.shared.peers()[self.data.id];
        later(crate::exec::Responder {
            inbox: peer.inbox.clone(),
            waker: std::sync::Arc::clone(&peer.waker),
            to,
        });
    }

    /// Reserves the reply slot of a command answered later; `ordered`: the
    /// client's next commands wait for it.
    pub(super) fn open_slot(
        &mut self,
        token: usize,
        cmd: &'static cmd::CommandSpec,
        started: Stamp,
        ordered: bool,
        argv: Vec<Bytes>,
    ) -> ReplyTo {
        let conn = &mut self.conns[token];
        let seq = conn.push_waiting(
            0,
            Box::new(|_| Action::Reply(Frame::Null)),
            cmd,
            started,
            argv,
        );
        if ordered {
            conn.barrier = Some(seq);
        }
        ReplyTo {
            token,
            conn_id: conn.session.id,
            seq,
            tx: None,
            track: conn.session.tracks_reads(),
        }
    }

    /// Publishes the keyspace events produced so far and sends every Pub/Sub
    /// message to its subscriber's shard.
    pub(super) fn route_deliveries(&mut self) {
        self.route_invalidations();
        let events = &mut self.data.store.stats.notify.events;
        if !events.is_empty() {
            let registry = &self.data.shared.pubsub;
            let flags = self.data.store.stats.notify.flags;
            for e in events.drain(..) {
                if registry.is_empty() {
                    continue;
                }
                if flags & notify::KEYSPACE != 0 {
                    let channel = Bytes::from(format!("__keyspace@{}__:", e.db).into_bytes());
                    let channel = [channel.as_ref(), e.key.as_ref()].concat();
                    registry.publish(
                        &Bytes::from(channel),
                        &Bytes::from_static(e.event.as_bytes()),
                        &mut self.data.deliveries,
                    );
                }
                if flags & notify::KEYEVENT != 0 {
                    let channel = Bytes::from(format!("__keyevent@{}__:{}", e.db, e.event));
                    registry.publish(&channel, &e.key, &mut self.data.deliveries);
                }
            }
        }
        if self.data.deliveries.is_empty() {
            return;
        }
        for d in std::mem::take(&mut self.data.deliveries) {
            let to = d.to;
            if to.shard == self.data.id {
                self.deliver(to.token, to.conn_id, d.frame);
            } else {
                self.outbox[to.shard].push(Msg::Deliver {
                    token: to.token,
                    conn_id: to.conn_id,
                    frame: d.frame,
                });
            }
        }
    }

    /// Queues a message on a subscriber, dropping the subscriber when it
    /// reads too slowly (so it cannot hold this shard's memory hostage).
    pub(super) fn deliver(&mut self, token: usize, conn_id: u64, frame: Frame) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        if conn.session.id != conn_id {
            return;
        }
        conn.push_reply(frame);
        self.check_output_limit(token);
        self.account_client(token);
        self.dirty.push(token);
    }

    pub(super) fn flush_dirty(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        for token in dirty.drain(..) {
            let Some(conn) = self.conns.get_mut(token) else {
                continue;
            };
            conn.drain_ready();
            // Replies from other shards and woken blocked clients land here.
            self.check_output_limit(token);
            self.account_client(token);
            let Some(conn) = self.conns.get_mut(token) else {
                continue;
            };
            if conn.close_asap {
                self.close(token);
                continue;
            }
            match conn.flush() {
                Ok((written, all)) => {
                    self.data.counters.net_output_bytes += written as u64;
                    // What went out no longer counts (only less: no eviction).
                    super::client_evict::reaccount(&mut self.data, conn);
                    if all && conn.closing && !conn.has_pending() {
                        self.close(token);
                        continue;
                    }
                    if all && conn.handoff.is_some() && !conn.has_pending() {
                        self.hand_off(token);
                        continue;
                    }
                    if all == conn.wants_write {
                        conn.wants_write = !all;
                        let interest = if all {
                            Interest::READABLE
                        } else {
                            Interest::READABLE | Interest::WRITABLE
                        };
                        let _ = self.poll.registry().reregister(
                            &mut conn.stream,
                            Token(token),
                            interest,
                        );
                    }
                }
                Err(_) => self.close(token),
            }
        }
        self.dirty = dirty;
    }

    /// Runs the commands CLIENT PAUSE held back once it no longer holds
    /// them, then reads on with their clients' input.
    pub(super) fn resume_postponed(&mut self) {
        if self.postponed.is_empty() {
            return;
        }
        let pause = self.data.shared.pause.active(self.data.now_ms);
        for token in std::mem::take(&mut self.postponed) {
            let Some(conn) = self.conns.get_mut(token) else {
                continue;
            };
            let Some(argv) = conn.postponed.take() else {
                continue;
            };
            if pause
                .is_some_and(|mode| cmd::pause::must_wait(&self.data, &conn.session, mode, &argv))
            {
                conn.postponed = Some(argv);
                self.postponed.push(token);
                continue;
            }
            let blocked = &self.data.shared.counters.blocked_clients;
            blocked.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            self.execute(token, argv, Stamp::now());
            self.check_output_limit(token);
            self.dirty.push(token);
            self.serve_ready_keys();
            self.route_deliveries();
            self.process_input(token);
        }
    }

    /// Reads on with the input of clients whose pending job finished.
    pub(super) fn resume_input(&mut self) {
        while let Some(token) = self.resume.pop() {
            // A command that waited for other shards' evictions runs first.
            let waited = self.conns.get_mut(token).and_then(|c| c.evict_wait.take());
            if let Some(argv) = waited {
                self.execute(token, argv, Stamp::now());
                self.check_output_limit(token);
                self.dirty.push(token);
                self.route_deliveries();
            }
            self.process_input(token);
            self.serve_ready_keys();
        }
    }
}

/// A command as a multibulk, the form a master sends it in.
fn wire_form(argv: &[Bytes]) -> Vec<u8> {
    let mut out = Vec::new();
    crate::exec::feed::write_command(&mut out, argv);
    out
}
