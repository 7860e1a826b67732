//! The loop's side of the busy pass (`exec::busy`): what it lends a script
//! that may run long, and the pass the script's hook makes over it.
//!
//! Before work that may run a script (EVAL and FCALL inline, a script
//! step of EXEC, an `Op::Script` from a job), the loop moves its network
//! side (connections, listeners, poll, the unread and dirty lists) into
//! this thread's [`LENT`] and runs the work with its data only; a second
//! poll that nothing is registered on stands in meanwhile, so lending
//! costs a few moves and no system call. The connection whose command runs
//! the script lends its session to that command (a spare stands in), and
//! no pass reads it: its pipeline waits for the script, as Redis protects
//! the script's caller.
//!
//! A pass, once the script is past `busy-reply-threshold` (at most one per
//! hook check, 100k Lua instructions apart):
//! 1. polls without waiting; accepts new connections; the first pass of a
//!    script tries every connection and listener once instead, since the
//!    loop's own poll may have taken readiness it had not served yet when
//!    the script's command ran (one read each, once per busy script);
//! 2. for each readable connection (and each whose last pass left input):
//!    reads once, then answers up to [`TURN_COMMANDS`] commands by
//!    `cmd::busy`'s rules; a command that must wait for the script stays
//!    in `Conn::held`, and the connection reads nothing more until then;
//! 3. writes the answers out.
//!
//! What a pass cannot finish goes back with the loan: every connection it
//! looked at is marked as having unread input (so the loop reads and runs
//! what is left, `held` first, in its next pass) and dirty (so it writes
//! what is queued); unwatch ops of an aborted EXEC run then. Messages from
//! other shards are not read: a hop arriving during the script waits in
//! the inbox, as its client waits on Redis, and runs after the script, so
//! nothing runs inside the script but the script.

use std::cell::RefCell;
use std::time::Duration;

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use super::clients::accept_from;
use super::{Worker, LISTENER, LISTENERS_MAX, TURN_COMMANDS};
use crate::cmd::busy::WhileBusy;
use crate::cmd::{self, Session};
use crate::exec::{Msg, Op, ShardData, Shared};
use crate::net::Conn;
use crate::resp::Frame;
use crate::shard::WAKER_TOKEN;

/// What the loop keeps to lend: the poll that stands in for its own, the
/// pass's event buffer and the session that stands in for the caller's.
pub(super) struct Spare {
    poll: Poll,
    events: Events,
    session: Session,
}

impl Spare {
    pub(super) fn new() -> std::io::Result<Spare> {
        Ok(Spare {
            poll: Poll::new()?,
            events: Events::with_capacity(256),
            session: Session::new(0, String::new(), String::new(), 0),
        })
    }
}

/// The loop's network side, lent to a running script's busy passes.
struct Lent {
    conns: Slab<Conn>,
    listeners: Vec<TcpListener>,
    /// Where `tls-port`'s listeners start in `listeners`.
    tls_from: Option<usize>,
    poll: Poll,
    events: Events,
    scratch: Vec<u8>,
    unread: Vec<usize>,
    dirty: Vec<usize>,
    /// The connection whose command runs the script: never read here.
    running: Option<usize>,
    shard: usize,
    /// Connections whose last pass left input to read or run.
    more: Vec<usize>,
    /// Whether a pass has tried every connection and listener yet.
    swept: bool,
    /// Unwatch ops of EXECs aborted here, run once the script is over.
    posts: Vec<(usize, Op)>,
    input_bytes: u64,
    output_bytes: u64,
}

thread_local! {
    static LENT: RefCell<Option<Lent>> = const { RefCell::new(None) };
}

/// The busy pass `exec::busy` calls from a script's hook.
pub(crate) fn pass(shared: &Shared) {
    LENT.with(|cell| {
        if let Ok(mut lent) = cell.try_borrow_mut() {
            if let Some(lent) = lent.as_mut() {
                lent.pass(shared);
            }
        }
    });
}

impl Worker {
    /// Runs `f` (work that may run a script) on this shard's data with the
    /// network side lent to the script's busy passes; `running`: the
    /// connection whose command it is, whose session `f` gets (a spare
    /// otherwise).
    pub(super) fn lending<R>(
        &mut self,
        running: Option<usize>,
        f: impl FnOnce(&mut ShardData, &mut Session) -> R,
    ) -> R {
        let Some(Spare {
            poll,
            events,
            mut session,
        }) = self.spare.take()
        else {
            // Lent already (a script does not run a script): run as is.
            let mut spare = Session::new(0, String::new(), String::new(), 0);
            let session = match running.and_then(|t| self.conns.get_mut(t)) {
                Some(conn) => &mut conn.session,
                None => &mut spare,
            };
            return f(&mut self.data, session);
        };
        if let Some(conn) = running.and_then(|t| self.conns.get_mut(t)) {
            std::mem::swap(&mut conn.session, &mut session);
        }
        let own_poll = std::mem::replace(&mut self.poll, poll);
        let lent = Lent {
            conns: std::mem::take(&mut self.conns),
            listeners: std::mem::take(&mut self.listeners),
            tls_from: self.tls_from,
            poll: own_poll,
            events,
            scratch: std::mem::take(&mut self.scratch),
            unread: std::mem::take(&mut self.unread),
            dirty: std::mem::take(&mut self.dirty),
            running,
            shard: self.data.id,
            more: Vec::new(),
            swept: false,
            posts: Vec::new(),
            input_bytes: 0,
            output_bytes: 0,
        };
        LENT.with(|cell| *cell.borrow_mut() = Some(lent));
        let result = f(&mut self.data, &mut session);
        let lent = LENT
            .with(|cell| cell.borrow_mut().take())
            .expect("lent above, and only this thread takes it back");
        self.conns = lent.conns;
        self.listeners = lent.listeners;
        self.scratch = lent.scratch;
        self.unread = lent.unread;
        self.dirty = lent.dirty;
        let poll = std::mem::replace(&mut self.poll, lent.poll);
        if let Some(conn) = running.and_then(|t| self.conns.get_mut(t)) {
            std::mem::swap(&mut conn.session, &mut session);
        }
        self.spare = Some(Spare {
            poll,
            events: lent.events,
            session,
        });
        self.data.counters.net_input_bytes += lent.input_bytes;
        self.data.counters.net_output_bytes += lent.output_bytes;
        for (shard, op) in lent.posts {
            if shard == self.data.id {
                self.run_op(op);
            } else {
                self.outbox[shard].push(Msg::Post(op));
            }
        }
        result
    }
}

impl Lent {
    fn pass(&mut self, shared: &Shared) {
        if self
            .poll
            .poll(&mut self.events, Some(Duration::ZERO))
            .is_err()
        {
            return;
        }
        let mut ready = Vec::new();
        if !self.swept {
            // The loop's own poll may have taken events it has not served
            // yet (the script's command came first in that batch): the
            // first pass tries every connection and listener once, and the
            // later ones go by events.
            self.swept = true;
            ready.extend(self.conns.iter().map(|(t, _)| (t, true, false)));
            for (i, listener) in self.listeners.iter().enumerate() {
                let (registry, now_ms) = (self.poll.registry(), super::unix_ms());
                accept_from(
                    listener,
                    self.tls_from.is_some_and(|first| i >= first),
                    &mut self.conns,
                    registry,
                    shared,
                    self.shard,
                    now_ms,
                );
            }
        }
        for event in self.events.iter() {
            match event.token() {
                // The inbox waits for the script (the loop drains it
                // every pass, woken or not).
                WAKER_TOKEN => {}
                Token(t) if t <= LISTENER && t > LISTENER - LISTENERS_MAX => {
                    if let Some(listener) = self.listeners.get(LISTENER - t) {
                        let (registry, now_ms) = (self.poll.registry(), super::unix_ms());
                        accept_from(
                            listener,
                            self.tls_from.is_some_and(|first| LISTENER - t >= first),
                            &mut self.conns,
                            registry,
                            shared,
                            self.shard,
                            now_ms,
                        );
                    }
                }
                Token(t) => {
                    let readable =
                        event.is_readable() || event.is_read_closed() || event.is_error();
                    ready.push((t, readable, event.is_read_closed()));
                }
            }
        }
        for t in std::mem::take(&mut self.more) {
            ready.push((t, true, false));
        }
        for (t, readable, closed) in ready {
            self.serve(shared, t, readable, closed);
        }
    }

    /// Reads and answers what connection `t` sent, and writes it out.
    fn serve(&mut self, shared: &Shared, t: usize, readable: bool, mut closed: bool) {
        let Some(conn) = self.conns.get_mut(t) else {
            return;
        };
        // Over the query buffer limit: the loop closes it after the script
        // (a pass reads no more of it meanwhile).
        let over_limit = conn.rbuf.len() - conn.parser.held() > shared.config.query_buffer_limit();
        let waits = Some(t) == self.running
            || conn.closing
            || conn.close_asap
            || conn.barrier.is_some()
            || conn.held.is_some()
            || over_limit;
        if !waits && readable && !conn.commands_left {
            match conn.fill_read_buffer(&mut self.scratch) {
                Ok(received) => {
                    self.input_bytes += received.bytes as u64;
                    closed |= !received.open;
                    if !received.drained && !self.more.contains(&t) {
                        self.more.push(t);
                    }
                }
                // The loop's next read meets the error and closes it.
                Err(_) => closed = true,
            }
        }
        if !waits && cmd::busy::may_read(shared, &mut conn.session) {
            conn.parser.set_max_bulk_len(shared.config.max_bulk_len());
            conn.parser.set_unauthenticated(false);
            answer(conn, shared, &mut self.posts, &mut self.more, t);
        }
        self.flush(t);
        // The loop reads on with it (and writes what is left) after the
        // script.
        let Some(conn) = self.conns.get_mut(t) else {
            return;
        };
        match &mut conn.deferred_input {
            Some(was) => *was |= closed,
            None => {
                conn.deferred_input = Some(closed);
                self.unread.push(t);
            }
        }
        self.dirty.push(t);
    }

    fn flush(&mut self, t: usize) {
        let Some(conn) = self.conns.get_mut(t) else {
            return;
        };
        conn.drain_ready();
        if let Ok((written, all)) = conn.flush() {
            self.output_bytes += written as u64;
            if !all && !conn.wants_write {
                conn.wants_write = true;
                let interest = Interest::READABLE | Interest::WRITABLE;
                let _ = self
                    .poll
                    .registry()
                    .reregister(&mut conn.stream, Token(t), interest);
            }
        }
    }
}

/// Answers the complete commands in `conn`'s read buffer, at most
/// [`TURN_COMMANDS`] (`more` comes back to the rest).
fn answer(
    conn: &mut Conn,
    shared: &Shared,
    posts: &mut Vec<(usize, Op)>,
    more: &mut Vec<usize>,
    t: usize,
) {
    for _ in 0..TURN_COMMANDS {
        let argv = match conn.parser.next_command(&mut conn.rbuf) {
            Ok(Some(argv)) => argv,
            Ok(None) => return,
            Err(e) => {
                conn.push_reply(Frame::Error(format!("ERR {}", e.0)));
                conn.closing = true;
                return;
            }
        };
        match cmd::busy::admit(shared, &mut conn.session, argv) {
            WhileBusy::Reply(frame, ops) => {
                conn.push_reply(frame);
                posts.extend(ops);
            }
            WhileBusy::Later(argv) => {
                conn.held = Some(argv);
                return;
            }
            WhileBusy::Close(frame) => {
                conn.push_reply(frame);
                conn.closing = true;
                return;
            }
        }
    }
    if !more.contains(&t) {
        more.push(t);
    }
}
