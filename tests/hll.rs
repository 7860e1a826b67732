//! HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFDEBUG against a real ember,
//! with keys on several shards, and against redis-server 7.0: the same
//! PFADDs leave the same bytes (GET) in both, sparse and dense, and give
//! the same counts; an HLL carried either way by GET and SET counts the
//! same; the errors are Redis's.

mod common;

use common::reference::Redis;
use common::{keys_on_shard, Raw, Reply, Server};

fn int(n: i64) -> Reply {
    Reply::Int(n)
}

fn get(c: &mut Raw, key: &str) -> Vec<u8> {
    match c.cmd(&["GET", key]) {
        Reply::Bulk(b) => b,
        other => panic!("GET {key}: {other:?}"),
    }
}

fn elements(from: usize, n: usize) -> Vec<String> {
    (from..from + n).map(|i| format!("el:{i}")).collect()
}

fn pfadd(c: &mut Raw, key: &str, items: &[String]) -> Reply {
    let mut args = vec!["PFADD", key];
    args.extend(items.iter().map(String::as_str));
    c.cmd(&args)
}

#[test]
fn add_count_and_the_cache_bit() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    assert_eq!(c.cmd(&["PFADD", "h"]), int(1));
    assert_eq!(c.cmd(&["PFCOUNT", "h"]), int(0));
    assert_eq!(c.cmd(&["PFADD", "h", "a", "b", "c"]), int(1));
    assert_eq!(c.cmd(&["PFADD", "h", "a", "b", "c"]), int(0));
    assert_eq!(
        c.cmd(&["GETRANGE", "h", "15", "15"]),
        Reply::Bulk(vec![0x80])
    );
    assert_eq!(c.cmd(&["PFCOUNT", "h"]), int(3));
    assert_eq!(c.cmd(&["GETRANGE", "h", "15", "15"]), Reply::Bulk(vec![0]));
    assert_eq!(c.cmd(&["PFCOUNT", "nosuch"]), int(0));
    assert_eq!(c.cmd(&["TYPE", "h"]), Reply::Simple("string".into()));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "h"]), Reply::bulk("raw"));
    assert_eq!(
        c.cmd(&["PFDEBUG", "ENCODING", "h"]),
        Reply::Simple("sparse".into())
    );
    assert_eq!(
        c.cmd(&["PFDEBUG", "DECODE", "h"]),
        Reply::bulk("Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603")
    );
    assert_eq!(c.cmd(&["PFDEBUG", "TODENSE", "h"]), int(1));
    assert_eq!(c.cmd(&["PFDEBUG", "TODENSE", "h"]), int(0));
    assert_eq!(c.cmd(&["STRLEN", "h"]), int(12304));
    assert_eq!(c.cmd(&["PFCOUNT", "h"]), int(3));
    let Reply::Array(regs) = c.cmd(&["PFDEBUG", "GETREG", "h"]) else {
        panic!("GETREG")
    };
    assert_eq!(regs.len(), 16384);
    assert_eq!(regs.iter().filter(|r| **r != int(0)).count(), 3);
}

#[test]
fn errors_are_redis_texts() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let not_hll = Reply::Error("WRONGTYPE Key is not a valid HyperLogLog string value.".into());
    let wrongtype =
        Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into());
    let corrupt = Reply::Error("INVALIDOBJ Corrupted HLL object detected".into());
    c.cmd(&["SET", "s", "bar"]);
    c.cmd(&["RPUSH", "l", "x"]);
    assert_eq!(c.cmd(&["PFADD", "s", "1"]), not_hll);
    assert_eq!(c.cmd(&["PFCOUNT", "s"]), not_hll);
    assert_eq!(c.cmd(&["PFADD", "l", "1"]), wrongtype);
    assert_eq!(c.cmd(&["PFMERGE", "d", "s"]), not_hll);
    c.cmd(&["PFADD", "h", "a", "b", "c"]);
    c.cmd(&["APPEND", "h", "hello"]);
    assert_eq!(c.cmd(&["PFCOUNT", "h"]), corrupt);
    c.cmd(&["DEL", "h"]);
    c.cmd(&["PFADD", "h", "a"]);
    c.cmd(&["SETRANGE", "h", "4", "\0"]);
    assert_eq!(c.cmd(&["PFCOUNT", "h"]), not_hll);
    assert_eq!(
        c.cmd(&["PFDEBUG", "GETREG", "nosuch"]),
        Reply::Error("ERR The specified key does not exist".into())
    );
    c.cmd(&["DEL", "h"]);
    c.cmd(&["PFADD", "h", "a"]);
    assert_eq!(
        c.cmd(&["PFDEBUG", "nope", "h"]),
        Reply::Error("ERR Unknown PFDEBUG subcommand 'nope'".into())
    );
    c.cmd(&["PFDEBUG", "TODENSE", "h"]);
    assert_eq!(
        c.cmd(&["PFDEBUG", "DECODE", "h"]),
        Reply::Error("ERR HLL encoding is not sparse".into())
    );
}

#[test]
fn several_keys_on_several_shards_count_and_merge_their_union() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let keys: Vec<String> = (0..3)
        .map(|s| keys_on_shard("hll", s, 3, 1).remove(0))
        .collect();
    for (i, key) in keys.iter().enumerate() {
        pfadd(&mut c, key, &elements(i * 500, 1000));
    }
    let (a, b, d) = (&keys[0], &keys[1], &keys[2]);
    let union = c.int(&["PFCOUNT", a, b, d]);
    assert!((union - 2000).abs() < 40, "{union}");
    assert_eq!(c.cmd(&["PFCOUNT", a, "missing", b, d]), int(union));
    // The same union merged on one shard, for comparison.
    let local: Vec<String> = keys_on_shard("{one}", 0, 3, 1);
    let one = &local[0];
    let tagged = ["{one}a", "{one}b", "{one}c"];
    for (i, key) in tagged.iter().enumerate() {
        pfadd(&mut c, key, &elements(i * 500, 1000));
    }
    assert_eq!(
        c.cmd(&["PFMERGE", one, tagged[0], tagged[1], tagged[2]]),
        Reply::Simple("OK".into())
    );
    assert_eq!(c.cmd(&["PFMERGE", a, b, d]), Reply::Simple("OK".into()));
    assert_eq!(get(&mut c, a), get(&mut c, one));
    assert_eq!(c.int(&["PFCOUNT", a]), union);
    c.cmd(&["SET", "junk", "x"]);
    let junk = keys_on_shard("junk", 1, 3, 1).remove(0);
    c.cmd(&["SET", &junk, "not an hll at all"]);
    assert_eq!(
        c.cmd(&["PFCOUNT", a, &junk]),
        Reply::Error("WRONGTYPE Key is not a valid HyperLogLog string value.".into())
    );
    assert_eq!(
        c.cmd(&["PFMERGE", a, &junk]),
        Reply::Error("WRONGTYPE Key is not a valid HyperLogLog string value.".into())
    );
}

/// Starts both servers (None: no redis-server here).
fn both(test: &str, nshards: usize) -> Option<(Redis, Server)> {
    let redis = Redis::or_skip(test)?;
    Some((redis, Server::start(nshards, &[])))
}

#[test]
fn same_pfadds_leave_redis_bytes_and_counts() {
    let Some((redis, server)) = both("same_pfadds_leave_redis_bytes_and_counts", 2) else {
        return;
    };
    let mut r = Raw::connect(redis.port);
    let mut e = server.raw();
    // Sparse sizes, the promotion, and dense; one element at a time and in
    // batches; then a lower sparse limit.
    for (key, batches, per) in [("a", 5, 1), ("b", 40, 7), ("c", 30, 100), ("d", 3, 5000)] {
        for i in 0..batches {
            let items = elements(i * per, per);
            assert_eq!(pfadd(&mut r, key, &items), pfadd(&mut e, key, &items));
            assert_eq!(get(&mut r, key), get(&mut e, key), "{key} after batch {i}");
            assert_eq!(r.cmd(&["PFCOUNT", key]), e.cmd(&["PFCOUNT", key]));
            assert_eq!(get(&mut r, key), get(&mut e, key), "{key} cached");
        }
        assert_eq!(
            r.cmd(&["PFDEBUG", "ENCODING", key]),
            e.cmd(&["PFDEBUG", "ENCODING", key])
        );
    }
    for c in [&mut r, &mut e] {
        assert_eq!(
            c.cmd(&["CONFIG", "SET", "hll-sparse-max-bytes", "200"]),
            Reply::Simple("OK".into())
        );
    }
    for i in 0..20 {
        let items = elements(i * 13, 13);
        assert_eq!(
            pfadd(&mut r, "small", &items),
            pfadd(&mut e, "small", &items)
        );
        assert_eq!(get(&mut r, "small"), get(&mut e, "small"), "small {i}");
    }
    // Merges, on one shard and across.
    let sources = ["a", "b", "c", "small"];
    let mut args = vec!["PFMERGE", "m"];
    args.extend(sources);
    assert_eq!(r.cmd(&args), e.cmd(&args));
    assert_eq!(get(&mut r, "m"), get(&mut e, "m"));
    let mut args = vec!["PFMERGE", "m2", "a", "b"];
    assert_eq!(r.cmd(&args), e.cmd(&args));
    assert_eq!(get(&mut r, "m2"), get(&mut e, "m2"));
    args = vec!["PFCOUNT", "a", "b", "c", "d", "small", "none"];
    assert_eq!(r.cmd(&args), e.cmd(&args));
}

#[test]
fn hlls_travel_between_the_servers_by_get_and_set() {
    let Some((redis, server)) = both("hlls_travel_between_the_servers_by_get_and_set", 2) else {
        return;
    };
    let mut r = Raw::connect(redis.port);
    let mut e = server.raw();
    for (key, n) in [("x", 50), ("y", 900), ("z", 20000)] {
        pfadd(&mut r, key, &elements(7, n));
        let bytes = get(&mut r, key);
        e.cmd_bytes(&[b"SET", key.as_bytes(), &bytes]);
        assert_eq!(e.cmd(&["PFCOUNT", key]), r.cmd(&["PFCOUNT", key]));
        // And back: ember's additions read in redis-server.
        pfadd(&mut e, key, &elements(100_000, 300));
        let bytes = get(&mut e, key);
        r.cmd_bytes(&[b"SET", key.as_bytes(), &bytes]);
        assert_eq!(r.cmd(&["PFCOUNT", key]), e.cmd(&["PFCOUNT", key]));
        // Corruptions answer the same.
        for (pos, byte) in [(16usize, 0xffu8), (20, 0x00), (17, 0x40)] {
            if pos >= bytes.len() {
                continue;
            }
            let mut bad = bytes.clone();
            bad[pos] = byte;
            r.cmd_bytes(&[b"SET", b"bad", &bad]);
            e.cmd_bytes(&[b"SET", b"bad", &bad]);
            assert_eq!(
                r.cmd(&["PFCOUNT", "bad"]),
                e.cmd(&["PFCOUNT", "bad"]),
                "{key} {pos}"
            );
            assert_eq!(r.cmd(&["PFADD", "bad", "q"]), e.cmd(&["PFADD", "bad", "q"]));
            assert_eq!(get(&mut r, "bad"), get(&mut e, "bad"));
        }
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Randomly corrupted HLLs, as Redis's own fuzz test makes them: every
/// command answers as redis-server does (the error, or the same count and
/// bytes), and nothing crashes.
#[test]
fn corrupted_hlls_answer_as_redis() {
    let Some((redis, server)) = both("corrupted_hlls_answer_as_redis", 2) else {
        return;
    };
    let mut r = Raw::connect(redis.port);
    let mut e = server.raw();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..300 {
        let n = rng.below(2500);
        let items = elements(rng.below(1_000_000), n);
        let mut bytes = {
            r.cmd(&["DEL", "src"]);
            pfadd(&mut r, "src", &items);
            get(&mut r, "src")
        };
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(bytes.len());
            bytes[at] = rng.next() as u8;
        }
        let mut answers = Vec::new();
        for c in [&mut r, &mut e] {
            let mut got = Vec::new();
            for steps in [
                &[&["PFCOUNT", "{t}h"][..]][..],
                &[&["PFCOUNT", "{t}h", "{t}none"]],
                &[&["PFMERGE", "{t}d", "{t}h"], &["GET", "{t}d"]],
                &[&["PFADD", "{t}h", "x", "y", "z"], &["GET", "{t}h"]],
                &[&["PFDEBUG", "TODENSE", "{t}h"], &["GET", "{t}h"]],
            ] {
                c.cmd_bytes(&[b"SET", b"{t}h", &bytes]);
                c.cmd(&["DEL", "{t}d"]);
                for step in steps {
                    got.push(c.cmd(step));
                }
            }
            answers.push(got);
        }
        assert_eq!(answers[0], answers[1], "round {round}: {bytes:?}");
    }
}
