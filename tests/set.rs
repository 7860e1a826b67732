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
