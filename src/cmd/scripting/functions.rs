//! FUNCTION and FCALL (Redis 7.0): libraries of named Lua functions.
//!
//! FUNCTION LOAD checks a library where the client is: its `#!lua
//! name=<lib>` line, then its code run in that shard's VM with a `redis`
//! that only registers functions (and logs); what it registered becomes a
//! [`Library`] of the server's registry (`exec::scripts::Libraries`). Each
//! shard's VM runs every library's code again when the registry moved
//! since it last did, before its next FCALL, so a function loaded on any
//! connection runs on every shard. FCALL routes by its keys as EVAL does.

use std::cell::RefCell;
use std::sync::Arc;

use bytes::Bytes;
use mlua::{Function, MultiValue, Table, Value};

use super::api;
use super::vm::{self, raise, Vm};
use crate::cmd::args::{err, int_arg, Reply};
use crate::cmd::{Ctx, Session, ShardData};
use crate::exec::scripts::{FunctionInfo, Libraries, Library, RestorePolicy};
use crate::exec::Action;
use crate::resp::Frame;
use crate::store::rdb;

const FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

const NAME_RULE: &str = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The library name of `code`'s `#!lua name=<lib>` line, and the code Lua
/// runs (the line left out, its line break kept).
fn metadata(code: &[u8]) -> Result<(String, &[u8]), String> {
    if !code.starts_with(b"#!") {
        return Err("ERR Missing library metadata".into());
    }
    let end = code.iter().position(|&b| b == b'\n').unwrap_or(code.len());
    let line = String::from_utf8_lossy(&code[..end]).into_owned();
    // Split as Redis splits it (`sdssplitargs`: quotes group and go).
    let words = crate::resp::split_args(line.as_bytes()).ok_or("ERR Invalid library metadata")?;
    let words: Vec<String> = words
        .iter()
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    let mut words = words.iter().map(String::as_str);
    let engine = words.next().unwrap_or("#!").trim_start_matches("#!");
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("ERR Engine '{engine}' not found"));
    }
    let mut name = None;
    for word in words {
        match word.strip_prefix("name=") {
            Some(_) if name.is_some() => {
                return Err(
                    "ERR Invalid metadata value, name argument was given multiple times".into(),
                )
            }
            Some(n) => name = Some(n.to_string()),
            None => return Err(format!("ERR Invalid metadata value given: {word}")),
        }
    }
    let name = name.ok_or("ERR Library name was not given")?;
    if !valid_name(&name) {
        return Err(NAME_RULE.into());
    }
    Ok((name, &code[end..]))
}

/// What one `redis.register_function` call gave.
fn registration(args: MultiValue) -> mlua::Result<(FunctionInfo, Function)> {
    let named = args.len() == 1;
    let (name, callback, flags, description) = match args.len() {
        1 => {
            let Some(Value::Table(t)) = args.front() else {
                return Err(raise("ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).".into()));
            };
            let (mut name, mut callback, mut flags, mut description) = (None, None, None, None);
            for pair in t.pairs::<Value, Value>() {
                let (k, v) = pair?;
                let key = match &k {
                    Value::String(s) => s.to_string_lossy(),
                    _ => String::new(),
                };
                match key.as_str() {
                    "function_name" => name = Some(v),
                    "callback" => callback = Some(v),
                    "flags" => flags = Some(v),
                    "description" => description = Some(v),
                    _ => {
                        return Err(raise(
                            "ERR unknown argument given to redis.register_function".into(),
                        ))
                    }
                }
            }
            let name = name.ok_or_else(|| {
                raise("ERR redis.register_function must get a function name argument".into())
            })?;
            let callback = callback.ok_or_else(|| {
                raise("ERR redis.register_function must get a callback argument".into())
            })?;
            (name, callback, flags, description)
        }
        2 => (args[0].clone(), args[1].clone(), None, None),
        _ => {
            return Err(raise(
                "ERR wrong number of arguments to redis.register_function".into(),
            ))
        }
    };
    // As Lua's lua_isstring: a number is a name too.
    let name = match name {
        Value::String(name) => name.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        Value::Number(n) => mlua::Value::Number(n).to_string().unwrap_or_default(),
        _ if named => {
            return Err(raise(
                "ERR function_name argument given to redis.register_function must be a string"
                    .into(),
            ))
        }
        _ => {
            return Err(raise(
                "ERR first argument to redis.register_function must be a string".into(),
            ))
        }
    };
    let Value::Function(callback) = callback else {
        let text = if named {
            "ERR callback argument given to redis.register_function must be a function"
        } else {
            "ERR second argument to redis.register_function must be a function"
        };
        return Err(raise(text.into()));
    };
    if !valid_name(&name) {
        return Err(raise(NAME_RULE.into()));
    }
    let mut flag_names = Vec::new();
    match flags {
        None | Some(Value::Nil) => {}
        Some(Value::Table(t)) => {
            for v in t.sequence_values::<Value>() {
                let flag = match v? {
                    Value::String(s) => s.to_string_lossy(),
                    _ => String::new(),
                };
                if !FLAGS.contains(&flag.as_str()) {
                    return Err(raise("ERR unknown flag given".into()));
                }
                flag_names.push(flag);
            }
        }
        Some(_) => return Err(raise("ERR flags argument to redis.register_function must be a table representing function flags".into())),
    }
    let description = match description {
        None | Some(Value::Nil) => None,
        Some(Value::String(s)) => Some(s.to_string_lossy()),
        Some(_) => {
            return Err(raise(
                "ERR description argument given to redis.register_function must be a string".into(),
            ))
        }
    };
    Ok((
        FunctionInfo {
            name,
            description,
            flags: flag_names,
        },
        callback,
    ))
}

/// Runs library `code` (its metadata line left out) in `vm`: the functions
/// it registered. Err: Redis's error text.
fn run_library(vm: &Vm, code: &[u8]) -> Result<Vec<(FunctionInfo, Function)>, String> {
    let lua = &vm.lua;
    // As Redis: a load that runs past LOAD_TIMEOUT fails (it holds the
    // shard as a script does, and has no KILL).
    let started = std::time::Instant::now();
    let _ = lua.set_hook(
        mlua::HookTriggers::new().every_nth_instruction(super::limits::CHECK_EVERY),
        move |_, _| {
            if started.elapsed() > LOAD_TIMEOUT {
                return Err(raise("ERR FUNCTION LOAD timeout".into()));
            }
            Ok(mlua::VmState::Continue)
        },
    );
    let result = super::vm::capped(lua, || run_library_code(vm, code));
    // The VM's own hook again, for the scripts to come.
    super::limits::install(lua);
    vm.collect_now_and_then();
    result
}

/// Redis's `LOAD_TIMEOUT_MS`.
const LOAD_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

fn run_library_code(vm: &Vm, code: &[u8]) -> Result<Vec<(FunctionInfo, Function)>, String> {
    let lua = &vm.lua;
    let registered: RefCell<Vec<(FunctionInfo, Function)>> = RefCell::new(Vec::new());
    let outcome = lua.scope(|scope| {
        let register = scope.create_function(|_, args: MultiValue| {
            let (info, f) = registration(args)?;
            let mut list = registered.borrow_mut();
            if list.iter().any(|(i, _)| i.name == info.name) {
                return Err(raise("ERR Function already exists in the library".into()));
            }
            list.push((info, f));
            Ok(())
        })?;
        let make_env: Function = vm.hidden.raw_get("library_env")?;
        let (env, loaded): (Table, Function) = make_env.call(register)?;
        let chunk = match lua
            .load(code)
            .set_name("@user_function")
            .set_mode(mlua::chunk::ChunkMode::Text)
            .set_environment(env)
            .into_function()
        {
            Ok(f) => f,
            Err(e) => {
                return Ok(Err(format!(
                    "ERR Error compiling function: {}",
                    vm::lua_message(&e)
                )))
            }
        };
        let runner: Function = vm.hidden.raw_get("run")?;
        let (ok, value): (bool, Value) = runner.call(chunk)?;
        if ok {
            loaded.call::<()>(())?;
            return Ok(Ok(()));
        }
        let text = match &value {
            Value::Table(t) => t.raw_get::<Option<String>>("err").ok().flatten(),
            _ => None,
        };
        Ok(Err(format!(
            "ERR Error registering functions: {}",
            text.unwrap_or_else(|| "ERR unknown error".into())
        )))
    });
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(text)) => return Err(text),
        Err(e) => {
            return Err(format!(
                "ERR Error registering functions: {}",
                vm::lua_message(&e)
            ))
        }
    }
    let list = registered.into_inner();
    if list.is_empty() {
        return Err("ERR No functions registered".into());
    }
    Ok(list)
}

/// Makes `vm`'s functions those of the registry's libraries, if it moved.
fn sync(vm: &mut Vm, libraries: &Libraries) {
    let generation = libraries.generation();
    if vm.libraries_generation == Some(generation) {
        return;
    }
    vm.fcalls.clear();
    for lib in libraries.all() {
        let Ok((_, code)) = metadata(&lib.code) else {
            continue;
        };
        if let Ok(functions) = run_library(vm, code) {
            for (info, f) in functions {
                vm.fcalls.insert(info.name.to_ascii_lowercase(), f);
            }
        }
    }
    vm.libraries_generation = Some(generation);
}

pub fn fcall(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    fcall_in(ctx, argv, false, None, None)
}

pub fn fcall_ro(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    fcall_in(ctx, argv, true, None, None)
}

pub(super) fn fcall_in(
    ctx: &mut Ctx,
    argv: &[Bytes],
    read_only: bool,
    across: Option<api::Across>,
    caller: Option<Arc<crate::cmd::acl::ScriptCaller>>,
) -> Reply {
    // As Redis: the function is looked up before its arguments are read.
    let shared = Arc::clone(&ctx.shard.shared);
    let name = String::from_utf8_lossy(&argv[1]).into_owned();
    let info = shared
        .libraries
        .function(&name)
        .ok_or_else(|| err::frame("ERR Function not found"))?;
    let numkeys = int_arg(&argv[2])
        .map_err(|_| err::frame("ERR Bad number of keys provided"))
        .and_then(|n| super::key_count(n, argv.len() - 3))?;
    if read_only && !info.no_writes() {
        return Err(err::frame(
            "ERR Can not execute a script with write flag using *_ro command.",
        ));
    }
    let allow_oom = info.flags.iter().any(|f| f == "allow-oom");
    if super::refused_for_memory(ctx, !info.no_writes(), allow_oom) {
        return Err(Frame::Error(crate::exec::evict::OOM.into()));
    }
    // A function that may write is refused before it runs where writes
    // would be (too few good replicas, a read-only replica), as Redis's
    // scriptPrepareForRun refuses it.
    if !info.no_writes() {
        if let Some(refusal) = crate::cmd::replication::script_write_refusal(ctx.shard) {
            return Err(refusal);
        }
        if let Some(refusal) = crate::cmd::save::script_write_refusal(ctx.shard) {
            return Err(refusal);
        }
    }
    let keys = &argv[3..3 + numkeys];
    let args = &argv[3 + numkeys..];
    vm::with_vm(shared.scripts.generation(), |vm| {
        sync(vm, &shared.libraries);
        let function = vm
            .fcalls
            .get(&name.to_ascii_lowercase())
            .cloned()
            .ok_or_else(|| err::frame("ERR Function not found"))?;
        let call = api::Call::new(ctx, info.no_writes(), allow_oom, across, caller);
        super::run(vm, call, &name, function, (keys, args), argv, true)
    })
    .unwrap_or_else(|| Err(err::frame("ERR the scripting engine is not available")))
}

const HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
];

/// FUNCTION LOAD | DELETE | LIST | FLUSH | STATS | KILL | DUMP | RESTORE | HELP.
pub fn function(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let sub = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    let libraries = &shard.shared.libraries;
    let frame = match sub.as_str() {
        "load" => load(shard, &argv[2..]),
        "delete" if argv.len() == 3 => {
            if libraries.remove(&String::from_utf8_lossy(&argv[2])) {
                Frame::OK
            } else {
                err::frame("ERR Library not found")
            }
        }
        "list" => list(libraries, &argv[2..]),
        "flush" if argv.len() > 3 => Frame::error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
            String::from_utf8_lossy(&argv[1])
        )),
        "flush" => {
            let ok = argv.get(2).is_none_or(|m| {
                m.eq_ignore_ascii_case(b"sync") || m.eq_ignore_ascii_case(b"async")
            });
            if ok {
                libraries.flush();
                Frame::OK
            } else {
                err::frame("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
            }
        }
        "stats" if argv.len() == 2 => stats(&shard.shared),
        "kill" if argv.len() == 2 => match super::limits::kill(&shard.shared, false) {
            "OK" => Frame::OK,
            refusal => err::frame(refusal),
        },
        "dump" if argv.len() == 2 => {
            let all = libraries.all();
            Frame::Bulk(Bytes::from(rdb::functions::dump(
                all.iter().map(|l| l.code.as_ref()),
            )))
        }
        "restore" if (3..=4).contains(&argv.len()) => restore(shard, &argv[2..]),
        "restore" if argv.len() > 4 => Frame::error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
            String::from_utf8_lossy(&argv[1])
        )),
        "help" if argv.len() == 2 => Frame::Array(HELP.iter().map(|l| Frame::Simple(l)).collect()),
        "delete" | "stats" | "kill" | "help" | "dump" | "restore" => {
            err::wrong_arity(&format!("function|{sub}"))
        }
        _ => err::unknown_subcommand(&argv[1], "function"),
    };
    Action::Reply(frame)
}

/// What library code `body` registers, run in this shard's VM. Err: the
/// error reply.
fn registration_of(generation: u64, body: &[u8]) -> Result<Vec<FunctionInfo>, String> {
    vm::with_vm(generation, |vm| {
        run_library(vm, body).map(|fs| fs.into_iter().map(|(i, _)| i).collect::<Vec<_>>())
    })
    .unwrap_or_else(|| Err("ERR the scripting engine is not available".into()))
}

/// Libraries from their code (a FUNCTION RESTORE payload, an RDB file),
/// each run once in this thread's VM (of script cache `generation`) to
/// learn what it registers. Err: the error reply (a library that does not
/// load, two of one name or two functions of one name among them).
pub fn libraries_of(generation: u64, codes: Vec<Vec<u8>>) -> Result<Vec<Library>, String> {
    let mut out: Vec<Library> = Vec::with_capacity(codes.len());
    for code in codes {
        let (name, body) = metadata(&code)?;
        if out.iter().any(|l| l.name.eq_ignore_ascii_case(&name)) {
            return Err(format!("ERR Library '{name}' already exists"));
        }
        let functions = registration_of(generation, body)?;
        for f in &functions {
            let taken = out
                .iter()
                .flat_map(|l| l.functions.iter())
                .any(|g| g.name.eq_ignore_ascii_case(&f.name));
            if taken {
                return Err(format!("ERR Function {} already exists", f.name));
            }
        }
        out.push(Library {
            name,
            code: Bytes::from(code),
            functions,
        });
    }
    Ok(out)
}

/// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
fn restore(shard: &ShardData, args: &[Bytes]) -> Frame {
    let policy =
        match args.get(1) {
            None => RestorePolicy::Append,
            Some(p) if p.eq_ignore_ascii_case(b"append") => RestorePolicy::Append,
            Some(p) if p.eq_ignore_ascii_case(b"replace") => RestorePolicy::Replace,
            Some(p) if p.eq_ignore_ascii_case(b"flush") => RestorePolicy::Flush,
            Some(_) => return err::frame(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            ),
        };
    let codes = match rdb::functions::restore(&args[0]) {
        Ok(codes) => codes,
        Err(e) => return Frame::error(format!("ERR {}", e.message())),
    };
    let libs = match libraries_of(shard.shared.scripts.generation(), codes) {
        Ok(libs) => libs,
        Err(e) => return Frame::Error(e),
    };
    match shard.shared.libraries.restore(libs, policy) {
        Ok(()) => Frame::OK,
        Err(e) => Frame::error(format!("ERR {e}")),
    }
}

/// FUNCTION LOAD [REPLACE] code.
fn load(shard: &ShardData, args: &[Bytes]) -> Frame {
    let Some((code, options)) = args.split_last() else {
        return err::wrong_arity("function|load");
    };
    let mut replace = false;
    for opt in options {
        if !opt.eq_ignore_ascii_case(b"replace") {
            return Frame::error(format!(
                "ERR Unknown option given: {}",
                String::from_utf8_lossy(opt)
            ));
        }
        replace = true;
    }
    let libraries = &shard.shared.libraries;
    let (name, body) = match metadata(code) {
        Ok(m) => m,
        Err(e) => return Frame::Error(e),
    };
    if !replace && libraries.contains(&name) {
        return Frame::error(format!("ERR Library '{name}' already exists"));
    }
    let functions = match registration_of(shard.shared.scripts.generation(), body) {
        Ok(f) => f,
        Err(e) => return Frame::Error(e),
    };
    for f in &functions {
        if libraries.owner_of(&f.name, &name).is_some() {
            return Frame::error(format!("ERR Function {} already exists", f.name));
        }
    }
    libraries.insert(Library {
        name: name.clone(),
        code: code.clone(),
        functions,
    });
    Frame::bulk(name)
}

/// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
fn list(libraries: &Libraries, args: &[Bytes]) -> Frame {
    let mut with_code = false;
    let mut pattern: Option<&Bytes> = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.eq_ignore_ascii_case(b"withcode") && !with_code {
            with_code = true;
        } else if a.eq_ignore_ascii_case(b"libraryname") && pattern.is_none() {
            let Some(p) = args.get(i + 1) else {
                return err::frame("ERR library name argument was not given");
            };
            pattern = Some(p);
            i += 1;
        } else {
            return Frame::error(format!(
                "ERR Unknown argument {}",
                String::from_utf8_lossy(a)
            ));
        }
        i += 1;
    }
    let libs = libraries
        .all()
        .into_iter()
        .filter(|l| {
            pattern.is_none_or(|p| crate::util::glob::glob_match(p, l.name.as_bytes(), false))
        })
        .map(|l| {
            let functions = l
                .functions
                .iter()
                .map(|f| {
                    Frame::Map(vec![
                        (Frame::bulk("name"), Frame::bulk(&f.name)),
                        (
                            Frame::bulk("description"),
                            f.description.as_ref().map_or(Frame::Null, Frame::bulk),
                        ),
                        (
                            Frame::bulk("flags"),
                            Frame::Set(
                                f.flags
                                    .iter()
                                    .map(|g| Frame::SimpleOwned(g.clone()))
                                    .collect(),
                            ),
                        ),
                    ])
                })
                .collect();
            let mut fields = vec![
                (Frame::bulk("library_name"), Frame::bulk(&l.name)),
                (Frame::bulk("engine"), Frame::bulk("LUA")),
                (Frame::bulk("functions"), Frame::Array(functions)),
            ];
            if with_code {
                fields.push((Frame::bulk("library_code"), Frame::Bulk(l.code.clone())));
            }
            Frame::Map(fields)
        })
        .collect();
    Frame::Array(libs)
}

/// FUNCTION STATS: the function running past `busy-reply-threshold` (on
/// any shard), if any, and the engine's counts. While a script of EVAL is
/// the busy one, Redis answers BUSY.
pub fn stats(shared: &crate::exec::Shared) -> Frame {
    let busy = shared.scripts.busy();
    if busy
        && !shared
            .scripts
            .busy_function
            .load(std::sync::atomic::Ordering::Acquire)
    {
        return err::frame(super::BUSY);
    }
    let running = busy
        .then(|| shared.scripts.running.lock().ok().and_then(|r| r.clone()))
        .flatten();
    let running = match running {
        Some(r) => Frame::Map(vec![
            (Frame::bulk("name"), Frame::bulk(r.name)),
            (
                Frame::bulk("command"),
                Frame::Array(r.command.into_iter().map(Frame::Bulk).collect()),
            ),
            (
                Frame::bulk("duration_ms"),
                Frame::Integer(r.started.elapsed().as_millis() as i64),
            ),
        ]),
        None => Frame::Null,
    };
    let (libs, functions) = shared.libraries.counts();
    Frame::Map(vec![
        (Frame::bulk("running_script"), running),
        (
            Frame::bulk("engines"),
            Frame::Map(vec![(
                Frame::bulk("LUA"),
                Frame::Map(vec![
                    (Frame::bulk("libraries_count"), Frame::Integer(libs as i64)),
                    (
                        Frame::bulk("functions_count"),
                        Frame::Integer(functions as i64),
                    ),
                ]),
            )]),
        ),
    ])
}
