//! MEMORY: USAGE (what a key and its value hold), STATS (the server's
//! memory by what holds it, as Redis 7.0 reports it), PURGE and
//! MALLOC-STATS (jemalloc's, through `util::purge` and `util::memory`),
//! DOCTOR and HELP.
//!
//! STATS reads every shard's keys and table overheads: with several
//! shards it runs as a job over all of them (the route of commands that
//! reach keys their arguments do not name, `Split::Computed`), with one it
//! reads its own shard inline. A script's `redis.call` runs it inline on
//! the script's shard, so there it counts that shard's keys and tables
//! only (the process-wide figures are whole).

use bytes::Bytes;

use super::args::{err, Reply};
use super::keys::help_reply;
use super::{Ctx, Session, ShardData};
use crate::exec::stats::ShardMemory;
use crate::exec::{Action, Job, Op, Out, Shared};
use crate::resp::Frame;
use crate::util::memory::{memory_stats, startup_allocated};
use crate::util::num::parse_i64;

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
];

/// What a key's slot in its table costs besides the key and value bytes
/// (the slot itself, its index entry, the value's header, the table's
/// room to grow), as a fixed figure: MEMORY USAGE reports an estimate,
/// as Redis's does. Measured: 10k keys with integer, 20-byte and
/// 100-byte strings grew `used_memory` by 108, 127 and 207 bytes a key,
/// 88 to 92 bytes more than their key and value.
const ENTRY_OVERHEAD: usize = 90;

/// Below this much allocated memory DOCTOR has nothing to say (Redis's 5 MB).
const DOCTOR_MIN_BYTES: u64 = 5 << 20;

pub fn memory(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let sub = argv[1].to_ascii_lowercase();
    match sub.as_slice() {
        b"help" if argv.len() == 2 => Ok(help_reply(MEMORY_HELP)),
        b"doctor" if argv.len() == 2 => Ok(Frame::bulk(doctor())),
        b"stats" if argv.len() == 2 => {
            let here = ShardMemory::of(ctx.shard);
            Ok(stats(&ctx.shard.shared, &[here]))
        }
        b"usage" if argv.len() >= 3 => usage(ctx, argv),
        b"usage" => Err(err::wrong_arity("memory|usage")),
        b"malloc-stats" if argv.len() == 2 => Ok(Frame::Verbatim(Bytes::from(
            crate::util::memory::allocator_report(),
        ))),
        b"purge" if argv.len() == 2 => {
            crate::util::purge::purge_now();
            Ok(Frame::OK)
        }
        b"help" | b"doctor" | b"stats" | b"malloc-stats" | b"purge" => Err(err::wrong_arity(
            &format!("memory|{}", String::from_utf8_lossy(&sub)),
        )),
        _ => Err(err::unknown_subcommand(&argv[1], "memory")),
    }
}

/// MEMORY USAGE key [SAMPLES count]: the key's bytes, its value's and the
/// slot's. Every element is counted, so SAMPLES is checked and then has
/// nothing to change.
fn usage(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut options = argv[3..].iter();
    while let Some(option) = options.next() {
        if !option.eq_ignore_ascii_case(b"samples") {
            return Err(err::syntax());
        }
        let Some(count) = options.next() else {
            return Err(err::syntax());
        };
        match parse_i64(count) {
            None => return Err(err::not_integer()),
            Some(n) if n < 0 => return Err(err::syntax()),
            Some(_) => {}
        }
    }
    let key = &argv[2];
    let mut ks = ctx.ks();
    let Some(entry) = ks.peek(key) else {
        return Ok(Frame::Null);
    };
    let value = allocated_by_copy(&entry.value)
        .unwrap_or(0)
        .max(entry.value.heap_size());
    let bytes = ENTRY_OVERHEAD + key.len() + value;
    Ok(Frame::Integer(bytes as i64))
}

/// What the allocator hands out for a copy of `value`, bytes, by this
/// thread's allocation counter (`util::memory`): every allocation of the
/// value with its size class and its tables' spare room, which summing
/// the payloads (`heap_size`) leaves out: a small sorted set grew
/// `used_memory` by 1.7 times what that sum said. None where the thread
/// keeps no counter. A string's payload is shared by the copy, not
/// allocated: its `heap_size` stands for it.
fn allocated_by_copy(value: &crate::store::Value) -> Option<usize> {
    use crate::util::memory::publish_thread;
    let before = publish_thread();
    let copy = value.clone();
    let after = publish_thread();
    drop(copy);
    (before != 0 || after != 0).then(|| (after - before).max(0) as usize)
}

/// DOCTOR's report, in Redis's words for the two cases ember can tell.
fn doctor() -> &'static str {
    if memory_stats().allocated < DOCTOR_MIN_BYTES {
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting."
    } else {
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base."
    }
}

/// Whether the command needs every shard's figures (MEMORY STATS).
pub fn reaches_every_shard(argv: &[Bytes]) -> bool {
    argv.len() == 2 && argv[1].eq_ignore_ascii_case(b"stats")
}

/// MEMORY STATS over several shards: each reports its figures, the
/// connection's shard puts them together.
pub fn stats_job(shard: &mut ShardData, _: &Session, argv: &[Bytes]) -> Action {
    if !reaches_every_shard(argv) {
        // Only STATS comes here (`reaches_every_shard`); anything else is
        // the handler's to answer, on the shard its key names.
        return Action::Reply(Frame::error("ERR internal: MEMORY routed as STATS"));
    }
    let shared = std::sync::Arc::clone(&shard.shared);
    let ops = (0..shared.nshards)
        .map(|s| {
            let op = |ctx: &mut Ctx| Out::Memory(Box::new(ShardMemory::of(ctx.shard)));
            (s, Op::keyless(op))
        })
        .collect();
    Action::Job(Job::new(ops, move |outs| {
        let shards: Vec<ShardMemory> = outs
            .into_iter()
            .filter_map(|o| match o {
                Out::Memory(m) => Some(*m),
                _ => None,
            })
            .collect();
        Action::Reply(stats(&shared, &shards))
    }))
}

/// What the server holds besides its data, as MEMORY STATS and INFO memory
/// (`used_memory_overhead`) count it.
pub struct Overhead {
    /// Allocated once the shards ran, before any data.
    pub startup: u64,
    /// The replication buffers: the backlog's buffer (with what lagging
    /// replicas still need) and the chunks being written to replicas.
    pub backlog: u64,
    /// Of those, what lies past `repl-backlog-size`: the replicas' own
    /// share (Redis's `mem_clients_slaves` while any is connected), left
    /// out of the memory eviction counts.
    pub beyond_backlog: u64,
    /// Replicas are connected.
    pub replicas: bool,
    pub clients: u64,
    pub aof: u64,
    /// Eval scripts' and function libraries' bodies.
    pub lua: u64,
    pub functions: u64,
    /// The databases' tables (main and expires).
    pub tables: u64,
}

impl Overhead {
    /// From the server's figures and the shards' `clients` and `tables`.
    pub fn of(shared: &Shared, clients: u64, tables: u64) -> Overhead {
        let backlog = shared.repl.backlog();
        let in_flight = shared
            .repl
            .in_flight
            .load(std::sync::atomic::Ordering::Relaxed);
        let buffers = backlog.mem() + in_flight;
        let beyond_backlog = buffers.saturating_sub(backlog.size as u64);
        drop(backlog);
        let aof = &shared.aof.stats.buffered;
        Overhead {
            startup: startup_allocated(),
            backlog: buffers,
            beyond_backlog,
            replicas: !shared.repl.list().is_empty(),
            clients,
            aof: if shared.config.appendonly() {
                aof.load(std::sync::atomic::Ordering::Relaxed)
            } else {
                0
            },
            lua: shared.scripts.memory(),
            functions: shared.libraries.memory(),
            tables,
        }
    }

    pub fn total(&self) -> u64 {
        self.startup
            + self.backlog
            + self.clients
            + self.aof
            + self.lua
            + self.functions
            + self.tables
    }
}

/// MEMORY STATS's reply: Redis 7.0.15's fields in its order. What ember
/// has no counterpart for is 0, as in a Redis without it: cluster links (no
/// cluster), the slot-to-keys index (cluster mode only). Eval scripts and
/// function libraries are counted as INFO memory counts them; replicas are
/// fed from the backlog, so their clients hold nothing apart (as INFO's
/// `mem_clients_slaves`).
fn stats(shared: &Shared, shards: &[ShardMemory]) -> Frame {
    let mem = memory_stats();
    let total = mem.allocated;
    let clients: u64 = shards.iter().map(|s| s.clients_mem).sum();
    let ndbs = shards.iter().map(|s| s.dbs.len()).max().unwrap_or(0);
    let mut keys = 0u64;
    let mut db_overhead = 0u64;
    let mut dbs = Vec::new();
    for db in 0..ndbs {
        let (mut n, mut main, mut expires) = (0u64, 0u64, 0u64);
        for s in shards {
            if let Some(&(k, m, e)) = s.dbs.get(db) {
                n += k as u64;
                main += m as u64;
                expires += e as u64;
            }
        }
        keys += n;
        // Redis lists the databases that hold keys.
        if n == 0 {
            continue;
        }
        db_overhead += main + expires;
        dbs.push((db, main, expires));
    }

    let parts = Overhead::of(shared, clients, db_overhead);
    let (startup, backlog, aof, lua, functions) = (
        parts.startup,
        parts.backlog,
        parts.aof,
        parts.lua,
        parts.functions,
    );
    let overhead = parts.total();
    let net = total.saturating_sub(startup);
    let dataset = total.saturating_sub(overhead);
    // Redis keeps these as floats; the reply shows a float's digits.
    let ratio = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            f64::from(a as f32 / b as f32)
        }
    };
    let percent = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            f64::from(a as f32 * 100.0 / b as f32)
        }
    };
    let diff = |a: u64, b: u64| Frame::Integer(a as i64 - b as i64);
    let int = |n: u64| Frame::Integer(n as i64);

    let mut fields: Vec<(&str, Frame)> = vec![
        ("peak.allocated", int(mem.peak)),
        ("total.allocated", int(total)),
        ("startup.allocated", int(startup)),
        ("replication.backlog", int(backlog)),
        ("clients.slaves", int(0)),
        ("clients.normal", int(clients)),
        ("cluster.links", int(0)),
        ("aof.buffer", int(aof)),
        ("lua.caches", int(lua)),
        ("functions.caches", int(functions)),
    ];
    let mut out: Vec<(Frame, Frame)> = fields.drain(..).map(|(k, v)| (Frame::bulk(k), v)).collect();
    for (db, main, expires) in dbs {
        let inner = vec![
            (Frame::bulk("overhead.hashtable.main"), int(main)),
            (Frame::bulk("overhead.hashtable.expires"), int(expires)),
            (Frame::bulk("overhead.hashtable.slot-to-keys"), int(0)),
        ];
        out.push((Frame::bulk(format!("db.{db}")), Frame::Map(inner)));
    }
    let rest: Vec<(&str, Frame)> = vec![
        ("overhead.total", int(overhead)),
        ("keys.count", int(keys)),
        (
            "keys.bytes-per-key",
            int(net.checked_div(keys).unwrap_or(0)),
        ),
        ("dataset.bytes", int(dataset)),
        ("dataset.percentage", Frame::Double(percent(dataset, net))),
        ("peak.percentage", Frame::Double(percent(total, mem.peak))),
        ("allocator.allocated", int(total)),
        ("allocator.active", int(mem.active)),
        ("allocator.resident", int(mem.resident)),
        (
            "allocator-fragmentation.ratio",
            Frame::Double(ratio(mem.active, total)),
        ),
        ("allocator-fragmentation.bytes", diff(mem.active, total)),
        (
            "allocator-rss.ratio",
            Frame::Double(ratio(mem.resident, mem.active)),
        ),
        ("allocator-rss.bytes", diff(mem.resident, mem.active)),
        (
            "rss-overhead.ratio",
            Frame::Double(ratio(mem.rss, mem.resident)),
        ),
        ("rss-overhead.bytes", diff(mem.rss, mem.resident)),
        ("fragmentation", Frame::Double(ratio(mem.rss, total))),
        ("fragmentation.bytes", diff(mem.rss, total)),
    ];
    out.extend(rest.into_iter().map(|(k, v)| (Frame::bulk(k), v)));
    Frame::Map(out)
}
