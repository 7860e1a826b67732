//! Hash field expiry, Redis 7.4's HEXPIRE family. redis-server 7.0 lacks
//! these commands: the expected replies, error texts and events follow the
//! Redis 7.4 source (`t_hash.c`); the plain hash replies around them were
//! checked against redis-server 7.0.15.

mod common;

use std::time::{Duration, Instant};

use common::{args, bulks, err, int, keys_on_shard, ok, unix_ms, wait_until, Raw, Reply, Server};

/// A deadline far in the future (2100-01-01), so exact comparisons work.
const FAR_MS: u64 = 4_102_444_800_123;

fn codes(items: &[i64]) -> Reply {
    Reply::Array(items.iter().map(|&n| int(n)).collect())
}

fn at(ms: u64) -> String {
    ms.to_string()
}

fn expired_subkeys(r: &mut Raw) -> i64 {
    r.info_int("stats", "expired_subkeys")
}

/// Keys of database `db` as INFO keyspace counts them (0 when absent);
/// reading INFO touches no key, so nothing expires lazily.
fn keyspace_keys(r: &mut Raw, db: usize) -> i64 {
    r.info_field("keyspace", &format!("db{db}"))
        .map_or(0, |line| {
            let keys = line.split(',').next().unwrap();
            keys.trim_start_matches("keys=").parse().unwrap()
        })
}

#[test]
fn setters_answer_one_code_per_field() {
    let server = Server::start(2, &[]);
    let mut r = server.raw();
    assert_eq!(
        r.cmd(&["HEXPIRE", "missing", "10", "FIELDS", "2", "a", "b"]),
        codes(&[-2, -2])
    );
    assert_eq!(r.cmd(&["EXISTS", "missing"]), int(0));
    assert_eq!(
        r.cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"]),
        int(4)
    );
    let t = FAR_MS;
    assert_eq!(
        r.cmd(&["HPEXPIREAT", "h", &at(t), "FIELDS", "3", "a", "b", "zz"]),
        codes(&[1, 1, -2])
    );
    // NX: only fields without a deadline.
    assert_eq!(
        r.cmd(&["HPEXPIREAT", "h", &at(t + 5), "nx", "FIELDS", "2", "a", "c"]),
        codes(&[0, 1])
    );
    // XX: only fields with one.
    assert_eq!(
        r.cmd(&["HPEXPIREAT", "h", &at(t - 5), "XX", "FIELDS", "2", "a", "d"]),
        codes(&[1, 0])
    );
    // GT: no deadline counts as infinite, so it never wins; equal fails.
    assert_eq!(
        r.cmd(&[
            "HPEXPIREAT",
            "h",
            &at(t),
            "GT",
            "FIELDS",
            "4",
            "a",
            "b",
            "c",
            "d"
        ]),
        codes(&[1, 0, 0, 0])
    );
    // LT: a field without deadline always takes one.
    assert_eq!(
        r.cmd(&[
            "HPEXPIREAT",
            "h",
            &at(t - 1),
            "LT",
            "FIELDS",
            "3",
            "a",
            "b",
            "d"
        ]),
        codes(&[1, 1, 1])
    );
    assert_eq!(
        r.cmd(&["HPEXPIRETIME", "h", "FIELDS", "4", "a", "b", "c", "d"]),
        codes(&[t as i64 - 1, t as i64 - 1, t as i64 + 5, t as i64 - 1])
    );
    // A field named twice is answered twice.
    assert_eq!(
        r.cmd(&["HPEXPIREAT", "h", &at(t + 9), "GT", "FIELDS", "2", "a", "a"]),
        codes(&[1, 0])
    );
    // A deadline now or past deletes the field (2), after the condition.
    assert_eq!(r.cmd(&["HSET", "h", "e", "5"]), int(1));
    assert_eq!(
        r.cmd(&["HEXPIRE", "h", "0", "XX", "FIELDS", "1", "e"]),
        codes(&[0])
    );
    assert_eq!(
        r.cmd(&["HEXPIRE", "h", "0", "FIELDS", "3", "e", "zz", "e"]),
        codes(&[2, -2, -2])
    );
    assert_eq!(
        r.cmd(&["HPEXPIREAT", "h", "1", "FIELDS", "2", "a", "b"]),
        codes(&[2, 2])
    );
    assert_eq!(r.cmd(&["HKEYS", "h"]), bulks(&["c", "d"]));
    // Relative forms count from now.
    let before = unix_ms();
    assert_eq!(
        r.cmd(&["HEXPIRE", "h", "100", "FIELDS", "1", "c"]),
        codes(&[1])
    );
    assert_eq!(
        r.cmd(&["HPEXPIRE", "h", "5000", "FIELDS", "1", "d"]),
        codes(&[1])
    );
    let after = unix_ms();
    let deadlines = r
        .cmd(&["HPEXPIRETIME", "h", "FIELDS", "2", "c", "d"])
        .items();
    assert!((before + 100_000..=after + 100_000).contains(&(deadlines[0].int() as u64)));
    assert!((before + 5_000..=after + 5_000).contains(&(deadlines[1].int() as u64)));
    assert_eq!(
        r.cmd(&[
            "HEXPIREAT",
            "h",
            &(FAR_MS / 1000).to_string(),
            "FIELDS",
            "1",
            "c"
        ]),
        codes(&[1])
    );
    assert_eq!(
        r.cmd(&["HPEXPIRETIME", "h", "FIELDS", "1", "c"]),
        codes(&[(FAR_MS / 1000 * 1000) as i64])
    );
    // Deleting the last fields with a past deadline removes the key.
    assert_eq!(
        r.cmd(&["HPEXPIRE", "h", "0", "FIELDS", "2", "c", "d"]),
        codes(&[2, 2])
    );
    assert_eq!(r.cmd(&["EXISTS", "h"]), int(0));
    assert_eq!(
        expired_subkeys(&mut r),
        5,
        "past deadlines count as expired"
    );
}

#[test]
fn readers_and_hpersist() {
    let server = Server::start(2, &[]);
    let mut r = server.raw();
    for cmd in ["HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"] {
        assert_eq!(
            r.cmd(&[cmd, "missing", "FIELDS", "2", "a", "b"]),
            codes(&[-2, -2]),
            "{cmd}"
        );
    }
    assert_eq!(r.cmd(&["HSET", "h", "a", "1", "b", "2"]), int(2));
    assert_eq!(
        r.cmd(&["HPEXPIREAT", "h", &at(FAR_MS), "FIELDS", "1", "a"]),
        codes(&[1])
    );
    let far = FAR_MS as i64;
    assert_eq!(
        r.cmd(&["HPEXPIRETIME", "h", "fields", "3", "a", "b", "zz"]),
        codes(&[far, -1, -2])
    );
    // Seconds round up for fields (Redis 7.4: (ms + 999) / 1000).
    assert_eq!(
        r.cmd(&["HEXPIRETIME", "h", "FIELDS", "3", "a", "b", "zz"]),
        codes(&[far / 1000 + 1, -1, -2])
    );
    let before = unix_ms() as i64;
    let pttl = r.cmd(&["HPTTL", "h", "FIELDS", "1", "a"]).items()[0].int();
    let after = unix_ms() as i64;
    assert!((far - after..=far - before).contains(&pttl), "{pttl}");
    assert_eq!(
        r.cmd(&["HPEXPIRE", "h", "1500", "FIELDS", "1", "b"]),
        codes(&[1])
    );
    assert_eq!(r.cmd(&["HTTL", "h", "FIELDS", "1", "b"]), codes(&[2]));
    assert_eq!(
        r.cmd(&["HPERSIST", "h", "FIELDS", "3", "a", "b", "zz"]),
        codes(&[1, 1, -2])
    );
    assert_eq!(
        r.cmd(&["HPERSIST", "h", "FIELDS", "2", "a", "b"]),
        codes(&[-1, -1])
    );
    assert_eq!(
        r.cmd(&["HTTL", "h", "FIELDS", "2", "a", "b"]),
        codes(&[-1, -1])
    );
    assert_eq!(r.cmd(&["HGETALL", "h"]), bulks(&["a", "1", "b", "2"]));
}

#[test]
fn errors_are_redis_7_4_texts() {
    let server = Server::start(2, &[]);
    let mut r = server.raw();
    r.cmd(&["HSET", "h", "a", "1"]);
    let arity = |c: &str| err(&format!("ERR wrong number of arguments for '{c}' command"));
    assert_eq!(
        r.cmd(&["HEXPIRE", "h", "10", "FIELDS", "1"]),
        arity("hexpire")
    );
    assert_eq!(
        r.cmd(&["HPEXPIREAT", "h", "10", "FIELDS"]),
        arity("hpexpireat")
    );
    assert_eq!(r.cmd(&["HTTL", "h", "FIELDS", "1"]), arity("httl"));
    assert_eq!(r.cmd(&["HPERSIST", "h", "FIELDS"]), arity("hpersist"));
    let missing_fields =
        err("ERR Mandatory argument FIELDS is missing or not at the right position");
    let bad_count = err("ERR Parameter `numFields` should be greater than 0");
    let bad_count_reader = err("ERR Number of fields must be a positive integer");
    let mismatch = err("ERR The `numfields` parameter must match the number of arguments");
    let cases: &[(&[&str], Reply)] = &[
        (
            &["HEXPIRE", "h", "abc", "FIELDS", "1", "a"],
            err("ERR value is not an integer or out of range"),
        ),
        (
            &["HEXPIRE", "h", "-1", "FIELDS", "1", "a"],
            err("ERR invalid expire time, must be >= 0"),
        ),
        (
            &["HEXPIREAT", "h", "70368744178", "FIELDS", "1", "a"],
            err("ERR invalid expire time in 'hexpireat' command"),
        ),
        (
            &["HPEXPIRE", "h", "70368744177663", "FIELDS", "1", "a"],
            err("ERR invalid expire time in 'hpexpire' command"),
        ),
        (
            &["HEXPIRE", "h", "10", "FIELD", "1", "a"],
            missing_fields.clone(),
        ),
        (
            &["HEXPIRE", "h", "10", "NX", "XX", "FIELDS", "1", "a"],
            missing_fields.clone(),
        ),
        (
            &["HEXPIRE", "h", "10", "FIELDS", "0", "a"],
            bad_count.clone(),
        ),
        (&["HEXPIRE", "h", "10", "NX", "FIELDS", "x", "a"], bad_count),
        (
            &["HEXPIRE", "h", "10", "FIELDS", "2", "a"],
            mismatch.clone(),
        ),
        (
            &["HEXPIRE", "h", "10", "FIELDS", "1", "a", "b"],
            mismatch.clone(),
        ),
        (
            &["HEXPIRE", "nokey", "10", "FIELDS", "2", "a"],
            mismatch.clone(),
        ),
        (&["HTTL", "h", "NOPE", "1", "a"], missing_fields.clone()),
        (
            &["HPTTL", "h", "FIELDS", "0", "a"],
            bad_count_reader.clone(),
        ),
        (&["HPERSIST", "h", "FIELDS", "-1", "a"], bad_count_reader),
        (
            &["HPERSIST", "h", "FIELDS", "3", "a", "b"],
            mismatch.clone(),
        ),
        (&["HEXPIRETIME", "nokey", "FIELDS", "1", "a", "b"], mismatch),
    ];
    for (argv, want) in cases {
        assert_eq!(&r.cmd(argv), want, "{argv:?}");
    }
    // The key is looked up first: WRONGTYPE wins over argument errors.
    r.cmd(&["SET", "s", "v"]);
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(
        r.cmd(&["HEXPIRE", "s", "abc", "FIELDS", "1", "a"]),
        wrongtype
    );
    assert_eq!(r.cmd(&["HTTL", "s", "FIELDS", "0", "a"]), wrongtype);
    assert_eq!(r.cmd(&["HPERSIST", "s", "NOPE", "1", "a"]), wrongtype);
    assert_eq!(
        r.cmd(&["HTTL", "h", "FIELDS", "1", "a"]),
        codes(&[-1]),
        "h unchanged"
    );
}

#[test]
fn expired_fields_are_invisible_at_once() {
    let server = Server::start(2, &["--enable-debug-command", "local"]);
    let mut r = server.raw();
    // Without the sweep, only the lookups can hide them.
    assert_eq!(r.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    r.cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    assert_eq!(
        r.cmd(&["HPEXPIRE", "h", "100", "FIELDS", "2", "a", "b"]),
        codes(&[1, 1])
    );
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(r.cmd(&["HGET", "h", "a"]), Reply::Nil);
    assert_eq!(expired_subkeys(&mut r), 2, "one lookup reclaimed both");
    assert_eq!(r.cmd(&["HEXISTS", "h", "b"]), int(0));
    assert_eq!(r.cmd(&["HLEN", "h"]), int(1));
    assert_eq!(r.cmd(&["HGETALL", "h"]), bulks(&["c", "3"]));
    assert_eq!(r.cmd(&["HKEYS", "h"]), bulks(&["c"]));
    assert_eq!(r.cmd(&["HVALS", "h"]), bulks(&["3"]));
    assert_eq!(
        r.cmd(&["HMGET", "h", "a", "c"]),
        Reply::Array(vec![Reply::Nil, Reply::bulk("3")])
    );
    assert_eq!(r.cmd(&["HSTRLEN", "h", "a"]), int(0));
    assert_eq!(r.cmd(&["HSETNX", "h", "a", "new"]), int(1));
    assert_eq!(r.cmd(&["HTTL", "h", "FIELDS", "1", "a"]), codes(&[-1]));
    // Each kind of access sees the field gone the moment it expires, and
    // with it the hash.
    let accesses: &[&[&str]] = &[
        &["HGET", "g", "f"],
        &["HLEN", "g"],
        &["HGETALL", "g"],
        &["HTTL", "g", "FIELDS", "1", "f"],
        &["HINCRBY", "g", "f", "1"],
        &["TYPE", "g"],
        &["EXISTS", "g"],
    ];
    let answers = [
        Reply::Nil,
        int(0),
        Reply::Array(vec![]),
        codes(&[-2]),
        int(1),
        Reply::Simple("none".into()),
        int(0),
    ];
    for (access, want) in accesses.iter().zip(answers) {
        r.cmd(&["DEL", "g"]);
        r.cmd(&["HSET", "g", "f", "5"]);
        r.cmd(&["HPEXPIRE", "g", "20", "FIELDS", "1", "f"]);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(r.cmd(access), want, "{access:?}");
    }
    // A hash whose every field expired is gone for KEYS, EXISTS and SCAN.
    r.cmd(&["FLUSHALL"]);
    r.cmd(&["HSET", "e", "x", "1"]);
    r.cmd(&["HPEXPIRE", "e", "20", "FIELDS", "1", "x"]);
    std::thread::sleep(Duration::from_millis(40));
    assert_eq!(r.cmd(&["KEYS", "*"]), Reply::Array(vec![]));
    assert_eq!(r.cmd(&["DBSIZE"]), int(1), "KEYS removes nothing");
    assert_eq!(
        r.cmd(&["SCAN", "0"]),
        Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])])
    );
    assert_eq!(r.cmd(&["DBSIZE"]), int(0), "SCAN removed it");
}

#[test]
fn hset_clears_a_field_ttl_hincrby_keeps_it_hdel_drops_it() {
    let server = Server::start(2, &[]);
    let mut r = server.raw();
    r.cmd(&["HSET", "h", "a", "1", "n", "5", "f", "1.5", "c", "x"]);
    let t = at(FAR_MS);
    assert_eq!(
        r.cmd(&["HPEXPIREAT", "h", &t, "FIELDS", "4", "a", "n", "f", "c"]),
        codes(&[1, 1, 1, 1])
    );
    assert_eq!(r.cmd(&["HSET", "h", "a", "2"]), int(0));
    assert_eq!(r.cmd(&["HSETNX", "h", "c", "y"]), int(0));
    assert_eq!(r.cmd(&["HINCRBY", "h", "n", "1"]), int(6));
    assert_eq!(r.cmd(&["HINCRBYFLOAT", "h", "f", "1"]), Reply::bulk("2.5"));
    let far = FAR_MS as i64;
    assert_eq!(
        r.cmd(&["HPEXPIRETIME", "h", "FIELDS", "4", "a", "n", "f", "c"]),
        codes(&[-1, far, far, far])
    );
    assert_eq!(r.cmd(&["HDEL", "h", "c"]), int(1));
    assert_eq!(r.cmd(&["HSET", "h", "c", "z"]), int(1));
    assert_eq!(r.cmd(&["HPTTL", "h", "FIELDS", "1", "c"]), codes(&[-1]));
    // A key TTL and field TTLs live side by side.
    assert_eq!(r.cmd(&["EXPIRE", "h", "1000"]), int(1));
    assert_eq!(r.cmd(&["TTL", "h"]), int(1000));
    assert_eq!(
        r.cmd(&["HPEXPIRETIME", "h", "FIELDS", "1", "n"]),
        codes(&[far])
    );
    assert_eq!(r.cmd(&["PERSIST", "h"]), int(1));
    assert_eq!(
        r.cmd(&["HPEXPIRETIME", "h", "FIELDS", "1", "n"]),
        codes(&[far])
    );
    // Replacing the hash replaces its field TTLs.
    r.cmd(&["DEL", "h"]);
    r.cmd(&["HSET", "h", "n", "1"]);
    assert_eq!(r.cmd(&["HPTTL", "h", "FIELDS", "1", "n"]), codes(&[-1]));
}

/// Fields `a` and `b` of `key` with `ttl_ms`, and `keep` with a far deadline.
fn hash_with_short_fields(r: &mut Raw, key: &str, ttl_ms: &str) {
    r.cmd(&["HSET", key, "a", "1", "b", "2"]);
    assert_eq!(
        r.cmd(&["HPEXPIRE", key, ttl_ms, "FIELDS", "2", "a", "b"]),
        codes(&[1, 1])
    );
}

#[test]
fn rename_copy_move_and_swapdb_carry_field_ttls_to_the_sweep() {
    let server = Server::start(2, &[]);
    let mut r = server.raw();
    let src = keys_on_shard("src", 0, 2, 1).remove(0);
    let dst = keys_on_shard("dst", 1, 2, 1).remove(0);
    // The deadlines travel with the value.
    r.cmd(&["HSET", &src, "a", "1"]);
    r.cmd(&["HPEXPIREAT", &src, &at(FAR_MS), "FIELDS", "1", "a"]);
    assert_eq!(r.cmd(&["RENAME", &src, &dst]), ok());
    assert_eq!(
        r.cmd(&["HPEXPIRETIME", &dst, "FIELDS", "1", "a"]),
        codes(&[FAR_MS as i64])
    );
    assert_eq!(r.cmd(&["COPY", &dst, &src]), int(1));
    assert_eq!(
        r.cmd(&["HPEXPIRETIME", &src, "FIELDS", "1", "a"]),
        codes(&[FAR_MS as i64])
    );
    r.cmd(&["FLUSHALL"]);
    // And the sweep reclaims them under the new name, with nobody reading:
    // cross-shard RENAME, COPY, MOVE and SWAPDB.
    hash_with_short_fields(&mut r, &src, "300");
    assert_eq!(r.cmd(&["RENAME", &src, &dst]), ok());
    hash_with_short_fields(&mut r, "c1", "300");
    assert_eq!(r.cmd(&["COPY", "c1", "c2"]), int(1));
    hash_with_short_fields(&mut r, "m", "300");
    assert_eq!(r.cmd(&["MOVE", "m", "1"]), int(1));
    assert_eq!(r.cmd(&["SELECT", "2"]), ok());
    hash_with_short_fields(&mut r, "s", "300");
    assert_eq!(r.cmd(&["SWAPDB", "2", "3"]), ok());
    assert_eq!(r.cmd(&["SELECT", "0"]), ok());
    assert_eq!(keyspace_keys(&mut r, 0), 3);
    assert_eq!(keyspace_keys(&mut r, 1), 1);
    assert_eq!(keyspace_keys(&mut r, 3), 1);
    assert!(
        wait_until(Duration::from_secs(3), || {
            (0..4).map(|db| keyspace_keys(&mut r, db)).sum::<i64>() == 0
        }),
        "keyspace {:?}",
        r.cmd(&["INFO", "keyspace"])
    );
    assert_eq!(expired_subkeys(&mut r), 10);
}

#[test]
fn ten_thousand_fields_are_reclaimed_actively_with_nobody_reading() {
    let server = Server::start(2, &[]);
    let mut r = server.raw();
    // 200 hashes of 50 fields, each field with a TTL of 1.0..1.4 s (long
    // enough that loading them on a busy machine does not outlast the
    // first); every tenth hash also has a field without TTL, so it survives.
    let mut load = Vec::new();
    for h in 0..200 {
        let key = format!("hash:{h}");
        let mut hset = vec!["HSET".to_string(), key.clone()];
        for f in 0..50 {
            hset.extend([format!("f{f}"), "v".into()]);
        }
        if h % 10 == 0 {
            hset.extend(["keep".to_string(), "v".into()]);
        }
        load.push(hset.iter().map(|s| s.as_bytes().to_vec()).collect());
        for f in 0..50 {
            let ttl = (1000 + (h * 50 + f) * 7 % 401).to_string();
            let field = format!("f{f}");
            load.push(args(&["HPEXPIRE", &key, &ttl, "FIELDS", "1", &field]));
        }
    }
    let replies = r.pipeline(&load);
    let set = replies.iter().filter(|&r| *r == codes(&[1])).count();
    assert_eq!(set, 10_000);
    let loaded = Instant::now();
    assert_eq!(keyspace_keys(&mut r, 0), 200);
    // INFO reads no key: only the sweep can remove the fields.
    assert!(
        wait_until(Duration::from_secs(4), || expired_subkeys(&mut r) == 10_000
            && keyspace_keys(&mut r, 0) == 20),
        "after {:?}: expired_subkeys {}, keys {}",
        loaded.elapsed(),
        expired_subkeys(&mut r),
        keyspace_keys(&mut r, 0)
    );
    assert_eq!(r.cmd(&["HGETALL", "hash:10"]), bulks(&["keep", "v"]));
    assert_eq!(r.cmd(&["EXISTS", "hash:11"]), int(0));
    assert_eq!(r.info_int("stats", "expired_keys"), 0, "no key expired");
}

/// A `__key*__:*` subscriber with a short read timeout.
fn key_subscriber(server: &Server) -> Raw {
    let mut s = server.raw();
    s.set_read_timeout(Duration::from_secs(5));
    assert_eq!(
        s.cmd(&["PSUBSCRIBE", "__key*__:*"]).items()[0],
        Reply::bulk("psubscribe")
    );
    s
}

/// The next `n` events as (event, key), from the `__keyevent` channel.
fn next_events(s: &mut Raw, n: usize) -> Vec<(String, String)> {
    let mut events = Vec::new();
    while events.len() < n {
        let items = s.read().expect("an event").items();
        let channel = items[2].text();
        if let Some(event) = channel.strip_prefix("__keyevent@0__:") {
            events.push((event.to_string(), items[3].text()));
        }
    }
    events
}

fn ev(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(e, k)| (e.to_string(), k.to_string()))
        .collect()
}

#[test]
fn keyspace_events() {
    let server = Server::start(1, &["--enable-debug-command", "local"]);
    let mut r = server.raw();
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]),
        ok()
    );
    let mut s = key_subscriber(&server);
    r.cmd(&["HSET", "h", "a", "1", "b", "2"]);
    assert_eq!(next_events(&mut s, 1), ev(&[("hset", "h")]));
    r.cmd(&["HEXPIRE", "h", "100", "FIELDS", "2", "a", "zz"]);
    r.cmd(&["HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"]); // changes nothing
    r.cmd(&["HPERSIST", "h", "FIELDS", "1", "a"]);
    r.cmd(&["HPERSIST", "h", "FIELDS", "1", "a"]); // changes nothing
    r.cmd(&["HEXPIRE", "h", "0", "FIELDS", "1", "a"]);
    r.cmd(&["HEXPIRE", "h", "0", "FIELDS", "1", "b"]);
    assert_eq!(
        next_events(&mut s, 5),
        ev(&[
            ("hexpire", "h"),
            ("hpersist", "h"),
            ("hdel", "h"),
            ("hdel", "h"),
            ("del", "h")
        ])
    );
    // Reclaimed by the sweep: hexpired, then del once the hash is empty.
    r.cmd(&["HSET", "g", "a", "1", "b", "2"]);
    r.cmd(&["HPEXPIRE", "g", "50", "FIELDS", "1", "a"]);
    r.cmd(&["HPEXPIRE", "g", "250", "FIELDS", "1", "b"]);
    assert_eq!(
        next_events(&mut s, 5),
        ev(&[
            ("hset", "g"),
            ("hexpire", "g"),
            ("hexpire", "g"),
            ("hexpired", "g"),
            ("hexpired", "g")
        ])
    );
    assert_eq!(next_events(&mut s, 1), ev(&[("del", "g")]));
    // Reclaimed by a lookup: the same events.
    assert_eq!(r.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    r.cmd(&["HSET", "k", "a", "1"]);
    r.cmd(&["HPEXPIRE", "k", "20", "FIELDS", "1", "a"]);
    std::thread::sleep(Duration::from_millis(40));
    assert_eq!(r.cmd(&["HGET", "k", "a"]), Reply::Nil);
    assert_eq!(
        next_events(&mut s, 4),
        ev(&[
            ("hset", "k"),
            ("hexpire", "k"),
            ("hexpired", "k"),
            ("del", "k")
        ])
    );
}

/// `calls` and `usec` of `command` in INFO commandstats (0, 0 before its
/// first call): the server's own time in the command, whatever the client
/// and the network add.
fn command_stats(r: &mut Raw, command: &str) -> (i64, i64) {
    let Some(line) = r.info_field("commandstats", &format!("cmdstat_{command}")) else {
        return (0, 0);
    };
    let field = |name: &str| -> i64 {
        line.split(',')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .unwrap_or_else(|| panic!("{line}"))
            .parse()
            .unwrap()
    };
    (field("calls"), field("usec"))
}

/// Fields expiring one by one in a large hash: each lookup that finds some
/// due reclaims those, looking at no other field. It used to pass over the
/// whole hash each time (O(due x fields)): with 400k fields and 2,000
/// expiring 1 ms apart, nearly every read paid a full pass.
#[test]
fn fields_expiring_one_by_one_cost_each_lookup_only_their_own_removal() {
    const FIELDS: usize = 400_000;
    const EXPIRING: usize = 2_000;
    let server = Server::start(1, &["--enable-debug-command", "local"]);
    let mut r = server.raw();
    let mut load = Vec::new();
    for start in (0..FIELDS).step_by(1_000) {
        let mut hset = vec!["HSET".to_string(), "h".into()];
        for f in start..start + 1_000 {
            hset.extend([format!("f{f}"), "v".into()]);
        }
        load.push(hset.iter().map(|s| s.as_bytes().to_vec()).collect());
    }
    assert!(r.pipeline(&load).iter().all(|reply| *reply == int(1_000)));
    let first = unix_ms() + 500;
    let load: Vec<_> = (0..EXPIRING)
        .map(|f| {
            let at = at(first + f as u64);
            args(&["HPEXPIREAT", "h", &at, "FIELDS", "1", &format!("f{f}")])
        })
        .collect();
    assert!(r.pipeline(&load).iter().all(|reply| *reply == codes(&[1])));
    // Only the reads reclaim (the sweep's visits cost the same per hash).
    assert_eq!(r.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    r.cmd(&["CONFIG", "RESETSTAT"]);
    // A reader about once a millisecond as the fields expire: nearly every
    // HLEN or HGET finds a field or a few due.
    let kept = (FIELDS - EXPIRING) as i64;
    let until = Instant::now() + Duration::from_millis(500 + EXPIRING as u64 + 10_000);
    while r.int(&["HLEN", "h"]) > kept && Instant::now() < until {
        assert_eq!(r.cmd(&["HGET", "h", "f399999"]), Reply::bulk("v"));
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(r.int(&["HLEN", "h"]), kept);
    assert_eq!(expired_subkeys(&mut r), EXPIRING as i64);
    assert_eq!(r.cmd(&["HGET", "h", "f0"]), Reply::Nil);
    assert_eq!(r.cmd(&["HGET", "h", "f2000"]), Reply::bulk("v"));
    assert_eq!(r.cmd(&["DEBUG", "EMBER-CHECK"]), ok());
    // The server's own time in the reads (commandstats, so not the round
    // trips), in a debug build: some 10 us a call on average now; a pass
    // over 400k fields took milliseconds and nearly every call paid one
    // (2.6 ms a call on average).
    let (hgets, hget_usec) = command_stats(&mut r, "hget");
    let (hlens, hlen_usec) = command_stats(&mut r, "hlen");
    let (calls, usec) = (hgets + hlens, hget_usec + hlen_usec);
    assert!(hgets >= 100, "{hgets} HGETs");
    assert!(
        usec < calls * 300,
        "{calls} HGETs and HLENs took {usec} us, {} us each",
        usec / calls
    );
}
