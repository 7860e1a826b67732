//! Differential test: the same randomized command sequences (fixed seeds)
//! run against ember (3 shards, so keys span shards) and redis-server, and
//! every reply must match. Small key and member spaces make types collide,
//! so WRONGTYPE and the other error paths are exercised as often as the
//! happy ones.
//!
//! Runs where `redis-server` is installed (`.ci/run` installs it); skipped
//! with a note otherwise. Replies whose order Redis does not define (set
//! members, hash fields) are compared sorted; TTLs are compared as "has a
//! TTL"; fractional scores are compared exactly (both print 7.0's `%.17g`).

mod common;

use common::reference::Redis;
use common::{Raw, Reply, Rng, Server};

const KEYS: &[&str] = &["k0", "k1", "k2", "k3", "k4", "k5", "{t}a", "{t}b"];
const MEMBERS: &[&str] = &["a", "b", "c", "d", "e", "1", "2", "10"];

/// How a reply is compared.
#[derive(Clone, Copy, PartialEq)]
enum Compare {
    Exact,
    /// Array order is not defined by Redis (members, fields).
    Unordered,
    /// Flat field/value pairs whose order is not defined (HGETALL).
    UnorderedPairs,
    /// A TTL: only its sign matters (timing differs).
    Ttl,
}

/// One random command over the data types and keyspace commands.
fn command(r: &mut Rng) -> (Vec<String>, Compare) {
    let k = r.pick(KEYS);
    let k2 = r.pick(KEYS);
    let m = r.pick(MEMBERS);
    let m2 = r.pick(MEMBERS);
    let n = r.int(-3, 6);
    let words: Vec<&str> = match r.below(87) {
        // Strings
        0 => vec!["SET", k, m],
        1 => vec!["GET", k],
        2 => vec!["APPEND", k, m],
        3 => vec!["INCR", k],
        4 => vec!["INCRBY", k, &n],
        5 => vec!["STRLEN", k],
        6 => vec!["GETRANGE", k, &n, "-1"],
        7 => vec!["SETRANGE", k, "2", m],
        8 => vec!["MGET", k, k2, "k9"],
        9 => vec!["MSET", k, m, k2, m2],
        10 => vec!["GETDEL", k],
        11 => vec!["SETNX", k, m],
        12 => vec!["SET", k, m, "NX", "GET"],
        // Lists
        13 => vec!["LPUSH", k, m, m2],
        14 => vec!["RPUSH", k, m],
        15 => vec!["LPOP", k],
        16 => vec!["RPOP", k, "2"],
        17 => vec!["LLEN", k],
        18 => vec!["LRANGE", k, &n, "-1"],
        19 => vec!["LINDEX", k, &n],
        20 => vec!["LSET", k, &n, m],
        21 => vec!["LINSERT", k, "BEFORE", m, m2],
        22 => vec!["LREM", k, &n, m],
        23 => vec!["LTRIM", k, "1", &n],
        24 => vec!["LPOS", k, m],
        25 => vec!["LMOVE", k, k2, "LEFT", "RIGHT"],
        26 => vec!["RPOPLPUSH", k, k2],
        27 => vec!["LMPOP", "2", k, k2, "LEFT", "COUNT", "2"],
        // Hashes
        28 => vec!["HSET", k, m, m2],
        29 => vec!["HGET", k, m],
        30 => vec!["HDEL", k, m],
        31 => vec!["HLEN", k],
        32 => vec!["HEXISTS", k, m],
        33 => vec!["HINCRBY", k, m, &n],
        34 => vec!["HMGET", k, m, m2],
        35 => return (owned(&["HGETALL", k]), Compare::UnorderedPairs),
        36 => return (owned(&["HKEYS", k]), Compare::Unordered),
        37 => vec!["HSETNX", k, m, m2],
        // Sets
        38 => vec!["SADD", k, m, m2],
        39 => vec!["SREM", k, m],
        40 => vec!["SCARD", k],
        41 => vec!["SISMEMBER", k, m],
        42 => vec!["SMISMEMBER", k, m, m2],
        43 => return (owned(&["SMEMBERS", k]), Compare::Unordered),
        // Sorted sets (integer scores: doubles print differently in 7.0)
        44 => vec!["ZADD", k, &n, m],
        45 => vec!["ZADD", k, "XX", "CH", &n, m, "5", m2],
        46 => vec!["ZREM", k, m],
        47 => vec!["ZSCORE", k, m],
        48 => vec!["ZCARD", k],
        49 => vec!["ZRANGE", k, "0", &n, "WITHSCORES"],
        50 => vec!["ZRANGEBYSCORE", k, "-inf", &n],
        51 => vec!["ZRANK", k, m],
        52 => vec!["ZINCRBY", k, &n, m],
        53 => vec!["ZCOUNT", k, "(0", "+inf"],
        54 => vec!["ZPOPMIN", k],
        55 => vec!["ZREMRANGEBYRANK", k, "0", "0"],
        56 => vec!["ZUNIONSTORE", k, "2", k, k2],
        57 => vec!["ZRANGE", k, "[a", "[d", "BYLEX"],
        // Keyspace
        58 => vec!["DEL", k, k2],
        59 => vec!["EXISTS", k, k2],
        60 => vec!["TYPE", k],
        61 => vec!["RENAME", k, k2],
        62 => vec!["COPY", k, k2, "REPLACE"],
        // More sorted-set and list forms
        63 => vec!["ZREVRANGE", k, "0", &n],
        64 => vec!["ZRANGE", k, "(1", "+inf", "BYSCORE", "LIMIT", "1", "2"],
        65 => vec!["ZREMRANGEBYSCORE", k, "-inf", &n],
        66 => vec!["ZMPOP", "2", k, k2, "MAX", "COUNT", "2"],
        67 => vec!["ZINTERSTORE", k2, "2", k, k2, "WEIGHTS", "2", "3"],
        68 => vec!["ZDIFF", "2", k, k2, "WITHSCORES"],
        69 => vec!["ZRANGESTORE", k2, k, "0", "-1"],
        70 => vec!["LPOS", k, m, "RANK", "-1", "COUNT", "0"],
        // Blocking forms with a short timeout (nothing to wait for, or served at once)
        71 => vec!["BLPOP", k, k2, "0.01"],
        72 => vec!["BZPOPMIN", k, "0.01"],
        73 => vec!["BLMOVE", k, k2, "RIGHT", "LEFT", "0.01"],
        74 => vec!["RENAMENX", k, k2],
        // Set algebra, across shards too
        75 => return (owned(&["SINTER", k, k2]), Compare::Unordered),
        76 => return (owned(&["SUNION", k, k2, "k9"]), Compare::Unordered),
        77 => return (owned(&["SDIFF", k, k2]), Compare::Unordered),
        78 => vec!["SINTERSTORE", k2, k, k2],
        79 => vec!["SUNIONSTORE", k, k, k2],
        80 => vec!["SMOVE", k, k2, m],
        81 => vec!["SINTERCARD", "2", k, k2, "LIMIT", "1"],
        82 => vec!["SDIFFSTORE", k, k2, k],
        // Fractional scores: replies print them as Redis 7.0 does (%.17g)
        83 => vec!["ZINCRBY", k, "0.1", m],
        84 => vec!["ZADD", k, "INCR", "-1.7", m2],
        85 => vec!["ZRANGE", k, "0", "-1", "WITHSCORES"],
        _ => {
            return match r.below(3) {
                0 => (owned(&["EXPIRE", k, "1000"]), Compare::Exact),
                1 => (owned(&["PERSIST", k]), Compare::Exact),
                _ => (owned(&["TTL", k]), Compare::Ttl),
            }
        }
    };
    (owned(&words), Compare::Exact)
}

fn owned(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

fn normalize(reply: Reply, how: Compare) -> Reply {
    let sorted = |mut items: Vec<Reply>| {
        items.sort_by_key(|r| format!("{r:?}"));
        items
    };
    match (how, reply) {
        (Compare::Unordered, Reply::Array(items)) => Reply::Array(sorted(items)),
        (Compare::UnorderedPairs, Reply::Array(items)) => {
            let pairs = items.chunks(2).map(|p| Reply::Array(p.to_vec())).collect();
            Reply::Array(sorted(pairs))
        }
        (Compare::Ttl, Reply::Int(n)) => Reply::Int(n.signum()),
        (_, other) => other,
    }
}

fn run_sequence(seed: u64, steps: usize, ember: &mut Raw, redis: &mut Raw) {
    let mut rng = Rng(seed);
    let mut history: Vec<String> = Vec::new();
    for step in 0..steps {
        let (args, how) = command(&mut rng);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        history.push(args.join(" "));
        let mine = normalize(ember.cmd(&args), how);
        let theirs = normalize(redis.cmd(&args), how);
        if mine != theirs {
            let recent = history
                .iter()
                .rev()
                .take(12)
                .rev()
                .cloned()
                .collect::<Vec<_>>();
            panic!(
                "seed {seed}, step {step}: {:?}\n ember: {mine:?}\n redis: {theirs:?}\n last commands:\n  {}",
                args,
                recent.join("\n  ")
            );
        }
    }
}

#[test]
fn random_sequences_match_redis() {
    let Some(redis) = Redis::or_skip("the differential test") else {
        return;
    };
    let server = Server::start(3, &[]);
    let mut ember = server.raw();
    let mut reference = Raw::connect(redis.port);
    for seed in [0x5eed_u64, 0xbead, 0xcafe_f00d, 42] {
        ember.cmd(&["FLUSHALL"]);
        reference.cmd(&["FLUSHALL"]);
        run_sequence(seed, 3000, &mut ember, &mut reference);
    }
}
