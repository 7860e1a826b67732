//! MONITOR, CLIENT PAUSE / UNPAUSE and CLIENT REPLY against a real ember
//! with several shards, and their lines and replies compared with
//! redis-server's.

mod common;

use std::time::Duration;

use common::reference::Redis;
use common::{keys_on_shard, ok, wait_until, Raw, Reply, Server};

/// A MONITOR line without its time and address: `[db] "arg" ...`.
fn monitored(line: Reply) -> String {
    let text = line.text();
    let (_, rest) = text.split_once(" [").expect("a monitor line");
    let (db, args) = rest.split_once("] ").expect("a monitor line");
    let db = db.split(' ').next().unwrap_or("");
    format!("[{db}] {args}")
}

fn monitor(port: u16) -> Raw {
    let mut raw = Raw::connect(port);
    assert_eq!(raw.cmd(&["MONITOR"]), ok());
    raw
}

/// Commands on keys of both shards, a transaction, a script, credentials
/// and admin commands: what a monitor sees, in order.
const SCRIPT: &[&[&str]] = &[
    &["SET", "foo", "bar baz\n\"q\""],
    &["MULTI"],
    &["SET", "x", "1"],
    &["GET", "x"],
    &["EXEC"],
    &[
        "EVAL",
        "redis.call('set', KEYS[1], ARGV[1])",
        "1",
        "foo",
        "v",
    ],
    &["AUTH", "nobody", "secret"],
    &["HELLO", "2", "AUTH", "nobody", "secret"],
    &["CONFIG", "GET", "maxmemory"],
    &["CLIENT", "LIST"],
    &["SELECT", "3"],
    &["SET", "in3", "\u{1}"],
    &["NOSUCH"],
    &["GET"],
    &["CLIENT", "ID"],
];

fn monitor_lines(port: u16) -> Vec<String> {
    let mut mon = monitor(port);
    let mut client = Raw::connect(port);
    for cmd in SCRIPT {
        client.cmd(cmd);
    }
    client.cmd(&["PING"]);
    let mut lines = Vec::new();
    loop {
        let line = monitored(mon.read().expect("a line"));
        let done = line.ends_with("\"PING\"");
        lines.push(line);
        if done {
            return lines;
        }
    }
}

#[test]
fn monitor_lines_match_redis() {
    let Some(redis) = Redis::or_skip("monitor_lines_match_redis") else {
        return;
    };
    let server = Server::start(2, &[]);
    assert_eq!(monitor_lines(server.port), monitor_lines(redis.port));
}

#[test]
fn a_monitor_sees_every_shards_commands() {
    let server = Server::start(2, &[]);
    let mut mon = monitor(server.port);
    let mut client = Raw::connect(server.port);
    let keys = [keys_on_shard("m", 0, 2, 1), keys_on_shard("m", 1, 2, 1)].concat();
    for key in &keys {
        client.cmd(&["SET", key, "v"]);
    }
    for key in &keys {
        let line = mon.read().expect("a line").text();
        let addr = client.local_addr();
        assert!(
            line.contains(&format!("[0 {addr}] \"SET\" \"{key}\" \"v\"")),
            "{line}"
        );
        let (secs, _) = line.split_once('.').unwrap();
        let secs: u64 = secs.parse().unwrap();
        assert!(secs.abs_diff(common::unix_ms() / 1000) < 60, "{line}");
    }
    // A monitor shows as `O` in CLIENT LIST.
    let list = client.cmd(&["CLIENT", "LIST"]).text();
    assert!(list.contains("flags=O"), "{list}");
}

#[test]
fn a_paused_write_waits_while_reads_answer() {
    let server = Server::start(2, &[]);
    let mut admin = Raw::connect(server.port);
    admin.cmd(&["SET", "p", "old"]);
    assert_eq!(admin.cmd(&["CLIENT", "PAUSE", "60000", "WRITE"]), ok());
    let mut writer = Raw::connect(server.port);
    writer.send_cmd(&[b"SET", b"p", b"new"]);
    assert!(wait_until(Duration::from_secs(5), || admin
        .info_int("clients", "blocked_clients")
        == 1));
    // Reads still answer, and see no write.
    let mut reader = Raw::connect(server.port);
    assert_eq!(reader.cmd(&["GET", "p"]), Reply::bulk("old"));
    // Wrong arity is answered at once.
    assert!(matches!(reader.cmd(&["SET", "p"]), Reply::Error(_)));
    assert_eq!(admin.cmd(&["CLIENT", "UNPAUSE"]), ok());
    assert_eq!(writer.read(), Some(ok()));
    assert_eq!(reader.cmd(&["GET", "p"]), Reply::bulk("new"));
    assert_eq!(admin.info_int("clients", "blocked_clients"), 0);
}

#[test]
fn a_pause_ends_by_itself() {
    let server = Server::start(2, &[]);
    let mut admin = Raw::connect(server.port);
    admin.cmd(&["CLIENT", "PAUSE", "200", "ALL"]);
    let mut client = Raw::connect(server.port);
    let started = std::time::Instant::now();
    assert_eq!(client.cmd(&["PING"]), Reply::Simple("PONG".into()));
    assert!(started.elapsed() >= Duration::from_millis(100));
}

#[test]
fn client_reply_off_skip_on() {
    let server = Server::start(2, &[]);
    let mut raw = Raw::connect(server.port);
    for cmd in [
        &["CLIENT", "REPLY", "OFF"][..],
        &["SET", "a", "1"],
        &["GET", "a"],
        &["CLIENT", "REPLY", "SKIP"],
        &["CLIENT", "REPLY", "ON"],
        &["CLIENT", "REPLY", "SKIP"],
        &["GET", "a"],
        &["ECHO", "last"],
    ] {
        let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
        raw.send_cmd(&args);
    }
    assert_eq!(raw.read(), Some(ok()), "only ON answers");
    assert_eq!(
        raw.read(),
        Some(Reply::bulk("last")),
        "SKIP skipped the GET"
    );
    // Pushes still come while replies are off.
    let mut sub = Raw::connect(server.port);
    sub.cmd(&["HELLO", "3"]);
    sub.send_cmd(&[b"CLIENT", b"REPLY", b"OFF"]);
    sub.send_cmd(&[b"SUBSCRIBE", b"ch"]);
    let Some(Reply::Push(items)) = sub.read() else {
        panic!("a push")
    };
    assert_eq!(items[0], Reply::bulk("subscribe"));
}

#[test]
fn client_mode_errors_match_redis() {
    let Some(redis) = Redis::or_skip("client_mode_errors_match_redis") else {
        return;
    };
    let server = Server::start(2, &[]);
    let script: &[&[&str]] = &[
        &["CLIENT", "REPLY", "maybe"],
        &["CLIENT", "REPLY"],
        &["CLIENT", "PAUSE"],
        &["CLIENT", "PAUSE", "abc"],
        &["CLIENT", "PAUSE", "-1"],
        &["CLIENT", "PAUSE", "10", "foo"],
        &["CLIENT", "PAUSE", "10", "write", "x"],
        &["CLIENT", "UNPAUSE", "x"],
        &["CLIENT", "UNPAUSE"],
        &["CLIENT", "NO-EVICT", "maybe"],
        &["CLIENT", "NO-TOUCH", "on"],
        &["MONITOR", "x"],
        &["CLIENT", "HELP"],
    ];
    let run = |port: u16| -> Vec<Reply> {
        let mut raw = Raw::connect(port);
        script.iter().map(|c| raw.cmd(c)).collect()
    };
    assert_eq!(run(server.port), run(redis.port));
}

#[test]
fn expiry_waits_for_the_pause_to_end() {
    let server = Server::start(2, &[]);
    let mut raw = Raw::connect(server.port);
    let keys = [keys_on_shard("x", 0, 2, 1), keys_on_shard("x", 1, 2, 1)].concat();
    for key in &keys {
        raw.cmd(&["SET", key, "v", "PX", "50"]);
    }
    raw.cmd(&["CLIENT", "PAUSE", "60000", "WRITE"]);
    std::thread::sleep(Duration::from_millis(300));
    for key in &keys {
        assert_eq!(
            raw.cmd(&["GET", key]),
            Reply::Nil,
            "expired keys read as missing"
        );
    }
    assert_eq!(raw.info_int("stats", "expired_keys"), 0, "but none removed");
    raw.cmd(&["CLIENT", "UNPAUSE"]);
    assert!(wait_until(Duration::from_secs(5), || {
        for key in &keys {
            raw.cmd(&["GET", key]);
        }
        raw.info_int("stats", "expired_keys") == 2
    }));
}
