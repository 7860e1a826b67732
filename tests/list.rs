//! Lists: pushes, pops with counts, LLEN, LRANGE, LINDEX, the in-place
//! edits (LSET LINSERT LREM LTRIM) and LPOS. Replies checked against
//! redis-server 7.0.15.

mod common;

use common::{Raw, Reply, Server};

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
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Elg"]);
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

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn error(text: &str) -> Reply {
    Reply::Error(text.into())
}

fn ints(items: &[i64]) -> Reply {
    Reply::Array(items.iter().map(|&n| Reply::Int(n)).collect())
}

fn range(c: &mut Raw, key: &str) -> Reply {
    c.cmd(&["LRANGE", key, "0", "-1"])
}

/// A TTL of a few minutes is still there (not -1: cleared, not -2: gone).
fn assert_ttl_kept(c: &mut Raw, key: &str) {
    let ttl = c.cmd(&["TTL", key]);
    assert!(
        matches!(ttl, Reply::Int(t) if t > 250),
        "{key}: TTL {ttl:?}"
    );
}

#[test]
fn lset_replaces_by_index() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "a", "b", "c"]);
    c.cmd(&["EXPIRE", "L", "300"]);
    assert_eq!(c.cmd(&["LSET", "L", "0", "x"]), Reply::ok());
    assert_eq!(c.cmd(&["LSET", "L", "-1", "z"]), Reply::ok());
    assert_eq!(c.cmd(&["LSET", "L", "-3", "y"]), Reply::ok());
    assert_eq!(range(&mut c, "L"), arr(&["y", "b", "z"]));
    assert_ttl_kept(&mut c, "L");
    assert_eq!(
        c.cmd(&["LSET", "L", "3", "x"]),
        error("ERR index out of range")
    );
    assert_eq!(
        c.cmd(&["LSET", "L", "-4", "x"]),
        error("ERR index out of range")
    );
    assert_eq!(
        c.cmd(&["LSET", "L", "abc", "x"]),
        error("ERR value is not an integer or out of range")
    );
    // The key is looked up before the index is read.
    assert_eq!(
        c.cmd(&["LSET", "nosuch", "abc", "x"]),
        error("ERR no such key")
    );
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["LSET", "s", "abc", "x"]), error(WRONGTYPE));
    assert_eq!(
        c.cmd(&["LSET", "L", "0"]),
        error("ERR wrong number of arguments for 'lset' command")
    );
}

#[test]
fn linsert_before_and_after_a_pivot() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "a", "b", "a"]);
    c.cmd(&["EXPIRE", "L", "300"]);
    assert_eq!(c.cmd(&["LINSERT", "L", "BEFORE", "a", "x"]), Reply::Int(4));
    assert_eq!(c.cmd(&["LINSERT", "L", "after", "b", "y"]), Reply::Int(5));
    assert_eq!(range(&mut c, "L"), arr(&["x", "a", "b", "y", "a"]));
    assert_ttl_kept(&mut c, "L");
    assert_eq!(
        c.cmd(&["LINSERT", "L", "before", "nope", "x"]),
        Reply::Int(-1)
    );
    assert_eq!(
        c.cmd(&["LINSERT", "nosuch", "before", "a", "x"]),
        Reply::Int(0)
    );
    assert_eq!(c.cmd(&["EXISTS", "nosuch"]), Reply::Int(0));
    assert_eq!(
        c.cmd(&["LINSERT", "L", "middle", "a", "x"]),
        error("ERR syntax error")
    );
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(
        c.cmd(&["LINSERT", "s", "middle", "a", "x"]),
        error("ERR syntax error"),
        "the position word is read before the key"
    );
    assert_eq!(
        c.cmd(&["LINSERT", "s", "after", "a", "x"]),
        error(WRONGTYPE)
    );
}

#[test]
fn lrem_counts_from_either_end() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "a", "b", "c", "a", "b", "c", "a"]);
    c.cmd(&["EXPIRE", "L", "300"]);
    assert_eq!(c.cmd(&["LREM", "L", "2", "a"]), Reply::Int(2));
    assert_eq!(range(&mut c, "L"), arr(&["b", "c", "b", "c", "a"]));
    assert_eq!(c.cmd(&["LREM", "L", "-1", "c"]), Reply::Int(1));
    assert_eq!(range(&mut c, "L"), arr(&["b", "c", "b", "a"]));
    assert_eq!(c.cmd(&["LREM", "L", "0", "b"]), Reply::Int(2));
    assert_eq!(range(&mut c, "L"), arr(&["c", "a"]));
    assert_eq!(c.cmd(&["LREM", "L", "0", "zz"]), Reply::Int(0));
    assert_ttl_kept(&mut c, "L");
    assert_eq!(c.cmd(&["LREM", "L", "-5", "c"]), Reply::Int(1));
    assert_eq!(c.cmd(&["LREM", "L", "5", "a"]), Reply::Int(1));
    assert_eq!(
        c.cmd(&["EXISTS", "L"]),
        Reply::Int(0),
        "emptied list removed"
    );
    assert_eq!(c.cmd(&["TTL", "L"]), Reply::Int(-2));
    assert_eq!(c.cmd(&["LREM", "nosuch", "0", "a"]), Reply::Int(0));
    assert_eq!(
        c.cmd(&["LREM", "nosuch", "x", "a"]),
        error("ERR value is not an integer or out of range")
    );
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["LREM", "s", "0", "a"]), error(WRONGTYPE));
}

#[test]
fn ltrim_keeps_a_range_and_removes_an_emptied_list() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "1", "2", "3", "4", "5"]);
    c.cmd(&["EXPIRE", "L", "300"]);
    assert_eq!(c.cmd(&["LTRIM", "L", "1", "-2"]), Reply::ok());
    assert_eq!(range(&mut c, "L"), arr(&["2", "3", "4"]));
    assert_eq!(c.cmd(&["LTRIM", "L", "-100", "100"]), Reply::ok());
    assert_eq!(range(&mut c, "L"), arr(&["2", "3", "4"]));
    assert_ttl_kept(&mut c, "L");
    assert_eq!(c.cmd(&["LTRIM", "L", "2", "1"]), Reply::ok());
    assert_eq!(c.cmd(&["EXISTS", "L"]), Reply::Int(0));
    c.cmd(&["RPUSH", "L", "1", "2", "3"]);
    assert_eq!(c.cmd(&["LTRIM", "L", "5", "10"]), Reply::ok());
    assert_eq!(c.cmd(&["EXISTS", "L"]), Reply::Int(0));
    c.cmd(&["RPUSH", "L", "1", "2", "3"]);
    assert_eq!(c.cmd(&["LTRIM", "L", "-100", "-50"]), Reply::ok());
    assert_eq!(c.cmd(&["EXISTS", "L"]), Reply::Int(0));
    assert_eq!(c.cmd(&["LTRIM", "nosuch", "0", "1"]), Reply::ok());
    assert_eq!(
        c.cmd(&["LTRIM", "nosuch", "x", "1"]),
        error("ERR value is not an integer or out of range")
    );
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["LTRIM", "s", "0", "1"]), error(WRONGTYPE));
}

#[test]
fn lpos_rank_count_maxlen_and_errors() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "a", "b", "c", "a", "b", "c", "a"]);
    assert_eq!(c.cmd(&["LPOS", "L", "a"]), Reply::Int(0));
    assert_eq!(c.cmd(&["LPOS", "L", "c"]), Reply::Int(2));
    assert_eq!(c.cmd(&["LPOS", "L", "nope"]), Reply::Nil);
    assert_eq!(c.cmd(&["LPOS", "L", "nope", "COUNT", "0"]), ints(&[]));
    assert_eq!(c.cmd(&["LPOS", "L", "a", "count", "0"]), ints(&[0, 3, 6]));
    assert_eq!(c.cmd(&["LPOS", "L", "a", "COUNT", "2"]), ints(&[0, 3]));
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "RANK", "-1", "COUNT", "2"]),
        ints(&[6, 3])
    );
    assert_eq!(c.cmd(&["LPOS", "L", "a", "RANK", "2"]), Reply::Int(3));
    assert_eq!(c.cmd(&["LPOS", "L", "a", "RANK", "4"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "RANK", "-1", "MAXLEN", "1"]),
        Reply::Int(6)
    );
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "MAXLEN", "3", "COUNT", "0"]),
        ints(&[0])
    );
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "COUNT", "0", "COUNT", "2"]),
        ints(&[0, 3]),
        "a repeated option: the last one counts"
    );
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "RANK", "-9223372036854775808"]),
        Reply::Int(6),
        "Redis 7.0 reads the lowest rank as the first match from the tail"
    );
    assert_eq!(c.cmd(&["LPOS", "nosuch", "a"]), Reply::Nil);
    assert_eq!(c.cmd(&["LPOS", "nosuch", "a", "COUNT", "1"]), ints(&[]));
    let rank_zero = error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list");
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "RANK", "0", "COUNT", "-1"]),
        rank_zero
    );
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "COUNT", "-1", "RANK", "0"]),
        error("ERR COUNT can't be negative")
    );
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "COUNT", "x"]),
        error("ERR COUNT can't be negative")
    );
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "MAXLEN", "-1"]),
        error("ERR MAXLEN can't be negative")
    );
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "RANK", "x"]),
        error("ERR value is not an integer or out of range")
    );
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "RANK"]),
        error("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["LPOS", "L", "a", "FOO", "1"]),
        error("ERR syntax error")
    );
    c.cmd(&["SET", "s", "v"]);
    assert_eq!(c.cmd(&["LPOS", "s", "a"]), error(WRONGTYPE));
    assert_eq!(
        c.cmd(&["LPOS", "s", "a", "RANK", "0"]),
        rank_zero,
        "options are read before the key"
    );
}
