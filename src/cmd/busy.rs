//! What a client of a shard whose own script runs past
//! `busy-reply-threshold` gets, as Redis's `processCommand` answers while a
//! script is busy. The shard's loop asks this for each command it reads in
//! a busy pass (`exec::busy`); nothing here touches the store, which the
//! script holds.
//!
//! - unknown command, wrong arity: Redis's errors, as always;
//! - anything not flagged `allow_busy`: BUSY (the EVAL or the FUNCTION
//!   text); inside MULTI the transaction fails, and EXEC is discarded with
//!   `EXECABORT Transaction discarded because of: BUSY ...`;
//! - SCRIPT KILL, FUNCTION KILL, FUNCTION STATS, MULTI, QUIT: answered now;
//!   SHUTDOWN NOSAVE exits (any other SHUTDOWN gets BUSY);
//! - the other `allow_busy` commands (AUTH, HELLO, RESET, WATCH, UNWATCH,
//!   DISCARD, commands queued in MULTI) and anything of a client whose
//!   access must be checked: they wait, with the connection's later
//!   commands, for the script to end (their handlers need the shard).

use bytes::Bytes;

use super::args::err;
use super::scripting::{self, functions};
use super::{lookup, transaction, unknown_command, Session};
use crate::exec::{Op, Shared};
use crate::resp::Frame;

/// The answer to one command read in a busy pass.
pub enum WhileBusy {
    /// Answered now; `ops`: work the answer leaves for shards (forgetting
    /// the client's WATCHed keys), run once the script is over.
    Reply(Frame, Vec<(usize, Op)>),
    /// Runs once the script is over; the connection reads nothing more
    /// until then.
    Later(Vec<Bytes>),
    /// QUIT: answered, then the connection closes.
    Close(Frame),
}

/// Whether a busy pass may read `session`'s commands: only where access
/// control has nothing to check (the others wait for the script).
pub fn may_read(shared: &Shared, session: &mut Session) -> bool {
    super::acl::free_without_shard(&shared.acl, session)
}

/// Decides what `argv` of `session` gets while this shard's script is busy
/// (`may_read` said yes).
pub fn admit(shared: &Shared, session: &mut Session, argv: Vec<Bytes>) -> WhileBusy {
    let reply = |frame| WhileBusy::Reply(frame, Vec::new());
    let Some(spec) = lookup(&argv[0]) else {
        fail_queued(session);
        return reply(unknown_command(&argv));
    };
    if !spec.arity_ok(argv.len()) && spec.name != "exec" {
        fail_queued(session);
        return reply(err::wrong_arity(spec.name));
    }
    let busy = scripting::busy_text(shared);
    if !scripting::allowed_when_busy(spec, &argv) {
        if spec.name == "exec" {
            // Redis's execCommandAbort: the transaction goes, and the
            // WATCHed keys with it.
            session.multi = None;
            let ops = transaction::unwatch_ops(session, shared.nshards);
            let text = format!("EXECABORT Transaction discarded because of: {busy}");
            return WhileBusy::Reply(err::frame(&text), ops);
        }
        fail_queued(session);
        return reply(err::frame(busy));
    }
    if session.multi.is_some() && !transaction::CONTROL.contains(&spec.name) {
        return WhileBusy::Later(argv); // queued once the script is over
    }
    let sub = |name: &str| {
        argv.get(1)
            .is_some_and(|s| s.eq_ignore_ascii_case(name.as_bytes()))
    };
    match spec.name {
        "script" if sub("kill") => reply(kill_reply(scripting::kill(shared, true))),
        "function" if sub("kill") => reply(kill_reply(scripting::kill(shared, false))),
        "function" if sub("stats") => reply(functions::stats(shared)),
        "shutdown" => {
            let nosave = argv[1..].iter().any(|a| a.eq_ignore_ascii_case(b"nosave"));
            let saves = argv[1..]
                .iter()
                .any(|a| a.eq_ignore_ascii_case(b"save") || a.eq_ignore_ascii_case(b"abort"));
            if nosave && !saves {
                log::warn!("User requested shutdown...");
                super::save::exit_now();
            }
            reply(err::frame(busy))
        }
        "multi" if session.multi.is_some() => {
            reply(err::frame("ERR MULTI calls can not be nested"))
        }
        "multi" => {
            session.multi = Some(Default::default());
            reply(Frame::OK)
        }
        "quit" => WhileBusy::Close(Frame::OK),
        _ => WhileBusy::Later(argv),
    }
}

fn kill_reply(text: &'static str) -> Frame {
    match text {
        "OK" => Frame::OK,
        refusal => err::frame(refusal),
    }
}

fn fail_queued(session: &mut Session) {
    if let Some(tx) = &mut session.multi {
        tx.failed = true;
    }
}
