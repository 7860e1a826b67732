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
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "session:1"]), b("hashtable"));
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
