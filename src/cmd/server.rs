//! Server commands: INFO, CONFIG, TIME, DEBUG, SHUTDOWN (COMMAND has its
//! own module, `cmd::command`; the saves, `cmd::save`).

use bytes::Bytes;

use super::args::err;
use super::info::{render, sections_for};
use super::keys::{debug_object, help_reply};
use super::{multi, Session, ShardData};
use crate::config::DebugCommand;
use crate::exec::stats::ShardReport;
use crate::exec::{Action, Job, Op, Out};
use crate::resp::Frame;

fn lower(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_ascii_lowercase()
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
                let mut report = ShardReport::of(ctx.shard, with_commands);
                let generation = ctx.shard.shared.scripts.generation();
                report.lua_mem = super::scripting::vm::used_memory(generation) as u64;
                Out::Report(Box::new(report))
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
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Prints this help.",
];

pub fn config(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let sub = lower(&argv[1]);
    let shared = &shard.shared;
    match sub.as_str() {
        "get" if argv.len() >= 3 => {
            let patterns: Vec<&[u8]> = argv[2..].iter().map(|p| p.as_ref()).collect();
            Frame::Map(
                shared
                    .config
                    .get_matching(&patterns)
                    .into_iter()
                    .map(|(k, v)| (Frame::bulk(k), Frame::bulk(v)))
                    .collect(),
            )
            .into()
        }
        "set" if argv.len() >= 4 && !argv.len().is_multiple_of(2) => err::syntax().into(),
        "set" if argv.len() >= 4 => {
            let pairs: Vec<(&[u8], &[u8])> = argv[2..]
                .chunks_exact(2)
                .map(|pair| (pair[0].as_ref(), pair[1].as_ref()))
                .collect();
            let local = session.addr.starts_with("127.") || session.addr.starts_with("[::1]");
            // Redis's DENY_LOADING_CONFIG parameters: the directory and
            // the AOF switch cannot move under a running load (a protected
            // `dir` the client may not set gets that refusal instead).
            let may_protected = match shared.config.protected_configs() {
                crate::config::DebugCommand::Yes => true,
                crate::config::DebugCommand::Local => local,
                crate::config::DebugCommand::No => false,
            };
            if shared.aof.is_loading()
                && pairs.iter().any(|(k, _)| {
                    (k.eq_ignore_ascii_case(b"dir") && may_protected)
                        || k.eq_ignore_ascii_case(b"appendonly")
                })
            {
                return err::frame(super::aof::LOADING).into();
            }
            let appendonly_was = shared.config.appendonly();
            match shared.config.set_many_as(&pairs, local) {
                Ok(()) => {
                    // The default user takes a new `requirepass` at once.
                    if pairs
                        .iter()
                        .any(|(k, _)| k.eq_ignore_ascii_case(b"requirepass"))
                    {
                        super::acl::apply_requirepass(&shared.acl, &shared.config.requirepass());
                    }
                    // Turning the AOF's auto gc back on deletes the history
                    // at once, as Redis's apply function does.
                    if pairs
                        .iter()
                        .any(|(k, _)| k.eq_ignore_ascii_case(b"aof-disable-auto-gc"))
                    {
                        super::aof::gc_history(shared);
                    }
                    if shared.config.appendonly() != appendonly_was {
                        return super::aof::appendonly_changed(shard, Frame::OK);
                    }
                    // A lower client limit takes effect before the reply,
                    // as Redis evicts clients in its apply function.
                    let limits = [b"maxmemory-clients".as_slice(), b"maxmemory"];
                    if crate::exec::client_evict::limit() > 0
                        && pairs
                            .iter()
                            .any(|(k, _)| limits.iter().any(|l| k.eq_ignore_ascii_case(l)))
                    {
                        return evict_clients_job(shard);
                    }
                    Frame::OK.into()
                }
                Err(text) => Frame::Error(text).into(),
            }
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
            crate::store::lazyfree::reset_stats();
            crate::exec::evict::reset_stats();
            crate::exec::client_evict::reset_stats();
            Action::Job(Job::new(ops, |_| Action::Reply(Frame::OK)))
        }
        "rewrite" if argv.len() == 2 => {
            match shared.config.rewrite(super::acl::user_lines(shared)) {
                Ok(()) => Frame::OK.into(),
                Err(text) => Frame::Error(text).into(),
            }
        }
        "help" if argv.len() == 2 => help_reply(CONFIG_HELP).into(),
        "get" | "set" | "resetstat" | "rewrite" | "help" => {
            err::wrong_arity(&format!("config|{sub}")).into()
        }
        _ => err::unknown_subcommand(&argv[1], "config").into(),
    }
}

/// Every shard evicts its part of the clients over `maxmemory-clients`
/// (`exec::client_evict`), then CONFIG SET answers OK.
fn evict_clients_job(shard: &ShardData) -> Action {
    let ops = (0..shard.shared.nshards)
        .map(|s| (s, Op::Clients(crate::exec::ClientsOp::EvictClients)))
        .collect();
    Action::Job(Job::new(ops, |_| Action::Reply(Frame::OK)))
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

pub fn shutdown(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let (mut save, mut nosave, mut abort, mut force, mut now) = (false, false, false, false, false);
    for a in &argv[1..] {
        match a.to_ascii_lowercase().as_slice() {
            b"save" => save = true,
            b"nosave" => nosave = true,
            b"abort" => abort = true,
            b"now" => now = true,
            b"force" => force = true,
            _ => return err::syntax().into(),
        }
    }
    // As Redis: ABORT goes alone, and SAVE with NOSAVE contradicts itself.
    if (abort && (save || nosave || now || force)) || (save && nosave) {
        return err::syntax().into();
    }
    if abort {
        // ember has no replica to wait for, so a shutdown is never left
        // in progress to abort.
        return err::frame("ERR No shutdown in progress.").into();
    }
    log::warn!("User requested shutdown...");
    super::save::shutdown_saving(shard, save, nosave, force)
}

/// Redis's refusal of DEBUG where `enable-debug-command` does not allow it.
pub const DEBUG_NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

/// Whether `enable-debug-command` lets this client run DEBUG.
pub fn debug_allowed(shard: &ShardData, session: &Session) -> bool {
    match shard.shared.config.debug_command() {
        DebugCommand::Yes => true,
        DebugCommand::Local => {
            session.addr.starts_with("127.") || session.addr.starts_with("[::1]")
        }
        DebugCommand::No => false,
    }
}

const DEBUG_HELP: &[&str] = &[
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cache master will be used if <size> is specified.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "OBJECT <key>",
    "    Show low level info about the key and associated value.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
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
    "    Prints this help.",
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
        // Redis's: CONFIG REWRITE writing every parameter, defaults too.
        "config-rewrite-force-all" if argv.len() == 2 => {
            let users = super::acl::user_lines(&shard.shared);
            match shard.shared.config.rewrite_forced(true, users) {
                Ok(()) => Frame::OK.into(),
                Err(text) => Frame::Error(text).into(),
            }
        }
        "set-active-expire" if argv.len() == 3 => {
            let on = argv[2].as_ref() != b"0";
            shard
                .shared
                .active_expire
                .store(on, std::sync::atomic::Ordering::Relaxed);
            Frame::OK.into()
        }
        "replicate" if argv.len() >= 3 => {
            super::replication::debug_replicate(shard, &argv[2..]).into()
        }
        "object" if argv.len() == 3 => multi::on_owner(shard, session.db, &argv[2], debug_object),
        "ember-check" if argv.len() == 2 => super::check::ember_check(shard),
        "digest" if argv.len() == 2 => super::digest::debug_digest(shard, session),
        "populate" if (3..=5).contains(&argv.len()) => {
            super::digest::debug_populate(shard, session, argv)
        }
        "loadaof" if argv.len() == 2 => super::aof::debug_loadaof(shard),
        "aof-flush-sleep" if argv.len() == 3 => {
            match std::str::from_utf8(&argv[2])
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
            {
                Some(us) => {
                    crate::persist::aof::writer::FLUSH_SLEEP_US
                        .store(us, std::sync::atomic::Ordering::Relaxed);
                    Frame::OK.into()
                }
                None => err::frame("ERR value is not an integer or out of range").into(),
            }
        }
        "reload" => {
            let (mut save, mut flush) = (true, true);
            for opt in &argv[2..] {
                match lower(opt).as_str() {
                    "nosave" => save = false,
                    "noflush" => flush = false,
                    "merge" => {}
                    _ => {
                        return err::frame(
                            "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.",
                        )
                        .into()
                    }
                }
            }
            super::save::debug_reload(shard, save, flush)
        }
        "ember-record" if argv.len() == 3 => match lower(&argv[2]).as_str() {
            "start" => {
                shard.shared.feed.start();
                Frame::OK.into()
            }
            "stop" => Frame::Bulk(shard.shared.feed.stop().into()).into(),
            _ => err::frame("ERR Syntax error, try DEBUG HELP").into(),
        },
        // A new replication history, the old one forgotten (Redis's
        // changeReplicationId and clearReplicationId2).
        "change-repl-id" if argv.len() == 2 => {
            log::warn!("Changing replication IDs after receiving DEBUG change-repl-id");
            shard.shared.repl.set_ids(crate::exec::repl::Ids {
                replid: crate::exec::shared::new_replid(),
                ..Default::default()
            });
            Frame::OK.into()
        }
        // DEBUG LOG: a line in the log, as Redis's tests mark it (while
        // loading too: DEBUG runs during a load).
        "log" if argv.len() == 3 => {
            log::warn!("DEBUG LOG: {}", String::from_utf8_lossy(&argv[2]));
            Frame::OK.into()
        }
        // DEBUG ERROR: the text as an error reply, as Redis's tests use it.
        "error" if argv.len() == 3 => {
            Frame::Error(String::from_utf8_lossy(&argv[2]).into_owned()).into()
        }
        // Redis's switches for its own structures and timers; ember's
        // lists and cron do not have them, so they are taken and change
        // nothing (the value is still checked as Redis checks it).
        "quicklist-packed-threshold" if argv.len() == 3 => {
            match crate::config::kind::parse_memory_in(&lower(&argv[2]), 1, (1 << 32) - 1) {
                Ok(_) => Frame::OK.into(),
                Err(_) => err::frame(
                    "ERR argument must be a memory value bigger than 1 and smaller than 4gb",
                )
                .into(),
            }
        }
        "set-skip-checksum-validation" | "pause-cron" if argv.len() == 3 => Frame::OK.into(),
        "replybuffer" if argv.len() == 4 => Frame::OK.into(),
        _ => err::frame(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(&argv[1])
        ))
        .into(),
    }
}

/// READONLY and READWRITE: cluster commands, refused as by a Redis
/// without cluster support.
pub fn cluster_disabled(_: &mut ShardData, _: &mut Session, _: &[Bytes]) -> Action {
    err::frame("ERR This instance has cluster support disabled").into()
}

/// CLUSTER: a subcommand Redis has answers that this is no cluster node,
/// as a standalone Redis does; any other gets the unknown-subcommand error.
pub fn cluster(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let known = super::lookup(b"cluster")
        .and_then(|row| super::table::sub_index(row, &argv[1]))
        .is_some();
    if !known {
        return err::unknown_subcommand(&argv[1], "cluster").into();
    }
    cluster_disabled(shard, session, argv)
}
