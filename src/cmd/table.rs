//! The command table: one row per command, naming its handler and how it
//! is routed. Dispatch, key routing and arity errors read from it; what
//! Redis declares about each command (arity, flags, keys, docs) comes from
//! its metadata (`cmd::meta`), joined to the row by name.

use std::sync::OnceLock;

use bytes::Bytes;

use super::args::Reply;
use super::list_edit;
use super::list_move;
use super::meta::{self, CommandFlags, CommandMeta};
use super::{
    acl, aof, bitfield, bitmap, blocking, command, connection, container, dump, expire, geo, hash,
    hash_ttl, hll, keys, latency, list, memory, migrate, module, monitor, multi, pubsub,
    replication, save, scripting, server, set, slowlog, sort, stream, strings, transaction, zset,
    Ctx, Session,
};
use crate::cmd::ShardData;
use crate::exec::Action;

/// Work on the store of the shard that owns the keys.
pub type Handler = fn(&mut Ctx, &[Bytes]) -> Reply;
/// Work answered by the connection's own thread (it may start a job).
pub type ConnHandler = fn(&mut ShardData, &mut Session, &[Bytes]) -> Action;

/// How a command whose keys live on several shards is carried out.
#[derive(Clone, Copy)]
pub enum Split {
    /// Single-key command: never spans shards.
    One,
    /// Run per shard on its keys, sum the integer replies (DEL, EXISTS, ...).
    Sum,
    /// Run per shard, put the values back in request order (MGET).
    Gather,
    /// Run per shard on its key/value pairs (MSET).
    Pairs,
    /// A sequence of steps over shards (RENAME, COPY, MSETNX, LCS).
    Custom(fn(&mut ShardData, &Session, &[Bytes]) -> Action),
    /// Reads keys computed from the data (SORT's BY and GET patterns) when
    /// `.0` says its arguments reach any: with several shards `.1` then
    /// runs it in steps and takes its own locks, wherever its named keys
    /// are; otherwise it is an ordinary command whose named keys route it
    /// (`.1` again when they are on several shards).
    Computed(
        fn(&[Bytes]) -> bool,
        fn(&mut ShardData, &Session, &[Bytes]) -> Action,
    ),
}

/// How per-shard replies of a command that runs on every shard combine.
#[derive(Clone, Copy)]
pub enum Merge {
    Sum,
    Ok,
    Concat,
}

#[derive(Clone, Copy)]
pub enum Route {
    Keyed(Handler, Split),
    EveryShard(Handler, Merge),
    Conn(ConnHandler),
}

/// One row of the table: a command's name and how ember runs it. What
/// Redis declares about it (arity, flags, key range, ACL categories, key
/// specs, docs) is its [`CommandMeta`]; the fields dispatch reads on every
/// request are copied from it when the table is built (at compile time), so
/// the request path reads them from the row.
pub struct CommandSpec {
    pub name: &'static str,
    /// Redis arity: N exact, -N at least N (the name counts).
    pub arity: i32,
    pub flags: CommandFlags,
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
    pub route: Route,
    /// Key positions read from the arguments (`numkeys` commands such as
    /// ZUNION or LMPOP), replacing first/last/step.
    pub movable: Option<KeysFn>,
    /// A container of subcommands (CONFIG GET ...): Redis names it
    /// `config|get` in errors, CLIENT LIST and its statistics.
    pub container: bool,
    /// Everything Redis declares about the command.
    pub meta: &'static CommandMeta,
}

/// Computes a command's key positions from its arguments.
pub type KeysFn = fn(&[Bytes]) -> Vec<usize>;

/// Where a command's keys are: a first/last/step range or a computed list.
pub enum KeyPositions {
    Range(std::iter::StepBy<std::ops::Range<usize>>),
    List(std::vec::IntoIter<usize>),
}

impl Iterator for KeyPositions {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        match self {
            KeyPositions::Range(r) => r.next(),
            KeyPositions::List(l) => l.next(),
        }
    }
}

/// Positions of `numkeys` keys whose count is at `count_at`, following it,
/// after the fixed keys `fixed` (ZUNIONSTORE's destination). Empty when the
/// count is not a positive number that fits: the handler reports the error.
pub fn numkeys_positions(argv: &[Bytes], fixed: &[usize], count_at: usize) -> Vec<usize> {
    let count = argv
        .get(count_at)
        .and_then(|c| std::str::from_utf8(c).ok()?.parse::<usize>().ok())
        .unwrap_or(0);
    // Compared without adding: a count near usize::MAX overflowed the sum
    // (a panic in debug builds; in release the wrapped sum let the range
    // below ask for ~2^64 positions).
    if count == 0 || count >= argv.len().saturating_sub(count_at) {
        return Vec::new();
    }
    let mut positions: Vec<usize> = fixed.iter().copied().filter(|&p| p < argv.len()).collect();
    positions.extend(count_at + 1..=count_at + count);
    positions
}

/// The positions `first..=last` every `step` of `argv` (a negative `last`
/// counts from the end), as Redis's legacy key range names them.
fn range_positions(argc: usize, first: i32, last: i32, step: i32) -> KeyPositions {
    let argc = argc as i32;
    let last = if last < 0 {
        argc + last
    } else {
        last.min(argc - 1)
    };
    let valid = first > 0 && first < argc && last >= first;
    let range = if valid {
        first as usize..last as usize + 1
    } else {
        0..0
    };
    KeyPositions::Range(range.step_by(step.max(1) as usize))
}

impl CommandSpec {
    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i32;
        if self.arity >= 0 {
            argc == self.arity
        } else {
            argc >= -self.arity
        }
    }

    /// Positions of the key arguments in `argv`.
    pub fn key_positions(&self, argv: &[Bytes]) -> KeyPositions {
        if let Some(movable) = self.movable {
            return KeyPositions::List(movable(argv).into_iter());
        }
        if self.container {
            // A container declares no keys; its subcommand does (OBJECT
            // ENCODING key). An unknown subcommand has none: the handler
            // answers it where the client is.
            return match argv.get(1).and_then(|sub| self.meta.subcommand(sub)) {
                Some(sub) => range_positions(argv.len(), sub.first_key, sub.last_key, sub.step),
                None => KeyPositions::Range((0..0).step_by(1)),
            };
        }
        range_positions(argv.len(), self.first_key, self.last_key, self.step)
    }

    /// Whether `argv` reads keys its arguments do not name (SORT's BY and
    /// GET patterns) among `nshards` shards: then EXEC cannot know the keys
    /// to lock, and the command cannot run where its named keys live.
    pub fn reaches_unnamed_keys(&self, argv: &[Bytes], nshards: usize) -> bool {
        match self.route {
            Route::Keyed(_, Split::Computed(reaches, _)) => nshards > 1 && reaches(argv),
            _ => false,
        }
    }

    /// The row with its keys computed from the arguments (see `movable`).
    /// Requires: Redis declares the command `movablekeys`.
    pub const fn with_movable_keys(mut self, keys: KeysFn) -> CommandSpec {
        assert!(
            self.flags.contains(CommandFlags::MOVABLEKEYS),
            "computed key positions for a command Redis does not declare movablekeys"
        );
        self.movable = Some(keys);
        self
    }

    /// The row of a container, with the subcommands its handler accepts
    /// (short names, in the metadata's order). The metadata must list
    /// exactly these: `scripts/gen_command_meta.py` reads this list.
    pub const fn with_subcommands(self, declared: &[&str]) -> CommandSpec {
        assert!(
            meta::subcommands_are(self.meta, self.name, declared),
            "declared subcommands differ from the metadata's: run scripts/gen_command_meta.py"
        );
        self
    }

    /// The command's id, for tables indexed by command (statistics, ACL
    /// bits): its place in [`COMMANDS`], or for a subcommand's row
    /// ([`subcommand_row`]) its place after them. Requires: `self` is one
    /// of those rows, as every spec [`lookup`] and [`subcommand_row`]
    /// return is.
    pub fn id(&'static self) -> usize {
        let size = std::mem::size_of::<CommandSpec>();
        let at = self as *const CommandSpec as usize;
        let rows = COMMANDS.as_ptr() as usize;
        let id = if (rows..rows + std::mem::size_of_val(COMMANDS)).contains(&at) {
            (at - rows) / size
        } else {
            COMMANDS.len() + (at - sub_rows().as_ptr() as usize) / size
        };
        debug_assert!(std::ptr::eq(by_id(id), self));
        id
    }
}

/// Subcommands as rows of their own (`config|get`), for what Redis keeps
/// per subcommand: INFO commandstats, LATENCY HISTOGRAM, ACL rules. Each
/// copies its container's route and takes its own name, flags and key
/// range from its metadata. In row order, then subcommand order: the ids
/// [`sub_id`] gives.
fn sub_rows() -> &'static [CommandSpec] {
    static ROWS: OnceLock<Vec<CommandSpec>> = OnceLock::new();
    ROWS.get_or_init(|| {
        COMMANDS
            .iter()
            .flat_map(|row| {
                row.meta.subcommands.iter().map(move |sub| CommandSpec {
                    name: sub.name,
                    arity: sub.arity,
                    flags: sub.flags,
                    first_key: sub.first_key,
                    last_key: sub.last_key,
                    step: sub.step,
                    route: row.route,
                    movable: row.movable,
                    container: false,
                    meta: sub,
                })
            })
            .collect()
    })
}

/// The first id of each row's subcommands.
fn sub_bases() -> &'static [usize] {
    static BASES: OnceLock<Vec<usize>> = OnceLock::new();
    BASES.get_or_init(|| {
        let mut next = COMMANDS.len();
        COMMANDS
            .iter()
            .map(|row| {
                let base = next;
                next += row.meta.subcommands.len();
                base
            })
            .collect()
    })
}

/// The id of subcommand `index` of `row`.
pub fn sub_id(row: &'static CommandSpec, index: usize) -> usize {
    sub_bases()[row.id()] + index
}

/// The place of subcommand `name` in `row`'s metadata.
pub fn sub_index(row: &CommandSpec, name: &[u8]) -> Option<usize> {
    row.meta
        .subcommands
        .iter()
        .position(|s| s.short_name().as_bytes().eq_ignore_ascii_case(name))
}

/// Every command id: the rows', then their subcommands'.
pub fn id_count() -> usize {
    COMMANDS.len() + sub_rows().len()
}

/// The row (or subcommand row) with id `id`.
pub fn by_id(id: usize) -> &'static CommandSpec {
    COMMANDS
        .get(id)
        .unwrap_or_else(|| &sub_rows()[id - COMMANDS.len()])
}

/// What `argv` runs of `row`, as its statistics count it: the subcommand's
/// row for a container whose subcommand ember has, `row` otherwise.
pub fn subcommand_row(row: &'static CommandSpec, argv: &[Bytes]) -> &'static CommandSpec {
    if !row.container {
        return row;
    }
    match argv.get(1).and_then(|sub| sub_index(row, sub)) {
        Some(i) => by_id(sub_id(row, i)),
        None => row,
    }
}

/// A row: the name joins it to its metadata (a name without metadata does
/// not build), which gives the columns dispatch reads.
const fn row(name: &'static str, route: Route) -> CommandSpec {
    let meta = meta::find(name);
    CommandSpec {
        name,
        arity: meta.arity,
        flags: meta.flags,
        first_key: meta.first_key,
        last_key: meta.last_key,
        step: meta.step,
        route,
        movable: None,
        container: !meta.subcommands.is_empty(),
        meta,
    }
}

/// A command run on the shard that owns its keys.
const fn keyed(name: &'static str, h: Handler, split: Split) -> CommandSpec {
    row(name, Route::Keyed(h, split))
}

/// A command run on every shard, its replies merged.
const fn every(name: &'static str, h: Handler, merge: Merge) -> CommandSpec {
    row(name, Route::EveryShard(h, merge))
}

/// A command answered by the connection's thread.
const fn conn(name: &'static str, h: ConnHandler) -> CommandSpec {
    row(name, Route::Conn(h))
}

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    // Strings
    keyed("get", strings::get, Split::One),
    keyed("set", strings::set, Split::One),
    keyed("setnx", strings::setnx, Split::One),
    keyed("setex", strings::setex, Split::One),
    keyed("psetex", strings::psetex, Split::One),
    keyed("getset", strings::getset, Split::One),
    keyed("getdel", strings::getdel, Split::One),
    keyed("getex", strings::getex, Split::One),
    keyed("mget", strings::mget, Split::Gather),
    keyed("mset", strings::mset, Split::Pairs),
    keyed("msetnx", strings::msetnx, Split::Custom(multi::msetnx)),
    keyed("incr", strings::incr, Split::One),
    keyed("decr", strings::decr, Split::One),
    keyed("incrby", strings::incrby, Split::One),
    keyed("decrby", strings::decrby, Split::One),
    keyed("incrbyfloat", strings::incrbyfloat, Split::One),
    keyed("append", strings::append, Split::One),
    keyed("strlen", strings::strlen, Split::One),
    keyed("getrange", strings::getrange, Split::One),
    keyed("substr", strings::getrange, Split::One),
    keyed("setrange", strings::setrange, Split::One),
    keyed("lcs", strings::lcs, Split::Custom(multi::lcs)),
    keyed("setbit", bitmap::setbit, Split::One),
    keyed("getbit", bitmap::getbit, Split::One),
    keyed("bitcount", bitmap::bitcount, Split::One),
    keyed("bitpos", bitmap::bitpos, Split::One),
    keyed("bitop", bitmap::bitop, Split::Custom(bitmap::bitop_across)),
    keyed("bitfield", bitfield::bitfield, Split::One),
    keyed("bitfield_ro", bitfield::bitfield_ro, Split::One),
    // Lists
    keyed("lpush", list::lpush, Split::One),
    keyed("rpush", list::rpush, Split::One),
    keyed("lpushx", list::lpushx, Split::One),
    keyed("rpushx", list::rpushx, Split::One),
    keyed("lpop", list::lpop, Split::One),
    keyed("rpop", list::rpop, Split::One),
    keyed("llen", list::llen, Split::One),
    keyed("lrange", list::lrange, Split::One),
    keyed("lindex", list::lindex, Split::One),
    keyed("lset", list_edit::lset, Split::One),
    keyed("linsert", list_edit::linsert, Split::One),
    keyed("lrem", list_edit::lrem, Split::One),
    keyed("ltrim", list_edit::ltrim, Split::One),
    keyed("lpos", list_edit::lpos, Split::One),
    keyed("lmove", list_move::lmove, Split::Custom(list_move::lmove_across)),
    keyed("rpoplpush", list_move::lmove, Split::Custom(list_move::lmove_across)),
    keyed("lmpop", list_move::lmpop, Split::Custom(list_move::lmpop_across)).with_movable_keys(list_move::lmpop_keys),
    // Hashes
    keyed("hset", hash::hset, Split::One),
    keyed("hmset", hash::hmset, Split::One),
    keyed("hsetnx", hash::hsetnx, Split::One),
    keyed("hget", hash::hget, Split::One),
    keyed("hmget", hash::hmget, Split::One),
    keyed("hdel", hash::hdel, Split::One),
    keyed("hlen", hash::hlen, Split::One),
    keyed("hexists", hash::hexists, Split::One),
    keyed("hstrlen", hash::hstrlen, Split::One),
    keyed("hkeys", hash::hkeys, Split::One),
    keyed("hvals", hash::hvals, Split::One),
    keyed("hgetall", hash::hgetall, Split::One),
    keyed("hincrby", hash::hincrby, Split::One),
    keyed("hincrbyfloat", hash::hincrbyfloat, Split::One),
    keyed("hrandfield", container::hrandfield, Split::One),
    keyed("hscan", container::hscan, Split::One),
    // Hash field expiry
    keyed("hexpire", hash_ttl::hexpire, Split::One),
    keyed("hpexpire", hash_ttl::hpexpire, Split::One),
    keyed("hexpireat", hash_ttl::hexpireat, Split::One),
    keyed("hpexpireat", hash_ttl::hpexpireat, Split::One),
    keyed("httl", hash_ttl::httl, Split::One),
    keyed("hpttl", hash_ttl::hpttl, Split::One),
    keyed("hexpiretime", hash_ttl::hexpiretime, Split::One),
    keyed("hpexpiretime", hash_ttl::hpexpiretime, Split::One),
    keyed("hpersist", hash_ttl::hpersist, Split::One),
    // Sets
    keyed("sadd", set::sadd, Split::One),
    keyed("srem", set::srem, Split::One),
    keyed("scard", set::scard, Split::One),
    keyed("sismember", set::sismember, Split::One),
    keyed("smismember", set::smismember, Split::One),
    keyed("smembers", set::smembers, Split::One),
    keyed("spop", set::spop, Split::One),
    keyed("srandmember", container::srandmember, Split::One),
    keyed("smove", set::smove, Split::Custom(set::smove_job)),
    // Sorting
    keyed("sort", sort::sort, Split::Computed(sort::reaches_keys, sort::sort_job)).with_movable_keys(sort::keys),
    keyed("sort_ro", sort::sort_ro, Split::Computed(sort::reaches_keys, sort::sort_job)).with_movable_keys(sort::ro_keys),
    keyed("sinter", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sintercard", set::algebra, Split::Custom(set::algebra_job)).with_movable_keys(set::sintercard_keys),
    keyed("sinterstore", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sunion", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sunionstore", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sdiff", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sdiffstore", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sscan", container::sscan, Split::One),
    // Sorted sets
    keyed("zadd", zset::zadd, Split::One),
    keyed("zincrby", zset::zincrby, Split::One),
    keyed("zrem", zset::zrem, Split::One),
    keyed("zscore", zset::zscore, Split::One),
    keyed("zmscore", zset::zmscore, Split::One),
    keyed("zcard", zset::zcard, Split::One),
    keyed("zcount", zset::zcount, Split::One),
    keyed("zlexcount", zset::zlexcount, Split::One),
    keyed("zrank", zset::zrank, Split::One),
    keyed("zrevrank", zset::zrevrank, Split::One),
    keyed("zrange", zset::range::zrange, Split::One),
    keyed("zrangestore", zset::range::zrangestore, Split::Custom(zset::range::zrangestore_job)),
    keyed("zrevrange", zset::range::zrevrange, Split::One),
    keyed("zrangebyscore", zset::range::zrangebyscore, Split::One),
    keyed("zrevrangebyscore", zset::range::zrevrangebyscore, Split::One),
    keyed("zrangebylex", zset::range::zrangebylex, Split::One),
    keyed("zrevrangebylex", zset::range::zrevrangebylex, Split::One),
    keyed("zremrangebyscore", zset::range::zremrangebyscore, Split::One),
    keyed("zremrangebyrank", zset::range::zremrangebyrank, Split::One),
    keyed("zremrangebylex", zset::range::zremrangebylex, Split::One),
    keyed("zpopmin", zset::pop::zpopmin, Split::One),
    keyed("zpopmax", zset::pop::zpopmax, Split::One),
    keyed("zmpop", zset::pop::zmpop, Split::Custom(zset::pop::zmpop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zunion", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zinter", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zdiff", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zintercard", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zunionstore", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::dst_and_numkeys_at_2),
    keyed("zinterstore", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::dst_and_numkeys_at_2),
    keyed("zdiffstore", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::dst_and_numkeys_at_2),
    // Streams
    keyed("xadd", stream::xadd, Split::One),
    keyed("xtrim", stream::xtrim, Split::One),
    keyed("xdel", stream::xdel, Split::One),
    keyed("xlen", stream::xlen, Split::One),
    keyed("xrange", stream::xrange, Split::One),
    keyed("xrevrange", stream::xrevrange, Split::One),
    keyed("xsetid", stream::xsetid, Split::One),
    keyed("xread", stream::read::xread, Split::Custom(stream::read::xread_across)).with_movable_keys(stream::read::keys),
    keyed("xreadgroup", stream::read::xread, Split::Custom(stream::read::xread_across)).with_movable_keys(stream::read::keys),
    keyed("xinfo", stream::info::xinfo, Split::One).with_subcommands(&["consumers", "groups", "help", "stream"]),
    keyed("xgroup", stream::group::xgroup, Split::One).with_subcommands(&["create", "createconsumer", "delconsumer", "destroy", "help", "setid"]),
    keyed("xack", stream::group::xack, Split::One),
    keyed("xpending", stream::group::xpending, Split::One),
    keyed("xclaim", stream::group::xclaim, Split::One),
    keyed("xautoclaim", stream::group::xautoclaim, Split::One),
    // Geo (sorted sets of geohashes)
    keyed("geoadd", geo::geoadd, Split::One),
    keyed("geodist", geo::geodist, Split::One),
    keyed("geohash", geo::geohash, Split::One),
    keyed("geopos", geo::geopos, Split::One),
    keyed("georadius", geo::geosearch, Split::Custom(geo::geosearch_job)).with_movable_keys(geo::radius_keys),
    keyed("georadius_ro", geo::geosearch, Split::One),
    keyed("georadiusbymember", geo::geosearch, Split::Custom(geo::geosearch_job)).with_movable_keys(geo::radius_keys),
    keyed("georadiusbymember_ro", geo::geosearch, Split::One),
    keyed("geosearch", geo::geosearch, Split::One),
    keyed("geosearchstore", geo::geosearch, Split::Custom(geo::geosearch_job)),
    // HyperLogLog
    keyed("pfadd", hll::pfadd, Split::One),
    keyed("pfcount", hll::pfcount, Split::Custom(hll::pfcount_job)),
    keyed("pfmerge", hll::pfmerge, Split::Custom(hll::pfmerge_job)),
    keyed("pfdebug", hll::pfdebug, Split::One),
    keyed("pfselftest", hll::pfselftest, Split::One),
    // Blocking (the handler is the immediate attempt, all that runs in EXEC)
    keyed("blpop", blocking::immediate, Split::Custom(blocking::across)),
    keyed("brpop", blocking::immediate, Split::Custom(blocking::across)),
    keyed("blmove", blocking::immediate, Split::Custom(blocking::across)),
    keyed("brpoplpush", blocking::immediate, Split::Custom(blocking::across)),
    keyed("blmpop", blocking::immediate, Split::Custom(blocking::across)).with_movable_keys(blocking::numkeys_at_2),
    keyed("bzpopmin", blocking::immediate, Split::Custom(blocking::across)),
    keyed("bzpopmax", blocking::immediate, Split::Custom(blocking::across)),
    keyed("bzmpop", blocking::immediate, Split::Custom(blocking::across)).with_movable_keys(blocking::numkeys_at_2),
    keyed("zrandmember", container::zrandmember, Split::One),
    keyed("zscan", container::zscan, Split::One),
    // Keyspace
    keyed("del", keys::del, Split::Sum),
    keyed("unlink", keys::unlink, Split::Sum),
    keyed("exists", keys::exists, Split::Sum),
    keyed("touch", keys::touch, Split::Sum),
    keyed("type", keys::type_, Split::One),
    keyed("rename", keys::rename, Split::Custom(multi::rename)),
    keyed("renamenx", keys::rename, Split::Custom(multi::rename)),
    keyed("copy", keys::copy, Split::Custom(multi::copy)),
    keyed("move", keys::move_, Split::One),
    keyed("object", keys::object, Split::One).with_subcommands(&["encoding", "freq", "help", "idletime", "refcount"]),
    keyed("dump", dump::dump, Split::One),
    keyed("restore", dump::restore, Split::One),
    conn("migrate", migrate::migrate),
    keyed("memory", memory::memory, Split::Computed(memory::reaches_every_shard, memory::stats_job)).with_subcommands(&["doctor", "help", "malloc-stats", "purge", "stats", "usage"]),
    every("keys", keys::keys, Merge::Concat),
    every("dbsize", keys::dbsize, Merge::Sum),
    every("flushdb", keys::flushdb, Merge::Ok),
    every("flushall", keys::flushall, Merge::Ok),
    every("swapdb", keys::swapdb, Merge::Ok),
    conn("randomkey", multi::randomkey),
    conn("scan", multi::scan),
    // Expiry
    keyed("expire", expire::expire, Split::One),
    keyed("pexpire", expire::pexpire, Split::One),
    keyed("expireat", expire::expireat, Split::One),
    keyed("pexpireat", expire::pexpireat, Split::One),
    keyed("ttl", expire::ttl, Split::One),
    keyed("pttl", expire::pttl, Split::One),
    keyed("expiretime", expire::expiretime, Split::One),
    keyed("pexpiretime", expire::pexpiretime, Split::One),
    keyed("persist", expire::persist, Split::One),
    // Connection
    conn("ping", connection::ping),
    conn("echo", connection::echo),
    conn("quit", connection::quit),
    conn("hello", connection::hello),
    conn("auth", connection::auth),
    conn("select", connection::select),
    conn("reset", connection::reset),
    conn("monitor", monitor::monitor),
    conn("client", connection::client).with_subcommands(&["caching", "getname", "getredir", "help", "id", "info", "kill", "list", "no-evict", "pause", "reply", "setname", "tracking", "trackinginfo", "unblock", "unpause"]),
    // Pub/Sub
    conn("subscribe", pubsub::subscribe),
    conn("unsubscribe", pubsub::unsubscribe),
    conn("psubscribe", pubsub::psubscribe),
    conn("punsubscribe", pubsub::punsubscribe),
    conn("publish", pubsub::publish),
    conn("ssubscribe", pubsub::ssubscribe),
    conn("sunsubscribe", pubsub::sunsubscribe),
    conn("spublish", pubsub::spublish),
    conn("pubsub", pubsub::pubsub).with_subcommands(&["channels", "help", "numpat", "numsub"]),
    // Transactions
    conn("multi", transaction::multi),
    conn("exec", transaction::exec),
    conn("discard", transaction::discard),
    conn("watch", transaction::watch),
    conn("unwatch", transaction::unwatch),
    // Server
    conn("command", command::command).with_subcommands(&["count", "docs", "getkeys", "getkeysandflags", "help", "info", "list"]),
    conn("info", server::info),
    conn("config", server::config).with_subcommands(&["get", "help", "resetstat", "rewrite", "set"]),
    conn("time", server::time),
    conn("module", module::module).with_subcommands(&["help", "list", "load", "loadex", "unload"]),
    conn("lolwut", module::lolwut),
    // Scripting
    keyed("eval", scripting::eval, Split::Computed(scripting::declares_no_keys, scripting::across)).with_movable_keys(scripting::eval_keys),
    keyed("evalsha", scripting::evalsha, Split::Computed(scripting::declares_no_keys, scripting::across)).with_movable_keys(scripting::eval_keys),
    keyed("eval_ro", scripting::eval_ro, Split::Computed(scripting::declares_no_keys, scripting::across)).with_movable_keys(scripting::eval_keys),
    keyed("evalsha_ro", scripting::evalsha_ro, Split::Computed(scripting::declares_no_keys, scripting::across)).with_movable_keys(scripting::eval_keys),
    keyed("fcall", scripting::functions::fcall, Split::Computed(scripting::declares_no_keys, scripting::across)).with_movable_keys(scripting::eval_keys),
    keyed("fcall_ro", scripting::functions::fcall_ro, Split::Computed(scripting::declares_no_keys, scripting::across)).with_movable_keys(scripting::eval_keys),
    conn("function", scripting::functions::function).with_subcommands(&["delete", "dump", "flush", "help", "kill", "list", "load", "restore", "stats"]),
    conn("script", scripting::script).with_subcommands(&["debug", "exists", "flush", "help", "kill", "load"]),
    conn("debug", server::debug),
    conn("latency", latency::latency).with_subcommands(&["doctor", "help", "history", "latest", "reset"]),
    conn("slowlog", slowlog::slowlog).with_subcommands(&["get", "help", "len", "reset"]),
    conn("shutdown", server::shutdown),
    conn("lastsave", save::lastsave),
    conn("save", save::save),
    conn("bgsave", save::bgsave),
    conn("bgrewriteaof", aof::bgrewriteaof),
    conn("readonly", server::cluster_disabled),
    conn("readwrite", server::cluster_disabled),
    // Not a cluster node: every CLUSTER subcommand answers that, as a
    // standalone Redis does, and its flags (RESET's noscript) hold.
    conn("cluster", server::cluster).with_subcommands(&["addslots", "addslotsrange", "bumpepoch", "count-failure-reports", "countkeysinslot", "delslots", "delslotsrange", "failover", "flushslots", "forget", "getkeysinslot", "help", "info", "keyslot", "links", "meet", "myid", "nodes", "replicas", "replicate", "reset", "saveconfig", "set-config-epoch", "setslot", "shards", "slaves", "slots"]),
    // Replication
    conn("replconf", replication::replconf),
    conn("psync", replication::psync),
    conn("sync", replication::sync),
    conn("replicaof", replication::replicaof),
    conn("slaveof", replication::replicaof),
    conn("role", replication::role),
    conn("wait", replication::wait),
    conn("failover", replication::failover::failover),
    // Access control
    conn("acl", acl::acl).with_subcommands(&["cat", "deluser", "dryrun", "genpass", "getuser", "help", "list", "load", "log", "save", "setuser", "users", "whoami"]),
];

/// The name index has 2^INDEX_BITS slots, over four times the commands, so
/// probes are short.
const INDEX_BITS: u32 = 10;
const INDEX_SLOTS: usize = 1 << INDEX_BITS;

/// The name index's hash: case-folded as it is read (`| 0x20` maps each
/// ASCII letter to its lower case), so a name is neither copied nor
/// lowered first. Other bytes fold too; the comparison after the probe is
/// exact.
fn name_hash(name: &[u8]) -> usize {
    let mut h = name.len() as u32;
    for &b in name {
        h = h.wrapping_mul(31).wrapping_add(u32::from(b | 0x20));
    }
    // Fibonacci hashing: the top bits of the product mix every input bit.
    (h.wrapping_mul(0x9E37_79B1) >> (32 - INDEX_BITS)) as usize
}

/// Finds a command by name, case-insensitively.
pub fn lookup(name: &[u8]) -> Option<&'static CommandSpec> {
    // Every request looks its command up: an open-addressed table of
    // command ids probed with a hash that folds case on the fly (a HashMap
    // over a lowered copy of the name cost several percent of a pipelined
    // SET's CPU).
    const EMPTY: u16 = u16::MAX;
    static INDEX: OnceLock<Vec<u16>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        assert!(COMMANDS.len() * 4 <= INDEX_SLOTS);
        let mut slots = vec![EMPTY; INDEX_SLOTS];
        for (id, c) in COMMANDS.iter().enumerate() {
            let mut at = name_hash(c.name.as_bytes());
            while slots[at] != EMPTY {
                at = (at + 1) % INDEX_SLOTS;
            }
            slots[at] = id as u16;
        }
        slots
    });
    let mut at = name_hash(name);
    loop {
        let spec = COMMANDS.get(usize::from(index[at]))?;
        if spec.name.as_bytes().eq_ignore_ascii_case(name) {
            return Some(spec);
        }
        at = (at + 1) % INDEX_SLOTS;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_places_in_the_table() {
        for (i, c) in COMMANDS.iter().enumerate() {
            assert_eq!(c.id(), i);
        }
        assert_eq!(lookup(b"GET").unwrap().id(), lookup(b"get").unwrap().id());
        for c in COMMANDS {
            assert_eq!(lookup(c.name.as_bytes()).map(|f| f.id()), Some(c.id()));
            let upper = c.name.to_ascii_uppercase();
            assert_eq!(lookup(upper.as_bytes()).map(|f| f.id()), Some(c.id()));
        }
        // Bytes that fold to a name's hash but are not the name.
        for name in [&b"GE\x14"[..], b"", b"gett", b"ge", &[0xc7, 0xc5, 0xd4]] {
            assert!(lookup(name).is_none(), "{name:?}");
        }
        let containers: Vec<&str> = COMMANDS
            .iter()
            .filter(|c| c.container)
            .map(|c| c.name)
            .collect();
        assert_eq!(
            containers,
            [
                "xinfo", "xgroup", "object", "memory", "client", "pubsub", "command", "config",
                "module", "function", "script", "latency", "slowlog", "cluster", "acl"
            ]
        );
    }

    #[test]
    fn every_row_has_metadata_and_every_metadata_a_row() {
        assert_eq!(COMMANDS.len(), meta::META.len());
        for (row, meta) in COMMANDS.iter().zip(&meta::META) {
            // The generated data follows the table's order, and each row
            // was joined to its own entry.
            assert_eq!(row.name, meta.name);
            assert!(std::ptr::eq(row.meta, meta), "{}", row.name);
            assert_eq!(row.arity, meta.arity);
            assert_eq!(row.flags, meta.flags);
            assert_eq!(
                (row.first_key, row.last_key, row.step),
                (meta.first_key, meta.last_key, meta.step)
            );
            assert_eq!(row.container, !meta.subcommands.is_empty());
        }
    }

    #[test]
    fn computed_key_positions_are_redis_movable_keys() {
        for row in COMMANDS {
            let movable = row.flags.contains(CommandFlags::MOVABLEKEYS);
            let keyed = matches!(row.route, Route::Keyed(..));
            assert_eq!(row.movable.is_some(), movable && keyed, "{}", row.name);
        }
    }

    /// The keys routing finds are the keys Redis's key specs name, for
    /// every keyed command at a few argument counts, and for the commands
    /// that count their keys on sample arguments.
    #[test]
    fn routing_keys_are_the_key_specs_keys() {
        let argv = |words: &[&str]| -> Vec<Bytes> {
            words
                .iter()
                .map(|w| Bytes::copy_from_slice(w.as_bytes()))
                .collect()
        };
        let spec_keys = |row: &CommandSpec, argv: &[Bytes]| -> Vec<usize> {
            let meta = match row.container {
                true => row.meta.subcommand(&argv[1]).unwrap(),
                false => row.meta,
            };
            let mut keys: Vec<usize> = meta::keys::command_keys(meta, argv)
                .unwrap_or_default()
                .into_iter()
                .map(|(p, _)| p)
                .collect();
            keys.sort();
            keys.dedup();
            keys
        };
        let routed = |row: &CommandSpec, argv: &[Bytes]| -> Vec<usize> {
            let mut keys: Vec<usize> = row.key_positions(argv).collect();
            keys.sort();
            keys
        };
        for row in COMMANDS {
            if !matches!(row.route, Route::Keyed(..)) || row.movable.is_some() || row.container {
                continue;
            }
            let base = row.arity.unsigned_abs() as usize;
            let extra = if row.arity < 0 { 4 } else { 0 };
            for argc in base..=base + extra {
                let mut words = vec![row.name.to_string()];
                words.extend((1..argc).map(|i| format!("a{i}")));
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                let argv = argv(&words);
                assert_eq!(routed(row, &argv), spec_keys(row, &argv), "{words:?}");
            }
        }
        for words in [
            &["object", "encoding", "k"][..],
            &["object", "help"],
            &["lmpop", "2", "a", "b", "left"],
            &["blmpop", "0", "2", "a", "b", "left", "count", "2"],
            &["bzmpop", "0", "1", "a", "min"],
            &["sintercard", "3", "a", "b", "c", "limit", "1"],
            &["zmpop", "2", "a", "b", "max"],
            &["zunion", "2", "a", "b", "weights", "1", "2"],
            &["zinter", "1", "a", "withscores"],
            &["zdiff", "3", "a", "b", "c"],
            &["zintercard", "2", "a", "b"],
            &["zunionstore", "d", "2", "a", "b", "aggregate", "max"],
            &["zinterstore", "d", "1", "a"],
            &["zdiffstore", "d", "2", "a", "b"],
            &["georadius", "k", "1", "2", "3", "km"],
            &[
                "georadius",
                "k",
                "1",
                "2",
                "3",
                "km",
                "count",
                "2",
                "store",
                "d",
            ],
            &[
                "georadiusbymember",
                "k",
                "m",
                "3",
                "km",
                "asc",
                "storedist",
                "d",
            ],
        ] {
            let row = lookup(words[0].as_bytes()).unwrap();
            let argv = argv(words);
            assert_eq!(routed(row, &argv), spec_keys(row, &argv), "{words:?}");
        }
    }

    #[test]
    fn names_are_unique_and_lowercase() {
        let mut seen = std::collections::HashSet::new();
        for c in COMMANDS {
            assert!(seen.insert(c.name), "duplicate {}", c.name);
            assert_eq!(c.name, c.name.to_ascii_lowercase());
        }
    }

    #[test]
    fn key_positions_follow_first_last_step() {
        let mset = lookup(b"MSET").unwrap();
        let argv = |words: &[&'static str]| -> Vec<Bytes> {
            words
                .iter()
                .map(|w| Bytes::from_static(w.as_bytes()))
                .collect()
        };
        let mset_argv = argv(&["mset", "a", "1", "b", "2", "c", "3"]);
        assert_eq!(
            mset.key_positions(&mset_argv).collect::<Vec<_>>(),
            vec![1, 3, 5]
        );
        let get = lookup(b"get").unwrap();
        assert_eq!(
            get.key_positions(&argv(&["get", "k"])).collect::<Vec<_>>(),
            vec![1]
        );
        let object = lookup(b"object").unwrap();
        assert_eq!(
            object.key_positions(&argv(&["object", "help"])).count(),
            0,
            "OBJECT HELP has no key"
        );
        assert!(lookup(b"nosuchcommand").is_none());
    }

    #[test]
    fn numkeys_positions_read_the_count() {
        let argv = |words: &[&'static str]| -> Vec<Bytes> {
            words
                .iter()
                .map(|w| Bytes::from_static(w.as_bytes()))
                .collect()
        };
        let zunion = argv(&["zunionstore", "d", "2", "a", "b", "weights", "1", "2"]);
        assert_eq!(numkeys_positions(&zunion, &[1], 2), vec![1, 3, 4]);
        let lmpop = argv(&["lmpop", "2", "a", "b", "left"]);
        assert_eq!(numkeys_positions(&lmpop, &[], 1), vec![2, 3]);
        assert!(numkeys_positions(&argv(&["lmpop", "5", "a", "left"]), &[], 1).is_empty());
        assert!(numkeys_positions(&argv(&["lmpop", "x", "a", "left"]), &[], 1).is_empty());
        assert!(numkeys_positions(&argv(&["lmpop", "0", "a", "left"]), &[], 1).is_empty());
        let huge = argv(&["zdiffstore", "d", "18446744073709551615", "a"]);
        assert!(numkeys_positions(&huge, &[1], 2).is_empty());
        let huge = argv(&["lmpop", "18446744073709551615", "a", "left"]);
        assert!(numkeys_positions(&huge, &[], 1).is_empty());
    }

    #[test]
    fn arity_rules() {
        let get = lookup(b"get").unwrap();
        assert!(get.arity_ok(2) && !get.arity_ok(3));
        let set = lookup(b"set").unwrap();
        assert!(set.arity_ok(3) && set.arity_ok(9) && !set.arity_ok(2));
    }
}
