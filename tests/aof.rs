//! The append-only file against a real ember in a temporary directory, and
//! against the real thing: writes survive a kill -9 and a restart (DEBUG
//! DIGEST and key by key), expiry writes nothing until a key goes and then
//! a DEL, BGREWRITEAOF under four writing clients loses no acknowledged
//! write, a torn last command is cut off (or refused with
//! `aof-load-truncated no`), a garbage manifest or file is refused, and
//! redis-server 7.0.15 loads ember's `appendonlydir` while ember loads
//! redis-server's.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::reference::Redis;
use common::{temp_dir, wait_until, Raw, Reply, Server};

const AOF: &[&str] = &[
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
    "--save",
    "",
    "--enable-debug-command",
    "yes",
];

fn aof_dir(dir: &Path) -> PathBuf {
    dir.join("appendonlydir")
}

fn manifest(dir: &Path) -> String {
    std::fs::read_to_string(aof_dir(dir).join("appendonly.aof.manifest")).unwrap_or_default()
}

/// The incr files' bytes, in the manifest's order.
fn incr_text(dir: &Path) -> String {
    let mut out = String::new();
    for line in manifest(dir).lines() {
        let words: Vec<&str> = line.split(' ').collect();
        if words.last() == Some(&"i") {
            let bytes = std::fs::read(aof_dir(dir).join(words[1])).unwrap();
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

/// The last incr file's path.
fn last_incr(dir: &Path) -> PathBuf {
    let text = manifest(dir);
    let line = text
        .lines()
        .rfind(|l| l.ends_with(" i"))
        .expect("an incr file");
    aof_dir(dir).join(line.split(' ').nth(1).unwrap())
}

fn ok(r: Reply) {
    assert!(!matches!(r, Reply::Error(_)), "{r:?}");
}

/// Every type, several databases, deadlines, a transaction.
fn populate(c: &mut Raw) {
    let far = (common::unix_ms() + 3_600_000).to_string();
    for db in ["0", "3"] {
        ok(c.cmd(&["SELECT", db]));
        ok(c.cmd(&["SET", "s", "hello"]));
        ok(c.cmd(&["SET", "ttl", "v", "PXAT", &far]));
        ok(c.cmd(&["RPUSH", "l", "a", "b", "c"]));
        ok(c.cmd(&["HSET", "h", "f1", "v1", "f2", "v2"]));
        ok(c.cmd(&["SADD", "set", "x", "y"]));
        ok(c.cmd(&["ZADD", "z", "1.5", "a", "2", "b"]));
        ok(c.cmd(&["XADD", "st", "1-1", "f", "v"]));
        ok(c.cmd(&["PFADD", "hll", "a", "b"]));
        ok(c.cmd(&["INCRBYFLOAT", "f", "1.5"]));
        ok(c.cmd(&["EXPIRE", "l", "1000"]));
        ok(c.cmd(&["MSET", "k1", "1", "k2", "2", "k3", "3", "k4", "4"]));
        ok(c.cmd(&["MULTI"]));
        ok(c.cmd(&["INCR", "k1"]));
        ok(c.cmd(&["RENAME", "k2", "k2b"]));
        ok(c.cmd(&["EXEC"]));
        ok(c.cmd(&["DEL", "k3"]));
    }
    ok(c.cmd(&["SELECT", "0"]));
}

/// Every key of every database with its type, value and deadline.
fn state(c: &mut Raw) -> BTreeMap<(usize, String), String> {
    let mut out = BTreeMap::new();
    for db in 0..16usize {
        c.cmd(&["SELECT", &db.to_string()]);
        for key in c.cmd(&["KEYS", "*"]).items() {
            let key = key.text();
            let kind = c.cmd(&["TYPE", &key]).text();
            let value = match kind.as_str() {
                "string" => c.cmd(&["GET", &key]).text(),
                "list" => texts(c.cmd(&["LRANGE", &key, "0", "-1"])),
                "hash" => sorted(c.cmd(&["HGETALL", &key])),
                "set" => sorted(c.cmd(&["SMEMBERS", &key])),
                "zset" => texts(c.cmd(&["ZRANGE", &key, "0", "-1", "WITHSCORES"])),
                "stream" => format!("{:?}", c.cmd(&["XRANGE", &key, "-", "+"])),
                other => other.to_string(),
            };
            let at = c.cmd(&["PEXPIRETIME", &key]).int();
            out.insert((db, key), format!("{kind}:{value}:{at}"));
        }
    }
    c.cmd(&["SELECT", "0"]);
    out
}

fn texts(r: Reply) -> String {
    r.items()
        .iter()
        .map(Reply::text)
        .collect::<Vec<_>>()
        .join(",")
}

fn sorted(r: Reply) -> String {
    let mut items: Vec<String> = r.items().iter().map(Reply::text).collect();
    items.sort();
    items.join(",")
}

fn digest(c: &mut Raw) -> String {
    c.cmd(&["DEBUG", "DIGEST"]).text()
}

/// Starts ember in `dir` and waits for it to exit by itself: its status
/// and what it logged.
fn run_to_exit(dir: &Path, extra: &[&str]) -> (std::process::ExitStatus, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ember"));
    command
        .current_dir(dir)
        .args(["--port", &common::free_port().to_string(), "--shards", "2"])
        .args(extra);
    common::run_to_exit(command)
}

#[test]
fn writes_survive_a_kill_and_a_restart() {
    let dir = temp_dir();
    let (before, digest_before) = {
        let server = Server::start_in(&dir, 3, AOF);
        let mut c = server.raw();
        populate(&mut c);
        (state(&mut c), digest(&mut c))
        // Dropped: killed with SIGKILL, no shutdown.
    };
    let manifest_text = manifest(&dir);
    assert!(
        manifest_text.starts_with("file appendonly.aof.1.base.rdb seq 1 type b\n"),
        "{manifest_text}"
    );
    for shards in [3, 1] {
        let server = Server::start_in(&dir, shards, AOF);
        let mut c = server.raw();
        assert_eq!(state(&mut c), before, "with {shards} shards");
        assert_eq!(digest(&mut c), digest_before);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_expired_key_writes_nothing_until_it_goes_then_a_del() {
    let server = Server::start(2, AOF);
    let mut c = server.raw();
    ok(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]));
    ok(c.cmd(&["SET", "soon", "v", "PX", "50"]));
    ok(c.cmd(&["EXPIRE", "later", "100"]));
    let text = incr_text(&server.dir);
    assert!(text.contains("PXAT"), "an absolute deadline: {text:?}");
    std::thread::sleep(Duration::from_millis(200));
    // Untouched, the key is still in memory and nothing was written.
    assert_eq!(incr_text(&server.dir), text);
    assert_eq!(c.cmd(&["GET", "soon"]), Reply::Nil);
    let after = incr_text(&server.dir);
    assert_eq!(
        &after[text.len()..],
        "*2\r\n$3\r\nDEL\r\n$4\r\nsoon\r\n",
        "its removal is a DEL"
    );
}

#[test]
fn bgrewriteaof_under_four_writing_clients_loses_nothing() {
    let dir = temp_dir();
    let stop = Arc::new(AtomicBool::new(false));
    let expected = {
        let server = Server::start_in(&dir, 3, AOF);
        let mut c = server.raw();
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let stop = Arc::clone(&stop);
                let port = server.port;
                std::thread::spawn(move || {
                    let mut c = Raw::connect(port);
                    let mut acked = 0i64;
                    while !stop.load(Ordering::Relaxed) {
                        let n = c.cmd(&["INCR", &format!("counter:{w}")]).int();
                        assert_eq!(n, acked + 1);
                        acked = n;
                        ok(c.cmd(&["RPUSH", &format!("list:{w}"), &n.to_string()]));
                        ok(c.cmd(&["MSET", &format!("a{w}:{n}"), "1", &format!("b{w}:{n}"), "2"]));
                    }
                    acked
                })
            })
            .collect();
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(150));
            let r = c.cmd(&["BGREWRITEAOF"]);
            assert_eq!(
                r,
                Reply::Simple("Background append only file rewriting started".into())
            );
            c.wait_rewrite();
        }
        std::thread::sleep(Duration::from_millis(100));
        stop.store(true, Ordering::Relaxed);
        let acked: Vec<i64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
        assert_eq!(c.info_int("persistence", "aof_rewrites"), 3);
        assert_eq!(
            c.info_field("persistence", "aof_last_bgrewrite_status")
                .as_deref(),
            Some("ok")
        );
        (acked, state(&mut c))
    };
    let text = manifest(&dir);
    assert!(
        text.starts_with("file appendonly.aof.4.base.rdb seq 4 type b\n"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 2, "the history went: {text}");
    let server = Server::start_in(&dir, 3, AOF);
    let mut c = server.raw();
    let (acked, before) = expected;
    for (w, n) in acked.iter().enumerate() {
        assert!(*n > 0);
        assert_eq!(
            c.cmd(&["GET", &format!("counter:{w}")]).text(),
            n.to_string()
        );
        assert_eq!(c.int(&["LLEN", &format!("list:{w}")]), *n);
    }
    assert_eq!(state(&mut c), before);
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_torn_last_command_is_cut_off_or_refused() {
    let dir = temp_dir();
    {
        let server = Server::start_in(&dir, 2, AOF);
        let mut c = server.raw();
        ok(c.cmd(&["SET", "kept", "1"]));
        ok(c.cmd(&["RPUSH", "l", "a"]));
    }
    let incr = last_incr(&dir);
    let whole = std::fs::read(&incr).unwrap();
    let torn = [&whole[..], b"*3\r\n$3\r\nSET\r\n$4\r\ntorn\r\n$1"].concat();
    std::fs::write(&incr, &torn).unwrap();
    let refuse: Vec<&str> = [AOF, &["--aof-load-truncated", "no"]].concat();
    let (status, log) = run_to_exit(&dir, &refuse);
    assert!(!status.success());
    assert!(
        log.contains("Unexpected end of file reading the append only file"),
        "{log}"
    );
    assert_eq!(std::fs::read(&incr).unwrap(), torn, "nothing is changed");
    {
        let server = Server::start_in(&dir, 2, AOF);
        let mut c = server.raw();
        assert_eq!(c.cmd(&["GET", "kept"]).text(), "1");
        assert_eq!(c.cmd(&["GET", "torn"]), Reply::Nil);
        ok(c.cmd(&["SET", "next", "2"]));
    }
    let after = std::fs::read(&incr).unwrap();
    assert!(
        after.starts_with(&whole),
        "cut where the last whole command ends"
    );
    assert!(!after.windows(4).any(|w| w == b"torn"));
    let server = Server::start_in(&dir, 2, AOF);
    assert_eq!(server.raw().cmd(&["GET", "next"]).text(), "2");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_garbage_manifest_or_file_is_refused() {
    let dir = temp_dir();
    std::fs::create_dir_all(aof_dir(&dir)).unwrap();
    let manifest_path = aof_dir(&dir).join("appendonly.aof.manifest");
    std::fs::write(&manifest_path, b"this is no manifest\n").unwrap();
    let (status, log) = run_to_exit(&dir, AOF);
    assert!(!status.success());
    assert!(log.contains("Invalid AOF manifest file format"), "{log}");
    std::fs::write(&manifest_path, b"file ../../etc/passwd seq 1 type b\n").unwrap();
    let (_, log) = run_to_exit(&dir, AOF);
    assert!(
        log.contains("File can't be a path, just a filename"),
        "{log}"
    );
    std::fs::write(
        &manifest_path,
        b"file appendonly.aof.1.incr.aof seq 1 type i\n",
    )
    .unwrap();
    let incr = aof_dir(&dir).join("appendonly.aof.1.incr.aof");
    let mut garbage = b"*1\r\n$4\r\nPING\r\n".to_vec();
    garbage.extend((0..2000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    std::fs::write(&incr, &garbage).unwrap();
    let (status, log) = run_to_exit(&dir, AOF);
    assert!(!status.success());
    assert!(
        log.contains("Bad file format reading the append only file"),
        "{log}"
    );
    std::fs::write(&incr, b"*1\r\n$7\r\nNOTACMD\r\n").unwrap();
    let (_, log) = run_to_exit(&dir, AOF);
    assert!(
        log.contains("Unknown command 'NOTACMD' reading the append only file"),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn config_set_appendonly_yes_writes_the_base_through_a_rewrite() {
    let dir = temp_dir();
    let before = {
        let no: Vec<&str> = [AOF, &["--appendonly", "no"]].concat();
        let server = Server::start_in(&dir, 3, &no);
        let mut c = server.raw();
        populate(&mut c);
        assert_eq!(c.info_int("persistence", "aof_enabled"), 0);
        ok(c.cmd(&["CONFIG", "SET", "appendonly", "yes"]));
        assert_eq!(c.info_int("persistence", "aof_enabled"), 1);
        ok(c.cmd(&["SET", "during", "1"]));
        c.wait_rewrite();
        ok(c.cmd(&["SET", "after", "1"]));
        assert_eq!(c.info_int("persistence", "aof_rewrites"), 1);
        state(&mut c)
    };
    let text = manifest(&dir);
    assert!(text.contains(".base.rdb seq 1 type b\n"), "{text}");
    assert!(!aof_dir(&dir).join("temp-appendonly.aof.incr").exists());
    let server = Server::start_in(&dir, 2, AOF);
    let mut c = server.raw();
    assert_eq!(state(&mut c), before);
    assert_eq!(c.cmd(&["GET", "during"]).text(), "1");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rewrite_replies_and_config_answer_as_redis_does() {
    if Redis::or_skip("rewrite_replies_and_config_answer_as_redis_does").is_none() {
        return;
    }
    // In a directory of its own: its rewrite and BGSAVE write files there,
    // which a later reference server started elsewhere must not load.
    let redis_dir = temp_dir();
    let reference =
        Redis::start(&["--dir", &redis_dir.display().to_string()]).expect("redis-server");
    let server = Server::start(2, &["--save", "", "--enable-debug-command", "yes"]);
    let mut ember = server.raw();
    let mut redis = Raw::connect(reference.port);
    let names = [
        "appendonly",
        "appendfilename",
        "appenddirname",
        "appendfsync",
        "no-appendfsync-on-rewrite",
        "auto-aof-rewrite-percentage",
        "auto-aof-rewrite-min-size",
        "aof-load-truncated",
        "aof-use-rdb-preamble",
        "aof-rewrite-incremental-fsync",
        "aof-timestamp-enabled",
        "aof-disable-auto-gc",
        "rdb-save-incremental-fsync",
    ];
    for name in names {
        assert_eq!(
            ember.cmd(&["CONFIG", "GET", name]),
            redis.cmd(&["CONFIG", "GET", name]),
            "{name}"
        );
    }
    for (name, value) in [
        ("appendfsync", "sometimes"),
        ("appendfilename", "x"),
        ("appenddirname", "x"),
        ("appendonly", "maybe"),
        ("auto-aof-rewrite-percentage", "-1"),
    ] {
        assert_eq!(
            ember.cmd(&["CONFIG", "SET", name, value]),
            redis.cmd(&["CONFIG", "SET", name, value]),
            "{name} {value}"
        );
    }
    // A rewrite slowed down by rdb-key-save-delay on both.
    for c in [&mut ember, &mut redis] {
        ok(c.cmd(&["CONFIG", "SET", "appendonly", "yes"]));
        c.wait_rewrite();
        for i in 0..20 {
            ok(c.cmd(&["SET", &format!("k{i}"), "v"]));
        }
        ok(c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "100000"]));
    }
    for cmd in [
        &["BGREWRITEAOF"][..],
        &["BGREWRITEAOF"],
        &["BGSAVE"],
        &["BGSAVE", "SCHEDULE"],
    ] {
        assert_eq!(ember.cmd(cmd), redis.cmd(cmd), "{cmd:?}");
    }
    for c in [&mut ember, &mut redis] {
        ok(c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "0"]));
        c.wait_rewrite();
    }
    let fields = [
        "aof_enabled",
        "aof_rewrite_in_progress",
        "aof_rewrites_consecutive_failures",
        "aof_last_bgrewrite_status",
        "aof_last_write_status",
    ];
    for f in fields {
        assert_eq!(
            ember.info_field("persistence", f),
            redis.info_field("persistence", f),
            "{f}"
        );
    }
    drop(reference);
    let _ = std::fs::remove_dir_all(&redis_dir);
}

/// ember's data as a redis-server sees it and the other way round.
#[test]
fn redis_server_loads_embers_directory_and_ember_loads_redis_servers() {
    if Redis::or_skip("redis_server_loads_embers_directory").is_none() {
        return;
    }
    let dir = temp_dir();
    let before = {
        let server = Server::start_in(&dir, 3, AOF);
        let mut c = server.raw();
        populate(&mut c);
        ok(c.cmd(&["BGREWRITEAOF"]));
        c.wait_rewrite();
        // Some after the rewrite, so both the base and an incr file count.
        ok(c.cmd(&["SELECT", "5"]));
        ok(c.cmd(&["SET", "after", "rewrite"]));
        ok(c.cmd(&["MULTI"]));
        ok(c.cmd(&["LPUSH", "q", "1", "2"]));
        ok(c.cmd(&["SET", "other", "x"]));
        ok(c.cmd(&["EXEC"]));
        ok(c.cmd(&["SELECT", "0"]));
        state(&mut c)
    };
    if let Ok(out) = Command::new("redis-check-aof")
        .arg(aof_dir(&dir).join("appendonly.aof.manifest"))
        .output()
    {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "redis-check-aof refused it:\n{text}");
        assert!(
            text.contains("All AOF files and manifest are valid"),
            "{text}"
        );
    }
    let redis_dir = temp_dir();
    copy_dir(&aof_dir(&dir), &aof_dir(&redis_dir));
    let after = {
        let redis = Redis::start(&[
            "--dir",
            &redis_dir.display().to_string(),
            "--appendonly",
            "yes",
        ])
        .expect("redis-server");
        let mut c = Raw::connect(redis.port);
        assert!(wait_until(Duration::from_secs(10), || {
            c.info_int("persistence", "loading") == 0
        }));
        assert_eq!(state(&mut c), before, "redis-server loaded ember's files");
        ok(c.cmd(&["SET", "from-redis", "1"]));
        ok(c.cmd(&["HSET", "h2", "a", "b"]));
        ok(c.cmd(&["PEXPIRE", "h2", "100000"]));
        let after = state(&mut c);
        // SHUTDOWN flushes and syncs the AOF, whatever NOSAVE says.
        c.send_cmd(&[b"SHUTDOWN", b"NOSAVE"]);
        let _ = c.read();
        after
    };
    let server = Server::start_in(&redis_dir, 2, AOF);
    let mut c = server.raw();
    assert_eq!(state(&mut c), after, "ember loaded redis-server's files");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&redis_dir);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn a_legacy_appendonly_file_is_upgraded_as_redis_7_does() {
    let dir = temp_dir();
    let legacy =
        b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$3\r\nold\r\n$5\r\nstyle\r\n";
    std::fs::write(dir.join("appendonly.aof"), legacy).unwrap();
    {
        let server = Server::start_in(&dir, 2, AOF);
        let mut c = server.raw();
        assert_eq!(c.cmd(&["GET", "old"]).text(), "style");
        ok(c.cmd(&["SET", "new", "1"]));
    }
    assert!(!dir.join("appendonly.aof").exists());
    let text = manifest(&dir);
    assert!(
        text.starts_with("file appendonly.aof seq 1 type b\n"),
        "{text}"
    );
    let server = Server::start_in(&dir, 2, AOF);
    let mut c = server.raw();
    assert_eq!(c.cmd(&["GET", "old"]).text(), "style");
    assert_eq!(c.cmd(&["GET", "new"]).text(), "1");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
