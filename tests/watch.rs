//! WATCH / UNWATCH and transactions over keys of several shards: WATCH is
//! broken by writes from any connection, by FLUSHALL/FLUSHDB/SWAPDB and by
//! expiry; cross-shard transactions and multi-key commands are atomic.
//! Replies checked against redis-server 7.0.

mod common;

use std::time::{Duration, Instant};

use common::{keys_on_shard, Raw, Reply, Server};

fn ok() -> Reply {
    Reply::Simple("OK".into())
}

fn exec_ok(c: &mut Raw, cmds: &[&[&str]]) -> Reply {
    assert_eq!(c.cmd(&["MULTI"]), ok());
    for cmd in cmds {
        assert_eq!(c.cmd(cmd), Reply::Simple("QUEUED".into()), "{cmd:?}");
    }
    c.cmd(&["EXEC"])
}

fn pong() -> Reply {
    Reply::Array(vec![Reply::Simple("PONG".into())])
}

#[test]
fn watch_errors_and_unwatch() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    assert_eq!(
        c.cmd(&["WATCH"]),
        Reply::Error("ERR wrong number of arguments for 'watch' command".into())
    );
    c.cmd(&["MULTI"]);
    assert_eq!(
        c.cmd(&["WATCH", "a"]),
        Reply::Error("ERR WATCH inside MULTI is not allowed".into())
    );
    assert_eq!(c.cmd(&["EXEC"]), Reply::Array(vec![]), "not flagged");
    assert_eq!(c.cmd(&["WATCH", "a", "b"]), ok());
    assert_eq!(c.cmd(&["UNWATCH"]), ok());
    let mut other = server.raw();
    other.cmd(&["SET", "a", "1"]);
    assert_eq!(
        exec_ok(&mut c, &[&["GET", "a"]]),
        Reply::Array(vec![Reply::bulk("1")])
    );
}

#[test]
fn watch_is_broken_by_writes_from_any_shard() {
    let server = Server::start(3, &[]);
    let keys: Vec<String> = (0..3)
        .map(|s| keys_on_shard("w", s, 3, 1)[0].clone())
        .collect();
    let mut c = server.raw();
    // Writers on several connections: the listener spreads them over shards.
    let mut writers: Vec<Raw> = (0..6).map(|_| server.raw()).collect();
    for (round, writer) in writers.iter_mut().enumerate() {
        for key in &keys {
            assert_eq!(c.cmd(&["WATCH", key]), ok());
            writer.cmd(&["INCR", key]);
            assert_eq!(
                exec_ok(&mut c, &[&["SET", "other", "x"]]),
                Reply::Nil,
                "round {round}, key {key}"
            );
        }
    }
    // Unchanged watched keys let EXEC through, and EXEC unwatches.
    c.cmd(&["WATCH", &keys[0], &keys[1], &keys[2]]);
    assert_eq!(
        exec_ok(&mut c, &[&["INCR", &keys[0]], &["INCR", &keys[2]]]),
        Reply::Array(vec![Reply::Int(7), Reply::Int(7)])
    );
    writers[0].cmd(&["INCR", &keys[1]]);
    assert_eq!(
        exec_ok(&mut c, &[&["GET", &keys[1]]]),
        Reply::Array(vec![Reply::bulk("7")])
    );
    // A write that changes nothing (SETNX on an existing key) does not touch.
    c.cmd(&["WATCH", &keys[0]]);
    writers[1].cmd(&["SETNX", &keys[0], "z"]);
    assert_eq!(exec_ok(&mut c, &[&["PING"]]), pong());
    // DISCARD unwatches too.
    c.cmd(&["WATCH", &keys[0]]);
    c.cmd(&["MULTI"]);
    assert_eq!(c.cmd(&["DISCARD"]), ok());
    writers[2].cmd(&["INCR", &keys[0]]);
    assert_eq!(exec_ok(&mut c, &[&["PING"]]), pong());
}

#[test]
fn watch_is_broken_by_flushes_and_swapdb() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let mut other = server.raw();
    for flush in [&["FLUSHALL"][..], &["FLUSHDB"][..]] {
        other.cmd(&["SET", "k", "1"]);
        c.cmd(&["WATCH", "k"]);
        other.cmd(flush);
        assert_eq!(exec_ok(&mut c, &[&["PING"]]), Reply::Nil, "{flush:?}");
    }
    // A flush does not touch a watched key that did not exist.
    c.cmd(&["WATCH", "absent"]);
    other.cmd(&["FLUSHALL"]);
    assert_eq!(exec_ok(&mut c, &[&["PING"]]), pong());
    // SWAPDB touches keys present in either database.
    other.cmd(&["SELECT", "1"]);
    other.cmd(&["SET", "s", "in-db1"]);
    c.cmd(&["WATCH", "s"]);
    other.cmd(&["SWAPDB", "0", "1"]);
    assert_eq!(exec_ok(&mut c, &[&["GET", "s"]]), Reply::Nil);
    // WATCH remembers the database of the key.
    c.cmd(&["SELECT", "0"]);
    c.cmd(&["WATCH", "d"]);
    other.cmd(&["SELECT", "1"]);
    other.cmd(&["SET", "d", "db1"]);
    assert_eq!(exec_ok(&mut c, &[&["PING"]]), pong());
}

#[test]
fn watch_is_broken_by_expiry_lazy_and_active() {
    let server = Server::start(2, &["--enable-debug-command", "local"]);
    let mut c = server.raw();
    // Lazy: active expiry off, the deadline passes, nobody touches the key.
    c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    c.cmd(&["SET", "lazy", "v", "PX", "50"]);
    c.cmd(&["WATCH", "lazy"]);
    std::thread::sleep(Duration::from_millis(120));
    assert_eq!(exec_ok(&mut c, &[&["PING"]]), Reply::Nil);
    // A key already expired when watched: its deletion is no change.
    c.cmd(&["SET", "stale", "v", "PX", "1"]);
    std::thread::sleep(Duration::from_millis(20));
    c.cmd(&["WATCH", "stale"]);
    assert_eq!(
        exec_ok(&mut c, &[&["GET", "stale"]]),
        Reply::Array(vec![Reply::Nil])
    );
    // Active: the sweep removes the key while the client waits.
    c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    c.cmd(&["FLUSHALL"]);
    c.cmd(&["SET", "active", "v", "PX", "50"]);
    c.cmd(&["WATCH", "active"]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.int(&["DBSIZE"]) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.int(&["DBSIZE"]), 0, "the sweep removed the key");
    assert_eq!(exec_ok(&mut c, &[&["PING"]]), Reply::Nil);
}

#[test]
fn page_view_pattern_across_shards() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let users: Vec<String> = (0..3)
        .map(|s| keys_on_shard("pageviews.user:", s, 3, 1)[0].clone())
        .collect();
    c.cmd(&["MULTI"]);
    for u in &users {
        c.cmd(&["RPUSH", u, "http://example.com/"]);
        c.cmd(&["EXPIRE", u, "60"]);
    }
    let Reply::Array(replies) = c.cmd(&["EXEC"]) else {
        panic!("EXEC failed")
    };
    assert_eq!(replies, vec![Reply::Int(1); 6]);
    for u in &users {
        let ttl = c.int(&["TTL", u]);
        assert!((59..=60).contains(&ttl), "{u}: {ttl}");
    }
}

fn num(r: &Reply) -> i64 {
    match r {
        Reply::Bulk(b) => String::from_utf8_lossy(b).parse().unwrap(),
        Reply::Nil => 0,
        other => panic!("{other:?}"),
    }
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// 32 clients move amounts between 64 counters on every shard, half with
/// MULTI/EXEC and half with WATCH-based optimistic updates, while readers
/// take MGET and MULTI/MGET/EXEC snapshots: every snapshot and the end hold
/// the total.
#[test]
fn transfers_keep_the_total_under_concurrency() {
    const COUNTERS: usize = 64;
    const START: i64 = 1000;
    let server = Server::start(4, &[]);
    let port = server.port;
    let names: Vec<String> = (0..COUNTERS).map(|i| format!("counter:{i}")).collect();
    let mut setup = server.raw();
    for n in &names {
        setup.cmd(&["SET", n, &START.to_string()]);
    }
    let total = START * COUNTERS as i64;
    let workers: Vec<_> = (0..32u64)
        .map(|w| {
            let names = names.clone();
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let mut next = xorshift(w * 7919 + 1);
                for _ in 0..60 {
                    let a = &names[next() as usize % COUNTERS];
                    let b = &names[next() as usize % COUNTERS];
                    let amount = (next() % 50) as i64;
                    if w % 2 == 0 {
                        let amount = amount.to_string();
                        let r =
                            exec_ok(&mut c, &[&["DECRBY", a, &amount], &["INCRBY", b, &amount]]);
                        assert!(matches!(r, Reply::Array(ref v) if v.len() == 2), "{r:?}");
                        continue;
                    }
                    // Optimistic: read, then write only if nobody changed them.
                    loop {
                        c.cmd(&["WATCH", a, b]);
                        let got = c.cmd(&["MGET", a, b]).items();
                        let (va, vb) = (num(&got[0]), num(&got[1]));
                        let writes = if a == b {
                            vec![(a, va)]
                        } else {
                            vec![(a, va - amount), (b, vb + amount)]
                        };
                        c.cmd(&["MULTI"]);
                        for (k, v) in &writes {
                            c.cmd(&["SET", k, &v.to_string()]);
                        }
                        if c.cmd(&["EXEC"]) != Reply::Nil {
                            break;
                        }
                    }
                }
            })
        })
        .collect();
    let mut mget = vec!["MGET".to_string()];
    mget.extend(names.iter().cloned());
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let mget = mget.clone();
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let mget: Vec<&str> = mget.iter().map(String::as_str).collect();
                for i in 0..40 {
                    let snapshot = if i % 2 == 0 {
                        c.cmd(&mget)
                    } else {
                        exec_ok(&mut c, &[&mget]).items()[0].clone()
                    };
                    let sum: i64 = snapshot.items().iter().map(num).sum();
                    assert_eq!(sum, total, "a reader saw half a transfer");
                }
            })
        })
        .collect();
    for t in workers.into_iter().chain(readers) {
        t.join().unwrap();
    }
    let mget: Vec<&str> = mget.iter().map(String::as_str).collect();
    let sum: i64 = setup.cmd(&mget).items().iter().map(num).sum();
    assert_eq!(sum, total);
}

/// Overlapping multi-key commands (MSET, RENAME, DEL, COPY, LMOVE,
/// ZUNIONSTORE, SMOVE, SUNIONSTORE) and transactions over every shard from many clients all
/// finish: no deadlock, no starvation.
#[test]
fn overlapping_multi_shard_work_always_finishes() {
    let server = Server::start(4, &[]);
    let port = server.port;
    let started = Instant::now();
    let threads: Vec<_> = (0..16u64)
        .map(|w| {
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let mut next = xorshift(w * 104729 + 3);
                for i in 0..80 {
                    let mut key = || format!("k{}", next() % 12);
                    let (a, b, d) = (key(), key(), key());
                    let r = match i % 10 {
                        0 => c.cmd(&["MSET", &a, "1", &b, "2", &d, "3"]),
                        1 => c.cmd(&["RENAME", &a, &b]),
                        2 => c.cmd(&["DEL", &a, &d]),
                        5 => c.cmd(&["LMOVE", &a, &b, "LEFT", "RIGHT"]),
                        6 => c.cmd(&["ZUNIONSTORE", &d, "2", &a, &b]),
                        7 => c.cmd(&["RPUSH", &a, "x"]),
                        8 => c.cmd(&["SMOVE", &a, &b, "m"]),
                        9 => c.cmd(&["SUNIONSTORE", &d, &a, &b]),
                        3 => exec_ok(
                            &mut c,
                            &[&["INCR", &d], &["SET", &a, "x"], &["MGET", &a, &b, &d]],
                        ),
                        _ => c.cmd(&["COPY", &b, &d, "REPLACE"]),
                    };
                    let expected = |e: &str| {
                        ["no such key", "not an integer", "are the same", "WRONGTYPE"]
                            .iter()
                            .any(|m| e.contains(m))
                    };
                    assert!(!matches!(&r, Reply::Error(e) if !expected(e)), "{r:?}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert_eq!(server.raw().cmd(&["PING"]), Reply::Simple("PONG".into()));
}

/// MSET over several shards is seen whole or not at all.
#[test]
fn cross_shard_mset_is_atomic_for_readers() {
    let server = Server::start(4, &[]);
    let port = server.port;
    let keys: Vec<String> = (0..4)
        .map(|s| keys_on_shard("m", s, 4, 1)[0].clone())
        .collect();
    let writer = {
        let keys = keys.clone();
        std::thread::spawn(move || {
            let mut c = Raw::connect(port);
            for i in 0..300 {
                let v = i.to_string();
                let mut args = vec!["MSET"];
                for k in &keys {
                    args.push(k);
                    args.push(&v);
                }
                assert_eq!(c.cmd(&args), Reply::Simple("OK".into()));
            }
        })
    };
    let mut r = Raw::connect(port);
    let mut args = vec!["MGET"];
    args.extend(keys.iter().map(String::as_str));
    for _ in 0..300 {
        let values = r.cmd(&args).items();
        assert!(
            values.windows(2).all(|w| w[0] == w[1]),
            "torn MSET: {values:?}"
        );
    }
    writer.join().unwrap();
}
