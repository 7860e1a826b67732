//! RDB snapshots against the real thing: redis-server 7.0.15 loads
//! ember's `dump.rdb` and ember loads redis-server's (every type and
//! encoding, TTLs to the millisecond, several databases), redis-check-rdb
//! accepts ember's file, a restarted ember has its data back, expired keys
//! are neither written nor loaded, and a BGSAVE under 20 writing clients
//! keeps every reply right and writes the state of one instant.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::reference::Redis;
use common::{info_field, temp_dir, Raw, Reply, Server};

/// A database's keys with what they hold, in a form both servers print alike.
type State = BTreeMap<(usize, String), (String, String, i64)>;

/// Writes the same data to a server: every type in its compact and its
/// large encoding, volatile keys with millisecond deadlines, three databases.
fn populate(c: &mut Raw, deadline_ms: i64) {
    let ok = |r: Reply| assert!(!matches!(r, Reply::Error(_)), "{r:?}");
    for db in [0usize, 5, 15] {
        ok(c.cmd(&["SELECT", &db.to_string()]));
        let p = format!("d{db}:");
        ok(c.cmd(&["SET", &format!("{p}str"), "hello"]));
        ok(c.cmd(&["SET", &format!("{p}int"), "-123456"]));
        ok(c.cmd(&["SET", &format!("{p}big-int"), "12345678901234"]));
        ok(c.cmd(&["SET", &format!("{p}long"), &"abcdefgh".repeat(200)]));
        ok(c.cmd(&[
            "SET",
            &format!("{p}ttl"),
            "v",
            "PXAT",
            &deadline_ms.to_string(),
        ]));
        ok(c.cmd(&["RPUSH", &format!("{p}list"), "a", "1", "b", "-2"]));
        let many: Vec<String> = (0..3000).map(|i| format!("element-{i}")).collect();
        let mut push = vec!["RPUSH".to_string(), format!("{p}biglist")];
        push.extend(many.iter().cloned());
        ok(c.cmd(&push.iter().map(String::as_str).collect::<Vec<_>>()));
        ok(c.cmd(&["HSET", &format!("{p}hash"), "f1", "v1", "f2", "2"]));
        let mut hset = vec!["HSET".to_string(), format!("{p}bighash")];
        for i in 0..700 {
            hset.push(format!("field{i}"));
            hset.push(format!("value{i}"));
        }
        ok(c.cmd(&hset.iter().map(String::as_str).collect::<Vec<_>>()));
        ok(c.cmd(&["SADD", &format!("{p}intset"), "1", "2", "3", "-7"]));
        ok(c.cmd(&["SADD", &format!("{p}set"), "x", "y", "z"]));
        let mut sadd = vec!["SADD".to_string(), format!("{p}bigintset")];
        sadd.extend((0..600).map(|i| i.to_string()));
        ok(c.cmd(&sadd.iter().map(String::as_str).collect::<Vec<_>>()));
        ok(c.cmd(&[
            "ZADD",
            &format!("{p}zset"),
            "1.5",
            "a",
            "-2",
            "b",
            "inf",
            "c",
        ]));
        let mut zadd = vec!["ZADD".to_string(), format!("{p}bigzset")];
        for i in 0..300 {
            zadd.push(format!("{}", i as f64 / 7.0));
            zadd.push(format!("member{i}"));
        }
        ok(c.cmd(&zadd.iter().map(String::as_str).collect::<Vec<_>>()));
        ok(c.cmd(&["PFADD", &format!("{p}hll"), "a", "b", "c"]));
        ok(c.cmd(&[
            "PEXPIREAT",
            &format!("{p}zset"),
            &(deadline_ms + 7).to_string(),
        ]));
    }
    ok(c.cmd(&["SELECT", "0"]));
}

fn sorted(items: Vec<Reply>) -> String {
    let mut texts: Vec<String> = items.iter().map(Reply::text).collect();
    texts.sort();
    texts.join(",")
}

fn pairs(items: Vec<Reply>) -> String {
    let mut texts: Vec<String> = items
        .chunks(2)
        .map(|p| format!("{}={}", p[0].text(), p[1].text()))
        .collect();
    texts.sort();
    texts.join(",")
}

/// Every key of databases 0..16 with its type, encoding-independent
/// contents, OBJECT ENCODING and absolute deadline.
fn state(c: &mut Raw) -> State {
    let mut out = State::new();
    for db in 0..16usize {
        c.cmd(&["SELECT", &db.to_string()]);
        for key in c.cmd(&["KEYS", "*"]).items() {
            let key = key.text();
            let kind = c.cmd(&["TYPE", &key]).text();
            let contents = match kind.as_str() {
                "string" => c.cmd(&["GET", &key]).text(),
                "list" => {
                    let items = c.cmd(&["LRANGE", &key, "0", "-1"]).items();
                    items.iter().map(Reply::text).collect::<Vec<_>>().join(",")
                }
                "hash" => pairs(c.cmd(&["HGETALL", &key]).items()),
                "set" => sorted(c.cmd(&["SMEMBERS", &key]).items()),
                "zset" => {
                    let items = c.cmd(&["ZRANGE", &key, "0", "-1", "WITHSCORES"]).items();
                    items.iter().map(Reply::text).collect::<Vec<_>>().join(",")
                }
                other => panic!("type {other}"),
            };
            // A string's encoding depends on the command that wrote it
            // (a HyperLogLog is `raw`, loaded back `embstr`), in Redis too.
            let encoding = match kind.as_str() {
                "string" => String::new(),
                _ => c.cmd(&["OBJECT", "ENCODING", &key]).text(),
            };
            let at = c.cmd(&["PEXPIRETIME", &key]).int();
            out.insert((db, key), (kind, format!("{encoding}:{contents}"), at));
        }
    }
    c.cmd(&["SELECT", "0"]);
    out
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn check_rdb(path: &Path) -> Option<String> {
    let out = Command::new("redis-check-rdb").arg(path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "redis-check-rdb refused it:\n{text}");
    Some(text)
}

fn start_redis_in(dir: &Path) -> Option<Redis> {
    Redis::start(&[
        "--dir",
        &dir.display().to_string(),
        "--dbfilename",
        "dump.rdb",
    ])
}

#[test]
fn redis_server_loads_embers_file_and_ember_loads_redis_servers() {
    let Some(mut reference) = Redis::or_skip("redis_server_loads_embers_file") else {
        return;
    };
    let deadline = unix_ms() + 3_600_123;
    // ember writes, redis-server reads.
    let dir = temp_dir();
    let ember = Server::start_in(&dir, 3, &[]);
    let mut e = ember.raw();
    populate(&mut e, deadline);
    let written = state(&mut e);
    assert_eq!(written.len(), 3 * 15);
    assert_eq!(e.cmd(&["SAVE"]), Reply::ok());
    let report = check_rdb(&dir.join("dump.rdb")).unwrap_or_default();
    assert!(report.contains("RDB looks OK"), "{report}");
    reference.stop();
    let redis = start_redis_in(&dir).expect("redis-server starts on ember's file");
    let mut r = Raw::connect(redis.port);
    assert_eq!(
        state(&mut r),
        written,
        "redis-server's view of ember's file"
    );
    drop(redis);
    drop(ember);

    // redis-server writes, ember reads.
    let dir2 = temp_dir();
    let redis = start_redis_in(&dir2).unwrap();
    let mut r = Raw::connect(redis.port);
    populate(&mut r, deadline);
    let theirs = state(&mut r);
    assert_eq!(theirs, written, "both servers hold the same data");
    assert_eq!(r.cmd(&["SAVE"]), Reply::ok());
    drop(redis);
    for shards in [1, 4] {
        let ember = Server::start_in(&dir2, shards, &[]);
        let mut e = ember.raw();
        assert_eq!(
            state(&mut e),
            theirs,
            "ember ({shards} shards) on redis-server's file"
        );
        let info = e.cmd(&["INFO", "persistence"]).text();
        assert_eq!(
            info_field(&info, "rdb_last_load_keys_loaded").as_deref(),
            Some("45")
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

#[test]
fn a_restarted_ember_has_its_data_back_without_the_expired_keys() {
    let dir = temp_dir();
    let mut ember = Server::start_in(&dir, 2, &[]);
    let mut e = ember.raw();
    populate(&mut e, unix_ms() + 100_000);
    // Long enough to be saved on a loaded machine, short enough to have
    // expired by the time the restarted server loads the file.
    e.cmd(&["SET", "soon", "x", "PX", "3000"]);
    e.cmd(&["SET", "gone", "x", "PX", "1"]);
    std::thread::sleep(Duration::from_millis(20));
    let mut before = state(&mut e);
    assert!(before.remove(&(0, "soon".to_string())).is_some());
    // SHUTDOWN saves: the default rules are set.
    e.send_cmd(&[b"SHUTDOWN"]);
    assert!(e.read().is_none(), "the connection closes");
    assert!(ember.wait_exit().is_some_and(|s| s.success()));
    let report = check_rdb(&dir.join("dump.rdb")).unwrap_or_default();
    assert!(
        report.contains(&format!("{} keys read", before.len() + 1)),
        "{report}"
    );
    // "soon" was in the file; it has expired by the time ember loads it.
    std::thread::sleep(Duration::from_millis(3200));
    let ember = Server::start_in(&dir, 3, &[]);
    let mut e = ember.raw();
    assert_eq!(state(&mut e), before);
    let info = e.cmd(&["INFO", "persistence"]).text();
    assert_eq!(
        info_field(&info, "rdb_last_load_keys_expired").as_deref(),
        Some("1")
    );
    assert_eq!(
        info_field(&info, "rdb_changes_since_last_save").as_deref(),
        Some("0")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn save_commands_and_info_answer_as_redis_does() {
    let ember = Server::start(2, &["--save", ""]);
    let mut e = ember.raw();
    let before = e.cmd(&["LASTSAVE"]).int();
    e.cmd(&["SET", "a", "1"]);
    e.cmd(&["SET", "b", "2"]);
    let info = e.cmd(&["INFO", "persistence"]).text();
    assert_eq!(
        info_field(&info, "rdb_changes_since_last_save").as_deref(),
        Some("2")
    );
    assert_eq!(e.cmd(&["BGSAVE", "NOW"]), Reply::err("ERR syntax error"));
    assert_eq!(
        e.cmd(&["BGSAVE"]),
        Reply::Simple("Background saving started".into())
    );
    let mut done = false;
    for _ in 0..200 {
        let info = e.cmd(&["INFO", "persistence"]).text();
        if info_field(&info, "rdb_bgsave_in_progress").as_deref() == Some("0") {
            assert_eq!(
                info_field(&info, "rdb_last_bgsave_status").as_deref(),
                Some("ok")
            );
            assert_eq!(
                info_field(&info, "rdb_changes_since_last_save").as_deref(),
                Some("0")
            );
            assert_eq!(info_field(&info, "rdb_saves").as_deref(), Some("1"));
            done = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(done, "the background save ended");
    assert!(e.cmd(&["LASTSAVE"]).int() >= before);
    assert_eq!(e.cmd(&["SAVE"]), Reply::ok());
    assert!(ember.dir.join("dump.rdb").exists());
    // The field names and their order are redis-server 7.0.15's.
    let names = |info: &str| -> Vec<String> {
        info.lines()
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
            .collect()
    };
    if let Some(redis) = Redis::or_skip("info persistence fields") {
        let mut r = Raw::connect(redis.port);
        let theirs = r.cmd(&["INFO", "persistence"]).text();
        let ours = e.cmd(&["INFO", "persistence"]).text();
        assert_eq!(names(&ours), names(&theirs));
    }
}

#[test]
fn a_failed_background_save_refuses_writes_with_misconf() {
    let dir = temp_dir();
    let gone = dir.join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let ember = Server::start_in(
        &dir,
        2,
        &["--dir", &gone.display().to_string(), "--save", "3600 1"],
    );
    std::fs::remove_dir_all(&gone).unwrap();
    let mut e = ember.raw();
    assert_eq!(e.cmd(&["SET", "a", "1"]), Reply::ok());
    assert_eq!(e.cmd(&["SAVE"]), Reply::err("ERR"));
    assert_eq!(
        e.cmd(&["BGSAVE"]),
        Reply::Simple("Background saving started".into())
    );
    // Probe with another key: until the save has failed, writes land.
    let misconf = loop {
        let r = e.cmd(&["SET", "probe", "2"]);
        if r != Reply::ok() {
            break r;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(misconf
        .text()
        .starts_with("MISCONF Redis is configured to save RDB snapshots"));
    assert!(matches!(e.cmd(&["PING"]), Reply::Error(_)));
    assert_eq!(e.cmd(&["GET", "a"]), Reply::bulk("1"));
    assert_eq!(
        e.cmd(&["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"]),
        Reply::ok()
    );
    assert_eq!(e.cmd(&["SET", "a", "3"]), Reply::ok());
    let info = e.cmd(&["INFO", "persistence"]).text();
    assert_eq!(
        info_field(&info, "rdb_last_bgsave_status").as_deref(),
        Some("err")
    );
    assert_eq!(
        e.cmd(&["SHUTDOWN"]),
        Reply::err("ERR Errors trying to SHUTDOWN. Check logs.")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads a dump.rdb with ember's own loader: (db, key) -> value text.
fn file_keys(path: &Path) -> BTreeMap<(usize, Vec<u8>), Vec<u8>> {
    let bytes = std::fs::read(path).unwrap();
    let opts = ember::persist::LoadOptions {
        databases: 16,
        now_ms: 0,
        master: true,
        limits: Default::default(),
    };
    let mut keys = BTreeMap::new();
    ember::persist::file::load(&bytes, &opts, |db, key, value, _| {
        let text = match value {
            ember::store::Value::Str(s) => s.to_vec(),
            other => format!("{other:?}").into_bytes(),
        };
        keys.insert((db, key.to_vec()), text);
    })
    .unwrap();
    keys
}

#[test]
fn a_bgsave_under_twenty_writing_clients_writes_one_instant() {
    const PRELOADED: usize = 100_000;
    const CLIENTS: usize = 20;
    let ember = Server::start(4, &["--save", ""]);
    let mut e = ember.raw();
    // Keys the writers overwrite while the save runs.
    for chunk in (0..PRELOADED).collect::<Vec<_>>().chunks(1000) {
        let mut mset = vec!["MSET".to_string()];
        for i in chunk {
            mset.push(format!("p{i}"));
            mset.push("orig".into());
        }
        e.cmd(&mset.iter().map(String::as_str).collect::<Vec<_>>());
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let stop = std::sync::Arc::clone(&stop);
            let port = ember.port;
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                let mut n = 0u64;
                let mut rng = 0x9e3779b97f4a7c15u64 ^ i as u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // Each client's writes in order: its n-th key, then a
                    // preloaded key overwritten with (client, n), then its
                    // counter; MSET over two shards is one transaction.
                    assert_eq!(
                        c.cmd(&["SET", &format!("c{i}:{n}"), &n.to_string()]),
                        Reply::ok()
                    );
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let p = format!("p{}", rng % PRELOADED as u64);
                    assert_eq!(c.cmd(&["SET", &p, &format!("{i}:{n}")]), Reply::ok());
                    assert_eq!(c.cmd(&["INCR", &format!("cnt{i}")]).int(), n as i64 + 1);
                    let (a, b) = (format!("m{i}:a"), format!("m{i}:b"));
                    assert_eq!(
                        c.cmd(&["MSET", &a, &n.to_string(), &b, &n.to_string()]),
                        Reply::ok()
                    );
                    n += 1;
                }
                n
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        e.cmd(&["BGSAVE"]),
        Reply::Simple("Background saving started".into())
    );
    loop {
        let info = e.cmd(&["INFO", "persistence"]).text();
        if info_field(&info, "rdb_bgsave_in_progress").as_deref() == Some("0") {
            assert_eq!(
                info_field(&info, "rdb_last_bgsave_status").as_deref(),
                Some("ok")
            );
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let written: Vec<u64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    assert!(written.iter().all(|&n| n > 0));

    let keys = file_keys(&ember.dir.join("dump.rdb"));
    let get = |k: &str| keys.get(&(0, k.as_bytes().to_vec())).cloned();
    let num = |v: Vec<u8>| String::from_utf8(v).unwrap().parse::<u64>().unwrap();
    let mut seen = [0u64; CLIENTS];
    for (i, seen) in seen.iter_mut().enumerate() {
        // The client's keys are a prefix 0..m, its counter m or m + 1... as
        // its writes stood at one instant.
        let mut m = 0;
        while get(&format!("c{i}:{m}")).is_some() {
            m += 1;
        }
        assert!(
            keys.keys().all(|(_, k)| {
                let k = String::from_utf8_lossy(k);
                match k.strip_prefix(&format!("c{i}:")) {
                    Some(n) => n.parse::<u64>().unwrap() < m,
                    None => true,
                }
            }),
            "client {i}: its keys have a gap"
        );
        let cnt = get(&format!("cnt{i}")).map_or(0, num);
        assert!(
            cnt == m || cnt + 1 == m,
            "client {i}: {m} keys, counter {cnt}"
        );
        let a = get(&format!("m{i}:a")).map(num);
        assert_eq!(a, get(&format!("m{i}:b")).map(num), "client {i}: MSET torn");
        // The MSET of round n follows the counter's n + 1.
        let fits = match a {
            None => cnt <= 1,
            Some(a) => a + 1 == cnt || a + 2 == cnt,
        };
        assert!(fits, "client {i}: MSET {a:?}, counter {cnt}");
        *seen = m;
    }
    for p in 0..PRELOADED {
        let v = get(&format!("p{p}")).expect("every preloaded key is in the file");
        if v != b"orig" {
            let text = String::from_utf8(v).unwrap();
            let (i, n) = text.split_once(':').unwrap();
            let (i, n): (usize, u64) = (i.parse().unwrap(), n.parse().unwrap());
            assert!(
                n < seen[i],
                "p{p} = {text}, written after client {i}'s {}th key",
                seen[i]
            );
        }
    }
}

const LIBRARY: &str = "#!lua name=filelib\nredis.register_function{function_name='fget', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}";

/// FUNCTION LIST WITHCODE.
fn libraries(c: &mut Raw) -> Reply {
    c.cmd(&["FUNCTION", "LIST", "WITHCODE"])
}

#[test]
fn function_libraries_travel_in_the_file_between_ember_and_redis_server() {
    let Some(mut reference) = Redis::or_skip("function libraries in the RDB file") else {
        return;
    };
    let mut r = Raw::connect(reference.port);
    r.cmd(&["FUNCTION", "LOAD", LIBRARY]);
    let expected = libraries(&mut r);
    reference.stop();

    // ember writes them, ember and redis-server read them.
    let dir = temp_dir();
    let mut ember = Server::start_in(&dir, 2, &[]);
    let mut e = ember.raw();
    assert_eq!(
        e.cmd(&["FUNCTION", "LOAD", LIBRARY]),
        Reply::bulk("filelib")
    );
    e.cmd(&["SET", "k", "v"]);
    assert_eq!(e.cmd(&["SAVE"]), Reply::ok());
    let report = check_rdb(&dir.join("dump.rdb")).unwrap_or_default();
    assert!(report.contains("RDB looks OK"), "{report}");
    // DEBUG RELOAD keeps them (flushed and read back).
    e.send_cmd(&[b"SHUTDOWN", b"NOSAVE"]);
    assert!(e.read().is_none(), "the connection closes");
    assert!(ember.wait_exit().is_some());
    let ember = Server::start_in(&dir, 3, &["--enable-debug-command", "yes"]);
    let mut e = ember.raw();
    assert_eq!(libraries(&mut e), expected);
    assert_eq!(e.cmd(&["FCALL_RO", "fget", "1", "k"]), Reply::bulk("v"));
    assert_eq!(e.cmd(&["DEBUG", "RELOAD"]), Reply::ok());
    assert_eq!(libraries(&mut e), expected);
    drop(ember);
    let redis = start_redis_in(&dir).expect("redis-server starts on ember's file");
    let mut r = Raw::connect(redis.port);
    assert_eq!(libraries(&mut r), expected);
    assert_eq!(r.cmd(&["FCALL_RO", "fget", "1", "k"]), Reply::bulk("v"));

    // redis-server writes them, ember reads them.
    let dir2 = temp_dir();
    let redis = start_redis_in(&dir2).unwrap();
    let mut r = Raw::connect(redis.port);
    r.cmd(&["FUNCTION", "LOAD", LIBRARY]);
    assert_eq!(r.cmd(&["SAVE"]), Reply::ok());
    drop(redis);
    let ember = Server::start_in(&dir2, 1, &[]);
    let mut e = ember.raw();
    assert_eq!(libraries(&mut e), expected);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
}

/// FLUSHALL with `save` rules writes the emptied keyspace (Redis 7.0), so a
/// server killed before its next save does not bring the keys back;
/// without rules it writes nothing and the changes stay counted.
#[test]
fn flushall_saves_the_empty_keyspace_when_save_rules_are_set() {
    let changes = |c: &mut Raw| c.info_int("persistence", "rdb_changes_since_last_save");
    let dir = temp_dir();
    let ember = Server::start_in(&dir, 2, &[]);
    let mut e = ember.raw();
    for i in 0..50 {
        e.cmd(&["SET", &format!("k{i}"), "v"]);
    }
    assert_eq!(e.cmd(&["SAVE"]), Reply::ok());
    e.cmd(&["SET", "after-save", "v"]);
    assert_eq!(e.cmd(&["FLUSHALL"]), Reply::ok());
    assert_eq!(changes(&mut e), 0);
    // Killed (SIGKILL on drop): no save on the way out.
    drop(ember);
    let ember = Server::start_in(&dir, 2, &[]);
    let mut e = ember.raw();
    assert_eq!(
        e.cmd(&["DBSIZE"]),
        Reply::Int(0),
        "the flushed keys came back"
    );
    // No rules: FLUSHALL leaves the file and counts as a change.
    assert_eq!(e.cmd(&["CONFIG", "SET", "save", ""]), Reply::ok());
    e.cmd(&["SET", "key", "value"]);
    assert_eq!(e.cmd(&["FLUSHALL"]), Reply::ok());
    assert!(changes(&mut e) > 0);
    let _ = std::fs::remove_dir_all(&dir);
}
