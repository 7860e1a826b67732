//! What a client of a shard whose own script runs past
//! `busy-reply-threshold` gets, as Redis's `processCommand` answers while a
//! script is busy. The shard's loop asks this for each command it reads in
//! a busy pass (`exec::busy`); nothing here touches the store, which the
//! script holds.
//!
//! - unknown command, wrong arity: Redis's errors, as always;
//! - while loading (DEBUG LOADAOF's slow script): LOADING, as Redis answers
//!   whatever is not flagged `loading` before it looks at the script;
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
    // Loading comes first, as in Redis's processCommand: a slow script
    // of the AOF (DEBUG LOADAOF, the start-up replay) leaves others LOADING.
    if shared.aof.is_loading()
        && !super::table::subcommand_row(spec, &argv)
            .flags
            .contains(crate::cmd::meta::CommandFlags::LOADING)
    {
        fail_queued(session);
        return reply(err::frame(super::aof::LOADING));
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;

    use crate::util::test_argv as argv;

    /// A server whose script (a function when `function`) is busy, and a
    /// logged-in session.
    fn busy(function: bool) -> (Shared, Session) {
        let shared = Shared::new(Default::default());
        shared.scripts.busy.store(1, Ordering::Release);
        shared
            .scripts
            .busy_function
            .store(function, Ordering::Release);
        let mut session = Session::new(1, String::new(), String::new(), 0);
        // Logged in, a user that may run anything (what the gate decided).
        session.auth.generation = shared.acl.generation();
        session.auth.free = true;
        assert!(may_read(&shared, &mut session));
        (shared, session)
    }

    fn reply(w: WhileBusy) -> Frame {
        match w {
            WhileBusy::Reply(frame, _) => frame,
            WhileBusy::Later(argv) => panic!("held: {argv:?}"),
            WhileBusy::Close(frame) => panic!("closed with {frame:?}"),
        }
    }

    #[test]
    fn most_commands_get_the_busy_text_of_the_script_kind() {
        let (shared, mut s) = busy(false);
        let eval = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
        assert_eq!(
            reply(admit(&shared, &mut s, argv(&["GET", "k"]))),
            err::frame(eval)
        );
        assert_eq!(
            reply(admit(&shared, &mut s, argv(&["FUNCTION", "STATS"]))),
            err::frame(eval)
        );
        assert_eq!(
            reply(admit(&shared, &mut s, argv(&["SHUTDOWN"]))),
            err::frame(eval)
        );
        let (shared, mut s) = busy(true);
        let function = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
        assert_eq!(
            reply(admit(&shared, &mut s, argv(&["PING"]))),
            err::frame(function)
        );
        assert_eq!(
            reply(admit(&shared, &mut s, argv(&["SCRIPT", "KILL"]))),
            err::frame(function)
        );
    }

    #[test]
    fn kills_go_to_the_right_kind() {
        let (shared, mut s) = busy(true);
        assert_eq!(
            reply(admit(&shared, &mut s, argv(&["function", "kill"]))),
            Frame::OK
        );
        assert!(shared.scripts.kill.load(Ordering::Acquire));
        let (shared, mut s) = busy(false);
        shared.scripts.busy_wrote.store(true, Ordering::Release);
        let unkillable = reply(admit(&shared, &mut s, argv(&["SCRIPT", "KILL"])));
        assert!(unkillable.is_error());
        assert!(!shared.scripts.kill.load(Ordering::Acquire));
    }

    #[test]
    fn a_transaction_fails_and_exec_is_discarded() {
        let (shared, mut s) = busy(false);
        assert_eq!(reply(admit(&shared, &mut s, argv(&["MULTI"]))), Frame::OK);
        assert!(reply(admit(&shared, &mut s, argv(&["INCR", "x"]))).is_error());
        assert!(s.multi.as_ref().is_some_and(|tx| tx.failed));
        let exec = reply(admit(&shared, &mut s, argv(&["EXEC"])));
        assert_eq!(
            exec,
            err::frame("EXECABORT Transaction discarded because of: BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
        );
        assert!(s.multi.is_none());
    }

    #[test]
    fn what_needs_the_shard_waits_and_errors_stay_redis_errors() {
        let (shared, mut s) = busy(false);
        assert!(matches!(
            admit(&shared, &mut s, argv(&["AUTH", "x"])),
            WhileBusy::Later(_)
        ));
        assert!(matches!(
            admit(&shared, &mut s, argv(&["QUIT"])),
            WhileBusy::Close(_)
        ));
        let unknown = reply(admit(&shared, &mut s, argv(&["NOPE"])));
        assert_eq!(unknown, unknown_command(&argv(&["NOPE"])));
        assert_eq!(
            reply(admit(&shared, &mut s, argv(&["GET"]))),
            err::wrong_arity("get")
        );
    }
}
