//! `DEBUG EMBER-CHECK`: ember's own DEBUG subcommand (Redis has none like
//! it) that checks the keyspace invariants of every shard's store: every
//! key in its index, every deadline in its window, hash-field deadlines
//! filed, no empty container (`Store::check_invariants`). The fuzz harness
//! (`tests/fuzz.rs`) runs it between batches; like every DEBUG subcommand
//! it needs `enable-debug-command`.

use crate::exec::{Action, Job, Op, Out};
use crate::resp::Frame;

use super::ShardData;

/// Runs the check on every shard; `+OK`, or an error naming the first shard
/// and invariant found broken.
pub fn ember_check(shard: &ShardData) -> Action {
    let ops = (0..shard.shared.nshards)
        .map(|s| {
            // Need::Whole: it waits until no transaction holds keys of the
            // shard, so it never sees a transaction's work half done.
            let op = Op::store(0, move |ctx| {
                let now = ctx.now_ms();
                Out::Frame(match ctx.shard.store.check_invariants(now) {
                    Ok(()) => Frame::OK,
                    Err(e) => Frame::Error(format!("ERR ember-check failed: shard {s}: {e}")),
                })
            });
            (s, op)
        })
        .collect();
    Action::Job(Job::new(ops, |outs| {
        let frames = outs.into_iter().map(Out::frame);
        let reply = frames
            .into_iter()
            .find(Frame::is_error)
            .unwrap_or(Frame::OK);
        Action::Reply(reply)
    }))
}
