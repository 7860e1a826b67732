//! Lists: pushes, pops with counts, LLEN, LRANGE, LINDEX, the in-place
//! edits (LSET LINSERT LREM LTRIM), LPOS, and LMOVE / RPOPLPUSH / LMPOP on
//! one shard and across shards. Replies checked against redis-server 7.0.15.

mod common;

use common::{args, keys_on_shard, Raw, Reply, Server};

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
    // Redis gives one text for a negative count and for no number at all.
    for bad in ["-1", "abc", "9223372036854775808"] {
        for cmd in ["LPOP", "RPOP"] {
            assert_eq!(
                c.cmd(&[cmd, "L", bad]),
                Reply::Error("ERR value is out of range, must be positive".into())
            );
        }
    }
    assert_eq!(
        c.cmd(&["RPOP", "L", "1", "2"]),
        Reply::Error("ERR wrong number of arguments for 'rpop' command".into())
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

/// LMOVE / RPOPLPUSH between `src` and `dst`, wherever they live.
fn check_lmove(c: &mut Raw, src: &str, dst: &str) {
    c.cmd(&["RPUSH", src, "1", "2", "3"]);
    c.cmd(&["EXPIRE", src, "300"]);
    c.cmd(&["RPUSH", dst, "x"]);
    c.cmd(&["EXPIRE", dst, "300"]);
    assert_eq!(c.cmd(&["LMOVE", src, dst, "LEFT", "RIGHT"]), b("1"));
    assert_eq!(c.cmd(&["LMOVE", src, dst, "right", "left"]), b("3"));
    assert_eq!(c.cmd(&["RPOPLPUSH", src, dst]), b("2"));
    assert_eq!(range(c, dst), arr(&["2", "3", "x", "1"]));
    assert_ttl_kept(c, dst);
    assert_eq!(
        c.cmd(&["EXISTS", src]),
        Reply::Int(0),
        "emptied source removed"
    );
    assert_eq!(c.cmd(&["LMOVE", src, dst, "LEFT", "LEFT"]), Reply::Nil);
    assert_eq!(c.cmd(&["RPOPLPUSH", src, dst]), Reply::Nil);
    // Moving into a missing key creates it, without a TTL.
    assert_eq!(c.cmd(&["LMOVE", dst, src, "LEFT", "LEFT"]), b("2"));
    assert_eq!(range(c, src), arr(&["2"]));
    assert_eq!(c.cmd(&["TTL", src]), Reply::Int(-1));
    assert_ttl_kept(c, dst);
    // A destination of another type refuses before anything is popped; a
    // missing source answers nil whatever the destination holds.
    c.cmd(&["DEL", src]);
    c.cmd(&["SET", src, "v"]);
    assert_eq!(
        c.cmd(&["LMOVE", dst, src, "LEFT", "LEFT"]),
        error(WRONGTYPE)
    );
    assert_eq!(c.cmd(&["RPOPLPUSH", dst, src]), error(WRONGTYPE));
    assert_eq!(range(c, dst), arr(&["3", "x", "1"]));
    assert_eq!(
        c.cmd(&["LMOVE", src, dst, "LEFT", "LEFT"]),
        error(WRONGTYPE)
    );
    c.cmd(&["DEL", dst]);
    assert_eq!(c.cmd(&["LMOVE", dst, src, "LEFT", "LEFT"]), Reply::Nil);
    assert_eq!(c.cmd(&["RPOPLPUSH", dst, src]), Reply::Nil);
    assert_eq!(
        c.cmd(&["LMOVE", dst, src, "LEFT", "MIDDLE"]),
        error("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["LMOVE", dst, src, "UP", "LEFT"]),
        error("ERR syntax error")
    );
    c.cmd(&["DEL", src, dst]);
}

#[test]
fn lmove_and_rpoplpush_on_one_shard() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    check_lmove(&mut c, "{t}src", "{t}dst");
}

#[test]
fn lmove_and_rpoplpush_across_shards() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let src = keys_on_shard("mvsrc", 0, 2, 1).remove(0);
    let dst = keys_on_shard("mvdst", 1, 2, 1).remove(0);
    check_lmove(&mut c, &src, &dst);
    check_lmove(&mut c, &dst, &src);
}

#[test]
fn lmove_rotates_a_list_onto_itself() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "1", "2", "3"]);
    c.cmd(&["EXPIRE", "L", "300"]);
    assert_eq!(c.cmd(&["LMOVE", "L", "L", "LEFT", "RIGHT"]), b("1"));
    assert_eq!(range(&mut c, "L"), arr(&["2", "3", "1"]));
    assert_eq!(c.cmd(&["RPOPLPUSH", "L", "L"]), b("1"));
    assert_eq!(range(&mut c, "L"), arr(&["1", "2", "3"]));
    assert_eq!(c.cmd(&["LMOVE", "L", "L", "LEFT", "LEFT"]), b("1"));
    assert_eq!(range(&mut c, "L"), arr(&["1", "2", "3"]));
    // A one-element list survives its own rotation, TTL and all.
    c.cmd(&["RPUSH", "one", "x"]);
    c.cmd(&["EXPIRE", "one", "300"]);
    assert_eq!(c.cmd(&["LMOVE", "one", "one", "RIGHT", "LEFT"]), b("x"));
    assert_eq!(range(&mut c, "one"), arr(&["x"]));
    assert_ttl_kept(&mut c, "one");
    assert_ttl_kept(&mut c, "L");
}

#[test]
fn cross_shard_moves_are_seen_by_the_next_pipelined_command() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let a = keys_on_shard("ring", 0, 2, 1).remove(0);
    let z = keys_on_shard("ring", 1, 2, 1).remove(0);
    let items: Vec<String> = (0..50).map(|i| i.to_string()).collect();
    let mut push = vec!["RPUSH", a.as_str()];
    push.extend(items.iter().map(String::as_str));
    c.cmd(&push);
    // Every element goes over and back; each reply and the final order show
    // that no step overtook another.
    let mut cmds = Vec::new();
    for _ in 0..50 {
        cmds.push(args(&["LMOVE", &a, &z, "LEFT", "RIGHT"]));
    }
    cmds.push(args(&["LLEN", &z]));
    for _ in 0..50 {
        cmds.push(args(&["RPOPLPUSH", &z, &a]));
    }
    let replies = c.pipeline(&cmds);
    for (i, item) in items.iter().enumerate() {
        assert_eq!(replies[i], b(item));
        assert_eq!(replies[51 + i], b(&items[49 - i]));
    }
    assert_eq!(replies[50], Reply::Int(50));
    assert_eq!(c.cmd(&["EXISTS", &z]), Reply::Int(0));
    let expect: Vec<&str> = items.iter().map(String::as_str).collect();
    assert_eq!(range(&mut c, &a), arr(&expect));
}

/// LMPOP over `keys` (the first missing, the second a list, the third a string).
fn check_lmpop(c: &mut Raw, keys: [&str; 3]) {
    let [missing, list, string] = keys;
    c.cmd(&["RPUSH", list, "1", "2", "3"]);
    c.cmd(&["EXPIRE", list, "300"]);
    c.cmd(&["SET", string, "v"]);
    let pair = |key: &str, items: &[&str]| Reply::Array(vec![b(key), arr(items)]);
    assert_eq!(
        c.cmd(&["LMPOP", "2", missing, list, "RIGHT", "COUNT", "2"]),
        pair(list, &["3", "2"])
    );
    assert_ttl_kept(c, list);
    assert_eq!(
        c.cmd(&["LMPOP", "3", missing, list, string, "LEFT"]),
        pair(list, &["1"]),
        "a later key of another type is never looked at"
    );
    assert_eq!(c.cmd(&["EXISTS", list]), Reply::Int(0));
    assert_eq!(c.cmd(&["LMPOP", "2", missing, list, "LEFT"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["LMPOP", "3", missing, list, string, "LEFT"]),
        error(WRONGTYPE)
    );
    c.cmd(&["RPUSH", list, "a", "b"]);
    assert_eq!(
        c.cmd(&["LMPOP", "2", string, list, "LEFT"]),
        error(WRONGTYPE)
    );
    assert_eq!(
        c.cmd(&["LMPOP", "2", list, missing, "LEFT", "COUNT", "10"]),
        pair(list, &["a", "b"])
    );
    assert_eq!(
        c.cmd(&["LMPOP", "2", missing, list, "LEFT", "COUNT", "0"]),
        error("ERR count should be greater than 0")
    );
    assert_eq!(
        c.cmd(&["LMPOP", "3", missing, list, "LEFT"]),
        error("ERR syntax error"),
        "numkeys runs past the end"
    );
    assert_eq!(
        c.cmd(&["LMPOP", "2", missing, list, "UP"]),
        error("ERR syntax error")
    );
    c.cmd(&["DEL", string]);
}

#[test]
fn lmpop_on_one_shard() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    check_lmpop(&mut c, ["{m}a", "{m}b", "{m}c"]);
}

#[test]
fn lmpop_across_shards_pops_the_first_list_in_argument_order() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let on = |shard| keys_on_shard(&format!("mp{shard}_"), shard, 3, 1).remove(0);
    let (s0, s1, s2) = (on(0), on(1), on(2));
    check_lmpop(&mut c, [&s0, &s1, &s2]);
    check_lmpop(&mut c, [&s2, &s0, &s1]);
    // The first non-empty key wins even when a later shard's key is also a list.
    c.cmd(&["RPUSH", &s2, "late"]);
    c.cmd(&["RPUSH", &s1, "early"]);
    assert_eq!(
        c.cmd(&["LMPOP", "3", &s0, &s1, &s2, "LEFT"]),
        Reply::Array(vec![b(&s1), arr(&["early"])])
    );
    assert_eq!(
        c.cmd(&["LMPOP", "3", &s0, &s1, &s2, "LEFT"]),
        Reply::Array(vec![b(&s2), arr(&["late"])])
    );
    assert_eq!(c.cmd(&["LMPOP", "3", &s0, &s1, &s2, "LEFT"]), Reply::Nil);
}

#[test]
fn lmpop_argument_errors() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "a", "1"]);
    let numkeys = error("ERR numkeys should be greater than 0");
    assert_eq!(c.cmd(&["LMPOP", "0", "a", "left"]), numkeys);
    assert_eq!(c.cmd(&["LMPOP", "-1", "a", "left"]), numkeys);
    assert_eq!(c.cmd(&["LMPOP", "x", "a", "left"]), numkeys);
    assert_eq!(
        c.cmd(&["LMPOP", "2", "a", "left"]),
        error("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["LMPOP", "2147483648", "a", "left"]),
        error("ERR syntax error")
    );
    let count = error("ERR count should be greater than 0");
    assert_eq!(c.cmd(&["LMPOP", "1", "a", "left", "count", "-1"]), count);
    assert_eq!(c.cmd(&["LMPOP", "1", "a", "left", "count", "x"]), count);
    for extra in [
        &["count"][..],
        &["count", "1", "count", "2"],
        &["foo"],
        &["count", "1", "foo"],
    ] {
        let mut cmd = vec!["LMPOP", "1", "a", "left"];
        cmd.extend_from_slice(extra);
        assert_eq!(c.cmd(&cmd), error("ERR syntax error"), "{cmd:?}");
    }
    assert_eq!(
        c.cmd(&["LMPOP", "1", "a"]),
        error("ERR wrong number of arguments for 'lmpop' command")
    );
    assert_eq!(c.cmd(&["LLEN", "a"]), Reply::Int(1), "nothing popped");
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "LMPOP", "2", "a", "b", "left", "count", "3"]),
        arr(&["a", "b"])
    );
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "RPOPLPUSH", "a", "b"]),
        arr(&["a", "b"])
    );
    let info = c.cmd(&["COMMAND", "INFO", "LMPOP"]).items()[0].items();
    assert_eq!(info[1], Reply::Int(-4));
    assert_eq!(
        info[2],
        Reply::Array(vec![
            Reply::Simple("write".into()),
            Reply::Simple("movablekeys".into())
        ])
    );
    assert_eq!(&info[3..6], &[Reply::Int(0), Reply::Int(0), Reply::Int(0)]);
}

/// Collects `n` keyevent messages as `event key` strings.
fn events(sub: &mut Raw, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| match sub.read() {
            Some(Reply::Array(parts)) => {
                let event = parts[2].text();
                let event = event.trim_start_matches("__keyevent@0__:");
                format!("{event} {}", parts[3].text())
            }
            other => panic!("expected an event, got {other:?}"),
        })
        .collect()
}

#[test]
fn edits_and_moves_fire_redis_events() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
    let mut sub = server.raw();
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    // Commands that change nothing fire nothing.
    let script: &[&[&str]] = &[
        &["RPUSH", "a", "1", "2"],
        &["LMOVE", "a", "b", "LEFT", "RIGHT"],
        &["LMOVE", "a", "b", "LEFT", "LEFT"],
        &["RPOPLPUSH", "b", "c"],
        &["LSET", "c", "0", "x"],
        &["LINSERT", "c", "BEFORE", "x", "y"],
        &["LINSERT", "c", "BEFORE", "nope", "y"],
        &["LREM", "c", "0", "nope"],
        &["LREM", "c", "0", "y"],
        &["RPUSH", "t", "1", "2", "3"],
        &["LTRIM", "t", "0", "-1"],
        &["LTRIM", "t", "5", "6"],
        &["LTRIM", "nosuch", "0", "1"],
        &["RPUSH", "m", "1", "2"],
        &["LMPOP", "2", "nosuch", "m", "LEFT", "COUNT", "5"],
        &["RPUSH", "r", "1"],
        &["LMOVE", "r", "r", "LEFT", "RIGHT"],
        &["LREM", "c", "1", "x"],
    ];
    for cmd in script {
        c.cmd(cmd);
    }
    let expect = [
        "rpush a",
        "rpush b",
        "lpop a",
        "lpush b",
        "lpop a",
        "del a",
        "lpush c",
        "rpop b",
        "lset c",
        "linsert c",
        "lrem c",
        "rpush t",
        "ltrim t",
        "ltrim t",
        "del t",
        "rpush m",
        "lpop m",
        "del m",
        "rpush r",
        "rpush r",
        "lpop r",
        "lrem c",
        "del c",
    ];
    assert_eq!(events(&mut sub, expect.len()), expect);
}

#[test]
fn cross_shard_moves_fire_the_same_events() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Elg"]);
    let mut sub = server.raw();
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    let src = keys_on_shard("evs", 0, 2, 1).remove(0);
    let dst = keys_on_shard("evd", 1, 2, 1).remove(0);
    c.cmd(&["RPUSH", &src, "1"]);
    assert_eq!(events(&mut sub, 1), [format!("rpush {src}")]);
    c.cmd(&["LMOVE", &src, &dst, "RIGHT", "LEFT"]);
    // The two shards publish independently: compare as a set.
    let mut got = events(&mut sub, 3);
    got.sort();
    let mut expect = vec![
        format!("lpush {dst}"),
        format!("rpop {src}"),
        format!("del {src}"),
    ];
    expect.sort();
    assert_eq!(got, expect);
    c.cmd(&["LMPOP", "2", &src, &dst, "LEFT"]);
    assert_eq!(
        events(&mut sub, 2),
        [format!("lpop {dst}"), format!("del {dst}")]
    );
}
