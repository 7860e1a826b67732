//! MIGRATE from a real ember to another, with the same steps run from one
//! redis-server 7.0.15 to another for the replies: keys move with their
//! TTLs (from several shards at once with KEYS), COPY leaves them, a key
//! the target already has fails without REPLACE and stays, AUTH reaches a
//! target with a password, a missing key, a bad option or a closed port
//! get Redis's answers, and the connections kept for the next MIGRATE
//! are counted as Redis counts them.

mod common;

use common::reference::Redis;
use common::{free_port, Raw, Reply, Server};

/// The script, from `src` to the server on `dst_port` (`dst` talks to it),
/// and to the one on `locked_port`, whose password is `pw`.
fn script(src: &mut Raw, dst: &mut Raw, dst_port: u16, locked_port: u16) -> Vec<Reply> {
    let port = dst_port.to_string();
    let migrate = |src: &mut Raw, rest: &[&str]| {
        let mut argv = vec!["MIGRATE", "127.0.0.1", &port];
        argv.extend_from_slice(rest);
        src.cmd(&argv)
    };
    let mut replies = Vec::new();
    // Its keys, as ACL checks them and COMMAND reports them.
    for args in [
        &[
            "COMMAND",
            "GETKEYSANDFLAGS",
            "MIGRATE",
            "h",
            "1",
            "k",
            "0",
            "5",
        ][..],
        &[
            "COMMAND",
            "GETKEYSANDFLAGS",
            "MIGRATE",
            "h",
            "1",
            "",
            "0",
            "5",
            "AUTH",
            "keys",
            "KEYS",
            "x",
            "y",
        ],
        &[
            "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "5", "KEYS", "x",
        ],
    ] {
        replies.push(src.cmd(args));
    }
    for key in ["a", "b", "c", "{t}1", "{t}2"] {
        src.cmd(&["SET", key, &format!("v-{key}")]);
    }
    src.cmd(&["PEXPIRE", "b", "100000"]);
    src.cmd(&["RPUSH", "list", "x", "y", "z"]);
    replies.push(migrate(src, &["a", "0", "5000"]));
    replies.push(src.cmd(&["EXISTS", "a"]));
    replies.push(dst.cmd(&["GET", "a"]));
    // Several keys, over every shard, one missing.
    replies.push(migrate(
        src,
        &["", "0", "5000", "KEYS", "b", "c", "{t}1", "nosuch", "list"],
    ));
    replies.push(src.cmd(&["EXISTS", "b", "c", "{t}1", "list"]));
    replies.push(dst.cmd(&["MGET", "b", "c", "{t}1"]));
    replies.push(dst.cmd(&["LRANGE", "list", "0", "-1"]));
    let ttl = dst.cmd(&["PTTL", "b"]).int();
    replies.push(Reply::Int((ttl > 90_000 && ttl <= 100_000) as i64));
    replies.push(dst.cmd(&["TTL", "c"]));
    // COPY leaves the key; the target has it now, so without REPLACE the
    // next one fails, and the key stays here.
    replies.push(migrate(src, &["{t}2", "0", "5000", "COPY"]));
    replies.push(src.cmd(&["GET", "{t}2"]));
    replies.push(migrate(src, &["{t}2", "0", "5000"]));
    replies.push(src.cmd(&["EXISTS", "{t}2"]));
    src.cmd(&["SET", "{t}2", "newer"]);
    replies.push(migrate(src, &["{t}2", "0", "5000", "REPLACE"]));
    replies.push(dst.cmd(&["GET", "{t}2"]));
    replies.push(src.cmd(&["EXISTS", "{t}2"]));
    // Another database on the target.
    src.cmd(&["SET", "d", "in-db-3"]);
    replies.push(migrate(src, &["d", "3", "5000"]));
    dst.cmd(&["SELECT", "3"]);
    replies.push(dst.cmd(&["GET", "d"]));
    dst.cmd(&["SELECT", "0"]);
    // Nothing to move, and the errors.
    replies.push(migrate(src, &["nosuch", "0", "5000"]));
    replies.push(migrate(src, &["", "0", "5000", "KEYS", "nosuch"]));
    replies.push(migrate(src, &["a", "0", "5000", "KEYS", "b"]));
    replies.push(migrate(src, &["a", "0", "5000", "BOGUS"]));
    replies.push(migrate(src, &["a", "x", "5000"]));
    replies.push(migrate(src, &["a", "0", "x"]));
    replies.push(src.cmd(&["MIGRATE", "127.0.0.1", &port, "a", "0"]));
    src.cmd(&["SET", "e", "1"]);
    let closed = free_port().to_string();
    replies.push(src.cmd(&["MIGRATE", "127.0.0.1", &closed, "e", "0", "1000"]));
    replies.push(src.cmd(&["EXISTS", "e"]));
    // A target with a password (a server of its own: Redis keeps its
    // connection to a target for the next MIGRATE, logged in or not).
    let locked = locked_port.to_string();
    let to_locked = |src: &mut Raw, rest: &[&str]| {
        let mut argv = vec!["MIGRATE", "127.0.0.1", &locked, "e", "0", "5000"];
        argv.extend_from_slice(rest);
        src.cmd(&argv)
    };
    replies.push(to_locked(src, &[]));
    replies.push(to_locked(src, &["AUTH", "nope"]));
    replies.push(to_locked(src, &["AUTH2", "default", "pw", "COPY"]));
    replies.push(src.cmd(&["EXISTS", "e"]));
    replies.push(to_locked(src, &["AUTH", "pw", "REPLACE"]));
    replies.push(src.cmd(&["EXISTS", "e"]));
    let mut locked = Raw::connect(locked_port);
    locked.cmd(&["AUTH", "pw"]);
    replies.push(locked.cmd(&["GET", "e"]));
    // The connections kept for the next MIGRATE (one a target).
    let kept = src.info_field("stats", "migrate_cached_sockets");
    replies.push(Reply::Bulk(kept.unwrap_or_default().into_bytes()));
    replies
}

#[test]
fn migrate_moves_keys_as_redis_does() {
    let (src, dst) = (Server::start(3, &[]), Server::start(2, &[]));
    let locked = Server::start(1, &["--requirepass", "pw"]);
    let ember = script(&mut src.raw(), &mut dst.raw(), dst.port, locked.port);
    assert_eq!(ember[3], Reply::ok());
    assert_eq!(ember[4], Reply::Int(0));
    assert_eq!(ember[5], Reply::bulk("v-a"));
    let Some(redis_src) = Redis::or_skip("migrate_moves_keys_as_redis_does") else {
        return;
    };
    let (Some(redis_dst), Some(redis_locked)) = (
        Redis::start::<&str>(&[]),
        Redis::start(&["--requirepass", "pw"]),
    ) else {
        return;
    };
    let redis = script(
        &mut Raw::connect(redis_src.port),
        &mut Raw::connect(redis_dst.port),
        redis_dst.port,
        redis_locked.port,
    );
    for (i, (e, r)) in ember.iter().zip(&redis).enumerate() {
        assert_eq!(e, r, "step {i}");
    }
    assert_eq!(ember.len(), redis.len());
}
