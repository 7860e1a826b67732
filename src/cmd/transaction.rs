//! MULTI / EXEC / DISCARD / WATCH / UNWATCH.
//!
//! EXEC runs the queued commands with nothing interleaved on their keys:
//! - all keys on one shard (always with `--shards 1`, and for keys under one
//!   `{hash tag}`): the whole transaction is one op on that shard, which runs
//!   ops one at a time, the isolation Redis gives;
//! - keys on several shards: the transaction first takes key locks on every
//!   shard involved (`exec::locks`, ascending shard order), checks WATCH,
//!   runs the commands one after another (local ones inline, others as hops
//!   that carry the transaction's id; a run of commands for one other shard
//!   travels as one hop), then gives the locks back.
//!
//! WATCH registers the client on the shards owning the keys; any change to a
//! watched key (writes from any client, expiry, FLUSHDB/FLUSHALL/SWAPDB)
//! marks the client there, and EXEC checks the marks under its locks.

use std::collections::VecDeque;

use bytes::Bytes;

use super::args::err;
use super::meta::CommandFlags;
use super::scripting;
use super::table::{CommandSpec, Route};
use super::{lookup, shard_of, Ctx, Session, ShardData};
use crate::exec::{Action, Job, LockPlan, Need, Op, Out};
use crate::resp::Frame;

/// A transaction being queued.
#[derive(Debug, Clone, Default)]
pub struct Transaction {
    pub queued: Vec<Vec<Bytes>>,
    /// A command failed to queue (unknown, wrong arity): EXEC aborts.
    pub failed: bool,
    /// What `queued` holds (CLIENT LIST `multi-mem`), kept as commands are
    /// queued: the client's memory is counted at every flush, and a walk
    /// of the queue there cost a long MULTI pipeline O(n²).
    pub mem: usize,
}

impl Transaction {
    /// Queues one command for EXEC.
    pub fn queue(&mut self, argv: Vec<Bytes>) {
        self.mem += argv.capacity() * std::mem::size_of::<Bytes>()
            + argv.iter().map(|a| a.len()).sum::<usize>();
        self.queued.push(argv);
    }
}

/// A transaction EXEC is running over several shards.
#[derive(Debug, Clone)]
pub struct ExecRun {
    /// The reply slot of the EXEC.
    pub seq: u64,
    pub steps: VecDeque<Vec<Bytes>>,
    pub replies: Vec<Frame>,
    /// Locks held and WATCH checked: the steps are being run.
    pub running: bool,
    /// The step in flight is a batch (`remote_batch`): its reply is an
    /// array of the batched commands' replies.
    pub batched: bool,
    pub started: crate::util::stamp::Stamp,
    /// Commands ACL refused at EXEC (their place, their error): not run,
    /// their replies put in place at the end (`with_refusals`).
    pub refused: Vec<(usize, Frame)>,
}

/// EXEC's replies with the refused commands' errors at their places.
pub fn with_refusals(mut replies: Vec<Frame>, refused: Vec<(usize, Frame)>) -> Vec<Frame> {
    for (at, frame) in refused {
        replies.insert(at.min(replies.len()), frame);
    }
    replies
}

/// The owning shard of a queued keyed command whose keys all live on one
/// shard; None for other commands.
fn single_owner(argv: &[Bytes], nshards: usize) -> Option<usize> {
    let spec = lookup(&argv[0])?;
    let Route::Keyed(..) = spec.route else {
        return None;
    };
    if spec.reaches_unnamed_keys(argv, nshards) {
        return None;
    }
    let mut owners = spec
        .key_positions(argv)
        .map(|p| shard_of(&argv[p], nshards));
    let first = owners.next()?;
    owners.all(|s| s == first).then_some(first)
}

/// When the next queued commands (two or more) all run on one other shard,
/// takes them as one op there: one hop instead of one per command.
pub fn remote_batch(run: &mut ExecRun, db: usize, here: usize, nshards: usize) -> Option<Job> {
    let owner = single_owner(run.steps.front()?, nshards).filter(|s| *s != here)?;
    let count = run
        .steps
        .iter()
        .take_while(|argv| single_owner(argv, nshards) == Some(owner))
        .count();
    if count < 2 {
        return None;
    }
    let steps: Vec<Vec<Bytes>> = run.steps.drain(..count).collect();
    run.batched = true;
    let scripted = steps.iter().any(|argv| scripting::runs_script(argv));
    let op = move |ctx: &mut Ctx| Out::Frame(run_keyed(ctx, &steps));
    let mut op = Op::store(db, op);
    if scripted {
        op = op.scripted();
    }
    Some(Job::new(vec![(owner, op)], only_reply))
}

/// Commands that act on the transaction instead of being queued (UNWATCH
/// is queued, as in Redis: it must not drop the WATCH that EXEC checks).
pub const CONTROL: &[&str] = &["exec", "discard", "multi", "watch", "quit", "reset"];

/// Why a command may not be queued in this client's transaction, as Redis
/// refuses it when it is sent (the transaction then fails at EXEC): a
/// `no_multi` command (SHUTDOWN: EXEC must not stop the server halfway), or
/// DEBUG where `enable-debug-command` keeps it from this client.
pub fn refusal_to_queue(shard: &ShardData, session: &Session, spec: &CommandSpec) -> Option<Frame> {
    if spec.flags.contains(CommandFlags::NO_MULTI) {
        return Some(err::frame("ERR Command not allowed inside a transaction"));
    }
    if spec.name == "debug" && !super::server::debug_allowed(shard, session) {
        return Some(err::frame(super::server::DEBUG_NOT_ALLOWED));
    }
    None
}

/// Connection commands that read the keyspace: inside EXEC they need every
/// shard locked.
const READS_EVERY_SHARD: &[&str] = &["scan", "randomkey"];

pub fn multi(_: &mut ShardData, session: &mut Session, _: &[Bytes]) -> Action {
    if session.multi.is_some() {
        return err::frame("ERR MULTI calls can not be nested").into();
    }
    session.multi = Some(Transaction::default());
    Frame::OK.into()
}

pub fn discard(shard: &mut ShardData, session: &mut Session, _: &[Bytes]) -> Action {
    match session.multi.take() {
        Some(_) => reply_after_unwatch(session, shard.shared.nshards, Frame::OK),
        None => err::frame("ERR DISCARD without MULTI").into(),
    }
}

pub fn watch(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    if session.multi.is_some() {
        return err::frame("ERR WATCH inside MULTI is not allowed").into();
    }
    let n = shard.shared.nshards;
    let db = session.db;
    let client = session.id;
    let mut per_shard: Vec<(usize, Vec<Bytes>)> = Vec::new();
    for key in &argv[1..] {
        if session.watched.iter().any(|(d, k)| *d == db && k == key) {
            continue;
        }
        session.watched.push((db, key.clone()));
        let s = shard_of(key, n);
        match per_shard.iter_mut().find(|(g, _)| *g == s) {
            Some((_, keys)) => keys.push(key.clone()),
            None => per_shard.push((s, vec![key.clone()])),
        }
    }
    if per_shard.is_empty() {
        return Frame::OK.into();
    }
    let ops = per_shard
        .into_iter()
        .map(|(s, keys)| {
            let need = Need::keys(db, keys.iter().cloned());
            let op = move |ctx: &mut Ctx| {
                let now = ctx.now_ms();
                let store = &mut ctx.shard.store;
                for key in &keys {
                    let expired = store.dbs[db].expire_at(key).is_some_and(|at| now > at);
                    store.stats.notify.watches.watch(db, key, client, expired);
                }
                Out::Count(0)
            };
            (s, Op::Store(db, need, Box::new(op)))
        })
        .collect();
    Action::Job(Job::new(ops, |_| Action::Reply(Frame::OK)))
}

/// Discards the transaction being queued, forgets the watched keys and
/// answers EXECABORT with `reason` (an EXEC refused before it runs: Redis's
/// `execCommandAbort`).
pub fn abort(shard: &mut ShardData, session: &mut Session, reason: &str) -> Action {
    session.multi = None;
    let abort = err::frame(&format!(
        "EXECABORT Transaction discarded because of: {reason}"
    ));
    reply_after_unwatch(session, shard.shared.nshards, abort)
}

pub fn unwatch(shard: &mut ShardData, session: &mut Session, _: &[Bytes]) -> Action {
    reply_after_unwatch(session, shard.shared.nshards, Frame::OK)
}

/// Forgets the session's watched keys on their shards, then replies `reply`.
fn reply_after_unwatch(session: &mut Session, nshards: usize, reply: Frame) -> Action {
    let ops = unwatch_ops(session, nshards);
    if ops.is_empty() {
        return reply.into();
    }
    Action::Job(Job::new(ops, move |_| Action::Reply(reply)))
}

/// Ops that forget the session's watched keys, one per shard (also run when
/// the client leaves).
pub fn unwatch_ops(session: &mut Session, nshards: usize) -> Vec<(usize, Op)> {
    let client = session.id;
    by_shard(std::mem::take(&mut session.watched), nshards)
        .into_iter()
        .map(|(s, keys)| {
            let op = Op::keyless(move |ctx: &mut Ctx| {
                ctx.shard.store.stats.notify.watches.forget(client, &keys);
                Out::Count(0)
            });
            (s, op)
        })
        .collect()
}

fn by_shard(keys: Vec<(usize, Bytes)>, nshards: usize) -> Vec<(usize, Vec<(usize, Bytes)>)> {
    let mut groups: Vec<(usize, Vec<(usize, Bytes)>)> = Vec::new();
    for (db, key) in keys {
        let s = shard_of(&key, nshards);
        match groups.iter_mut().find(|(g, _)| *g == s) {
            Some((_, v)) => v.push((db, key)),
            None => groups.push((s, vec![(db, key)])),
        }
    }
    groups
}

/// Whether a change reached one of `client`'s watched `keys` (all on this
/// shard); forgets them. A key whose deadline passed since WATCH counts as
/// changed even if nobody deleted it yet, as in Redis 7.
fn watch_broken(ctx: &mut Ctx, client: u64, keys: &[(usize, Bytes)]) -> bool {
    let now = ctx.now_ms();
    let store = &mut ctx.shard.store;
    let watches = &store.stats.notify.watches;
    let mut broken = watches.is_dirty(client);
    for (db, key) in keys {
        let expired = store.dbs[*db].expire_at(key).is_some_and(|at| now > at);
        broken |= expired && !watches.expired_at_watch(*db, key, client);
    }
    store.stats.notify.watches.forget(client, keys);
    broken
}

pub fn exec(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let n = shard.shared.nshards;
    // The worker lets a wrong arity through to here: as in Redis, it
    // discards the transaction (if any) and says why.
    if argv.len() != 1 {
        session.multi = None;
        let abort = err::frame(
            "EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command",
        );
        return reply_after_unwatch(session, n, abort);
    }
    let Some(tx) = session.multi.take() else {
        return err::frame("ERR EXEC without MULTI").into();
    };
    if tx.failed {
        let abort = err::frame("EXECABORT Transaction discarded because of previous errors.");
        return reply_after_unwatch(session, n, abort);
    }
    let mut tx = tx;
    // As Redis, permissions are checked again: they may have changed since
    // the commands were queued.
    let refused = super::acl::exec_refusals(shard, session, &mut tx.queued);
    let watched = std::mem::take(&mut session.watched);
    let (plan, keyed_only) = lock_plan(&tx.queued, &watched, session.db, n);
    let client = session.id;
    if keyed_only && plan.len() <= 1 {
        if shard.shared.monitors.active() {
            // They run as one op on their shard: MONITOR shows them now,
            // before the EXEC line (`shard::worker` shows it at the end).
            for queued in &tx.queued {
                if lookup(&queued[0]).is_some_and(|spec| super::monitor::shown(spec, queued)) {
                    let addr = session.addr.clone();
                    super::monitor::feed(shard, session.db, &addr, queued);
                }
            }
        }
        let (owner, need) = plan.into_iter().next().unwrap_or((shard.id, Need::Nothing));
        return Action::Job(one_shard_exec(
            owner, need, session.db, client, watched, tx.queued, refused,
        ));
    }
    let checks: Vec<(usize, Op)> = by_shard(watched, n)
        .into_iter()
        .map(|(s, keys)| {
            let op = Op::keyless(move |ctx: &mut Ctx| {
                Out::Count(watch_broken(ctx, client, &keys) as i64)
            });
            (s, op)
        })
        .collect();
    let check = Job::new(checks, |outs| {
        if outs.iter().any(|o| o.count() == 1) {
            Action::Reply(Frame::NullArray)
        } else {
            Action::RunQueued
        }
    });
    session.exec = Some(ExecRun {
        seq: 0,
        steps: tx.queued.into(),
        replies: Vec::new(),
        running: false,
        batched: false,
        started: crate::util::stamp::Stamp::now(),
        refused,
    });
    Action::Exec { plan, check }
}

/// The locks a transaction needs: its commands' keys (in the database each
/// runs in, following SELECT) and the watched keys; whole shards for
/// commands over the keyspace. Also says whether every command is keyed (so
/// the transaction may run as one op on one shard).
fn lock_plan(
    queued: &[Vec<Bytes>],
    watched: &[(usize, Bytes)],
    mut db: usize,
    nshards: usize,
) -> (LockPlan, bool) {
    let mut plan = LockPlan::new();
    let mut keyed_only = true;
    let add_key = |plan: &mut LockPlan, shard: usize, db: usize, key: Bytes| {
        plan.entry(shard).or_insert(Need::Nothing).add_key(db, key);
    };
    // The whole shard covers any key already asked for there.
    let every_shard =
        |plan: &mut LockPlan| (0..nshards).for_each(|s| drop(plan.insert(s, Need::Whole)));
    for argv in queued {
        let spec = lookup(&argv[0]).expect("checked when queued");
        match spec.route {
            // Keys named by the data (SORT BY/GET patterns): every shard.
            Route::Keyed(..) if spec.reaches_unnamed_keys(argv, nshards) => {
                keyed_only = false;
                every_shard(&mut plan);
            }
            Route::Keyed(..) => {
                for p in spec.key_positions(argv) {
                    let key = argv[p].clone();
                    add_key(&mut plan, shard_of(&key, nshards), db, key);
                }
            }
            Route::EveryShard(..) => {
                keyed_only = false;
                every_shard(&mut plan);
            }
            Route::Conn(_) => {
                keyed_only = false;
                if spec.name == "select" {
                    if let Some(d) = crate::util::num::parse_i64(&argv[1]) {
                        db = usize::try_from(d).unwrap_or(db);
                    }
                } else if READS_EVERY_SHARD.contains(&spec.name) {
                    every_shard(&mut plan);
                }
            }
        }
    }
    for (d, key) in watched {
        add_key(&mut plan, shard_of(key, nshards), *d, key.clone());
    }
    (plan, keyed_only)
}

/// A transaction whose keys all live on `owner`: one op that checks WATCH
/// and runs every command there, so nothing interleaves.
fn one_shard_exec(
    owner: usize,
    need: Need,
    db: usize,
    client: u64,
    watched: Vec<(usize, Bytes)>,
    queued: Vec<Vec<Bytes>>,
    refused: Vec<(usize, Frame)>,
) -> Job {
    let scripted = queued.iter().any(|argv| scripting::runs_script(argv));
    let op = move |ctx: &mut Ctx| {
        if watch_broken(ctx, client, &watched) {
            return Out::Frame(Frame::NullArray);
        }
        Out::Frame(run_keyed(ctx, &queued))
    };
    let mut op = Op::Store(db, need, Box::new(op));
    if scripted {
        op = op.scripted();
    }
    Job::new(vec![(owner, op)], move |outs| match only_reply(outs) {
        Action::Reply(Frame::Array(replies)) if !refused.is_empty() => {
            Action::Reply(Frame::Array(with_refusals(replies, refused)))
        }
        other => other,
    })
}

/// Runs queued keyed commands in order on this shard, in the context's
/// database. Runtime errors stay in their slot; nothing is rolled back, as
/// in Redis.
fn run_keyed(ctx: &mut Ctx, steps: &[Vec<Bytes>]) -> Frame {
    let replies = steps
        .iter()
        .map(|argv| {
            let spec = lookup(&argv[0]).expect("checked when queued");
            match spec.route {
                Route::Keyed(handler, _) => {
                    super::propagate::call(ctx, handler, argv).unwrap_or_else(|e| e)
                }
                _ => Frame::error("ERR internal: not a keyed command"),
            }
        })
        .collect();
    Frame::Array(replies)
}

/// The reply of a one-op job: that op's frame.
fn only_reply(mut outs: Vec<Out>) -> Action {
    Action::Reply(outs.pop().map_or(Frame::Null, Out::frame))
}
