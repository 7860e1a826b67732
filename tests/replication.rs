//! Replication in Redis's protocol, black-box: each pairing with the real
//! redis-server 7.0.15 (skipped politely where none is installed) syncs a
//! keyspace of every type with TTLs, then streams the writes of 4 clients
//! with TTL churn, and the keyspaces are compared key by key (type,
//! deadline, value) and by DBSIZE per database.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::reference::Redis;
use common::{wait_until, Raw, Reply, Rng, Server};

/// Starts a redis-server replica of `master_port` in a fresh directory,
/// with `extra` flags.
fn redis_replica_of(master_port: u16, extra: &[&str]) -> Option<Redis> {
    let dir = common::temp_dir();
    let mut args = vec![
        "--dir".to_string(),
        dir.display().to_string(),
        "--enable-debug-command".into(),
        "yes".into(),
        "--replicaof".into(),
        "127.0.0.1".into(),
        master_port.to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let redis = Redis::start(&args);
    if redis.is_none() {
        eprintln!("redis-server is not installed or did not start: test skipped (CI installs it)");
    }
    redis
}

/// A keyspace with every type, in two databases, some keys with TTLs.
fn fill(c: &mut Raw) {
    for (db, tag) in [("0", "a"), ("2", "b")] {
        c.cmd(&["SELECT", db]);
        for i in 0..50 {
            c.cmd(&["SET", &format!("{tag}:str:{i}"), &format!("v{i}")]);
        }
        c.cmd(&["SET", &format!("{tag}:ttl"), "x", "PX", "100000"]);
        c.cmd(&["RPUSH", &format!("{tag}:list"), "a", "b", "c", "1", "2"]);
        c.cmd(&["HSET", &format!("{tag}:hash"), "f1", "v1", "f2", "2"]);
        c.cmd(&["SADD", &format!("{tag}:iset"), "1", "2", "3"]);
        c.cmd(&["SADD", &format!("{tag}:set"), "x", "y", "z"]);
        c.cmd(&["ZADD", &format!("{tag}:zset"), "1", "m1", "2.5", "m2"]);
        c.cmd(&["XADD", &format!("{tag}:stream"), "1-1", "f", "v"]);
        c.cmd(&["PFADD", &format!("{tag}:hll"), "a", "b", "c"]);
        c.cmd(&["SETBIT", &format!("{tag}:bits"), "100", "1"]);
        c.cmd(&["EXPIRE", &format!("{tag}:list"), "1000"]);
        let big: Vec<String> = (0..300).map(|i| format!("member-{i}")).collect();
        let mut zadd = vec!["ZADD".to_string(), format!("{tag}:bigz")];
        for (i, m) in big.iter().enumerate() {
            zadd.push(i.to_string());
            zadd.push(m.clone());
        }
        let zadd: Vec<&str> = zadd.iter().map(String::as_str).collect();
        c.cmd(&zadd);
    }
    c.cmd(&["SELECT", "0"]);
}

/// 4 clients writing for `for_ms`: every family, TTLs set and expiring,
/// deletes, transactions over several shards.
fn churn(port: u16, for_ms: u64) {
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let mut rng = Rng(w * 7919 + 1);
                let end = common::unix_ms() + for_ms;
                while common::unix_ms() < end {
                    let k = format!("k:{}", rng.below(200));
                    let n = rng.below(40).to_string();
                    match rng.below(12) {
                        0 => c.cmd(&["SET", &k, &n]),
                        1 => c.cmd(&[
                            "SET",
                            &format!("t:{n}"),
                            "v",
                            "PX",
                            &rng.range(1, 300).to_string(),
                        ]),
                        2 => c.cmd(&["INCR", &format!("n:{n}")]),
                        3 => c.cmd(&["LPUSH", &format!("l:{n}"), &k]),
                        4 => c.cmd(&["HSET", &format!("h:{n}"), &k, &n]),
                        5 => c.cmd(&["SADD", &format!("s:{n}"), &k]),
                        6 => c.cmd(&["ZADD", &format!("z:{n}"), &n, &k]),
                        7 => c.cmd(&["DEL", &format!("l:{n}"), &format!("h:{n}")]),
                        8 => c.cmd(&["EXPIRE", &format!("s:{n}"), "1"]),
                        9 => c.cmd(&["MSET", &format!("m:{n}"), "1", &k, "2"]),
                        10 => {
                            c.cmd(&["MULTI"]);
                            c.cmd(&["INCRBYFLOAT", &format!("f:{n}"), "1.5"]);
                            c.cmd(&["SELECT", "3"]);
                            c.cmd(&["SET", &k, "in-db-3"]);
                            c.cmd(&["SELECT", "0"]);
                            c.cmd(&["EXEC"])
                        }
                        _ => c.cmd(&["SPOP", &format!("s:{n}")]),
                    };
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
}

/// Waits out the churn's TTLs and lets a SCAN of every database remove the
/// expired keys, so both sides hold the same keys, deadlines apart.
fn settle(master: &mut Raw) {
    std::thread::sleep(Duration::from_millis(1200));
    for db in 0..16 {
        master.cmd(&["SELECT", &db.to_string()]);
        let mut cursor = "0".to_string();
        loop {
            let reply = master.cmd(&["SCAN", &cursor, "COUNT", "1000"]).items();
            cursor = reply[0].text();
            if cursor == "0" {
                break;
            }
        }
    }
    master.cmd(&["SELECT", "0"]);
}

/// Waits until the replica acknowledged everything the master sent.
fn wait_caught_up(master: &mut Raw, replica: &mut Raw) {
    let caught_up = wait_until(Duration::from_secs(20), || {
        let link = replica.info_field("replication", "master_link_status");
        let sent = master.info_int("replication", "master_repl_offset");
        let got = replica
            .info_field("replication", "slave_repl_offset")
            .and_then(|o| o.parse::<i64>().ok());
        link.as_deref() == Some("up") && got == Some(sent)
    });
    assert!(
        caught_up,
        "replica did not catch up: master {:?}, replica {:?} {:?}",
        master.info_field("replication", "master_repl_offset"),
        replica.info_field("replication", "slave_repl_offset"),
        replica.info_field("replication", "master_link_status"),
    );
}

/// Both sides hold the same keys, key by key: type, deadline, value.
fn same_keyspace(a: &mut Raw, b: &mut Raw) {
    let (want, got) = (dump(a), dump(b));
    let keys: BTreeSet<_> = want.keys().chain(got.keys()).collect();
    let diffs: Vec<String> = keys
        .into_iter()
        .filter(|k| want.get(*k) != got.get(*k))
        .take(10)
        .map(|k| {
            format!(
                "db{} {:?}: master {:?}, replica {:?}",
                k.0,
                String::from_utf8_lossy(&k.1),
                want.get(k),
                got.get(k)
            )
        })
        .collect();
    assert!(
        diffs.is_empty(),
        "{} keys, differences:\n{}",
        want.len(),
        diffs.join("\n")
    );
    for db in 0..16 {
        let db = db.to_string();
        a.cmd(&["SELECT", &db]);
        b.cmd(&["SELECT", &db]);
        assert_eq!(a.cmd(&["DBSIZE"]), b.cmd(&["DBSIZE"]), "DBSIZE of db {db}");
    }
    a.cmd(&["SELECT", "0"]);
    b.cmd(&["SELECT", "0"]);
}

fn text(reply: &Reply) -> String {
    match reply {
        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Reply::Simple(s) => s.clone(),
        Reply::Int(n) => n.to_string(),
        Reply::Nil => "(nil)".into(),
        Reply::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(","),
        other => format!("{other:?}"),
    }
}

fn strings(reply: Reply) -> Vec<String> {
    reply.items().iter().map(text).collect()
}

/// Every key of every database: type, deadline and value.
fn dump(raw: &mut Raw) -> BTreeMap<(usize, Vec<u8>), String> {
    common::dump_keyspace(raw, describe)
}

fn describe(raw: &mut Raw, key: &[u8]) -> String {
    let kind = raw.cmd_bytes(&[b"TYPE", key]).text();
    let deadline = raw.cmd_bytes(&[b"PEXPIRETIME", key]).int();
    let value = match kind.as_str() {
        "string" => text(&raw.cmd_bytes(&[b"GET", key])),
        "list" => strings(raw.cmd_bytes(&[b"LRANGE", key, b"0", b"-1"])).join(","),
        "set" => {
            let mut members = strings(raw.cmd_bytes(&[b"SMEMBERS", key]));
            members.sort();
            members.join(",")
        }
        "zset" => strings(raw.cmd_bytes(&[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"])).join(","),
        "hash" => {
            let flat = strings(raw.cmd_bytes(&[b"HGETALL", key]));
            let mut fields: Vec<String> = flat.chunks(2).map(|p| p.join("=")).collect();
            fields.sort();
            fields.join(",")
        }
        "stream" => text(&raw.cmd_bytes(&[b"XRANGE", key, b"-", b"+"])),
        other => format!("?{other}"),
    };
    format!("{kind} pexpiretime={deadline} {value}")
}

fn redis_replica_of_ember(shards: usize, replica_flags: &[&str], master_flags: &[&str]) {
    let mut flags = vec!["--enable-debug-command", "yes"];
    flags.extend_from_slice(master_flags);
    let master = Server::start(shards, &flags);
    let mut m = master.raw();
    fill(&mut m);
    let Some(redis) = redis_replica_of(master.port, replica_flags) else {
        return;
    };
    let mut r = Raw::connect(redis.port);
    wait_caught_up(&mut m, &mut r);
    same_keyspace(&mut m, &mut r);
    assert_eq!(r.cmd(&["GET", "a:str:7"]), Reply::bulk("v7"));
    let ttl = r.int(&["PTTL", "a:ttl"]);
    assert!(ttl > 90_000 && ttl <= 100_000, "TTL carried over: {ttl}");
    churn(master.port, 1500);
    settle(&mut m);
    wait_caught_up(&mut m, &mut r);
    same_keyspace(&mut m, &mut r);
    assert_eq!(m.info_int("replication", "connected_slaves"), 1);
    let line = m.info_field("replication", "slave0").unwrap();
    assert!(line.contains("state=online"), "{line}");
}

#[test]
fn redis_replica_of_ember_diskless() {
    redis_replica_of_ember(3, &[], &[]);
}

#[test]
fn redis_replica_of_ember_from_disk_one_shard() {
    redis_replica_of_ember(1, &[], &["--repl-diskless-sync", "no"]);
}

#[test]
fn a_dropped_link_continues_from_the_backlog() {
    let master = Server::start(2, &["--enable-debug-command", "yes"]);
    let mut m = master.raw();
    fill(&mut m);
    let Some(redis) = redis_replica_of(master.port, &[]) else {
        return;
    };
    let mut r = Raw::connect(redis.port);
    wait_caught_up(&mut m, &mut r);
    m.cmd(&["SET", "before", "1"]);
    wait_caught_up(&mut m, &mut r);
    let full = m.info_int("stats", "sync_full");
    // The replica drops its master's connection and reconnects at once.
    r.cmd(&["CLIENT", "KILL", "TYPE", "master"]);
    m.cmd(&["SET", "during", "2"]);
    wait_caught_up(&mut m, &mut r);
    assert_eq!(r.cmd(&["GET", "during"]), Reply::bulk("2"));
    assert_eq!(
        m.info_int("stats", "sync_full"),
        full,
        "no second full sync"
    );
    assert!(m.info_int("stats", "sync_partial_ok") >= 1);
    same_keyspace(&mut m, &mut r);
}

#[test]
fn replconf_answers_as_redis() {
    let master = Server::start(1, &[]);
    let mut m = master.raw();
    assert_eq!(m.cmd(&["REPLCONF", "listening-port", "6380"]), Reply::ok());
    assert_eq!(
        m.cmd(&["REPLCONF", "capa", "eof", "capa", "psync2"]),
        Reply::ok()
    );
    assert_eq!(m.cmd(&["REPLCONF", "capa"]), Reply::err("ERR syntax error"));
    assert_eq!(
        m.cmd(&["REPLCONF", "nope", "1"]),
        Reply::err("ERR Unrecognized REPLCONF option: nope")
    );
    // An ACK from a client that is not a replica gets no answer.
    m.send_cmd(&[b"REPLCONF", b"ACK", b"10"]);
    assert_eq!(m.cmd(&["PING"]), Reply::Simple("PONG".into()));
}

#[test]
fn replconf_errors_match_redis() {
    let Some(redis) = Redis::or_skip("replconf_errors_match_redis") else {
        return;
    };
    let master = Server::start(1, &[]);
    let (mut e, mut r) = (master.raw(), Raw::connect(redis.port));
    for cmd in [
        vec!["REPLCONF", "listening-port", "6380"],
        vec!["REPLCONF", "capa"],
        vec!["REPLCONF", "bogus", "x"],
        vec!["REPLCONF", "capa", "eof", "capa", "psync2"],
        vec!["REPLCONF", "ip-address", "10.0.0.1"],
    ] {
        assert_eq!(e.cmd(&cmd), r.cmd(&cmd), "{cmd:?}");
    }
}

/// A redis-server master (no delay before a diskless sync, as Redis's
/// own tests set it).
fn redis_master() -> Option<Redis> {
    let dir = common::temp_dir();
    let redis = Redis::start(&[
        "--dir",
        &dir.display().to_string(),
        "--enable-debug-command",
        "yes",
        "--repl-diskless-sync-delay",
        "0",
    ]);
    if redis.is_none() {
        eprintln!("redis-server is not installed or did not start: test skipped (CI installs it)");
    }
    redis
}

/// An ember replica of `master_port`.
fn ember_replica_of(master_port: u16, shards: usize) -> Server {
    let replica = Server::start(shards, &["--enable-debug-command", "yes"]);
    let mut r = replica.raw();
    assert_eq!(
        r.cmd(&["REPLICAOF", "127.0.0.1", &master_port.to_string()]),
        Reply::ok()
    );
    replica
}

#[test]
fn ember_replica_of_redis_syncs_streams_and_refuses_writes() {
    let Some(redis) = redis_master() else {
        return;
    };
    let mut m = Raw::connect(redis.port);
    fill(&mut m);
    let replica = ember_replica_of(redis.port, 3);
    let mut r = replica.raw();
    wait_caught_up(&mut m, &mut r);
    same_keyspace(&mut m, &mut r);
    assert_eq!(
        r.cmd(&["SET", "x", "1"]),
        Reply::err("READONLY You can't write against a read only replica.")
    );
    assert_eq!(
        r.cmd(&["REPLICAOF", "127.0.0.1", &redis.port.to_string()]),
        Reply::Simple("OK Already connected to specified master".into())
    );
    churn(redis.port, 1500);
    settle(&mut m);
    wait_caught_up(&mut m, &mut r);
    same_keyspace(&mut m, &mut r);
    assert_eq!(
        r.info_field("replication", "role").as_deref(),
        Some("slave")
    );
    assert_eq!(
        r.info_field("replication", "master_link_status").as_deref(),
        Some("up")
    );
    // The master sees an online replica acknowledging its offset.
    let offset = m.info_int("replication", "master_repl_offset");
    assert!(wait_until(Duration::from_secs(5), || {
        let line = m.info_field("replication", "slave0").unwrap_or_default();
        line.contains("state=online") && line.contains(&format!("offset={offset}"))
    }));
}

#[test]
fn ember_replica_of_redis_keeps_expired_keys_for_the_masters_del() {
    let Some(redis) = redis_master() else {
        return;
    };
    let mut m = Raw::connect(redis.port);
    m.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    let replica = ember_replica_of(redis.port, 2);
    let mut r = replica.raw();
    wait_caught_up(&mut m, &mut r);
    m.cmd(&["SET", "soon", "v", "PX", "1500"]);
    m.cmd(&["SET", "stays", "v"]);
    wait_caught_up(&mut m, &mut r);
    assert_eq!(r.cmd(&["GET", "soon"]), Reply::bulk("v"));
    std::thread::sleep(Duration::from_millis(1700));
    // Logically expired: reads miss, but the replica keeps the key.
    assert_eq!(r.cmd(&["GET", "soon"]), Reply::Nil);
    assert_eq!(r.int(&["EXISTS", "soon"]), 0);
    assert_eq!(r.int(&["TTL", "soon"]), -2);
    assert_eq!(r.int(&["DBSIZE"]), 2, "no replica expires a key itself");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(r.int(&["DBSIZE"]), 2, "nor does its sweep");
    // The master's lazy expiry sends the DEL.
    assert_eq!(m.cmd(&["GET", "soon"]), Reply::Nil);
    wait_caught_up(&mut m, &mut r);
    assert_eq!(r.int(&["DBSIZE"]), 1);
    // Promoted, it expires keys as a master does.
    assert_eq!(r.cmd(&["REPLICAOF", "NO", "ONE"]), Reply::ok());
    assert_eq!(
        r.info_field("replication", "role").as_deref(),
        Some("master")
    );
    r.cmd(&["SET", "mine", "v", "PX", "100"]);
    assert!(wait_until(Duration::from_secs(5), || r.int(&["DBSIZE"]) == 1));
    assert_eq!(r.cmd(&["SET", "writable", "1"]), Reply::ok());
}

#[test]
fn ember_replica_of_ember_and_a_chained_replica() {
    let master = Server::start(3, &["--enable-debug-command", "yes"]);
    let mut m = master.raw();
    fill(&mut m);
    let replica = ember_replica_of(master.port, 2);
    let mut r = replica.raw();
    wait_caught_up(&mut m, &mut r);
    same_keyspace(&mut m, &mut r);
    // A replica of the replica gets the master's stream through it.
    let chained = ember_replica_of(replica.port, 1);
    let mut c = chained.raw();
    wait_caught_up(&mut r, &mut c);
    churn(master.port, 1500);
    settle(&mut m);
    wait_caught_up(&mut m, &mut r);
    wait_caught_up(&mut m, &mut c);
    same_keyspace(&mut m, &mut r);
    same_keyspace(&mut m, &mut c);
    assert_eq!(
        m.info_field("replication", "master_replid"),
        c.info_field("replication", "master_replid"),
        "one history down the chain"
    );
}

#[test]
fn redis_replica_of_an_ember_replica_of_redis() {
    let Some(redis) = redis_master() else {
        return;
    };
    let mut m = Raw::connect(redis.port);
    fill(&mut m);
    let middle = ember_replica_of(redis.port, 3);
    let mut e = middle.raw();
    wait_caught_up(&mut m, &mut e);
    let Some(tail) = redis_replica_of(middle.port, &[]) else {
        return;
    };
    let mut t = Raw::connect(tail.port);
    wait_caught_up(&mut e, &mut t);
    churn(redis.port, 1000);
    settle(&mut m);
    wait_caught_up(&mut m, &mut e);
    wait_caught_up(&mut m, &mut t);
    same_keyspace(&mut m, &mut t);
}

#[test]
fn role_wait_and_min_replicas() {
    let master = Server::start(2, &[]);
    let mut m = master.raw();
    assert_eq!(m.cmd(&["WAIT", "0", "0"]), Reply::Int(0));
    assert_eq!(
        m.cmd(&["CONFIG", "SET", "min-replicas-to-write", "1"]),
        Reply::ok()
    );
    assert_eq!(
        m.cmd(&["SET", "k", "v"]),
        Reply::err("NOREPLICAS Not enough good replicas to write.")
    );
    assert_eq!(m.cmd(&["GET", "k"]), Reply::Nil, "reads still run");
    // Scripts as Redis's scriptPrepareForRun: a flagged one that may write
    // is refused before it runs, a no-writes or unflagged read runs.
    let norep = Reply::err("NOREPLICAS Not enough good replicas to write.");
    let eval = |m: &mut Raw, body: &str| m.cmd(&["EVAL", body, "1", "k"]);
    assert_eq!(
        eval(&mut m, "#!lua\nreturn redis.call('get', KEYS[1])"),
        norep
    );
    assert_eq!(
        eval(
            &mut m,
            "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])"
        ),
        Reply::Nil
    );
    assert_eq!(
        eval(&mut m, "return redis.call('get', KEYS[1])"),
        Reply::Nil
    );
    // Refused inside the script: Redis's script suffix (as redis-server 7.0.15).
    let inside = eval(&mut m, "return redis.call('set', KEYS[1], 'x')");
    let suffixed = "NOREPLICAS Not enough good replicas to write. script: ";
    assert!(
        matches!(&inside, Reply::Error(e) if e.starts_with(suffixed)),
        "{inside:?}"
    );
    assert_eq!(
        m.cmd(&["CONFIG", "SET", "min-replicas-to-write", "0"]),
        Reply::ok()
    );
    let replica = ember_replica_of(master.port, 1);
    let mut r = replica.raw();
    wait_caught_up(&mut m, &mut r);
    m.cmd(&["SET", "k", "v"]);
    assert_eq!(m.cmd(&["WAIT", "1", "5000"]), Reply::Int(1));
    // More replicas than there are: the timeout answers with the count.
    assert_eq!(m.cmd(&["WAIT", "2", "300"]), Reply::Int(1));
    let role = m.cmd(&["ROLE"]).items();
    assert_eq!(role[0], Reply::bulk("master"));
    let replicas = role[2].items();
    assert_eq!(replicas.len(), 1);
    assert_eq!(
        replicas[0].items()[1],
        Reply::bulk(&replica.port.to_string())
    );
    let role = r.cmd(&["ROLE"]).items();
    assert_eq!(role[0], Reply::bulk("slave"));
    assert_eq!(role[2], Reply::Int(i64::from(master.port)));
    assert_eq!(role[3], Reply::bulk("connected"));
    assert_eq!(
        r.cmd(&["WAIT", "1", "0"]),
        Reply::err("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
    );
}

#[test]
fn a_writable_replica_expires_its_own_keys_only() {
    let master = Server::start(1, &["--enable-debug-command", "yes"]);
    let mut m = master.raw();
    m.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    let replica = ember_replica_of(master.port, 2);
    let mut r = replica.raw();
    wait_caught_up(&mut m, &mut r);
    m.cmd(&["SET", "theirs", "v", "PX", "100"]);
    wait_caught_up(&mut m, &mut r);
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "replica-read-only", "no"]),
        Reply::ok()
    );
    r.cmd(&["SET", "mine", "v", "PX", "100"]);
    std::thread::sleep(Duration::from_millis(200));
    // Its own key goes by its own expiry; the master's waits for a DEL.
    assert!(wait_until(Duration::from_secs(5), || r.int(&["DBSIZE"]) == 1));
    assert_eq!(r.cmd(&["GET", "theirs"]), Reply::Nil);
    // INCR over a logically expired key re-creates it without a TTL.
    assert_eq!(r.int(&["INCR", "theirs"]), 1);
    assert_eq!(r.int(&["TTL", "theirs"]), -1);
}

#[test]
fn replicaof_at_start_up() {
    let master = Server::start(1, &[]);
    let mut m = master.raw();
    m.cmd(&["SET", "k", "v"]);
    let port = master.port.to_string();
    let replica = Server::start(2, &["--replicaof", "127.0.0.1", &port]);
    let mut r = replica.raw();
    wait_caught_up(&mut m, &mut r);
    assert_eq!(r.cmd(&["GET", "k"]), Reply::bulk("v"));
    assert_eq!(
        r.cmd(&["CONFIG", "GET", "replicaof"]).items()[1],
        Reply::bulk(&format!("127.0.0.1 {port}"))
    );
}

#[test]
fn an_ember_replica_whose_master_client_is_killed_continues() {
    let master = Server::start(2, &[]);
    let mut m = master.raw();
    fill(&mut m);
    let replica = ember_replica_of(master.port, 2);
    let mut r = replica.raw();
    wait_caught_up(&mut m, &mut r);
    // The stream is in database 9 when the link drops: the new master
    // client must go on there.
    m.cmd(&["SELECT", "9"]);
    m.cmd(&["SET", "in-nine", "1"]);
    wait_caught_up(&mut m, &mut r);
    let addr = format!("127.0.0.1:{}", master.port);
    assert_eq!(r.cmd(&["CLIENT", "KILL", &addr]), Reply::ok());
    m.cmd(&["INCR", "counter"]);
    wait_caught_up(&mut m, &mut r);
    assert!(wait_until(Duration::from_secs(5), || {
        m.info_int("stats", "sync_partial_ok") >= 1
    }));
    assert_eq!(m.info_int("stats", "sync_full"), 1);
    m.cmd(&["INCR", "counter"]);
    wait_caught_up(&mut m, &mut r);
    same_keyspace(&mut m, &mut r);
}

#[test]
fn replicas_within_the_delay_share_one_full_sync() {
    // A long delay that `repl-diskless-sync-max-replicas 2` cuts short:
    // both replicas sync only if the second joined the first's wait.
    let master = Server::start(
        2,
        &[
            "--repl-diskless-sync-delay",
            "3600",
            "--repl-diskless-sync-max-replicas",
            "2",
        ],
    );
    let mut m = master.raw();
    fill(&mut m);
    let first = ember_replica_of(master.port, 1);
    let mut r1 = first.raw();
    // Alone, it waits (the master sends keepalives meanwhile).
    assert!(wait_until(Duration::from_secs(5), || {
        m.info_field("replication", "slave0")
            .is_some_and(|s| s.contains("state=wait_bgsave"))
    }));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        r1.info_field("replication", "master_link_status")
            .as_deref(),
        Some("down")
    );
    m.cmd(&["SET", "after-the-first", "1"]);
    let second = ember_replica_of(master.port, 2);
    let mut r2 = second.raw();
    wait_caught_up(&mut m, &mut r1);
    wait_caught_up(&mut m, &mut r2);
    assert_eq!(m.info_int("stats", "sync_full"), 2);
    same_keyspace(&mut m, &mut r1);
    same_keyspace(&mut m, &mut r2);
    assert_eq!(r1.cmd(&["GET", "after-the-first"]), Reply::bulk("1"));
}

#[test]
fn config_rewrite_writes_the_master_followed() {
    let master = Server::start(1, &[]);
    let dir = common::temp_dir();
    let path = dir.join("ember.conf");
    std::fs::write(&path, "# a replica\nreplicaof 127.0.0.1 1\n").unwrap();
    let file = path.display().to_string();
    let replica = Server::start(1, &["--config", &file]);
    let mut r = replica.raw();
    let port = master.port.to_string();
    assert_eq!(r.cmd(&["REPLICAOF", "127.0.0.1", &port]), Reply::ok());
    assert_eq!(r.cmd(&["CONFIG", "REWRITE"]), Reply::ok());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.lines()
            .any(|l| l == format!("replicaof 127.0.0.1 {port}")),
        "{text}"
    );
    assert!(!text.contains("replicaof 127.0.0.1 1\n"), "{text}");
    // A master has no line (Redis drops it).
    assert_eq!(r.cmd(&["REPLICAOF", "NO", "ONE"]), Reply::ok());
    assert_eq!(r.cmd(&["CONFIG", "REWRITE"]), Reply::ok());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("replicaof"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn clients_blocked_on_a_master_that_becomes_a_replica_are_unblocked() {
    let master = Server::start(1, &[]);
    let other = Server::start(2, &[]);
    let mut waiters: Vec<Raw> = (0..4).map(|_| other.raw()).collect();
    for (i, w) in waiters.iter_mut().enumerate() {
        w.send_cmd(&[b"BLPOP", format!("list{i}").as_bytes(), b"0"]);
    }
    let mut c = other.raw();
    assert!(wait_until(Duration::from_secs(5), || {
        c.info_int("clients", "blocked_clients") == 4
    }));
    let port = master.port.to_string();
    assert_eq!(c.cmd(&["REPLICAOF", "127.0.0.1", &port]), Reply::ok());
    let want = Reply::err(
        "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
    );
    for w in &mut waiters {
        assert_eq!(w.read(), Some(want.clone()));
    }
    if let Some(redis) = common::reference::Redis::or_skip("blocked_clients_unblocked_as_redis") {
        let mut b = Raw::connect(redis.port);
        b.send_cmd(&[b"BLPOP", b"list", b"0"]);
        let mut rc = Raw::connect(redis.port);
        assert!(wait_until(Duration::from_secs(5), || {
            rc.info_int("clients", "blocked_clients") == 1
        }));
        rc.cmd(&["REPLICAOF", "127.0.0.1", &port]);
        assert_eq!(b.read(), Some(want));
        rc.cmd(&["REPLICAOF", "NO", "ONE"]);
    }
}
