//! UNLINK and the `lazyfree-lazy-*` parameters: large values are freed on
//! the lazy-free thread, not by the shard, as Redis 7.0 frees them, and
//! INFO memory counts them as Redis does.
//!
//! Freezes are checked as the issue asks: the command itself and another
//! client's PING on the same shard are answered within a bound many times
//! what they take now and far below what freeing the value took (a debug
//! build took hundreds of ms to free the 500k-member sets below; a release
//! build 41 ms for 1M members).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::{int, ok, wait_until, Raw, Reply, Server};

/// Members in the big values: enough that freeing them in place takes a
/// debug build far longer than [`QUICK`].
const MEMBERS: usize = 500_000;

/// Far above what UNLINK (or a PING beside it) takes now, a fraction of
/// what freeing the value on the shard took.
const QUICK: Duration = Duration::from_millis(40);

fn load_zset(c: &mut Raw, key: &str) {
    let cmds: Vec<Vec<Vec<u8>>> = (0..MEMBERS / 1000)
        .map(|batch| {
            let mut cmd = vec![b"ZADD".to_vec(), key.as_bytes().to_vec()];
            for i in batch * 1000..(batch + 1) * 1000 {
                cmd.push(i.to_string().into_bytes());
                cmd.push(format!("member:{i}").into_bytes());
            }
            cmd
        })
        .collect();
    assert!(c.pipeline(&cmds).iter().all(|r| matches!(r, Reply::Int(_))));
    assert_eq!(c.int(&["ZCARD", key]), MEMBERS as i64);
}

fn load_set(c: &mut Raw, key: &str) {
    let cmds: Vec<Vec<Vec<u8>>> = (0..MEMBERS / 1000)
        .map(|batch| {
            let mut cmd = vec![b"SADD".to_vec(), key.as_bytes().to_vec()];
            cmd.extend((batch * 1000..(batch + 1) * 1000).map(|i| format!("m{i}").into_bytes()));
            cmd
        })
        .collect();
    assert!(c.pipeline(&cmds).iter().all(|r| matches!(r, Reply::Int(_))));
}

/// Runs `command` on `c` while another connection pings every 2 ms;
/// returns how long the command took and the worst PING wait.
fn timed_with_pings(port: u16, c: &mut Raw, command: &[&str]) -> (Reply, Duration, Duration) {
    let stop = Arc::new(AtomicBool::new(false));
    let pinger = {
        let stop = stop.clone();
        thread::spawn(move || {
            let mut p = Raw::connect(port);
            let mut worst = Duration::ZERO;
            while !stop.load(Ordering::Relaxed) {
                let sent = Instant::now();
                assert_eq!(p.cmd(&["PING"]), Reply::Simple("PONG".into()));
                worst = worst.max(sent.elapsed());
                thread::sleep(Duration::from_millis(2));
            }
            worst
        })
    };
    thread::sleep(Duration::from_millis(50));
    let sent = Instant::now();
    let reply = c.cmd(command);
    let took = sent.elapsed();
    // Long enough for the pings to meet whatever the free does next.
    thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    (reply, took, pinger.join().unwrap())
}

fn freed(c: &mut Raw) -> i64 {
    c.info_int("memory", "lazyfreed_objects")
}

/// Waits for the lazy-free thread to have freed `n` objects in all and
/// have none left pending.
fn wait_freed(c: &mut Raw, n: i64) {
    let done = wait_until(Duration::from_secs(30), || {
        freed(c) >= n && c.info_int("memory", "lazyfree_pending_objects") == 0
    });
    assert!(done, "lazyfreed_objects stayed at {}, wanted {n}", freed(c));
}

/// Asserts that `command` and a PING beside it were both quick, a few
/// times over: one slow run on a busy machine is not the server's doing,
/// every run slow is.
fn assert_quick(server: &Server, c: &mut Raw, load: impl Fn(&mut Raw), command: &[&str]) {
    let mut runs = Vec::new();
    for _ in 0..3 {
        load(c);
        let (reply, took, ping) = timed_with_pings(server.port, c, command);
        assert_eq!(reply, int(1), "{command:?}");
        if took < QUICK && ping < QUICK {
            return;
        }
        runs.push((took, ping));
    }
    panic!("{command:?} (and a PING beside it) took {runs:?}");
}

#[test]
fn unlink_frees_big_values_off_the_shard_and_counts_them() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(freed(&mut c), 0);
    assert_quick(&server, &mut c, |c| load_zset(c, "z"), &["UNLINK", "z"]);
    assert_eq!(c.int(&["EXISTS", "z"]), 0);
    wait_freed(&mut c, 1);
    let after_zsets = freed(&mut c);
    assert_quick(&server, &mut c, |c| load_set(c, "s"), &["UNLINK", "s"]);
    wait_freed(&mut c, after_zsets + 1);
    // Small values are freed in place, as Redis frees them (free effort
    // 64 or less), and not counted.
    let before = freed(&mut c);
    assert_eq!(c.int(&["SADD", "small", "a", "b"]), 2);
    assert_eq!(c.cmd(&["SET", "str", "v"]), ok());
    assert_eq!(c.int(&["UNLINK", "small", "str", "missing"]), 2);
    assert_eq!(freed(&mut c), before);
    // CONFIG RESETSTAT clears the count, as in Redis.
    assert_eq!(c.cmd(&["CONFIG", "RESETSTAT"]), ok());
    assert_eq!(freed(&mut c), 0);
}

#[test]
fn del_frees_in_place_unless_lazyfree_lazy_user_del() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    let want: Vec<Reply> = [
        "lazyfree-lazy-eviction",
        "lazyfree-lazy-expire",
        "lazyfree-lazy-server-del",
        "lazyfree-lazy-user-del",
        "lazyfree-lazy-user-flush",
    ]
    .iter()
    .flat_map(|name| [Reply::bulk(name), Reply::bulk("no")])
    .collect();
    let Reply::Array(got) = c.cmd(&["CONFIG", "GET", "lazyfree*"]) else {
        panic!("CONFIG GET");
    };
    let mut pairs: Vec<(Reply, Reply)> = got
        .chunks(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    pairs.sort_by_key(|(name, _)| name.text());
    assert_eq!(
        pairs
            .into_iter()
            .flat_map(|(n, v)| [n, v])
            .collect::<Vec<_>>(),
        want
    );
    // DEL of a big set: freed in place, not counted (Redis's default).
    load_set(&mut c, "s");
    assert_eq!(c.int(&["DEL", "s"]), 1);
    thread::sleep(Duration::from_millis(100));
    assert_eq!(freed(&mut c), 0);
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"]),
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "lazyfree-lazy-user-del"]),
        Reply::Array(vec![
            Reply::bulk("lazyfree-lazy-user-del"),
            Reply::bulk("yes")
        ])
    );
    assert_quick(&server, &mut c, |c| load_zset(c, "z"), &["DEL", "z"]);
    wait_freed(&mut c, 1);
    assert!(matches!(
        c.cmd(&["CONFIG", "SET", "lazyfree-lazy-user-del", "maybe"]),
        Reply::Error(e) if e.contains("argument must be 'yes' or 'no'")
    ));
}

#[test]
fn server_del_expire_and_flush_free_off_the_shard_when_asked() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    let big = |c: &mut Raw, key: &str| {
        let mut cmd = vec!["SADD".to_string(), key.to_string()];
        cmd.extend((0..1000).map(|i| format!("m{i}")));
        let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        assert_eq!(c.int(&args), 1000);
    };
    // Defaults: a replaced or expired value is freed in place.
    big(&mut c, "a");
    assert_eq!(c.cmd(&["SET", "a", "v"]), ok());
    big(&mut c, "b");
    assert_eq!(c.int(&["PEXPIRE", "b", "1"]), 1);
    thread::sleep(Duration::from_millis(5));
    assert_eq!(c.int(&["EXISTS", "b"]), 0);
    assert_eq!(freed(&mut c), 0);
    // lazyfree-lazy-server-del: SET and RENAME onto a big value.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "lazyfree-lazy-server-del", "yes"]),
        ok()
    );
    big(&mut c, "c");
    assert_eq!(c.cmd(&["SET", "c", "v"]), ok());
    wait_freed(&mut c, 1);
    big(&mut c, "d");
    assert_eq!(c.cmd(&["RENAME", "d", "d2"]), ok());
    assert_eq!(c.cmd(&["RENAME", "d2", "d"]), ok()); // nothing replaced
    big(&mut c, "e");
    assert_eq!(c.cmd(&["RENAME", "d", "e"]), ok());
    wait_freed(&mut c, 2);
    assert_eq!(c.int(&["SCARD", "e"]), 1000);
    // lazyfree-lazy-expire: lazy expiry (the lookup) and the sweep.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "lazyfree-lazy-expire", "yes"]),
        ok()
    );
    assert_eq!(c.int(&["PEXPIRE", "e", "1"]), 1);
    thread::sleep(Duration::from_millis(5));
    assert_eq!(c.int(&["EXISTS", "e"]), 0);
    wait_freed(&mut c, 3);
    big(&mut c, "f");
    assert_eq!(c.int(&["PEXPIRE", "f", "1"]), 1);
    wait_freed(&mut c, 4);
    assert_eq!(c.info_int("stats", "expired_keys"), 3);
    // FLUSHALL counts every key, as Redis's async flush does.
    for i in 0..10 {
        assert_eq!(c.cmd(&["SET", &format!("k{i}"), "v"]), ok());
    }
    assert_eq!(c.cmd(&["FLUSHALL", "ASYNC"]), ok());
    wait_freed(&mut c, 14);
    assert_eq!(c.int(&["DBSIZE"]), 0);
}
