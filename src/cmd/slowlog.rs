//! SLOWLOG GET / LEN / RESET / HELP over the server's slow log
//! (`crate::slowlog`), and [`log_if_slow`], which the shard loop calls
//! where it has timed a command.

use bytes::Bytes;

use super::args::err;
use super::keys::help_reply;
use super::{CommandFlags, CommandSpec, Session, ShardData};
use crate::exec::Action;
use crate::resp::Frame;

const SLOWLOG_HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
];

/// Entries SLOWLOG GET answers without a count, as Redis.
const DEFAULT_COUNT: usize = 10;

/// Logs a command that took `duration_us` when that reaches
/// `slowlog-log-slower-than` and the command is not one Redis leaves out
/// (`skip_slowlog`: EXEC, whose commands are logged one by one). `argv`
/// is the command as the client sent it (Redis logs the original of a
/// command it propagates rewritten). Costs a relaxed load and a comparison
/// for a command that was not slow.
pub fn log_if_slow(
    shard: &ShardData,
    session: &Session,
    spec: &CommandSpec,
    argv: &[Bytes],
    duration_us: u64,
) {
    let config = &shard.shared.config;
    let Some(threshold) = config.slowlog_threshold_us() else {
        return;
    };
    if duration_us < threshold || spec.flags.contains(CommandFlags::SKIP_SLOWLOG) || argv.is_empty()
    {
        return;
    }
    shard.shared.slowlog.push(
        argv,
        duration_us,
        shard.now_ms / 1000,
        &session.addr,
        session.name.as_deref().unwrap_or(""),
        config.slowlog_max_len(),
    );
}

pub fn slowlog(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let sub = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    let log = &shard.shared.slowlog;
    match sub.as_str() {
        "get" if argv.len() <= 3 => {
            let count = match argv.get(2) {
                None => Some(DEFAULT_COUNT),
                Some(arg) => match parse_count(arg) {
                    Some(c) => c,
                    None => {
                        return err::frame("ERR count should be greater than or equal to -1").into()
                    }
                },
            };
            Frame::Array(log.newest(count).into_iter().map(entry_frame).collect()).into()
        }
        "len" if argv.len() == 2 => Frame::Integer(log.len() as i64).into(),
        "reset" if argv.len() == 2 => {
            log.reset();
            Frame::OK.into()
        }
        "help" if argv.len() == 2 => help_reply(SLOWLOG_HELP).into(),
        "len" | "reset" | "help" => err::wrong_arity(&format!("slowlog|{sub}")).into(),
        "get" => err::frame(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try SLOWLOG HELP.",
            String::from_utf8_lossy(&argv[1])
        ))
        .into(),
        _ => err::unknown_subcommand(&argv[1], "slowlog").into(),
    }
}

/// SLOWLOG GET's count: `-1` (every entry, `None`) up to LONG_MAX, as a
/// strict integer; anything else is refused.
fn parse_count(arg: &[u8]) -> Option<Option<usize>> {
    let n: i64 = std::str::from_utf8(arg).ok()?.parse().ok()?;
    match n {
        -1 => Some(None),
        n if n >= 0 => Some(Some(usize::try_from(n).unwrap_or(usize::MAX))),
        _ => None,
    }
}

fn entry_frame(e: crate::slowlog::Entry) -> Frame {
    Frame::Array(vec![
        Frame::Integer(e.id as i64),
        Frame::Integer(e.time_s as i64),
        Frame::Integer(e.duration_us as i64),
        Frame::Array(e.argv.into_iter().map(Frame::Bulk).collect()),
        Frame::bulk(e.addr),
        Frame::bulk(e.name),
    ])
}
