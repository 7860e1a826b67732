//! Sorted sets as far as the delayed-job queue needs them: ZADD, ZREM,
//! ZRANGEBYSCORE, ZSCORE, ZCARD. Replies checked against redis-server 7.0.

mod common;

use common::{Reply, Server};

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn err(s: &str) -> Reply {
    Reply::Error(s.into())
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
