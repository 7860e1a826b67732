//! Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, with the
//! Lua API and sandbox of Redis 7.0.
//!
//! Where a script runs: EVAL names its keys (`numkeys`), so the table
//! routes it like any keyed command: to the shard that owns them, inline
//! when that is the connection's shard, otherwise as one op there. The
//! script then runs on that shard's thread, in its VM (`vm`), from start to
//! end, so no other command of that shard runs between its commands: it is
//! atomic as a Redis script is. A script whose declared keys span shards
//! takes those shards whole and reaches their keys from its thread
//! (`across`). A command of a script on a key of a shard it does not hold
//! is refused (as Redis Cluster refuses a script a key of another node).
//!
//! What a script wrote reaches the propagation feed as the commands it ran
//! (`api`), one unit of records, so MULTI/EXEC in the feed.

mod api;
mod bit;
mod cjson;
mod cmsgpack;
mod convert;
mod current;
pub mod functions;
mod limits;
pub mod shebang;
mod structlib;
pub mod vm;
pub mod widen;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;
use mlua::{Function, Value};

use super::args::{err, int_arg, Reply};
use super::{Ctx, Session, ShardData};
use crate::exec::scripts::Known;
use crate::exec::scripts::{parse_sha, sha1_hex, Sha};
use crate::exec::{Action, Job, LockPlan, Need, Op, Out};
use crate::resp::Frame;

pub use limits::{allowed_when_busy, busy_text, kill, BUSY, BUSY_FUNCTION};

const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

pub fn eval(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    eval_generic(ctx, argv, false, false)
}

pub fn eval_ro(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    eval_generic(ctx, argv, false, true)
}

pub fn evalsha(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    eval_generic(ctx, argv, true, false)
}

pub fn evalsha_ro(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    eval_generic(ctx, argv, true, true)
}

/// EVAL's key positions: the `numkeys` arguments after the count.
pub fn eval_keys(argv: &[Bytes]) -> Vec<usize> {
    super::table::numkeys_positions(argv, &[], 2)
}

/// Whether `spec` runs a script (EVAL, EVALSHA, FCALL and their `_RO`
/// forms).
/// Whether a script command may write (CLIENT PAUSE WRITE holds it back):
/// not the `_ro` forms, nor a script or function declaring `no-writes`. A
/// script that will fail (unknown sha or function, bad shebang) does not
/// wait for its error.
pub fn may_write(shard: &ShardData, name: &str, argv: &[Bytes]) -> bool {
    let Some(arg) = argv.get(1) else {
        return false;
    };
    let shared = &shard.shared;
    match name {
        "eval" => shebang::parse(arg).is_ok_and(|(f, _)| !f.no_writes),
        "evalsha" => parse_sha(arg)
            .and_then(|sha| shared.scripts.get(&sha))
            .is_some_and(|body| shebang::parse(&body).is_ok_and(|(f, _)| !f.no_writes)),
        "fcall" => shared
            .libraries
            .function(&String::from_utf8_lossy(arg))
            .is_some_and(|info| !info.no_writes()),
        _ => false,
    }
}

pub fn is_script(spec: &super::CommandSpec) -> bool {
    matches!(
        spec.name,
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
    )
}

/// Whether a command named `name` may run a script here: EVAL, EVALSHA,
/// FCALL and their `_RO` forms (EXEC runs its scripts as steps). Tells the
/// loop to lend its connections to the script's busy passes; a test of
/// the first byte keeps it cheap for every other command.
pub fn may_run_script(name: &[u8]) -> bool {
    matches!(name.first(), Some(b'e' | b'E' | b'f' | b'F'))
        && [
            "eval",
            "evalsha",
            "eval_ro",
            "evalsha_ro",
            "fcall",
            "fcall_ro",
        ]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n.as_bytes()))
}

/// Whether `argv` runs a script (a command of a transaction, say).
pub fn runs_script(argv: &[Bytes]) -> bool {
    argv.first()
        .and_then(|name| super::lookup(name))
        .is_some_and(is_script)
}

/// Whether a script declares no key (`numkeys` 0): it may touch any key,
/// so with several shards it runs as [`across`] over every shard.
pub fn declares_no_keys(argv: &[Bytes]) -> bool {
    argv.get(2).is_some_and(|n| n.as_ref() == b"0")
}

/// A script whose declared keys are on several shards, or that declares
/// none (then: every shard, the script on the connection's): one transaction
/// takes each of those shards whole (the key-lock protocol, in ascending
/// shard order, so it cannot deadlock), then the script runs on the shard
/// of its first key, and each command on a key of another of them is sent
/// there and waited for (`api::remote`). Holding the shards whole is what
/// makes the wait safe: no other script can hold any of them, so no thread
/// waits on this one while it waits; and no other work runs on those
/// shards' keys until the script ends. The cost: the shards serve no other
/// key while it runs, and each such command is a round trip between threads.
pub fn across(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let known = shard.shared.scripts.reach.known(argv);
    let reach = if declares_no_keys(argv) || known == Known::Wide {
        Reach::Every
    } else if shard.current_tx.is_some() {
        // A step of EXEC cannot start over: a run of one that reaches
        // further gets Redis Cluster's refusal.
        Reach::DeclaredOnly
    } else if known == Known::Unknown {
        Reach::Probe
    } else {
        Reach::Declared
    };
    let caller = super::acl::script_caller(shard, session);
    across_shards(
        shard.shared.nshards,
        shard.id,
        session.db,
        caller,
        argv,
        reach,
    )
}

/// The shards a script run holding shards whole takes (`widen`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Every shard: a script that declares no key, or one known to reach
    /// past its declared keys' shards.
    Every,
    /// Every shard, for a first run that learns whether the script stays
    /// on its declared keys' shards.
    Probe,
    /// Those of its declared keys; a run that reaches further starts again
    /// over every shard.
    Declared,
    /// Those of its declared keys, and no second run (a step of EXEC).
    DeclaredOnly,
}

/// Whether the keyed dispatch must send script `argv` to [`across`] even
/// though its declared keys share a shard: its first run (outside EXEC),
/// or one known to reach further.
pub fn must_go_across(shard: &ShardData, argv: &[Bytes]) -> bool {
    match shard.shared.scripts.reach.known(argv) {
        Known::Narrow => false,
        Known::Wide => true,
        Known::Unknown => shard.current_tx.is_none(),
    }
}

/// The reply of a script command's run on its declared keys' shard, or,
/// when that run was abandoned for reaching further (`widen`), the command
/// again over every shard (dispatched from shard `origin`, a caller free to
/// run anything: a restricted one always goes [`across`]).
pub fn reply_or_again(
    reply: Frame,
    nshards: usize,
    origin: usize,
    db: usize,
    argv: &[Bytes],
) -> Action {
    if widen::must_restart(&reply) {
        return across_shards(nshards, origin, db, None, argv, Reach::Every);
    }
    Action::Reply(reply)
}

/// [`across`] from what it needs of the dispatching shard (`origin`, where
/// a script that declares no key runs), over the shards `reach` says.
pub fn across_shards(
    nshards: usize,
    origin: usize,
    db: usize,
    caller: Option<Arc<super::acl::ScriptCaller>>,
    argv: &[Bytes],
    reach: Reach,
) -> Action {
    let Some(spec) = super::lookup(&argv[0]) else {
        return Action::Reply(Frame::Null);
    };
    let by_sha = spec.name.starts_with("evalsha");
    let fcall = spec.name.starts_with("fcall");
    let read_only = spec.name.ends_with("_ro");
    let keys = eval_keys(argv);
    let mut declared: Vec<usize> = keys
        .iter()
        .map(|&p| super::shard_of(&argv[p], nshards))
        .collect();
    let target = declared.first().copied().unwrap_or(origin);
    declared.sort_unstable();
    declared.dedup();
    let every = matches!(reach, Reach::Every | Reach::Probe) || declared.is_empty();
    let held: Vec<usize> = if every {
        (0..nshards).collect()
    } else {
        declared.clone()
    };
    let probe = (reach == Reach::Probe).then_some(declared);
    let plan: LockPlan = held.iter().map(|&s| (s, Need::Whole)).collect();
    let argv = argv.to_vec();
    let restart = reach == Reach::Declared;
    let again = restart.then(|| (argv.clone(), caller.clone()));
    let op = Op::Script(
        db,
        Need::Nothing,
        Box::new(move |ctx: &mut Ctx| {
            let tx = ctx.shard.op_tx;
            let across = Some(api::Across { tx, held, probe });
            let declared: Vec<Bytes> = keys.iter().map(|&p| argv[p].clone()).collect();
            let reply = super::tracking::tracked_script(ctx, &declared, tx, |ctx| {
                let run = || {
                    if fcall {
                        functions::fcall_in(ctx, &argv, read_only, across, caller)
                    } else {
                        eval_in(ctx, &argv, by_sha, read_only, across, caller)
                    }
                };
                if restart {
                    widen::restartable(run)
                } else {
                    run()
                }
            });
            Out::Frame(reply.unwrap_or_else(|e| e))
        }),
    );
    let job = Job::new(vec![(target, op)], move |mut outs| {
        let reply = outs.pop().map_or(Frame::Null, Out::frame);
        match again {
            Some((argv, caller)) if widen::must_restart(&reply) => {
                across_shards(nshards, origin, db, caller, &argv, Reach::Every)
            }
            _ => Action::Reply(widen::or_refusal(reply)),
        }
    });
    Action::Job(job.locked(plan))
}

fn eval_generic(ctx: &mut Ctx, argv: &[Bytes], by_sha: bool, read_only: bool) -> Reply {
    eval_in(ctx, argv, by_sha, read_only, None, None)
}

/// Redis's rule for a script that declared its flags (a shebang, or a
/// function): one that may write, without `allow-oom`, is refused while
/// the server is over `maxmemory` and nothing can be evicted. (A script
/// without flags runs, and its own write commands meet the limit.)
pub(super) fn refused_for_memory(ctx: &mut Ctx, may_write: bool, allow_oom: bool) -> bool {
    may_write
        && !allow_oom
        && crate::config::EVICTION.maxmemory() > 0
        && !ctx.shard.evict_before_command(true)
}

/// The `numkeys` of EVAL and FCALL (`argv[2]`, read as `n`) checked
/// against the `args` arguments that follow it, with Redis's errors.
pub(super) fn key_count(n: i64, args: usize) -> Result<usize, Frame> {
    if n < 0 {
        return Err(err::frame("ERR Number of keys can't be negative"));
    }
    if n as u64 > args as u64 {
        return Err(err::frame(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    Ok(n as usize)
}

fn eval_in(
    ctx: &mut Ctx,
    argv: &[Bytes],
    by_sha: bool,
    read_only: bool,
    across: Option<api::Across>,
    caller: Option<Arc<super::acl::ScriptCaller>>,
) -> Reply {
    let numkeys = int_arg(&argv[2]).and_then(|n| key_count(n, argv.len() - 3))?;
    let shared = Arc::clone(&ctx.shard.shared);
    let (sha, body) = if by_sha {
        parse_sha(&argv[1])
            .and_then(|sha| Some((sha, shared.scripts.get(&sha)?)))
            .ok_or_else(|| err::frame(NOSCRIPT))?
    } else {
        (sha1_hex(&argv[1]), argv[1].clone())
    };
    let keys = &argv[3..3 + numkeys];
    let args = &argv[3 + numkeys..];
    let (flags, source) = shebang::parse(&body).map_err(Frame::Error)?;
    // A flagged script that may write is refused before it runs where
    // writes would be (a read-only replica, too few good replicas), then
    // over maxmemory, in Redis's scriptPrepareForRun order.
    if flags.shebang && !flags.no_writes {
        if let Some(refusal) = crate::cmd::replication::script_write_refusal(ctx.shard) {
            return Err(refusal);
        }
        if let Some(refusal) = crate::cmd::save::script_write_refusal(ctx.shard) {
            return Err(refusal);
        }
    }
    if flags.shebang && refused_for_memory(ctx, !flags.no_writes, flags.allow_oom) {
        return Err(Frame::Error(crate::exec::evict::OOM.into()));
    }
    let generation = shared.scripts.generation();
    vm::with_vm(generation, |vm| {
        let function = vm.function(&sha, source).map_err(Frame::Error)?;
        if !by_sha {
            shared.scripts.insert(sha, body.clone());
        }
        let call = api::Call::new(
            ctx,
            read_only || flags.no_writes,
            flags.allow_oom,
            across,
            caller,
        );
        let name = hex(&sha).to_string();
        run(vm, call, &name, function, (keys, args), argv, false)
    })
    .unwrap_or_else(|| Err(err::frame("ERR the scripting engine is not available")))
}

/// Runs compiled script `function` with KEYS and ARGV on `ctx`'s shard.
/// Runs `function` (script `name`: its sha, or the FCALL function's name)
/// on `call`'s shard; KEYS and ARGV are globals, or (`as_args`, FCALL) its
/// two arguments. `command`: the EVAL or FCALL that runs it.
pub(super) fn run(
    vm: &mut vm::Vm,
    call: api::Call,
    name: &str,
    function: Function,
    (keys, args): (&[Bytes], &[Bytes]),
    command: &[Bytes],
    as_args: bool,
) -> Reply {
    let sha = name;
    let lua = &vm.lua;
    let setup = (|| -> mlua::Result<(Value, Value)> {
        let strings = |items: &[Bytes]| {
            lua.create_sequence_from(
                items
                    .iter()
                    .map(|b| lua.create_string(b))
                    .collect::<mlua::Result<Vec<_>>>()?,
            )
        };
        let (k, a) = (strings(keys)?, strings(args)?);
        vm::set_resp(lua, 2);
        if as_args {
            return Ok((Value::Table(k), Value::Table(a)));
        }
        vm.real.raw_set(&vm.names.keys, k)?;
        vm.real.raw_set(&vm.names.argv, a)?;
        Ok((Value::Nil, Value::Nil))
    })();
    let (k, a) = match setup {
        Ok(tables) => tables,
        Err(e) => return Err(running_error(sha, &e)),
    };
    let script = limits::Script {
        function: as_args,
        name: name.to_string(),
        command: command.to_vec(),
    };
    let limits = limits::Watch::start(&ctx_shared(&call), Rc::clone(&call.wrote), script);
    let state = RefCell::new(call);
    state.borrow_mut().ctx.shard.in_script = true;
    let result = current::lend(&state, || -> mlua::Result<Reply> {
        let (ok, value): (bool, Value) = vm::capped(lua, || vm.runner.call((function, k, a)))?;
        let resp3 = vm::resp(lua) == 3;
        Ok(if ok {
            Ok(convert::to_frame(lua, &value, resp3))
        } else {
            Err(raised(&value, sha))
        })
    });
    limits.stop(lua);
    let (off_shard, abandoned) = {
        let mut call = state.borrow_mut();
        call.ctx.shard.in_script = false;
        (call.off_shard, call.abandoned)
    };
    vm.collect_now_and_then();
    let probing = state
        .borrow()
        .across
        .as_ref()
        .is_some_and(|a| a.probe.is_some());
    let reach = &ctx_shared(&state.borrow()).scripts.reach;
    if off_shard {
        reach.mark_wide(as_args, name);
    } else if probing {
        reach.mark_narrow(as_args, name);
    }
    if abandoned {
        return Err(widen::restart_reply());
    }
    result.unwrap_or_else(|e| Err(running_error(sha, &e)))
}

fn ctx_shared(call: &api::Call) -> Arc<crate::exec::Shared> {
    Arc::clone(&call.ctx.shard.shared)
}

fn hex(sha: &Sha) -> &str {
    std::str::from_utf8(sha).unwrap_or("")
}

/// An error that escaped the script's own handler (the VM itself failed).
fn running_error(sha: &str, e: &mlua::Error) -> Frame {
    Frame::Error(format!(
        "ERR Error running script (call to f_{}): @user_script: {}",
        sha,
        vm::lua_message(e)
    ))
}

/// The reply for an error the script raised: the handler's table
/// `{err, source, line}` in Redis's shape.
fn raised(value: &Value, sha: &str) -> Frame {
    let t = match value {
        Value::Table(t) => t,
        // Lua calls no handler for an allocation failure: its message
        // comes as it is.
        Value::String(s) => {
            return Frame::error(format!("ERR {} script: {}", s.to_string_lossy(), sha))
        }
        Value::Error(e) => {
            return Frame::error(format!("ERR {} script: {}", vm::lua_message(e), sha))
        }
        _ => return Frame::error(format!("ERR unknown error script: {}", sha)),
    };
    let text = match t.raw_get::<Value>("err") {
        Ok(Value::String(s)) => s.to_string_lossy(),
        _ => "ERR unknown error".to_string(),
    };
    let text = text.replace(['\r', '\n'], " ");
    let source = t.raw_get::<Option<String>>("source").ok().flatten();
    let line = t.raw_get::<Option<i64>>("line").ok().flatten();
    match (source, line) {
        (Some(source), Some(line)) => {
            Frame::Error(format!("{text} script: {}, on {source}:{line}.", sha))
        }
        _ => Frame::Error(format!("{text} script: {}", sha)),
    }
}

const HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];

/// SCRIPT LOAD | EXISTS | FLUSH | KILL | DEBUG | HELP.
pub fn script(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let sub = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    let cache = &shard.shared.scripts;
    let frame = match sub.as_str() {
        "load" if argv.len() == 3 => load(shard, &argv[2]),
        "exists" if argv.len() >= 3 => Frame::Array(
            argv[2..]
                .iter()
                .map(
                    |s| Frame::Integer(parse_sha(s).is_some_and(|sha| cache.contains(&sha)) as i64),
                )
                .collect(),
        ),
        "flush" if argv.len() <= 3 => {
            let mode_ok = argv.get(2).is_none_or(|m| {
                m.eq_ignore_ascii_case(b"sync") || m.eq_ignore_ascii_case(b"async")
            });
            if mode_ok {
                cache.flush();
                Frame::OK
            } else {
                err::frame("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
            }
        }
        "flush" => err::frame("ERR SCRIPT FLUSH only support SYNC|ASYNC option"),
        "kill" if argv.len() == 2 => match limits::kill(&shard.shared, true) {
            "OK" => Frame::OK,
            refusal => err::frame(refusal),
        },
        "debug" if argv.len() == 3 => {
            let mode = String::from_utf8_lossy(&argv[2]).to_ascii_lowercase();
            match mode.as_str() {
                "no" => Frame::OK,
                "yes" | "sync" => err::frame("ERR ember has no Lua debugger"),
                _ => err::frame("ERR Use SCRIPT DEBUG YES/SYNC/NO"),
            }
        }
        "help" if argv.len() == 2 => Frame::Array(HELP.iter().map(|l| Frame::Simple(l)).collect()),
        "load" | "exists" | "kill" | "debug" | "help" => err::wrong_arity(&format!("script|{sub}")),
        _ => err::unknown_subcommand(&argv[1], "script"),
    };
    Action::Reply(frame)
}

/// SCRIPT LOAD: compiled here first, so a script that does not compile is
/// refused and not cached, as Redis does.
fn load(shard: &ShardData, body: &Bytes) -> Frame {
    let sha = sha1_hex(body);
    let cache = &shard.shared.scripts;
    let compiled = shebang::parse(body).and_then(|(_, source)| {
        vm::with_vm(cache.generation(), |vm| {
            vm.function(&sha, source).map(|_| ())
        })
        .unwrap_or(Err("ERR the scripting engine is not available".into()))
    });
    match compiled {
        Ok(()) => {
            cache.insert(sha, body.clone());
            Frame::Bulk(Bytes::copy_from_slice(&sha))
        }
        Err(e) => Frame::Error(e),
    }
}
