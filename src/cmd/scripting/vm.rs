//! One Lua 5.1 state per shard thread, built with Redis's sandbox, and the
//! compiled scripts it holds.
//!
//! A Lua state is not `Send`, so each shard keeps its own in a thread local
//! (a shard is one thread): a script always runs on the thread of the shard
//! whose keys it declared, in that shard's VM. The bodies are shared by the
//! whole server (`exec::scripts`); a VM compiles a body the first time it
//! runs it there. SCRIPT FLUSH moves the cache's generation, and a VM built
//! under an older one is dropped and built anew before the next script.

use std::cell::RefCell;
use std::collections::HashMap;

use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value};

use crate::exec::scripts::{sha1_hex, Sha};

/// The most memory one shard's Lua state may hold while Lua code runs: a
/// script that allocates past it fails with an error, and the server goes
/// on.
pub const MEMORY_LIMIT_BYTES: usize = 512 << 20;

/// Runs `f` (a script, or a library's code at load) under the memory cap.
///
/// The cap is on only while Lua code runs: with a limit set, mlua makes
/// every value it creates through a protected call, and in Lua 5.1 each of
/// those allocates two C closures for the collector. Setting up a run
/// (KEYS, ARGV) is small and bounded, so it goes uncapped and allocates
/// only what it builds.
pub fn capped<R>(lua: &Lua, f: impl FnOnce() -> R) -> R {
    struct Uncap<'l>(&'l Lua);
    impl Drop for Uncap<'_> {
        fn drop(&mut self) {
            let _ = self.0.set_memory_limit(0);
        }
    }
    let _ = lua.set_memory_limit(MEMORY_LIMIT_BYTES);
    let _uncap = Uncap(lua);
    f()
}

pub struct Vm {
    pub lua: Lua,
    /// The table the prelude shares with Rust (`rcall`, `resp`, `run`).
    pub hidden: Table,
    /// The globals behind the readonly proxy scripts see (KEYS and ARGV are
    /// set here before each run).
    pub real: Table,
    /// The prelude's `run`: a script under Redis's error handler.
    pub runner: Function,
    /// Names set before each run, made once (a string made from Rust is a
    /// protected call that allocates).
    pub names: Names,
    functions: HashMap<Sha, Function>,
    generation: u64,
    /// FCALL's functions as this VM loaded them, and the libraries'
    /// generation they come from.
    pub fcalls: HashMap<String, Function>,
    pub libraries_generation: Option<u64>,
    /// Bytes the state held after its last full collection.
    collected_at: std::cell::Cell<usize>,
}

/// Garbage a VM may gather before a full collection. Each run leaves its
/// KEYS and ARGV (and what the script made) behind, and Lua's own pace
/// would let the heap grow to twice what is live first; a full collection
/// of the small heap a VM holds between scripts costs tens of
/// microseconds, so it is paid per 32 KiB of garbage (about a hundred
/// runs of a short script), not per run. Redis steps its collector every
/// 50 scripts (`LUA_GC_CYCLE_PERIOD`) to the same end.
const GC_GROWTH_BYTES: usize = 32 << 10;

pub struct Names {
    pub keys: mlua::LuaString,
    pub argv: mlua::LuaString,
}

thread_local! {
    static VM: RefCell<Option<Vm>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's VM, built (again) if it is missing or older
/// than the cache's `generation`. None when a VM cannot be built or is
/// already in use on this thread.
pub fn with_vm<R>(generation: u64, f: impl FnOnce(&mut Vm) -> R) -> Option<R> {
    VM.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.as_ref().is_none_or(|vm| vm.generation != generation) {
            *slot = None;
            *slot = Some(Vm::new(generation).ok()?);
        }
        slot.as_mut().map(f)
    })
}

/// Bytes this thread's Lua state holds (INFO `used_memory_lua`). A state
/// older than the cache's `generation` (SCRIPT FLUSH since) goes now, as
/// Redis's flush frees its VM at once, instead of counting until this
/// shard's next script.
pub fn used_memory(generation: u64) -> usize {
    VM.with(|cell| {
        if let Ok(mut slot) = cell.try_borrow_mut() {
            if slot.as_ref().is_some_and(|vm| vm.generation != generation) {
                *slot = None;
            }
        }
        cell.try_borrow()
            .ok()
            .and_then(|vm| vm.as_ref().map(|vm| vm.lua.used_memory()))
            .unwrap_or(0)
    })
}

impl Vm {
    fn new(generation: u64) -> mlua::Result<Vm> {
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH,
            LuaOptions::default(),
        )?;
        let globals = lua.globals();
        globals.set("bit", super::bit::library(&lua)?)?;
        globals.set("cjson", super::cjson::library(&lua)?)?;
        globals.set("cmsgpack", super::cmsgpack::library(&lua)?)?;
        globals.set("struct", super::structlib::library(&lua)?)?;
        let hidden = lua.create_table()?;
        lua.set_app_data(Resp(2));
        hidden.set("api", api_functions(&lua)?)?;
        let errh = lua.create_function(error_handler)?;
        let prelude = lua
            .load(include_str!("prelude.lua"))
            .set_name("=ember_prelude")
            .into_function()?;
        let (env, real): (Table, Table) = prelude.call((hidden.clone(), errh))?;
        lua.set_globals(env)?;
        // What building it left behind goes now, not with the first
        // scripts' garbage (INFO counts every shard's VM).
        let runner: Function = hidden.raw_get("run")?;
        super::limits::install(&lua);
        let names = Names {
            keys: lua.create_string("KEYS")?,
            argv: lua.create_string("ARGV")?,
        };
        lua.gc_collect()?;
        let collected_at = std::cell::Cell::new(lua.used_memory());
        Ok(Vm {
            lua,
            hidden,
            real,
            runner,
            names,
            functions: HashMap::new(),
            generation,
            fcalls: HashMap::new(),
            libraries_generation: None,
            collected_at,
        })
    }

    /// A full collection once the heap has grown by [`GC_GROWTH_BYTES`]
    /// since the last (called after each script and library load).
    pub fn collect_now_and_then(&self) {
        if self.lua.used_memory() >= self.collected_at.get() + GC_GROWTH_BYTES {
            let _ = self.lua.gc_collect();
            self.collected_at.set(self.lua.used_memory());
        }
    }

    /// The compiled function of script `sha` whose source is `body`,
    /// compiling it on first use. Err: Redis's compile error text.
    pub fn function(&mut self, sha: &Sha, body: &[u8]) -> Result<Function, String> {
        if let Some(f) = self.functions.get(sha) {
            return Ok(f.clone());
        }
        let f = self
            .lua
            .load(body)
            .set_name("@user_script")
            .set_mode(mlua::chunk::ChunkMode::Text)
            .into_function()
            .map_err(|e| {
                format!(
                    "ERR Error compiling script (new function): {}",
                    lua_message(&e)
                )
            })?;
        self.functions.insert(*sha, f.clone());
        Ok(f)
    }
}

/// The protocol a script chose with `redis.setresp` (2 or 3).
pub struct Resp(pub i64);

pub fn resp(lua: &Lua) -> i64 {
    lua.app_data_ref::<Resp>().map_or(2, |r| r.0)
}

pub fn set_resp(lua: &Lua, version: i64) {
    lua.set_app_data(Resp(version));
}

/// An error a Redis API function raises: its text is the reply's, as is
/// (`ERR ...`, or a command's own error reply).
#[derive(Debug)]
struct Raise(String);

impl std::fmt::Display for Raise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Raise {}

pub fn raise(text: String) -> mlua::Error {
    mlua::Error::external(Raise(text))
}

fn fail(msg: &str) -> mlua::Error {
    raise(format!("ERR {msg}"))
}

/// The `redis.*` functions that may raise (Rust functions keep the
/// script's frame on the stack, so its line can be named).
fn api_functions(lua: &Lua) -> mlua::Result<Table> {
    let api = lua.create_table()?;
    api.set(
        "sha1hex",
        lua.create_function(|lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(fail("wrong number of arguments"));
            }
            let text = lua.coerce_string(args[0].clone())?;
            let bytes = text.map(|s| s.as_bytes().to_vec()).unwrap_or_default();
            lua.create_string(sha1_hex(&bytes))
        })?,
    )?;
    api.set(
        "log",
        lua.create_function(|lua, args: MultiValue| {
            if args.len() < 2 {
                return Err(fail("redis.log() requires two arguments or more."));
            }
            let level = match &args[0] {
                Value::Integer(i) => *i,
                Value::Number(f) => *f as i64,
                _ => return Err(fail("First argument must be a number (log level).")),
            };
            let level = match level {
                0 | 1 => log::Level::Debug,
                2 => log::Level::Info,
                3 => log::Level::Warn,
                _ => return Err(fail("Invalid debug level.")),
            };
            let mut parts = Vec::new();
            for v in args.iter().skip(1) {
                if let Some(s) = lua.coerce_string(v.clone())? {
                    parts.push(s.to_string_lossy());
                }
            }
            log::log!(level, "{}", parts.join(" "));
            Ok(())
        })?,
    )?;
    api.set(
        "setresp",
        lua.create_function(|lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(fail("redis.setresp() requires one argument."));
            }
            let version = match &args[0] {
                Value::Integer(i) => *i,
                Value::Number(f) if f.fract() == 0.0 => *f as i64,
                _ => 0,
            };
            if version != 2 && version != 3 {
                return Err(fail("RESP version must be 2 or 3."));
            }
            set_resp(lua, version);
            Ok(())
        })?,
    )?;
    api.set(
        "set_repl",
        lua.create_function(|_, args: MultiValue| {
            if args.len() != 1 {
                return Err(fail("redis.set_repl() requires two arguments."));
            }
            let flags = match &args[0] {
                Value::Integer(i) => *i,
                Value::Number(f) => *f as i64,
                _ => -1,
            };
            if !(0..=3).contains(&flags) {
                return Err(fail(
                    "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                ));
            }
            Ok(())
        })?,
    )?;
    // redis.call and redis.pcall reach the running script's state
    // (`current`); outside a run there is none to reach.
    for (name, raise) in [("call", true), ("pcall", false)] {
        api.set(
            name,
            lua.create_function(move |lua, args: MultiValue| {
                super::current::with(|state| super::api::call(lua, state, raise, args))
                    .unwrap_or_else(|| Err(fail("This Redis command is not allowed from script")))
            })?,
        )?;
    }
    api.set(
        "acl_check_cmd",
        lua.create_function(|lua, args: MultiValue| {
            if let Some(checked) =
                super::current::with(|state| super::api::acl_check(state, args.clone()))
            {
                return checked;
            }
            // No script running (library code at FUNCTION LOAD): any
            // command ember has may run.
            let Some(name) = args.front() else {
                return Err(fail(
                    "Please specify at least one argument for this redis lib call",
                ));
            };
            let name = lua.coerce_string(name.clone())?;
            let known = name.is_some_and(|n| super::super::lookup(&n.as_bytes()).is_some());
            if !known {
                return Err(fail("Invalid command passed to redis.acl_check_cmd()"));
            }
            Ok(true)
        })?,
    )?;
    Ok(api)
}

/// The text Lua gave for `e`, without mlua's decorations.
pub fn lua_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::ExternalError(inner) => match inner.downcast_ref::<Raise>() {
            Some(r) => r.0.clone(),
            None => inner.to_string(),
        },
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(m) => m.clone(),
        mlua::Error::MemoryError(m) => m.clone(),
        mlua::Error::CallbackError { cause, .. } => lua_message(cause),
        other => other.to_string(),
    }
}

fn raised_by_api(e: &mlua::Error) -> bool {
    match e {
        mlua::Error::ExternalError(inner) => inner.downcast_ref::<Raise>().is_some(),
        mlua::Error::CallbackError { cause, .. } => raised_by_api(cause),
        _ => false,
    }
}

/// Redis's error handler: whatever was raised becomes a table `{err=...}`
/// (a string gets `ERR ` in front), with `source` and `line` of the place
/// in the user's script where it was raised.
fn error_handler(lua: &Lua, err: MultiValue) -> mlua::Result<Value> {
    let err = err.into_iter().next().unwrap_or(Value::Nil);
    let table = match err {
        Value::Table(t) => t,
        other => {
            let text = match &other {
                Value::Error(e) => {
                    let text = lua_message(e);
                    if raised_by_api(e) {
                        text
                    } else {
                        format!("ERR {text}")
                    }
                }
                v => lua
                    .coerce_string(v.clone())
                    .ok()
                    .flatten()
                    .map(|s| s.to_string_lossy())
                    .map(|s| format!("ERR {s}"))
                    .unwrap_or_else(|| format!("ERR {v:?}")),
            };
            let t = lua.create_table()?;
            t.raw_set("err", text)?;
            t
        }
    };
    if table.raw_get::<Value>("source")?.is_nil() {
        let mut level = 1;
        while let Some(found) = lua.inspect_stack(level, |d| {
            let source = d.source();
            let ours = source
                .source
                .as_deref()
                .is_some_and(|s| s.starts_with("@user_"));
            ours.then(|| d.current_line())
        }) {
            if let Some(line) = found {
                let source = lua
                    .inspect_stack(level, |d| d.source().source.map(|s| s.into_owned()))
                    .flatten()
                    .unwrap_or_default();
                table.raw_set("source", source)?;
                table.raw_set("line", line.unwrap_or(0) as i64)?;
                break;
            }
            level += 1;
        }
    }
    Ok(Value::Table(table))
}
