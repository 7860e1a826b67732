//! `redis.call` / `redis.pcall`: a command from a script, run through the
//! same table and the same `propagate::call` as a client's command, so its
//! keyspace events fire and its writes are recorded (as effects: the
//! commands the script ran, published with the script's other records as
//! one unit when the script ends).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;
use mlua::{Lua, MultiValue, Value};

use std::time::Duration;

use super::convert;
use crate::cmd::acl::{check_script_command, ScriptCaller};
use crate::cmd::table::{Handler, Route};
use crate::cmd::{lookup, propagate, shard_of, CommandFlags, Ctx};
use crate::exec::{Msg, TxId};
use crate::resp::Frame;

/// The script's side of its commands: where they run and what it may do.
pub struct Call<'c, 'a> {
    pub ctx: &'c mut Ctx<'a>,
    /// EVAL_RO, EVALSHA_RO or `#!lua flags=no-writes`: writes refused.
    pub read_only: bool,
    /// `allow-oom`: its writes run over `maxmemory` too.
    pub allow_oom: bool,
    /// A command of the script changed the keyspace (SCRIPT KILL then
    /// answers UNKILLABLE).
    pub wrote: Rc<Cell<bool>>,
    /// A script run holding shards whole (`across`): a command on a key of
    /// one of them runs there (`remote`).
    pub across: Option<Across>,
    /// A user that may not run everything: each command is checked
    /// against it.
    pub caller: Option<Arc<ScriptCaller>>,
    /// A command of the script reached a key of a shard it does not hold
    /// (`widen`: the script is marked wide).
    pub off_shard: bool,
    /// ... before the script wrote, where the run may start again: the run
    /// is abandoned, every command from now on refused (`widen`).
    pub abandoned: bool,
}

impl<'c, 'a> Call<'c, 'a> {
    pub fn new(
        ctx: &'c mut Ctx<'a>,
        read_only: bool,
        allow_oom: bool,
        across: Option<Across>,
        caller: Option<Arc<ScriptCaller>>,
    ) -> Call<'c, 'a> {
        Call {
            ctx,
            read_only,
            allow_oom,
            wrote: Default::default(),
            across,
            caller,
            off_shard: false,
            abandoned: false,
        }
    }
}

/// What a script holding shards whole holds.
pub struct Across {
    /// The transaction holding them.
    pub tx: Option<TxId>,
    pub held: Vec<usize>,
    /// A first run of a script over every shard (`widen`): the shards of
    /// its declared keys, to learn whether it reaches past them.
    pub probe: Option<Vec<usize>>,
}

fn refuse(text: &str) -> Frame {
    Frame::error(format!("ERR {text}"))
}

/// The arguments of a `redis.call` as a command line. Err: the error reply
/// Redis gives a script for them.
fn argv_of(args: MultiValue) -> Result<Vec<Bytes>, Frame> {
    if args.is_empty() {
        return Err(refuse(
            "Please specify at least one argument for this redis lib call",
        ));
    }
    let mut argv = Vec::with_capacity(args.len());
    for v in args {
        let text = match v {
            Value::String(s) => Some(Bytes::copy_from_slice(&s.as_bytes())),
            // As Redis 7.0 formats them (`%.17g`): Lua's own 14 digits
            // would lose precision.
            Value::Integer(i) => Some(Bytes::from(i.to_string())),
            Value::Number(f) => Some(Bytes::from(crate::util::num::format_double(f))),
            _ => None,
        };
        match text {
            Some(t) => argv.push(t),
            None => {
                return Err(refuse(
                    "Lua redis lib command arguments must be strings or integers",
                ))
            }
        }
    }
    Ok(argv)
}

/// `redis.call(...)` (`raise`) / `redis.pcall(...)`: the reply as a Lua
/// value; an error reply is raised by `redis.call`, returned as
/// `{err=...}` by `redis.pcall`.
pub fn call(
    lua: &Lua,
    state: &RefCell<Call>,
    raise: bool,
    args: MultiValue,
) -> mlua::Result<Value> {
    let resp3 = super::vm::resp(lua) == 3;
    let frame = match argv_of(args) {
        Ok(argv) => match state.try_borrow_mut() {
            Ok(mut call) => execute(&mut call, &argv),
            Err(_) => refuse("This Redis command is not allowed from script"),
        },
        Err(e) => e,
    };
    if state.try_borrow().is_ok_and(|call| call.abandoned) {
        // Stopped for good, even under pcall: it runs again wide.
        let text = super::widen::RESTART.to_string();
        super::limits::raise_at_every_line(lua, text.clone());
        return Err(super::vm::raise(text));
    }
    if raise {
        if let Some(text) = frame.error_code() {
            return Err(super::vm::raise(String::from_utf8_lossy(text).into_owned()));
        }
    }
    convert::to_lua(lua, &frame, resp3)
}

/// `redis.acl_check_cmd(...)`: whether the user running the script may
/// run that command line (a script of a user who may run anything: true).
pub fn acl_check(state: &RefCell<Call>, args: MultiValue) -> mlua::Result<bool> {
    let fail = |text: &str| super::vm::raise(format!("ERR {text}"));
    let argv = argv_of(args).map_err(|e| {
        fail(
            e.error_code()
                .map(|t| {
                    String::from_utf8_lossy(t)
                        .trim_start_matches("ERR ")
                        .to_string()
                })
                .unwrap_or_default()
                .as_str(),
        )
    })?;
    let Some(spec) = lookup(&argv[0]) else {
        return Err(fail("Invalid command passed to redis.acl_check_cmd()"));
    };
    let call = state
        .try_borrow()
        .map_err(|_| fail("This Redis command is not allowed from script"))?;
    Ok(call
        .caller
        .as_ref()
        .is_none_or(|c| crate::cmd::acl::script_may_run(c, spec, &argv)))
}

/// Runs one command of a script on the script's shard.
fn execute(call: &mut Call, argv: &[Bytes]) -> Frame {
    if call.abandoned {
        return super::widen::restart_reply();
    }
    let Some(spec) = lookup(&argv[0]) else {
        return refuse("Unknown Redis command called from script");
    };
    if !spec.arity_ok(argv.len()) {
        return refuse("Wrong number of args calling Redis command from script");
    }
    // A subcommand has flags of its own (CONFIG GET is `noscript`, its
    // container is not), as Redis looks the subcommand up.
    let sub = argv
        .get(1)
        .and_then(|name| crate::cmd::acl::rules::sub_index(spec, name))
        .filter(|_| spec.container);
    let flags = sub.map_or(spec.flags, |i| spec.meta.subcommands[i].flags);
    if flags.contains(CommandFlags::NOSCRIPT) {
        return refuse("This Redis command is not allowed from script");
    }
    if matches!(spec.name, "xread" | "xreadgroup") && blocks(argv) {
        // A script never waits (BLPOP and friends run as their
        // non-blocking form); Redis refuses XREAD's BLOCK outright.
        return refuse(&format!(
            "{} command is not allowed with BLOCK option from scripts",
            spec.name
        ));
    }
    if let Some(caller) = &call.caller {
        if let Err(text) = check_script_command(call.ctx.shard, caller, spec, argv) {
            return refuse(text);
        }
    }
    let write = spec.flags.contains(CommandFlags::WRITE);
    // PUBLISH, PFCOUNT and the like may propagate: Redis 7 refuses them to
    // read-only scripts as it refuses writes (so that such scripts may run
    // under CLIENT PAUSE WRITE).
    let may_replicate = spec.flags.contains(CommandFlags::MAY_REPLICATE)
        || crate::cmd::pause::MAY_REPLICATE.contains(&spec.name);
    if (write || may_replicate) && call.read_only {
        return refuse("Write commands are not allowed from read-only scripts.");
    }
    // Redis's scriptVerifyOOM: over `maxmemory`, a command that may grow
    // memory is refused until the script has written (after that, a
    // refusal would leave its work half done).
    if spec.flags.contains(CommandFlags::DENYOOM)
        && !call.allow_oom
        && !call.wrote.get()
        && super::refused_for_memory(call.ctx, true, false)
    {
        return Frame::Error(crate::exec::evict::OOM.into());
    }
    if write {
        if let Some(refusal) = crate::cmd::replication::script_write_refusal(call.ctx.shard) {
            return refusal;
        }
        if let Some(refusal) = crate::cmd::save::script_write_refusal(call.ctx.shard) {
            return refusal;
        }
    }
    let ctx = &mut *call.ctx;
    let nshards = ctx.shard.shared.nshards;
    if nshards > 1 {
        let mut owners = spec
            .key_positions(argv)
            .map(|p| shard_of(&argv[p], nshards));
        let owner = owners.next();
        if owners.any(|s| Some(s) != owner) {
            return Frame::error("CROSSSLOT Keys in request don't hash to the same slot");
        }
        if let Some(owner) = owner.filter(|&s| s != ctx.shard.id) {
            // A key of another shard: reachable only while this script
            // holds that shard whole; otherwise refused, as Redis Cluster
            // refuses a script a key of another node.
            return match (&call.across, spec.route) {
                (Some(across), Route::Keyed(handler, _)) if across.held.contains(&owner) => {
                    if across.probe.as_ref().is_some_and(|p| !p.contains(&owner)) {
                        call.off_shard = true;
                    }
                    if write {
                        call.wrote.set(true);
                    }
                    // Read there, for a tracking caller's script (it runs
                    // on this shard, where its reads are noted).
                    if let Some(read) = ctx.shard.script_reads.as_mut() {
                        *read |= crate::cmd::tracking::reads(spec, argv);
                    }
                    let reply = remote(ctx, owner, across.tx, handler, argv);
                    if ctx.shard.shared.monitors.active() {
                        let db = ctx.db;
                        crate::cmd::monitor::feed(ctx.shard, db, "lua", argv);
                    }
                    reply
                }
                _ => {
                    call.off_shard = true;
                    if !call.wrote.get() && super::widen::may_restart() {
                        call.abandoned = true;
                        return super::widen::restart_reply();
                    }
                    refuse("Script attempted to access a non local key in a cluster node")
                }
            };
        }
    }
    let dirty = ctx.shard.store.stats.notify.dirty;
    let reply = match spec.route {
        Route::Keyed(handler, _) => propagate::call(ctx, handler, argv),
        Route::EveryShard(handler, _) if nshards == 1 => propagate::call(ctx, handler, argv),
        Route::Conn(_) => Ok(connection_command(ctx, spec.name, argv)),
        Route::EveryShard(..) => Err(refuse("This Redis command is not allowed from script")),
    };
    if ctx.shard.store.stats.notify.dirty != dirty {
        call.wrote.set(true);
    }
    if ctx.shard.shared.monitors.active() {
        let db = ctx.db;
        crate::cmd::monitor::feed(ctx.shard, db, "lua", argv);
    }
    reply.unwrap_or_else(|e| e)
}

/// Whether XREAD / XREADGROUP `argv` has a BLOCK option (before STREAMS,
/// whose arguments are keys and ids).
fn blocks(argv: &[Bytes]) -> bool {
    argv[1..]
        .iter()
        .take_while(|a| !a.eq_ignore_ascii_case(b"streams"))
        .any(|a| a.eq_ignore_ascii_case(b"block"))
}

/// The most a script waits for another shard's answer. That shard serves
/// the command as soon as its loop sees it (the script's transaction holds
/// it whole, so nothing there waits on this thread); the bound only keeps
/// a bug from stopping this shard for good.
const REMOTE_WAIT: Duration = Duration::from_secs(30);

/// How long a script spins for another shard's answer before it sleeps.
const REMOTE_SPIN: Duration = Duration::from_micros(50);

/// Runs `handler` on shard `owner` inside transaction `tx`, this thread
/// waiting for the reply.
fn remote(ctx: &Ctx, owner: usize, tx: Option<TxId>, handler: Handler, argv: &[Bytes]) -> Frame {
    let (send, answer) = crossbeam_channel::bounded(1);
    let argv = argv.to_vec();
    let f = Box::new(move |ctx: &mut Ctx| {
        let reply = propagate::call(ctx, handler, &argv).unwrap_or_else(|e| e);
        let _ = send.send(reply);
    });
    let peer = &ctx.shard.shared.peers()[owner];
    let msg = Msg::Serve { db: ctx.db, tx, f };
    if peer.inbox.send(vec![msg]).is_err() || peer.waker.wake().is_err() {
        return refuse("the shard owning the key is not running");
    }
    // The answer comes within tens of microseconds, and this thread has
    // nothing else to do meanwhile (it is inside the script): it spins for
    // a while before it sleeps, as a sleeping thread takes a wake-up of
    // its own (about 200 us per command on the 2-core test machine
    // against 35 us spinning, benches/script_bench.sh).
    let spin_until = std::time::Instant::now() + REMOTE_SPIN;
    while std::time::Instant::now() < spin_until {
        if let Ok(reply) = answer.try_recv() {
            return reply;
        }
        std::hint::spin_loop();
    }
    answer
        .recv_timeout(REMOTE_WAIT)
        .unwrap_or_else(|_| refuse("the shard owning the key did not answer"))
}

/// The connection commands a script may run: they act on the script's own
/// state (SELECT changes the database of the rest of the script only).
fn connection_command(ctx: &mut Ctx, name: &str, argv: &[Bytes]) -> Frame {
    match name {
        "ping" if argv.len() == 1 => Frame::Simple("PONG"),
        "ping" | "echo" => Frame::Bulk(argv[1].clone()),
        "select" => match crate::cmd::args::int32_arg(&argv[1]) {
            Ok(db) if db >= 0 && (db as usize) < ctx.shard.store.dbs.len() => {
                ctx.db = db as usize;
                Frame::OK
            }
            Ok(_) => Frame::error(crate::cmd::args::err::DB_RANGE),
            Err(e) => e,
        },
        "time" => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            Frame::Array(vec![
                Frame::bulk(now.as_secs().to_string()),
                Frame::bulk(now.subsec_micros().to_string()),
            ])
        }
        "publish" => {
            let shard = &mut *ctx.shard;
            let n = shard
                .shared
                .pubsub
                .publish(&argv[1], &argv[2], &mut shard.deliveries);
            Frame::Integer(n as i64)
        }
        "spublish" => {
            let shard = &mut *ctx.shard;
            let n = shard
                .shared
                .pubsub
                .spublish(&argv[1], &argv[2], &mut shard.deliveries);
            Frame::Integer(n as i64)
        }
        _ => refuse("This Redis command is not allowed from script"),
    }
}
