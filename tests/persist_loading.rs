//! Start-up loading as Redis's own suite (integration/aof, integration/rdb)
//! watches it, against a real ember and, where it applies, the real
//! redis-server on the same files: nothing expires while the AOF replays
//! (a past PEXPIREAT keeps the key for the commands after it), a read-only
//! replica replays the AOF's writes and scripts, a file saved after DEBUG
//! SET-ACTIVE-EXPIRE 0 keeps its expired keys for the load to count, and
//! the " PID: " banner line comes only once the port is bound.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::reference::Redis;
use common::{info_field, temp_dir, wait_until, Raw, Reply, Server};

fn resp(args: &[&str]) -> String {
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    out
}

/// An appendonlydir holding one incr file with `commands`, as Redis's
/// suite writes them (`create_aof` + `create_aof_manifest`).
fn write_aof(dir: &Path, commands: &[&[&str]]) {
    let aof = dir.join("appendonlydir");
    std::fs::create_dir_all(&aof).unwrap();
    let body: String = commands.iter().map(|c| resp(c)).collect();
    std::fs::write(aof.join("appendonly.aof.1.incr.aof"), body).unwrap();
    std::fs::write(
        aof.join("appendonly.aof.manifest"),
        "file appendonly.aof.1.incr.aof seq 1 type i\n",
    )
    .unwrap();
}

/// The reply to `args` once the server is done loading.
fn loaded(c: &mut Raw, args: &[&str]) -> Reply {
    let mut reply = c.cmd(args);
    let done = wait_until(Duration::from_secs(10), || {
        reply = c.cmd(args);
        !matches!(&reply, Reply::Error(e) if e.starts_with("LOADING"))
    });
    assert!(done, "still loading");
    reply
}

const PAST_DEADLINE: &[&[&str]] = &[
    &["rpush", "list", "foo"],
    &["pexpireat", "list", "1000"],
    &["rpush", "list", "bar"],
];

#[test]
fn a_past_deadline_in_the_aof_keeps_the_key_until_loading_ends() {
    let dir = temp_dir();
    write_aof(&dir, PAST_DEADLINE);
    let server = Server::start_in(&dir, 2, &["--appendonly", "yes", "--save", ""]);
    let mut c = server.raw();
    // The second RPUSH met the list with its (past) deadline, so the list
    // of two expires once loading ends: nothing is left.
    assert_eq!(loaded(&mut c, &["LLEN", "list"]).int(), 0);
    assert_eq!(c.cmd(&["EXISTS", "list"]).int(), 0);
}

#[test]
fn redis_server_agrees_on_the_past_deadline_in_the_aof() {
    let dir = temp_dir();
    write_aof(&dir, PAST_DEADLINE);
    let dir_arg = dir.to_string_lossy().to_string();
    let Some(redis) = Redis::start(&["--dir", dir_arg.as_str(), "--appendonly", "yes"]) else {
        eprintln!("redis-server is not installed: skipped");
        return;
    };
    let mut c = Raw::connect(redis.port);
    assert_eq!(loaded(&mut c, &["LLEN", "list"]).int(), 0);
}

#[test]
fn a_read_only_replica_replays_the_aofs_writes_and_scripts() {
    let dir = temp_dir();
    write_aof(
        &dir,
        &[
            &["select", "9"],
            &["set", "plain", "1"],
            &["eval", "redis.call('set',KEYS[1],'100')", "1", "foo"],
            &["eval", "redis.call('incr',KEYS[1])", "1", "foo"],
            &["eval", "redis.call('incr',KEYS[1])", "1", "foo"],
        ],
    );
    let server = Server::start_in(
        &dir,
        2,
        &[
            "--appendonly",
            "yes",
            "--save",
            "",
            "--replicaof",
            "127.0.0.1 0",
            "--replica-read-only",
            "yes",
        ],
    );
    let mut c = server.raw();
    c.cmd(&["SELECT", "9"]);
    assert_eq!(loaded(&mut c, &["GET", "foo"]).text(), "102");
    assert_eq!(c.cmd(&["GET", "plain"]).text(), "1");
    // Its own clients are still refused.
    assert!(matches!(c.cmd(&["SET", "x", "1"]), Reply::Error(e) if e.starts_with("READONLY")));
}

#[test]
fn a_save_after_set_active_expire_0_keeps_expired_keys_for_the_load_to_count() {
    let dir = temp_dir();
    {
        let server = Server::start_in(&dir, 2, &["--save", "", "--enable-debug-command", "yes"]);
        let mut c = server.raw();
        assert_eq!(c.cmd(&["SET", "live", "v"]).text(), "OK");
        assert_eq!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).text(), "OK");
        for db in 0..4 {
            c.cmd(&["SELECT", &db.to_string()]);
            for k in 0..5 {
                let key = format!("gone{k}");
                assert_eq!(c.cmd(&["SET", &key, "v", "PX", "10"]).text(), "OK");
            }
        }
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(c.cmd(&["SAVE"]).text(), "OK");
    }
    let server = Server::start_in(&dir, 2, &["--save", ""]);
    let mut c = server.raw();
    assert_eq!(c.info_int("persistence", "rdb_last_load_keys_expired"), 20);
    assert_eq!(c.info_int("persistence", "rdb_last_load_keys_loaded"), 1);
    assert_eq!(c.cmd(&["DBSIZE"]).int(), 1);
}

#[test]
fn a_save_leaves_expired_keys_out_while_active_expiry_runs() {
    let dir = temp_dir();
    {
        let server = Server::start_in(&dir, 2, &["--save", ""]);
        let mut c = server.raw();
        assert_eq!(c.cmd(&["SET", "live", "v"]).text(), "OK");
        assert_eq!(c.cmd(&["SET", "gone", "v", "PX", "10"]).text(), "OK");
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(c.cmd(&["SAVE"]).text(), "OK");
    }
    let server = Server::start_in(&dir, 2, &["--save", ""]);
    let mut c = server.raw();
    assert_eq!(c.info_int("persistence", "rdb_last_load_keys_expired"), 0);
    assert_eq!(c.info_int("persistence", "rdb_last_load_keys_loaded"), 1);
}

#[test]
fn no_pid_line_when_the_port_cannot_be_bound() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let dir = temp_dir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ember"))
        .current_dir(&dir)
        .args([
            "--port",
            &port,
            "--bind",
            "127.0.0.1",
            "--always-show-logo",
            "yes",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        out.push_str(&line.unwrap());
        out.push('\n');
    }
    let status = child.wait().unwrap();
    assert!(!status.success());
    // Redis's suite reads " PID: <pid>" as "started" and this text as
    // "try another port".
    assert!(!out.contains(" PID: "), "{out}");
    assert!(out.contains("Failed listening on port"), "{out}");
}

#[test]
fn the_port_answers_once_the_pid_line_is_out() {
    let dir = temp_dir();
    let port = common::free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ember"))
        .current_dir(&dir)
        .args(["--port", &port.to_string(), "--always-show-logo", "yes"])
        .args(["--save", "", "--shards", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pid_line = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.contains(" PID: "));
    assert!(pid_line.is_some());
    // Bound before the line: the kernel takes the connection at once.
    let connected = std::net::TcpStream::connect(("127.0.0.1", port));
    let _ = child.kill();
    let _ = child.wait();
    assert!(connected.is_ok());
}

/// What a client meets while a long `dump.rdb` load runs, on ember and on
/// redis-server from the same file: `-LOADING` to commands, INFO
/// `loading:1` with the `loading_*` fields, `CONFIG SET dir` refused and
/// other parameters set; then every key, once the load is done.
#[test]
fn a_long_rdb_load_answers_loading_then_serves_the_data() {
    const KEYS: usize = 6000;
    let dir = temp_dir();
    {
        let seed = Server::start_in(&dir, 2, &["--enable-debug-command", "yes"]);
        let mut c = seed.raw();
        assert_eq!(
            c.cmd(&["DEBUG", "POPULATE", &KEYS.to_string()]),
            Reply::ok()
        );
        assert_eq!(c.cmd(&["SAVE"]), Reply::ok());
    }
    let size = std::fs::metadata(dir.join("dump.rdb")).unwrap().len();
    // 6000 keys at 500 µs each: about 3 s of loading (the events interval
    // is for redis-server, which answers only that often while loading).
    let slow = [
        "--key-load-delay",
        "500",
        "--loading-process-events-interval-bytes",
        "1024",
        "--save",
        "",
        "--enable-protected-configs",
        "yes",
    ];
    let loading_text = "LOADING Redis is loading the dataset in memory";
    let ember = Server::start_loading(&dir, 2, &slow);
    let mut c = ember.raw();
    assert_eq!(c.cmd(&["PING"]), Reply::err(loading_text));
    assert_eq!(c.cmd(&["GET", "key:1"]), Reply::err(loading_text));
    let info = c.cmd(&["INFO", "persistence"]).text();
    let field =
        |name: &str| info_field(&info, name).unwrap_or_else(|| panic!("no {name} in {info}"));
    assert_eq!(field("loading"), "1");
    assert_eq!(field("async_loading"), "0");
    assert_eq!(field("loading_total_bytes"), size.to_string());
    assert!(field("loading_rdb_used_mem").parse::<u64>().unwrap() > 0);
    assert!(field("loading_loaded_bytes").parse::<u64>().unwrap() <= size);
    let perc: f64 = field("loading_loaded_perc").parse().unwrap();
    assert!((0.0..=100.0).contains(&perc), "{perc}");
    field("loading_eta_seconds").parse::<u64>().unwrap();
    let started: u64 = field("loading_start_time").parse().unwrap();
    assert!(started.abs_diff(common::unix_ms() / 1000) < 60);
    assert_eq!(c.cmd(&["CONFIG", "SET", "loglevel", "notice"]), Reply::ok());
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "dir", "/tmp"]),
        Reply::err(loading_text)
    );
    let done = wait_until(Duration::from_secs(60), || {
        c.cmd(&["PING"]) == common::simple("PONG")
    });
    assert!(done, "still loading");
    assert_eq!(c.cmd(&["DBSIZE"]).int(), KEYS as i64);
    assert_eq!(c.cmd(&["GET", "key:5"]), Reply::bulk("value:5"));
    let info = c.cmd(&["INFO", "persistence"]).text();
    assert_eq!(info_field(&info, "loading").as_deref(), Some("0"));
    assert_eq!(
        info_field(&info, "rdb_last_load_keys_loaded").as_deref(),
        Some(KEYS.to_string().as_str())
    );
    drop(ember);

    // redis-server, from the same file, with the same settings.
    let mut args: Vec<String> = vec!["--dir".into(), dir.display().to_string()];
    args.extend(slow.iter().map(|s| s.to_string()));
    let Some(redis) = Redis::start(&args) else {
        eprintln!("redis-server is not installed: its half skipped");
        return;
    };
    let mut r = Raw::connect(redis.port);
    assert_eq!(r.cmd(&["PING"]), Reply::err(loading_text));
    let info = r.cmd(&["INFO", "persistence"]).text();
    assert_eq!(info_field(&info, "loading").as_deref(), Some("1"));
    assert_eq!(
        info_field(&info, "loading_total_bytes"),
        Some(size.to_string())
    );
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "dir", "/tmp"]),
        Reply::err(loading_text)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
