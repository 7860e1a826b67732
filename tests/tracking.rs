//! Client-side caching (CLIENT TRACKING) against a real ember with several
//! shards: RESP3 `invalidate` pushes, RESP2 redirection to a subscriber,
//! expiry, BCAST prefixes, NOLOOP, OPTIN, FLUSHALL, the key limit, and the
//! command replies compared with redis-server's.

mod common;

use std::time::Duration;

use common::reference::Redis;
use common::{bulks, int, keys_on_shard, ok, wait_until, Raw, Reply, Server};

fn push(items: Vec<Reply>) -> Reply {
    Reply::Push(items)
}

/// `invalidate [keys]` as a RESP3 push.
fn invalidate(keys: &[&str]) -> Reply {
    push(vec![Reply::bulk("invalidate"), bulks(keys)])
}

fn resp3(port: u16) -> Raw {
    let mut raw = Raw::connect(port);
    raw.cmd(&["HELLO", "3"]);
    raw
}

#[test]
fn a_read_key_changed_on_any_shard_is_pushed_once() {
    let server = Server::start(2, &[]);
    let mut reader = resp3(server.port);
    let mut writer = Raw::connect(server.port);
    assert_eq!(reader.cmd(&["CLIENT", "TRACKING", "on"]), ok());
    // Keys of both shards: whichever shard the reader is on, one of them
    // lives on the other.
    let mut keys = keys_on_shard("k", 0, 2, 1);
    keys.extend(keys_on_shard("k", 1, 2, 1));
    for key in &keys {
        writer.cmd(&["SET", key, "1"]);
        assert_eq!(reader.cmd(&["GET", key]), Reply::bulk("1"));
    }
    for key in &keys {
        writer.cmd(&["SET", key, "2"]);
        assert_eq!(reader.read(), Some(invalidate(&[key])));
    }
    // Told once: the key is forgotten until it is read again.
    writer.cmd(&["SET", &keys[0], "3"]);
    assert_eq!(reader.cmd(&["PING"]), Reply::Simple("PONG".into()));
    let info = reader.cmd(&["INFO", "stats"]).text();
    assert!(info.contains("tracking_total_keys:0"), "{info}");
}

#[test]
fn resp2_redirection_goes_to_a_subscriber_as_messages() {
    let server = Server::start(2, &[]);
    let mut target = Raw::connect(server.port);
    let id = target.int(&["CLIENT", "ID"]);
    target.cmd(&["SUBSCRIBE", "__redis__:invalidate"]);
    let mut reader = Raw::connect(server.port);
    let id_text = id.to_string();
    let on = ["CLIENT", "TRACKING", "on", "REDIRECT", &id_text];
    assert_eq!(reader.cmd(&on), ok());
    assert_eq!(reader.int(&["CLIENT", "GETREDIR"]), id);
    let keys = keys_on_shard("r", 1, 2, 2);
    reader.cmd(&["MGET", &keys[0], &keys[1]]);
    let mut writer = Raw::connect(server.port);
    writer.cmd(&["MSET", &keys[0], "1", &keys[1], "1"]);
    let mut got = Vec::new();
    for _ in 0..2 {
        let Some(Reply::Array(items)) = target.read() else {
            panic!("a message")
        };
        assert_eq!(items[0], Reply::bulk("message"));
        assert_eq!(items[1], Reply::bulk("__redis__:invalidate"));
        got.extend(items[2].items());
    }
    got.sort_by_key(|r| r.text());
    let mut want: Vec<Reply> = keys.iter().map(|k| Reply::bulk(k)).collect();
    want.sort_by_key(|r| r.text());
    assert_eq!(got, want);
    // FLUSHALL: everything changed, told as a null.
    reader.cmd(&["GET", &keys[0]]);
    writer.cmd(&["FLUSHALL"]);
    let Some(Reply::Array(items)) = target.read() else {
        panic!("a message")
    };
    assert_eq!(items[2], Reply::Nil);
}

#[test]
fn a_gone_redirect_target_is_reported_to_a_resp3_client() {
    let server = Server::start(2, &[]);
    let mut target = Raw::connect(server.port);
    let id = target.int(&["CLIENT", "ID"]).to_string();
    let mut reader = resp3(server.port);
    reader.cmd(&["CLIENT", "TRACKING", "on", "REDIRECT", &id]);
    reader.cmd(&["GET", "gone"]);
    target.cmd(&["QUIT"]);
    let mut writer = Raw::connect(server.port);
    writer.cmd(&["SET", "gone", "1"]);
    let id: i64 = id.parse().unwrap();
    assert_eq!(
        reader.read(),
        Some(push(vec![Reply::bulk("tracking-redir-broken"), int(id)]))
    );
    let info = reader.cmd(&["CLIENT", "TRACKINGINFO"]);
    let Reply::Map(fields) = info else {
        panic!("a map")
    };
    assert_eq!(
        fields[0].1,
        Reply::Set(vec![Reply::bulk("on"), Reply::bulk("broken_redirect")])
    );
}

#[test]
fn expiry_invalidates_a_read_key() {
    let server = Server::start(2, &[]);
    let mut reader = resp3(server.port);
    reader.cmd(&["CLIENT", "TRACKING", "on"]);
    let mut writer = Raw::connect(server.port);
    for key in keys_on_shard("e", 1, 2, 1) {
        writer.cmd(&["SET", &key, "v", "PX", "100"]);
        assert_eq!(reader.cmd(&["GET", &key]), Reply::bulk("v"));
        // The sweep removes it: no client's doing.
        assert_eq!(reader.read(), Some(invalidate(&[&key])));
    }
}

#[test]
fn broadcast_prefixes_and_noloop() {
    let server = Server::start(2, &[]);
    let mut reader = resp3(server.port);
    let on = [
        "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:", "PREFIX", "b:", "NOLOOP",
    ];
    assert_eq!(reader.cmd(&on), ok());
    let mut writer = Raw::connect(server.port);
    // One shard (hash tags), one pass: one message per prefix.
    writer.cmd(&["MSET", "a:1{t}", "1", "a:2{t}", "1", "c:1{t}", "1"]);
    assert_eq!(reader.read(), Some(invalidate(&["a:1{t}", "a:2{t}"])));
    // The reader's own change is not told back (NOLOOP).
    reader.cmd(&["SET", "b:mine", "1"]);
    writer.cmd(&["SET", "b:theirs", "1"]);
    assert_eq!(reader.read(), Some(invalidate(&["b:theirs"])));
    assert_eq!(
        reader.info_int("stats", "tracking_total_prefixes"),
        2,
        "two prefixes registered"
    );
}

#[test]
fn optin_tracks_only_after_caching_yes() {
    let server = Server::start(2, &[]);
    let mut reader = resp3(server.port);
    reader.cmd(&["CLIENT", "TRACKING", "on", "OPTIN"]);
    let mut writer = Raw::connect(server.port);
    reader.cmd(&["GET", "o1"]);
    assert_eq!(reader.cmd(&["CLIENT", "CACHING", "yes"]), ok());
    reader.cmd(&["GET", "o2"]);
    writer.cmd(&["MSET", "o1", "1"]);
    writer.cmd(&["MSET", "o2", "1"]);
    assert_eq!(reader.read(), Some(invalidate(&["o2"])));
}

#[test]
fn the_key_limit_covers_every_shard() {
    let server = Server::start(2, &[]);
    let mut target = Raw::connect(server.port);
    let id = target.int(&["CLIENT", "ID"]).to_string();
    target.cmd(&["SUBSCRIBE", "__redis__:invalidate"]);
    let mut reader = Raw::connect(server.port);
    reader.cmd(&["CLIENT", "TRACKING", "on", "REDIRECT", &id]);
    for i in 0..20 {
        reader.cmd(&["GET", &format!("limit{i}")]);
    }
    assert_eq!(reader.info_int("stats", "tracking_total_keys"), 20);
    reader.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "5"]);
    for _ in 0..15 {
        let Some(Reply::Array(items)) = target.read() else {
            panic!("an invalidation")
        };
        assert_eq!(items[0], Reply::bulk("message"));
    }
    assert!(wait_until(Duration::from_secs(5), || reader
        .info_int("stats", "tracking_total_keys")
        == 5));
    // Exactly 15 were told.
    target.set_read_timeout(Duration::from_millis(300));
    assert_eq!(target.read(), None);
}

/// The commands' replies and errors, as redis-server gives them.
#[test]
fn tracking_replies_match_redis() {
    let Some(redis) = Redis::or_skip("tracking_replies_match_redis") else {
        return;
    };
    let server = Server::start(2, &[]);
    let script: &[&[&str]] = &[
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "GETREDIR"],
        &["CLIENT", "CACHING", "yes"],
        &["CLIENT", "TRACKING", "on", "BCAST", "OPTIN"],
        &["CLIENT", "TRACKING", "on", "PREFIX", "a"],
        &["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"],
        &["CLIENT", "TRACKING", "on", "REDIRECT", "999999"],
        &["CLIENT", "TRACKING", "on", "REDIRECT", "x"],
        &["CLIENT", "TRACKING", "maybe"],
        &["CLIENT", "TRACKING", "on", "nosuch"],
        &[
            "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a",
        ],
        &["CLIENT", "TRACKING", "on", "OPTOUT", "NOLOOP"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "GETREDIR"],
        &["CLIENT", "CACHING", "yes"],
        &["CLIENT", "CACHING", "no"],
        &["CLIENT", "CACHING", "maybe"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKING", "on", "OPTIN"],
        &["CLIENT", "TRACKING", "on", "BCAST"],
        &["CLIENT", "TRACKING", "off"],
        &[
            "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "foo", "PREFIX", "bar",
        ],
        &["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "fo"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKING"],
        &["CLIENT", "CACHING"],
        &["CLIENT", "GETREDIR", "x"],
    ];
    let run = |port: u16| -> Vec<Reply> {
        let mut raw = resp3(port);
        script.iter().map(|c| raw.cmd(c)).collect()
    };
    assert_eq!(run(server.port), run(redis.port));
}

/// A script remembers its declared keys when one of its commands read, as
/// Redis does, also on its first run (which holds every shard) and when
/// its keys span shards (each remembered on its own shard).
#[test]
fn a_script_that_reads_remembers_its_declared_keys_on_their_shards() {
    let server = Server::start(2, &[]);
    let mut reader = resp3(server.port);
    let mut writer = Raw::connect(server.port);
    assert_eq!(reader.cmd(&["CLIENT", "TRACKING", "on"]), ok());
    let a = &keys_on_shard("a", 0, 2, 1)[0];
    let b = &keys_on_shard("b", 1, 2, 1)[0];
    writer.cmd(&["SET", b, "1"]);
    // A first run: the script is new to the server.
    let read_b = "return redis.call('get', KEYS[2])";
    assert_eq!(reader.cmd(&["EVAL", read_b, "2", a, b]), Reply::bulk("1"));
    writer.cmd(&["SET", a, "2"]);
    assert_eq!(reader.read(), Some(invalidate(&[a])));
    writer.cmd(&["SET", b, "2"]);
    assert_eq!(reader.read(), Some(invalidate(&[b])));
    // A script that only writes remembers nothing.
    let write = "return redis.call('set', KEYS[1], 'x')";
    assert_eq!(reader.cmd(&["EVAL", write, "1", a]), ok());
    writer.cmd(&["SET", a, "3"]);
    assert_eq!(reader.cmd(&["PING"]), Reply::Simple("PONG".into()));
}
