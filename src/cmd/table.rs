//! The command table: one row per command. Dispatch, key routing, arity
//! errors and COMMAND INFO/DOCS/LIST all read from it.

use std::sync::OnceLock;

use bytes::Bytes;

use super::args::Reply;
use super::list_edit;
use super::list_move;
use super::{
    blocking, connection, container, dump, expire, hash, hash_ttl, keys, latency, list, multi,
    pubsub, server, set, strings, transaction, zset, Ctx, Session,
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

pub struct CommandSpec {
    pub name: &'static str,
    /// Redis arity: N exact, -N at least N (the name counts).
    pub arity: i32,
    pub flags: &'static [&'static str],
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
    pub group: &'static str,
    pub since: &'static str,
    pub summary: &'static str,
    pub route: Route,
    /// Key positions read from the arguments (`numkeys` commands such as
    /// ZUNION or LMPOP), replacing first/last/step.
    pub movable: Option<KeysFn>,
    /// A container of subcommands (CONFIG GET ...): Redis names it
    /// `config|get` in errors, CLIENT LIST and its statistics.
    pub container: bool,
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
        let argc = argv.len() as i32;
        let first = self.first_key;
        let last = if self.last_key < 0 {
            argc + self.last_key
        } else {
            self.last_key.min(argc - 1)
        };
        let step = self.step.max(1);
        let valid = first > 0 && first < argc && last >= first;
        let range = if valid {
            first as usize..last as usize + 1
        } else {
            0..0
        };
        KeyPositions::Range(range.step_by(step as usize))
    }

    /// The row with its keys computed from the arguments (see `movable`).
    pub const fn with_movable_keys(mut self, keys: KeysFn) -> CommandSpec {
        self.movable = Some(keys);
        self
    }

    /// The row of a container of subcommands (see `container`).
    pub const fn with_subcommands(mut self) -> CommandSpec {
        self.container = true;
        self
    }

    /// The command's place in [`COMMANDS`], for tables indexed by command
    /// (statistics). Requires: `self` is a row of [`COMMANDS`], as every
    /// spec [`lookup`] returns is.
    pub fn id(&'static self) -> usize {
        let offset = self as *const CommandSpec as usize - COMMANDS.as_ptr() as usize;
        let id = offset / std::mem::size_of::<CommandSpec>();
        debug_assert!(std::ptr::eq(&COMMANDS[id], self));
        id
    }

    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.contains(&flag)
    }
}

const W: &[&str] = &["write", "denyoom"];
const WF: &[&str] = &["write", "denyoom", "fast"];
const WD: &[&str] = &["write"];
const WDF: &[&str] = &["write", "fast"];
const R: &[&str] = &["readonly"];
const RF: &[&str] = &["readonly", "fast"];
const ADMIN: &[&str] = &["admin", "noscript", "loading", "stale"];
const CONN: &[&str] = &["noscript", "loading", "stale", "fast"];
/// Blocking commands (their handler is the immediate attempt; `dispatch` blocks).
const BLOCK: &[&str] = &["write", "noscript", "blocking"];

// Each row of the table is one call, so the constructors take every column.
#[allow(clippy::too_many_arguments)]
#[rustfmt::skip]
const fn keyed(name: &'static str, arity: i32, flags: &'static [&'static str], keys: (i32, i32, i32), group: &'static str, since: &'static str, summary: &'static str, h: Handler, split: Split) -> CommandSpec {
    CommandSpec { name, arity, flags, first_key: keys.0, last_key: keys.1, step: keys.2, group, since, summary, route: Route::Keyed(h, split), movable: None, container: false }
}

#[allow(clippy::too_many_arguments)]
#[rustfmt::skip]
const fn every(name: &'static str, arity: i32, flags: &'static [&'static str], group: &'static str, since: &'static str, summary: &'static str, h: Handler, merge: Merge) -> CommandSpec {
    CommandSpec { name, arity, flags, first_key: 0, last_key: 0, step: 0, group, since, summary, route: Route::EveryShard(h, merge), movable: None, container: false }
}

#[rustfmt::skip]
const fn conn(name: &'static str, arity: i32, flags: &'static [&'static str], group: &'static str, since: &'static str, summary: &'static str, h: ConnHandler) -> CommandSpec {
    CommandSpec { name, arity, flags, first_key: 0, last_key: 0, step: 0, group, since, summary, route: Route::Conn(h), movable: None, container: false }
}

const ONE: (i32, i32, i32) = (1, 1, 1);
const TWO: (i32, i32, i32) = (1, 2, 1);
const ALL: (i32, i32, i32) = (1, -1, 1);

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    // Strings
    keyed("get", 2, RF, ONE, "string", "1.0.0", "Returns the string value of a key.", strings::get, Split::One),
    keyed("set", -3, W, ONE, "string", "1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", strings::set, Split::One),
    keyed("setnx", 3, WF, ONE, "string", "1.0.0", "Set the string value of a key only when the key doesn't exist.", strings::setnx, Split::One),
    keyed("setex", 4, W, ONE, "string", "2.0.0", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", strings::setex, Split::One),
    keyed("psetex", 4, W, ONE, "string", "2.6.0", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", strings::psetex, Split::One),
    keyed("getset", 3, WF, ONE, "string", "1.0.0", "Returns the previous string value of a key after setting it to a new value.", strings::getset, Split::One),
    keyed("getdel", 2, WDF, ONE, "string", "6.2.0", "Returns the string value of a key after deleting the key.", strings::getdel, Split::One),
    keyed("getex", -2, WDF, ONE, "string", "6.2.0", "Returns the string value of a key after setting its expiration time.", strings::getex, Split::One),
    keyed("mget", -2, RF, ALL, "string", "1.0.0", "Atomically returns the string values of one or more keys.", strings::mget, Split::Gather),
    keyed("mset", -3, W, (1, -1, 2), "string", "1.0.1", "Atomically creates or modifies the string values of one or more keys.", strings::mset, Split::Pairs),
    keyed("msetnx", -3, W, (1, -1, 2), "string", "1.0.1", "Atomically modifies the string values of one or more keys only when all keys don't exist.", strings::msetnx, Split::Custom(multi::msetnx)),
    keyed("incr", 2, WF, ONE, "string", "1.0.0", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", strings::incr, Split::One),
    keyed("decr", 2, WF, ONE, "string", "1.0.0", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", strings::decr, Split::One),
    keyed("incrby", 3, WF, ONE, "string", "1.0.0", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", strings::incrby, Split::One),
    keyed("decrby", 3, WF, ONE, "string", "1.0.0", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", strings::decrby, Split::One),
    keyed("incrbyfloat", 3, WF, ONE, "string", "2.6.0", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", strings::incrbyfloat, Split::One),
    keyed("append", 3, WF, ONE, "string", "2.0.0", "Appends a string to the value of a key. Creates the key if it doesn't exist.", strings::append, Split::One),
    keyed("strlen", 2, RF, ONE, "string", "2.2.0", "Returns the length of a string value.", strings::strlen, Split::One),
    keyed("getrange", 4, R, ONE, "string", "2.4.0", "Returns a substring of the string stored at a key.", strings::getrange, Split::One),
    keyed("substr", 4, R, ONE, "string", "1.0.0", "Returns a substring from a string value.", strings::getrange, Split::One),
    keyed("setrange", 4, W, ONE, "string", "2.2.0", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", strings::setrange, Split::One),
    keyed("lcs", -3, R, TWO, "string", "7.0.0", "Finds the longest common substring.", strings::lcs, Split::Custom(multi::lcs)),
    // Lists
    keyed("lpush", -3, WF, ONE, "list", "1.0.0", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", list::lpush, Split::One),
    keyed("rpush", -3, WF, ONE, "list", "1.0.0", "Appends one or more elements to a list. Creates the key if it doesn't exist.", list::rpush, Split::One),
    keyed("lpushx", -3, WF, ONE, "list", "2.2.0", "Prepends one or more elements to a list only when the list exists.", list::lpushx, Split::One),
    keyed("rpushx", -3, WF, ONE, "list", "2.2.0", "Appends an element to a list only when the list exists.", list::rpushx, Split::One),
    keyed("lpop", -2, WDF, ONE, "list", "1.0.0", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", list::lpop, Split::One),
    keyed("rpop", -2, WDF, ONE, "list", "1.0.0", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", list::rpop, Split::One),
    keyed("llen", 2, RF, ONE, "list", "1.0.0", "Returns the length of a list.", list::llen, Split::One),
    keyed("lrange", 4, R, ONE, "list", "1.0.0", "Returns a range of elements from a list.", list::lrange, Split::One),
    keyed("lindex", 3, R, ONE, "list", "1.0.0", "Returns an element from a list by its index.", list::lindex, Split::One),
    keyed("lset", 4, W, ONE, "list", "1.0.0", "Sets the value of an element in a list by its index.", list_edit::lset, Split::One),
    keyed("linsert", 5, W, ONE, "list", "2.2.0", "Inserts an element before or after another element in a list.", list_edit::linsert, Split::One),
    keyed("lrem", 4, WD, ONE, "list", "1.0.0", "Removes elements from a list. Deletes the list if the last element was removed.", list_edit::lrem, Split::One),
    keyed("ltrim", 4, WD, ONE, "list", "1.0.0", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", list_edit::ltrim, Split::One),
    keyed("lpos", -3, R, ONE, "list", "6.0.6", "Returns the index of matching elements in a list.", list_edit::lpos, Split::One),
    keyed("lmove", 5, W, TWO, "list", "6.2.0", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", list_move::lmove, Split::Custom(list_move::lmove_across)),
    keyed("rpoplpush", 3, W, TWO, "list", "1.2.0", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", list_move::lmove, Split::Custom(list_move::lmove_across)),
    keyed("lmpop", -4, &["write", "movablekeys"], (0, 0, 0), "list", "7.0.0", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", list_move::lmpop, Split::Custom(list_move::lmpop_across)).with_movable_keys(list_move::lmpop_keys),
    // Hashes
    keyed("hset", -4, WF, ONE, "hash", "2.0.0", "Creates or modifies the value of a field in a hash.", hash::hset, Split::One),
    keyed("hmset", -4, WF, ONE, "hash", "2.0.0", "Sets the values of multiple fields.", hash::hmset, Split::One),
    keyed("hsetnx", 4, WF, ONE, "hash", "2.0.0", "Sets the value of a field in a hash only when the field doesn't exist.", hash::hsetnx, Split::One),
    keyed("hget", 3, RF, ONE, "hash", "2.0.0", "Returns the value of a field in a hash.", hash::hget, Split::One),
    keyed("hmget", -3, RF, ONE, "hash", "2.0.0", "Returns the values of all fields in a hash.", hash::hmget, Split::One),
    keyed("hdel", -3, WDF, ONE, "hash", "2.0.0", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", hash::hdel, Split::One),
    keyed("hlen", 2, RF, ONE, "hash", "2.0.0", "Returns the number of fields in a hash.", hash::hlen, Split::One),
    keyed("hexists", 3, RF, ONE, "hash", "2.0.0", "Determines whether a field exists in a hash.", hash::hexists, Split::One),
    keyed("hstrlen", 3, RF, ONE, "hash", "3.2.0", "Returns the length of the value of a field.", hash::hstrlen, Split::One),
    keyed("hkeys", 2, R, ONE, "hash", "2.0.0", "Returns all fields in a hash.", hash::hkeys, Split::One),
    keyed("hvals", 2, R, ONE, "hash", "2.0.0", "Returns all values in a hash.", hash::hvals, Split::One),
    keyed("hgetall", 2, R, ONE, "hash", "2.0.0", "Returns all fields and values in a hash.", hash::hgetall, Split::One),
    keyed("hincrby", 4, WF, ONE, "hash", "2.0.0", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", hash::hincrby, Split::One),
    keyed("hincrbyfloat", 4, WF, ONE, "hash", "2.6.0", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", hash::hincrbyfloat, Split::One),
    keyed("hrandfield", -2, R, ONE, "hash", "6.2.0", "Returns one or more random fields from a hash.", container::hrandfield, Split::One),
    keyed("hscan", -3, R, ONE, "hash", "2.8.0", "Iterates over fields and values of a hash.", container::hscan, Split::One),
    // Hash field expiry
    keyed("hexpire", -6, WF, ONE, "hash", "7.4.0", "Set expiry for hash field using relative time to expire (seconds)", hash_ttl::hexpire, Split::One),
    keyed("hpexpire", -6, WF, ONE, "hash", "7.4.0", "Set expiry for hash field using relative time to expire (milliseconds)", hash_ttl::hpexpire, Split::One),
    keyed("hexpireat", -6, WF, ONE, "hash", "7.4.0", "Set expiry for hash field using an absolute Unix timestamp (seconds)", hash_ttl::hexpireat, Split::One),
    keyed("hpexpireat", -6, WF, ONE, "hash", "7.4.0", "Set expiry for hash field using an absolute Unix timestamp (milliseconds)", hash_ttl::hpexpireat, Split::One),
    keyed("httl", -5, RF, ONE, "hash", "7.4.0", "Returns the TTL in seconds of a hash field.", hash_ttl::httl, Split::One),
    keyed("hpttl", -5, RF, ONE, "hash", "7.4.0", "Returns the TTL in milliseconds of a hash field.", hash_ttl::hpttl, Split::One),
    keyed("hexpiretime", -5, RF, ONE, "hash", "7.4.0", "Returns the expiration time of a hash field as a Unix timestamp, in seconds.", hash_ttl::hexpiretime, Split::One),
    keyed("hpexpiretime", -5, RF, ONE, "hash", "7.4.0", "Returns the expiration time of a hash field as a Unix timestamp, in msec.", hash_ttl::hpexpiretime, Split::One),
    keyed("hpersist", -5, WDF, ONE, "hash", "7.4.0", "Removes the expiration time for each specified field", hash_ttl::hpersist, Split::One),
    // Sets
    keyed("sadd", -3, WF, ONE, "set", "1.0.0", "Adds one or more members to a set. Creates the key if it doesn't exist.", set::sadd, Split::One),
    keyed("srem", -3, WDF, ONE, "set", "1.0.0", "Removes one or more members from a set. Deletes the set if the last member was removed.", set::srem, Split::One),
    keyed("scard", 2, RF, ONE, "set", "1.0.0", "Returns the number of members in a set.", set::scard, Split::One),
    keyed("sismember", 3, RF, ONE, "set", "1.0.0", "Determines whether a member belongs to a set.", set::sismember, Split::One),
    keyed("smismember", -3, RF, ONE, "set", "6.2.0", "Determines whether multiple members belong to a set.", set::smismember, Split::One),
    keyed("smembers", 2, R, ONE, "set", "1.0.0", "Returns all members of a set.", set::smembers, Split::One),
    keyed("spop", -2, WDF, ONE, "set", "1.0.0", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", set::spop, Split::One),
    keyed("srandmember", -2, R, ONE, "set", "1.0.0", "Get one or multiple random members from a set", container::srandmember, Split::One),
    keyed("smove", 4, WDF, TWO, "set", "1.0.0", "Moves a member from one set to another.", set::smove, Split::Custom(set::smove_job)),
    keyed("sinter", -2, R, ALL, "set", "1.0.0", "Returns the intersect of multiple sets.", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sintercard", -3, &["readonly", "movablekeys"], (0, 0, 0), "set", "7.0.0", "Returns the number of members of the intersect of multiple sets.", set::algebra, Split::Custom(set::algebra_job)).with_movable_keys(set::sintercard_keys),
    keyed("sinterstore", -3, W, ALL, "set", "1.0.0", "Stores the intersect of multiple sets in a key.", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sunion", -2, R, ALL, "set", "1.0.0", "Returns the union of multiple sets.", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sunionstore", -3, W, ALL, "set", "1.0.0", "Stores the union of multiple sets in a key.", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sdiff", -2, R, ALL, "set", "1.0.0", "Returns the difference of multiple sets.", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sdiffstore", -3, W, ALL, "set", "1.0.0", "Stores the difference of multiple sets in a key.", set::algebra, Split::Custom(set::algebra_job)),
    keyed("sscan", -3, R, ONE, "set", "2.8.0", "Iterates over members of a set.", container::sscan, Split::One),
    // Sorted sets
    keyed("zadd", -4, WF, ONE, "sorted-set", "1.2.0", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", zset::zadd, Split::One),
    keyed("zincrby", 4, WF, ONE, "sorted-set", "1.2.0", "Increments the score of a member in a sorted set.", zset::zincrby, Split::One),
    keyed("zrem", -3, WDF, ONE, "sorted-set", "1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", zset::zrem, Split::One),
    keyed("zscore", 3, RF, ONE, "sorted-set", "1.2.0", "Returns the score of a member in a sorted set.", zset::zscore, Split::One),
    keyed("zmscore", -3, RF, ONE, "sorted-set", "6.2.0", "Returns the score of one or more members in a sorted set.", zset::zmscore, Split::One),
    keyed("zcard", 2, RF, ONE, "sorted-set", "1.2.0", "Returns the number of members in a sorted set.", zset::zcard, Split::One),
    keyed("zcount", 4, RF, ONE, "sorted-set", "2.0.0", "Returns the count of members in a sorted set that have scores within a range.", zset::zcount, Split::One),
    keyed("zlexcount", 4, RF, ONE, "sorted-set", "2.8.9", "Returns the number of members in a sorted set within a lexicographical range.", zset::zlexcount, Split::One),
    keyed("zrank", 3, RF, ONE, "sorted-set", "2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores.", zset::zrank, Split::One),
    keyed("zrevrank", 3, RF, ONE, "sorted-set", "2.0.0", "Returns the index of a member in a sorted set ordered by descending scores.", zset::zrevrank, Split::One),
    keyed("zrange", -4, R, ONE, "sorted-set", "1.2.0", "Returns members in a sorted set within a range of indexes.", zset::range::zrange, Split::One),
    keyed("zrangestore", -5, W, TWO, "sorted-set", "6.2.0", "Stores a range of members from sorted set in a key.", zset::range::zrangestore, Split::Custom(zset::range::zrangestore_job)),
    keyed("zrevrange", -4, R, ONE, "sorted-set", "1.2.0", "Returns members in a sorted set within a range of indexes in reverse order.", zset::range::zrevrange, Split::One),
    keyed("zrangebyscore", -4, R, ONE, "sorted-set", "1.0.5", "Returns members in a sorted set within a range of scores.", zset::range::zrangebyscore, Split::One),
    keyed("zrevrangebyscore", -4, R, ONE, "sorted-set", "2.2.0", "Returns members in a sorted set within a range of scores in reverse order.", zset::range::zrevrangebyscore, Split::One),
    keyed("zrangebylex", -4, R, ONE, "sorted-set", "2.8.9", "Returns members in a sorted set within a lexicographical range.", zset::range::zrangebylex, Split::One),
    keyed("zrevrangebylex", -4, R, ONE, "sorted-set", "2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order.", zset::range::zrevrangebylex, Split::One),
    keyed("zremrangebyscore", 4, WD, ONE, "sorted-set", "1.2.0", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", zset::range::zremrangebyscore, Split::One),
    keyed("zremrangebyrank", 4, WD, ONE, "sorted-set", "2.0.0", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", zset::range::zremrangebyrank, Split::One),
    keyed("zremrangebylex", 4, WD, ONE, "sorted-set", "2.8.9", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", zset::range::zremrangebylex, Split::One),
    keyed("zpopmin", -2, WDF, ONE, "sorted-set", "5.0.0", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", zset::pop::zpopmin, Split::One),
    keyed("zpopmax", -2, WDF, ONE, "sorted-set", "5.0.0", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", zset::pop::zpopmax, Split::One),
    keyed("zmpop", -4, &["write", "movablekeys"], (0, 0, 0), "sorted-set", "7.0.0", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", zset::pop::zmpop, Split::Custom(zset::pop::zmpop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zunion", -3, &["readonly", "movablekeys"], (0, 0, 0), "sorted-set", "6.2.0", "Returns the union of multiple sorted sets.", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zinter", -3, &["readonly", "movablekeys"], (0, 0, 0), "sorted-set", "6.2.0", "Returns the intersect of multiple sorted sets.", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zdiff", -3, &["readonly", "movablekeys"], (0, 0, 0), "sorted-set", "6.2.0", "Returns the difference between multiple sorted sets.", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zintercard", -3, &["readonly", "movablekeys"], (0, 0, 0), "sorted-set", "7.0.0", "Returns the number of members of the intersect of multiple sorted sets.", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::numkeys_at_1),
    keyed("zunionstore", -4, &["write", "denyoom", "movablekeys"], ONE, "sorted-set", "2.0.0", "Stores the union of multiple sorted sets in a key.", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::dst_and_numkeys_at_2),
    keyed("zinterstore", -4, &["write", "denyoom", "movablekeys"], ONE, "sorted-set", "2.0.0", "Stores the intersect of multiple sorted sets in a key.", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::dst_and_numkeys_at_2),
    keyed("zdiffstore", -4, &["write", "denyoom", "movablekeys"], ONE, "sorted-set", "6.2.0", "Stores the difference of multiple sorted sets in a key.", zset::setop::zsetop, Split::Custom(zset::setop::zsetop_job)).with_movable_keys(zset::dst_and_numkeys_at_2),
    // Blocking (the handler is the immediate attempt, all that runs in EXEC)
    keyed("blpop", -3, BLOCK, (1, -2, 1), "list", "2.0.0", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blocking::immediate, Split::Custom(blocking::across)),
    keyed("brpop", -3, BLOCK, (1, -2, 1), "list", "2.0.0", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blocking::immediate, Split::Custom(blocking::across)),
    keyed("blmove", 6, &["write", "denyoom", "noscript", "blocking"], TWO, "list", "6.2.0", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", blocking::immediate, Split::Custom(blocking::across)),
    keyed("brpoplpush", 4, &["write", "denyoom", "noscript", "blocking"], TWO, "list", "2.2.0", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", blocking::immediate, Split::Custom(blocking::across)),
    keyed("blmpop", -5, &["write", "blocking", "movablekeys"], (0, 0, 0), "list", "7.0.0", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blocking::immediate, Split::Custom(blocking::across)).with_movable_keys(blocking::numkeys_at_2),
    keyed("bzpopmin", -3, &["write", "noscript", "blocking", "fast"], (1, -2, 1), "sorted-set", "5.0.0", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", blocking::immediate, Split::Custom(blocking::across)),
    keyed("bzpopmax", -3, &["write", "noscript", "blocking", "fast"], (1, -2, 1), "sorted-set", "5.0.0", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise. Deletes the sorted set if the last element was popped.", blocking::immediate, Split::Custom(blocking::across)),
    keyed("bzmpop", -5, &["write", "blocking", "movablekeys"], (0, 0, 0), "sorted-set", "7.0.0", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", blocking::immediate, Split::Custom(blocking::across)).with_movable_keys(blocking::numkeys_at_2),
    keyed("zrandmember", -2, R, ONE, "sorted-set", "6.2.0", "Returns one or more random members from a sorted set.", container::zrandmember, Split::One),
    keyed("zscan", -3, R, ONE, "sorted-set", "2.8.0", "Iterates over members and scores of a sorted set.", container::zscan, Split::One),
    // Keyspace
    keyed("del", -2, WD, ALL, "generic", "1.0.0", "Deletes one or more keys.", keys::del, Split::Sum),
    keyed("unlink", -2, WDF, ALL, "generic", "4.0.0", "Asynchronously deletes one or more keys.", keys::unlink, Split::Sum),
    keyed("exists", -2, RF, ALL, "generic", "1.0.0", "Determines whether one or more keys exist.", keys::exists, Split::Sum),
    keyed("touch", -2, RF, ALL, "generic", "3.2.1", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", keys::touch, Split::Sum),
    keyed("type", 2, RF, ONE, "generic", "1.0.0", "Determines the type of value stored at a key.", keys::type_, Split::One),
    keyed("rename", 3, WD, TWO, "generic", "1.0.0", "Renames a key and overwrites the destination.", keys::rename, Split::Custom(multi::rename)),
    keyed("renamenx", 3, WDF, TWO, "generic", "1.0.0", "Renames a key only when the target key name doesn't exist.", keys::rename, Split::Custom(multi::rename)),
    keyed("copy", -3, W, TWO, "generic", "6.2.0", "Copies the value of a key to a new key.", keys::copy, Split::Custom(multi::copy)),
    keyed("move", 3, WDF, ONE, "generic", "1.0.0", "Moves a key to another database.", keys::move_, Split::One),
    keyed("object", -2, R, (2, 2, 1), "generic", "2.2.3", "A container for object introspection commands.", keys::object, Split::One).with_subcommands(),
    keyed("dump", 2, R, ONE, "generic", "2.6.0", "Return a serialized version of the value stored at the specified key.", dump::dump, Split::One),
    keyed("restore", -4, W, ONE, "generic", "2.6.0", "Create a key using the provided serialized value, previously obtained using DUMP.", dump::restore, Split::One),
    every("keys", 2, R, "generic", "1.0.0", "Returns all key names that match a pattern.", keys::keys, Merge::Concat),
    every("dbsize", 1, RF, "server", "1.0.0", "Returns the number of keys in the database.", keys::dbsize, Merge::Sum),
    every("flushdb", -1, WD, "server", "1.0.0", "Removes all keys from the current database.", keys::flushdb, Merge::Ok),
    every("flushall", -1, WD, "server", "1.0.0", "Removes all keys from all databases.", keys::flushall, Merge::Ok),
    every("swapdb", 3, WDF, "server", "4.0.0", "Swaps two Redis databases.", keys::swapdb, Merge::Ok),
    conn("randomkey", 1, R, "generic", "1.0.0", "Returns a random key name from the database.", multi::randomkey),
    conn("scan", -2, R, "generic", "2.8.0", "Iterates over the key names in the database.", multi::scan),
    // Expiry
    keyed("expire", -3, WDF, ONE, "generic", "1.0.0", "Sets the expiration time of a key in seconds.", expire::expire, Split::One),
    keyed("pexpire", -3, WDF, ONE, "generic", "2.6.0", "Sets the expiration time of a key in milliseconds.", expire::pexpire, Split::One),
    keyed("expireat", -3, WDF, ONE, "generic", "1.2.0", "Sets the expiration time of a key to a Unix timestamp.", expire::expireat, Split::One),
    keyed("pexpireat", -3, WDF, ONE, "generic", "2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp.", expire::pexpireat, Split::One),
    keyed("ttl", 2, RF, ONE, "generic", "1.0.0", "Returns the expiration time in seconds of a key.", expire::ttl, Split::One),
    keyed("pttl", 2, RF, ONE, "generic", "2.6.0", "Returns the expiration time in milliseconds of a key.", expire::pttl, Split::One),
    keyed("expiretime", 2, RF, ONE, "generic", "7.0.0", "Returns the expiration time of a key as a Unix timestamp.", expire::expiretime, Split::One),
    keyed("pexpiretime", 2, RF, ONE, "generic", "7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp.", expire::pexpiretime, Split::One),
    keyed("persist", 2, WDF, ONE, "generic", "2.2.0", "Removes the expiration time of a key.", expire::persist, Split::One),
    // Connection
    conn("ping", -1, CONN, "connection", "1.0.0", "Returns the server's liveliness response.", connection::ping),
    conn("echo", 2, CONN, "connection", "1.0.0", "Returns the given string.", connection::echo),
    conn("quit", -1, CONN, "connection", "1.0.0", "Closes the connection.", connection::quit),
    conn("hello", -1, CONN, "connection", "6.0.0", "Handshakes with the Redis server.", connection::hello),
    conn("auth", -2, CONN, "connection", "1.0.0", "Authenticates the connection.", connection::auth),
    conn("select", 2, CONN, "connection", "1.0.0", "Changes the selected database.", connection::select),
    conn("reset", 1, CONN, "connection", "6.2.0", "Resets the connection.", connection::reset),
    conn("client", -2, &["admin", "noscript", "loading", "stale"], "connection", "2.4.0", "A container for client connection commands.", connection::client).with_subcommands(),
    // Pub/Sub
    conn("subscribe", -2, &["pubsub", "noscript", "loading", "stale"], "pubsub", "2.0.0", "Listens for messages published to channels.", pubsub::subscribe),
    conn("unsubscribe", -1, &["pubsub", "noscript", "loading", "stale"], "pubsub", "2.0.0", "Stops listening to messages posted to channels.", pubsub::unsubscribe),
    conn("psubscribe", -2, &["pubsub", "noscript", "loading", "stale"], "pubsub", "2.0.0", "Listens for messages published to channels that match one or more patterns.", pubsub::psubscribe),
    conn("punsubscribe", -1, &["pubsub", "noscript", "loading", "stale"], "pubsub", "2.0.0", "Stops listening to messages published to channels that match one or more patterns.", pubsub::punsubscribe),
    conn("publish", 3, &["pubsub", "loading", "stale", "fast"], "pubsub", "2.0.0", "Posts a message to a channel.", pubsub::publish),
    conn("pubsub", -2, &["pubsub", "loading", "stale"], "pubsub", "2.8.0", "A container for Pub/Sub commands.", pubsub::pubsub).with_subcommands(),
    // Transactions
    conn("multi", 1, &["noscript", "loading", "stale", "fast"], "transactions", "1.2.0", "Starts a transaction.", transaction::multi),
    conn("exec", 1, &["noscript", "loading", "stale"], "transactions", "1.2.0", "Executes all commands in a transaction.", transaction::exec),
    conn("discard", 1, &["noscript", "loading", "stale", "fast"], "transactions", "2.0.0", "Discards a transaction.", transaction::discard),
    conn("watch", -2, &["noscript", "loading", "stale", "fast", "allow_busy"], "transactions", "2.2.0", "Monitors changes to keys to determine the execution of a transaction.", transaction::watch),
    conn("unwatch", 1, &["noscript", "loading", "stale", "fast", "allow_busy"], "transactions", "2.2.0", "Forgets about watched keys of a transaction.", transaction::unwatch),
    // Server
    conn("command", -1, &["loading", "stale"], "server", "2.8.13", "Returns detailed information about all commands.", server::command).with_subcommands(),
    conn("info", -1, &["loading", "stale"], "server", "1.0.0", "Returns information and statistics about the server.", server::info),
    conn("config", -2, ADMIN, "server", "2.0.0", "A container for server configuration commands.", server::config).with_subcommands(),
    conn("time", 1, &["loading", "stale", "fast"], "server", "2.6.0", "Returns the server time.", server::time),
    conn("debug", -2, ADMIN, "server", "1.0.0", "A container for debugging commands.", server::debug),
    conn("latency", -2, ADMIN, "server", "2.8.13", "A container for latency diagnostics commands.", latency::latency).with_subcommands(),
    conn("shutdown", -1, &["admin", "noscript", "loading", "stale", "no_multi", "allow_busy"], "server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server.", server::shutdown),
    conn("lastsave", 1, &["loading", "stale", "fast"], "server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk.", server::lastsave),
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
            ["object", "client", "pubsub", "command", "config", "latency"]
        );
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
