//! Server commands: COMMAND, INFO, CONFIG, TIME, DEBUG, LASTSAVE, SHUTDOWN.

use bytes::Bytes;

use super::args::err;
use super::keys::{debug_object, help_reply};
use super::table::{CommandSpec, Route, COMMANDS};
use super::{lookup, multi, Session, ShardData};
use crate::config::{find_param, get_params, set_param};
use crate::info::{render, sections_for, ShardReport};
use crate::resp::Frame;
use crate::shard::{Action, Job, Op, Out};

fn lower(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_ascii_lowercase()
}

/// ACL categories derived from the command's group and flags.
fn categories(spec: &CommandSpec) -> Vec<&'static str> {
    let mut cats = Vec::new();
    if spec.has_flag("write") {
        cats.push("@write");
    }
    if spec.has_flag("readonly") {
        cats.push("@read");
    }
    cats.push(match spec.group {
        "string" => "@string",
        "sorted-set" => "@sortedset",
        "list" => "@list",
        "hash" => "@hash",
        "set" => "@set",
        "transactions" => "@transaction",
        "generic" => "@keyspace",
        "connection" => "@connection",
        _ => "@admin",
    });
    cats.push(if spec.has_flag("fast") {
        "@fast"
    } else {
        "@slow"
    });
    if spec.has_flag("blocking") {
        cats.push("@blocking");
    }
    cats
}

/// COMMAND LIST's names, all or those passing `FILTERBY MODULE name |
/// ACLCAT category | PATTERN glob` (ember has no modules; an unknown
/// category matches nothing, as in Redis).
fn command_list(options: &[Bytes]) -> Frame {
    let keep: Box<dyn Fn(&CommandSpec) -> bool> = match options {
        [] => Box::new(|_| true),
        [filterby, kind, arg] if filterby.eq_ignore_ascii_case(b"FILTERBY") => {
            let arg = arg.clone();
            match lower(kind).as_str() {
                "module" => Box::new(|_| false),
                "aclcat" => Box::new(move |spec| {
                    categories(spec)
                        .iter()
                        .any(|cat| cat.as_bytes()[1..].eq_ignore_ascii_case(&arg))
                }),
                "pattern" => Box::new(move |spec| {
                    crate::util::glob::glob_match(&arg, spec.name.as_bytes(), true)
                }),
                _ => return err::syntax(),
            }
        }
        _ => return err::syntax(),
    };
    Frame::Array(
        COMMANDS
            .iter()
            .filter(|spec| keep(spec))
            .map(|spec| Frame::bulk(spec.name))
            .collect(),
    )
}

/// COMMAND INFO's entry: name, arity, flags, first, last, step, categories,
/// tips, key specs, subcommands.
fn command_info(spec: &CommandSpec) -> Frame {
    Frame::Array(vec![
        Frame::bulk(spec.name),
        Frame::Integer(spec.arity as i64),
        Frame::Set(spec.flags.iter().map(|f| Frame::Simple(f)).collect()),
        Frame::Integer(spec.first_key as i64),
        Frame::Integer(spec.last_key as i64),
        Frame::Integer(spec.step as i64),
        Frame::Set(categories(spec).into_iter().map(Frame::Simple).collect()),
        Frame::Set(Vec::new()),
        Frame::Array(Vec::new()),
        Frame::Array(Vec::new()),
    ])
}

fn command_docs(spec: &CommandSpec) -> Frame {
    Frame::Map(vec![
        (Frame::bulk("summary"), Frame::bulk(spec.summary)),
        (Frame::bulk("since"), Frame::bulk(spec.since)),
        (Frame::bulk("group"), Frame::bulk(spec.group)),
    ])
}

const COMMAND_HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all commands.",
    "COUNT",
    "    Return the total number of commands in this server.",
    "LIST",
    "    Return a list of all commands in this server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple commands.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple commands.",
    "GETKEYS <full-command>",
    "    Return the keys from a full command.",
    "HELP",
    "    Print this help.",
];

pub fn command(_: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    if argv.len() == 1 {
        return Frame::Array(COMMANDS.iter().map(command_info).collect()).into();
    }
    let sub = lower(&argv[1]);
    let names = &argv[2..];
    let selected = || -> Vec<Option<&'static CommandSpec>> {
        if names.is_empty() {
            COMMANDS.iter().map(Some).collect()
        } else {
            names.iter().map(|n| lookup(n)).collect()
        }
    };
    match sub.as_str() {
        "count" if argv.len() == 2 => Frame::Integer(COMMANDS.len() as i64).into(),
        "list" => command_list(&argv[2..]).into(),
        "info" => Frame::Array(
            selected()
                .into_iter()
                .map(|s| s.map_or(Frame::Null, command_info))
                .collect(),
        )
        .into(),
        "docs" => Frame::Map(
            selected()
                .into_iter()
                .flatten()
                .map(|s| (Frame::bulk(s.name), command_docs(s)))
                .collect(),
        )
        .into(),
        "getkeys" if argv.len() >= 4 => {
            let cmd = &argv[2..];
            match lookup(&cmd[0]) {
                None => err::frame("ERR Invalid command specified").into(),
                Some(spec) if !spec.arity_ok(cmd.len()) => {
                    err::frame("ERR Invalid number of arguments specified for command").into()
                }
                Some(spec) => {
                    let keys: Vec<Frame> = spec
                        .key_positions(cmd)
                        .map(|p| Frame::Bulk(cmd[p].clone()))
                        .collect();
                    if keys.is_empty()
                        || matches!(spec.route, Route::Conn(_) | Route::EveryShard(..))
                    {
                        err::frame("ERR The command has no key arguments").into()
                    } else {
                        Frame::Array(keys).into()
                    }
                }
            }
        }
        "help" if argv.len() == 2 => help_reply(COMMAND_HELP).into(),
        "count" | "help" | "getkeys" => err::wrong_arity(&format!("command|{sub}")).into(),
        _ => err::unknown_subcommand(&argv[1], "command").into(),
    }
}

/// INFO: every shard reports, this thread renders.
pub fn info(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let args: Vec<String> = argv[1..].iter().map(|a| lower(a)).collect();
    let sections = sections_for(&args);
    let shared = std::sync::Arc::clone(&shard.shared);
    let with_commands = sections
        .iter()
        .any(|s| *s == "commandstats" || *s == "latencystats");
    let ops = (0..shared.nshards)
        .map(|s| {
            let op = move |ctx: &mut super::Ctx| {
                Out::Report(Box::new(ShardReport::of(ctx.shard, with_commands)))
            };
            (s, Op::keyless(op))
        })
        .collect();
    Action::Job(Job::new(ops, move |outs| {
        let reports: Vec<ShardReport> = outs
            .into_iter()
            .filter_map(|o| {
                if let Out::Report(r) = o {
                    Some(*r)
                } else {
                    None
                }
            })
            .collect();
        Action::Reply(Frame::Verbatim(Bytes::from(render(
            &shared, &reports, &sections,
        ))))
    }))
}

const CONFIG_HELP: &[&str] = &[
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "HELP",
    "    Print this help.",
];

pub fn config(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let sub = lower(&argv[1]);
    let shared = &shard.shared;
    match sub.as_str() {
        "get" if argv.len() >= 3 => {
            let config = shared.config.read().expect("config lock").clone();
            let mut pairs: Vec<(String, String)> = Vec::new();
            for pattern in &argv[2..] {
                for pair in get_params(&config, pattern) {
                    if !pairs.iter().any(|(n, _)| *n == pair.0) {
                        pairs.push(pair);
                    }
                }
            }
            Frame::Map(
                pairs
                    .into_iter()
                    .map(|(k, v)| (Frame::bulk(k), Frame::bulk(v)))
                    .collect(),
            )
            .into()
        }
        "set" if argv.len() >= 4 && !argv.len().is_multiple_of(2) => err::syntax().into(),
        "set" if argv.len() >= 4 => {
            let mut next = shared.config.read().expect("config lock").clone();
            let mut seen: Vec<&'static str> = Vec::new();
            for pair in argv[2..].chunks_exact(2) {
                let name = String::from_utf8_lossy(&pair[0]).into_owned();
                let Some(param) = find_param(&name) else {
                    return Frame::Error(format!(
                        "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
                    ))
                    .into();
                };
                if seen.contains(&param.name) {
                    return Frame::Error(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{}') - duplicate parameter",
                        name.to_ascii_lowercase()
                    ))
                    .into();
                }
                seen.push(param.name);
                let value = String::from_utf8_lossy(&pair[1]);
                if let Err(reason) = set_param(&mut next, &name, &value, false) {
                    return Frame::Error(format!(
                        "ERR CONFIG SET failed (possibly related to argument '{}') - {reason}",
                        name.to_ascii_lowercase()
                    ))
                    .into();
                }
            }
            *shared.config.write().expect("config lock") = next;
            shared.apply_config();
            Frame::OK.into()
        }
        "resetstat" if argv.len() == 2 => {
            let ops = (0..shared.nshards)
                .map(|s| {
                    let op = |ctx: &mut super::Ctx| {
                        ctx.shard.store.stats.reset();
                        ctx.shard.counters = Default::default();
                        Out::Count(0)
                    };
                    (s, Op::keyless(op))
                })
                .collect();
            crate::util::lazyfree::reset_stats();
            Action::Job(Job::new(ops, |_| Action::Reply(Frame::OK)))
        }
        "rewrite" if argv.len() == 2 => {
            err::frame("ERR CONFIG REWRITE is not supported by ember").into()
        }
        "help" if argv.len() == 2 => help_reply(CONFIG_HELP).into(),
        "get" | "set" | "resetstat" | "rewrite" | "help" => {
            err::wrong_arity(&format!("config|{sub}")).into()
        }
        _ => err::unknown_subcommand(&argv[1], "config").into(),
    }
}

pub fn time(shard: &mut ShardData, _: &mut Session, _: &[Bytes]) -> Action {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let _ = shard;
    Frame::Array(vec![
        Frame::bulk(now.as_secs().to_string()),
        Frame::bulk(now.subsec_micros().to_string()),
    ])
    .into()
}

pub fn lastsave(shard: &mut ShardData, _: &mut Session, _: &[Bytes]) -> Action {
    let started = shard.now_ms / 1000 - shard.shared.started.elapsed().as_secs();
    Frame::Integer(started as i64).into()
}

pub fn shutdown(_: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let (mut save, mut nosave, mut abort, mut other) = (false, false, false, false);
    for a in &argv[1..] {
        match a.to_ascii_lowercase().as_slice() {
            b"save" => save = true,
            b"nosave" => nosave = true,
            b"abort" => abort = true,
            b"now" | b"force" => other = true,
            _ => return err::syntax().into(),
        }
    }
    // As Redis: ABORT goes alone, and SAVE with NOSAVE contradicts itself.
    if (abort && (save || nosave || other)) || (save && nosave) {
        return err::syntax().into();
    }
    if abort {
        // ember exits at once (no save, no replica to wait for), so there
        // is never a shutdown in progress to abort.
        return err::frame("ERR No shutdown in progress.").into();
    }
    log::warn!("User requested shutdown...");
    log::warn!("ember is now ready to exit, bye bye...");
    std::process::exit(0);
}

/// Redis's refusal of DEBUG where `enable-debug-command` does not allow it.
pub const DEBUG_NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

/// Whether `enable-debug-command` lets this client run DEBUG.
pub fn debug_allowed(shard: &ShardData, session: &Session) -> bool {
    let mode = shard
        .shared
        .config
        .read()
        .map(|c| c.enable_debug_command.clone())
        .unwrap_or_default();
    match mode.as_str() {
        "yes" => true,
        "local" => session.addr.starts_with("127.") || session.addr.starts_with("[::1]"),
        _ => false,
    }
}

const DEBUG_HELP: &[&str] = &[
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "OBJECT <key>",
    "    Show low level info about the key and associated value.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "EMBER-CHECK",
    "    ember's own: check the keyspace invariants of every shard (every key in",
    "    its index, every deadline in its window); OK or the first one broken.",
    "EMBER-RECORD START|STOP",
    "    ember's own: START records the propagation feed (what a replica or an",
    "    append-only file would be sent) from now on; STOP ends the recording and",
    "    answers it as one bulk string of RESP commands.",
    "HELP",
    "    Print this help.",
];

pub fn debug(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    if !debug_allowed(shard, session) {
        return err::frame(DEBUG_NOT_ALLOWED).into();
    }
    let sub = lower(&argv[1]);
    match sub.as_str() {
        "help" => help_reply(DEBUG_HELP).into(),
        "sleep" if argv.len() == 3 => {
            let secs = crate::util::num::parse_f64(&argv[2])
                .unwrap_or(0.0)
                .max(0.0);
            // Blocks this shard's thread, as Redis blocks its only thread.
            std::thread::sleep(std::time::Duration::from_secs_f64(secs.min(3600.0)));
            Frame::OK.into()
        }
        "set-active-expire" if argv.len() == 3 => {
            let on = argv[2].as_ref() != b"0";
            shard
                .shared
                .expire
                .enabled
                .store(on, std::sync::atomic::Ordering::Relaxed);
            Frame::OK.into()
        }
        "object" if argv.len() == 3 => multi::on_owner(shard, session.db, &argv[2], debug_object),
        "ember-check" if argv.len() == 2 => super::check::ember_check(shard),
        "ember-record" if argv.len() == 3 => match lower(&argv[2]).as_str() {
            "start" => {
                shard.shared.feed.start();
                Frame::OK.into()
            }
            "stop" => Frame::Bulk(shard.shared.feed.stop().into()).into(),
            _ => err::frame("ERR Syntax error, try DEBUG HELP").into(),
        },
        _ => err::frame("ERR Syntax error, try DEBUG HELP").into(),
    }
}
