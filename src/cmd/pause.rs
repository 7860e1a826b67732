//! CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, and which commands
//! a pause holds back (Redis 7.0's rules): under ALL every command; under
//! WRITE those flagged `write` or `may_replicate` (PUBLISH, PFCOUNT...),
//! an EXEC whose queue holds one, and EVAL/EVALSHA/FCALL unless the script
//! or function declares `no-writes`. A held-back command waits (the
//! client counts in `blocked_clients`) and runs once the pause ends; a
//! command with the wrong number of arguments is answered at once. The
//! waiting itself is the shard loop's (`shard::worker::input`).

use bytes::Bytes;

use super::args::err;
use super::{lookup, CommandFlags, Session, ShardData};
use crate::exec::pause::PauseMode;
use crate::exec::{Action, Job, Op, Out};
use crate::resp::Frame;

/// The commands Redis 7.0 declares `may_replicate` besides the scripts
/// (its COMMAND INFO does not list the flag, so the metadata lacks it).
pub const MAY_REPLICATE: &[&str] = &["publish", "spublish", "pfcount"];

/// CLIENT PAUSE timeout [WRITE|ALL].
pub fn client_pause(shard: &mut ShardData, argv: &[Bytes]) -> Action {
    let Some(timeout) = crate::util::num::parse_i64(&argv[2]) else {
        return err::frame("ERR timeout is not an integer or out of range").into();
    };
    if timeout < 0 {
        return err::frame("ERR timeout is negative").into();
    }
    let mode = match argv.get(3) {
        None => PauseMode::All,
        Some(m) if m.eq_ignore_ascii_case(b"write") => PauseMode::Write,
        Some(m) if m.eq_ignore_ascii_case(b"all") => PauseMode::All,
        Some(_) => return err::frame("ERR CLIENT PAUSE mode must be WRITE or ALL").into(),
    };
    let now = shard.now_ms;
    let end = now.saturating_add(timeout as u64);
    shard.shared.pause.pause(mode, end, now);
    // This shard's next commands already keep expired keys; the others
    // from their next pass.
    shard.store.stats.expiry_paused = true;
    Frame::OK.into()
}

/// CLIENT UNPAUSE: the held-back commands of every shard run, each shard
/// woken by a message so that none waits for its next tick.
pub fn client_unpause(shard: &mut ShardData) -> Action {
    shard.shared.pause.unpause();
    shard.store.stats.expiry_paused = false;
    let ops = (0..shard.shared.nshards)
        .filter(|&s| s != shard.id)
        .map(|s| (s, Op::keyless(|_| Out::Count(0))))
        .collect::<Vec<_>>();
    if ops.is_empty() {
        return Frame::OK.into();
    }
    Action::Job(Job::new(ops, |_| Action::Reply(Frame::OK)))
}

/// Whether `argv` waits under the pause `mode`. Requires: the command
/// passed its arity check (`arity_ok`), or it is answered at once.
pub fn must_wait(shard: &ShardData, session: &Session, mode: PauseMode, argv: &[Bytes]) -> bool {
    let Some(spec) = lookup(&argv[0]) else {
        return false;
    };
    if !spec.arity_ok(argv.len()) {
        return false;
    }
    if mode == PauseMode::All {
        return true;
    }
    let writes = |argv: &[Bytes]| {
        lookup(&argv[0]).is_some_and(|spec| {
            if super::scripting::is_script(spec) {
                return super::scripting::may_write(shard, spec.name, argv);
            }
            let flags = match argv.get(1).filter(|_| spec.container) {
                Some(sub) => spec.meta.subcommand(sub).map_or(spec.flags, |m| m.flags),
                None => spec.flags,
            };
            flags.intersects(CommandFlags::WRITE | CommandFlags::MAY_REPLICATE)
                || MAY_REPLICATE.contains(&spec.name)
        })
    };
    match spec.name {
        "exec" => session
            .multi
            .as_ref()
            .is_some_and(|tx| tx.queued.iter().any(|q| writes(q))),
        _ => writes(argv),
    }
}
