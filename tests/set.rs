//! Sets, first part. Replies checked against redis-server 7.0.

mod common;

use common::{Reply, Server};

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

#[test]
fn members_add_remove_and_test() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    assert_eq!(c.cmd(&["SADD", "S", "a", "b", "c", "a"]), Reply::Int(3));
    assert_eq!(c.cmd(&["SADD", "S", "a"]), Reply::Int(0));
    assert_eq!(c.cmd(&["SREM", "S", "a", "zz"]), Reply::Int(1));
    assert_eq!(c.cmd(&["SCARD", "S"]), Reply::Int(2));
    assert_eq!(c.cmd(&["SISMEMBER", "S", "b"]), Reply::Int(1));
    assert_eq!(c.cmd(&["SISMEMBER", "S", "a"]), Reply::Int(0));
    assert_eq!(
        c.cmd(&["SMISMEMBER", "S", "a", "b"]),
        Reply::Array(vec![Reply::Int(0), Reply::Int(1)])
    );
    assert_eq!(
        c.cmd(&["SMISMEMBER", "nosuch", "a"]),
        Reply::Array(vec![Reply::Int(0)])
    );
    assert_eq!(c.cmd(&["SMEMBERS", "nosuch"]), Reply::Array(vec![]));
    let Reply::Array(mut members) = c.cmd(&["SMEMBERS", "S"]) else {
        panic!("SMEMBERS")
    };
    members.sort_by_key(|m| format!("{m:?}"));
    assert_eq!(members, vec![b("b"), b("c")]);
    assert_eq!(c.cmd(&["TYPE", "S"]), Reply::Simple("set".into()));
    // A TTL survives content changes; the last SREM removes key and TTL.
    c.cmd(&["EXPIRE", "S", "100"]);
    c.cmd(&["SADD", "S", "d"]);
    assert!(matches!(c.cmd(&["TTL", "S"]), Reply::Int(t) if t > 90));
    assert_eq!(c.cmd(&["SREM", "S", "b", "c", "d"]), Reply::Int(3));
    assert_eq!(c.cmd(&["EXISTS", "S"]), Reply::Int(0));
    c.cmd(&["SET", "s", "v"]);
    let wrong =
        Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into());
    assert_eq!(c.cmd(&["SADD", "s", "a"]), wrong);
    c.cmd(&["SADD", "T", "1"]);
    assert_eq!(c.cmd(&["GET", "T"]), wrong);
    // RESP3: SMEMBERS is a set.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.cmd(&["SMEMBERS", "T"]), Reply::Set(vec![b("1")]));
}

// ---- Sets, second part: random picks, SMOVE, the algebra, SSCAN, encodings ----

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn wrong() -> Reply {
    Reply::Error(WRONGTYPE.into())
}

fn err(text: &str) -> Reply {
    Reply::Error(text.into())
}

/// The texts of an array or set reply, sorted (set replies have no order).
fn sorted(reply: Reply) -> Vec<String> {
    let mut items: Vec<String> = reply.items().iter().map(Reply::text).collect();
    items.sort();
    items
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Distinct texts of a reply, checking there are no repeats.
fn distinct(reply: Reply) -> std::collections::HashSet<String> {
    let items = sorted(reply);
    let set: std::collections::HashSet<String> = items.iter().cloned().collect();
    assert_eq!(set.len(), items.len(), "repeated items in {items:?}");
    set
}

#[test]
fn spop_takes_random_members_and_the_last_one_takes_the_key() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["SADD", "S", "a", "b", "c", "d", "e"]);
    c.cmd(&["EXPIRE", "S", "100"]);
    let one = c.cmd(&["SPOP", "S"]).text();
    assert!(["a", "b", "c", "d", "e"].contains(&one.as_str()));
    assert_eq!(c.cmd(&["SISMEMBER", "S", &one]), Reply::Int(0));
    let two = distinct(c.cmd(&["SPOP", "S", "2"]));
    assert_eq!(two.len(), 2);
    assert!(!two.contains(&one));
    assert_eq!(c.cmd(&["SCARD", "S"]), Reply::Int(2));
    assert!(
        matches!(c.cmd(&["TTL", "S"]), Reply::Int(t) if t > 90),
        "popping keeps the TTL"
    );
    assert_eq!(c.cmd(&["SPOP", "S", "0"]), Reply::Array(vec![]));
    let rest = distinct(c.cmd(&["SPOP", "S", "10"]));
    assert_eq!(rest.len(), 2);
    assert_eq!(c.cmd(&["EXISTS", "S"]), Reply::Int(0));
    // Missing keys, errors in Redis's order (count before type).
    assert_eq!(c.cmd(&["SPOP", "nosuch"]), Reply::Nil);
    assert_eq!(c.cmd(&["SPOP", "nosuch", "3"]), Reply::Array(vec![]));
    let range = err("ERR value is out of range, must be positive");
    assert_eq!(c.cmd(&["SPOP", "nosuch", "-1"]), range);
    assert_eq!(c.cmd(&["SPOP", "nosuch", "x"]), range);
    assert_eq!(
        c.cmd(&["SPOP", "nosuch", "1", "2"]),
        err("ERR syntax error")
    );
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(c.cmd(&["SPOP", "str"]), wrong());
    assert_eq!(c.cmd(&["SPOP", "str", "0"]), wrong());
    // RESP3: SPOP with a count answers a set.
    c.cmd(&["SADD", "T", "only"]);
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.cmd(&["SPOP", "T", "1"]), Reply::Set(vec![b("only")]));
    assert_eq!(c.cmd(&["SPOP", "T", "1"]), Reply::Set(vec![]));
}

#[test]
fn srandmember_counts_pick_distinct_or_repeating_members() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["SADD", "S", "a", "b", "c", "d", "e"]);
    let one = c.cmd(&["SRANDMEMBER", "S"]).text();
    assert!(["a", "b", "c", "d", "e"].contains(&one.as_str()));
    assert_eq!(distinct(c.cmd(&["SRANDMEMBER", "S", "3"])).len(), 3);
    assert_eq!(
        sorted(c.cmd(&["SRANDMEMBER", "S", "50"])),
        strings(&["a", "b", "c", "d", "e"])
    );
    let repeating = c.cmd(&["SRANDMEMBER", "S", "-50"]).items();
    assert_eq!(repeating.len(), 50);
    let seen: std::collections::HashSet<String> = repeating.iter().map(Reply::text).collect();
    assert!(seen.len() > 1 && seen.len() <= 5);
    assert_eq!(c.cmd(&["SCARD", "S"]), Reply::Int(5), "nothing removed");
    assert_eq!(c.cmd(&["SRANDMEMBER", "S", "0"]), Reply::Array(vec![]));
    assert_eq!(c.cmd(&["SRANDMEMBER", "nosuch"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["SRANDMEMBER", "nosuch", "-5"]),
        Reply::Array(vec![])
    );
    assert_eq!(
        c.cmd(&["SRANDMEMBER", "nosuch", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        c.cmd(&["SRANDMEMBER", "S", "-9223372036854775808"]),
        err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    );
    assert_eq!(
        c.cmd(&["SRANDMEMBER", "S", "1", "2"]),
        err("ERR syntax error")
    );
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(c.cmd(&["SRANDMEMBER", "str", "0"]), wrong());
    // An intset asked for all of it comes sorted, as Redis lists one.
    c.cmd(&["SADD", "I", "5", "-2", "30", "4"]);
    assert_eq!(
        c.cmd(&["SRANDMEMBER", "I", "10"]),
        common::bulks(&["-2", "4", "5", "30"])
    );
    // RESP3: an array, not a set (unlike SPOP).
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.cmd(&["SRANDMEMBER", "I", "-2"]).items().len(), 2);
    assert!(matches!(c.cmd(&["SRANDMEMBER", "I", "2"]), Reply::Array(_)));
}

#[test]
fn smove_on_one_shard_follows_redis() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["SADD", "src", "a", "b"]);
    c.cmd(&["SADD", "dst", "b"]);
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(c.cmd(&["SMOVE", "src", "dst", "a"]), Reply::Int(1));
    assert_eq!(sorted(c.cmd(&["SMEMBERS", "dst"])), strings(&["a", "b"]));
    // Already in the destination: still moved out of the source.
    assert_eq!(c.cmd(&["SMOVE", "src", "dst", "b"]), Reply::Int(1));
    assert_eq!(
        c.cmd(&["EXISTS", "src"]),
        Reply::Int(0),
        "emptied source removed"
    );
    assert_eq!(c.cmd(&["SMOVE", "dst", "dst", "a"]), Reply::Int(1));
    assert_eq!(c.cmd(&["SMOVE", "dst", "dst", "zz"]), Reply::Int(0));
    assert_eq!(c.cmd(&["SMOVE", "dst", "new", "zz"]), Reply::Int(0));
    assert_eq!(c.cmd(&["EXISTS", "new"]), Reply::Int(0));
    // A missing source answers 0 before the destination's type is checked.
    assert_eq!(c.cmd(&["SMOVE", "nosuch", "str", "a"]), Reply::Int(0));
    assert_eq!(c.cmd(&["SMOVE", "dst", "str", "zz"]), wrong());
    assert_eq!(c.cmd(&["SMOVE", "str", "dst", "a"]), wrong());
    assert_eq!(sorted(c.cmd(&["SMEMBERS", "dst"])), strings(&["a", "b"]));
    assert_eq!(
        c.cmd(&["SMOVE", "dst", "new"]),
        err("ERR wrong number of arguments for 'smove' command")
    );
}

#[test]
fn smove_across_shards_checks_both_keys_first() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let src = &common::keys_on_shard("src", 0, 3, 1)[0];
    let dst = &common::keys_on_shard("dst", 1, 3, 1)[0];
    let str_key = &common::keys_on_shard("str", 2, 3, 1)[0];
    c.cmd(&["SADD", src, "a", "b"]);
    c.cmd(&["EXPIRE", dst, "100"]);
    c.cmd(&["SET", str_key, "v"]);
    assert_eq!(c.cmd(&["SMOVE", src, dst, "a"]), Reply::Int(1));
    assert_eq!(c.cmd(&["SMEMBERS", dst]), Reply::Array(vec![b("a")]));
    assert_eq!(c.cmd(&["SMEMBERS", src]), Reply::Array(vec![b("b")]));
    assert_eq!(c.cmd(&["SMOVE", src, dst, "zz"]), Reply::Int(0));
    assert_eq!(c.cmd(&["SMOVE", "nosuch", str_key, "a"]), Reply::Int(0));
    // WRONGTYPE on the destination leaves the source untouched.
    assert_eq!(c.cmd(&["SMOVE", src, str_key, "b"]), wrong());
    assert_eq!(c.cmd(&["SISMEMBER", src, "b"]), Reply::Int(1));
    assert_eq!(c.cmd(&["SMOVE", str_key, src, "b"]), wrong());
    // The last member moves the source key away.
    c.cmd(&["EXPIRE", src, "100"]);
    assert_eq!(c.cmd(&["SMOVE", src, dst, "b"]), Reply::Int(1));
    assert_eq!(c.cmd(&["EXISTS", src]), Reply::Int(0));
    assert_eq!(sorted(c.cmd(&["SMEMBERS", dst])), strings(&["a", "b"]));
    // Pipelined: the commands after a cross-shard SMOVE see its effect.
    let moves: Vec<Vec<Vec<u8>>> = (0..20)
        .flat_map(|i| {
            let m = format!("m{i}");
            vec![
                common::args(&["SADD", src, &m]),
                common::args(&["SMOVE", src, dst, &m]),
                common::args(&["SISMEMBER", dst, &m]),
            ]
        })
        .collect();
    for (i, reply) in c.pipeline(&moves).into_iter().enumerate() {
        assert_eq!(reply, Reply::Int(1), "pipelined reply {i}");
    }
    assert_eq!(c.cmd(&["SCARD", dst]), Reply::Int(22));
}

#[test]
fn inter_union_diff_on_one_shard() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["SADD", "a", "1", "2", "3", "4"]);
    c.cmd(&["SADD", "b", "3", "4", "5", "x"]);
    c.cmd(&["SADD", "c", "4", "x", "y"]);
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(sorted(c.cmd(&["SINTER", "a", "b"])), strings(&["3", "4"]));
    assert_eq!(sorted(c.cmd(&["SINTER", "a", "b", "c"])), strings(&["4"]));
    assert_eq!(
        sorted(c.cmd(&["SUNION", "a", "b", "c"])),
        strings(&["1", "2", "3", "4", "5", "x", "y"])
    );
    assert_eq!(sorted(c.cmd(&["SDIFF", "a", "b"])), strings(&["1", "2"]));
    assert_eq!(sorted(c.cmd(&["SDIFF", "b", "a", "c"])), strings(&["5"]));
    assert_eq!(c.cmd(&["SINTER", "a", "nosuch"]), Reply::Array(vec![]));
    assert_eq!(
        sorted(c.cmd(&["SDIFF", "a", "nosuch"])),
        strings(&["1", "2", "3", "4"])
    );
    // Every key's type is checked, missing keys before it included.
    assert_eq!(c.cmd(&["SINTER", "a", "nosuch", "str"]), wrong());
    assert_eq!(c.cmd(&["SUNION", "nosuch", "str"]), wrong());
    assert_eq!(c.cmd(&["SDIFF", "nosuch", "str"]), wrong());
    // Integer results list in value order, as Redis lists an intset.
    assert_eq!(
        c.cmd(&["SUNION", "a", "a"]),
        common::bulks(&["1", "2", "3", "4"])
    );
    // SINTERCARD.
    assert_eq!(c.cmd(&["SINTERCARD", "2", "a", "b"]), Reply::Int(2));
    assert_eq!(c.cmd(&["SINTERCARD", "3", "a", "b", "c"]), Reply::Int(1));
    assert_eq!(
        c.cmd(&["SINTERCARD", "2", "a", "b", "LIMIT", "1"]),
        Reply::Int(1)
    );
    assert_eq!(
        c.cmd(&["SINTERCARD", "2", "a", "b", "LIMIT", "0"]),
        Reply::Int(2)
    );
    assert_eq!(c.cmd(&["SINTERCARD", "2", "a", "nosuch"]), Reply::Int(0));
    assert_eq!(c.cmd(&["SINTERCARD", "2", "nosuch", "str"]), wrong());
    let numkeys = err("ERR numkeys should be greater than 0");
    assert_eq!(c.cmd(&["SINTERCARD", "0", "a"]), numkeys);
    assert_eq!(c.cmd(&["SINTERCARD", "x", "a"]), numkeys);
    assert_eq!(
        c.cmd(&["SINTERCARD", "3", "a", "b"]),
        err("ERR Number of keys can't be greater than number of args")
    );
    assert_eq!(
        c.cmd(&["SINTERCARD", "2", "a", "b", "LIMIT", "-1"]),
        err("ERR LIMIT can't be negative")
    );
    assert_eq!(
        c.cmd(&["SINTERCARD", "2", "a", "b", "LIMIT"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["SINTERCARD", "2", "a", "b", "FOO"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["SINTERCARD", "1"]),
        err("ERR wrong number of arguments for 'sintercard' command")
    );
    // RESP3: the algebra answers sets.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.cmd(&["SINTER", "a", "c"]), Reply::Set(vec![b("4")]));
    assert_eq!(c.cmd(&["SDIFF", "nosuch"]), Reply::Set(vec![]));
}

#[test]
fn store_forms_replace_or_delete_the_destination() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["SADD", "a", "1", "2", "3"]);
    c.cmd(&["SADD", "b", "2", "3", "x"]);
    c.cmd(&["SET", "d", "a string"]);
    c.cmd(&["EXPIRE", "d", "100"]);
    // The destination's old value and TTL go, whatever its type.
    assert_eq!(c.cmd(&["SINTERSTORE", "d", "a", "b"]), Reply::Int(2));
    assert_eq!(c.cmd(&["TYPE", "d"]), Reply::Simple("set".into()));
    assert_eq!(c.cmd(&["TTL", "d"]), Reply::Int(-1));
    assert_eq!(sorted(c.cmd(&["SMEMBERS", "d"])), strings(&["2", "3"]));
    assert_eq!(c.cmd(&["SUNIONSTORE", "d", "a", "b"]), Reply::Int(4));
    assert_eq!(c.cmd(&["SDIFFSTORE", "d", "a", "b"]), Reply::Int(1));
    assert_eq!(c.cmd(&["SMEMBERS", "d"]), common::bulks(&["1"]));
    // The destination may be a source.
    assert_eq!(c.cmd(&["SUNIONSTORE", "d", "d", "b"]), Reply::Int(4));
    // An empty result deletes the destination.
    assert_eq!(c.cmd(&["SDIFFSTORE", "d", "a", "a"]), Reply::Int(0));
    assert_eq!(c.cmd(&["EXISTS", "d"]), Reply::Int(0));
    assert_eq!(c.cmd(&["SINTERSTORE", "d", "nosuch", "a"]), Reply::Int(0));
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["SINTERSTORE", "d", "a", "s"]), wrong());
    assert_eq!(c.cmd(&["SINTERSTORE", "s", "a", "b"]), Reply::Int(2));
    assert_eq!(c.cmd(&["TYPE", "s"]), Reply::Simple("set".into()));
}

#[test]
fn algebra_across_three_shards() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let key = |prefix: &str, shard| common::keys_on_shard(prefix, shard, 3, 1).remove(0);
    let (a, b2, c3) = (key("a", 0), key("b", 1), key("c", 2));
    let (dst, str_key) = (key("dst", 1), key("str", 2));
    c.cmd(&["SADD", &a, "1", "2", "3", "4"]);
    c.cmd(&["SADD", &b2, "3", "4", "5", "x"]);
    c.cmd(&["SADD", &c3, "4", "x", "y"]);
    c.cmd(&["SET", &str_key, "v"]);
    assert_eq!(sorted(c.cmd(&["SINTER", &a, &b2])), strings(&["3", "4"]));
    assert_eq!(sorted(c.cmd(&["SINTER", &a, &b2, &c3])), strings(&["4"]));
    assert_eq!(
        sorted(c.cmd(&["SUNION", &a, &b2, &c3])),
        strings(&["1", "2", "3", "4", "5", "x", "y"])
    );
    assert_eq!(sorted(c.cmd(&["SDIFF", &b2, &a, &c3])), strings(&["5"]));
    assert_eq!(
        sorted(c.cmd(&["SDIFF", &a, "nosuch", &b2])),
        strings(&["1", "2"])
    );
    assert_eq!(c.cmd(&["SINTER", &a, "nosuch", &str_key]), wrong());
    assert_eq!(c.cmd(&["SINTERCARD", "3", &a, &b2, &c3]), Reply::Int(1));
    assert_eq!(
        c.cmd(&["SINTERCARD", "2", &a, &b2, "LIMIT", "1"]),
        Reply::Int(1)
    );
    assert_eq!(c.cmd(&["SINTERCARD", "2", &a, &str_key]), wrong());
    assert_eq!(
        c.cmd(&["SINTERCARD", "2", &a, &b2, "LIMIT", "-1"]),
        err("ERR LIMIT can't be negative")
    );
    // *STORE: the destination on yet another shard, its TTL dropped.
    c.cmd(&["SET", &dst, "old"]);
    c.cmd(&["EXPIRE", &dst, "100"]);
    assert_eq!(c.cmd(&["SINTERSTORE", &dst, &a, &b2, &c3]), Reply::Int(1));
    assert_eq!(c.cmd(&["SMEMBERS", &dst]), common::bulks(&["4"]));
    assert_eq!(c.cmd(&["TTL", &dst]), Reply::Int(-1));
    assert_eq!(c.cmd(&["SUNIONSTORE", &dst, &a, &c3]), Reply::Int(6));
    assert_eq!(c.cmd(&["SDIFFSTORE", &dst, &b2, &a]), Reply::Int(2));
    assert_eq!(sorted(c.cmd(&["SMEMBERS", &dst])), strings(&["5", "x"]));
    assert_eq!(c.cmd(&["SINTERSTORE", &dst, &a, &str_key]), wrong());
    assert_eq!(
        c.cmd(&["SCARD", &dst]),
        Reply::Int(2),
        "an error stores nothing"
    );
    assert_eq!(c.cmd(&["SDIFFSTORE", &dst, &a, &a, &b2]), Reply::Int(0));
    assert_eq!(
        c.cmd(&["EXISTS", &dst]),
        Reply::Int(0),
        "an empty result deletes"
    );
    // Pipelined reads see the stores before them.
    let replies = c.pipeline(&[
        common::args(&["SUNIONSTORE", &dst, &a, &b2]),
        common::args(&["SCARD", &dst]),
        common::args(&["SINTERSTORE", &dst, &dst, &c3]),
        common::args(&["SMEMBERS", &dst]),
    ]);
    assert_eq!(replies[..2], [Reply::Int(6), Reply::Int(6)]);
    assert_eq!(replies[2], Reply::Int(2));
    assert_eq!(sorted(replies[3].clone()), strings(&["4", "x"]));
}

#[test]
fn sscan_returns_every_member_once() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let members: Vec<String> = (0..1000).map(|i| format!("m{i}")).collect();
    let mut sadd = vec!["SADD", "S"];
    sadd.extend(members.iter().map(String::as_str));
    c.cmd(&sadd);
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    let mut calls = 0;
    loop {
        let reply = c.cmd(&["SSCAN", "S", &cursor, "COUNT", "7"]).items();
        let batch = reply[1].items();
        assert!(batch.len() <= 7);
        seen.extend(batch.iter().map(Reply::text));
        cursor = reply[0].text();
        calls += 1;
        if cursor == "0" {
            break;
        }
    }
    assert!(calls >= 1000 / 7, "COUNT bounds each step");
    seen.sort();
    let mut expected = members.clone();
    expected.sort();
    assert_eq!(seen, expected, "every member exactly once");
    // MATCH filters what a step visited; a full walk finds every match.
    let mut matched = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let reply = c
            .cmd(&["SSCAN", "S", &cursor, "MATCH", "m1?", "COUNT", "100"])
            .items();
        matched.extend(reply[1].items().iter().map(Reply::text));
        cursor = reply[0].text();
        if cursor == "0" {
            break;
        }
    }
    matched.sort();
    assert_eq!(
        matched,
        (10..20).map(|i| format!("m{i}")).collect::<Vec<_>>()
    );
}

#[test]
fn sscan_keeps_members_present_throughout_while_the_set_changes() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    let mut sadd = vec!["SADD".to_string(), "S".to_string()];
    sadd.extend((0..600).map(|i| format!("keep{i}")));
    sadd.extend((0..300).map(|i| format!("gone{i}")));
    let sadd: Vec<&str> = sadd.iter().map(String::as_str).collect();
    c.cmd(&sadd);
    let mut seen = std::collections::HashSet::new();
    let mut cursor = "0".to_string();
    let mut round = 0;
    loop {
        let reply = c.cmd(&["SSCAN", "S", &cursor, "COUNT", "10"]).items();
        seen.extend(reply[1].items().iter().map(Reply::text));
        cursor = reply[0].text();
        if cursor == "0" {
            break;
        }
        // Between steps: members come and go.
        c.cmd(&["SADD", "S", &format!("new{round}"), &format!("new{round}b")]);
        c.cmd(&["SREM", "S", &format!("gone{round}")]);
        round += 1;
    }
    for i in 0..600 {
        assert!(seen.contains(&format!("keep{i}")), "missed keep{i}");
    }
}

#[test]
fn sscan_arguments_and_compact_sets() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["SADD", "I", "30", "-1", "5", "7"]);
    c.cmd(&["SET", "str", "v"]);
    // An intset is answered whole, sorted, whatever COUNT says.
    let whole = Reply::Array(vec![b("0"), common::bulks(&["-1", "5", "7", "30"])]);
    assert_eq!(c.cmd(&["SSCAN", "I", "0", "COUNT", "1"]), whole);
    assert_eq!(c.cmd(&["SSCAN", "I", "-1"]), whole, "strtoul reads -1");
    assert_eq!(
        c.cmd(&["SSCAN", "I", "0", "MATCH", "[3-7]*"]),
        Reply::Array(vec![b("0"), common::bulks(&["5", "7", "30"])])
    );
    let empty = Reply::Array(vec![b("0"), Reply::Array(vec![])]);
    assert_eq!(c.cmd(&["SSCAN", "nosuch", "0"]), empty);
    // Errors: cursor first, then the key, then the options.
    let invalid = err("ERR invalid cursor");
    assert_eq!(c.cmd(&["SSCAN", "I", "x"]), invalid);
    assert_eq!(c.cmd(&["SSCAN", "I", "18446744073709551616"]), invalid);
    assert_eq!(c.cmd(&["SSCAN", "nosuch", "x"]), invalid);
    assert_eq!(c.cmd(&["SSCAN", "nosuch", "0", "COUNT", "x"]), empty);
    assert_eq!(c.cmd(&["SSCAN", "str", "0", "COUNT", "x"]), wrong());
    assert_eq!(
        c.cmd(&["SSCAN", "I", "0", "COUNT", "x"]),
        err("ERR value is not an integer or out of range")
    );
    for bad in [
        &["COUNT", "0"][..],
        &["TYPE", "set"],
        &["MATCH"],
        &["FOO", "bar"],
    ] {
        let mut cmd = vec!["SSCAN", "I", "0"];
        cmd.extend(bad);
        assert_eq!(c.cmd(&cmd), err("ERR syntax error"), "{bad:?}");
    }
    assert_eq!(
        c.cmd(&["SSCAN", "I"]),
        err("ERR wrong number of arguments for 'sscan' command")
    );
}

#[test]
fn object_encoding_of_sets_follows_redis_7_0() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let enc = |c: &mut common::Raw, key: &str| c.cmd(&["OBJECT", "ENCODING", key]).text();
    let ints: Vec<String> = (1..=512).map(|i| i.to_string()).collect();
    let mut sadd = vec!["SADD", "S"];
    sadd.extend(ints.iter().map(String::as_str));
    c.cmd(&sadd);
    assert_eq!(enc(&mut c, "S"), "intset");
    c.cmd(&["SADD", "S", "513"]);
    assert_eq!(enc(&mut c, "S"), "hashtable", "past set-max-intset-entries");
    c.cmd(&["SREM", "S", "513"]);
    assert_eq!(enc(&mut c, "S"), "hashtable", "never converts back");
    // A copy or a rename keeps the encoding; a stored result starts afresh.
    let other = common::keys_on_shard("copy", 1, 2, 1).remove(0);
    c.cmd(&["COPY", "S", &other]);
    assert_eq!(enc(&mut c, &other), "hashtable");
    c.cmd(&["SINTERSTORE", "fresh", "S", "S"]);
    assert_eq!(enc(&mut c, "fresh"), "intset");
    c.cmd(&["SADD", "T", "1", "2"]);
    assert_eq!(enc(&mut c, "T"), "intset");
    for not_integer in ["x", "01", "+1", "-0", "9223372036854775808"] {
        c.cmd(&["DEL", "T"]);
        c.cmd(&["SADD", "T", "1", not_integer]);
        assert_eq!(enc(&mut c, "T"), "hashtable", "{not_integer}");
    }
    c.cmd(&["SREM", "T", "x"]);
    c.cmd(&["SADD", "M", "-9223372036854775808", "9223372036854775807"]);
    assert_eq!(enc(&mut c, "M"), "intset");
    // SMOVE creates an intset for an integer, a hashtable otherwise.
    c.cmd(&["SADD", "src", "7", "y"]);
    c.cmd(&["SMOVE", "src", "from7", "7"]);
    assert_eq!(enc(&mut c, "from7"), "intset");
    c.cmd(&["SMOVE", "src", "fromy", "y"]);
    assert_eq!(enc(&mut c, "fromy"), "hashtable");
    // Lists are quicklists in Redis 7.0, whatever their size.
    c.cmd(&["RPUSH", "L", "a"]);
    assert_eq!(enc(&mut c, "L"), "quicklist");
}

#[test]
fn set_commands_fire_redis_events() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
    let mut sub = server.raw();
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    c.cmd(&["SADD", "a", "1", "2"]);
    c.cmd(&["SADD", "b", "9"]);
    c.cmd(&["SPOP", "a", "0"]);
    c.cmd(&["SMOVE", "b", "a", "9"]);
    c.cmd(&["SPOP", "a", "5"]);
    c.cmd(&["SADD", "c", "1"]);
    c.cmd(&["SUNIONSTORE", "d", "c"]);
    c.cmd(&["SINTERSTORE", "d", "c", "nosuch"]);
    c.cmd(&["SINTERSTORE", "d", "c", "nosuch"]);
    c.cmd(&["SDIFFSTORE", "d", "c"]);
    c.cmd(&["SPOP", "d"]);
    let expected = [
        "sadd a",
        "sadd b",
        "srem b",
        "del b",
        "sadd a",
        "spop a",
        "del a",
        "sadd c",
        "sunionstore d",
        "del d",
        "sdiffstore d",
        "spop d",
        "del d",
    ];
    let mut events = Vec::new();
    for _ in 0..expected.len() {
        let Some(Reply::Array(parts)) = sub.read() else {
            panic!("no event")
        };
        let event = parts[2].text();
        events.push(format!(
            "{} {}",
            event.trim_start_matches("__keyevent@0__:"),
            parts[3].text()
        ));
    }
    assert_eq!(events, expected);
}
