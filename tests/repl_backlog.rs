//! `repl-backlog-ttl`, black-box and side by side with redis-server
//! 7.0.15: a master whose last replica left that many seconds ago frees
//! its backlog and takes a new replication ID, so the replica coming back
//! resyncs in full; with the TTL at 0 it continues.

mod common;

use std::time::Duration;

use common::reference::Redis;
use common::{wait_until, Raw, Reply, Server};

/// A replica in raw protocol: PSYNC, the first line of the answer, then
/// the connection closes (the master drops the replica).
fn psync(port: u16, replid: &str, offset: &str) -> String {
    let mut c = Raw::connect(port);
    assert_eq!(c.cmd(&["REPLCONF", "listening-port", "1"]), Reply::ok());
    c.cmd(&["PSYNC", replid, offset]).text()
}

fn field(raw: &mut Raw, name: &str) -> String {
    raw.info_field("replication", name).unwrap_or_default()
}

/// The scenario on the master at `port`, whose `repl-backlog-ttl` is
/// `ttl_s`: what the returning replica is answered.
fn returning_replica(port: u16, ttl_s: u64) -> String {
    let mut m = Raw::connect(port);
    assert_eq!(
        m.cmd(&["CONFIG", "SET", "repl-backlog-ttl", &ttl_s.to_string()]),
        Reply::ok()
    );
    m.cmd(&["SET", "k", "1"]);
    let first = psync(port, "?", "-1");
    let words: Vec<&str> = first.split(' ').collect();
    assert_eq!(words[0], "FULLRESYNC", "{first}");
    let (replid, offset) = (words[1].to_string(), words[2].parse::<u64>().unwrap());
    assert!(wait_until(Duration::from_secs(10), || {
        m.info_int("replication", "connected_slaves") == 0
    }));
    assert_eq!(field(&mut m, "repl_backlog_active"), "1");
    // Past the TTL (checked once a second), or the same wait without one.
    let freed = wait_until(Duration::from_secs(4), || {
        field(&mut m, "repl_backlog_active") == "0"
    });
    assert_eq!(freed, ttl_s > 0, "backlog freed");
    if freed {
        assert_ne!(field(&mut m, "master_replid"), replid, "a new history");
        assert_eq!(field(&mut m, "master_replid2"), "0".repeat(40));
    }
    let again = psync(port, &replid, &(offset + 1).to_string());
    again.split(' ').next().unwrap_or_default().to_string()
}

#[test]
fn the_backlog_goes_after_its_ttl_as_redis_frees_it() {
    let ember = Server::start(2, &[]);
    assert_eq!(returning_replica(ember.port, 1), "FULLRESYNC");
    assert_eq!(ember.raw().info_int("stats", "sync_partial_err"), 1);
    // Its full sync saves a file: in a directory of its own.
    let dir = common::temp_dir();
    let Some(redis) = Redis::start(&["--dir", &dir.display().to_string()]) else {
        eprintln!("redis-server is not installed or did not start: test skipped (CI installs it)");
        return;
    };
    assert_eq!(returning_replica(redis.port, 1), "FULLRESYNC");
}

#[test]
fn without_a_ttl_the_replica_continues() {
    let ember = Server::start(2, &[]);
    assert_eq!(returning_replica(ember.port, 0), "CONTINUE");
    assert_eq!(ember.raw().info_int("stats", "sync_partial_ok"), 1);
}
