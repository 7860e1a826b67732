//! Pub/Sub and keyspace notifications against a real ember, with several
//! shards. Replies are checked against what Redis 7.0 answers (observed on
//! redis-server 7.0.15 and hard-coded here).

mod common;

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::time::{Duration, Instant};

use common::{args, encode_cmd, int, keys_on_shard, ok, simple, wait_until, Raw, Reply, Server};

const SUB_CONTEXT: &str =
    "only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context";

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn arr(items: Vec<Reply>) -> Reply {
    Reply::Array(items)
}

/// `message channel payload` (RESP2).
fn msg(channel: &str, payload: &str) -> Reply {
    arr(vec![b("message"), b(channel), b(payload)])
}

/// `pmessage pattern channel payload` (RESP2).
fn pmsg(pattern: &str, channel: &str, payload: &str) -> Reply {
    arr(vec![b("pmessage"), b(pattern), b(channel), b(payload)])
}

/// A (p)(un)subscribe confirmation; `name` None is the nil of a bare
/// UNSUBSCRIBE with nothing subscribed.
fn confirm(kind: &str, name: Option<&str>, count: i64) -> Reply {
    arr(vec![b(kind), name.map_or(Reply::Nil, b), int(count)])
}

/// A connection with a short read timeout, so a missing message fails the
/// test instead of hanging it.
fn conn(server: &Server) -> Raw {
    let mut raw = server.raw();
    raw.set_read_timeout(Duration::from_secs(5));
    raw
}

/// Reads one reply, failing the test when none comes.
fn next(raw: &mut Raw, what: &str) -> Reply {
    raw.read()
        .unwrap_or_else(|| panic!("no reply while waiting for {what}"))
}

/// A connection subscribed to `channels` (confirmations checked).
fn subscriber(server: &Server, channels: &[&str]) -> Raw {
    let mut raw = conn(server);
    let mut argv = vec!["SUBSCRIBE"];
    argv.extend_from_slice(channels);
    raw.send_cmd(&argv.iter().map(|a| a.as_bytes()).collect::<Vec<_>>());
    for (i, c) in channels.iter().enumerate() {
        assert_eq!(
            next(&mut raw, "subscribe confirmation"),
            confirm("subscribe", Some(c), i as i64 + 1)
        );
    }
    raw
}

/// A connection subscribed to `patterns` (confirmations checked).
fn psubscriber(server: &Server, patterns: &[&str]) -> Raw {
    let mut raw = conn(server);
    let mut argv = vec!["PSUBSCRIBE"];
    argv.extend_from_slice(patterns);
    raw.send_cmd(&argv.iter().map(|a| a.as_bytes()).collect::<Vec<_>>());
    for (i, p) in patterns.iter().enumerate() {
        assert_eq!(
            next(&mut raw, "psubscribe confirmation"),
            confirm("psubscribe", Some(p), i as i64 + 1)
        );
    }
    raw
}

/// Per-shard `commands=` counters of INFO shards.
fn shard_commands(raw: &mut Raw) -> Vec<i64> {
    let text = raw.cmd(&["INFO", "shards"]).text();
    text.lines()
        .filter(|l| l.starts_with("shard"))
        .map(|l| {
            let v = l.split("commands=").nth(1).expect("commands field");
            v.trim().parse().unwrap()
        })
        .collect()
}

/// The shard a connection lives on: the one whose command counter moves by
/// the 20 PINGs it sends (each connection's commands count on its shard).
fn shard_of(observer: &mut Raw, probe: &mut Raw) -> usize {
    let before = shard_commands(observer);
    for _ in 0..20 {
        probe.cmd(&["PING"]);
    }
    let after = shard_commands(observer);
    let grown: Vec<usize> = (0..before.len())
        .filter(|&i| after[i] - before[i] >= 20)
        .collect();
    assert_eq!(grown.len(), 1, "counters {before:?} -> {after:?}");
    grown[0]
}

fn pubsub_count(raw: &mut Raw, channel: &str) -> i64 {
    raw.cmd(&["PUBSUB", "NUMSUB", channel]).items()[1].int()
}

fn sorted_bulks(reply: Reply) -> Vec<String> {
    let mut v: Vec<String> = reply.items().iter().map(Reply::text).collect();
    v.sort();
    v
}

// ---------------------------------------------------------------------------
// 1. Delivery across shards, receiver counts, ordering.

#[test]
fn publish_reaches_subscribers_on_every_shard_in_order() {
    const SHARDS: usize = 4;
    let server = Server::start(SHARDS, &[]);
    let mut observer = conn(&server);

    // Subscribe connections until every shard holds at least two (the
    // kernel spreads accepted connections over the shards' listeners).
    let mut subs: Vec<(usize, Raw)> = Vec::new();
    let mut per_shard = [0usize; SHARDS];
    for _ in 0..80 {
        if per_shard.iter().all(|&n| n >= 2) {
            break;
        }
        let mut s = conn(&server);
        let shard = shard_of(&mut observer, &mut s);
        per_shard[shard] += 1;
        assert_eq!(
            s.cmd(&["SUBSCRIBE", "news"]),
            confirm("subscribe", Some("news"), 1)
        );
        subs.push((shard, s));
    }
    assert!(
        per_shard.iter().all(|&n| n >= 1),
        "connections never reached every shard: {per_shard:?}"
    );
    let n = subs.len() as i64;
    assert_eq!(pubsub_count(&mut observer, "news"), n);

    // A publisher on every shard: each PUBLISH counts every subscriber.
    let mut publishers: Vec<Option<Raw>> = (0..SHARDS).map(|_| None).collect();
    for _ in 0..80 {
        if publishers.iter().all(Option::is_some) {
            break;
        }
        let mut p = conn(&server);
        let shard = shard_of(&mut observer, &mut p);
        publishers[shard].get_or_insert(p);
    }
    for (shard, p) in publishers.iter_mut().enumerate() {
        let Some(p) = p else { continue };
        assert_eq!(p.cmd(&["PUBLISH", "news", &format!("from{shard}")]), int(n));
        for (sub_shard, s) in subs.iter_mut() {
            assert_eq!(
                next(s, "a message"),
                msg("news", &format!("from{shard}")),
                "publisher on shard {shard}, subscriber on shard {sub_shard}"
            );
        }
    }

    // 1,000 numbered messages from one publisher, pipelined: every
    // subscriber sees them all, in order.
    let p = publishers.iter_mut().flatten().next().unwrap();
    let cmds: Vec<Vec<Vec<u8>>> = (0..1000)
        .map(|i| args(&["PUBLISH", "news", &i.to_string()]))
        .collect();
    for reply in p.pipeline(&cmds) {
        assert_eq!(reply, int(n));
    }
    for (shard, s) in subs.iter_mut() {
        for i in 0..1000 {
            assert_eq!(
                next(s, "a numbered message"),
                msg("news", &i.to_string()),
                "subscriber on shard {shard}"
            );
        }
    }
    // Nobody else: a channel without subscribers counts 0.
    assert_eq!(p.cmd(&["PUBLISH", "nobody", "x"]), int(0));
}

#[test]
fn publishers_on_many_connections_each_keep_their_order() {
    let server = Server::start(2, &[]);
    let mut subs: Vec<Raw> = (0..8).map(|_| subscriber(&server, &["c"])).collect();
    let mut pubs: Vec<Raw> = (0..4).map(|_| conn(&server)).collect();
    for (j, p) in pubs.iter_mut().enumerate() {
        let cmds: Vec<Vec<Vec<u8>>> = (0..200)
            .map(|i| args(&["PUBLISH", "c", &format!("{j}:{i}")]))
            .collect();
        for reply in p.pipeline(&cmds) {
            assert_eq!(reply, int(8));
        }
    }
    for s in subs.iter_mut() {
        let mut seen = [0usize; 4];
        for _ in 0..800 {
            let m = next(s, "message").items();
            assert_eq!(m[0], b("message"));
            let payload = m[2].text();
            let (j, i) = payload.split_once(':').unwrap();
            let (j, i): (usize, usize) = (j.parse().unwrap(), i.parse().unwrap());
            assert_eq!(i, seen[j], "publisher {j} out of order");
            seen[j] += 1;
        }
    }
}

// ---------------------------------------------------------------------------
// 2. Patterns.

#[test]
fn pattern_subscriptions_receive_pmessage() {
    let server = Server::start(2, &[]);
    let mut s = psubscriber(&server, &["news.*", "h?llo", "[ab]*"]);
    let mut p = conn(&server);
    assert_eq!(p.cmd(&["PUBLISH", "news.tech", "1"]), int(1));
    assert_eq!(next(&mut s, "pmessage"), pmsg("news.*", "news.tech", "1"));
    assert_eq!(p.cmd(&["PUBLISH", "hallo", "2"]), int(1));
    assert_eq!(next(&mut s, "pmessage"), pmsg("h?llo", "hallo", "2"));
    assert_eq!(p.cmd(&["PUBLISH", "bees", "3"]), int(1));
    assert_eq!(next(&mut s, "pmessage"), pmsg("[ab]*", "bees", "3"));
    // Matches none.
    assert_eq!(p.cmd(&["PUBLISH", "news", "x"]), int(0));
    assert_eq!(p.cmd(&["PUBLISH", "hoollo", "x"]), int(0));
    assert_eq!(p.cmd(&["PUBLISH", "cab", "x"]), int(0));
    // Matches two patterns of the same connection: one pmessage each.
    assert_eq!(p.cmd(&["PUBLISH", "hello", "4"]), int(1));
    assert_eq!(p.cmd(&["PUBLISH", "allo", "5"]), int(1));
    assert_eq!(p.cmd(&["PUBLISH", "a.news.x", "6"]), int(1));
    assert_eq!(next(&mut s, "pmessage"), pmsg("h?llo", "hello", "4"));
    assert_eq!(next(&mut s, "pmessage"), pmsg("[ab]*", "allo", "5"));
    assert_eq!(next(&mut s, "pmessage"), pmsg("[ab]*", "a.news.x", "6"));
    assert_eq!(p.cmd(&["PUBSUB", "NUMPAT"]), int(3));
}

#[test]
fn channel_and_matching_pattern_both_deliver_and_both_count() {
    let server = Server::start(2, &[]);
    let mut s = subscriber(&server, &["news.tech"]);
    s.send_cmd(&[b"PSUBSCRIBE", b"news.*"]);
    assert_eq!(
        next(&mut s, "psubscribe"),
        confirm("psubscribe", Some("news.*"), 2)
    );
    let mut other = psubscriber(&server, &["news.*"]);
    let mut p = conn(&server);
    assert_eq!(p.cmd(&["PUBLISH", "news.tech", "hi"]), int(3));
    let mut got = vec![next(&mut s, "message"), next(&mut s, "message")];
    got.sort_by_key(|r| format!("{r:?}"));
    let mut want = vec![msg("news.tech", "hi"), pmsg("news.*", "news.tech", "hi")];
    want.sort_by_key(|r| format!("{r:?}"));
    assert_eq!(got, want);
    assert_eq!(
        next(&mut other, "pmessage"),
        pmsg("news.*", "news.tech", "hi")
    );
    // NUMSUB counts channel subscribers only; NUMPAT counts distinct patterns.
    assert_eq!(
        p.cmd(&["PUBSUB", "NUMSUB", "news.tech", "news.*"]),
        arr(vec![b("news.tech"), int(1), b("news.*"), int(0)])
    );
    assert_eq!(p.cmd(&["PUBSUB", "NUMPAT"]), int(1));
}

// ---------------------------------------------------------------------------
// 3. Replies of (P)(UN)SUBSCRIBE and PUBSUB.

#[test]
fn subscribe_and_unsubscribe_replies() {
    let server = Server::start(2, &[]);
    let mut s = conn(&server);
    // Nothing subscribed: one reply with a nil name and a count of 0.
    s.send(&encode_cmd(&[b"UNSUBSCRIBE"]));
    s.expect_bytes(b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n");
    s.send(&encode_cmd(&[b"PUNSUBSCRIBE"]));
    s.expect_bytes(b"*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n");
    // Still a normal connection.
    assert_eq!(s.cmd(&["SET", "k", "v"]), ok());

    s.send(&encode_cmd(&[b"SUBSCRIBE", b"a", b"b"]));
    s.expect_bytes(
        b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n",
    );
    // Patterns and channels share the count; a repeat does not add.
    assert_eq!(
        s.cmd(&["PSUBSCRIBE", "p*"]),
        confirm("psubscribe", Some("p*"), 3)
    );
    assert_eq!(
        s.cmd(&["SUBSCRIBE", "a"]),
        confirm("subscribe", Some("a"), 3)
    );
    assert_eq!(
        s.cmd(&["PSUBSCRIBE", "p*"]),
        confirm("psubscribe", Some("p*"), 3)
    );
    // Unsubscribing from something never subscribed answers the current count.
    assert_eq!(
        s.cmd(&["UNSUBSCRIBE", "zz"]),
        confirm("unsubscribe", Some("zz"), 3)
    );
    assert_eq!(
        s.cmd(&["PUNSUBSCRIBE", "zz"]),
        confirm("punsubscribe", Some("zz"), 3)
    );
    // UNSUBSCRIBE with no arguments: one reply per channel, count falling
    // to the patterns left (Redis's order among the channels is a hash
    // order, so it is not checked).
    s.send_cmd(&[b"UNSUBSCRIBE"]);
    let r1 = next(&mut s, "unsubscribe").items();
    let r2 = next(&mut s, "unsubscribe").items();
    assert_eq!(
        (r1[0].clone(), r2[0].clone()),
        (b("unsubscribe"), b("unsubscribe"))
    );
    let mut names = vec![r1[1].text(), r2[1].text()];
    names.sort();
    assert_eq!(names, ["a", "b"]);
    assert_eq!((r1[2].clone(), r2[2].clone()), (int(2), int(1)));
    // Still subscribed to the pattern: subscriber mode goes on.
    s.send_cmd(&[b"PING"]);
    s.expect_bytes(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    assert_eq!(s.cmd(&["UNSUBSCRIBE"]), confirm("unsubscribe", None, 1));
    assert_eq!(
        s.cmd(&["PSUBSCRIBE", "q*", "r*"]),
        confirm("psubscribe", Some("q*"), 2)
    );
    assert_eq!(
        next(&mut s, "psubscribe"),
        confirm("psubscribe", Some("r*"), 3)
    );
    s.send_cmd(&[b"PUNSUBSCRIBE"]);
    let mut names = Vec::new();
    for want in [2, 1, 0] {
        let r = next(&mut s, "punsubscribe").items();
        assert_eq!(r[0], b("punsubscribe"));
        assert_eq!(r[2], int(want));
        names.push(r[1].text());
    }
    names.sort();
    assert_eq!(names, ["p*", "q*", "r*"]);
    s.send(&encode_cmd(&[b"PUNSUBSCRIBE"]));
    s.expect_bytes(b"*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n");
    // Out of subscriber mode again.
    assert_eq!(s.cmd(&["GET", "k"]), b("v"));
    assert_eq!(s.cmd(&["PING"]), simple("PONG"));
}

#[test]
fn pubsub_introspection() {
    let server = Server::start(2, &[]);
    let mut q = conn(&server);
    assert_eq!(q.cmd(&["PUBSUB", "CHANNELS"]), arr(vec![]));
    assert_eq!(q.cmd(&["PUBSUB", "NUMSUB"]), arr(vec![]));
    assert_eq!(q.cmd(&["PUBSUB", "NUMPAT"]), int(0));
    assert_eq!(
        q.cmd(&["PUBSUB", "NUMSUB", "nope", "a"]),
        arr(vec![b("nope"), int(0), b("a"), int(0)])
    );

    let s1 = subscriber(&server, &["news.tech", "news.art", "other"]);
    let mut s2 = subscriber(&server, &["news.tech"]);
    let p1 = psubscriber(&server, &["x*", "y*"]);
    let _p2 = psubscriber(&server, &["x*"]);
    assert_eq!(
        sorted_bulks(q.cmd(&["PUBSUB", "CHANNELS"])),
        ["news.art", "news.tech", "other"]
    );
    assert_eq!(
        sorted_bulks(q.cmd(&["PUBSUB", "CHANNELS", "news.*"])),
        ["news.art", "news.tech"]
    );
    assert_eq!(q.cmd(&["PUBSUB", "CHANNELS", "zz*"]), arr(vec![]));
    assert_eq!(
        q.cmd(&["PUBSUB", "NUMSUB", "news.tech", "other", "nope"]),
        arr(vec![
            b("news.tech"),
            int(2),
            b("other"),
            int(1),
            b("nope"),
            int(0)
        ])
    );
    // Distinct patterns, not pattern subscriptions.
    assert_eq!(q.cmd(&["PUBSUB", "NUMPAT"]), int(2));

    // Unsubscribing one connection leaves the other's channel.
    assert_eq!(
        s2.cmd(&["UNSUBSCRIBE", "news.tech"]),
        confirm("unsubscribe", Some("news.tech"), 0)
    );
    assert_eq!(pubsub_count(&mut q, "news.tech"), 1);

    // A subscriber that disconnects takes its channels and patterns along.
    drop(s1);
    drop(p1);
    assert!(
        wait_until(Duration::from_secs(5), || {
            q.cmd(&["PUBSUB", "CHANNELS"]) == arr(vec![])
        }),
        "channels of a closed subscriber stay listed"
    );
    assert_eq!(
        q.cmd(&["PUBSUB", "NUMSUB", "news.tech", "other"]),
        arr(vec![b("news.tech"), int(0), b("other"), int(0)])
    );
    assert!(wait_until(Duration::from_secs(5), || {
        q.cmd(&["PUBSUB", "NUMPAT"]) == int(1)
    }));
    assert_eq!(q.cmd(&["PUBLISH", "news.tech", "x"]), int(0));
    assert_eq!(q.cmd(&["PUBLISH", "xa", "x"]), int(1));
}

#[test]
fn pubsub_errors() {
    let server = Server::start(2, &[]);
    let mut q = conn(&server);
    assert_eq!(
        q.cmd(&["PUBSUB"]),
        Reply::err("ERR wrong number of arguments for 'pubsub' command")
    );
    assert_eq!(
        q.cmd(&["PUBLISH", "a"]),
        Reply::err("ERR wrong number of arguments for 'publish' command")
    );
    assert_eq!(
        q.cmd(&["SUBSCRIBE"]),
        Reply::err("ERR wrong number of arguments for 'subscribe' command")
    );
    assert_eq!(
        q.cmd(&["PSUBSCRIBE"]),
        Reply::err("ERR wrong number of arguments for 'psubscribe' command")
    );
    assert_eq!(
        q.cmd(&["PUBSUB", "FOO"]),
        Reply::err("ERR unknown subcommand 'FOO'. Try PUBSUB HELP.")
    );
    assert_eq!(
        q.cmd(&["PUBSUB", "NUMPAT", "x"]),
        Reply::err("ERR wrong number of arguments for 'pubsub|numpat' command")
    );
    assert_eq!(
        q.cmd(&["PUBSUB", "HELP", "x"]),
        Reply::err("ERR wrong number of arguments for 'pubsub|help' command")
    );
    assert_eq!(
        q.cmd(&["PUBSUB", "channels", "a", "b"]),
        Reply::err(
            "ERR unknown subcommand or wrong number of arguments for 'channels'. Try PUBSUB HELP."
        )
    );
    let help = q.cmd(&["PUBSUB", "HELP"]).items();
    assert_eq!(
        help[0].text(),
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    );
}

#[test]
fn client_list_shows_subscriptions() {
    let server = Server::start(2, &[]);
    let mut s = subscriber(&server, &["a", "b"]);
    s.send_cmd(&[b"PSUBSCRIBE", b"p*"]);
    next(&mut s, "psubscribe");
    let addr = s.local_addr();
    let mut q = conn(&server);
    let list = q.cmd(&["CLIENT", "LIST"]).text();
    let line = list
        .lines()
        .find(|l| l.contains(&format!("addr={addr} ")))
        .expect("subscriber listed");
    assert!(line.contains(" flags=P "), "{line}");
    assert!(line.contains(" sub=2 psub=1 "), "{line}");
    let mine = q.cmd(&["CLIENT", "INFO"]).text();
    assert!(
        mine.contains(" flags=N ") && mine.contains(" sub=0 psub=0 "),
        "{mine}"
    );
}

// ---------------------------------------------------------------------------
// 4. RESP3.

#[test]
fn resp3_subscriptions_use_push_frames_and_allow_commands() {
    let server = Server::start(2, &[]);
    let mut s = conn(&server);
    let hello = s.cmd(&["HELLO", "3"]);
    assert!(matches!(hello, Reply::Map(_)), "{hello:?}");
    assert_eq!(s.cmd(&["SET", "k", "v"]), ok());
    s.send(&encode_cmd(&[b"SUBSCRIBE", b"a", b"b"]));
    s.expect_bytes(
        b">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n>3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n",
    );
    // Normal commands work while subscribed; PING is a plain PONG.
    assert_eq!(s.cmd(&["GET", "k"]), b("v"));
    assert_eq!(s.cmd(&["PING"]), simple("PONG"));
    assert_eq!(s.cmd(&["GET", "missing"]), Reply::Nil);

    let mut p = conn(&server);
    assert_eq!(p.cmd(&["PUBLISH", "a", "hello"]), int(1));
    assert_eq!(
        next(&mut s, "push"),
        Reply::Push(vec![b("message"), b("a"), b("hello")])
    );
    s.send(&encode_cmd(&[b"PSUBSCRIBE", b"x*"]));
    s.expect_bytes(b">3\r\n$10\r\npsubscribe\r\n$2\r\nx*\r\n:3\r\n");
    assert_eq!(p.cmd(&["PUBLISH", "xy", "2"]), int(1));
    assert_eq!(
        next(&mut s, "push"),
        Reply::Push(vec![b("pmessage"), b("x*"), b("xy"), b("2")])
    );
    s.send(&encode_cmd(&[b"PUBLISH", b"xz", b"3"]));
    // Our own PUBLISH: the reply and the push, in either order.
    let mut got = vec![next(&mut s, "reply"), next(&mut s, "reply")];
    got.sort_by_key(|r| format!("{r:?}"));
    let mut want = vec![
        int(1),
        Reply::Push(vec![b("pmessage"), b("x*"), b("xz"), b("3")]),
    ];
    want.sort_by_key(|r| format!("{r:?}"));
    assert_eq!(got, want);

    s.send(&encode_cmd(&[b"UNSUBSCRIBE", b"a", b"b"]));
    s.expect_bytes(b">3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:2\r\n>3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:1\r\n");
    s.send(&encode_cmd(&[b"PUNSUBSCRIBE"]));
    s.expect_bytes(b">3\r\n$12\r\npunsubscribe\r\n$2\r\nx*\r\n:0\r\n");
    s.send(&encode_cmd(&[b"UNSUBSCRIBE"]));
    s.expect_bytes(b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n");
}

// ---------------------------------------------------------------------------
// 5. RESP2 subscriber mode.

#[test]
fn resp2_subscriber_mode_rejects_other_commands() {
    let server = Server::start(2, &[]);
    let mut s = subscriber(&server, &["a"]);
    for (argv, name) in [
        (vec!["GET", "x"], "get"),
        (vec!["get", "x"], "get"),
        (vec!["SET", "x", "1"], "set"),
        (vec!["PUBLISH", "a", "1"], "publish"),
        (vec!["CONFIG", "GET", "x"], "config|get"),
        (vec!["client", "id"], "client|id"),
    ] {
        assert_eq!(
            s.cmd(&argv),
            Reply::err(&format!("ERR Can't execute '{name}': {SUB_CONTEXT}")),
            "{argv:?}"
        );
    }
    // PING answers in the shape of a message.
    s.send(&encode_cmd(&[b"PING"]));
    s.expect_bytes(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    s.send(&encode_cmd(&[b"PING", b"hi"]));
    s.expect_bytes(b"*2\r\n$4\r\npong\r\n$2\r\nhi\r\n");
    // The rejected SET did nothing.
    let mut q = conn(&server);
    assert_eq!(q.cmd(&["EXISTS", "x"]), int(0));
    // Still subscribed after errors.
    assert_eq!(q.cmd(&["PUBLISH", "a", "m"]), int(1));
    assert_eq!(next(&mut s, "message"), msg("a", "m"));
    // QUIT answers OK and closes.
    s.send(&encode_cmd(&[b"QUIT"]));
    s.expect_bytes(b"+OK\r\n");
    assert!(s.closed());
    assert!(wait_until(Duration::from_secs(5), || pubsub_count(
        &mut q, "a"
    ) == 0));
}

#[test]
fn reset_leaves_subscriber_mode() {
    let server = Server::start(2, &[]);
    let mut q = conn(&server);
    assert_eq!(q.cmd(&["SET", "k", "v"]), ok());
    let mut s = subscriber(&server, &["a"]);
    s.send_cmd(&[b"PSUBSCRIBE", b"p*"]);
    next(&mut s, "psubscribe");
    s.send(&encode_cmd(&[b"RESET"]));
    s.expect_bytes(b"+RESET\r\n");
    assert_eq!(s.cmd(&["GET", "k"]), b("v"));
    assert_eq!(s.cmd(&["PING"]), simple("PONG"));
    assert_eq!(pubsub_count(&mut q, "a"), 0);
    assert_eq!(q.cmd(&["PUBSUB", "NUMPAT"]), int(0));
    assert_eq!(q.cmd(&["PUBLISH", "a", "x"]), int(0));
    // A RESP3 connection goes back to RESP2 on RESET.
    let mut r3 = conn(&server);
    r3.cmd(&["HELLO", "3"]);
    r3.send(&encode_cmd(&[b"SUBSCRIBE", b"c"]));
    r3.expect_bytes(b">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
    r3.send(&encode_cmd(&[b"RESET"]));
    r3.expect_bytes(b"+RESET\r\n");
    r3.send(&encode_cmd(&[b"GET", b"nope"]));
    r3.expect_bytes(b"$-1\r\n");
    assert_eq!(pubsub_count(&mut q, "c"), 0);
}

// ---------------------------------------------------------------------------
// 6. Keyspace notifications.

/// Reads pmessages from a `__key*__:*` subscriber until `n` events and
/// the marker message on channel `marker` arrived; returns the events as
/// (channel, message) in arrival order.
fn collect_events(s: &mut Raw, n: usize, marker: &str) -> Vec<(String, String)> {
    let mut events = Vec::new();
    let mut marked = false;
    while !(marked && events.len() >= n) {
        let Some(reply) = s.read() else {
            panic!("stopped waiting after {events:?} (marker seen: {marked})");
        };
        let items = reply.items();
        let (channel, payload) = match items[0].text().as_str() {
            "pmessage" => (items[2].text(), items[3].text()),
            "message" => (items[1].text(), items[2].text()),
            other => panic!("unexpected {other}: {items:?}"),
        };
        if channel == marker {
            marked = true;
        } else {
            events.push((channel, payload));
        }
    }
    events
}

fn ev(channel: &str, message: &str) -> (String, String) {
    (channel.to_string(), message.to_string())
}

/// The keyspace and keyevent pair of one event.
fn both(event: &str, key: &str) -> Vec<(String, String)> {
    both_db(0, event, key)
}

fn both_db(db: usize, event: &str, key: &str) -> Vec<(String, String)> {
    vec![
        ev(&format!("__keyspace@{db}__:{key}"), event),
        ev(&format!("__keyevent@{db}__:{event}"), key),
    ]
}

/// Subscribes to every keyspace event plus a marker channel.
fn key_subscriber(server: &Server) -> Raw {
    let mut s = psubscriber(server, &["__key*__:*"]);
    s.send_cmd(&[b"SUBSCRIBE", b"marker"]);
    assert_eq!(
        next(&mut s, "subscribe"),
        confirm("subscribe", Some("marker"), 2)
    );
    s
}

/// Runs `argv` on `c`, checks `reply`, and checks the events it fires,
/// in order when `ordered` (one shard), else as a multiset.
fn expect_events(
    c: &mut Raw,
    s: &mut Raw,
    argv: &[&str],
    reply: Reply,
    want: Vec<(String, String)>,
    ordered: bool,
) {
    assert_eq!(c.cmd(argv), reply, "{argv:?}");
    assert_eq!(c.cmd(&["PUBLISH", "marker", "."]), int(1));
    let mut got = collect_events(s, want.len(), "marker");
    let mut want = want;
    if !ordered {
        got.sort();
        want.sort();
    }
    assert_eq!(got, want, "events of {argv:?}");
}

#[test]
fn keyspace_events_for_each_command() {
    let server = Server::start(2, &[]);
    let mut c = conn(&server);
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]),
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        arr(vec![b("notify-keyspace-events"), b("AKE")])
    );
    let mut s = key_subscriber(&server);
    let same: Vec<String> = keys_on_shard("k", 0, 2, 2);
    let (k, k2) = (same[0].as_str(), same[1].as_str());
    let other = keys_on_shard("o", 1, 2, 1).remove(0);
    let o = other.as_str();

    {
        let mut run = |argv: &[&str], reply: Reply, want: Vec<(String, String)>| {
            expect_events(&mut c, &mut s, argv, reply, want, true)
        };
        run(&["SET", k, "v"], ok(), both("set", k));
        run(
            &["SET", k, "v", "EX", "100"],
            ok(),
            [both("set", k), both("expire", k)].concat(),
        );
        run(
            &["SETEX", k, "100", "v"],
            ok(),
            [both("set", k), both("expire", k)].concat(),
        );
        run(&["SETNX", k, "v"], int(0), vec![]);
        run(&["EXPIRE", k, "100"], int(1), both("expire", k));
        run(&["PERSIST", k], int(1), both("persist", k));
        run(&["PERSIST", k], int(0), vec![]);
        run(&["EXPIRE", k, "0"], int(1), both("del", k));
        run(&["SET", k, "v"], ok(), both("set", k));
        run(&["SET", k2, "v"], ok(), both("set", k2));
        run(
            &["DEL", k, k2, "nokey"],
            int(2),
            [both("del", k), both("del", k2)].concat(),
        );
        run(&["DEL", k], int(0), vec![]);
        run(&["INCR", k], int(1), both("incrby", k));
        run(&["INCRBY", k, "5"], int(6), both("incrby", k));
        run(&["DECR", k], int(5), both("incrby", k));
        run(&["INCRBYFLOAT", k, "1.5"], b("6.5"), both("incrbyfloat", k));
        run(&["APPEND", k2, "x"], int(1), both("append", k2));
        run(&["SETRANGE", k2, "0", "zz"], int(2), both("setrange", k2));
        // RENAME on one shard: rename_from for the old name, rename_to for the new.
        run(
            &["RENAME", k2, k],
            ok(),
            [both("rename_from", k2), both("rename_to", k)].concat(),
        );
        run(&["COPY", k, k2], int(1), both("copy_to", k2));
        run(&["COPY", k, k2], int(0), vec![]);
        run(
            &["MOVE", k, "1"],
            int(1),
            [both("move_from", k), both_db(1, "move_to", k)].concat(),
        );
        run(&["GETDEL", k2], b("zz"), both("del", k2));
    }

    // Across shards: both events arrive, from two shards (any order).
    let mut run = |argv: &[&str], reply: Reply, want: Vec<(String, String)>| {
        expect_events(&mut c, &mut s, argv, reply, want, false)
    };
    run(&["SET", k, "1"], ok(), both("set", k));
    run(
        &["RENAME", k, o],
        ok(),
        [both("rename_from", k), both("rename_to", o)].concat(),
    );
    run(
        &["RENAMENX", o, k],
        int(1),
        [both("rename_from", o), both("rename_to", k)].concat(),
    );
    run(&["COPY", k, o], int(1), both("copy_to", o));
    run(
        &["DEL", k, o],
        int(2),
        [both("del", k), both("del", o)].concat(),
    );
    run(
        &["MSET", k, "1", o, "2"],
        ok(),
        [both("set", k), both("set", o)].concat(),
    );
}

#[test]
fn keyspace_event_classes_filter() {
    let server = Server::start(2, &[]);
    let mut c = conn(&server);
    let mut s = key_subscriber(&server);
    let k = "key";

    // Nothing configured: nothing fires.
    expect_events(&mut c, &mut s, &["SET", k, "v"], ok(), vec![], true);

    // Ex: only expired key-events, no keyspace ones and no set/del.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Ex"]),
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        arr(vec![b("notify-keyspace-events"), b("xE")])
    );
    expect_events(
        &mut c,
        &mut s,
        &["SET", k, "v", "PX", "5000"],
        ok(),
        vec![],
        true,
    );
    expect_events(&mut c, &mut s, &["DEL", k], int(1), vec![], true);
    assert_eq!(c.cmd(&["SET", k, "v", "PX", "30"]), ok());
    assert_eq!(
        next(&mut s, "expired event"),
        pmsg("__key*__:*", "__keyevent@0__:expired", k)
    );
    expect_events(&mut c, &mut s, &["EXISTS", k], int(0), vec![], true);

    // E$: string commands only.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "E$"]),
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        arr(vec![b("notify-keyspace-events"), b("$E")])
    );
    expect_events(
        &mut c,
        &mut s,
        &["SET", k, "1", "EX", "100"],
        ok(),
        vec![ev("__keyevent@0__:set", k)],
        true,
    );
    expect_events(&mut c, &mut s, &["PERSIST", k], int(1), vec![], true);
    expect_events(
        &mut c,
        &mut s,
        &["INCR", k],
        int(2),
        vec![ev("__keyevent@0__:incrby", k)],
        true,
    );
    expect_events(&mut c, &mut s, &["DEL", k], int(1), vec![], true);

    // Kg: generic only, keyspace channel only.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Kg"]),
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        arr(vec![b("notify-keyspace-events"), b("gK")])
    );
    expect_events(&mut c, &mut s, &["SET", k, "1"], ok(), vec![], true);
    expect_events(
        &mut c,
        &mut s,
        &["EXPIRE", k, "100"],
        int(1),
        vec![ev(&format!("__keyspace@0__:{k}"), "expire")],
        true,
    );

    // En: new keys.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "En"]),
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        arr(vec![b("notify-keyspace-events"), b("nE")])
    );
    expect_events(
        &mut c,
        &mut s,
        &["SET", "fresh", "1"],
        ok(),
        vec![ev("__keyevent@0__:new", "fresh")],
        true,
    );
    expect_events(&mut c, &mut s, &["SET", "fresh", "2"], ok(), vec![], true);
    expect_events(
        &mut c,
        &mut s,
        &["INCR", "counter"],
        int(1),
        vec![ev("__keyevent@0__:new", "counter")],
        true,
    );
    expect_events(&mut c, &mut s, &["INCR", "counter"], int(2), vec![], true);
    expect_events(
        &mut c,
        &mut s,
        &["APPEND", "log", "x"],
        int(1),
        vec![ev("__keyevent@0__:new", "log")],
        true,
    );
    expect_events(
        &mut c,
        &mut s,
        &["APPEND", "log", "y"],
        int(2),
        vec![],
        true,
    );

    // Off again.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", ""]),
        ok()
    );
    expect_events(&mut c, &mut s, &["SET", "other", "1"], ok(), vec![], true);
}

#[test]
fn notify_keyspace_events_normalization_and_errors() {
    let server = Server::start(1, &[]);
    let mut c = conn(&server);
    // Observed on Redis 7.0.15: A is g$lshzxetd; m prints after K and E.
    for (input, shown) in [
        ("KEA", "AKE"),
        ("Ex", "xE"),
        ("xE", "xE"),
        ("E$", "$E"),
        ("Kg", "gK"),
        ("Kgn", "gnK"),
        ("x", "x"),
        ("n", "n"),
        ("A", "A"),
        ("Am", "Am"),
        ("KEAm", "AKEm"),
        ("mn", "nm"),
        ("Ed", "dE"),
        ("AKEd", "AKE"),
        ("g$lshzxet", "g$lshzxet"),
        ("g$lshzxetd", "A"),
        ("", ""),
    ] {
        assert_eq!(
            c.cmd(&["CONFIG", "SET", "notify-keyspace-events", input]),
            ok(),
            "{input}"
        );
        assert_eq!(
            c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
            arr(vec![b("notify-keyspace-events"), b(shown)]),
            "{input}"
        );
    }
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Ex"]),
        ok()
    );
    for bad in ["Q", "KEAQ", "k"] {
        assert_eq!(
            c.cmd(&["CONFIG", "SET", "notify-keyspace-events", bad]),
            Reply::err(
                "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
            )
        );
    }
    // A failed SET keeps the previous value.
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        arr(vec![b("notify-keyspace-events"), b("xE")])
    );
}

#[test]
fn notify_keyspace_events_from_the_config_file() {
    let server = Server::start_with_config(2, "notify-keyspace-events KE$g\n");
    let mut c = conn(&server);
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        arr(vec![b("notify-keyspace-events"), b("g$KE")])
    );
    let mut s = key_subscriber(&server);
    expect_events(
        &mut c,
        &mut s,
        &["SET", "k", "v"],
        ok(),
        both("set", "k"),
        true,
    );
}

// ---------------------------------------------------------------------------
// 7 and 8. Expired events.

#[test]
fn ten_thousand_expiring_keys_each_fire_one_expired_event() {
    const N: usize = 10_000;
    let server = Server::start(2, &[]);
    let mut c = conn(&server);
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Ex"]),
        ok()
    );
    let mut s = subscriber(&server, &["__keyevent@0__:expired"]);
    s.set_read_timeout(Duration::from_millis(500));

    // Keys on both shards, TTLs from 100 to 500 ms, one pipelined buffer.
    let keys: Vec<String> = (0..N).map(|i| format!("exp:{i}")).collect();
    let shard0 = keys
        .iter()
        .filter(|k| ember::util::slot::key_slot(k.as_bytes()).is_multiple_of(2))
        .count();
    assert!(shard0 > N / 4 && shard0 < 3 * N / 4, "{shard0} on shard 0");
    let mut buf = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let ttl = 100 + (i * 7919) % 401;
        buf.extend_from_slice(&encode_cmd(&[
            b"SET",
            k.as_bytes(),
            b"v",
            b"PX",
            ttl.to_string().as_bytes(),
        ]));
    }
    let started = Instant::now();
    let mut writer = c.writer();
    let sender = std::thread::spawn(move || writer.write_all(&buf).unwrap());
    for _ in 0..N {
        assert_eq!(next(&mut c, "SET reply"), ok());
    }
    sender.join().unwrap();
    // The last deadline is at most 500 ms after the last SET ran.
    let limit = started.elapsed() + Duration::from_millis(500 + 2000 + 500);

    let wanted: HashSet<&str> = keys.iter().map(String::as_str).collect();
    let mut seen: HashSet<String> = HashSet::new();
    while seen.len() < N && started.elapsed() < limit {
        let Some(reply) = s.read() else { continue };
        let items = reply.items();
        assert_eq!(items[0], b("message"));
        assert_eq!(items[1], b("__keyevent@0__:expired"));
        let key = items[2].text();
        assert!(wanted.contains(key.as_str()), "event for unknown key {key}");
        assert!(seen.insert(key.clone()), "two expired events for {key}");
    }
    assert_eq!(
        seen.len(),
        N,
        "expired events received within {:?} of the first SET",
        limit
    );
    // No more events come (no duplicates later either).
    let mut q = conn(&server);
    assert_eq!(q.cmd(&["DBSIZE"]), int(0));
    assert_eq!(q.cmd(&["PUBLISH", "__keyevent@0__:expired", "end"]), int(1));
    assert_eq!(
        next(&mut s, "end marker"),
        msg("__keyevent@0__:expired", "end")
    );
}

#[test]
fn lazily_expired_key_fires_expired() {
    for shards in [1, 2] {
        let server = Server::start(shards, &["--enable-debug-command", "local"]);
        let mut c = conn(&server);
        assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
        assert_eq!(
            c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]),
            ok()
        );
        let mut s = key_subscriber(&server);
        for k in ["lazy-a", "lazy-b", "lazy-c"] {
            expect_events(
                &mut c,
                &mut s,
                &["SET", k, "v", "PX", "50"],
                ok(),
                [both("set", k), both("expire", k)].concat(),
                true,
            );
        }
        std::thread::sleep(Duration::from_millis(100));
        // Nothing expired by itself (the sweep is off).
        c.cmd(&["PUBLISH", "marker", "."]);
        assert!(collect_events(&mut s, 0, "marker").is_empty());
        expect_events(
            &mut c,
            &mut s,
            &["GET", "lazy-a"],
            Reply::Nil,
            both("expired", "lazy-a"),
            true,
        );
        expect_events(
            &mut c,
            &mut s,
            &["EXISTS", "lazy-b"],
            int(0),
            both("expired", "lazy-b"),
            true,
        );
        // Only once.
        expect_events(&mut c, &mut s, &["GET", "lazy-a"], Reply::Nil, vec![], true);
        // Overwriting an expired key fires expired before set.
        expect_events(
            &mut c,
            &mut s,
            &["SET", "lazy-c", "w"],
            ok(),
            [both("expired", "lazy-c"), both("set", "lazy-c")].concat(),
            true,
        );
    }
}

// ---------------------------------------------------------------------------
// 9. Slow subscribers.

#[test]
fn slow_subscriber_is_disconnected_and_others_keep_working() {
    let server = Server::start(2, &[]);
    // The subscriber never reads.
    let slow = {
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        sock.set_recv_buffer_size(4096).unwrap();
        let addr: std::net::SocketAddr = format!("127.0.0.1:{}", server.port).parse().unwrap();
        sock.connect(&addr.into()).unwrap();
        let mut stream: std::net::TcpStream = sock.into();
        stream
            .write_all(&encode_cmd(&[b"SUBSCRIBE", b"firehose"]))
            .unwrap();
        stream
    };
    let mut q = conn(&server);
    assert!(wait_until(Duration::from_secs(5), || pubsub_count(
        &mut q, "firehose"
    ) == 1));

    // Another client pings throughout.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pinger = {
        let stop = stop.clone();
        let mut p = conn(&server);
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(p.cmd(&["PING"]), simple("PONG"));
                n += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            n
        })
    };

    let payload = "x".repeat(100 * 1024);
    let mut p = conn(&server);
    let started = Instant::now();
    let mut sent = 0usize;
    let mut dropped = false;
    while sent < 64 * 1024 * 1024 && started.elapsed() < Duration::from_secs(10) {
        let receivers = p.cmd(&["PUBLISH", "firehose", &payload]).int();
        sent += payload.len();
        if receivers == 0 {
            dropped = true;
            break;
        }
    }
    if !dropped {
        dropped = wait_until(Duration::from_secs(5), || {
            pubsub_count(&mut q, "firehose") == 0
        });
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let pings = pinger.join().expect("PING answered throughout");
    assert!(
        dropped,
        "slow subscriber still subscribed after {sent} bytes"
    );
    assert!(pings > 0);
    assert!(sent > 32 * 1024 * 1024, "dropped after only {sent} bytes");
    assert_eq!(pubsub_count(&mut q, "firehose"), 0);

    // Its socket ends after what the kernel had already buffered.
    let mut slow = slow;
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0usize;
    let eof = loop {
        match std::io::Read::read(&mut slow, &mut buf) {
            Ok(0) => break true,
            Ok(n) => total += n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
        if total > 64 * 1024 * 1024 {
            break false;
        }
    };
    assert!(
        eof,
        "slow subscriber's socket stays open ({total} bytes read)"
    );

    // The server is fine.
    assert_eq!(q.cmd(&["PING"]), simple("PONG"));
    let mut s = subscriber(&server, &["firehose"]);
    assert_eq!(q.cmd(&["PUBLISH", "firehose", "small"]), int(1));
    assert_eq!(next(&mut s, "message"), msg("firehose", "small"));
}

#[test]
fn many_channels_and_unsubscribes_keep_the_registry_consistent() {
    let server = Server::start(2, &[]);
    let mut q = conn(&server);
    let mut subs: Vec<Raw> = (0..6).map(|_| conn(&server)).collect();
    // Each subscriber i subscribes to ch0..ch(10*(i+1)).
    for (i, s) in subs.iter_mut().enumerate() {
        let chans: Vec<String> = (0..10 * (i + 1)).map(|c| format!("ch{c}")).collect();
        let mut argv: Vec<&[u8]> = vec![b"SUBSCRIBE"];
        argv.extend(chans.iter().map(|c| c.as_bytes()));
        s.send_cmd(&argv);
        for n in 1..=chans.len() {
            assert_eq!(next(s, "subscribe").items()[2], int(n as i64));
        }
    }
    let mut want: BTreeMap<usize, i64> = BTreeMap::new();
    for c in 0..60 {
        want.insert(c, (6 - c / 10) as i64);
    }
    for (c, n) in &want {
        assert_eq!(pubsub_count(&mut q, &format!("ch{c}")), *n, "ch{c}");
    }
    assert_eq!(q.cmd(&["PUBSUB", "CHANNELS"]).items().len(), 60);
    // Unsubscribe everyone from everything.
    for s in subs.iter_mut() {
        s.send_cmd(&[b"UNSUBSCRIBE"]);
    }
    for (i, s) in subs.iter_mut().enumerate() {
        for left in (0..10 * (i + 1)).rev() {
            assert_eq!(next(s, "unsubscribe").items()[2], int(left as i64));
        }
    }
    assert_eq!(q.cmd(&["PUBSUB", "CHANNELS"]), arr(vec![]));
    assert_eq!(q.cmd(&["PUBLISH", "ch0", "x"]), int(0));
}
