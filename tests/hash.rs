//! Hashes, first part. Replies checked against redis-server 7.0.

mod common;

use common::{Reply, Server};

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn err(s: &str) -> Reply {
    Reply::Error(s.into())
}

#[test]
fn fields_counters_and_listings() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    assert_eq!(c.cmd(&["HSET", "H", "a", "1", "b", "2"]), Reply::Int(2));
    assert_eq!(c.cmd(&["HSET", "H", "a", "3"]), Reply::Int(0));
    assert_eq!(
        c.cmd(&["HSET", "H", "a"]),
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(c.cmd(&["HGET", "H", "a"]), b("3"));
    assert_eq!(c.cmd(&["HGET", "H", "zz"]), Reply::Nil);
    assert_eq!(c.cmd(&["HSETNX", "H", "a", "9"]), Reply::Int(0));
    assert_eq!(c.cmd(&["HSETNX", "H", "c", "9"]), Reply::Int(1));
    assert_eq!(
        c.cmd(&["HMGET", "H", "a", "zz", "c"]),
        Reply::Array(vec![b("3"), Reply::Nil, b("9")])
    );
    assert_eq!(
        c.cmd(&["HMGET", "missing", "a"]),
        Reply::Array(vec![Reply::Nil])
    );
    assert_eq!(c.cmd(&["HLEN", "H"]), Reply::Int(3));
    assert_eq!(c.cmd(&["HEXISTS", "H", "a"]), Reply::Int(1));
    assert_eq!(c.cmd(&["HDEL", "H", "a", "zz"]), Reply::Int(1));
    assert_eq!(c.cmd(&["HINCRBY", "H", "n", "5"]), Reply::Int(5));
    assert_eq!(
        c.cmd(&["HINCRBY", "H", "c", "abc"]),
        err("ERR value is not an integer or out of range")
    );
    c.cmd(&["HSET", "H", "f", "x"]);
    assert_eq!(
        c.cmd(&["HINCRBY", "H", "f", "1"]),
        err("ERR hash value is not an integer")
    );
    assert_eq!(
        c.cmd(&["HINCRBYFLOAT", "H", "f", "1"]),
        err("ERR hash value is not a float")
    );
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "H", "fl", "1.5"]), b("1.5"));
    // Small hashes keep insertion order, deletes included.
    let all = ["b", "2", "c", "9", "n", "5", "f", "x", "fl", "1.5"]
        .map(b)
        .to_vec();
    assert_eq!(c.cmd(&["HGETALL", "H"]), Reply::Array(all));
    assert_eq!(
        c.cmd(&["HKEYS", "H"]),
        Reply::Array(["b", "c", "n", "f", "fl"].map(b).to_vec())
    );
    assert_eq!(
        c.cmd(&["HVALS", "H"]),
        Reply::Array(["2", "9", "5", "x", "1.5"].map(b).to_vec())
    );
    assert_eq!(c.cmd(&["HSTRLEN", "H", "fl"]), Reply::Int(3));
    assert_eq!(c.cmd(&["HMSET", "H", "x", "1"]), Reply::Simple("OK".into()));
    assert_eq!(
        c.cmd(&["HMSET", "H", "x"]),
        err("ERR wrong number of arguments for 'hmset' command")
    );
    c.cmd(&["HSET", "H", "big", "9223372036854775807"]);
    assert_eq!(
        c.cmd(&["HINCRBY", "H", "big", "1"]),
        err("ERR increment or decrement would overflow")
    );
    assert_eq!(
        c.cmd(&["HINCRBYFLOAT", "Q", "f", "inf"]),
        err("ERR increment would produce NaN or Infinity")
    );
    assert_eq!(
        c.cmd(&["EXISTS", "Q"]),
        Reply::Int(0),
        "a failed call leaves nothing behind"
    );
    // RESP3: HGETALL is a map.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.cmd(&["HGETALL", "H2"]), Reply::Map(vec![]));
    c.cmd(&["HSET", "H2", "k", "v"]);
    assert_eq!(
        c.cmd(&["HGETALL", "H2"]),
        Reply::Map(vec![(b("k"), b("v"))])
    );
}

#[test]
fn session_hash_keeps_its_ttl_and_goes_with_its_last_field() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["HSET", "session:1", "user", "42", "cart", "3"]);
    assert_eq!(c.cmd(&["EXPIRE", "session:1", "1800"]), Reply::Int(1));
    c.cmd(&["HINCRBY", "session:1", "cart", "1"]);
    c.cmd(&["HSET", "session:1", "page", "/checkout"]);
    assert!(matches!(c.cmd(&["TTL", "session:1"]), Reply::Int(t) if t > 1790));
    assert_eq!(c.cmd(&["TYPE", "session:1"]), Reply::Simple("hash".into()));
    // Small, short fields: Redis 7.0 keeps them in a listpack.
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "session:1"]), b("listpack"));
    assert_eq!(
        c.cmd(&["HDEL", "session:1", "user", "cart", "page"]),
        Reply::Int(3)
    );
    assert_eq!(c.cmd(&["EXISTS", "session:1"]), Reply::Int(0));
    c.cmd(&["SET", "s", "v"]);
    let wrong = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(c.cmd(&["HSET", "s", "a", "1"]), wrong);
    c.cmd(&["HSET", "h", "a", "1"]);
    assert_eq!(c.cmd(&["GET", "h"]), wrong);
    assert_eq!(c.cmd(&["LPUSH", "h", "x"]), wrong);
}

// ---- Hashes, second part: HRANDFIELD, HSCAN, encodings ----

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// Field/value pairs of a flat RESP2 reply.
fn pairs(reply: Reply) -> Vec<(String, String)> {
    reply
        .items()
        .chunks(2)
        .map(|p| (p[0].text(), p[1].text()))
        .collect()
}

/// Walks HSCAN to the end with `opts`, returning every pair it gave.
fn hscan_all(c: &mut common::Raw, key: &str, opts: &[&str]) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let mut cmd = vec!["HSCAN", key, &cursor];
        cmd.extend(opts);
        let reply = c.cmd(&cmd).items();
        let next = reply[0].text();
        seen.extend(pairs(reply[1].clone()));
        if next == "0" {
            return seen;
        }
        cursor = next;
    }
}

#[test]
fn hrandfield_counts_and_withvalues() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["HSET", "H", "b", "1", "a", "2", "c", "3"]);
    let value_of = |f: &str| match f {
        "b" => "1",
        "a" => "2",
        "c" => "3",
        other => panic!("unknown field {other}"),
    };
    let one = c.cmd(&["HRANDFIELD", "H"]).text();
    value_of(&one);
    let two = c.cmd(&["HRANDFIELD", "H", "2"]).items();
    assert_eq!(two.len(), 2);
    assert_ne!(two[0], two[1], "a positive count picks distinct fields");
    // Every value comes with its own field.
    let repeated = pairs(c.cmd(&["HRANDFIELD", "H", "-20", "WITHVALUES"]));
    assert_eq!(repeated.len(), 20);
    for (field, value) in &repeated {
        assert_eq!(value, value_of(field));
    }
    // Asking for all of it gives the hash in its order, as a listpack lists.
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "10", "WITHVALUES"]),
        common::bulks(&["b", "1", "a", "2", "c", "3"])
    );
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "0", "WITHVALUES"]),
        Reply::Array(vec![])
    );
    assert_eq!(c.cmd(&["HRANDFIELD", "nosuch"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["HRANDFIELD", "nosuch", "3", "WITHVALUES"]),
        Reply::Array(vec![])
    );
    // Errors in Redis's order: the count, other words, then pair overflow.
    let not_int = err("ERR value is not an integer or out of range");
    assert_eq!(c.cmd(&["HRANDFIELD", "H", "x"]), not_int);
    assert_eq!(c.cmd(&["HRANDFIELD", "H", "x", "foo"]), not_int);
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "1", "foo"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "1", "WITHVALUES", "x"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "-9223372036854775808"]),
        err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    );
    for too_big in ["4611686018427387904", "-4611686018427387904"] {
        assert_eq!(
            c.cmd(&["HRANDFIELD", "H", too_big, "WITHVALUES"]),
            err("ERR value is out of range")
        );
    }
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(c.cmd(&["HRANDFIELD", "str", "0"]), err(WRONGTYPE));
    // RESP3: WITHVALUES answers [field, value] pairs.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "3", "WITHVALUES"]),
        Reply::Array(vec![
            Reply::Array(vec![b("b"), b("1")]),
            Reply::Array(vec![b("a"), b("2")]),
            Reply::Array(vec![b("c"), b("3")]),
        ])
    );
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "3"]),
        common::bulks(&["b", "a", "c"])
    );
}

#[test]
fn hscan_walks_every_field_once_with_its_value() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    // Past hash-max-listpack-entries, so the walk takes several calls.
    let fields: Vec<String> = (0..1000).map(|i| format!("f{i}")).collect();
    let mut hset = vec!["HSET".to_string(), "H".to_string()];
    for f in &fields {
        hset.push(f.clone());
        hset.push(format!("v-{f}"));
    }
    let hset: Vec<&str> = hset.iter().map(String::as_str).collect();
    c.cmd(&hset);
    let first = c.cmd(&["HSCAN", "H", "0", "COUNT", "25"]).items();
    assert_ne!(first[0].text(), "0");
    assert_eq!(first[1].items().len(), 50);
    let mut seen = hscan_all(&mut c, "H", &["COUNT", "25"]);
    seen.sort();
    let mut expected: Vec<(String, String)> = fields
        .iter()
        .map(|f| (f.clone(), format!("v-{f}")))
        .collect();
    expected.sort();
    assert_eq!(seen, expected, "every field exactly once, with its value");
    let mut matched: Vec<String> = hscan_all(&mut c, "H", &["MATCH", "f99*"])
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    matched.sort();
    assert_eq!(
        matched,
        ["f99", "f990", "f991", "f992", "f993", "f994", "f995", "f996", "f997", "f998", "f999"]
    );
}

#[test]
fn hscan_of_a_small_hash_and_its_errors() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["HSET", "H", "b", "1", "a", "2", "c", "3"]);
    c.cmd(&["HDEL", "H", "a"]);
    c.cmd(&["HSET", "H", "a", "9"]);
    // A listpack hash comes whole, in its order, whatever COUNT says.
    assert_eq!(
        c.cmd(&["HSCAN", "H", "0", "COUNT", "1"]),
        Reply::Array(vec![b("0"), common::bulks(&["b", "1", "c", "3", "a", "9"])])
    );
    assert_eq!(
        c.cmd(&["HSCAN", "H", "0", "MATCH", "[ab]"]),
        Reply::Array(vec![b("0"), common::bulks(&["b", "1", "a", "9"])])
    );
    assert_eq!(
        c.cmd(&["HSCAN", "nosuch", "0"]),
        Reply::Array(vec![b("0"), Reply::Array(vec![])])
    );
    assert_eq!(c.cmd(&["HSCAN", "H", "x"]), err("ERR invalid cursor"));
    // NOVALUES is Redis 7.4; 7.0 answers a syntax error, as TYPE.
    assert_eq!(
        c.cmd(&["HSCAN", "H", "0", "NOVALUES"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["HSCAN", "H", "0", "TYPE", "hash"]),
        err("ERR syntax error")
    );
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(c.cmd(&["HSCAN", "str", "0"]), err(WRONGTYPE));
}

#[test]
fn object_encoding_of_hashes_follows_redis_7_0() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let enc = |c: &mut common::Raw, key: &str| c.cmd(&["OBJECT", "ENCODING", key]).text();
    let mut hset = vec!["HSET".to_string(), "H".to_string()];
    for i in 1..=512 {
        hset.push(format!("f{i}"));
        hset.push("v".to_string());
    }
    let hset: Vec<&str> = hset.iter().map(String::as_str).collect();
    c.cmd(&hset);
    assert_eq!(enc(&mut c, "H"), "listpack", "512 fields still fit");
    c.cmd(&["HSET", "H", "f513", "v"]);
    assert_eq!(enc(&mut c, "H"), "hashtable");
    c.cmd(&["HDEL", "H", "f513"]);
    assert_eq!(enc(&mut c, "H"), "hashtable", "never converts back");
    let renamed = common::keys_on_shard("renamed", 1, 2, 1).remove(0);
    c.cmd(&["RENAME", "H", &renamed]);
    assert_eq!(enc(&mut c, &renamed), "hashtable");
    let (v64, v65) = ("x".repeat(64), "x".repeat(65));
    c.cmd(&["HSET", "V", "f", &v64]);
    assert_eq!(enc(&mut c, "V"), "listpack", "64-byte values still fit");
    c.cmd(&["HSET", "V", "f", &v65]);
    assert_eq!(enc(&mut c, "V"), "hashtable");
    c.cmd(&["HSET", "V", "f", "short"]);
    assert_eq!(enc(&mut c, "V"), "hashtable");
    c.cmd(&["HSET", "F", &v65, "v"]);
    assert_eq!(enc(&mut c, "F"), "hashtable", "long field");
    c.cmd(&["HINCRBYFLOAT", "N", "f", "1e300"]);
    assert_eq!(
        enc(&mut c, "N"),
        "hashtable",
        "a long value written by HINCRBYFLOAT"
    );
}
