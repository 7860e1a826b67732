//! CONFIG SET of `port` and of several parameters at once, against a real
//! ember and, for the replies, the real redis-server 7.0.15: a new port
//! moves the listeners of every shard; a port someone listens on fails the
//! whole command with Redis's text and leaves every value (and the old
//! port) as it was; a pair that does not parse fails the command before
//! anything is set; the hidden parameters answer CONFIG GET by name only.
//! Redis's tests: "CONFIG SET rollback on apply error", "CONFIG SET
//! rollback on set error", "CONFIG SET with multiple args", "CONFIG GET
//! hidden configs".

mod common;

use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use common::reference::Redis;
use common::{free_port, Raw, Reply, Server};

fn value(c: &mut Raw, name: &str) -> String {
    c.cmd(&["CONFIG", "GET", name]).items()[1].text()
}

/// What Redis's apply-error test sends: a good value, a port in use, a
/// good value, so the error must name the port and undo the others.
fn set_with_busy_port(c: &mut Raw, busy: u16) -> Reply {
    c.cmd(&[
        "CONFIG",
        "SET",
        "maxmemory",
        "10000001",
        "port",
        &busy.to_string(),
        "client-query-buffer-limit",
        "10m",
    ])
}

const BUSY: &str = "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.";

#[test]
fn a_port_in_use_fails_config_set_and_rolls_every_value_back() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let before: Vec<String> = ["maxmemory", "port", "client-query-buffer-limit"]
        .iter()
        .map(|n| value(&mut c, n))
        .collect();
    // Someone else's listener, without SO_REUSEPORT, as Redis's test has.
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = other.local_addr().unwrap().port();
    assert_eq!(set_with_busy_port(&mut c, busy), Reply::err(BUSY));
    let after: Vec<String> = ["maxmemory", "port", "client-query-buffer-limit"]
        .iter()
        .map(|n| value(&mut c, n))
        .collect();
    assert_eq!(after, before);
    // Still listening where it was, on every shard.
    for _ in 0..8 {
        assert_eq!(server.raw().cmd(&["PING"]), Reply::Simple("PONG".into()));
    }
}

#[test]
fn a_port_in_use_is_answered_as_redis_answers_it() {
    let Some(redis) = Redis::or_skip("a_port_in_use_is_answered_as_redis_answers_it") else {
        return;
    };
    let server = Server::start(1, &[]);
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = other.local_addr().unwrap().port();
    let (mut e, mut r) = (server.raw(), Raw::connect(redis.port));
    assert_eq!(
        set_with_busy_port(&mut e, busy),
        set_with_busy_port(&mut r, busy)
    );
    for args in [
        &["CONFIG", "SET", "port", "x"][..],
        &["CONFIG", "SET", "port", "65536"],
        &["CONFIG", "SET", "port", "-1"],
        // Several pairs: a bad value fails all of them, naming its own.
        &["CONFIG", "SET", "maxmemory", "10000001", "port", "abc"],
        &["CONFIG", "SET", "maxmemory", "1", "maxmemory", "2"],
        &["CONFIG", "SET", "maxmemory", "1", "nosuch", "2"],
        &["CONFIG", "SET", "maxmemory", "1", "daemonize", "yes"],
        &["CONFIG", "GET", "maxmemory"],
        &["CONFIG", "HELP"],
        &["CONFIG", "REWRITE"],
        &["CONFIG", "REWRITE", "x"],
    ] {
        assert_eq!(e.cmd(args), r.cmd(args), "{args:?}");
    }
}

#[test]
fn a_new_port_moves_every_shards_listener() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let port = free_port();
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "port", &port.to_string(), "hz", "20"]),
        Reply::ok()
    );
    assert_eq!(value(&mut c, "port"), port.to_string());
    assert_eq!(value(&mut c, "hz"), "20");
    // The connection that moved it stays; new ones come on the new port,
    // whichever shard the kernel hands them to.
    assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()));
    for _ in 0..12 {
        let mut moved = Raw::connect(port);
        assert_eq!(moved.cmd(&["PING"]), Reply::Simple("PONG".into()));
    }
    // The old port is closed (each shard handles its message on its
    // next pass, so give them a moment).
    assert!(common::wait_until(Duration::from_secs(5), || {
        TcpStream::connect(("127.0.0.1", server.port)).is_err()
    }));
    // And back again: the port it left is free for it.
    let mut moved = Raw::connect(port);
    assert_eq!(
        moved.cmd(&["CONFIG", "SET", "port", &server.port.to_string()]),
        Reply::ok()
    );
    assert_eq!(server.raw().cmd(&["PING"]), Reply::Simple("PONG".into()));
}

/// Redis's hidden parameters (knobs of its own tests) answer CONFIG GET by
/// name only, never a pattern, on ember as on redis-server.
#[test]
fn hidden_parameters_answer_only_their_own_name() {
    let redis = Redis::or_skip("hidden_parameters_answer_only_their_own_name");
    let server = Server::start(1, &[]);
    let mut ports = vec![server.port];
    ports.extend(redis.as_ref().map(|r| r.port));
    for port in ports {
        let mut c = Raw::connect(port);
        let all: Vec<String> = c
            .cmd(&["CONFIG", "GET", "*"])
            .items()
            .iter()
            .step_by(2)
            .map(Reply::text)
            .collect();
        for name in [
            "key-load-delay",
            "rdb-key-save-delay",
            "loading-process-events-interval-bytes",
        ] {
            assert!(!all.iter().any(|n| n == name), "port {port}: {name} in *");
            let asked = c.cmd(&["CONFIG", "GET", name]).items();
            assert_eq!(asked[0].text(), name, "port {port}");
        }
        assert!(all.iter().any(|n| n == "maxmemory"));
    }
}

/// PING through a fresh connection to `ip:port`: None where none is made.
fn ping_at(ip: &str, port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect((ip, port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    s.write_all(b"PING\r\n").ok()?;
    let mut buf = [0u8; 16];
    let n = s.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

const BIND_FAILED: &str = "ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.";

/// CONFIG SET bind moves every shard's listeners to the new addresses
/// (Redis 7.0 does it live); one that cannot be bound fails the command
/// with Redis's text and leaves the old ones; `-` makes one optional.
/// 192.0.2.1 (TEST-NET-1) is on no interface here: binding it fails with
/// no traffic sent anywhere.
#[test]
fn config_set_bind_moves_the_listeners_or_rolls_back() {
    let server = Server::start(2, &[]);
    let port = server.port;
    let mut c = server.raw();
    assert_eq!(c.cmd(&["CONFIG", "SET", "bind", "127.0.0.2"]), Reply::ok());
    assert_eq!(value(&mut c, "bind"), "127.0.0.2");
    for _ in 0..8 {
        assert_eq!(ping_at("127.0.0.2", port).as_deref(), Some("+PONG\r\n"));
    }
    assert!(common::wait_until(Duration::from_secs(5), || {
        TcpStream::connect(("127.0.0.1", port)).is_err()
    }));
    // The connection that moved them stays.
    assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()));
    // An address the host lacks: refused, the old value and listeners kept.
    let refused = c.cmd(&["CONFIG", "SET", "bind", "192.0.2.1", "hz", "30"]);
    assert_eq!(refused, Reply::err(BIND_FAILED));
    assert_eq!(value(&mut c, "bind"), "127.0.0.2");
    assert_ne!(value(&mut c, "hz"), "30");
    assert_eq!(ping_at("127.0.0.2", port).as_deref(), Some("+PONG\r\n"));
    // Optional, it is skipped; loopback serves again.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "bind", "127.0.0.1 -192.0.2.1"]),
        Reply::ok()
    );
    assert_eq!(server.raw().cmd(&["PING"]), Reply::Simple("PONG".into()));
    // redis-server answers the refusal in the same words.
    if let Some(redis) = Redis::or_skip("config_set_bind_moves_the_listeners_or_rolls_back") {
        let mut r = Raw::connect(redis.port);
        assert_eq!(
            r.cmd(&["CONFIG", "SET", "bind", "192.0.2.1", "hz", "30"]),
            Reply::err(BIND_FAILED)
        );
    }
}
