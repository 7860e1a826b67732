//! Commands: the table, argument parsing, one module per family, and the
//! dispatcher that decides where a command runs. `meta` is what Redis
//! declares about each command (flags, key specs, docs); the table's rows
//! are joined to it by name, and COMMAND (`command`) answers from it.
//!
//! A command runs inline when every key it names lives on the connection's
//! shard (always, with `--shards 1`). Otherwise it becomes a [`Job`]: ops sent
//! to the owning shards' inboxes and a continuation that builds the reply.
//!
//! Wherever it runs, a table handler is called through [`propagate::call`],
//! the one point where what a command changed is recorded for the
//! propagation feed (`exec::feed`).

pub mod acl;
pub mod admit;
pub mod aof;
pub mod args;
pub mod bitfield;
pub mod bitmap;
pub mod blocking;
pub mod busy;
pub mod check;
pub mod command;
pub mod connection;
pub mod container;
pub mod digest;
pub mod dump;
pub mod expire;
pub mod geo;
pub mod hash;
pub mod hash_ttl;
pub mod hll;
pub mod info;
pub mod keys;
pub mod latency;
pub mod list;
pub mod list_edit;
pub mod list_move;
pub mod memory;
pub mod meta;
pub mod migrate;
pub mod module;
pub mod monitor;
pub mod multi;
pub mod pause;
pub mod propagate;
pub mod pubsub;
pub mod replication;
pub mod save;
pub mod scripting;
pub mod server;
mod session;
pub mod set;
pub mod slowlog;
pub mod sort;
pub mod stream;
pub mod strings;
pub mod table;
pub mod tracking;
pub mod transaction;
pub mod zset;

use bytes::Bytes;

pub use crate::exec::{Ctx, ShardData};
pub use admit::{admit, Admitted};
pub use meta::CommandFlags;
pub use session::{Auth, ReplyMode, Session};
pub use table::{lookup, CommandSpec, Merge, Route, Split, COMMANDS};

use crate::exec::{Action, Job, LockPlan, Need, Op, Out};
use crate::resp::Frame;
use crate::util::slot::key_slot;

/// The shard that owns `key` among `nshards`.
pub fn shard_of(key: &[u8], nshards: usize) -> usize {
    if nshards == 1 {
        0
    } else {
        key_slot(key) as usize % nshards
    }
}

/// Redis's reply for an unknown command.
pub fn unknown_command(argv: &[Bytes]) -> Frame {
    // As Redis: the name cut at 128 bytes, then quoted arguments while the
    // list is under 128 bytes, each cut to the room left.
    const CAP: usize = 128;
    let mut args: Vec<u8> = Vec::new();
    for arg in &argv[1..] {
        if args.len() >= CAP {
            break;
        }
        let room = CAP - args.len();
        args.push(b'\'');
        args.extend_from_slice(&arg[..arg.len().min(room)]);
        args.extend_from_slice(b"' ");
    }
    let name = &argv[0][..argv[0].len().min(CAP)];
    // The bytes go back as they came, UTF-8 or not, as Redis echoes them.
    let mut text = b"ERR unknown command '".to_vec();
    text.extend_from_slice(name);
    text.extend_from_slice(b"', with args beginning with: ");
    text.extend_from_slice(&args);
    Frame::ErrorBytes(text)
}

/// Decides where a command runs and runs it or starts its job.
/// Requires: `spec` is `argv[0]`'s entry and its arity was checked.
/// A job for another shard takes the arguments out of `argv`; otherwise
/// they are left there, so the caller can reuse the vector.
pub fn dispatch_spec(
    shard: &mut ShardData,
    session: &mut Session,
    spec: &'static CommandSpec,
    argv: &mut Vec<Bytes>,
) -> Action {
    match spec.route {
        Route::Conn(handler) => handler(shard, session, argv),
        // The table's handler is the immediate attempt, what EXEC runs;
        // outside a transaction these commands may block.
        // XREAD and XREADGROUP block only with BLOCK, and read before
        // they wait (`stream::read::dispatch`).
        Route::Keyed(handler, split)
            if stream::read::is_stream_read(spec.name) && shard.current_tx.is_none() =>
        {
            match stream::read::dispatch(shard, session, argv) {
                Some(action) => action,
                None => keyed(shard, session, spec, handler, split, argv),
            }
        }
        Route::Keyed(..)
            if spec.flags.contains(CommandFlags::BLOCKING) && shard.current_tx.is_none() =>
        {
            blocking::dispatch(shard, session, argv)
        }
        Route::Keyed(handler, split) => keyed(shard, session, spec, handler, split, argv),
        Route::EveryShard(handler, merge) => {
            let mut action = every_shard(shard.shared.nshards, session.db, handler, merge, argv);
            if spec.name == "flushall" {
                action = save::save_after_flushall(&shard.shared, action);
            }
            if spec.flags.contains(CommandFlags::WRITE) {
                return propagate::every_shard_write(shard, session.db, argv, action);
            }
            action
        }
    }
}

fn run_inline(shard: &mut ShardData, db: usize, handler: table::Handler, argv: &[Bytes]) -> Action {
    Action::from(propagate::call(&mut Ctx::new(shard, db), handler, argv))
}

/// A store op that runs `handler` on the shard it is sent to, on the keys
/// at `keys` in `argv` (it waits while another transaction locks them).
pub fn handler_op(
    db: usize,
    handler: table::Handler,
    argv: Vec<Bytes>,
    keys: impl Iterator<Item = usize>,
) -> Op {
    let need = Need::keys(db, keys.map(|p| argv[p].clone()));
    Op::Store(
        db,
        need,
        Box::new(move |ctx: &mut Ctx| {
            Out::Frame(propagate::call(ctx, handler, &argv).unwrap_or_else(|e| e))
        }),
    )
}

/// The locks that make a multi-shard command atomic: its keys, per shard.
pub fn lock_plan(db: usize, nshards: usize, keys: impl Iterator<Item = Bytes>) -> LockPlan {
    let mut plan = LockPlan::new();
    for key in keys {
        plan.entry(shard_of(&key, nshards))
            .or_insert(Need::Nothing)
            .add_key(db, key);
    }
    plan
}

fn keyed(
    shard: &mut ShardData,
    session: &Session,
    spec: &CommandSpec,
    handler: table::Handler,
    split: Split,
    argv: &mut Vec<Bytes>,
) -> Action {
    let n = shard.shared.nshards;
    if let Split::Computed(_, f) = split {
        // A script of a user that may not run everything: its caller goes
        // with it (its commands are checked against the user), which the
        // custom route carries; the plain handler sees no session.
        if scripting::is_script(spec) && !acl::is_free(shard, session) {
            let action = f(shard, session, argv);
            return propagate::custom(shard, session.db, spec, argv, action);
        }
    }
    let mut positions = spec.key_positions(argv);
    let Some(first) = positions.next() else {
        // No named key, but the data or the code may reach keys anywhere
        // (a script that declares none): its own steps take its locks.
        if let Split::Computed(reaches, f) = split {
            if n > 1 && reaches(argv) {
                let action = f(shard, session, argv);
                return propagate::custom(shard, session.db, spec, argv, action);
            }
        }
        return run_inline(shard, session.db, handler, argv);
    };
    let owner = shard_of(&argv[first], n);
    let single = n == 1
        || spec
            .key_positions(argv)
            .all(|p| shard_of(&argv[p], n) == owner);
    if let Split::Computed(reaches, f) = split {
        let wide = || scripting::is_script(spec) && scripting::must_go_across(shard, argv);
        if n > 1 && (!single || reaches(argv) || wide()) {
            // It locks what it reads once the data has named it.
            let action = f(shard, session, argv);
            return propagate::custom(shard, session.db, spec, argv, action);
        }
    }
    if single {
        // Locks held here by a transaction: go through the shard's lock
        // queue (unless this command is part of that transaction).
        let may_wait = !shard.locks.is_idle() && shard.current_tx.is_none();
        // (Not a step of EXEC: a transaction's command cannot start over.)
        let script = n > 1 && scripting::is_script(spec) && shard.current_tx.is_none();
        if owner == shard.id && !may_wait {
            if !script {
                return run_inline(shard, session.db, handler, argv);
            }
            // A script that reaches off its shard before it writes runs
            // again over every shard (`scripting::widen`).
            let action =
                scripting::widen::restartable(|| run_inline(shard, session.db, handler, argv));
            return match action {
                Action::Reply(reply) => {
                    scripting::reply_or_again(reply, n, shard.id, session.db, argv)
                }
                other => other,
            };
        }
        let again = script.then(|| argv.clone());
        let keys = spec.key_positions(argv);
        // The slow log keeps the argv until the reply (`cmd::slowlog`), and
        // a container's statistics read its subcommand from it.
        let op_argv = if spec.container || shard.shared.config.slowlog_threshold_us().is_some() {
            argv.clone()
        } else {
            std::mem::take(argv)
        };
        let mut op = handler_op(session.db, handler, op_argv, keys);
        if scripting::is_script(spec) {
            op = op.scripted();
        }
        if let Some(argv) = again {
            // As inline above, the run on the owner may be abandoned and
            // the script sent over every shard.
            let (origin, db) = (shard.id, session.db);
            let op = scripting::widen::restartable_op(op);
            return Action::Job(Job::new(vec![(owner, op)], move |mut outs| {
                let reply = outs.pop().map_or(Frame::Null, Out::frame);
                scripting::reply_or_again(reply, n, origin, db, &argv)
            }));
        }
        return Action::Job(Job::new(vec![(owner, op)], |mut outs| {
            Action::Reply(outs.pop().map_or(Frame::Null, Out::frame))
        }));
    }
    let action = match split {
        Split::One => run_inline(shard, session.db, handler, argv),
        Split::Sum => multi::split_sum(n, session.db, handler, argv),
        Split::Gather => multi::split_gather(n, session.db, handler, argv),
        Split::Pairs => multi::split_pairs(n, session.db, handler, spec.name, argv),
        Split::Custom(f) | Split::Computed(_, f) => {
            let action = f(shard, session, argv);
            propagate::custom(shard, session.db, spec, argv, action)
        }
    };
    // Keys on several shards: the command is atomic under key locks
    // (unless its job chose its own: a script takes its shards whole).
    match action {
        Action::Job(job) if job.lock.is_none() => {
            let keys = spec.key_positions(argv).map(|p| argv[p].clone());
            Action::Job(job.locked(lock_plan(session.db, n, keys)))
        }
        other => other,
    }
}

fn every_shard(
    nshards: usize,
    db: usize,
    handler: table::Handler,
    merge: Merge,
    argv: &[Bytes],
) -> Action {
    let ops = (0..nshards)
        .map(|s| {
            let argv = argv.to_vec();
            let op = move |ctx: &mut Ctx| Out::Frame(handler(ctx, &argv).unwrap_or_else(|e| e));
            (s, Op::store(db, op))
        })
        .collect();
    Action::Job(Job::new(ops, move |outs| {
        Action::Reply(multi::merge(merge, outs))
    }))
}
