//! The save process (`persist::child`) against a real ember, as Redis's
//! suite treats Redis's forked child: `kill -9` of it fails a BGSAVE
//! (`rdb_last_bgsave_status:err`, MISCONF for writes and for scripts that
//! write) and an AOF rewrite (the incr file it opened stays listed); a
//! rewrite turning the AOF on is retried after such a kill, its temporary
//! incr file gone; `aof-disable-auto-gc no` deletes the history at once;
//! DEBUG LOADAOF reads the manifest back, so numbering follows the files.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{wait_until, Raw, Reply, Server};

/// The processes whose parent is `pid` (from /proc, as `pgrep -P` reads).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Ok(child) = name.parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so from its ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

fn the_child(server: &Server) -> u32 {
    let mut found = Vec::new();
    assert!(
        wait_until(Duration::from_secs(5), || {
            found = children(server.pid());
            !found.is_empty()
        }),
        "no save process"
    );
    assert_eq!(found.len(), 1, "{found:?}");
    found[0]
}

fn kill9(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn is_err_starting(r: &Reply, prefix: &str) -> bool {
    matches!(r, Reply::Error(e) if e.starts_with(prefix))
}

fn wait_info(c: &mut Raw, field: &str, value: i64) {
    assert!(
        wait_until(Duration::from_secs(10), || c.info_int("persistence", field)
            == value),
        "{field} never became {value}"
    );
}

fn populate(c: &mut Raw, n: usize) {
    for i in 0..n {
        assert_eq!(c.cmd(&["SET", &format!("k{i}"), "v"]).text(), "OK");
    }
}

/// An AOF from the start, no save rules, DEBUG allowed.
const AOF_ON: &[&str] = &[
    "--appendonly",
    "yes",
    "--save",
    "",
    "--enable-debug-command",
    "yes",
];

#[test]
fn kill_9_of_the_save_process_fails_the_bgsave_and_writes_get_misconf() {
    let server = Server::start(2, &["--save", "3600 1000"]);
    let mut c = server.raw();
    populate(&mut c, 20);
    c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "10000000"]);
    assert_eq!(c.cmd(&["BGSAVE"]).text(), "Background saving started");
    let child = the_child(&server);
    assert_eq!(c.info_int("persistence", "rdb_bgsave_in_progress"), 1);
    kill9(child);
    wait_info(&mut c, "rdb_bgsave_in_progress", 0);
    assert_eq!(
        c.info_field("persistence", "rdb_last_bgsave_status")
            .as_deref(),
        Some("err")
    );
    assert!(
        children(server.pid()).is_empty(),
        "the save process was reaped"
    );
    assert_eq!(c.cmd(&["GET", "k1"]).text(), "v");
    assert!(is_err_starting(&c.cmd(&["SET", "x", "y"]), "MISCONF"));
    let script = c.cmd(&["EVAL", "return redis.call('set','x',1)", "1", "x"]);
    assert!(is_err_starting(&script, "MISCONF"), "{script:?}");
    let flagged = c.cmd(&["EVAL", "#!lua\nreturn redis.call('set','x',1)", "1", "x"]);
    assert!(is_err_starting(&flagged, "MISCONF"), "{flagged:?}");
    let reader = c.cmd(&[
        "EVAL",
        "#!lua flags=no-writes\nreturn redis.call('get','k1')",
        "1",
        "k1",
    ]);
    assert_eq!(reader.text(), "v");
    assert_eq!(c.info_int("stats", "total_forks"), 1);
    // A save that works makes the server writable again.
    c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
    assert_eq!(c.cmd(&["BGSAVE"]).text(), "Background saving started");
    wait_info(&mut c, "rdb_bgsave_in_progress", 0);
    assert_eq!(c.cmd(&["SET", "x", "y"]).text(), "OK");
    assert!(server.dir.join("dump.rdb").exists());
}

#[test]
fn a_save_runs_with_the_key_delay_it_started_with() {
    let server = Server::start(2, &["--save", ""]);
    let mut c = server.raw();
    populate(&mut c, 2);
    c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "10000000"]);
    assert_eq!(c.cmd(&["BGSAVE"]).text(), "Background saving started");
    c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
    // Even a single key waits its delay, as Redis's child sleeps per key.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(c.info_int("persistence", "rdb_bgsave_in_progress"), 1);
    kill9(the_child(&server));
    wait_info(&mut c, "rdb_bgsave_in_progress", 0);
}

fn manifest(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("appendonlydir/appendonly.aof.manifest")).unwrap_or_default()
}

#[test]
fn a_killed_rewrite_leaves_its_incr_file_listed() {
    let server = Server::start(2, AOF_ON);
    let mut c = server.raw();
    populate(&mut c, 10);
    c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "10000000"]);
    let started = c.cmd(&["BGREWRITEAOF"]).text();
    assert!(started.starts_with("Background append only file rewriting"));
    kill9(the_child(&server));
    wait_info(&mut c, "aof_rewrite_in_progress", 0);
    assert_eq!(
        c.info_field("persistence", "aof_last_bgrewrite_status")
            .as_deref(),
        Some("err")
    );
    let text = manifest(&server.dir);
    assert!(
        text.contains("appendonly.aof.1.incr.aof seq 1 type i"),
        "{text}"
    );
    assert!(
        text.contains("appendonly.aof.2.incr.aof seq 2 type i"),
        "{text}"
    );
    let before = c.cmd(&["DEBUG", "DIGEST"]).text();
    assert_eq!(c.cmd(&["DEBUG", "LOADAOF"]).text(), "OK");
    assert_eq!(c.cmd(&["DEBUG", "DIGEST"]).text(), before);
}

#[test]
fn turning_the_aof_on_retries_a_killed_rewrite_without_its_temp_incr_file() {
    let server = Server::start(2, &["--appendonly", "no", "--save", ""]);
    let mut c = server.raw();
    populate(&mut c, 10);
    c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "10000000"]);
    assert_eq!(c.cmd(&["CONFIG", "SET", "appendonly", "yes"]).text(), "OK");
    assert_eq!(c.info_int("persistence", "aof_rewrite_in_progress"), 1);
    let dir = server.dir.join("appendonlydir");
    assert!(dir.join("temp-appendonly.aof.incr").exists());
    kill9(the_child(&server));
    // The next try starts by itself (the rules thread, within a second or
    // two); the AOF stays on its way on meanwhile, the manifest unwritten.
    assert!(wait_until(Duration::from_secs(5), || {
        c.info_int("stats", "total_forks") == 2
    }));
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "appendonly"]).items()[1].text(),
        "yes"
    );
    assert!(!dir.join("appendonly.aof.manifest").exists());
    c.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "0"]);
    kill9(the_child(&server));
    c.wait_rewrite();
    let text = manifest(&server.dir);
    assert!(
        text.contains("appendonly.aof.1.base.rdb seq 1 type b"),
        "{text}"
    );
    assert!(
        text.contains("appendonly.aof.1.incr.aof seq 1 type i"),
        "{text}"
    );
    assert!(!dir.join("temp-appendonly.aof.incr").exists());
}

#[test]
fn auto_gc_back_on_deletes_the_history_and_loadaof_numbers_from_the_files() {
    let server = Server::start(2, AOF_ON);
    let mut c = server.raw();
    populate(&mut c, 3);
    c.cmd(&["CONFIG", "SET", "aof-disable-auto-gc", "yes"]);
    for _ in 0..2 {
        c.cmd(&["BGREWRITEAOF"]);
        c.wait_rewrite();
    }
    assert!(manifest(&server.dir).contains("type h"));
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "aof-disable-auto-gc", "no"])
            .text(),
        "OK"
    );
    let text = manifest(&server.dir);
    assert!(!text.contains("type h"), "{text}");
    assert_eq!(text.lines().count(), 2, "{text}");
    let dir = server.dir.join("appendonlydir");
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(files, 3, "base, incr, manifest");
    // A rewrite with the AOF off leaves the base alone; DEBUG LOADAOF
    // reads that manifest back, so the next incr file is number 1.
    c.cmd(&["CONFIG", "SET", "appendonly", "no"]);
    c.cmd(&["BGREWRITEAOF"]);
    c.wait_rewrite();
    assert_eq!(c.cmd(&["DEBUG", "LOADAOF"]).text(), "OK");
    c.cmd(&["CONFIG", "SET", "appendonly", "yes"]);
    c.wait_rewrite();
    let text = manifest(&server.dir);
    assert!(
        text.contains("appendonly.aof.1.incr.aof seq 1 type i"),
        "{text}"
    );
}
