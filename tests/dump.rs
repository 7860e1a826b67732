//! DUMP and RESTORE against the real redis-server: values of every type,
//! in sizes on both sides of Redis's encoding thresholds, dumped by one
//! server and restored in the other, both ways; then the options, the
//! errors (each compared with Redis's reply to the same command), and the
//! keyspace's side effects (events, WATCH, blocked clients).
//!
//! Runs where `redis-server` is installed (`.ci/run` installs it); skipped
//! with a note otherwise, except the tests that need only ember.

mod common;

use std::time::Duration;

use common::reference::Redis;
use common::{unix_ms, Raw, Reply, Server};

/// The two servers' connections, ember with 3 shards so keys live on
/// different shards than the connection's.
struct Pair {
    _redis: Redis,
    _ember: Server,
    redis: Raw,
    ember: Raw,
}

fn pair(test: &str) -> Option<Pair> {
    let redis = Redis::or_skip(test)?;
    let ember = Server::start(3, &[]);
    Some(Pair {
        redis: Raw::connect(redis.port),
        ember: ember.raw(),
        _redis: redis,
        _ember: ember,
    })
}

fn run(conn: &mut Raw, words: &[Vec<u8>]) -> Reply {
    let args: Vec<&[u8]> = words.iter().map(|w| w.as_slice()).collect();
    conn.cmd_bytes(&args)
}

fn dump(conn: &mut Raw, key: &str) -> Vec<u8> {
    match conn.cmd(&["DUMP", key]) {
        Reply::Bulk(payload) => payload,
        other => panic!("DUMP {key}: {other:?}"),
    }
}

fn restore(conn: &mut Raw, key: &str, ttl: &str, payload: &[u8], extra: &[&str]) -> Reply {
    let mut args: Vec<&[u8]> = vec![b"RESTORE", key.as_bytes(), ttl.as_bytes(), payload];
    args.extend(extra.iter().map(|e| e.as_bytes()));
    conn.cmd_bytes(&args)
}

/// A value read back in a form both servers print alike: TYPE, OBJECT
/// ENCODING, and the content (members sorted where the order is not
/// defined, scores as numbers since 7.0 prints 17 digits).
fn snapshot(conn: &mut Raw, key: &str) -> (String, String, Vec<Vec<u8>>) {
    let kind = conn.cmd(&["TYPE", key]).text();
    let encoding = conn.cmd(&["OBJECT", "ENCODING", key]).text();
    let bulks = |r: Reply| -> Vec<Vec<u8>> {
        r.items()
            .into_iter()
            .map(|i| match i {
                Reply::Bulk(b) => b,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    let content = match kind.as_str() {
        "string" => match conn.cmd(&["GET", key]) {
            Reply::Bulk(b) => vec![b],
            other => panic!("{other:?}"),
        },
        "list" => bulks(conn.cmd(&["LRANGE", key, "0", "-1"])),
        "set" => {
            let mut m = bulks(conn.cmd(&["SMEMBERS", key]));
            m.sort();
            m
        }
        "zset" => bulks(conn.cmd(&["ZRANGE", key, "0", "-1", "WITHSCORES"]))
            .chunks(2)
            .flat_map(|p| {
                let score: f64 = String::from_utf8_lossy(&p[1]).parse().unwrap();
                [p[0].clone(), format!("{score:e}").into_bytes()]
            })
            .collect(),
        "hash" => {
            let flat = bulks(conn.cmd(&["HGETALL", key]));
            let mut pairs: Vec<Vec<u8>> = flat
                .chunks(2)
                .map(|p| [p[0].clone(), b"=".to_vec(), p[1].clone()].concat())
                .collect();
            pairs.sort();
            pairs
        }
        other => panic!("{key}: type {other}"),
    };
    (kind, encoding, content)
}

fn words(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// `cmd key` followed by `items`.
fn with_items(cmd: &str, key: &str, items: impl IntoIterator<Item = String>) -> Vec<Vec<u8>> {
    let mut w = words(&[cmd, key]);
    w.extend(items.into_iter().map(String::into_bytes));
    w
}

/// A command as its words.
type Cmd = Vec<Vec<u8>>;

/// A value of the tests: its key, the commands that build it, the
/// encoding Redis gives it.
type Case = (String, Vec<Cmd>, &'static str);

fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    let mut add = |key: &str, cmds: Vec<Vec<Vec<u8>>>, enc: &'static str| {
        cases.push((key.to_string(), cmds, enc))
    };
    // Strings: integers of each width, short, long, compressible or not.
    let noise: String = (0..3000u32)
        .map(|i| char::from(b'!' + ((i.wrapping_mul(2_654_435_761) >> 13) % 90) as u8))
        .collect();
    let strings: Vec<(&str, String, &str)> = vec![
        ("s:empty", String::new(), "embstr"),
        ("s:short", "hello".into(), "embstr"),
        ("s:int8", "-7".into(), "int"),
        ("s:int16", "12345".into(), "int"),
        ("s:int32", "-70000".into(), "int"),
        ("s:int64", "123456789012".into(), "int"),
        ("s:intmax", "9223372036854775807".into(), "int"),
        ("s:notint", "007".into(), "embstr"),
        ("s:float", "3.14".into(), "embstr"),
        ("s:20", "x".repeat(20), "embstr"),
        ("s:21", "y".repeat(21), "embstr"),
        ("s:44", "z".repeat(44), "embstr"),
        ("s:45", "w".repeat(45), "raw"),
        ("s:compressible", "ab".repeat(5000), "raw"),
        ("s:noise", noise, "raw"),
        ("s:big", "large value ".repeat(100_000), "raw"),
    ];
    for (key, value, enc) in strings {
        add(
            key,
            vec![vec![
                b"SET".to_vec(),
                key.as_bytes().to_vec(),
                value.into_bytes(),
            ]],
            enc,
        );
    }
    // Lists: one node, many nodes, integers, elements larger than a node.
    add(
        "l:small",
        vec![words(&[
            "RPUSH", "l:small", "a", "b", "1", "2", "300", "-5", "70000",
        ])],
        "quicklist",
    );
    add(
        "l:1000",
        vec![with_items(
            "RPUSH",
            "l:1000",
            (0..1000).map(|i| format!("element-{i}")),
        )],
        "quicklist",
    );
    add(
        "l:ints",
        vec![with_items(
            "RPUSH",
            "l:ints",
            (0..20_000).map(|i| (i * 37 - 5000).to_string()),
        )],
        "quicklist",
    );
    add(
        "l:big",
        vec![with_items(
            "RPUSH",
            "l:big",
            (0..3).map(|i| format!("{i}").repeat(10_000)),
        )],
        "quicklist",
    );
    // Sets: intset up to 512 integers, then a table; strings.
    add(
        "set:ints",
        vec![words(&[
            "SADD",
            "set:ints",
            "1",
            "2",
            "3",
            "-40000",
            "9000000000",
        ])],
        "intset",
    );
    add(
        "set:512",
        vec![with_items(
            "SADD",
            "set:512",
            (0..512).map(|i| i.to_string()),
        )],
        "intset",
    );
    add(
        "set:513",
        vec![with_items(
            "SADD",
            "set:513",
            (0..513).map(|i| i.to_string()),
        )],
        "hashtable",
    );
    add(
        "set:strings",
        vec![words(&["SADD", "set:strings", "a", "b", "c"])],
        "hashtable",
    );
    add(
        "set:mixed",
        vec![words(&["SADD", "set:mixed", "1", "x", "2"])],
        "hashtable",
    );
    // Sorted sets: listpack up to 128 members of up to 64 bytes.
    add(
        "z:small",
        vec![words(&[
            "ZADD", "z:small", "1", "a", "2.5", "b", "-inf", "c", "inf", "d", "0.1", "e", "1e300",
            "f",
        ])],
        "listpack",
    );
    let zmembers = |n: usize| (0..n).flat_map(|i| [format!("{}", i as f64 / 7.0), format!("m{i}")]);
    add(
        "z:128",
        vec![with_items("ZADD", "z:128", zmembers(128))],
        "listpack",
    );
    add(
        "z:129",
        vec![with_items("ZADD", "z:129", zmembers(129))],
        "skiplist",
    );
    add(
        "z:long",
        vec![words(&[
            "ZADD",
            "z:long",
            "1",
            &"m".repeat(65),
            "2",
            "short",
        ])],
        "skiplist",
    );
    add(
        "z:5000",
        vec![with_items("ZADD", "z:5000", zmembers(5000))],
        "skiplist",
    );
    // Hashes: listpack up to 512 fields of up to 64 bytes.
    add(
        "h:small",
        vec![words(&[
            "HSET", "h:small", "f", "v", "n", "12", "neg", "-99999",
        ])],
        "listpack",
    );
    let fields = |n: usize| (0..n).flat_map(|i| [format!("field{i}"), format!("value{i}")]);
    add(
        "h:512",
        vec![with_items("HSET", "h:512", fields(512))],
        "listpack",
    );
    add(
        "h:513",
        vec![with_items("HSET", "h:513", fields(513))],
        "hashtable",
    );
    add(
        "h:long",
        vec![words(&["HSET", "h:long", "f", &"v".repeat(65)])],
        "hashtable",
    );
    add(
        "h:20000",
        vec![with_items("HSET", "h:20000", fields(20_000))],
        "hashtable",
    );
    cases
}

/// Builds every case in `from`, DUMPs it there, RESTOREs it in `to` under
/// another name, and compares the two.
fn transfer_all(from: &mut Raw, to: &mut Raw, from_name: &str) {
    for (key, cmds, enc) in cases() {
        for c in &cmds {
            let reply = run(from, c);
            assert!(!matches!(reply, Reply::Error(_)), "{key}: {reply:?}");
        }
        let source = snapshot(from, &key);
        assert_eq!(
            source.1, enc,
            "{from_name} gives {key} the encoding Redis does"
        );
        let payload = dump(from, &key);
        let copy = format!("{key}:restored");
        assert_eq!(
            restore(to, &copy, "0", &payload, &[]),
            Reply::ok(),
            "{key} from {from_name}"
        );
        assert_eq!(snapshot(to, &copy), source, "{key} from {from_name}");
        assert_eq!(to.int(&["PTTL", &copy]), -1, "{key}: no TTL");
    }
}

#[test]
fn redis_dumps_restore_in_ember() {
    let Some(mut p) = pair("redis_dumps_restore_in_ember") else {
        return;
    };
    transfer_all(&mut p.redis, &mut p.ember, "redis");
}

#[test]
fn ember_dumps_restore_in_redis() {
    let Some(mut p) = pair("ember_dumps_restore_in_redis") else {
        return;
    };
    transfer_all(&mut p.ember, &mut p.redis, "ember");
}

/// Where the encoding involves no LZF choice, ember's payload is byte for
/// byte the one redis-server writes for the same value.
#[test]
fn small_payloads_are_byte_identical() {
    let Some(mut p) = pair("small_payloads_are_byte_identical") else {
        return;
    };
    let cmds = [
        words(&["SET", "a", "hello"]),
        words(&["SET", "b", "-70000"]),
        words(&["SET", "c", "123456789012"]),
        words(&["RPUSH", "d", "a", "b", "1", "2", "300", "-5", "70000"]),
        words(&["SADD", "e", "5", "1", "-3"]),
        words(&["ZADD", "f", "1", "a", "2.5", "b", "3", "c"]),
        words(&["HSET", "g", "f", "v", "n", "12"]),
        words(&["ZADD", "h", "1.5", &"m".repeat(60), "2", "x"]),
        words(&["HSET", "i", "f", &"v".repeat(20)]),
    ];
    for c in &cmds {
        run(&mut p.redis, c);
        run(&mut p.ember, c);
        let key = String::from_utf8(c[1].clone()).unwrap();
        assert_eq!(dump(&mut p.ember, &key), dump(&mut p.redis, &key), "{key}");
    }
}

#[test]
fn ttls_and_options_as_redis() {
    let Some(mut p) = pair("ttls_and_options_as_redis") else {
        return;
    };
    for conn in [&mut p.redis, &mut p.ember] {
        conn.cmd(&["SET", "src", "value"]);
        let payload = dump(conn, "src");
        // A relative TTL.
        assert_eq!(restore(conn, "t1", "5000", &payload, &[]), Reply::ok());
        let pttl = conn.int(&["PTTL", "t1"]);
        assert!((4000..=5000).contains(&pttl), "{pttl}");
        // An absolute one in the future, and one in the past: OK, no key.
        let at = (unix_ms() + 60_000).to_string();
        assert_eq!(restore(conn, "t2", &at, &payload, &["ABSTTL"]), Reply::ok());
        assert_eq!(conn.int(&["PEXPIRETIME", "t2"]).to_string(), at);
        assert_eq!(
            restore(conn, "t3", "1000", &payload, &["ABSTTL"]),
            Reply::ok()
        );
        assert_eq!(conn.int(&["EXISTS", "t3"]), 0);
        // A past deadline with REPLACE deletes what was there.
        conn.cmd(&["SET", "t4", "old"]);
        assert_eq!(
            restore(conn, "t4", "1", &payload, &["REPLACE", "ABSTTL"]),
            Reply::ok()
        );
        assert_eq!(conn.int(&["EXISTS", "t4"]), 0);
        // A relative TTL too large to add to now: the same.
        assert_eq!(
            restore(conn, "t5", "9223372036854775807", &payload, &[]),
            Reply::ok()
        );
        assert_eq!(conn.int(&["EXISTS", "t5"]), 0);
        // BUSYKEY, then REPLACE (which also drops the old TTL).
        conn.cmd(&["SET", "t6", "old", "EX", "100"]);
        assert_eq!(
            restore(conn, "t6", "0", &payload, &[]),
            Reply::Error("BUSYKEY Target key name already exists.".into())
        );
        assert_eq!(
            restore(conn, "t6", "0", &payload, &["REPLACE"]),
            Reply::ok()
        );
        assert_eq!(conn.cmd(&["GET", "t6"]), Reply::bulk("value"));
        assert_eq!(conn.int(&["TTL", "t6"]), -1);
        // IDLETIME sets the idle time OBJECT IDLETIME reports; FREQ is taken.
        assert_eq!(
            restore(conn, "t7", "0", &payload, &["IDLETIME", "1000"]),
            Reply::ok()
        );
        let idle = conn.int(&["OBJECT", "IDLETIME", "t7"]);
        assert!((1000..1003).contains(&idle), "{idle}");
        assert_eq!(
            restore(conn, "t8", "0", &payload, &["FREQ", "100", "REPLACE"]),
            Reply::ok()
        );
        assert_eq!(conn.cmd(&["DUMP", "missing"]), Reply::Nil);
    }
}

/// Each malformed command gets the same reply from both servers.
#[test]
fn errors_match_redis() {
    let Some(mut p) = pair("errors_match_redis") else {
        return;
    };
    p.redis.cmd(&["SET", "src", "value"]);
    let good = dump(&mut p.redis, "src");
    let mut bad_crc = good.clone();
    *bad_crc.last_mut().unwrap() ^= 0xff;
    let mut newer = good.clone();
    let n = newer.len();
    newer[n - 10] = 13;
    let sealed = |body: &[u8], version: u16| {
        let mut out = body.to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        let crc = ember::store::rdb::crc64::crc64(0, &out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    };
    let payloads: Vec<(&str, Vec<u8>)> = vec![
        ("good", good.clone()),
        ("bad crc", bad_crc),
        ("newer version", newer),
        ("short", b"abc".to_vec()),
        ("empty list", sealed(b"\x01\x00", 10)),
        ("unknown type", sealed(b"\x08\x01a", 10)),
        ("stream", sealed(b"\x0f\x00", 10)),
        ("duplicate members", sealed(b"\x02\x02\x01a\x01a", 10)),
        ("cut in a length", sealed(b"\x00\x80\x00", 10)),
        ("trailing bytes", sealed(b"\x00\x01v\xff\xff", 10)),
    ];
    let mut i = 0;
    let mut check = |p: &mut Pair, args: Vec<Vec<u8>>| {
        // A fresh key per check, the same on both servers.
        i += 1;
        let mut args = args;
        if args.get(1).is_some_and(|k| k == b"fresh") {
            args[1] = format!("fresh{i}").into_bytes();
        }
        let want = run(&mut p.redis, &args);
        let got = run(&mut p.ember, &args);
        assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&args.concat()));
    };
    for (_, payload) in &payloads {
        check(
            &mut p,
            vec![
                b"RESTORE".to_vec(),
                b"fresh".to_vec(),
                b"0".to_vec(),
                payload.clone(),
            ],
        );
    }
    p.redis.cmd(&["SET", "busy", "x"]);
    p.ember.cmd(&["SET", "busy", "x"]);
    let with = |key: &str, ttl: &str, extra: &[&str]| {
        let mut a = vec![
            b"RESTORE".to_vec(),
            key.as_bytes().to_vec(),
            ttl.as_bytes().to_vec(),
            good.clone(),
        ];
        a.extend(extra.iter().map(|e| e.as_bytes().to_vec()));
        a
    };
    for args in [
        with("fresh", "-1", &[]),
        with("fresh", "abc", &[]),
        with("fresh", "1.5", &[]),
        with("busy", "0", &[]),
        with("busy", "abc", &[]),
        with("busy", "-1", &["REPLACE"]),
        with("fresh", "0", &["IDLETIME", "-1"]),
        with("fresh", "0", &["IDLETIME", "x"]),
        with("fresh", "0", &["IDLETIME"]),
        with("fresh", "0", &["FREQ", "256"]),
        with("fresh", "0", &["FREQ", "-1"]),
        with("fresh", "0", &["FREQ", "1", "IDLETIME", "1"]),
        with("fresh", "0", &["IDLETIME", "1", "FREQ", "1"]),
        with("fresh", "0", &["REPLACE", "bogus"]),
        with("fresh", "0", &["ABSTTL", "ABSTTL", "REPLACE"]),
        words(&["RESTORE", "fresh", "0"]),
        words(&["DUMP"]),
        words(&["DUMP", "a", "b"]),
    ] {
        check(&mut p, args);
    }
    check(&mut p, words(&["DUMP", "nothing"]));

    // One deliberate difference: redis-server reads a value that is cut
    // short on into the footer's bytes (here "hel" and the version, and the
    // key is created); ember refuses a body that needs the footer.
    let cut = sealed(b"\x00\x05hel", 10);
    assert_eq!(restore(&mut p.redis, "cut", "0", &cut, &[]), Reply::ok());
    assert_eq!(
        restore(&mut p.ember, "cut", "0", &cut, &[]),
        Reply::Error("ERR Bad data format".into())
    );
}

/// A hash with field TTLs needs Redis 7.4's encoding (RDB version 12):
/// ember restores it with its TTLs; redis-server 7.0 refuses it by version.
#[test]
fn hash_field_ttls_travel_in_version_12() {
    let ember = Server::start(3, &[]);
    let mut e = ember.raw();
    e.cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    assert_eq!(
        e.cmd(&["HPEXPIRE", "h", "100000", "FIELDS", "1", "a"]),
        Reply::Array(vec![Reply::Int(1)])
    );
    assert_eq!(
        e.cmd(&["HPEXPIRE", "h", "200000", "FIELDS", "1", "b"]),
        Reply::Array(vec![Reply::Int(1)])
    );
    let payload = dump(&mut e, "h");
    let n = payload.len();
    assert_eq!(&payload[n - 10..n - 8], &[12, 0], "RDB version 12");
    assert_eq!(restore(&mut e, "h2", "0", &payload, &[]), Reply::ok());
    assert_eq!(e.cmd(&["HGETALL", "h2"]).items().len(), 6);
    let ttl = |e: &mut Raw, f: &str| e.cmd(&["HPTTL", "h2", "FIELDS", "1", f]).items()[0].int();
    assert!((90_000..=100_000).contains(&ttl(&mut e, "a")));
    assert!((190_000..=200_000).contains(&ttl(&mut e, "b")));
    assert_eq!(ttl(&mut e, "c"), -1);
    // Fields whose deadline passed before the RESTORE are not restored.
    e.cmd(&["HSET", "short", "gone", "1", "kept", "2"]);
    e.cmd(&["HPEXPIRE", "short", "50", "FIELDS", "1", "gone"]);
    let payload = dump(&mut e, "short");
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(restore(&mut e, "short2", "0", &payload, &[]), Reply::ok());
    assert_eq!(e.cmd(&["HKEYS", "short2"]), common::bulks(&["kept"]));
    e.cmd(&["HPEXPIRE", "short", "50", "FIELDS", "1", "kept"]);
    let payload = dump(&mut e, "short");
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(restore(&mut e, "short3", "0", &payload, &[]), Reply::ok());
    assert_eq!(e.int(&["EXISTS", "short3"]), 0, "no field left: no key");

    let Some(redis) =
        Redis::or_skip("the redis-server half of hash_field_ttls_travel_in_version_12")
    else {
        return;
    };
    let mut r = Raw::connect(redis.port);
    let payload = dump(&mut e, "h");
    assert_eq!(
        restore(&mut r, "h", "0", &payload, &[]),
        Reply::Error("ERR DUMP payload version or checksum are wrong".into())
    );
}

#[test]
fn restore_fires_its_event_breaks_watch_and_serves_blocked_clients() {
    let ember = Server::start(3, &[]);
    let mut c = ember.raw();
    c.cmd(&["RPUSH", "src", "x", "y"]);
    let payload = dump(&mut c, "src");

    // Keyspace event `restore`.
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEg"]);
    let mut sub = ember.raw();
    sub.cmd(&["SUBSCRIBE", "__keyevent@0__:restore"]);
    assert_eq!(restore(&mut c, "ev", "0", &payload, &[]), Reply::ok());
    let msg = sub.read().unwrap().items();
    assert_eq!(msg[2], Reply::bulk("ev"));

    // WATCH is broken by a RESTORE onto the key.
    let mut w = ember.raw();
    w.cmd(&["WATCH", "watched"]);
    assert_eq!(restore(&mut c, "watched", "0", &payload, &[]), Reply::ok());
    w.cmd(&["MULTI"]);
    w.cmd(&["GET", "x"]);
    assert_eq!(w.cmd(&["EXEC"]), Reply::Nil);

    // A client blocked on the key is served by the RESTORE.
    let mut blocked = ember.raw();
    blocked.send_cmd(&[b"BLPOP", b"waited", b"5"]);
    assert!(common::wait_until(Duration::from_secs(5), || c
        .info_int("clients", "blocked_clients")
        == 1));
    assert_eq!(restore(&mut c, "waited", "0", &payload, &[]), Reply::ok());
    assert_eq!(blocked.read().unwrap(), common::bulks(&["waited", "x"]));
    assert_eq!(
        c.cmd(&["LRANGE", "waited", "0", "-1"]),
        common::bulks(&["y"])
    );

    // Inside MULTI, and the hit counter of DUMP.
    c.cmd(&["MULTI"]);
    c.cmd_bytes(&[b"RESTORE", b"inmulti", b"0", &payload]);
    c.cmd(&["DUMP", "inmulti"]);
    let replies = c.cmd(&["EXEC"]).items();
    assert_eq!(replies[0], Reply::ok());
    assert_eq!(replies[1], Reply::Bulk(payload.clone()));
}
