//! Blocking commands against a real ember with several shards: a popper
//! blocked on one connection is served by a pusher on another, whichever
//! shards the two connections and the keys land on; timeouts; arrival
//! order; keys on several shards served exactly once under a race;
//! CLIENT UNBLOCK; disconnects; pipelining behind a blocked command.
//! Expected replies are redis-server 7.0's.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{args, bulks, err, int, keys_on_shard, ok, wait_until, Raw, Reply, Server};

const SHARDS: usize = 3;

/// One key on each shard.
fn one_per_shard(prefix: &str) -> Vec<String> {
    (0..SHARDS)
        .map(|s| keys_on_shard(prefix, s, SHARDS, 1).remove(0))
        .collect()
}

/// Waits until INFO reports `n` blocked clients (their commands arrived).
fn wait_blocked(raw: &mut Raw, n: i64) {
    assert!(
        wait_until(Duration::from_secs(5), || raw
            .info_int("clients", "blocked_clients")
            == n),
        "expected {n} blocked clients"
    );
}

/// The reply a client blocked in BLPOP gets: `[key, element]`.
fn popped(key: &str, element: &str) -> Reply {
    bulks(&[key, element])
}

/// Sends a command without reading its reply (it blocks).
fn send(raw: &mut Raw, words: &[&str]) {
    let words: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
    raw.send_cmd(&words);
}

#[test]
fn pusher_wakes_poppers_on_every_shard() {
    let server = Server::start(SHARDS, &[]);
    let mut pusher = server.raw();
    // Several poppers per key: connections land on shards at random, so
    // both a popper on the key's shard and one on another shard occur.
    let keys = one_per_shard("wake");
    let mut poppers = Vec::new();
    for round in 0..3 {
        for key in &keys {
            let mut popper = server.raw();
            let cmd = if round % 2 == 0 { "BLPOP" } else { "BRPOP" };
            send(&mut popper, &[cmd, key, "0"]);
            poppers.push((popper, key.clone()));
            // Blocked before the next one asks: each key's waiters in order.
            wait_blocked(&mut pusher, poppers.len() as i64);
        }
    }
    for (i, (popper, key)) in poppers.iter_mut().enumerate() {
        let value = format!("v{i}");
        assert_eq!(pusher.cmd(&["RPUSH", key, &value]), int(1));
        assert_eq!(popper.read(), Some(popped(key, &value)));
    }
    wait_blocked(&mut pusher, 0);
    for key in &keys {
        assert_eq!(pusher.cmd(&["EXISTS", key]), int(0), "every element taken");
    }
}

#[test]
fn immediate_pops_and_errors_match_redis() {
    let server = Server::start(SHARDS, &[]);
    let mut c = server.raw();
    let [a, b, s] = [0, 1, 2].map(|i| one_per_shard("imm")[i].clone());
    assert_eq!(c.cmd(&["RPUSH", &b, "x", "y"]), int(2));
    assert_eq!(c.cmd(&["BLPOP", &a, &b, "0"]), popped(&b, "x"));
    assert_eq!(c.cmd(&["BRPOP", &a, &b, "0"]), popped(&b, "y"));
    assert_eq!(c.cmd(&["EXISTS", &b]), int(0), "the emptied list is gone");
    assert_eq!(c.cmd(&["SET", &s, "string"]), ok());
    let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(c.cmd(&["BLPOP", &s, "0"]), wrongtype);
    assert_eq!(
        c.cmd(&["BLPOP", &a, &s, "0"]),
        wrongtype,
        "first existing key decides"
    );
    assert_eq!(
        c.cmd(&["BLPOP", &a, "abc"]),
        err("ERR timeout is not a float or out of range")
    );
    assert_eq!(c.cmd(&["BLPOP", &a, "-1"]), err("ERR timeout is negative"));
    assert_eq!(c.cmd(&["BRPOP", &a, "inf"]), err("ERR timeout is negative"));
    assert_eq!(
        c.cmd(&["BLPOP", &a]),
        err("ERR wrong number of arguments for 'blpop' command")
    );
    // Inside MULTI nothing blocks: an empty key answers the timeout reply.
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["BLPOP", &a, "0"]), Reply::Simple("QUEUED".into()));
    assert_eq!(c.cmd(&["EXEC"]), Reply::Array(vec![Reply::Nil]));
}

#[test]
fn timeouts_answer_null_in_both_protocols() {
    let server = Server::start(SHARDS, &[]);
    let keys = one_per_shard("tmo");
    let mut c = server.raw();
    let started = Instant::now();
    send(&mut c, &["BLPOP", &keys[0], &keys[1], &keys[2], "0.3"]);
    c.expect_bytes(b"*-1\r\n");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(300),
        "answered after {waited:?}"
    );
    assert!(waited < Duration::from_secs(3), "answered after {waited:?}");
    assert!(matches!(c.cmd(&["HELLO", "3"]), Reply::Map(_)));
    let started = Instant::now();
    send(&mut c, &["BRPOP", &keys[1], "0.2"]);
    c.expect_bytes(b"_\r\n");
    assert!(started.elapsed() >= Duration::from_millis(200));
    // The connection is usable afterwards, and a timed-out client is not blocked.
    assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()));
    wait_blocked(&mut c, 0);
}

#[test]
fn waiters_are_served_in_arrival_order() {
    let server = Server::start(SHARDS, &[]);
    let key = keys_on_shard("fifo", 1, SHARDS, 1).remove(0);
    let mut pusher = server.raw();
    let mut waiters: Vec<Raw> = Vec::new();
    for i in 0..3 {
        let mut w = server.raw();
        send(&mut w, &["BLPOP", &key, "0"]);
        // Each one blocked before the next asks, so the order is known.
        wait_blocked(&mut pusher, i + 1);
        waiters.push(w);
    }
    // One push of three elements: each waiter gets one, first come first.
    assert_eq!(pusher.cmd(&["RPUSH", &key, "a", "b", "c"]), int(3));
    for (w, element) in waiters.iter_mut().zip(["a", "b", "c"]) {
        assert_eq!(w.read(), Some(popped(&key, element)));
    }
    // One element at a time: the order holds too.
    for (i, w) in waiters.iter_mut().enumerate() {
        send(w, &["BRPOP", &key, "0"]);
        wait_blocked(&mut pusher, i as i64 + 1);
    }
    for (i, w) in waiters.iter_mut().enumerate() {
        let value = format!("one-{i}");
        assert_eq!(pusher.cmd(&["LPUSH", &key, &value]), int(1));
        assert_eq!(w.read(), Some(popped(&key, &value)));
    }
}

#[test]
fn a_push_serves_before_the_pushers_next_command() {
    // As in Redis, the waiter is served right after the command that made
    // the key ready: a pipelined LPOP from the pusher finds nothing.
    let server = Server::start(SHARDS, &[]);
    let key = keys_on_shard("next", 2, SHARDS, 1).remove(0);
    let mut waiter = server.raw();
    let mut pusher = server.raw();
    send(&mut waiter, &["BLPOP", &key, "0"]);
    wait_blocked(&mut pusher, 1);
    let replies = pusher.pipeline(&[args(&["RPUSH", &key, "x"]), args(&["LPOP", &key])]);
    assert_eq!(replies, vec![int(1), Reply::Nil]);
    assert_eq!(waiter.read(), Some(popped(&key, "x")));
    // A transaction's writes are served after EXEC, with what is left then.
    send(&mut waiter, &["BLPOP", &key, "0"]);
    wait_blocked(&mut pusher, 1);
    let tx = pusher.pipeline(&[
        args(&["MULTI"]),
        args(&["RPUSH", &key, "y"]),
        args(&["LPOP", &key]),
        args(&["EXEC"]),
    ]);
    assert_eq!(tx[3], Reply::Array(vec![int(1), Reply::bulk("y")]));
    assert_eq!(pusher.cmd(&["RPUSH", &key, "z"]), int(1));
    assert_eq!(waiter.read(), Some(popped(&key, "z")));
}

#[test]
fn multi_key_waits_across_shards_serve_each_element_once() {
    let server = Server::start(SHARDS, &[]);
    let keys = Arc::new(one_per_shard("race"));
    let pushers_done = Arc::new(AtomicBool::new(false));
    const PUSHERS: usize = 4;
    const PER_PUSHER: usize = 300;
    const POPPERS: usize = 6;
    let poppers: Vec<_> = (0..POPPERS)
        .map(|_| {
            let (keys, done) = (Arc::clone(&keys), Arc::clone(&pushers_done));
            let mut raw = server.raw();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    match raw.cmd(&["BLPOP", &keys[0], &keys[1], &keys[2], "0.2"]) {
                        Reply::Array(kv) => got.push(kv[1].text()),
                        Reply::Nil if finished => return got,
                        Reply::Nil => {}
                        other => panic!("BLPOP answered {other:?}"),
                    }
                }
            })
        })
        .collect();
    let pushers: Vec<_> = (0..PUSHERS)
        .map(|p| {
            let keys = Arc::clone(&keys);
            let mut raw = server.raw();
            std::thread::spawn(move || {
                for i in 0..PER_PUSHER {
                    let key = &keys[(p + i) % keys.len()];
                    raw.int(&["RPUSH", key, &format!("{p}-{i}")]);
                }
            })
        })
        .collect();
    for p in pushers {
        p.join().unwrap();
    }
    pushers_done.store(true, Ordering::SeqCst);
    let mut seen = HashSet::new();
    let mut total = 0;
    for p in poppers {
        for value in p.join().unwrap() {
            total += 1;
            assert!(seen.insert(value.clone()), "{value} popped twice");
        }
    }
    let mut check = server.raw();
    for key in keys.iter() {
        assert_eq!(check.cmd(&["LLEN", key]), int(0), "left in {key}");
    }
    assert_eq!(total, PUSHERS * PER_PUSHER, "every element popped once");
    wait_blocked(&mut check, 0);
}

#[test]
fn client_unblock_answers_as_timeout_or_error() {
    let server = Server::start(SHARDS, &[]);
    let keys = one_per_shard("unb");
    let mut admin = server.raw();
    let mut a = server.raw();
    let mut b = server.raw();
    let id_a = a.int(&["CLIENT", "ID"]).to_string();
    let id_b = b.int(&["CLIENT", "ID"]).to_string();
    send(&mut a, &["BLPOP", &keys[0], "0"]);
    send(&mut b, &["BRPOP", &keys[0], &keys[1], &keys[2], "0"]);
    wait_blocked(&mut admin, 2);
    let list = admin.cmd(&["CLIENT", "LIST"]).text();
    let flags_of = |id: &str| {
        list.lines()
            .find(|l| l.starts_with(&format!("id={id} ")))
            .and_then(|l| l.split(' ').find(|f| f.starts_with("flags=")))
            .map(str::to_string)
    };
    assert_eq!(flags_of(&id_a).as_deref(), Some("flags=b"));
    assert_eq!(flags_of(&id_b).as_deref(), Some("flags=b"));
    assert_eq!(admin.cmd(&["CLIENT", "UNBLOCK", &id_a]), int(1));
    assert_eq!(a.read(), Some(Reply::Nil));
    assert_eq!(admin.cmd(&["CLIENT", "UNBLOCK", &id_b, "ERROR"]), int(1));
    assert_eq!(
        b.read(),
        Some(err("UNBLOCKED client unblocked via CLIENT UNBLOCK"))
    );
    assert_eq!(
        admin.cmd(&["CLIENT", "UNBLOCK", &id_b]),
        int(0),
        "not blocked"
    );
    assert_eq!(admin.cmd(&["CLIENT", "UNBLOCK", "999999"]), int(0));
    assert_eq!(
        admin.cmd(&["CLIENT", "UNBLOCK", &id_a, "LATER"]),
        err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    );
    assert_eq!(
        admin.cmd(&["CLIENT", "UNBLOCK", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        admin.cmd(&["CLIENT", "UNBLOCK"]),
        err("ERR wrong number of arguments for 'client|unblock' command")
    );
    wait_blocked(&mut admin, 0);
    // Both clients work again.
    assert_eq!(a.cmd(&["PING"]), Reply::Simple("PONG".into()));
    assert_eq!(b.cmd(&["PING"]), Reply::Simple("PONG".into()));
}

#[test]
fn a_client_that_disconnects_while_blocked_is_forgotten() {
    let server = Server::start(SHARDS, &[]);
    let keys = one_per_shard("gone");
    let mut other = server.raw();
    for waited in [vec![keys[0].clone()], keys.clone()] {
        let mut waiter = server.raw();
        let mut cmd = vec!["BLPOP"];
        cmd.extend(waited.iter().map(String::as_str));
        cmd.push("0");
        send(&mut waiter, &cmd);
        wait_blocked(&mut other, 1);
        drop(waiter);
        wait_blocked(&mut other, 0);
        // Let the cancels reach the keys' shards before pushing.
        std::thread::sleep(Duration::from_millis(100));
        for key in &waited {
            assert_eq!(other.cmd(&["RPUSH", key, "kept"]), int(1));
        }
        std::thread::sleep(Duration::from_millis(100));
        for key in &waited {
            assert_eq!(other.cmd(&["LLEN", key]), int(1), "nobody took it");
            assert_eq!(other.cmd(&["DEL", key]), int(1));
        }
    }
}

#[test]
fn pipelined_commands_wait_behind_a_blocked_one() {
    let server = Server::start(SHARDS, &[]);
    let key = keys_on_shard("pipe", 0, SHARDS, 1).remove(0);
    let other_key = keys_on_shard("pipe", 2, SHARDS, 1).remove(0);
    let mut waiter = server.raw();
    let mut buf = Vec::new();
    for words in [
        vec!["BLPOP", key.as_str(), "0"],
        vec!["SET", other_key.as_str(), "after"],
        vec!["GET", other_key.as_str()],
    ] {
        let words: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        buf.extend(common::encode_cmd(&words));
    }
    waiter.send(&buf);
    let mut pusher = server.raw();
    wait_blocked(&mut pusher, 1);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        pusher.cmd(&["GET", &other_key]),
        Reply::Nil,
        "the SET behind the blocked BLPOP has not run"
    );
    assert_eq!(pusher.cmd(&["RPUSH", &key, "v"]), int(1));
    assert_eq!(waiter.read(), Some(popped(&key, "v")));
    assert_eq!(waiter.read(), Some(ok()));
    assert_eq!(waiter.read(), Some(Reply::bulk("after")));
}

#[test]
fn blocked_clients_never_stall_a_shard() {
    let server = Server::start(SHARDS, &[]);
    let keys = one_per_shard("stall");
    let mut waiters = Vec::new();
    for i in 0..12 {
        let mut w = server.raw();
        send(&mut w, &["BLPOP", &keys[i % SHARDS], "0"]);
        waiters.push(w);
    }
    let mut probe = server.raw();
    wait_blocked(&mut probe, 12);
    // Fresh connections land on every shard; each answers at once.
    for _ in 0..12 {
        let mut c = server.raw();
        let started = Instant::now();
        assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()));
        assert_eq!(c.cmd(&["SET", &keys[0], "x"]), ok(), "writes too");
        assert!(started.elapsed() < Duration::from_secs(1));
        assert_eq!(c.cmd(&["DEL", &keys[0]]), int(1));
    }
}

#[test]
fn a_key_of_another_type_wakes_nobody() {
    // Redis 7.0: a waited key becoming a sorted set or a string leaves the
    // list waiters blocked; once it is a list again they are served.
    let server = Server::start(SHARDS, &[]);
    let keys = one_per_shard("type");
    let mut writer = server.raw();
    let mut single = server.raw();
    let mut multi = server.raw();
    send(&mut single, &["BLPOP", &keys[0], "0"]);
    send(&mut multi, &["BLPOP", &keys[1], &keys[2], "0"]);
    wait_blocked(&mut writer, 2);
    assert_eq!(writer.cmd(&["ZADD", &keys[0], "1", "m"]), int(1));
    assert_eq!(writer.cmd(&["SET", &keys[1], "s"]), ok());
    assert_eq!(writer.cmd(&["ZADD", &keys[2], "1", "m"]), int(1));
    std::thread::sleep(Duration::from_millis(100));
    wait_blocked(&mut writer, 2);
    assert_eq!(writer.cmd(&["DEL", &keys[0], &keys[1], &keys[2]]), int(3));
    assert_eq!(writer.cmd(&["RPUSH", &keys[0], "a"]), int(1));
    assert_eq!(single.read(), Some(popped(&keys[0], "a")));
    assert_eq!(writer.cmd(&["RPUSH", &keys[2], "b"]), int(1));
    assert_eq!(multi.read(), Some(popped(&keys[2], "b")));
}

/// Polls INFO without pausing until it reports `n` blocked clients, so what
/// follows comes as soon after the client shows as blocked as it can.
fn spin_until_blocked(raw: &mut Raw, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while raw.info_int("clients", "blocked_clients") != n {
        assert!(Instant::now() < deadline, "expected {n} blocked clients");
    }
}

#[test]
fn a_client_shows_as_blocked_only_once_every_shard_waits_for_it() {
    // In Redis the attempt and the blocking are one step: once INFO or
    // CLIENT LIST shows a client as blocked, a write of another type onto
    // one of its keys finds it waiting and leaves it blocked. Here keys
    // alternating between shards make its first attempt hop from shard to
    // shard many times, so a client shown as blocked too early would still
    // be trying its last key when the write arrives, and fail on it.
    let server = Server::start(SHARDS, &[]);
    let per_shard: Vec<Vec<String>> = (0..SHARDS)
        .map(|s| keys_on_shard("shown", s, SHARDS, 100))
        .collect();
    let keys: Vec<&str> = (0..100)
        .flat_map(|i| per_shard.iter().map(move |k| k[i].as_str()))
        .collect();
    let last = keys[keys.len() - 1];
    let mut writer = server.raw();
    let mut waiter = server.raw();
    for round in 0..5 {
        let mut cmd = vec!["BLPOP"];
        cmd.extend(&keys);
        cmd.push("0");
        send(&mut waiter, &cmd);
        spin_until_blocked(&mut writer, 1);
        assert_eq!(writer.cmd(&["SET", last, "s"]), ok(), "round {round}");
        std::thread::sleep(Duration::from_millis(20));
        wait_blocked(&mut writer, 1);
        assert_eq!(writer.cmd(&["DEL", last]), int(1));
        assert_eq!(writer.cmd(&["RPUSH", last, "v"]), int(1));
        assert_eq!(waiter.read(), Some(popped(last, "v")), "round {round}");
        wait_blocked(&mut writer, 0);
    }
}

#[test]
fn rename_copy_and_move_onto_a_waited_key_wake_it() {
    let server = Server::start(SHARDS, &[]);
    let [waited, source, _] = [0, 1, 2].map(|i| one_per_shard("onto")[i].clone());
    let mut writer = server.raw();
    let mut waiter = server.raw();
    for (setup, wake) in [
        ("RENAME", vec!["RENAME", source.as_str(), waited.as_str()]),
        ("COPY", vec!["COPY", source.as_str(), waited.as_str()]),
    ] {
        send(&mut waiter, &["BLPOP", &waited, "0"]);
        wait_blocked(&mut writer, 1);
        assert_eq!(writer.cmd(&["RPUSH", &source, setup]), int(1));
        writer.cmd(&wake);
        assert_eq!(waiter.read(), Some(popped(&waited, setup)));
        writer.cmd(&["DEL", &source]);
    }
    // MOVE from another database.
    send(&mut waiter, &["BLPOP", &waited, "0"]);
    wait_blocked(&mut writer, 1);
    assert_eq!(writer.cmd(&["SELECT", "1"]), ok());
    assert_eq!(writer.cmd(&["RPUSH", &waited, "moved"]), int(1));
    assert_eq!(writer.cmd(&["MOVE", &waited, "0"]), int(1));
    assert_eq!(waiter.read(), Some(popped(&waited, "moved")));
}

#[test]
fn waits_are_per_database() {
    let server = Server::start(SHARDS, &[]);
    let key = keys_on_shard("db", 1, SHARDS, 1).remove(0);
    let mut waiter = server.raw();
    let mut writer = server.raw();
    assert_eq!(waiter.cmd(&["SELECT", "2"]), ok());
    send(&mut waiter, &["BLPOP", &key, "0"]);
    wait_blocked(&mut writer, 1);
    assert_eq!(writer.cmd(&["RPUSH", &key, "db0"]), int(1));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(writer.cmd(&["LLEN", &key]), int(1), "db 0 is not waited on");
    assert_eq!(writer.cmd(&["SELECT", "2"]), ok());
    assert_eq!(writer.cmd(&["RPUSH", &key, "db2"]), int(1));
    assert_eq!(waiter.read(), Some(popped(&key, "db2")));
}

#[test]
fn blmove_moves_across_shards_when_the_source_gets_data() {
    let server = Server::start(SHARDS, &[]);
    let [src, dst, third] = [0, 1, 2].map(|i| one_per_shard("mv")[i].clone());
    let mut writer = server.raw();
    let mut mover = server.raw();
    send(&mut mover, &["BLMOVE", &src, &dst, "LEFT", "RIGHT", "0"]);
    wait_blocked(&mut writer, 1);
    assert_eq!(writer.cmd(&["RPUSH", &src, "a", "b"]), int(2));
    assert_eq!(mover.read(), Some(Reply::bulk("a")));
    assert_eq!(writer.cmd(&["LRANGE", &dst, "0", "-1"]), bulks(&["a"]));
    assert_eq!(writer.cmd(&["LRANGE", &src, "0", "-1"]), bulks(&["b"]));
    // BRPOPLPUSH: the tail of the source to the head of the destination.
    assert_eq!(writer.cmd(&["DEL", &src]), int(1));
    send(&mut mover, &["BRPOPLPUSH", &src, &third, "0"]);
    wait_blocked(&mut writer, 1);
    assert_eq!(writer.cmd(&["LPUSH", &src, "y", "x"]), int(2));
    assert_eq!(mover.read(), Some(Reply::bulk("y")));
    assert_eq!(writer.cmd(&["LRANGE", &third, "0", "-1"]), bulks(&["y"]));
    // Immediate and timeout answers.
    assert_eq!(
        mover.cmd(&["BLMOVE", &src, &dst, "RIGHT", "LEFT", "0"]),
        Reply::bulk("x")
    );
    assert_eq!(
        mover.cmd(&["BLMOVE", &src, &dst, "RIGHT", "LEFT", "0.05"]),
        Reply::Nil
    );
    assert_eq!(
        mover.cmd(&["BLMOVE", &src, &dst, "UP", "LEFT", "0"]),
        err("ERR syntax error")
    );
}

#[test]
fn blmove_to_a_destination_of_another_type_fails_when_served() {
    // Redis 7.0: the waiter gets WRONGTYPE once the source has data, and
    // the element stays in the source.
    let server = Server::start(SHARDS, &[]);
    let same_shard = keys_on_shard("wt", 0, SHARDS, 2);
    let other_shard = keys_on_shard("wt", 1, SHARDS, 1).remove(0);
    let mut writer = server.raw();
    let mut mover = server.raw();
    for (src, dst) in [
        (&same_shard[0], &same_shard[1]),
        (&same_shard[0], &other_shard),
    ] {
        assert_eq!(writer.cmd(&["SET", dst, "string"]), ok());
        send(&mut mover, &["BLMOVE", src, dst, "LEFT", "LEFT", "0"]);
        wait_blocked(&mut writer, 1);
        assert_eq!(writer.cmd(&["RPUSH", src, "v"]), int(1));
        assert_eq!(
            mover.read(),
            Some(err(
                "WRONGTYPE Operation against a key holding the wrong kind of value"
            ))
        );
        assert_eq!(writer.cmd(&["LRANGE", src, "0", "-1"]), bulks(&["v"]));
        assert_eq!(writer.cmd(&["DEL", src, dst]), int(2));
    }
}

#[test]
fn blmpop_takes_up_to_count_from_the_key_that_got_data() {
    let server = Server::start(SHARDS, &[]);
    let keys = one_per_shard("mp");
    let mut writer = server.raw();
    let mut popper = server.raw();
    send(
        &mut popper,
        &[
            "BLMPOP", "0", "3", &keys[0], &keys[1], &keys[2], "RIGHT", "COUNT", "2",
        ],
    );
    wait_blocked(&mut writer, 1);
    assert_eq!(writer.cmd(&["RPUSH", &keys[2], "1", "2", "3"]), int(3));
    let expected = Reply::Array(vec![Reply::bulk(&keys[2]), bulks(&["3", "2"])]);
    assert_eq!(popper.read(), Some(expected));
    assert_eq!(writer.cmd(&["LRANGE", &keys[2], "0", "-1"]), bulks(&["1"]));
    assert_eq!(
        popper.cmd(&["BLMPOP", "0", "1", &keys[2], "LEFT", "COUNT", "5"]),
        Reply::Array(vec![Reply::bulk(&keys[2]), bulks(&["1"])])
    );
    assert_eq!(
        popper.cmd(&["BLMPOP", "0.05", "2", &keys[0], &keys[1], "LEFT"]),
        Reply::Nil
    );
    assert_eq!(
        popper.cmd(&["BLMPOP", "0", "0", &keys[0], "LEFT"]),
        err("ERR numkeys should be greater than 0")
    );
    assert_eq!(
        popper.cmd(&["BLMPOP", "x", "1", &keys[0], "LEFT", "COUNT", "0"]),
        err("ERR count should be greater than 0"),
        "the timeout is read last"
    );
    assert_eq!(
        writer.cmd(&["COMMAND", "GETKEYS", "BLMPOP", "0", "2", "a", "b", "LEFT"]),
        bulks(&["a", "b"])
    );
}

#[test]
fn a_moved_element_serves_the_destinations_waiters_too() {
    let server = Server::start(SHARDS, &[]);
    let [a, b, _] = [0, 1, 2].map(|i| one_per_shard("chain")[i].clone());
    let mut writer = server.raw();
    let mut mover = server.raw();
    let mut popper = server.raw();
    send(&mut mover, &["BLMOVE", &a, &b, "LEFT", "LEFT", "0"]);
    wait_blocked(&mut writer, 1);
    send(&mut popper, &["BLPOP", &b, "0"]);
    wait_blocked(&mut writer, 2);
    assert_eq!(writer.cmd(&["RPUSH", &a, "hop"]), int(1));
    assert_eq!(mover.read(), Some(Reply::bulk("hop")));
    assert_eq!(popper.read(), Some(popped(&b, "hop")));
    assert_eq!(writer.cmd(&["EXISTS", &a, &b]), int(0));
}

#[test]
fn transactions_never_block_and_are_served_after_they_end() {
    let server = Server::start(SHARDS, &[]);
    let [a, b, c] = [0, 1, 2].map(|i| one_per_shard("tx")[i].clone());
    let mut client = server.raw();
    // Inside EXEC a blocking command is its immediate attempt, across shards too.
    let replies = client.pipeline(&[
        args(&["MULTI"]),
        args(&["RPUSH", &b, "x"]),
        args(&["BLPOP", &a, &b, "0"]),
        args(&["BLPOP", &a, &b, "0"]),
        args(&["BLMOVE", &a, &c, "LEFT", "LEFT", "0"]),
        args(&["EXEC"]),
    ]);
    assert_eq!(
        replies[5],
        Reply::Array(vec![int(1), popped(&b, "x"), Reply::Nil, Reply::Nil])
    );
    // A waiter on a key a cross-shard transaction pushes and pops gets
    // nothing from it: it is served after EXEC, with what is left.
    let mut waiter = server.raw();
    send(&mut waiter, &["BLPOP", &a, "0"]);
    wait_blocked(&mut client, 1);
    let replies = client.pipeline(&[
        args(&["MULTI"]),
        args(&["RPUSH", &a, "inside"]),
        args(&["SET", &c, "other shard"]),
        args(&["LPOP", &a]),
        args(&["RPUSH", &a, "left"]),
        args(&["EXEC"]),
    ]);
    assert_eq!(
        replies[5],
        Reply::Array(vec![int(1), ok(), Reply::bulk("inside"), int(1)])
    );
    assert_eq!(waiter.read(), Some(popped(&a, "left")));
}

#[test]
fn swapdb_serves_waiters_from_what_their_database_holds_now() {
    let server = Server::start(SHARDS, &[]);
    let key = keys_on_shard("swap", 2, SHARDS, 1).remove(0);
    let mut writer = server.raw();
    let mut waiter = server.raw();
    assert_eq!(writer.cmd(&["RPUSH", &key, "from-db0"]), int(1));
    assert_eq!(waiter.cmd(&["SELECT", "1"]), ok());
    send(&mut waiter, &["BLPOP", &key, "0"]);
    wait_blocked(&mut writer, 1);
    assert_eq!(writer.cmd(&["SWAPDB", "0", "1"]), ok());
    assert_eq!(waiter.read(), Some(popped(&key, "from-db0")));
    assert_eq!(writer.cmd(&["EXISTS", &key]), int(0));
}

#[test]
fn sorted_set_pops_wait_for_members() {
    let server = Server::start(SHARDS, &[]);
    let keys = one_per_shard("z");
    let mut writer = server.raw();
    let mut min = server.raw();
    let mut max = server.raw();
    let mut multi = server.raw();
    send(&mut min, &["BZPOPMIN", &keys[0], &keys[1], "0"]);
    wait_blocked(&mut writer, 1);
    send(&mut max, &["BZPOPMAX", &keys[2], "0"]);
    wait_blocked(&mut writer, 2);
    send(
        &mut multi,
        &["BZMPOP", "0", "2", &keys[0], &keys[2], "MAX", "COUNT", "2"],
    );
    wait_blocked(&mut writer, 3);
    // A list under a waited key wakes no sorted-set waiter.
    assert_eq!(writer.cmd(&["RPUSH", &keys[2], "list"]), int(1));
    std::thread::sleep(Duration::from_millis(100));
    wait_blocked(&mut writer, 3);
    assert_eq!(writer.cmd(&["DEL", &keys[2]]), int(1));
    assert_eq!(
        writer.cmd(&["ZADD", &keys[1], "1.5", "m", "2", "n"]),
        int(2)
    );
    assert_eq!(min.read(), Some(bulks(&[&keys[1], "m", "1.5"])));
    assert_eq!(
        writer.cmd(&["ZADD", &keys[2], "1", "a", "2", "b", "3", "c"]),
        int(3)
    );
    // First come, first served: BZPOPMAX, then BZMPOP with what is left.
    assert_eq!(max.read(), Some(bulks(&[&keys[2], "c", "3"])));
    let pairs = Reply::Array(vec![bulks(&["b", "2"]), bulks(&["a", "1"])]);
    assert_eq!(
        multi.read(),
        Some(Reply::Array(vec![Reply::bulk(&keys[2]), pairs]))
    );
    assert_eq!(writer.cmd(&["EXISTS", &keys[2]]), int(0));
    // RESP3: the score is a double.
    assert!(matches!(min.cmd(&["HELLO", "3"]), Reply::Map(_)));
    send(&mut min, &["BZPOPMAX", &keys[0], "0"]);
    wait_blocked(&mut writer, 1);
    assert_eq!(writer.cmd(&["ZADD", &keys[0], "2.5", "x"]), int(1));
    assert_eq!(
        min.read(),
        Some(Reply::Array(vec![
            Reply::bulk(&keys[0]),
            Reply::bulk("x"),
            Reply::Double("2.5".into())
        ]))
    );
    assert_eq!(
        writer.cmd(&["BZMPOP", "0", "1", &keys[0], "LEFT"]),
        err("ERR syntax error")
    );
}

#[test]
fn a_waiter_with_keys_on_several_shards_keeps_its_turn() {
    // It is woken, then retries from its own shard; the waiter behind it
    // (whose key is its only one) must not take the element meanwhile.
    let server = Server::start(SHARDS, &[]);
    let [a, b, _] = [0, 1, 2].map(|i| one_per_shard("turn")[i].clone());
    let mut writer = server.raw();
    let mut first = server.raw();
    let mut second = server.raw();
    for round in 0..5 {
        send(&mut first, &["BLPOP", &a, &b, "0"]);
        wait_blocked(&mut writer, 1);
        send(&mut second, &["BRPOP", &b, "0"]);
        wait_blocked(&mut writer, 2);
        let value = format!("first-{round}");
        assert_eq!(writer.cmd(&["RPUSH", &b, &value]), int(1));
        assert_eq!(first.read(), Some(popped(&b, &value)));
        wait_blocked(&mut writer, 1);
        assert_eq!(writer.cmd(&["RPUSH", &b, "second"]), int(1));
        assert_eq!(second.read(), Some(popped(&b, "second")));
    }
}

#[test]
fn a_single_shard_server_blocks_and_serves_too() {
    let server = Server::start(1, &[]);
    let mut writer = server.raw();
    let mut a = server.raw();
    let mut b = server.raw();
    send(&mut a, &["BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"]);
    wait_blocked(&mut writer, 1);
    send(&mut b, &["BLPOP", "other", "dst", "0"]);
    wait_blocked(&mut writer, 2);
    assert_eq!(writer.cmd(&["RPUSH", "src", "x"]), int(1));
    assert_eq!(a.read(), Some(Reply::bulk("x")));
    assert_eq!(b.read(), Some(popped("dst", "x")));
    assert_eq!(a.cmd(&["BZPOPMIN", "z", "0.05"]), Reply::Nil);
    wait_blocked(&mut writer, 0);
}
