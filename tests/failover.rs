//! FAILOVER, black-box: a master hands its role to a replica without
//! losing an acknowledged write, ember to ember and with redis-server
//! 7.0.15 on either side (a redis-server master failing over to an ember
//! replica is the migration path); its waiting, timeout, FORCE and ABORT;
//! and its error replies, compared with redis-server's.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::reference::Redis;
use common::{wait_until, Raw, Reply, Server};

fn redis_server(extra: &[&str]) -> Option<Redis> {
    let dir = common::temp_dir();
    let mut args = vec![
        "--dir".to_string(),
        dir.display().to_string(),
        "--repl-diskless-sync-delay".into(),
        "0".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let redis = Redis::start(&args);
    if redis.is_none() {
        eprintln!("redis-server is not installed or did not start: test skipped (CI installs it)");
    }
    redis
}

fn replicaof(raw: &mut Raw, port: u16) {
    assert_eq!(
        raw.cmd(&["REPLICAOF", "127.0.0.1", &port.to_string()]),
        Reply::ok()
    );
}

fn field(raw: &mut Raw, section: &str, name: &str) -> String {
    raw.info_field(section, name).unwrap_or_default()
}

/// Waits until `replica`'s link is up and it applied `master`'s offset.
fn wait_synced(master: &mut Raw, replica: &mut Raw) {
    let synced = wait_until(Duration::from_secs(20), || {
        let sent = field(master, "replication", "master_repl_offset");
        field(replica, "replication", "master_link_status") == "up"
            && field(replica, "replication", "slave_repl_offset") == sent
    });
    assert!(
        synced,
        "not synced: master {:?}, replica {:?} {:?}",
        master.info_field("replication", "master_repl_offset"),
        replica.info_field("replication", "slave_repl_offset"),
        replica.info_field("replication", "master_link_status"),
    );
}

/// Waits until `raw`'s `master_failover_state` is `state`.
fn wait_failover_state(raw: &mut Raw, state: &str) {
    let reached = wait_until(Duration::from_secs(20), || {
        field(raw, "replication", "master_failover_state") == state
    });
    assert!(
        reached,
        "master_failover_state {:?}, wanted {state}",
        raw.info_field("replication", "master_failover_state")
    );
}

/// Waits until `master` counts its replica online (a diskless sync's
/// replica is, once it acknowledged the file).
fn wait_online(master: &mut Raw) {
    let online = wait_until(Duration::from_secs(10), || {
        field(master, "replication", "slave0").contains("state=online")
    });
    assert!(online, "{:?}", master.info_field("replication", "slave0"));
}

fn role(raw: &mut Raw) -> String {
    raw.cmd(&["ROLE"]).items()[0].text()
}

/// Strings in two databases and a list.
fn fill(raw: &mut Raw) {
    for db in ["0", "2"] {
        raw.cmd(&["SELECT", db]);
        for i in 0..100 {
            raw.cmd(&["SET", &format!("k:{db}:{i}"), &i.to_string()]);
        }
        raw.cmd(&["RPUSH", "list", "a", "b", db]);
    }
    raw.cmd(&["SELECT", "0"]);
}

/// Every key of every database with its value.
fn keyspace(raw: &mut Raw) -> BTreeMap<(usize, Vec<u8>), String> {
    common::dump_keyspace(raw, |raw, key| {
        match raw.cmd_bytes(&[b"TYPE", key]).text().as_str() {
            "string" => raw.cmd_bytes(&[b"GET", key]).text(),
            "list" => format!("{:?}", raw.cmd_bytes(&[b"LRANGE", key, b"0", b"-1"])),
            other => other.to_string(),
        }
    })
}

fn stop(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

/// Writes `w:<n>` until refused; returns the writes acknowledged.
fn writer(port: u16) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut c = Raw::connect(port);
        let mut acked = Vec::new();
        for n in 0.. {
            let key = format!("w:{n}");
            match c.cmd(&["SET", &key, "v"]) {
                Reply::Simple(_) => acked.push(key),
                _ => break,
            }
        }
        acked
    })
}

#[test]
fn failover_errors_match_redis() {
    let Some(redis) = redis_server(&[]) else {
        return;
    };
    let ember = Server::start(2, &[]);
    let (mut e, mut r) = (ember.raw(), Raw::connect(redis.port));
    let alone: &[&[&str]] = &[
        &["FAILOVER", "ABORT"],
        &["FAILOVER"],
        &["FAILOVER", "TO", "127.0.0.1", "1"],
        &["FAILOVER", "TIMEOUT", "0"],
        &["FAILOVER", "TIMEOUT", "-1"],
        &["FAILOVER", "TIMEOUT", "abc"],
        &["FAILOVER", "TO", "h", "abc"],
        &["FAILOVER", "bogus"],
        &["FAILOVER", "ABORT", "x"],
        &["FAILOVER", "TIMEOUT", "5", "TIMEOUT", "6"],
        &["FAILOVER", "FORCE", "FORCE"],
        &["FAILOVER", "TO", "h"],
    ];
    for cmd in alone {
        assert_eq!(e.cmd(cmd), r.cmd(cmd), "{cmd:?} without replicas");
    }
    // With one replica each (its own kind).
    let ember_replica = Server::start(1, &[]);
    let mut er = ember_replica.raw();
    replicaof(&mut er, ember.port);
    let Some(redis_replica) = redis_server(&["--replicaof", "127.0.0.1", &redis.port.to_string()])
    else {
        return;
    };
    let mut rr = Raw::connect(redis_replica.port);
    wait_synced(&mut e, &mut er);
    wait_synced(&mut r, &mut rr);
    let with = |port: u16| -> Vec<Vec<String>> {
        let port = port.to_string();
        [
            vec!["FAILOVER", "TO", "127.0.0.1", &port, "FORCE"],
            vec!["FAILOVER", "FORCE", "TIMEOUT", "100"],
            vec!["FAILOVER", "TO", "127.0.0.1", "1"],
            vec!["FAILOVER", "TO", "localhost", &port],
            vec!["FAILOVER", "ABORT"],
        ]
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect()
    };
    for (ec, rc) in with(ember_replica.port)
        .iter()
        .zip(with(redis_replica.port))
    {
        let ec: Vec<&str> = ec.iter().map(String::as_str).collect();
        let rc: Vec<&str> = rc.iter().map(String::as_str).collect();
        assert_eq!(e.cmd(&ec), r.cmd(&rc), "{rc:?} with a replica");
    }
    let on_replica = ["FAILOVER"];
    assert_eq!(
        er.cmd(&on_replica),
        rr.cmd(&on_replica),
        "sent to a replica"
    );
}

#[test]
fn an_ember_master_hands_over_to_an_ember_replica_without_losing_a_write() {
    let master = Server::start(3, &[]);
    let target = Server::start(2, &[]);
    let other = Server::start(1, &[]);
    let (mut m, mut t, mut o) = (master.raw(), target.raw(), other.raw());
    fill(&mut m);
    replicaof(&mut t, master.port);
    replicaof(&mut o, master.port);
    wait_synced(&mut m, &mut t);
    wait_synced(&mut m, &mut o);
    // Writes go on while the master hands over: each one it acknowledged
    // must be on the new master; after the handoff they are refused.
    let writing = writer(master.port);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        m.cmd(&["FAILOVER", "TO", "127.0.0.1", &target.port.to_string()]),
        Reply::ok()
    );
    wait_failover_state(&mut m, "no-failover");
    let acked = writing.join().unwrap();
    assert!(!acked.is_empty());
    assert_eq!(role(&mut m), "slave");
    assert_eq!(role(&mut t), "master");
    for key in &acked {
        assert_eq!(
            t.cmd(&["GET", key]),
            Reply::bulk("v"),
            "{key} was acknowledged"
        );
    }
    assert_eq!(
        m.cmd(&["SET", "x", "1"]),
        Reply::err("READONLY You can't write against a read only replica.")
    );
    // The old master continued the target's history, and so does the
    // other replica once pointed at it: no full sync.
    replicaof(&mut o, target.port);
    t.cmd(&["SET", "after", "1"]);
    wait_synced(&mut t, &mut m);
    wait_synced(&mut t, &mut o);
    assert_eq!(t.info_int("stats", "sync_full"), 0);
    assert_eq!(t.info_int("stats", "sync_partial_ok"), 2);
    let want = keyspace(&mut t);
    assert_eq!(keyspace(&mut m), want);
    assert_eq!(keyspace(&mut o), want);
    assert_eq!(
        field(&mut t, "replication", "master_replid2"),
        field(&mut m, "replication", "master_replid2"),
        "the old history is the second ID of both"
    );
}

#[test]
fn a_failover_waits_for_its_target_times_out_and_can_be_aborted() {
    let master = Server::start(2, &[]);
    let replica = Server::start(1, &[]);
    let (mut m, mut r) = (master.raw(), replica.raw());
    replicaof(&mut r, master.port);
    wait_synced(&mut m, &mut r);
    let to = ["FAILOVER", "TO", "127.0.0.1", &replica.port.to_string()];
    // A stopped replica never catches up.
    stop(replica.pid(), "-STOP");
    m.cmd(&["SET", "before", "1"]);
    let mut waiting = to.to_vec();
    waiting.extend(["TIMEOUT", "60000"]);
    assert_eq!(m.cmd(&waiting), Reply::ok());
    assert_eq!(
        field(&mut m, "replication", "master_failover_state"),
        "waiting-for-sync"
    );
    assert_eq!(m.cmd(&to), Reply::err("ERR FAILOVER already in progress."));
    assert_eq!(
        m.cmd(&["REPLICAOF", "NO", "ONE"]),
        Reply::err("ERR REPLICAOF not allowed while failing over.")
    );
    assert_eq!(m.cmd(&["GET", "before"]), Reply::bulk("1"), "reads go on");
    // A write waits, CLIENT UNPAUSE or not, until the failover ends.
    let mut w = master.raw();
    w.send_cmd(&[b"SET", b"during", b"1"]);
    assert_eq!(m.cmd(&["CLIENT", "UNPAUSE"]), Reply::ok());
    w.set_read_timeout(Duration::from_millis(300));
    assert_eq!(w.read(), None, "the write waits");
    assert_eq!(m.cmd(&["FAILOVER", "ABORT"]), Reply::ok());
    assert_eq!(
        field(&mut m, "replication", "master_failover_state"),
        "no-failover"
    );
    w.set_read_timeout(Duration::from_secs(10));
    assert_eq!(w.read(), Some(Reply::ok()));
    assert_eq!(
        m.cmd(&["FAILOVER", "ABORT"]),
        Reply::err("ERR No failover in progress.")
    );
    // Without FORCE, the timeout gives up.
    let mut short = to.to_vec();
    short.extend(["TIMEOUT", "200"]);
    assert_eq!(m.cmd(&short), Reply::ok());
    wait_failover_state(&mut m, "no-failover");
    assert_eq!(role(&mut m), "master");
    assert_eq!(m.cmd(&["SET", "after", "1"]), Reply::ok());
    stop(replica.pid(), "-CONT");
    wait_synced(&mut m, &mut r);
    // With FORCE it hands over anyway once the timeout passed.
    stop(replica.pid(), "-STOP");
    let mut forced = to.to_vec();
    forced.extend(["TIMEOUT", "200", "FORCE"]);
    assert_eq!(m.cmd(&forced), Reply::ok());
    wait_failover_state(&mut m, "failover-in-progress");
    assert_eq!(role(&mut m), "slave", "never two masters");
    stop(replica.pid(), "-CONT");
    wait_failover_state(&mut m, "no-failover");
    assert_eq!(role(&mut r), "master");
    wait_synced(&mut r, &mut m);
    assert_eq!(keyspace(&mut m), keyspace(&mut r));
}

#[test]
fn a_redis_master_hands_over_to_an_ember_replica() {
    let Some(redis) = redis_server(&[]) else {
        return;
    };
    let ember = Server::start(2, &[]);
    let (mut m, mut e) = (Raw::connect(redis.port), ember.raw());
    fill(&mut m);
    replicaof(&mut e, redis.port);
    wait_synced(&mut m, &mut e);
    wait_online(&mut m);
    // redis-server waits for the ember replica's ACK of its whole offset,
    // then sends it `PSYNC <replid> <offset> FAILOVER`.
    assert_eq!(
        m.cmd(&["FAILOVER", "TO", "127.0.0.1", &ember.port.to_string()]),
        Reply::ok()
    );
    wait_failover_state(&mut m, "no-failover");
    assert_eq!(role(&mut e), "master");
    assert_eq!(role(&mut m), "slave");
    e.cmd(&["SET", "on-ember", "1"]);
    wait_synced(&mut e, &mut m);
    assert_eq!(m.cmd(&["GET", "on-ember"]), Reply::bulk("1"));
    assert_eq!(e.info_int("stats", "sync_partial_ok"), 1);
    assert_eq!(e.info_int("stats", "sync_full"), 0);
    assert_eq!(keyspace(&mut m), keyspace(&mut e));
}

#[test]
fn an_ember_master_hands_over_to_a_redis_replica() {
    let ember = Server::start(2, &[]);
    let mut e = ember.raw();
    fill(&mut e);
    let Some(redis) = redis_server(&["--replicaof", "127.0.0.1", &ember.port.to_string()]) else {
        return;
    };
    let mut r = Raw::connect(redis.port);
    wait_synced(&mut e, &mut r);
    wait_online(&mut e);
    assert_eq!(
        e.cmd(&["FAILOVER", "TO", "127.0.0.1", &redis.port.to_string()]),
        Reply::ok()
    );
    wait_failover_state(&mut e, "no-failover");
    assert_eq!(role(&mut r), "master");
    assert_eq!(role(&mut e), "slave");
    r.cmd(&["SELECT", "2"]);
    r.cmd(&["SET", "on-redis", "1"]);
    r.cmd(&["SELECT", "0"]);
    wait_synced(&mut r, &mut e);
    e.cmd(&["SELECT", "2"]);
    assert_eq!(e.cmd(&["GET", "on-redis"]), Reply::bulk("1"));
    e.cmd(&["SELECT", "0"]);
    assert_eq!(r.info_int("stats", "sync_partial_ok"), 1);
    assert_eq!(keyspace(&mut e), keyspace(&mut r));
}
