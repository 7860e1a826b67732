//! The shard loop's side of blocking commands (the protocol is described in
//! `shard::blocking`): starting a wait, the messages about waiters, serving
//! ready keys, deadlines, `CLIENT UNBLOCK` and disconnects.

use std::collections::HashSet;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use bytes::Bytes;

use super::{unix_ms, Worker};
use crate::cmd::blocking::{self as commands, is_nothing, TIMEOUT_REPLY};
use crate::exec::wait::{BlockMsg, Kind, Request, Task, Wait, Waiter, WaiterId};
use crate::exec::{Action, Ctx, Msg, Need, Out, ReplyTo, Then};
use crate::resp::Frame;
use crate::shard::blocking::{settle, Blocked, Mode};

/// What `CLIENT UNBLOCK id ERROR` answers the unblocked client.
const UNBLOCKED: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

/// A blocked command's slot continuation: its single output is the reply.
pub(super) fn answer() -> Then {
    Box::new(|mut outs| Action::Reply(outs.pop().map_or(TIMEOUT_REPLY, Out::frame)))
}

fn reply_to(id: WaiterId, token: usize) -> ReplyTo {
    ReplyTo {
        token,
        conn_id: id.conn_id,
        seq: id.seq,
        tx: None,
        track: false,
    }
}

impl Worker {
    /// `Action::Block`: from a blocking command, or from a retry's end.
    pub(super) fn on_wait(&mut self, to: ReplyTo, wait: Wait) {
        match wait {
            Wait::Start(req) => self.start_waiting(to, req),
            Wait::Attempted(frame) => self.attempt_ended(to, frame),
        }
    }

    /// Registers the client on its keys' shards and, when they are several,
    /// makes the first attempt. It shows as blocked once they all have it.
    fn start_waiting(&mut self, to: ReplyTo, req: Request) {
        self.arm_slot(to);
        let id = WaiterId {
            conn_id: to.conn_id,
            seq: to.seq,
        };
        let home = self.data.id;
        let waiter = |keys, task| Waiter {
            id,
            home,
            token: to.token,
            db: req.db,
            keys,
            task,
        };
        let mut blocked = Blocked {
            id,
            token: to.token,
            deadline_ms: req.deadline_ms,
            shards: Vec::new(),
            mode: Mode::One { shard: home },
            shown: false,
            ending: None,
        };
        match req.home_shard(self.data.shared.nshards) {
            Some(owner) => {
                let w = waiter(req.keys.clone(), Task::Serve(req.want.clone()));
                blocked.shards.push(owner);
                blocked.mode = Mode::One { shard: owner };
                self.blocking.clients.insert(blocked);
                self.send_block(owner, BlockMsg::Wait(w));
            }
            None => {
                let (kind, takes) = (req.want.kind(), req.want.takes());
                for (shard, keys) in req.keys_by_shard(self.data.shared.nshards) {
                    blocked.shards.push(shard);
                    let task = Task::Notify { kind, takes };
                    self.send_block(shard, BlockMsg::Wait(waiter(keys, task)));
                }
                blocked.mode = Mode::Many {
                    req,
                    in_flight: false,
                    again: false,
                };
                self.blocking.clients.insert(blocked);
                self.retry(to);
            }
        }
    }

    /// Runs a multi-shard waiter's attempt job on its slot.
    fn retry(&mut self, to: ReplyTo) {
        let id = WaiterId {
            conn_id: to.conn_id,
            seq: to.seq,
        };
        let nshards = self.data.shared.nshards;
        let Some(Blocked {
            mode:
                Mode::Many {
                    req,
                    in_flight,
                    again,
                },
            ..
        }) = self.blocking.clients.get_mut(id)
        else {
            return;
        };
        *in_flight = true;
        *again = false;
        let attempt = match commands::attempt_across(nshards, req) {
            Action::Job(job) if self.data.shared.feed.is_on() => {
                Action::Job(crate::cmd::propagate::served_across(job, self.data.id, req))
            }
            other => other,
        };
        match settle(attempt) {
            Action::Job(job) => self.launch(to, job),
            Action::Block(wait) => self.on_wait(to, *wait),
            // `settle` turns every reply into `Block`; nothing else comes.
            _ => self.on_wait(to, Wait::Attempted(TIMEOUT_REPLY)),
        }
    }

    /// A multi-shard waiter's attempt ended: answer, or keep waiting.
    fn attempt_ended(&mut self, to: ReplyTo, frame: Frame) {
        if let Some(tx) = to.tx {
            // The attempt ran under key locks: give them back.
            if let Some(conn) = self.conns.get_mut(to.token) {
                conn.tx = None;
            }
            self.end_tx(tx);
        }
        let id = WaiterId {
            conn_id: to.conn_id,
            seq: to.seq,
        };
        let Some(blocked) = self.blocking.clients.get_mut(id) else {
            return;
        };
        let Mode::Many {
            in_flight, again, ..
        } = &mut blocked.mode
        else {
            return;
        };
        *in_flight = false;
        let again = *again;
        let ending = blocked.ending.take();
        self.arm_slot(to);
        if !is_nothing(&frame) {
            self.answer_blocked(id, frame);
        } else if let Some(ending) = ending {
            self.answer_blocked(id, ending);
        } else {
            // Each shard took the registration before this attempt's miss.
            self.show_blocked(id);
            if again {
                self.retry(to);
            }
        }
    }

    /// Shows a waiting client as blocked (INFO's `blocked_clients`, CLIENT
    /// LIST's `b`, CLIENT UNBLOCK), once every shard of its keys has it: a
    /// write seen after that finds it waiting, as in Redis. A wait already
    /// ending (timed out meanwhile) is not shown.
    fn show_blocked(&mut self, id: WaiterId) {
        let Some(blocked) = self.blocking.clients.get_mut(id) else {
            return;
        };
        if blocked.shown || blocked.ending.is_some() {
            return;
        }
        blocked.shown = true;
        let token = blocked.token;
        self.flag_blocked(token, true);
        self.data
            .shared
            .counters
            .blocked_clients
            .fetch_add(1, Relaxed);
    }

    /// Stops showing a client whose wait ended as blocked.
    fn unshow_blocked(&mut self, blocked: &Blocked) {
        if blocked.shown {
            self.flag_blocked(blocked.token, false);
            self.data
                .shared
                .counters
                .blocked_clients
                .fetch_sub(1, Relaxed);
        }
    }

    /// Gives a blocked client its reply and forgets it.
    fn answer_blocked(&mut self, id: WaiterId, frame: Frame) {
        let Some(blocked) = self.blocking.clients.remove(id.conn_id) else {
            return;
        };
        self.unshow_blocked(&blocked);
        if let Mode::Many { .. } = blocked.mode {
            for shard in blocked.shards {
                self.send_block(shard, BlockMsg::Cancel { id, ack: false });
            }
        }
        self.on_done(reply_to(id, blocked.token), 0, Out::Frame(frame));
    }

    /// Ends a wait early (timeout, `CLIENT UNBLOCK`) with `frame`, unless a
    /// reply already on its way wins. False if the client was not blocked.
    fn end_wait(&mut self, conn_id: u64, frame: Frame) -> bool {
        let home = self.data.id;
        let Some(blocked) = self.blocking.clients.of_conn(conn_id) else {
            return false;
        };
        if blocked.ending.is_some() {
            return false;
        }
        let id = blocked.id;
        self.blocking.clients.drop_deadline(conn_id);
        let Some(blocked) = self.blocking.clients.of_conn(conn_id) else {
            return false;
        };
        match blocked.mode {
            Mode::One { shard } if shard == home => {
                let ready = &mut self.data.store.stats.notify.ready;
                if self.blocking.registry.remove(id, ready).is_some() {
                    self.answer_blocked(id, frame);
                } else {
                    // Served moments ago: that reply is being delivered.
                    blocked.ending = Some(frame);
                }
            }
            Mode::One { shard } => {
                blocked.ending = Some(frame);
                self.send_block(shard, BlockMsg::Cancel { id, ack: true });
            }
            Mode::Many {
                in_flight: true, ..
            } => blocked.ending = Some(frame),
            Mode::Many { .. } => self.answer_blocked(id, frame),
        }
        true
    }

    /// Sends a message to `shard`, handling it at once when that is this one.
    fn send_block(&mut self, shard: usize, msg: BlockMsg) {
        if shard == self.data.id {
            self.on_block_msg(msg);
        } else {
            self.outbox[shard].push(Msg::Block(msg));
        }
    }

    pub(super) fn on_block_msg(&mut self, msg: BlockMsg) {
        match msg {
            BlockMsg::Wait(waiter) => self.take_waiter(waiter),
            BlockMsg::Cancel { id, ack } => {
                let ready = &mut self.data.store.stats.notify.ready;
                if let Some(waiter) = self.blocking.registry.remove(id, ready) {
                    // Woken maybe, and gone: the waiters behind get their turn.
                    for key in &waiter.keys {
                        ready.signal(waiter.db, key);
                    }
                    if ack {
                        self.send_block(waiter.home, BlockMsg::Cancelled { id });
                    }
                }
            }
            BlockMsg::Served { id, frame } => self.answer_blocked(id, frame),
            BlockMsg::Waiting { id } => self.show_blocked(id),
            BlockMsg::Cancelled { id } => {
                if let Some(blocked) = self.blocking.clients.get_mut(id) {
                    let ending = blocked.ending.take().unwrap_or(TIMEOUT_REPLY);
                    self.answer_blocked(id, ending);
                }
            }
            BlockMsg::Ready { id } => {
                let Some(blocked) = self.blocking.clients.get_mut(id) else {
                    return;
                };
                let token = blocked.token;
                let idle = blocked.ending.is_none();
                if let Mode::Many {
                    in_flight, again, ..
                } = &mut blocked.mode
                {
                    if *in_flight {
                        *again = true;
                    } else if idle {
                        self.retry(reply_to(id, token));
                    }
                }
            }
        }
    }

    /// On a key's owner: a waiter that serves here tries at once, then
    /// waits if nothing was there and tells its home so; a notify-only one
    /// just waits (its home's attempt comes next). While a transaction holds
    /// one of its keys it waits without trying, and its keys are looked at
    /// again once they are free.
    fn take_waiter(&mut self, waiter: Waiter) {
        let need = Need::keys(waiter.db, waiter.keys.iter().cloned());
        if self.data.locks.is_locked(&need) {
            for key in &waiter.keys {
                self.defer(waiter.db, key);
            }
        } else if let Task::Serve(want) = &waiter.task {
            let mut ctx = Ctx::new(&mut self.data, waiter.db);
            let attempt = commands::attempt(&mut ctx, &waiter.keys, want);
            self.data.publish_records(None);
            match attempt {
                Ok(None) => {}
                Ok(Some(frame)) | Err(frame) => {
                    let id = waiter.id;
                    return self.send_block(waiter.home, BlockMsg::Served { id, frame });
                }
            }
        }
        let (id, home) = (waiter.id, waiter.home);
        let confirm = matches!(waiter.task, Task::Serve(_));
        let ready = &mut self.data.store.stats.notify.ready;
        self.blocking.registry.add(waiter, ready);
        if confirm {
            self.send_block(home, BlockMsg::Waiting { id });
        }
    }

    /// Serves the waiters of every key written since the last call, in
    /// arrival order per key. Called after each command and each message
    /// from another shard; the one place to hold serving back (while a
    /// transaction holds keys, say).
    pub(super) fn serve_ready_keys(&mut self) {
        if !self.blocking.deferred.is_empty() {
            self.resignal_unlocked();
        }
        if !self.data.store.stats.notify.ready.has_ready() {
            return;
        }
        let mut replies = Vec::new();
        loop {
            while let Some((db, key)) = self.data.store.stats.notify.ready.take() {
                self.serve_key(db, &key, &mut replies);
            }
            if replies.is_empty() {
                break;
            }
            // A reply to a client of this shard finishes its command; its
            // next commands run after this (`Worker::resume_input`), and
            // what they write is served then.
            for (home, msg) in std::mem::take(&mut replies) {
                self.send_block(home, msg);
            }
        }
    }

    /// Puts a key aside until no transaction holds it.
    fn defer(&mut self, db: usize, key: &Bytes) {
        self.blocking.deferred.insert((db, key.clone()));
    }

    /// Keys put aside while a transaction held them are signalled again
    /// once free, so their waiters get what the transaction left.
    fn resignal_unlocked(&mut self) {
        let locks = &self.data.locks;
        let ready = &mut self.data.store.stats.notify.ready;
        self.blocking.deferred.retain(|(db, key)| {
            let locked = locks.is_locked(&Need::keys(*db, [key.clone()]));
            if !locked {
                ready.signal(*db, key);
            }
            locked
        });
    }

    /// Walks the waiters of one key, first come first, while it holds
    /// elements nobody ahead was promised: a waiter serving here pops at
    /// once, a multi-shard one is woken and promised what it takes. A key a
    /// transaction holds is put aside until it is free: nothing interleaves
    /// with the transaction's own commands on it.
    fn serve_key(&mut self, db: usize, key: &Bytes, replies: &mut Vec<(usize, BlockMsg)>) {
        if self.data.locks.is_locked(&Need::keys(db, [key.clone()])) {
            self.defer(db, key);
            return;
        }
        // The walk reads the queue in place (a copy of it per signal made a
        // push that serves one of N waiters cost O(N)); the served leave it
        // after the walk, each from the front in O(1).
        let mut promised = 0;
        let mut served: HashSet<WaiterId, ahash::RandomState> = HashSet::default();
        for id in self.blocking.registry.queue(db, key) {
            let mut ctx = Ctx::new(&mut self.data, db);
            // Gone, or a type nobody can be served from: nothing to hand
            // out, but a blocked XREADGROUP learns its stream went.
            let holds = commands::holding(&mut ctx, key);
            if holds.is_none_or(|(kind, _)| kind != Kind::Stream) {
                if let Some(waiter) = self.blocking.registry.get(id) {
                    if let Task::Serve(want) = &waiter.task {
                        if let Some(frame) = commands::gone_reply(want) {
                            if served.insert(id) {
                                replies.push((waiter.home, BlockMsg::Served { id, frame }));
                            }
                            continue;
                        }
                    }
                }
            }
            let Some((kind, len)) = holds else {
                continue;
            };
            if len <= promised {
                break;
            }
            let Some(waiter) = self
                .blocking
                .registry
                .get(id)
                .filter(|_| !served.contains(&id))
            else {
                continue; // left, or served on this walk; dropped from the queue later
            };
            let home = waiter.home;
            match &waiter.task {
                Task::Notify {
                    kind: wanted,
                    takes,
                } if *wanted == kind => {
                    promised += takes;
                    replies.push((home, BlockMsg::Ready { id }));
                }
                // A key of another type wakes nobody (Redis 7.0).
                Task::Serve(want) if want.kind() == kind => {
                    if let Ok(Some(frame)) | Err(frame) = want.take_from(&mut ctx, key) {
                        served.insert(id);
                        replies.push((home, BlockMsg::Served { id, frame }));
                    }
                }
                _ => {}
            }
            // Each waiter served is a call of its own, as in Redis.
            self.data.publish_records(None);
        }
        self.data.publish_records(None);
        let ready = &mut self.data.store.stats.notify.ready;
        for id in served {
            self.blocking.registry.remove(id, ready);
        }
    }

    /// Answers the blocked clients whose deadline passed.
    pub(super) fn expire_blocked(&mut self) {
        if self.blocking.clients.is_empty() {
            return;
        }
        for conn_id in self.blocking.clients.take_due(self.data.now_ms) {
            self.end_wait(conn_id, TIMEOUT_REPLY);
        }
    }

    /// The poll timeout, shortened to wake up when the next deadline passes.
    pub(super) fn poll_timeout_for_blocked(&self, timeout: Duration) -> Duration {
        match self.blocking.clients.next_deadline() {
            // Due once the clock is past the deadline.
            Some(at) => timeout.min(Duration::from_millis((at + 1).saturating_sub(unix_ms()))),
            None => timeout,
        }
    }

    /// `CLIENT UNBLOCK`: 1 if connection `conn_id` of this shard was blocked.
    /// A client not shown as blocked yet is not: its command counts as
    /// coming after the unblock, as it does in INFO and CLIENT LIST.
    pub(super) fn unblock_client(&mut self, conn_id: u64, error: bool) -> i64 {
        if !self
            .blocking
            .clients
            .of_conn(conn_id)
            .is_some_and(|b| b.shown)
        {
            return 0;
        }
        let frame = if error {
            Frame::error(UNBLOCKED)
        } else {
            TIMEOUT_REPLY
        };
        self.end_wait(conn_id, frame) as i64
    }

    /// Ends the wait of every client blocked here with `error`.
    pub(super) fn unblock_all(&mut self, error: &'static str) -> i64 {
        let ids: Vec<u64> = self
            .conns
            .iter()
            .map(|(_, c)| c.session.id)
            .filter(|id| self.blocking.clients.of_conn(*id).is_some_and(|b| b.shown))
            .collect();
        ids.into_iter()
            .filter(|&id| self.end_wait(id, Frame::error(error)))
            .count() as i64
    }

    /// A blocked client disconnected: cancel its waiters.
    pub(super) fn forget_blocked(&mut self, conn_id: u64) {
        let Some(blocked) = self.blocking.clients.remove(conn_id) else {
            return;
        };
        self.unshow_blocked(&blocked);
        for shard in blocked.shards {
            let id = blocked.id;
            self.send_block(shard, BlockMsg::Cancel { id, ack: false });
        }
    }

    /// Arms a blocked command's slot to take its reply as part 0.
    fn arm_slot(&mut self, to: ReplyTo) {
        if let Some(conn) = self.conns.get_mut(to.token) {
            conn.rearm(to.seq, 1, answer());
        }
    }

    /// Flags the connection as blocked or not (CLIENT LIST's `b`).
    fn flag_blocked(&mut self, token: usize, blocked: bool) {
        if let Some(conn) = self.conns.get_mut(token) {
            conn.session.blocked = blocked;
        }
    }
}
