//! Lists, first part: pushes, pops with counts, LLEN, LRANGE, LINDEX.
//! Replies checked against redis-server 7.0.

mod common;

use common::{Reply, Server};

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn arr(items: &[&str]) -> Reply {
    Reply::Array(items.iter().map(|s| b(s)).collect())
}

#[test]
fn pushes_pops_and_ranges() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    assert_eq!(c.cmd(&["LPUSH", "L", "a", "b", "c"]), Reply::Int(3));
    assert_eq!(c.cmd(&["RPUSH", "L", "d"]), Reply::Int(4));
    assert_eq!(
        c.cmd(&["LRANGE", "L", "0", "-1"]),
        arr(&["c", "b", "a", "d"])
    );
    assert_eq!(c.cmd(&["LPUSHX", "nosuch", "a"]), Reply::Int(0));
    assert_eq!(c.cmd(&["EXISTS", "nosuch"]), Reply::Int(0));
    assert_eq!(c.cmd(&["RPUSHX", "L", "e"]), Reply::Int(5));
    assert_eq!(c.cmd(&["LPOP", "L"]), b("c"));
    assert_eq!(c.cmd(&["LPOP", "L", "2"]), arr(&["b", "a"]));
    assert_eq!(c.cmd(&["LPOP", "L", "0"]), arr(&[]));
    assert_eq!(
        c.cmd(&["LPOP", "nosuch", "2"]),
        Reply::Nil,
        "*-1 for a missing key with a count"
    );
    assert_eq!(c.cmd(&["LPOP", "nosuch"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["LPOP", "L", "-1"]),
        Reply::Error("ERR value is out of range, must be positive".into())
    );
    assert_eq!(c.cmd(&["LLEN", "L"]), Reply::Int(2));
    assert_eq!(c.cmd(&["LINDEX", "L", "0"]), b("d"));
    assert_eq!(c.cmd(&["LINDEX", "L", "-1"]), b("e"));
    assert_eq!(c.cmd(&["LINDEX", "L", "99"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["LINDEX", "L", "abc"]),
        Reply::Error("ERR value is not an integer or out of range".into())
    );
    assert_eq!(
        c.cmd(&["LRANGE", "L", "abc", "1"]),
        Reply::Error("ERR value is not an integer or out of range".into())
    );
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "L"]), b("quicklist"));
    assert_eq!(c.cmd(&["TYPE", "L"]), Reply::Simple("list".into()));
    // Popping the last elements removes the key.
    assert_eq!(c.cmd(&["RPOP", "L", "10"]), arr(&["e", "d"]));
    assert_eq!(c.cmd(&["EXISTS", "L"]), Reply::Int(0));
    assert_eq!(c.cmd(&["LRANGE", "L", "0", "-1"]), arr(&[]));
}

#[test]
fn lrange_indexes_follow_redis() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "a", "b", "c", "d", "e"]);
    assert_eq!(c.cmd(&["LRANGE", "L", "-100", "-50"]), arr(&[]));
    assert_eq!(c.cmd(&["LRANGE", "L", "-100", "2"]), arr(&["a", "b", "c"]));
    assert_eq!(c.cmd(&["LRANGE", "L", "-2", "100"]), arr(&["d", "e"]));
    assert_eq!(c.cmd(&["LRANGE", "L", "3", "1"]), arr(&[]));
}

#[test]
fn page_view_list_keeps_its_ttl_and_types_stay_apart() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let wrong =
        Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value".into());
    // The page-view pattern: RPUSH then EXPIRE; later pushes keep the TTL.
    assert_eq!(
        c.cmd(&["RPUSH", "pageviews.user:1", "http://a"]),
        Reply::Int(1)
    );
    assert_eq!(c.cmd(&["EXPIRE", "pageviews.user:1", "60"]), Reply::Int(1));
    assert_eq!(
        c.cmd(&["RPUSH", "pageviews.user:1", "http://b"]),
        Reply::Int(2)
    );
    assert!(matches!(c.cmd(&["TTL", "pageviews.user:1"]), Reply::Int(t) if t > 55));
    assert_eq!(c.cmd(&["LPOP", "pageviews.user:1"]), b("http://a"));
    assert!(matches!(c.cmd(&["TTL", "pageviews.user:1"]), Reply::Int(t) if t > 55));
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["LPUSH", "s", "a"]), wrong);
    assert_eq!(c.cmd(&["LRANGE", "s", "0", "1"]), wrong);
    assert_eq!(c.cmd(&["GET", "pageviews.user:1"]), wrong);
    assert_eq!(
        c.cmd(&["MGET", "pageviews.user:1", "s"]),
        Reply::Array(vec![Reply::Nil, b("v")])
    );
}

#[test]
fn pushes_and_pops_fire_keyspace_events() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEl"]);
    let mut sub = server.raw();
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    c.cmd(&["LPUSH", "q", "a"]);
    c.cmd(&["RPUSH", "q", "b"]);
    c.cmd(&["LPOP", "q"]);
    c.cmd(&["RPOP", "q"]);
    let mut events = Vec::new();
    for _ in 0..4 {
        if let Some(Reply::Array(parts)) = sub.read() {
            events.push(parts[2].clone());
        }
    }
    let expect = ["lpush", "rpush", "lpop", "rpop"]
        .map(|e| b(&format!("__keyevent@0__:{e}")))
        .to_vec();
    assert_eq!(events, expect);
}
