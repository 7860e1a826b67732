//! MULTI / EXEC / DISCARD for transactions whose keys live on one shard.
//!
//! The queued commands run as one op on the owning shard, which executes ops
//! one at a time, so no other command interleaves with them: the same
//! isolation Redis gives. Transactions over keys of several shards need the
//! key-lock protocol (DESIGN.md) and are refused with a clear error until it
//! exists; keys under one `{hash tag}` always share a shard.

use bytes::Bytes;

use super::args::err;
use super::table::Route;
use super::{lookup, shard_of, Ctx, Session, ShardData};
use crate::resp::Frame;
use crate::shard::{Action, Job, Out};

/// A transaction being queued.
#[derive(Debug, Clone, Default)]
pub struct Transaction {
    pub queued: Vec<Vec<Bytes>>,
    /// A command failed to queue (unknown, wrong arity): EXEC aborts.
    pub failed: bool,
}

/// Commands that act on the transaction instead of being queued.
pub const CONTROL: &[&str] = &[
    "exec", "discard", "multi", "watch", "unwatch", "quit", "reset",
];

pub fn multi(_: &mut ShardData, session: &mut Session, _: &[Bytes]) -> Action {
    if session.multi.is_some() {
        return err::frame("ERR MULTI calls can not be nested").into();
    }
    session.multi = Some(Transaction::default());
    Frame::OK.into()
}

pub fn discard(_: &mut ShardData, session: &mut Session, _: &[Bytes]) -> Action {
    match session.multi.take() {
        Some(_) => Frame::OK.into(),
        None => err::frame("ERR DISCARD without MULTI").into(),
    }
}

pub fn exec(shard: &mut ShardData, session: &mut Session, _: &[Bytes]) -> Action {
    let Some(tx) = session.multi.take() else {
        return err::frame("ERR EXEC without MULTI").into();
    };
    if tx.failed {
        return err::frame("EXECABORT Transaction discarded because of previous errors.").into();
    }
    let n = shard.shared.nshards;
    let mut steps = Vec::with_capacity(tx.queued.len());
    let mut owner: Option<usize> = None;
    for argv in tx.queued {
        let spec = lookup(&argv[0]).expect("checked when queued");
        let Route::Keyed(handler, _) = spec.route else {
            return Frame::Error(format!(
                "ERR '{}' inside MULTI is not supported by ember yet",
                spec.name
            ))
            .into();
        };
        for p in spec.key_positions(&argv) {
            let s = shard_of(&argv[p], n);
            if owner.is_some_and(|o| o != s) {
                return err::frame(
                    "ERR ember does not run transactions over keys of several shards yet: put the keys under one {hash tag}",
                )
                .into();
            }
            owner = Some(s);
        }
        steps.push((handler, argv));
    }
    let db = session.db;
    Action::Job(Job::single(
        owner.unwrap_or(shard.id),
        move |ctx: &mut Ctx| {
            ctx.db = db;
            // Runtime errors stay in their slot; nothing is rolled back, as in Redis.
            let replies = steps
                .iter()
                .map(|(handler, argv)| handler(ctx, argv).unwrap_or_else(|e| e))
                .collect();
            Out::Frame(Frame::Array(replies))
        },
    ))
}
