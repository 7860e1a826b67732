//! What happens to a parsed command before it runs, as Redis's
//! `processCommand` decides it: an unknown name or a wrong arity is
//! answered (and fails a transaction being queued), inside MULTI the
//! command is queued or refused, a subscribed RESP2 client may send only
//! the subscription commands. Before queueing, the user must be logged in
//! and allowed the command (`acl::gate`). Otherwise the command is dispatched. The
//! shard loop carries out what this returns and knows none of these rules.

use std::borrow::Cow;

use bytes::Bytes;

use super::acl;
use super::args::err;
use super::meta::CommandFlags;
use super::{dispatch_spec, lookup, transaction, unknown_command, CommandSpec, Session, ShardData};
use crate::exec::Action;
use crate::resp::Frame;

/// What a RESP2 client may send while subscribed.
const SUBSCRIBER_COMMANDS: &[&str] = &[
    "subscribe",
    "unsubscribe",
    "psubscribe",
    "punsubscribe",
    "ssubscribe",
    "sunsubscribe",
    "ping",
    "quit",
    "reset",
];

/// The outcome of [`admit`].
pub enum Admitted {
    /// Answered without running: unknown, wrong arity, QUEUED, refused.
    Answered(Frame),
    /// Dispatched: the command's row and what running it led to.
    Dispatched(&'static CommandSpec, Action),
    /// Closed without a reply: the connection's user was deleted.
    Close,
}

/// Decides what the command in `argv` does for this client and, when it
/// runs, dispatches it. Arguments a job took are gone from `argv`; what is
/// left may be reused by the caller.
pub fn admit(shard: &mut ShardData, session: &mut Session, argv: &mut Vec<Bytes>) -> Admitted {
    let Some(spec) = lookup(&argv[0]) else {
        fail_queued_transaction(session);
        return Admitted::Answered(unknown_command(argv));
    };
    // EXEC answers a wrong arity itself: it ends the transaction too.
    if !spec.arity_ok(argv.len()) && spec.name != "exec" {
        fail_queued_transaction(session);
        return Admitted::Answered(err::wrong_arity(spec.name));
    }
    // While the data set loads (start-up, DEBUG LOADAOF), only the AOF's
    // replay connection and Redis's `loading` commands run; the replay passes
    // the checks below, as Redis's AOF client does.
    let loader = shard.shared.aof.is_loading() && super::aof::is_loader(shard, session);
    // A container's subcommand has its own flags (CONFIG SET runs while
    // loading, CONFIG as such does not say).
    if shard.shared.aof.is_loading()
        && !loader
        && !super::table::subcommand_row(spec, argv)
            .flags
            .contains(CommandFlags::LOADING)
    {
        fail_queued_transaction(session);
        return Admitted::Answered(err::frame(super::aof::LOADING));
    }
    // Access control, before queueing (as Redis, a refusal fails the
    // transaction); one test while there is nothing to check.
    // The master's stream is obeyed whatever the ACL says (Redis's
    // `obey_client`: `is_free` for the master client), as is the AOF's.
    if !loader && !acl::is_free(shard, session) {
        match acl::gate(shard, session, spec, argv) {
            Ok(()) => {}
            Err(acl::Refused::Reply(frame)) => {
                fail_queued_transaction(session);
                return Admitted::Answered(frame);
            }
            Err(acl::Refused::Close) => return Admitted::Close,
        }
    }
    if shard.shared.scripts.busy() && !super::scripting::allowed_when_busy(spec, argv) {
        fail_queued_transaction(session);
        if spec.name == "exec" {
            let reason = super::scripting::busy_text(&shard.shared);
            let action = transaction::abort(shard, session, reason);
            return Admitted::Dispatched(spec, action);
        }
        let text = super::scripting::busy_text(&shard.shared);
        return Admitted::Answered(err::frame(text));
    }
    // The AOF's commands are this server's own history: a read-only
    // replica replays them too (Redis's AOF client is obeyed).
    if let Some(refusal) = (!loader)
        .then(|| super::replication::refusal(shard, session, spec))
        .flatten()
    {
        fail_queued_transaction(session);
        return Admitted::Answered(refusal);
    }
    if !loader && !session.master && refused_for_memory(shard, session, spec) {
        if spec.name == "exec" {
            let action = transaction::abort(shard, session, crate::exec::evict::OOM);
            return Admitted::Dispatched(spec, action);
        }
        fail_queued_transaction(session);
        return Admitted::Answered(Frame::Error(crate::exec::evict::OOM.into()));
    }
    if !session.master && super::save::refuses_writes(shard, spec) {
        fail_queued_transaction(session);
        return Admitted::Answered(err::frame(super::save::MISCONF));
    }
    if let Some(misconf) = super::aof::refuses_writes(shard, spec) {
        fail_queued_transaction(session);
        return Admitted::Answered(Frame::Error(misconf));
    }
    if session.multi.is_some() && !transaction::CONTROL.contains(&spec.name) {
        let refusal = transaction::refusal_to_queue(shard, session, spec);
        if let Some(tx) = session.multi.as_mut() {
            return Admitted::Answered(match refusal {
                Some(refusal) => {
                    tx.failed = true;
                    refusal
                }
                None => {
                    tx.queue(std::mem::take(argv));
                    Frame::Simple("QUEUED")
                }
            });
        }
    }
    if session.in_subscriber_mode() && !SUBSCRIBER_COMMANDS.contains(&spec.name) {
        return Admitted::Answered(Frame::Error(format!(
            "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
            full_name(spec, argv)
        )));
    }
    session.last_cmd = spec.name;
    session.last_sub = match argv.get(1) {
        Some(sub) if spec.container => Some(String::from_utf8_lossy(sub).to_ascii_lowercase()),
        _ => None,
    };
    let action = dispatch_spec(shard, session, spec, argv);
    Admitted::Dispatched(spec, action)
}

/// Redis's memory check before a command: over `maxmemory`, the shard
/// evicts first (`exec::evict`); if nothing could be evicted, a command
/// that may grow memory is refused (`denyoom`, an EXEC of such commands,
/// and, inside MULTI, anything but EXEC, DISCARD, QUIT and RESET: a queue
/// grows memory too). Reads and DEL still run.
fn refused_for_memory(shard: &mut ShardData, session: &Session, spec: &CommandSpec) -> bool {
    if crate::config::EVICTION.maxmemory() == 0 {
        return false;
    }
    let grows = |spec: &CommandSpec| spec.flags.contains(CommandFlags::DENYOOM);
    let refusable = match &session.multi {
        Some(tx) if spec.name == "exec" => tx
            .queued
            .iter()
            .any(|argv| lookup(&argv[0]).is_some_and(grows)),
        Some(_) => !matches!(spec.name, "discard" | "quit" | "reset"),
        None => grows(spec),
    };
    !shard.evict_before_command(refusable) && refusable
}

/// A command refused while a transaction is queued makes EXEC fail.
fn fail_queued_transaction(session: &mut Session) {
    if let Some(tx) = &mut session.multi {
        tx.failed = true;
    }
}

/// A command's name as Redis reports it: `name|subcommand` for containers.
fn full_name(spec: &CommandSpec, argv: &[Bytes]) -> Cow<'static, str> {
    match argv.get(1) {
        Some(sub) if spec.container => format!(
            "{}|{}",
            spec.name,
            String::from_utf8_lossy(sub).to_ascii_lowercase()
        )
        .into(),
        _ => spec.name.into(),
    }
}
