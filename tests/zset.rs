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
