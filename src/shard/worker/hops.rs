//! Hops: jobs sent to shards, the ops other shards send here, their
//! answers, and the transactions whose key locks make a job atomic (the
//! protocol is `exec::hop`'s and `exec::locks`').

use std::collections::HashMap;

use bytes::Bytes;

use super::Worker;
use crate::cmd;
use crate::exec::{Action, Ctx, Job, Msg, Need, Op, Out, Parked, ReplyTo, Then, TxId};
use crate::resp::Frame;
use crate::util::stamp::Stamp;

/// The transactions this shard's clients started: the shards each locks.
#[derive(Default)]
pub(super) struct Transactions {
    open: HashMap<TxId, Vec<usize>>,
    next: u64,
}

impl Transactions {
    /// A new transaction of shard `home`, locking on `shards`. Ids are
    /// unique across shards: the home's number is in the top bits.
    fn begin(&mut self, home: usize, shards: Vec<usize>) -> TxId {
        self.next += 1;
        let tx = (home as u64) << 48 | self.next;
        self.open.insert(tx, shards);
        tx
    }

    /// Ends `tx`: the shards whose locks it must give back.
    fn end(&mut self, tx: TxId) -> Vec<usize> {
        self.open.remove(&tx).unwrap_or_default()
    }
}

impl Worker {
    /// Runs the queued commands of the client's EXEC from where it stopped:
    /// local ones at once, and a job for the first one that needs other
    /// shards (its reply comes back through `complete`, which calls this
    /// again). The transaction's locks are held throughout.
    pub(super) fn advance_exec(&mut self, to: ReplyTo) {
        loop {
            let Some(conn) = self.conns.get_mut(to.token) else {
                return;
            };
            let Some(run) = conn.session.exec.as_mut() else {
                return;
            };
            run.running = true;
            let (db, n) = (conn.session.db, self.data.shared.nshards);
            let watching = self.data.shared.monitors.active();
            let steps_before = if watching { run.steps.len() } else { 0 };
            let queued: Vec<Vec<Bytes>> = if watching {
                run.steps.iter().cloned().collect()
            } else {
                Vec::new()
            };
            if let Some(batch) = cmd::transaction::remote_batch(run, db, self.data.id, n) {
                if watching {
                    let batched = steps_before - run.steps.len();
                    let addr = conn.session.addr.clone();
                    for argv in &queued[..batched] {
                        cmd::monitor::feed(&mut self.data, db, &addr, argv);
                    }
                }
                self.launch(to, batch);
                return;
            }
            let Some(mut argv) = run.steps.pop_front() else {
                let run = conn.session.exec.take().expect("checked");
                let exec = cmd::lookup(b"exec").expect("EXEC is in the table");
                let replies = cmd::transaction::with_refusals(run.replies, run.refused);
                self.finish(to, Frame::Array(replies), false, exec, run.started);
                return;
            };
            let Some(spec) = cmd::lookup(&argv[0]) else {
                continue;
            };
            self.data.current_tx = Some(to.tx.unwrap_or(0));
            let step_started = Stamp::now();
            self.data.set_caller(Some(to.conn_id), to.track);
            let watched = watching.then(|| argv.clone());
            self.data.from_master = conn.session.master;
            let action = if cmd::scripting::is_script(spec) {
                self.lending(Some(to.token), |data, session| {
                    cmd::dispatch_spec(data, session, spec, &mut argv)
                })
            } else {
                cmd::dispatch_spec(&mut self.data, &mut conn.session, spec, &mut argv)
            };
            self.data.from_master = false;
            self.data.set_caller(None, false);
            if let Some(watched) = watched.filter(|a| cmd::monitor::shown(spec, a)) {
                if let Some(conn) = self.conns.get(to.token) {
                    let (db, addr) = (conn.session.db, conn.session.addr.clone());
                    cmd::monitor::feed(&mut self.data, db, &addr, &watched);
                }
            }
            self.data.current_tx = None;
            self.data.publish_records(to.tx);
            let Some(conn) = self.conns.get_mut(to.token) else {
                return;
            };
            match action {
                Action::Reply(frame) | Action::Close(frame) => {
                    // EXEC is not logged, the commands it ran are (Redis's
                    // skip_slowlog), each with its own time.
                    let us = step_started.elapsed_us();
                    cmd::slowlog::log_if_slow(&self.data, &conn.session, spec, &argv, us);
                    if let Some(run) = conn.session.exec.as_mut() {
                        run.replies.push(frame);
                    }
                }
                Action::Job(mut job) => {
                    job.lock = None;
                    self.launch(to, job);
                    return;
                }
                Action::Exec { .. } | Action::RunQueued => {
                    if let Some(run) = conn.session.exec.as_mut() {
                        run.replies.push(Frame::error("ERR EXEC inside EXEC"));
                    }
                }
                Action::Later(later) => {
                    // WAIT inside EXEC answers at once, as Redis's does.
                    drop(later);
                    if let Some(run) = conn.session.exec.as_mut() {
                        run.replies.push(Frame::Integer(0));
                    }
                }
                // PSYNC and SYNC are `no_multi`: never queued.
                Action::Handoff(_) => {
                    if let Some(run) = conn.session.exec.as_mut() {
                        run.replies
                            .push(Frame::error("ERR internal: a handoff inside EXEC"));
                    }
                }
                // Blocking commands do not block inside EXEC (`dispatch_spec`).
                Action::Block(_) => {
                    if let Some(run) = conn.session.exec.as_mut() {
                        run.replies
                            .push(Frame::error("ERR internal: blocked inside EXEC"));
                    }
                }
            }
        }
    }

    /// Sends a job's ops (running local store ops at once) and completes the
    /// slot when every output is in. A job that needs locks and does not run
    /// in a transaction yet starts one: it takes the locks first.
    pub(super) fn launch(&mut self, mut to: ReplyTo, job: Job) {
        let mut job = Some(job);
        while let Some(mut next) = job.take() {
            if let Some(plan) = next.lock.take() {
                if to.tx.is_none() && !plan.is_empty() {
                    let tx = self.txs.begin(self.data.id, plan.keys().copied().collect());
                    to.tx = Some(tx);
                    self.data.shared.feed.open(tx);
                    if let Some(conn) = self.conns.get_mut(to.token) {
                        conn.tx = Some(tx);
                    }
                    next = Job::acquiring(plan, next);
                }
            }
            let Job { ops, then, .. } = next;
            let Some(conn) = self.conns.get_mut(to.token) else {
                return;
            };
            conn.rearm(to.seq, ops.len(), then);
            let mut done = None;
            if ops.is_empty() {
                done = conn.take_if_complete(to.seq);
            }
            for (part, (shard, op)) in ops.into_iter().enumerate() {
                if shard != self.data.id {
                    self.outbox[shard].push(Msg::Run {
                        from: self.data.id,
                        to,
                        part,
                        op,
                    });
                } else if let Some(out) = self.admit_op(self.data.id, to, part, op) {
                    let Some(conn) = self.conns.get_mut(to.token) else {
                        return;
                    };
                    if let Some(complete) = conn.fill(to.seq, part, out) {
                        done = Some(complete);
                    }
                }
            }
            if let Some((then, outs, cmd, started)) = done {
                job = self.complete(to, then, outs, cmd, started);
            }
        }
    }

    /// An op arriving on this shard: runs it and returns its output, or parks
    /// it behind the key locks it meets (its output is sent when it runs).
    pub(super) fn admit_op(
        &mut self,
        from: usize,
        to: ReplyTo,
        part: usize,
        op: Op,
    ) -> Option<Out> {
        let origin = (from, to.conn_id);
        match op {
            Op::Lock { need, wait } => {
                let Some(tx) = to.tx else {
                    return Some(Out::Count(0)); // not part of a transaction: nothing to lock for
                };
                if !wait {
                    let granted = self.data.locks.try_acquire(tx, &need, origin);
                    return Some(Out::Count(granted as i64));
                }
                let parked = Parked {
                    from,
                    to,
                    part,
                    op: Op::Lock {
                        need: Need::Nothing,
                        wait,
                    },
                };
                self.data
                    .locks
                    .acquire(tx, need, origin, parked)
                    .map(|_| Out::Count(1))
            }
            Op::Unlock => {
                if let Some(tx) = to.tx {
                    self.release_here(tx);
                }
                Some(Out::Count(0))
            }
            op if to.tx.is_some() || self.data.locks.is_idle() => Some(self.run_op_in(&to, op)),
            op => {
                let need = match &op {
                    Op::Store(_, need, _) | Op::Script(_, need, _) => need.clone(),
                    _ => Need::Nothing,
                };
                let parked = Parked { from, to, part, op };
                let ready = self.data.locks.admit(need, origin, parked)?;
                let to = ReplyTo {
                    tx: None,
                    ..ready.to
                };
                Some(self.run_op_in(&to, ready.op))
            }
        }
    }

    /// Runs `op` (part of transaction `tx`, if any) for the client `to`
    /// answers, and hands what it recorded to the feed.
    /// On a replica, the master's work sees logically expired keys as live
    /// (they wait for the master's DEL), where its clients' does not.
    fn run_op_in(&mut self, to: &ReplyTo, op: Op) -> Out {
        let tx = to.tx;
        self.data.op_tx = tx;
        self.data.from_master = self.data.shared.repl.is_master_conn(to.conn_id);
        self.data.set_caller(Some(to.conn_id), to.track);
        let out = self.run_op(op);
        self.data.set_caller(None, false);
        self.data.from_master = false;
        self.data.op_tx = None;
        self.data.publish_records(tx);
        out
    }

    pub(super) fn run_op(&mut self, op: Op) -> Out {
        match op {
            Op::Store(db, _, f) => f(&mut Ctx::new(&mut self.data, db)),
            // The script's busy passes serve this shard's clients meanwhile.
            Op::Script(db, _, f) => self.lending(None, |data, _| f(&mut Ctx::new(data, db))),
            Op::Clients(q) => self.clients_op(q),
            // Lock ops are answered by `admit_op`; a granted request parks as this.
            Op::Lock { .. } => Out::Count(1),
            Op::Unlock => Out::Count(0),
        }
    }

    /// Sends an op's output to the shard that asked (or takes it here).
    pub(super) fn send_out(&mut self, from: usize, to: ReplyTo, part: usize, out: Out) {
        if from == self.data.id {
            self.on_done(to, part, out);
        } else {
            self.outbox[from].push(Msg::Done { to, part, out });
        }
    }

    /// Gives back `tx`'s locks on this shard and runs what waited for them.
    pub(super) fn release_here(&mut self, tx: TxId) {
        for p in self.data.locks.release(tx) {
            let out = self.run_op_in(&p.to, p.op);
            self.send_out(p.from, p.to, p.part, out);
        }
    }

    /// Transaction `tx` of one of this shard's clients is over: every shard
    /// it locked gives its locks back.
    pub(super) fn end_tx(&mut self, tx: TxId) {
        // Its records go out before any release lets other work at its keys.
        self.data.shared.feed.commit(tx);
        for shard in self.txs.end(tx) {
            if shard == self.data.id {
                self.release_here(tx);
            } else {
                self.outbox[shard].push(Msg::Release { tx });
            }
        }
    }

    /// Runs a finished slot's continuation; returns the next step's job, if any.
    pub(super) fn complete(
        &mut self,
        to: ReplyTo,
        then: Then,
        outs: Vec<Out>,
        cmd: &'static cmd::CommandSpec,
        started: Stamp,
    ) -> Option<Job> {
        let (frame, close) = match then(outs) {
            Action::Job(job) => return Some(job),
            Action::RunQueued => {
                self.advance_exec(to);
                return None;
            }
            Action::Block(wait) => {
                self.on_wait(to, *wait);
                return None;
            }
            Action::Reply(f) => (f, false),
            Action::Close(f) => (f, true),
            Action::Exec { .. } => (Frame::error("ERR internal: EXEC from a job"), false),
            Action::Later(later) => {
                self.answer_later(to, later);
                return None;
            }
            Action::Handoff(handoff) => {
                // The transaction ends (and the feed attaches what waited
                // for its commit) as the slot resolves, with nothing to
                // write; the socket leaves once what precedes is written.
                if let Some(conn) = self.conns.get_mut(to.token) {
                    conn.handoff = Some(handoff);
                }
                (Frame::Sequence(Vec::new()), false)
            }
        };
        // The reply of a command queued in a running EXEC: keep it, go on.
        let conn = self.conns.get_mut(to.token)?;
        if let Some(run) = conn.session.exec.as_mut() {
            if run.running && run.seq == to.seq {
                let batched = std::mem::take(&mut run.batched);
                match frame {
                    Frame::Array(items) if batched => run.replies.extend(items),
                    frame => run.replies.push(frame),
                }
                self.advance_exec(to);
                return None;
            }
        }
        self.finish(to, frame, close, cmd, started);
        None
    }

    /// Resolves a slot with its reply; ends its transaction if it had one.
    pub(super) fn finish(
        &mut self,
        to: ReplyTo,
        frame: Frame,
        close: bool,
        cmd: &'static cmd::CommandSpec,
        started: Stamp,
    ) {
        let elapsed_us = started.elapsed_us();
        if let Some(conn) = self.conns.get_mut(to.token) {
            if let Some((argv, own_us)) = conn.take_slow(to.seq) {
                let us = own_us.unwrap_or(elapsed_us);
                cmd::slowlog::log_if_slow(&self.data, &conn.session, cmd, &argv, us);
            }
        }
        if cmd.name == "exec" {
            // MONITOR shows EXEC after the commands it ran.
            if let Some(conn) = self.conns.get_mut(to.token) {
                if let Some(argv) = conn.session.monitored_exec.take() {
                    let (db, addr) = (conn.session.db, conn.session.addr.clone());
                    cmd::monitor::feed(&mut self.data, db, &addr, &argv);
                }
            }
        }
        let track = self.data.shared.config.latency_tracking();
        let counters = &mut self.data.counters;
        counters.record(cmd.id(), elapsed_us, frame.is_error(), track);
        let exec = matches!(frame, Frame::Array(_)) && cmd.name == "exec";
        if frame.is_error() || exec {
            counters.record_errors(&frame, exec);
        }
        if let Some(tx) = to.tx {
            if let Some(conn) = self.conns.get_mut(to.token) {
                conn.tx = None;
            }
            self.end_tx(tx);
        }
        let Some(conn) = self.conns.get_mut(to.token) else {
            return;
        };
        if conn.session.exec.as_ref().is_some_and(|r| r.seq == to.seq) {
            conn.session.exec = None; // WATCH failed before the commands ran
        }
        if conn.session.master && frame.is_error() {
            cmd::replication::log_error_to_master(&frame, cmd.name);
        }
        conn.resolve(to.seq, frame);
        conn.closing |= close;
        self.dirty.push(to.token);
        self.check_output_limit(to.token);
        let Some(conn) = self.conns.get_mut(to.token) else {
            return;
        };
        if conn.barrier == Some(to.seq) {
            conn.barrier = None;
            // Its later commands run once this step is over, not inside it.
            self.resume.push(to.token);
        }
    }

    pub(super) fn on_done(&mut self, to: ReplyTo, part: usize, out: Out) {
        let Some(conn) = self.conns.get_mut(to.token) else {
            return;
        };
        if conn.session.id != to.conn_id {
            return; // the client left and its token was reused
        }
        if let Some((then, outs, cmd, started)) = conn.fill(to.seq, part, out) {
            if let Some(job) = self.complete(to, then, outs, cmd, started) {
                self.launch(to, job);
            }
        }
    }

    /// Runs what other shards sent; returns whether there was any.
    pub(super) fn drain_inbox(&mut self) -> bool {
        let mut any = false;
        while let Ok(batch) = self.inbox.try_recv() {
            any = true;
            for msg in batch {
                match msg {
                    Msg::Run { from, to, part, op } => {
                        if let Some(out) = self.admit_op(from, to, part, op) {
                            // Keys it evicted: their readers hear of it
                            // before the asking shard goes on.
                            self.route_evicted();
                            self.send_out(from, to, part, out);
                        }
                    }
                    Msg::Deliver {
                        token,
                        conn_id,
                        frame,
                    } => self.deliver(token, conn_id, frame),
                    Msg::Invalidate(inv) => self.invalidate(inv),
                    Msg::Done { to, part, out } => self.on_done(to, part, out),
                    Msg::Block(msg) => self.on_block_msg(msg),
                    Msg::Post(op) => {
                        self.run_op(op);
                    }
                    Msg::Release { tx } => self.release_here(tx),
                    Msg::Adopt {
                        stream,
                        master,
                        addr,
                    } => self.adopt(stream, master, addr),
                    Msg::Listen(listeners) => self.listen_on(listeners),
                    Msg::ListenTls(listeners) => self.listen_tls_on(listeners),
                    Msg::Serve { db, tx, f } => {
                        f(&mut Ctx::new(&mut self.data, db));
                        self.data.publish_records(tx);
                    }
                }
                // As after a local command: a write signals blocked clients.
                self.serve_ready_keys();
            }
        }
        any
    }

    pub(super) fn send_outbox(&mut self) {
        let peers = self.data.shared.peers();
        for (shard, batch) in self.outbox.iter_mut().enumerate() {
            if batch.is_empty() {
                continue;
            }
            let batch = std::mem::take(batch);
            if peers[shard].inbox.send(batch).is_ok() {
                let _ = peers[shard].waker.wake();
            }
        }
    }
}
