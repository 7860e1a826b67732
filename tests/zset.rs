//! Sorted sets: every command of the family, on one shard and across
//! shards. Replies checked against redis-server 7.0.

mod common;

use common::{bulks, int, keys_on_shard, Reply, Server};

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn err(s: &str) -> Reply {
    Reply::Error(s.into())
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// A RESP2 WITHSCORES reply: member, score, member, score, ...
fn scored(items: &[(&str, &str)]) -> Reply {
    Reply::Array(items.iter().flat_map(|(m, s)| [b(m), b(s)]).collect())
}

#[test]
fn delayed_job_queue_pattern() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let now: i64 = 1_700_000_000_000;
    assert_eq!(
        c.cmd(&["ZADD", "jobs", &(now - 10).to_string(), "due-1"]),
        Reply::Int(1)
    );
    assert_eq!(
        c.cmd(&["ZADD", "jobs", &(now - 5).to_string(), "due-2"]),
        Reply::Int(1)
    );
    assert_eq!(
        c.cmd(&["ZADD", "jobs", &(now + 60_000).to_string(), "later"]),
        Reply::Int(1)
    );
    // Poll for due jobs, process, remove.
    let due = c.cmd(&["ZRANGEBYSCORE", "jobs", "0", &now.to_string()]);
    assert_eq!(due, Reply::Array(vec![b("due-1"), b("due-2")]));
    assert_eq!(c.cmd(&["ZREM", "jobs", "due-1", "due-2"]), Reply::Int(2));
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "jobs", "0", &now.to_string()]),
        Reply::Array(vec![])
    );
    assert_eq!(c.cmd(&["ZCARD", "jobs"]), Reply::Int(1));
    assert_eq!(
        c.cmd(&["ZSCORE", "jobs", "later"]),
        b(&(now + 60_000).to_string())
    );
}

#[test]
fn zadd_options_and_errors_match_redis() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(
        c.cmd(&["ZADD", "z", "NX", "XX", "1", "a"]),
        err("ERR XX and NX options at the same time are not compatible")
    );
    assert_eq!(
        c.cmd(&["ZADD", "z", "GT", "LT", "1", "a"]),
        err("ERR GT, LT, and/or NX options at the same time are not compatible")
    );
    assert_eq!(
        c.cmd(&["ZADD", "z", "NX", "GT", "1", "a"]),
        err("ERR GT, LT, and/or NX options at the same time are not compatible")
    );
    assert_eq!(
        c.cmd(&["ZADD", "z", "INCR", "1", "a", "2", "b"]),
        err("ERR INCR option supports a single increment-element pair")
    );
    assert_eq!(
        c.cmd(&["ZADD", "z", "1", "a", "2"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["ZADD", "z", "abc", "a"]),
        err("ERR value is not a valid float")
    );
    assert_eq!(
        c.cmd(&["EXISTS", "z"]),
        Reply::Int(0),
        "errors create nothing"
    );
    assert_eq!(
        c.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]),
        Reply::Int(3)
    );
    assert_eq!(
        c.cmd(&["ZADD", "z", "CH", "5", "a", "2", "b"]),
        Reply::Int(1)
    );
    assert_eq!(c.cmd(&["ZADD", "z", "INCR", "1.5", "a"]), b("6.5"));
    assert_eq!(
        c.cmd(&["ZADD", "z", "XX", "INCR", "1", "nosuch"]),
        Reply::Nil
    );
    assert_eq!(c.cmd(&["ZADD", "z", "NX", "9", "a"]), Reply::Int(0));
    assert_eq!(c.cmd(&["ZADD", "z", "GT", "CH", "1", "a"]), Reply::Int(0));
    assert_eq!(c.cmd(&["ZADD", "z", "LT", "CH", "1", "a"]), Reply::Int(1));
    assert_eq!(c.cmd(&["ZADD", "z", "XX", "1", "new"]), Reply::Int(0));
    assert_eq!(c.cmd(&["ZSCORE", "z", "new"]), Reply::Nil);
    assert_eq!(c.cmd(&["ZADD", "n", "inf", "a"]), Reply::Int(1));
    assert_eq!(
        c.cmd(&["ZADD", "n", "INCR", "-inf", "a"]),
        err("ERR resulting score is not a number (NaN)")
    );
    assert_eq!(c.cmd(&["ZADD", "x", "XX", "1", "a"]), Reply::Int(0));
    assert_eq!(
        c.cmd(&["EXISTS", "x"]),
        Reply::Int(0),
        "XX on a missing key creates nothing"
    );
}

#[test]
fn ranges_limits_and_scores() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["ZADD", "z", "1", "b", "1", "a", "2", "c", "3", "d"]);
    let all = c.cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES"]);
    let expect = ["a", "1", "b", "1", "c", "2", "d", "3"].map(b).to_vec();
    assert_eq!(all, Reply::Array(expect), "by score, then member");
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "(1", "3"]),
        Reply::Array(vec![b("c"), b("d")])
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "1", "(3"]),
        Reply::Array(vec![b("a"), b("b"), b("c")])
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "0", "10", "LIMIT", "1", "2"]),
        Reply::Array(vec![b("b"), b("c")])
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "0", "10", "LIMIT", "1"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "abc", "10"]),
        err("ERR min or max is not a float")
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "5", "1"]),
        Reply::Array(vec![])
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "missing", "0", "1"]),
        Reply::Array(vec![])
    );
    assert_eq!(c.cmd(&["ZSCORE", "z", "c"]), b("2"));
    assert_eq!(c.cmd(&["ZCARD", "missing"]), Reply::Int(0));
    // RESP3: doubles, and [member, score] pairs.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.cmd(&["ZSCORE", "z", "c"]), Reply::Double("2".into()));
    let pairs = c.cmd(&["ZRANGEBYSCORE", "z", "2", "3", "WITHSCORES"]);
    assert_eq!(
        pairs,
        Reply::Array(vec![
            Reply::Array(vec![b("c"), Reply::Double("2".into())]),
            Reply::Array(vec![b("d"), Reply::Double("3".into())]),
        ])
    );
}

#[test]
fn types_and_ttls_behave_as_in_redis() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let wrong = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["ZADD", "s", "1", "a"]), wrong);
    assert_eq!(c.cmd(&["ZRANGEBYSCORE", "s", "0", "1"]), wrong);
    c.cmd(&["ZADD", "z", "1", "a", "2", "b"]);
    assert_eq!(c.cmd(&["GET", "z"]), wrong);
    assert_eq!(c.cmd(&["INCR", "z"]), wrong);
    assert_eq!(c.cmd(&["TYPE", "z"]), Reply::Simple("zset".into()));
    // Two short members: Redis 7.0 keeps them in a listpack.
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "z"]), b("listpack"));
    // Changing the content keeps the TTL; removing the last member removes key and TTL.
    assert_eq!(c.cmd(&["EXPIRE", "z", "100"]), Reply::Int(1));
    c.cmd(&["ZADD", "z", "3", "c"]);
    c.cmd(&["ZREM", "z", "a"]);
    assert!(matches!(c.cmd(&["TTL", "z"]), Reply::Int(t) if t > 90));
    assert_eq!(c.cmd(&["ZREM", "z", "b", "c"]), Reply::Int(2));
    assert_eq!(c.cmd(&["EXISTS", "z"]), Reply::Int(0));
    c.cmd(&["ZADD", "z", "1", "a"]);
    assert_eq!(c.cmd(&["TTL", "z"]), Reply::Int(-1));
    // RENAME and COPY carry a sorted set across shards.
    let keys = common::keys_on_shard("zk", 1, 2, 1);
    c.cmd(&["RENAME", "z", &keys[0]]);
    assert_eq!(c.cmd(&["ZSCORE", &keys[0], "a"]), b("1"));
}

#[test]
fn zadd_and_zrem_fire_keyspace_events() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEz"]);
    let mut sub = server.raw();
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    c.cmd(&["ZADD", "q", "1", "a"]);
    c.cmd(&["ZADD", "q", "INCR", "1", "a"]);
    c.cmd(&["ZREM", "q", "a"]);
    let mut events = Vec::new();
    for _ in 0..3 {
        if let Some(Reply::Array(parts)) = sub.read() {
            events.push(parts[2].clone());
        }
    }
    assert_eq!(
        events,
        vec![
            b("__keyevent@0__:zadd"),
            b("__keyevent@0__:zincr"),
            b("__keyevent@0__:zrem")
        ]
    );
}

#[test]
fn zincrby_and_zadd_incr() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(c.cmd(&["ZINCRBY", "z", "2.5", "a"]), b("2.5"));
    c.cmd(&["EXPIRE", "z", "100"]);
    assert_eq!(c.cmd(&["ZINCRBY", "z", "-1", "a"]), b("1.5"));
    assert!(
        matches!(c.cmd(&["TTL", "z"]), Reply::Int(t) if t > 90),
        "TTL kept"
    );
    assert_eq!(
        c.cmd(&["ZINCRBY", "z", "x", "a"]),
        err("ERR value is not a valid float")
    );
    assert_eq!(
        c.cmd(&["ZINCRBY", "z", "1", "a", "2"]),
        err("ERR wrong number of arguments for 'zincrby' command")
    );
    assert_eq!(c.cmd(&["ZINCRBY", "z", "inf", "a"]), b("inf"));
    assert_eq!(
        c.cmd(&["ZINCRBY", "z", "-inf", "a"]),
        err("ERR resulting score is not a number (NaN)")
    );
    assert_eq!(
        c.cmd(&["ZSCORE", "z", "a"]),
        b("inf"),
        "NaN changes nothing"
    );
    // GT/LT/NX that skip the member answer nil with INCR.
    c.cmd(&["ZADD", "g", "5", "m"]);
    assert_eq!(c.cmd(&["ZADD", "g", "GT", "INCR", "-1", "m"]), Reply::Nil);
    assert_eq!(c.cmd(&["ZADD", "g", "LT", "INCR", "-1", "m"]), b("4"));
    assert_eq!(c.cmd(&["ZADD", "g", "NX", "INCR", "1", "m"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["ZADD", "g", "GT", "CH", "5", "m", "1", "n"]),
        int(2)
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "g", "0", "-1", "WITHSCORES"]),
        scored(&[("n", "1"), ("m", "5")])
    );
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["ZINCRBY", "s", "1", "a"]), err(WRONGTYPE));
}

#[test]
fn member_queries_ranks_and_counts() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&[
        "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e",
    ]);
    assert_eq!(c.cmd(&["ZRANK", "z", "a"]), int(0));
    assert_eq!(c.cmd(&["ZRANK", "z", "e"]), int(4));
    assert_eq!(c.cmd(&["ZREVRANK", "z", "a"]), int(4));
    assert_eq!(c.cmd(&["ZRANK", "z", "nosuch"]), Reply::Nil);
    assert_eq!(c.cmd(&["ZREVRANK", "missing", "a"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["ZRANK", "z", "a", "WITHSCORE"]),
        err("ERR wrong number of arguments for 'zrank' command"),
        "7.0 has no WITHSCORE"
    );
    assert_eq!(
        c.cmd(&["ZMSCORE", "z", "a", "x", "e"]),
        Reply::Array(vec![b("1"), Reply::Nil, b("5")])
    );
    assert_eq!(
        c.cmd(&["ZMSCORE", "missing", "a", "b"]),
        Reply::Array(vec![Reply::Nil, Reply::Nil])
    );
    assert_eq!(c.cmd(&["ZCOUNT", "z", "(1", "4"]), int(3));
    assert_eq!(c.cmd(&["ZCOUNT", "z", "-inf", "+inf"]), int(5));
    assert_eq!(c.cmd(&["ZCOUNT", "z", "5", "1"]), int(0));
    assert_eq!(c.cmd(&["ZCOUNT", "z", "(3", "(3"]), int(0));
    assert_eq!(c.cmd(&["ZCOUNT", "missing", "0", "1"]), int(0));
    // strtod's leniency for range bounds: empty is 0, overflow is inf.
    assert_eq!(c.cmd(&["ZCOUNT", "z", "", "1"]), int(1));
    assert_eq!(c.cmd(&["ZCOUNT", "z", "1e400", "inf"]), int(0));
    let not_float = err("ERR min or max is not a float");
    assert_eq!(c.cmd(&["ZCOUNT", "z", "x", "1"]), not_float);
    assert_eq!(c.cmd(&["ZCOUNT", "z", "nan", "1"]), not_float);
    assert_eq!(c.cmd(&["ZCOUNT", "z", "1 ", "2"]), not_float);
    c.cmd(&["ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d"]);
    assert_eq!(c.cmd(&["ZLEXCOUNT", "l", "-", "+"]), int(4));
    assert_eq!(c.cmd(&["ZLEXCOUNT", "l", "[b", "(d"]), int(2));
    assert_eq!(c.cmd(&["ZLEXCOUNT", "l", "+", "-"]), int(0));
    assert_eq!(c.cmd(&["ZLEXCOUNT", "l", "(", "+"]), int(4));
    let bad_lex = err("ERR min or max not valid string range item");
    assert_eq!(c.cmd(&["ZLEXCOUNT", "l", "a", "+"]), bad_lex);
    assert_eq!(c.cmd(&["ZLEXCOUNT", "l", "-x", "+"]), bad_lex);
    assert_eq!(c.cmd(&["ZLEXCOUNT", "missing", "a", "+"]), bad_lex);
    c.cmd(&["SET", "s", "v"]);
    for cmd in [
        vec!["ZRANK", "s", "a"],
        vec!["ZMSCORE", "s", "a"],
        vec!["ZCOUNT", "s", "0", "1"],
        vec!["ZLEXCOUNT", "s", "-", "+"],
        vec!["ZCARD", "s"],
        vec!["ZSCORE", "s", "a"],
    ] {
        assert_eq!(c.cmd(&cmd), err(WRONGTYPE), "{cmd:?}");
    }
    // Ranks on a set large enough for a many-level skiplist.
    for chunk in (0..2000).collect::<Vec<u32>>().chunks(500) {
        let mut args = vec!["ZADD".to_string(), "big".to_string()];
        for i in chunk {
            args.push(i.to_string());
            args.push(format!("m{i}"));
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        c.cmd(&refs);
    }
    assert_eq!(c.cmd(&["ZRANK", "big", "m1234"]), int(1234));
    assert_eq!(c.cmd(&["ZREVRANK", "big", "m1234"]), int(765));
    assert_eq!(
        c.cmd(&["ZRANGE", "big", "1500", "1501"]),
        bulks(&["m1500", "m1501"])
    );
    assert_eq!(c.cmd(&["ZCOUNT", "big", "(100", "200"]), int(100));
}

#[test]
fn zrange_by_index_score_and_lex() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&[
        "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e",
    ]);
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "0", "-1"]),
        bulks(&["a", "b", "c", "d", "e"])
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "-2", "-1", "WITHSCORES"]),
        scored(&[("d", "4"), ("e", "5")])
    );
    assert_eq!(c.cmd(&["ZRANGE", "z", "-100", "1"]), bulks(&["a", "b"]));
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "1", "100", "REV"]),
        bulks(&["d", "c", "b", "a"])
    );
    assert_eq!(c.cmd(&["ZRANGE", "z", "3", "1"]), bulks(&[]));
    assert_eq!(c.cmd(&["ZRANGE", "z", "-1", "-2"]), bulks(&[]));
    assert_eq!(c.cmd(&["ZRANGE", "z", "5", "10"]), bulks(&[]));
    assert_eq!(c.cmd(&["ZRANGE", "missing", "0", "-1"]), bulks(&[]));
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "0", "-1", "LIMIT", "0", "-1"]),
        bulks(&["a", "b", "c", "d", "e"]),
        "LIMIT with count -1 is no LIMIT"
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "(1", "4", "BYSCORE"]),
        bulks(&["b", "c", "d"])
    );
    assert_eq!(
        c.cmd(&[
            "ZRANGE",
            "z",
            "(1",
            "4",
            "BYSCORE",
            "LIMIT",
            "1",
            "1",
            "WITHSCORES"
        ]),
        scored(&[("c", "3")])
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "4", "(1", "BYSCORE", "REV", "LIMIT", "1", "5"]),
        bulks(&["c", "b"]),
        "REV takes max first; the offset counts from the top"
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "4", "10"]),
        bulks(&["e"])
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "5", "1"]),
        bulks(&[])
    );
    c.cmd(&["ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d"]);
    assert_eq!(
        c.cmd(&["ZRANGE", "l", "[b", "+", "BYLEX"]),
        bulks(&["b", "c", "d"])
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "l", "+", "-", "BYLEX", "REV", "LIMIT", "1", "2"]),
        bulks(&["c", "b"])
    );
    let errors = [
        (
            vec!["0", "-1", "LIMIT", "0", "1"],
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ),
        (
            vec!["-", "+", "BYLEX", "WITHSCORES"],
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ),
        (vec!["0", "1", "REV", "REV"], "ERR syntax error"),
        (vec!["0", "1", "BYSCORE", "BYLEX"], "ERR syntax error"),
        (vec!["0", "1", "LIMIT", "1"], "ERR syntax error"),
        (vec!["0", "1", "FOO"], "ERR syntax error"),
        (
            vec!["x", "1"],
            "ERR value is not an integer or out of range",
        ),
        (vec!["x", "1", "BYSCORE"], "ERR min or max is not a float"),
        (
            vec!["x", "1", "BYLEX"],
            "ERR min or max not valid string range item",
        ),
        (
            vec!["0", "1", "BYSCORE", "LIMIT", "x", "1"],
            "ERR value is not an integer or out of range",
        ),
    ];
    for (args, expected) in errors {
        let mut cmd = vec!["ZRANGE", "z"];
        cmd.extend(args);
        assert_eq!(c.cmd(&cmd), err(expected), "{cmd:?}");
    }
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["ZRANGE", "s", "0", "1"]), err(WRONGTYPE));
    assert_eq!(
        c.cmd(&["ZRANGE", "s", "x", "1"]),
        err("ERR value is not an integer or out of range"),
        "the range is parsed before the key is looked up"
    );
    // RESP3: [member, score] pairs.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "0", "0", "WITHSCORES"]),
        Reply::Array(vec![Reply::Array(vec![b("a"), Reply::Double("1".into())])])
    );
}

#[test]
fn legacy_range_commands() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&[
        "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e",
    ]);
    assert_eq!(
        c.cmd(&["ZREVRANGE", "z", "0", "1", "WITHSCORES"]),
        scored(&[("e", "5"), ("d", "4")])
    );
    assert_eq!(
        c.cmd(&["ZREVRANGE", "z", "0", "1", "REV"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["ZREVRANGE", "z", "0", "1", "LIMIT", "0", "1"]),
        err(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
        )
    );
    assert_eq!(
        c.cmd(&["ZREVRANGE", "z", "0", "1", "BYSCORE"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["ZREVRANGEBYSCORE", "z", "+inf", "-inf", "LIMIT", "1", "2"]),
        bulks(&["d", "c"])
    );
    assert_eq!(c.cmd(&["ZREVRANGEBYSCORE", "z", "1", "4"]), bulks(&[]));
    assert_eq!(
        c.cmd(&["ZREVRANGEBYSCORE", "z", "(5", "(1", "WITHSCORES"]),
        scored(&[("d", "4"), ("c", "3"), ("b", "2")])
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "2", "-1"]),
        bulks(&["c", "d", "e"]),
        "a negative count is no limit"
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "-1", "2"]),
        bulks(&[]),
        "a negative offset selects nothing"
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", "1", "0"]),
        bulks(&[])
    );
    assert_eq!(
        c.cmd(&["ZRANGEBYSCORE", "z", "0", "1", "REV"]),
        err("ERR syntax error")
    );
    c.cmd(&[
        "ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e",
    ]);
    assert_eq!(
        c.cmd(&["ZRANGEBYLEX", "l", "-", "+", "LIMIT", "1", "2"]),
        bulks(&["b", "c"])
    );
    assert_eq!(c.cmd(&["ZRANGEBYLEX", "l", "[c", "[b"]), bulks(&[]));
    assert_eq!(
        c.cmd(&["ZRANGEBYLEX", "l", "-", "+", "WITHSCORES"]),
        err("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
    );
    assert_eq!(
        c.cmd(&["ZREVRANGEBYLEX", "l", "+", "-", "LIMIT", "1", "2"]),
        bulks(&["d", "c"])
    );
    assert_eq!(
        c.cmd(&["ZREVRANGEBYLEX", "l", "[c", "-"]),
        bulks(&["c", "b", "a"])
    );
    assert_eq!(c.cmd(&["ZREVRANGEBYLEX", "l", "(c", "(a"]), bulks(&["b"]));
}

#[test]
fn zremrange_removes_keeps_ttl_and_deletes_when_emptied() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&[
        "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e",
    ]);
    c.cmd(&["EXPIRE", "z", "100"]);
    assert_eq!(c.cmd(&["ZREMRANGEBYRANK", "z", "0", "0"]), int(1));
    assert_eq!(c.cmd(&["ZREMRANGEBYRANK", "z", "-1", "-1"]), int(1));
    assert_eq!(c.cmd(&["ZREMRANGEBYRANK", "z", "10", "20"]), int(0));
    assert_eq!(
        c.cmd(&["ZREMRANGEBYRANK", "z", "x", "1"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(c.cmd(&["ZREMRANGEBYSCORE", "z", "(2", "3"]), int(1));
    assert_eq!(c.cmd(&["ZREMRANGEBYSCORE", "z", "100", "0"]), int(0));
    assert_eq!(
        c.cmd(&["ZREMRANGEBYSCORE", "z", "x", "3"]),
        err("ERR min or max is not a float")
    );
    assert_eq!(c.cmd(&["ZRANGE", "z", "0", "-1"]), bulks(&["b", "d"]));
    assert!(
        matches!(c.cmd(&["TTL", "z"]), Reply::Int(t) if t > 90),
        "TTL kept"
    );
    assert_eq!(c.cmd(&["ZREMRANGEBYSCORE", "z", "-inf", "inf"]), int(2));
    assert_eq!(c.cmd(&["EXISTS", "z"]), int(0));
    c.cmd(&[
        "ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e",
    ]);
    assert_eq!(c.cmd(&["ZREMRANGEBYLEX", "l", "[b", "(d"]), int(2));
    assert_eq!(
        c.cmd(&["ZREMRANGEBYLEX", "l", "x", "+"]),
        err("ERR min or max not valid string range item")
    );
    assert_eq!(c.cmd(&["ZRANGE", "l", "0", "-1"]), bulks(&["a", "d", "e"]));
    assert_eq!(c.cmd(&["ZREMRANGEBYLEX", "l", "-", "+"]), int(3));
    assert_eq!(c.cmd(&["EXISTS", "l"]), int(0));
    assert_eq!(c.cmd(&["ZREMRANGEBYRANK", "missing", "0", "-1"]), int(0));
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["ZREMRANGEBYRANK", "s", "0", "-1"]), err(WRONGTYPE));
}

#[test]
fn zpopmin_zpopmax_reply_shapes() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["ZADD", "p", "1", "a", "2", "b", "3", "c", "4", "d"]);
    c.cmd(&["EXPIRE", "p", "100"]);
    assert_eq!(c.cmd(&["ZPOPMIN", "p"]), scored(&[("a", "1")]));
    assert_eq!(
        c.cmd(&["ZPOPMAX", "p", "2"]),
        scored(&[("d", "4"), ("c", "3")])
    );
    assert_eq!(c.cmd(&["ZPOPMIN", "p", "0"]), bulks(&[]));
    assert!(
        matches!(c.cmd(&["TTL", "p"]), Reply::Int(t) if t > 90),
        "TTL kept"
    );
    let positive = err("ERR value is out of range, must be positive");
    assert_eq!(c.cmd(&["ZPOPMIN", "p", "-1"]), positive);
    assert_eq!(c.cmd(&["ZPOPMIN", "p", "x"]), positive);
    assert_eq!(c.cmd(&["ZPOPMIN", "p", "1", "2"]), err("ERR syntax error"));
    assert_eq!(c.cmd(&["ZPOPMIN", "p", "10"]), scored(&[("b", "2")]));
    assert_eq!(
        c.cmd(&["EXISTS", "p"]),
        int(0),
        "the last pop removes the key"
    );
    assert_eq!(c.cmd(&["ZPOPMIN", "p"]), bulks(&[]));
    assert_eq!(c.cmd(&["ZPOPMAX", "p", "3"]), bulks(&[]));
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["ZPOPMIN", "s"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["ZPOPMIN", "s", "0"]), err(WRONGTYPE));
    // RESP3: a flat pair without a count, nested pairs with one.
    c.cmd(&["ZADD", "p", "1", "a", "2", "b", "3", "c"]);
    c.cmd(&["HELLO", "3"]);
    let pair = |m: &str, s: &str| Reply::Array(vec![b(m), Reply::Double(s.into())]);
    assert_eq!(c.cmd(&["ZPOPMIN", "p"]), pair("a", "1"));
    assert_eq!(
        c.cmd(&["ZPOPMAX", "p", "1"]),
        Reply::Array(vec![pair("c", "3")])
    );
}

#[test]
fn zmpop_pops_from_the_first_non_empty_key() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["ZADD", "m1", "1", "a", "2", "b"]);
    c.cmd(&["ZADD", "m2", "3", "c"]);
    let nested = |key: &str, items: &[(&str, &str)]| {
        Reply::Array(vec![
            b(key),
            Reply::Array(
                items
                    .iter()
                    .map(|(m, s)| Reply::Array(vec![b(m), b(s)]))
                    .collect(),
            ),
        ])
    };
    assert_eq!(
        c.cmd(&["ZMPOP", "2", "nosuch", "m1", "MIN"]),
        nested("m1", &[("a", "1")])
    );
    assert_eq!(
        c.cmd(&["ZMPOP", "2", "m1", "m2", "MAX", "COUNT", "10"]),
        nested("m1", &[("b", "2")])
    );
    assert_eq!(
        c.cmd(&["ZMPOP", "2", "m1", "m2", "max", "count", "10"]),
        nested("m2", &[("c", "3")])
    );
    c.send_cmd(&[b"ZMPOP", b"2", b"m1", b"m2", b"MIN"]);
    c.expect_bytes(b"*-1\r\n");
    let errors = [
        (
            vec!["0", "m1", "MIN"],
            "ERR numkeys should be greater than 0",
        ),
        (
            vec!["x", "m1", "MIN"],
            "ERR numkeys should be greater than 0",
        ),
        (vec!["1", "m1", "FOO"], "ERR syntax error"),
        (vec!["3", "m1", "MIN"], "ERR syntax error"),
        (
            vec!["1", "m1", "MIN", "COUNT", "0"],
            "ERR count should be greater than 0",
        ),
        (
            vec!["1", "m1", "MIN", "COUNT", "1", "COUNT", "1"],
            "ERR syntax error",
        ),
    ];
    for (args, expected) in errors {
        let mut cmd = vec!["ZMPOP"];
        cmd.extend(args);
        assert_eq!(c.cmd(&cmd), err(expected), "{cmd:?}");
    }
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["ZMPOP", "2", "nosuch", "s", "MIN"]), err(WRONGTYPE));
}

#[test]
fn zmpop_across_shards_follows_key_order() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let (k0, k1, k2) = (
        &keys_on_shard("a", 0, 3, 1)[0],
        &keys_on_shard("b", 1, 3, 1)[0],
        &keys_on_shard("c", 2, 3, 1)[0],
    );
    c.cmd(&["ZADD", k1, "1", "x", "2", "y"]);
    c.cmd(&["ZADD", k2, "5", "z"]);
    let popped = c.cmd(&["ZMPOP", "3", k0, k1, k2, "MAX", "COUNT", "5"]);
    assert_eq!(
        popped,
        Reply::Array(vec![
            b(k1),
            Reply::Array(vec![
                Reply::Array(vec![b("y"), b("2")]),
                Reply::Array(vec![b("x"), b("1")]),
            ])
        ])
    );
    assert_eq!(c.cmd(&["EXISTS", k1]), int(0));
    let popped = c.cmd(&["ZMPOP", "3", k0, k1, k2, "MIN"]);
    assert_eq!(
        popped,
        Reply::Array(vec![
            b(k2),
            Reply::Array(vec![Reply::Array(vec![b("z"), b("5")])])
        ])
    );
    c.send_cmd(&[b"ZMPOP", b"2", k0.as_bytes(), k2.as_bytes(), b"MIN"]);
    c.expect_bytes(b"*-1\r\n");
    c.cmd(&["SET", k1, "v"]);
    c.cmd(&["ZADD", k2, "1", "z"]);
    assert_eq!(c.cmd(&["ZMPOP", "3", k0, k1, k2, "MIN"]), err(WRONGTYPE));
    assert_eq!(
        c.cmd(&["ZCARD", k2]),
        int(1),
        "nothing popped after WRONGTYPE"
    );
}

#[test]
fn union_inter_diff_with_weights_aggregates_and_plain_sets() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["ZADD", "u1", "1", "a", "2", "b", "3", "c"]);
    c.cmd(&["ZADD", "u2", "10", "b", "20", "c", "30", "d"]);
    c.cmd(&["SADD", "us", "b", "d", "e"]);
    assert_eq!(
        c.cmd(&["ZUNION", "2", "u1", "u2"]),
        bulks(&["a", "b", "c", "d"])
    );
    assert_eq!(
        c.cmd(&["ZUNION", "3", "u1", "u2", "us", "WITHSCORES"]),
        scored(&[
            ("a", "1"),
            ("e", "1"),
            ("b", "13"),
            ("c", "23"),
            ("d", "31")
        ])
    );
    assert_eq!(
        c.cmd(&[
            "ZUNION",
            "2",
            "u1",
            "u2",
            "WEIGHTS",
            "2",
            "0.5",
            "WITHSCORES"
        ]),
        scored(&[("a", "2"), ("b", "9"), ("d", "15"), ("c", "16")])
    );
    assert_eq!(
        c.cmd(&["ZUNION", "2", "u1", "u2", "AGGREGATE", "MIN", "WITHSCORES"]),
        scored(&[("a", "1"), ("b", "2"), ("c", "3"), ("d", "30")])
    );
    assert_eq!(
        c.cmd(&[
            "ZUNION",
            "2",
            "u1",
            "u2",
            "WEIGHTS",
            "inf",
            "-inf",
            "WITHSCORES"
        ]),
        scored(&[("d", "-inf"), ("b", "0"), ("c", "0"), ("a", "inf")]),
        "inf + -inf sums to 0"
    );
    assert_eq!(
        c.cmd(&["ZINTER", "3", "u1", "u2", "us", "WITHSCORES"]),
        scored(&[("b", "13")])
    );
    assert_eq!(
        c.cmd(&["ZINTER", "2", "u1", "u2", "AGGREGATE", "MAX", "WITHSCORES"]),
        scored(&[("b", "10"), ("c", "20")])
    );
    assert_eq!(c.cmd(&["ZINTER", "2", "u1", "missing"]), bulks(&[]));
    assert_eq!(
        c.cmd(&["ZDIFF", "3", "u2", "us", "u1", "WITHSCORES"]),
        bulks(&[]),
    );
    assert_eq!(
        c.cmd(&["ZDIFF", "2", "u1", "u2", "WITHSCORES"]),
        scored(&[("a", "1")])
    );
    assert_eq!(c.cmd(&["ZDIFF", "1", "missing"]), bulks(&[]));
    assert_eq!(c.cmd(&["ZINTERCARD", "2", "u1", "u2"]), int(2));
    assert_eq!(
        c.cmd(&["ZINTERCARD", "2", "u1", "u2", "LIMIT", "1"]),
        int(1)
    );
    assert_eq!(
        c.cmd(&["ZINTERCARD", "2", "u1", "u2", "LIMIT", "0"]),
        int(2)
    );
    assert_eq!(
        c.cmd(&[
            "ZUNION",
            "1",
            "u1",
            "WEIGHTS",
            "2",
            "WEIGHTS",
            "3",
            "WITHSCORES"
        ]),
        scored(&[("a", "3"), ("b", "6"), ("c", "9")]),
        "the last WEIGHTS wins"
    );
    c.cmd(&["SET", "s", "v"]);
    let errors = [
        (
            vec!["ZUNION", "0", "u1"],
            "ERR at least 1 input key is needed for 'zunion' command",
        ),
        (
            vec!["ZUNION", "-1", "u1"],
            "ERR at least 1 input key is needed for 'zunion' command",
        ),
        (
            vec!["ZINTERCARD", "0", "u1"],
            "ERR at least 1 input key is needed for 'zintercard' command",
        ),
        (
            vec!["ZUNIONSTORE", "d", "0", "u1"],
            "ERR at least 1 input key is needed for 'zunionstore' command",
        ),
        (
            vec!["ZUNION", "x", "u1"],
            "ERR value is not an integer or out of range",
        ),
        (vec!["ZUNION", "3", "u1"], "ERR syntax error"),
        (
            vec!["ZUNION", "2", "u1", "s", "WEIGHTS", "x", "y"],
            WRONGTYPE,
        ),
        (
            vec!["ZUNION", "1", "u1", "WEIGHTS", "x"],
            "ERR weight value is not a float",
        ),
        (
            vec!["ZUNION", "1", "u1", "WEIGHTS", "1", "2"],
            "ERR syntax error",
        ),
        (
            vec!["ZUNION", "1", "u1", "AGGREGATE", "FOO"],
            "ERR syntax error",
        ),
        (vec!["ZUNION", "1", "u1", "AGGREGATE"], "ERR syntax error"),
        (vec!["ZDIFF", "1", "u1", "WEIGHTS", "1"], "ERR syntax error"),
        (
            vec!["ZDIFF", "1", "u1", "AGGREGATE", "SUM"],
            "ERR syntax error",
        ),
        (
            vec!["ZDIFFSTORE", "d", "1", "u1", "WITHSCORES"],
            "ERR syntax error",
        ),
        (
            vec!["ZINTERCARD", "1", "u1", "WITHSCORES"],
            "ERR syntax error",
        ),
        (
            vec!["ZINTERCARD", "1", "u1", "LIMIT", "-1"],
            "ERR LIMIT can't be negative",
        ),
        (
            vec!["ZINTERCARD", "1", "u1", "LIMIT", "x"],
            "ERR LIMIT can't be negative",
        ),
        (vec!["ZINTERCARD", "2", "u1", "s", "LIMIT", "x"], WRONGTYPE),
    ];
    for (cmd, expected) in errors {
        assert_eq!(c.cmd(&cmd), err(expected), "{cmd:?}");
    }
}

#[test]
fn store_commands_across_three_shards() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let a = &keys_on_shard("a", 0, 3, 1)[0];
    let bk = &keys_on_shard("b", 1, 3, 1)[0];
    let s = &keys_on_shard("s", 2, 3, 1)[0];
    let dst = &keys_on_shard("d", 2, 3, 1)[0];
    let dst1 = &keys_on_shard("e", 1, 3, 1)[0];
    c.cmd(&["ZADD", a, "1", "x", "2", "y", "3", "z"]);
    c.cmd(&["ZADD", bk, "10", "y", "20", "z", "30", "w"]);
    c.cmd(&["SADD", s, "z", "w", "v"]);
    assert_eq!(
        c.cmd(&["ZUNION", "3", a, bk, s, "WITHSCORES"]),
        scored(&[
            ("v", "1"),
            ("x", "1"),
            ("y", "12"),
            ("z", "24"),
            ("w", "31")
        ])
    );
    assert_eq!(
        c.cmd(&[
            "ZINTER",
            "3",
            a,
            bk,
            s,
            "WEIGHTS",
            "1",
            "2",
            "3",
            "AGGREGATE",
            "MAX",
            "WITHSCORES"
        ]),
        scored(&[("z", "40")])
    );
    assert_eq!(
        c.cmd(&["ZDIFF", "3", a, bk, s, "WITHSCORES"]),
        scored(&[("x", "1")])
    );
    assert_eq!(c.cmd(&["ZINTERCARD", "3", a, bk, s]), int(1));
    assert_eq!(c.cmd(&["ZINTERCARD", "2", a, bk, "LIMIT", "1"]), int(1));
    // STORE: the destination's TTL is dropped; an empty result deletes it.
    c.cmd(&["ZADD", dst, "1", "old"]);
    c.cmd(&["EXPIRE", dst, "100"]);
    assert_eq!(
        c.cmd(&[
            "ZUNIONSTORE",
            dst,
            "3",
            a,
            bk,
            s,
            "WEIGHTS",
            "1",
            "1",
            "100"
        ]),
        int(5)
    );
    assert_eq!(c.cmd(&["TTL", dst]), int(-1));
    assert_eq!(
        c.cmd(&["ZRANGE", dst, "0", "-1", "WITHSCORES"]),
        scored(&[
            ("x", "1"),
            ("y", "12"),
            ("v", "100"),
            ("z", "123"),
            ("w", "130")
        ])
    );
    assert_eq!(
        c.cmd(&["ZINTERSTORE", dst, "2", a, bk, "AGGREGATE", "MIN"]),
        int(2)
    );
    assert_eq!(
        c.cmd(&["ZRANGE", dst, "0", "-1", "WITHSCORES"]),
        scored(&[("y", "2"), ("z", "3")])
    );
    assert_eq!(c.cmd(&["ZDIFFSTORE", dst1, "2", a, bk]), int(1));
    assert_eq!(c.cmd(&["ZRANGE", dst1, "0", "-1"]), bulks(&["x"]));
    assert_eq!(c.cmd(&["ZDIFFSTORE", dst, "2", a, a]), int(0));
    assert_eq!(c.cmd(&["EXISTS", dst]), int(0));
    // ZRANGESTORE from one shard to another.
    assert_eq!(
        c.cmd(&[
            "ZRANGESTORE",
            dst,
            a,
            "(1",
            "+inf",
            "BYSCORE",
            "LIMIT",
            "0",
            "1"
        ]),
        int(1)
    );
    assert_eq!(
        c.cmd(&["ZRANGE", dst, "0", "-1", "WITHSCORES"]),
        scored(&[("y", "2")])
    );
    assert_eq!(
        c.cmd(&["ZRANGESTORE", dst, a, "0", "-1", "WITHSCORES"]),
        err("ERR syntax error")
    );
    assert_eq!(c.cmd(&["ZRANGESTORE", dst, bk, "0", "-1", "REV"]), int(3));
    assert_eq!(c.cmd(&["ZRANGE", dst, "0", "-1"]), bulks(&["y", "z", "w"]));
    assert_eq!(c.cmd(&["ZRANGESTORE", dst, "nosuch", "0", "-1"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", dst]), int(0));
    // Wrong types leave the destination alone.
    c.cmd(&["ZADD", dst, "1", "keep"]);
    c.cmd(&["SET", s, "str"]);
    assert_eq!(c.cmd(&["ZUNIONSTORE", dst, "2", a, s]), err(WRONGTYPE));
    assert_eq!(
        c.cmd(&["ZUNION", "2", a, s, "WEIGHTS", "x", "y"]),
        err(WRONGTYPE)
    );
    assert_eq!(c.cmd(&["ZRANGESTORE", dst, s, "0", "-1"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["ZRANGE", dst, "0", "-1"]), bulks(&["keep"]));
    assert_eq!(c.cmd(&["ZUNION", "5", a, bk]), err("ERR syntax error"));
}

#[test]
fn store_commands_on_one_shard() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["ZADD", "a", "1", "x", "2", "y"]);
    c.cmd(&["ZADD", "d", "5", "old"]);
    c.cmd(&["EXPIRE", "d", "100"]);
    assert_eq!(c.cmd(&["ZRANGESTORE", "d", "a", "0", "0"]), int(1));
    assert_eq!(c.cmd(&["TTL", "d"]), int(-1));
    assert_eq!(
        c.cmd(&["ZRANGE", "d", "0", "-1", "WITHSCORES"]),
        scored(&[("x", "1")])
    );
    assert_eq!(
        c.cmd(&["ZRANGESTORE", "d", "a", "0", "-1", "LIMIT", "0", "1"]),
        err(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
        )
    );
    assert_eq!(
        c.cmd(&["ZUNIONSTORE", "a", "2", "a", "d"]),
        int(2),
        "destination among the inputs"
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "a", "0", "-1", "WITHSCORES"]),
        scored(&[("x", "2"), ("y", "2")])
    );
    assert_eq!(c.cmd(&["ZINTERSTORE", "d", "2", "a", "missing"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "d"]), int(0));
}

#[test]
fn every_sorted_set_event() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEzg"]);
    let mut sub = server.raw();
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    let script: &[&[&str]] = &[
        &[
            "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e",
        ],
        &["ZINCRBY", "z", "1", "a"],
        &["ZREMRANGEBYSCORE", "z", "5", "5"],
        &["ZREMRANGEBYRANK", "z", "0", "0"],
        &["ZREMRANGEBYLEX", "z", "-", "+"],
        &["ZREMRANGEBYRANK", "z", "0", "0"],
        &["ZPOPMIN", "z"],
        &["ZPOPMAX", "z"],
        &["ZUNIONSTORE", "u", "1", "z"],
        &["ZINTERSTORE", "u", "1", "z"],
        &["ZDIFFSTORE", "u", "1", "z"],
        &["ZRANGESTORE", "r", "z", "0", "-1"],
        &["ZADD", "g", "1", "only"],
        &["ZMPOP", "1", "g", "MAX"],
        &["ZUNIONSTORE", "u", "1", "nosuch"],
    ];
    for cmd in script {
        c.cmd(cmd);
    }
    let expected = [
        ("zadd", "z"),
        ("zincr", "z"),
        ("zremrangebyscore", "z"),
        ("zremrangebyrank", "z"),
        // `- +` admits every member, whatever the scores.
        ("zremrangebylex", "z"),
        ("del", "z"),
        ("zadd", "g"),
        ("zpopmax", "g"),
        ("del", "g"),
    ];
    let mut events = Vec::new();
    for _ in 0..expected.len() {
        if let Some(Reply::Array(parts)) = sub.read() {
            events.push((parts[2].clone(), parts[3].clone()));
        }
    }
    let want: Vec<(Reply, Reply)> = expected
        .iter()
        .map(|(e, k)| (b(&format!("__keyevent@0__:{e}")), b(k)))
        .collect();
    assert_eq!(events, want);
    // The stores, the pops and the deletions of a populated set, in order.
    c.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]);
    for cmd in script[6..12].iter().chain(&script[14..]) {
        c.cmd(cmd);
    }
    let expected = [
        ("zadd", "z"),
        ("zpopmin", "z"),
        ("zpopmax", "z"),
        ("zunionstore", "u"),
        ("zinterstore", "u"),
        ("zdiffstore", "u"),
        ("zrangestore", "r"),
        ("del", "u"),
    ];
    let mut events = Vec::new();
    for _ in 0..expected.len() {
        if let Some(Reply::Array(parts)) = sub.read() {
            events.push((parts[2].clone(), parts[3].clone()));
        }
    }
    let want: Vec<(Reply, Reply)> = expected
        .iter()
        .map(|(e, k)| (b(&format!("__keyevent@0__:{e}")), b(k)))
        .collect();
    assert_eq!(events, want);
}

// ---- ZRANDMEMBER, ZSCAN and sorted-set encodings (sets helper) ----

/// Member/score pairs of a flat RESP2 reply.
fn member_scores(reply: Reply) -> Vec<(String, String)> {
    reply
        .items()
        .chunks(2)
        .map(|p| (p[0].text(), p[1].text()))
        .collect()
}

#[test]
fn zrandmember_counts_and_withscores() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["ZADD", "z", "3", "c", "1", "a", "2", "b", "2.5", "d"]);
    let score_of = |m: &str| match m {
        "a" => "1",
        "b" => "2",
        "c" => "3",
        "d" => "2.5",
        other => panic!("unknown member {other}"),
    };
    score_of(&c.cmd(&["ZRANDMEMBER", "z"]).text());
    let two = c.cmd(&["ZRANDMEMBER", "z", "2"]).items();
    assert_eq!(two.len(), 2);
    assert_ne!(two[0], two[1]);
    let repeated = member_scores(c.cmd(&["ZRANDMEMBER", "z", "-30", "WITHSCORES"]));
    assert_eq!(repeated.len(), 30);
    for (member, score) in &repeated {
        assert_eq!(score, score_of(member));
    }
    // Asking for all of it lists the set from the highest score, as Redis does.
    assert_eq!(
        c.cmd(&["ZRANDMEMBER", "z", "10", "WITHSCORES"]),
        common::bulks(&["c", "3", "d", "2.5", "b", "2", "a", "1"])
    );
    assert_eq!(
        c.cmd(&["ZRANDMEMBER", "z", "10"]),
        common::bulks(&["c", "d", "b", "a"])
    );
    assert_eq!(c.cmd(&["ZRANDMEMBER", "z", "0"]), Reply::Array(vec![]));
    assert_eq!(c.cmd(&["ZRANDMEMBER", "nosuch"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["ZRANDMEMBER", "nosuch", "-3"]),
        Reply::Array(vec![])
    );
    assert_eq!(
        c.cmd(&["ZRANDMEMBER", "z", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        c.cmd(&["ZRANDMEMBER", "z", "1", "WITHSCORES", "WITHSCORES"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["ZRANDMEMBER", "z", "-9223372036854775807", "WITHSCORES"]),
        err("ERR value is out of range")
    );
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(
        c.cmd(&["ZRANDMEMBER", "s", "0"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    // RESP3: [member, score] pairs with double scores.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(
        c.cmd(&["ZRANDMEMBER", "z", "2", "WITHSCORES"])
            .items()
            .len(),
        2
    );
    let whole = c.cmd(&["ZRANDMEMBER", "z", "4", "WITHSCORES"]);
    assert_eq!(
        whole.items()[1],
        Reply::Array(vec![b("d"), Reply::Double("2.5".into())])
    );
}

#[test]
fn zscan_walks_every_member_once_with_its_score() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    // Past zset-max-listpack-entries, so the walk takes several calls.
    let mut zadd = vec!["ZADD".to_string(), "z".to_string()];
    for i in 0..500 {
        zadd.push(format!("{}", i as f64 / 4.0));
        zadd.push(format!("m{i}"));
    }
    let zadd: Vec<&str> = zadd.iter().map(String::as_str).collect();
    c.cmd(&zadd);
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let reply = c.cmd(&["ZSCAN", "z", &cursor, "COUNT", "30"]).items();
        seen.extend(member_scores(reply[1].clone()));
        cursor = reply[0].text();
        if cursor == "0" {
            break;
        }
    }
    seen.sort();
    let mut expected: Vec<(String, String)> = (0..500)
        .map(|i| {
            let score = c.cmd(&["ZSCORE", "z", &format!("m{i}")]).text();
            (format!("m{i}"), score)
        })
        .collect();
    expected.sort();
    assert_eq!(
        seen, expected,
        "every member exactly once, with ZSCORE's text"
    );
    // New members scoring above the cursor do not hide older ones.
    let mut seen = std::collections::HashSet::new();
    let mut cursor = "0".to_string();
    let mut round = 0;
    loop {
        let reply = c.cmd(&["ZSCAN", "z", &cursor, "COUNT", "20"]).items();
        seen.extend(member_scores(reply[1].clone()).into_iter().map(|(m, _)| m));
        cursor = reply[0].text();
        if cursor == "0" {
            break;
        }
        c.cmd(&[
            "ZADD",
            "z",
            &format!("{}", 1000 + round),
            &format!("late{round}"),
        ]);
        c.cmd(&["ZREM", "z", &format!("m{round}")]);
        round += 1;
    }
    for i in round..500 {
        assert!(seen.contains(&format!("m{i}")), "missed m{i}");
    }
}

#[test]
fn zscan_of_a_small_sorted_set_and_its_errors() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["ZADD", "z", "3", "c", "1", "a", "2", "b", "2.5", "d"]);
    // A listpack comes whole, by score, whatever COUNT says.
    assert_eq!(
        c.cmd(&["ZSCAN", "z", "0", "COUNT", "1"]),
        Reply::Array(vec![
            b("0"),
            common::bulks(&["a", "1", "b", "2", "d", "2.5", "c", "3"])
        ])
    );
    assert_eq!(
        c.cmd(&["ZSCAN", "z", "0", "MATCH", "[ab]"]),
        Reply::Array(vec![b("0"), common::bulks(&["a", "1", "b", "2"])])
    );
    // RESP3 too: scores are bulk strings in a ZSCAN reply.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(
        c.cmd(&["ZSCAN", "z", "0", "MATCH", "c"]),
        Reply::Array(vec![b("0"), common::bulks(&["c", "3"])])
    );
    assert_eq!(
        c.cmd(&["ZSCAN", "nosuch", "0"]),
        Reply::Array(vec![b("0"), Reply::Array(vec![])])
    );
    assert_eq!(
        c.cmd(&["ZSCAN", "z", "0", "NOVALUES"]),
        err("ERR syntax error")
    );
    assert_eq!(c.cmd(&["ZSCAN", "z", "1x"]), err("ERR invalid cursor"));
}

#[test]
fn object_encoding_of_sorted_sets_follows_redis_7_0() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let enc = |c: &mut common::Raw, key: &str| c.cmd(&["OBJECT", "ENCODING", key]).text();
    let mut zadd = vec!["ZADD".to_string(), "z".to_string()];
    for i in 1..=128 {
        zadd.push(i.to_string());
        zadd.push(format!("m{i}"));
    }
    let zadd: Vec<&str> = zadd.iter().map(String::as_str).collect();
    c.cmd(&zadd);
    assert_eq!(enc(&mut c, "z"), "listpack", "128 members still fit");
    c.cmd(&["ZADD", "z", "129", "m129"]);
    assert_eq!(enc(&mut c, "z"), "skiplist");
    c.cmd(&["ZREM", "z", "m129"]);
    assert_eq!(enc(&mut c, "z"), "skiplist", "never converts back");
    let (m64, m65) = ("x".repeat(64), "x".repeat(65));
    c.cmd(&["ZADD", "v", "1", &m64]);
    assert_eq!(enc(&mut c, "v"), "listpack", "64-byte members still fit");
    c.cmd(&["ZADD", "v", "1", &m65]);
    assert_eq!(enc(&mut c, "v"), "skiplist");
    c.cmd(&["ZREM", "v", &m65]);
    assert_eq!(enc(&mut c, "v"), "skiplist");
    let copy = common::keys_on_shard("copy", 1, 2, 1).remove(0);
    c.cmd(&["COPY", "v", &copy]);
    assert_eq!(enc(&mut c, &copy), "skiplist", "a copy keeps the encoding");
}

/// Found by the fuzz harness: a numkeys of 2^64-1 overflowed the key
/// positions' arithmetic and killed the shard. Redis's errors, and the
/// server lives on.
#[test]
fn a_numkeys_of_u64_max_is_an_error() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let max = "18446744073709551615";
    let range = err("ERR value is not an integer or out of range");
    let numkeys = err("ERR numkeys should be greater than 0");
    assert_eq!(c.cmd(&["ZDIFFSTORE", "d", max, "a"]), range);
    assert_eq!(c.cmd(&["ZUNION", max, "a"]), range);
    assert_eq!(c.cmd(&["ZINTERCARD", max, "a"]), range);
    assert_eq!(c.cmd(&["ZMPOP", max, "a", "MIN"]), numkeys);
    assert_eq!(c.cmd(&["LMPOP", max, "a", "LEFT"]), numkeys);
    assert_eq!(c.cmd(&["SINTERCARD", max, "a"]), numkeys);
    assert_eq!(c.cmd(&["BZMPOP", "0.01", max, "a", "MIN"]), numkeys);
    assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()));
}

/// The issue's input, at half its size: ZADD 500k members, ZREMRANGEBYRANK
/// the lower half, then ZREM one more. That ZREM found more free arena
/// slots than members and rebuilt the whole skiplist inside the command
/// (52 ms in a release build at 1M members, far more in a debug build);
/// now each write does a bounded share of the compaction. Checked as the
/// hardening tests check freezes: the ZREM is answered within a bound
/// many times what it takes now, a fraction of what it took, in one of
/// three tries (a busy machine can slow one).
#[test]
fn a_zrem_after_a_big_range_removal_does_not_rebuild_the_set() {
    const MEMBERS: usize = 500_000;
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    let mut runs = Vec::new();
    for _ in 0..3 {
        let cmds: Vec<Vec<Vec<u8>>> = (0..MEMBERS / 1000)
            .map(|batch| {
                let mut cmd = vec![b"ZADD".to_vec(), b"z".to_vec()];
                for i in batch * 1000..(batch + 1) * 1000 {
                    cmd.push(i.to_string().into_bytes());
                    cmd.push(format!("member:{i}").into_bytes());
                }
                cmd
            })
            .collect();
        let _ = c.pipeline(&cmds);
        let half = (MEMBERS / 2).to_string();
        assert_eq!(
            c.cmd(&["ZREMRANGEBYRANK", "z", "0", &(MEMBERS / 2 - 1).to_string()]),
            int(half.parse().unwrap())
        );
        let sent = std::time::Instant::now();
        assert_eq!(c.cmd(&["ZREM", "z", "member:300000"]), int(1));
        let took = sent.elapsed();
        // The set is whole after the compaction steps of many writes.
        for i in 0..2000 {
            assert_eq!(
                c.cmd(&["ZREM", "z", &format!("member:{}", 300_001 + i)]),
                int(1)
            );
        }
        assert_eq!(c.int(&["ZCARD", "z"]), (MEMBERS / 2 - 2001) as i64);
        assert_eq!(c.cmd(&["ZRANK", "z", "member:250000"]), int(0));
        assert_eq!(c.cmd(&["ZSCORE", "z", "member:499999"]), b("499999"));
        assert_eq!(c.int(&["DEL", "z"]), 1);
        if took < std::time::Duration::from_millis(40) {
            return;
        }
        runs.push(took);
    }
    panic!("ZREM took {runs:?}");
}
