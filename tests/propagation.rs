//! The propagation feed (`DEBUG EMBER-RECORD START|STOP`) reproduces the
//! keyspace: a randomized workload over every command family (TTLs and
//! hash-field TTLs, short ones so lazy and active expiry happen, blocking
//! pops served by later pushes, cross-shard MULTI/EXEC, several databases,
//! SWAPDB and FLUSHDB) runs on ember with 3 shards from several clients at
//! once; its recorded stream, replayed as raw bytes into a fresh ember
//! (3 shards, and 1), must give the same keyspace key by key: type, value
//! (sorted where order is undefined), and exact PEXPIRETIME (per field for
//! hashes). And the stream is what redis-server 7.0 writes to its AOF for
//! the same commands (where redis-server is installed).
//!
//! Why the workload keeps short TTLs to their own keys: a replay runs later
//! than the original, so a key with a deadline of a few milliseconds may
//! already be expired when the command that read it is replayed. A command
//! that copies such a key elsewhere without its deadline (SUNIONSTORE from
//! it, PERSIST on it) would then diverge for good, as it would in Redis's
//! own AOF replay if Redis did not refuse to expire keys while loading.
//! Commands that write the short-lived key itself converge: the master's
//! DEL (or HDEL) for it follows in the stream. So short TTLs are given only
//! to the keys `s*`, which are never a source of another key's value and
//! never get a longer deadline; the other keys get deadlines an hour out,
//! or in the past.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::reference::Redis;
use common::{args, encode_cmd, free_port, unix_ms, Raw, Reply, Rng, Server};

const DEBUG: &[&str] = &["--enable-debug-command", "local"];

/// Keys by the type the workload mostly gives them (the `{t}` ones share a
/// shard, so multi-key commands on them run there; the others spread over
/// the shards). Their deadlines are an hour or more away, or past.
const STRINGS: &[&str] = &["str0", "str1", "str2", "str3", "{t}str"];
const LISTS: &[&str] = &["list0", "list1", "list2", "list3", "{t}list"];
const HASHES: &[&str] = &["hash0", "hash1", "hash2", "hash3", "{t}hash"];
const SETS: &[&str] = &["set0", "set1", "set2", "set3", "{t}set"];
const ZSETS: &[&str] = &["zset0", "zset1", "zset2", "zset3", "{t}zset"];
const POOLS: &[&[&str]] = &[STRINGS, LISTS, HASHES, SETS, ZSETS];
/// Streams, a pool of their own so the other commands draw as before.
const XSTREAMS: &[&str] = &["xs0", "xs1", "{t}xs"];
/// Keys that get deadlines of a few milliseconds (see the module doc):
/// strings, and hashes whose fields get them.
const SHORT: &[&str] = &["s0", "s1", "s2", "s3"];
const SHORT_HASHES: &[&str] = &["sh0", "sh1", "sh2"];
/// Lists and sorted sets blocked clients wait on (database 0).
const QUEUES: &[&str] = &["q0", "q1", "q2", "q3"];
const ZQUEUES: &[&str] = &["zq0", "zq1"];
const MEMBERS: &[&str] = &["a", "b", "c", "d", "e", "f", "1", "2", "10"];
const FIELDS: &[&str] = &["f1", "f2", "f3", "f4"];
const DBS: u64 = 4;

fn owned(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

/// A deadline an hour or two from now, in the unit asked.
fn later_s(r: &mut Rng) -> String {
    (unix_ms() / 1000 + r.range(3_600, 7_200)).to_string()
}

fn later_ms(r: &mut Rng) -> String {
    (unix_ms() + r.range(3_600_000, 7_200_000)).to_string()
}

/// A key of `pool`, now and then one of another type (WRONGTYPE paths).
fn key_of<'a>(r: &mut Rng, pool: &[&'a str]) -> &'a str {
    if r.chance(10) {
        let other = POOLS[r.below(POOLS.len())];
        return r.pick(other);
    }
    r.pick(pool)
}

/// Any long-lived key.
fn any_key<'a>(r: &mut Rng) -> &'a str {
    let pool = POOLS[r.below(POOLS.len())];
    r.pick(pool)
}

/// One random command that writes (or reads) the keyspace.
fn command(r: &mut Rng) -> Vec<String> {
    let st = key_of(r, STRINGS);
    let st2 = key_of(r, STRINGS);
    let l = key_of(r, LISTS);
    let l2 = key_of(r, LISTS);
    let h = key_of(r, HASHES);
    let set = key_of(r, SETS);
    let set2 = key_of(r, SETS);
    let set3 = key_of(r, SETS);
    let z = key_of(r, ZSETS);
    let z2 = key_of(r, ZSETS);
    let k = any_key(r);
    let k2 = any_key(r);
    let s = r.pick(SHORT);
    let sh = r.pick(SHORT_HASHES);
    // A destination may be short-lived: what lands there is written, not read.
    let short_dst = r.chance(5);
    let dst_of = |r: &mut Rng, pool: &[&'static str]| {
        if short_dst {
            r.pick(SHORT)
        } else {
            r.pick(pool)
        }
    };
    let dst_l = dst_of(r, LISTS);
    let dst_set = dst_of(r, SETS);
    let dst_z = dst_of(r, ZSETS);
    let any_pool = POOLS[r.below(POOLS.len())];
    let dst_k = dst_of(r, any_pool);
    let m = r.pick(MEMBERS);
    let m2 = r.pick(MEMBERS);
    let f = r.pick(FIELDS);
    let f2 = r.pick(FIELDS);
    let q = r.pick(QUEUES);
    let zq = r.pick(ZQUEUES);
    let n = r.range(0, 6).to_string();
    let short_ms = r.range(1, 40).to_string();
    let long_s = r.range(3_600, 7_200).to_string();
    let long_ms = r.range(3_600_000, 7_200_000).to_string();
    let at_s = later_s(r);
    let at_ms = later_ms(r);
    let db = r.range(0, DBS - 1).to_string();
    let xs = r.pick(XSTREAMS);
    let words: Vec<&str> = match r.below(154) {
        // Strings
        0 => vec!["SET", st, m],
        1 => vec!["SET", st, m, "EX", &long_s],
        2 => vec!["SET", st, m, "PX", &long_ms, "GET"],
        3 => vec!["SET", st, m, "EXAT", &at_s, "NX"],
        4 => vec!["SET", st, m, "PXAT", &at_ms, "XX"],
        5 => vec!["SET", st, m, "KEEPTTL"],
        6 => vec!["SET", st, m, "PXAT", "1"],
        7 => vec!["SETEX", st, &long_s, m],
        8 => vec!["PSETEX", st, &long_ms, m],
        9 => vec!["GETSET", st, m],
        10 => vec!["GETDEL", st],
        11 => vec!["GETEX", st, "EX", &long_s],
        12 => vec!["GETEX", st, "PERSIST"],
        13 => vec!["GETEX", st, "PXAT", &at_ms],
        14 => vec!["GETEX", st, "EXAT", "1"],
        15 => vec!["MSET", st, m, st2, m2, dst_k, "x"],
        16 => vec!["MSETNX", st, m, st2, m2],
        17 => vec!["INCR", st],
        18 => vec!["INCRBY", st, &n],
        19 => vec!["DECRBY", st, &n],
        20 => vec!["INCRBYFLOAT", st, "1.25"],
        21 => vec!["APPEND", st, m],
        22 => vec!["SETRANGE", st, "2", m],
        23 => vec!["SETNX", st, m],
        // Short-lived strings: only what writes the key itself
        24 => vec!["SET", s, m, "PX", &short_ms],
        25 => vec!["PSETEX", s, &short_ms, m],
        26 => vec!["SET", s, m, "PX", &short_ms, "NX", "GET"],
        27 => vec!["APPEND", s, m],
        28 => vec!["INCR", s],
        29 => vec!["INCRBYFLOAT", s, "0.5"],
        30 => vec!["GETEX", s, "PX", &short_ms],
        31 => vec!["PEXPIRE", s, &short_ms],
        32 => vec!["GET", s],
        33 => vec!["SET", s, m, "KEEPTTL"],
        // Lists
        34 => vec!["LPUSH", l, m, m2],
        35 => vec!["RPUSH", l, m],
        36 => vec!["LPUSHX", l, m],
        37 => vec!["RPOP", l, "2"],
        38 => vec!["LPOP", l],
        39 => vec!["LSET", l, "0", m],
        40 => vec!["LINSERT", l, "BEFORE", m, m2],
        41 => vec!["LREM", l, "1", m],
        42 => vec!["LTRIM", l, "0", &n],
        43 => vec!["LMOVE", l, dst_l, "LEFT", "RIGHT"],
        44 => vec!["RPOPLPUSH", l, dst_l],
        45 => vec!["LMPOP", "2", l, l2, "RIGHT", "COUNT", "2"],
        46 => vec!["RPUSH", q, m, m2],
        47 => vec!["LPUSH", q, m],
        // Hashes
        48 => vec!["HSET", h, f, m, f2, m2],
        49 => vec!["HSETNX", h, f, m],
        50 => vec!["HDEL", h, f],
        51 => vec!["HINCRBY", h, f, &n],
        52 => vec!["HINCRBYFLOAT", h, f, "2.5"],
        53 => vec!["HMSET", h, f, m],
        54 => vec!["HEXPIRE", h, &long_s, "FIELDS", "2", f, f2],
        55 => vec!["HPEXPIRE", h, &long_ms, "NX", "FIELDS", "1", f],
        56 => vec!["HEXPIREAT", h, &at_s, "FIELDS", "1", f],
        57 => vec!["HPEXPIREAT", h, &at_ms, "GT", "FIELDS", "2", f, f2],
        58 => vec!["HEXPIRE", h, "0", "FIELDS", "1", f],
        59 => vec!["HPERSIST", h, "FIELDS", "1", f],
        // Short-lived hash fields
        60 => vec!["HSET", sh, f, m, f2, "1"],
        61 => vec!["HPEXPIRE", sh, &short_ms, "FIELDS", "2", f, f2],
        62 => vec!["HINCRBY", sh, f, "1"],
        63 => vec!["HINCRBYFLOAT", sh, f2, "0.5"],
        64 => vec!["HGETALL", sh],
        // Sets
        65 => vec!["SADD", set, m, m2, "c"],
        66 => vec!["SREM", set, m],
        67 => vec!["SPOP", set],
        68 => vec!["SPOP", set, "2"],
        69 => vec!["SPOP", set, "10"],
        70 => vec!["SMOVE", set, dst_set, m],
        71 => vec!["SINTERSTORE", dst_set, set, set2],
        72 => vec!["SUNIONSTORE", dst_set, set, set2, set3],
        73 => vec!["SDIFFSTORE", dst_set, set, set2],
        74 => vec!["SRANDMEMBER", set, "2"],
        // Sorted sets
        75 => vec!["ZADD", z, &n, m, "2.5", m2],
        76 => vec!["ZINCRBY", z, "1.5", m],
        77 => vec!["ZREM", z, m],
        78 => vec!["ZPOPMIN", z],
        79 => vec!["ZPOPMAX", z, "2"],
        80 => vec!["ZMPOP", "2", z, z2, "MIN", "COUNT", "2"],
        81 => vec!["ZRANGESTORE", dst_z, z, "0", "-1"],
        82 => vec!["ZUNIONSTORE", dst_z, "2", z, z2],
        83 => vec!["ZINTERSTORE", dst_z, "2", z, z2, "WEIGHTS", "2", "3"],
        84 => vec!["ZDIFFSTORE", dst_z, "2", z, z2],
        85 => vec!["ZREMRANGEBYSCORE", z, "-inf", &n],
        86 => vec!["ZREMRANGEBYRANK", z, "0", "0"],
        87 => vec!["ZADD", zq, &n, m],
        // Keyspace
        88 => vec!["DEL", k, k2, s],
        89 => vec!["UNLINK", k, dst_k],
        90 => vec!["RENAME", k, dst_k],
        91 => vec!["RENAMENX", k, dst_k],
        92 => vec!["COPY", k, dst_k, "REPLACE"],
        93 => vec!["COPY", k, k2, "DB", &db],
        94 => vec!["MOVE", k, &db],
        95 => vec!["MOVE", s, &db],
        96 => vec!["EXISTS", k, k2, s],
        97 => vec!["TYPE", sh],
        // Expiry
        98 => vec!["EXPIRE", k, &long_s],
        99 => vec!["PEXPIRE", k, &long_ms, "GT"],
        100 => vec!["EXPIREAT", k, &at_s, "NX"],
        101 => vec!["PEXPIREAT", k, &at_ms, "XX"],
        102 => vec!["EXPIRE", k, "-1"],
        103 => vec!["PEXPIREAT", k, "1"],
        104 => vec!["PERSIST", k],
        105 => vec!["EXPIRE", s, "-1"],
        106 => vec!["TTL", k],
        // Rare: whole databases
        107 if r.chance(8) => vec!["SWAPDB", &db, "0"],
        108 if r.chance(60) => vec!["FLUSHDB"],
        // More of what builds values up
        109 => vec!["HSET", h, f, m],
        110 => vec!["SADD", set, m, "e", "f"],
        111 => vec!["RPUSH", l, m, m2],
        112 => vec!["ZADD", z, "1", m],
        113 => vec!["SET", st, m, "PX", &long_ms],
        114 => vec!["HEXPIRE", h, &long_s, "FIELDS", "1", f],
        115 => vec!["SET", s, m],
        116 => vec!["DEL", s],
        117 => vec!["SADD", set, "1", "2", "10"],
        118 => vec!["SPOP", set],
        119 => vec!["SPOP", set, "3"],
        120 => vec!["HPEXPIRE", sh, &short_ms, "FIELDS", "1", f],
        121 => vec!["HSET", sh, f2, m],
        122 => vec!["SET", s, m, "PX", &short_ms],
        123 => vec!["MSET", s, m, st, m2],
        // SORT ... STORE: recorded as sent (deterministic given the data).
        124 => vec![
            "SORT", l, "ALPHA", "DESC", "LIMIT", "0", "3", "STORE", dst_l,
        ],
        125 => vec![
            "SORT", set, "BY", "nosort", "GET", "#", "GET", "*", "STORE", dst_l,
        ],
        // Geo sets (sorted sets of geohashes)
        126 => vec![
            "GEOADD",
            z,
            "13.361389",
            "38.115556",
            m,
            "15.087269",
            "37.502669",
            m2,
        ],
        127 => vec!["GEOADD", z, "XX", "CH", "15.1", "37.6", m],
        128 => vec!["GEORADIUS", z, "15", "37", "200", "km", "STORE", dst_z],
        129 => vec![
            "GEOSEARCHSTORE",
            dst_z,
            z,
            "FROMLONLAT",
            "15",
            "37",
            "BYBOX",
            "400",
            "400",
            "km",
            "STOREDIST",
        ],
        // Bitmaps (strings edited in place; BITOP across shards)
        130 => vec!["SETBIT", st, &n, "1"],
        131 => vec![
            "BITFIELD", st, "OVERFLOW", "SAT", "INCRBY", "u8", "#1", "200",
        ],
        132 => vec!["BITOP", "XOR", dst_k, st, st2],
        // HyperLogLogs (a string that is not one answers WRONGTYPE)
        133 => vec!["PFADD", st, m, m2],
        134 => vec!["PFCOUNT", st],
        135 => vec!["PFMERGE", st2, st],
        136 => vec!["PFCOUNT", st, st2],
        // Streams: generated IDs and approximate trims are recorded as
        // Redis rewrites them
        137 | 138 => vec!["XADD", xs, "*", f, m],
        139 => vec!["XADD", xs, "MAXLEN", "~", "2", "*", f, m, f2, m2],
        140 => vec!["XADD", xs, "MAXLEN", &n, "5-*", f, m],
        141 => vec!["XADD", xs, "MINID", "~", "0", "LIMIT", "5", "*", f, m],
        142 => vec!["XTRIM", xs, "MAXLEN", &n],
        143 => vec!["XTRIM", xs, "MAXLEN", "~", "0"],
        144 => vec!["XDEL", xs, "5-0", "5-1"],
        145 => vec!["XGROUP", "CREATE", xs, "g", "0", "MKSTREAM"],
        146 => vec![
            "XREADGROUP",
            "GROUP",
            "g",
            m,
            "COUNT",
            "2",
            "STREAMS",
            xs,
            ">",
        ],
        147 => vec!["XGROUP", "SETID", xs, "g", "0", "ENTRIESREAD", "0"],
        148 => vec!["XAUTOCLAIM", xs, "g", m2, "0", "0", "COUNT", "1"],
        149 => vec!["XSETID", xs, "99999999999999-0"],
        // Scripts: recorded as the commands they ran (keys on any shards)
        150 => vec![
            "EVAL",
            "redis.call('set', KEYS[1], ARGV[1]) return redis.call('lpush', KEYS[2], ARGV[1])",
            "2",
            st,
            l,
            m,
        ],
        151 => vec![
            "EVAL",
            "redis.call('expire', KEYS[1], ARGV[1]) return redis.call('incr', KEYS[2])",
            "2",
            k,
            st2,
            &long_s,
        ],
        _ => vec!["GET", st],
    };
    owned(&words)
}

/// A blocking command for the waiting client (database 0), with a timeout.
fn blocking_command(r: &mut Rng) -> Vec<String> {
    let q = r.pick(QUEUES);
    let q2 = r.pick(QUEUES);
    let zq = r.pick(ZQUEUES);
    let words: Vec<&str> = match r.below(8) {
        0 => vec!["BLPOP", q, q2, "0.2"],
        1 => vec!["BRPOP", q, "0.2"],
        2 => vec!["BLMOVE", q, q2, "LEFT", "RIGHT", "0.2"],
        3 => vec!["BRPOPLPUSH", q, q2, "0.2"],
        4 => vec!["BLMPOP", "0.2", "2", q, q2, "RIGHT", "COUNT", "2"],
        5 => vec!["BZPOPMIN", zq, "0.2"],
        6 => vec!["BZPOPMAX", "zq0", "zq1", "0.2"],
        _ => vec!["BZMPOP", "0.2", "2", "zq0", "zq1", "MIN", "COUNT", "2"],
    };
    owned(&words)
}

fn send(raw: &mut Raw, args: &[String]) -> Reply {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    raw.cmd(&args)
}

/// One client's part of the workload: commands, transactions (sometimes
/// watched, sometimes selecting another database inside), SELECTs.
fn workload(port: u16, seed: u64, steps: usize) {
    let mut raw = Raw::connect(port);
    let mut r = Rng(seed);
    // DUMP / RESTORE draw from their own generator, so the rest of the
    // workload is what it was before they joined it.
    let mut moves = Rng(seed.rotate_left(17) ^ 0x9e37_79b9);
    for _ in 0..steps {
        if moves.chance(30) {
            dump_and_restore(&mut raw, &mut moves);
        }
        match r.below(40) {
            0..=2 => {
                let db = r.range(0, DBS - 1).to_string();
                send(&mut raw, &owned(&["SELECT", &db]));
            }
            3..=6 => {
                if r.chance(3) {
                    let key = any_key(&mut r);
                    send(&mut raw, &owned(&["WATCH", key]));
                }
                send(&mut raw, &owned(&["MULTI"]));
                for _ in 0..r.range(2, 5) {
                    let cmd = if r.chance(6) {
                        owned(&["SELECT", &r.range(0, DBS - 1).to_string()])
                    } else {
                        command(&mut r)
                    };
                    send(&mut raw, &cmd);
                }
                send(&mut raw, &owned(&["EXEC"]));
                // Where the transaction's SELECTs left the client (if it ran).
                send(&mut raw, &owned(&["SELECT", "0"]));
            }
            _ => {
                send(&mut raw, &command(&mut r));
            }
        }
    }
}

/// A value moved by DUMP / RESTORE REPLACE between two keys of one pool
/// (so keys keep the type the rest of the workload expects), with a
/// relative TTL (recorded as an absolute one with ABSTTL), an absolute
/// one, or none.
fn dump_and_restore(raw: &mut Raw, r: &mut Rng) {
    let pool = POOLS[r.below(POOLS.len())];
    let (src, dst) = (r.pick(pool), r.pick(pool));
    let Reply::Bulk(payload) = raw.cmd_bytes(&[b"DUMP", src.as_bytes()]) else {
        return;
    };
    let ttl_ms = r.range(3_600_000, 7_200_000).to_string();
    let at_ms = later_ms(r);
    let mut args: Vec<&[u8]> = vec![b"RESTORE", dst.as_bytes()];
    match r.below(3) {
        0 => args.extend([&b"0"[..], &payload]),
        1 => args.extend([ttl_ms.as_bytes(), &payload]),
        _ => args.extend([at_ms.as_bytes(), &payload, b"ABSTTL"]),
    }
    args.push(b"REPLACE");
    raw.cmd_bytes(&args);
}

/// The waiting client: blocking pops in database 0 until told to stop.
fn waiter(port: u16, seed: u64, stop: Arc<AtomicBool>) {
    let mut raw = Raw::connect(port);
    let mut r = Rng(seed);
    while !stop.load(Ordering::Relaxed) {
        send(&mut raw, &blocking_command(&mut r));
    }
}

fn bulk_text(reply: &Reply) -> String {
    match reply {
        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Reply::Simple(s) => s.clone(),
        Reply::Int(n) => n.to_string(),
        Reply::Nil => "(nil)".into(),
        other => format!("{other:?}"),
    }
}

/// Every scalar of a nested reply, in order.
fn flatten(reply: &Reply, out: &mut Vec<String>) {
    match reply {
        Reply::Array(items) => items.iter().for_each(|i| flatten(i, out)),
        other => out.push(bulk_text(other)),
    }
}

fn strings_of(reply: &Reply) -> Vec<String> {
    let mut out = Vec::new();
    flatten(reply, &mut out);
    out
}

fn strings(reply: Reply) -> Vec<String> {
    match reply {
        Reply::Array(items) | Reply::Set(items) => items.iter().map(bulk_text).collect(),
        other => panic!("expected an array, got {other:?}"),
    }
}

/// Every key of every database: type, deadline and value.
fn dump(raw: &mut Raw) -> BTreeMap<(usize, Vec<u8>), String> {
    common::dump_keyspace(raw, describe)
}

fn describe(raw: &mut Raw, key: &[u8]) -> String {
    let kind = raw.cmd_bytes(&[b"TYPE", key]).text();
    let deadline = raw.cmd_bytes(&[b"PEXPIRETIME", key]).int();
    let value = match kind.as_str() {
        "string" => bulk_text(&raw.cmd_bytes(&[b"GET", key])),
        "list" => strings(raw.cmd_bytes(&[b"LRANGE", key, b"0", b"-1"])).join(","),
        "set" => {
            let mut members = strings(raw.cmd_bytes(&[b"SMEMBERS", key]));
            members.sort();
            members.join(",")
        }
        "zset" => strings(raw.cmd_bytes(&[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"])).join(","),
        "hash" => {
            let flat = strings(raw.cmd_bytes(&[b"HGETALL", key]));
            let mut fields: Vec<String> = flat
                .chunks(2)
                .map(|pair| {
                    let at =
                        raw.cmd_bytes(&[b"HPEXPIRETIME", key, b"FIELDS", b"1", pair[0].as_bytes()]);
                    format!("{}={}@{}", pair[0], pair[1], strings(at).join(""))
                })
                .collect();
            fields.sort();
            fields.join(",")
        }
        "stream" => {
            let mut flat = Vec::new();
            flatten(&raw.cmd_bytes(&[b"XRANGE", key, b"-", b"+"]), &mut flat);
            let info = raw.cmd_bytes(&[b"XINFO", b"STREAM", key]);
            let info = strings_of(&info);
            // last-generated-id, max-deleted-entry-id, entries-added.
            flat.extend([7, 9, 11].iter().map(|&i| info[i].clone()));
            let groups = raw.cmd_bytes(&[b"XINFO", b"GROUPS", key]);
            flatten(&groups, &mut flat);
            flat.join(",")
        }
        other => format!("?{other}"),
    };
    format!("{kind} pexpiretime={deadline} {value}")
}

/// Errors anywhere in a reply (inside an EXEC's array too).
fn errors(reply: &Reply, out: &mut Vec<String>) {
    match reply {
        Reply::Error(e) => out.push(e.clone()),
        Reply::Array(items) => items.iter().for_each(|i| errors(i, out)),
        _ => {}
    }
}

/// Sends `stream` as it is, then reads every reply; returns the errors.
fn replay(server: &Server, stream: &[u8]) -> Vec<String> {
    let mut raw = server.raw();
    raw.set_read_timeout(Duration::from_secs(60));
    let mut writer = raw.writer();
    let mut bytes = stream.to_vec();
    bytes.extend_from_slice(&encode_cmd(&[b"ECHO", b"end of the stream"]));
    let sender = std::thread::spawn(move || writer.write_all(&bytes).expect("send the stream"));
    let mut found = Vec::new();
    loop {
        let reply = raw.read().expect("a reply to the replayed stream");
        if reply == Reply::bulk("end of the stream") {
            break;
        }
        errors(&reply, &mut found);
    }
    sender.join().unwrap();
    found
}

fn differences(
    what: &str,
    want: &BTreeMap<(usize, Vec<u8>), String>,
    got: &BTreeMap<(usize, Vec<u8>), String>,
) -> Vec<String> {
    let keys: BTreeSet<_> = want.keys().chain(got.keys()).collect();
    keys.into_iter()
        .filter(|k| want.get(*k) != got.get(*k))
        .map(|k| {
            format!(
                "{what} db{} {:?}: original {:?}, replayed {:?}",
                k.0,
                String::from_utf8_lossy(&k.1),
                want.get(k),
                got.get(k)
            )
        })
        .collect()
}

/// The commands of a stream, one line each (for the assertions below).
fn commands_of(stream: &[u8]) -> Vec<Vec<String>> {
    // Bulk lengths are followed, not line ends: a RESTORE payload is binary.
    fn line<'a>(stream: &'a [u8], at: &mut usize) -> &'a [u8] {
        let end = stream[*at..]
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a complete line")
            + *at;
        let line = &stream[*at..end];
        *at = end + 2;
        line
    }
    fn number(bytes: &[u8]) -> usize {
        std::str::from_utf8(bytes).unwrap().parse().unwrap()
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let head = line(stream, &mut at);
        let n = number(head.strip_prefix(b"*").expect("an array"));
        let words = (0..n)
            .map(|_| {
                let len = number(line(stream, &mut at).strip_prefix(b"$").expect("a bulk"));
                let word = String::from_utf8_lossy(&stream[at..at + len]).into_owned();
                at += len + 2;
                word
            })
            .collect();
        out.push(words);
    }
    out
}

#[test]
fn a_recorded_workload_replays_to_the_same_keyspace() {
    let original = Server::start(3, &[DEBUG, &["--hz", "50"]].concat());
    let mut control = original.raw();
    assert_eq!(
        control.cmd(&["DEBUG", "EMBER-RECORD", "START"]),
        Reply::ok()
    );
    let stop = Arc::new(AtomicBool::new(false));
    let waiters: Vec<_> = (0..2)
        .map(|i| {
            let (port, stop) = (original.port, stop.clone());
            std::thread::spawn(move || waiter(port, 0xb10c + i, stop))
        })
        .collect();
    let clients: Vec<_> = [0x5eed_u64, 0xcafe, 0xf00d]
        .into_iter()
        .map(|seed| {
            let port = original.port;
            std::thread::spawn(move || workload(port, seed, 1_500))
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for w in waiters {
        w.join().unwrap();
    }
    // Let every short deadline pass, then have each expired key and field
    // removed (SCAN removes what it meets), so their deletions are recorded.
    std::thread::sleep(Duration::from_millis(200));
    let before = dump(&mut control);
    let stream = control.cmd(&["DEBUG", "EMBER-RECORD", "STOP"]);
    let Reply::Bulk(stream) = stream else {
        panic!("STOP answered {stream:?}");
    };
    let want = dump(&mut control);
    assert_eq!(
        before, want,
        "nothing changed once the deadlines had passed"
    );
    // Keys and hash fields expired during the run (lazily and by the sweep).
    assert!(control.info_int("stats", "expired_keys") > 0);
    assert!(control.info_int("stats", "expired_subkeys") > 0);
    assert!(want.len() > 20, "the workload left keys: {}", want.len());

    let commands = commands_of(&stream);
    let has = |name: &str| commands.iter().any(|c| c[0].eq_ignore_ascii_case(name));
    for name in [
        "SELECT",
        "MULTI",
        "EXEC",
        "DEL",
        "HDEL",
        "SREM",
        "PEXPIREAT",
        "HPEXPIREAT",
        "LPOP",
        "ZPOPMIN",
        "SWAPDB",
        "RESTORE",
    ] {
        assert!(has(name), "the stream has no {name}");
    }
    for name in [
        "EXPIRE",
        "PEXPIRE",
        "EXPIREAT",
        "SETEX",
        "PSETEX",
        "GETEX",
        "GETDEL",
        "INCRBYFLOAT",
        "HINCRBYFLOAT",
        "SPOP",
        "BLPOP",
        "BRPOP",
        "BLMOVE",
        "BLMPOP",
        "BZPOPMIN",
        "BZMPOP",
        "LMPOP",
        "ZMPOP",
        "HEXPIRE",
        "TTL",
        "GET",
    ] {
        assert!(!has(name), "{name} went into the stream as run");
    }
    assert!(
        commands
            .iter()
            .any(|c| c[0] == "SET" && c.get(3).is_some_and(|w| w == "PXAT")),
        "SET ... PXAT"
    );
    assert!(
        !commands.iter().any(|c| c[0].eq_ignore_ascii_case("SET")
            && c.iter()
                .any(|w| w.eq_ignore_ascii_case("EX") || w.eq_ignore_ascii_case("PX"))),
        "a relative SET deadline went into the stream"
    );

    for shards in [3, 1] {
        let copy = Server::start(shards, &[]);
        let errors = replay(&copy, &stream);
        assert!(
            errors.is_empty(),
            "replaying into {shards} shard(s): {errors:?}"
        );
        let got = dump(&mut copy.raw());
        let diff = differences(&format!("{shards} shard(s):"), &want, &got);
        assert!(
            diff.is_empty(),
            "{} keys differ (of {}); first ones:\n{}",
            diff.len(),
            want.len(),
            diff.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
        );
    }
}

#[test]
fn recording_is_a_debug_command() {
    let server = Server::start(1, &[]);
    let mut raw = server.raw();
    let refused = raw.cmd(&["DEBUG", "EMBER-RECORD", "START"]);
    assert!(matches!(refused, Reply::Error(e) if e.starts_with("ERR DEBUG command not allowed")));
    let server = Server::start(2, DEBUG);
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["DEBUG", "EMBER-RECORD", "STOP"]),
        Reply::Bulk(Vec::new()),
        "nothing recorded while off"
    );
    assert!(matches!(
        raw.cmd(&["DEBUG", "EMBER-RECORD", "NOW"]),
        Reply::Error(_)
    ));
    assert_eq!(raw.cmd(&["DEBUG", "EMBER-RECORD", "START"]), Reply::ok());
    raw.cmd(&["SET", "a", "1"]);
    raw.cmd(&["SET", "a", "1", "NX"]);
    raw.cmd(&["DEL", "missing"]);
    raw.cmd(&["GET", "a"]);
    let Reply::Bulk(stream) = raw.cmd(&["DEBUG", "EMBER-RECORD", "STOP"]) else {
        panic!("STOP answers a bulk string");
    };
    assert_eq!(
        commands_of(&stream),
        [owned(&["SELECT", "0"]), owned(&["SET", "a", "1"])],
        "only what changed the keyspace"
    );
    raw.cmd(&["SET", "b", "1"]);
    assert_eq!(
        raw.cmd(&["DEBUG", "EMBER-RECORD", "STOP"]),
        Reply::Bulk(Vec::new())
    );
}

/// A redis-server with an append-only file in a fresh directory, killed
/// (and the directory removed) when dropped.
struct AofRedis {
    redis: Redis,
    dir: std::path::PathBuf,
}

impl AofRedis {
    fn start() -> Option<AofRedis> {
        let dir =
            std::env::temp_dir().join(format!("ember-aof-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&dir).ok()?;
        let args: [&std::ffi::OsStr; 6] = [
            "--appendonly".as_ref(),
            "yes".as_ref(),
            "--appendfsync".as_ref(),
            "always".as_ref(),
            "--dir".as_ref(),
            dir.as_os_str(),
        ];
        let redis = Redis::start(&args)?;
        Some(AofRedis { redis, dir })
    }

    /// The commands appended since it started (Redis 7's multi-part AOF).
    fn aof(&self) -> Vec<u8> {
        let dir = self.dir.join("appendonlydir");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).expect("appendonlydir") {
            let path = entry.unwrap().path();
            if path.to_string_lossy().ends_with(".incr.aof") {
                out.extend(std::fs::read(path).unwrap());
            }
        }
        out
    }
}

impl Drop for AofRedis {
    fn drop(&mut self) {
        self.redis.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A fixed script whose every rewrite is deterministic (no random picks),
/// with a blocked client served by a push.
fn script(raw: &mut Raw, port: u16) {
    let run = |raw: &mut Raw, words: &str| {
        let args: Vec<&str> = words.split(' ').collect();
        raw.cmd(&args)
    };
    for words in [
        "SET a 1 EX 100",
        "SET b 1 PX 100000 NX GET",
        "SET c v KEEPTTL GET",
        "SETEX d 100 v",
        "PSETEX e 100000 v",
        "EXPIRE a 200",
        "PEXPIRE a 300000 GT",
        "EXPIREAT a 99999999999",
        "EXPIRE d -1",
        "GETEX c EX 100",
        "GETEX c PERSIST",
        "GETEX c PXAT 1",
        "SET f 1",
        "GETDEL f",
        "GETDEL f",
        "SET g 1.5",
        "INCRBYFLOAT g 0.1",
        "HSET h f 1",
        "HINCRBYFLOAT h f 0.5",
        "PFADD p a b c",
        "PFADD p a",
        "PFCOUNT p",
        "PFCOUNT p",
        "PFMERGE p2 p",
        "PFCOUNT p p2",
        "PFDEBUG TODENSE p",
        "PFDEBUG TODENSE p",
        "SADD one a",
        "SPOP one",
        "SADD s a b c",
        "SPOP s 3",
        "RPUSH l a b c d",
        "LMPOP 1 l LEFT COUNT 2",
        "ZADD z 1 a 2 b 3 c",
        "ZMPOP 1 z MIN COUNT 2",
        "GEOADD geo 13.361389 38.115556 Palermo 15.087269 37.502669 Catania",
        "GEOADD geo NX 13.361389 38.115556 Palermo",
        "GEOADD geo CH XX 13.5 38.2 Palermo",
        "GEORADIUS geo 15 37 200 km STORE geo2",
        "GEOSEARCHSTORE geo3 geo FROMMEMBER Palermo BYRADIUS 300 km",
        "XADD xs 5-* a 1",
        "XADD xs MAXLEN ~ 1 6-* b 2",
        "XADD xs MINID ~ 0 7-* c 3",
        "XTRIM xs MAXLEN 2",
        "XDEL xs 6-0",
        "XSETID xs 9-0",
        "BLPOP l 0",
        "MULTI",
        "SET m1 1",
        "EXEC",
        "MULTI",
        "SET m1 1",
        "SET m2 2",
        "EXEC",
        "MULTI",
        "GET m1",
        "EXEC",
        "DEL nothing",
        "SET r 1",
        "RENAME r r2",
        "COPY r2 r3",
        "MOVE r3 5",
        "SELECT 2",
        "SET x 1",
        "SWAPDB 0 1",
        "SELECT 0",
    ] {
        run(raw, words);
    }
    // Blocked clients served by a later push: their non-blocking forms.
    for (wait, push) in [
        ("BLPOP bl 5", "RPUSH bl 1 2"),
        ("BLMOVE bm dst LEFT RIGHT 5", "RPUSH bm 1"),
        ("BZPOPMIN bz 5", "ZADD bz 1 a 2 b"),
        ("BLMPOP 5 1 bmp RIGHT COUNT 2", "RPUSH bmp 1 2 3"),
        ("BZMPOP 5 1 bzm MAX COUNT 5", "ZADD bzm 1 a 2 b"),
    ] {
        let mut blocked = Raw::connect(port);
        let args: Vec<&str> = wait.split(' ').collect();
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        blocked.send_cmd(&args);
        // Pushed once the waiter shows as blocked.
        assert!(common::wait_until(Duration::from_secs(5), || {
            raw.cmd(&["INFO", "clients"])
                .text()
                .contains("blocked_clients:1")
        }));
        run(raw, push);
        assert!(matches!(
            blocked.read(),
            Some(Reply::Array(_) | Reply::Bulk(_))
        ));
    }
    run(raw, "FLUSHALL");
}

/// A stream with every absolute time near now replaced, lines upper-cased
/// (Redis echoes the client's case in what it keeps as sent).
fn normalized(stream: &[u8], around_ms: u64) -> Vec<String> {
    commands_of(stream)
        .into_iter()
        .map(|words| {
            words
                .iter()
                .map(|w| match w.parse::<u64>() {
                    Ok(t) if t.abs_diff(around_ms) < 86_400_000 => "<now>".to_string(),
                    _ => w.to_ascii_uppercase(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn the_stream_is_what_redis_writes_to_its_append_only_file() {
    let Some(redis) = AofRedis::start() else {
        eprintln!("redis-server is not installed: AOF comparison skipped (CI installs it)");
        return;
    };
    let server = Server::start(1, DEBUG);
    let mut raw = server.raw();
    let now = unix_ms();
    assert_eq!(raw.cmd(&["DEBUG", "EMBER-RECORD", "START"]), Reply::ok());
    script(&mut raw, server.port);
    let Reply::Bulk(ours) = raw.cmd(&["DEBUG", "EMBER-RECORD", "STOP"]) else {
        panic!("STOP answers a bulk string");
    };
    let mut reference = Raw::connect(redis.redis.port);
    script(&mut reference, redis.redis.port);
    let theirs = redis.aof();
    assert_eq!(normalized(&ours, now), normalized(&theirs, now));
}

/// Keys evicted over `maxmemory` reach the stream as DELs, so a replica or
/// a replayed file loses them too (Redis propagates an eviction as the
/// deletion it is).
#[test]
fn evictions_replay_as_deletions() {
    let original = Server::start(2, &[DEBUG, &["--maxmemory-policy", "allkeys-lru"]].concat());
    let mut c = original.raw();
    assert_eq!(c.cmd(&["DEBUG", "EMBER-RECORD", "START"]), Reply::ok());
    let value = "v".repeat(1024);
    let sets: Vec<Vec<Vec<u8>>> = (0..3000)
        .map(|i| args(&["SET", &format!("k{i}"), &value]))
        .collect();
    assert!(c.pipeline(&sets).iter().all(|r| *r == Reply::ok()));
    // 1 MiB under what the keys hold: about a third of them go, the rest
    // stays evictable (a limit near the empty server's figure leaves no
    // key to evict once the tables and buffers are counted, and -OOM is
    // then the right answer).
    let filled = c.info_int("memory", "used_memory");
    let limit = (filled - 1024 * 1024).to_string();
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", &limit]), Reply::ok());
    // More writes while over the limit: evictions before commands too.
    let more: Vec<Vec<Vec<u8>>> = (3000..3500)
        .map(|i| args(&["SET", &format!("k{i}"), &value]))
        .collect();
    let replies = c.pipeline(&more);
    let refused: Vec<&Reply> = replies.iter().filter(|r| **r != Reply::ok()).collect();
    assert!(
        refused.is_empty(),
        "{} refused: {:?}",
        refused.len(),
        refused.first()
    );
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxmemory", "0"]), Reply::ok());
    let evicted = c.info_int("stats", "evicted_keys");
    assert!(evicted > 1000, "{evicted} evicted");
    let Reply::Bulk(stream) = c.cmd(&["DEBUG", "EMBER-RECORD", "STOP"]) else {
        panic!("STOP");
    };
    let want = dump(&mut c);
    assert_eq!(want.len() as i64, 3500 - evicted);
    let dels = commands_of(&stream)
        .iter()
        .filter(|c| c[0] == "DEL")
        .count();
    assert_eq!(dels as i64, evicted);
    for shards in [2, 1] {
        let copy = Server::start(shards, &[]);
        assert!(replay(&copy, &stream).is_empty());
        let got = dump(&mut copy.raw());
        let diff = differences(&format!("{shards} shard(s):"), &want, &got);
        assert!(
            diff.is_empty(),
            "{} keys differ: {:?}",
            diff.len(),
            &diff[..diff.len().min(5)]
        );
    }
}
