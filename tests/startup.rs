//! Starting and stopping as redis-server does: the command line read by
//! redis-server 7.0's rules (a flag's value may start with `--`, a bare
//! `--save` is `save ""`, the number of values checked), with its error
//! lines; and SIGTERM / SIGINT shutting down as `shutdown-on-sigterm` /
//! `shutdown-on-sigint` say (saving when the `save` rules or the flags ask).
//! Expected texts were taken from redis-server 7.0.15; where it is
//! installed, the test also runs it with the same command line.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{wait_until, Reply, Server};

/// The `>>> 'line'` and reason lines of a refused start-up.
fn refusal(program: &str, args: &[&str]) -> String {
    let mut command = Command::new(program);
    command.args(args);
    let (status, stderr) = common::run_to_exit(command);
    assert!(!status.success(), "{program} {args:?} started");
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(">>> "))
        .unwrap_or_else(|| panic!("no config error in {stderr}"));
    format!("{}\n{}", lines[at], lines[at + 1])
}

#[test]
fn command_line_errors_read_as_redis_server_reads_them() {
    let cases: &[(&[&str], &str)] = &[
        (&["--port"], ">>> 'port'\nwrong number of arguments"),
        (&["--port", "6380", "--loglevel"], ">>> 'loglevel'\nwrong number of arguments"),
        (&["--port", "6379", "6380"], ">>> 'port \"6379\" \"6380\"'\nwrong number of arguments"),
        (
            &["--port", "--loglevel", "verbose"],
            ">>> 'port \"--loglevel\" \"verbose\"'\nwrong number of arguments",
        ),
        (
            &["--port", "--bla", "--loglevel", "verbose"],
            ">>> 'port \"--bla\"'\nargument couldn't be parsed into an integer",
        ),
        (
            &["--logfile", "--my--log--file", "--loglevel", "--bla"],
            ">>> 'loglevel \"--bla\"'\nargument(s) must be one of the following: debug, verbose, notice, warning",
        ),
        (
            &["--shutdown-on-sigint"],
            ">>> 'shutdown-on-sigint'\nargument(s) must be one of the following: default, save, nosave, now, force",
        ),
        (
            &["--replicaof", "127.0.0.1", "abc"],
            ">>> 'replicaof \"127.0.0.1\" \"abc\"'\nInvalid master port",
        ),
        (
            &["--replicaof", "--127.0.0.1", "--abc"],
            ">>> 'replicaof \"--127.0.0.1\"'\nwrong number of arguments",
        ),
    ];
    let redis = common::reference::Redis::installed();
    for (args, want) in cases {
        assert_eq!(
            refusal(env!("CARGO_BIN_EXE_ember"), args),
            *want,
            "{args:?}"
        );
        if redis {
            assert_eq!(
                refusal("redis-server", args),
                *want,
                "redis-server {args:?}"
            );
        }
    }
}

/// Values that start with `--`, names with their values in one argument,
/// and bare `--save`: the server starts with what redis-server would have.
#[test]
fn flags_take_their_values_as_redis_server_takes_them() {
    let server = Server::start(
        1,
        &[
            "--proc-title-template",
            "--my--title",
            "--maxmemory 700mb",
            "--save",
            "--shutdown-on-sigint",
            "nosave",
            "force",
            "now",
            "--shutdown-on-sigterm",
            "nosave force",
        ],
    );
    let mut c = server.raw();
    for (name, want) in [
        ("proc-title-template", "--my--title"),
        ("maxmemory", "734003200"),
        ("save", ""),
        ("shutdown-on-sigint", "nosave now force"),
        ("shutdown-on-sigterm", "nosave force"),
    ] {
        let got = c.cmd(&["CONFIG", "GET", name]).items();
        assert_eq!(got[1], Reply::bulk(want), "{name}");
    }
}

fn signal(server: &Server, name: &str) {
    let pid = server.pid().to_string();
    let status = Command::new("kill").args([name, &pid]).status().unwrap();
    assert!(status.success());
}

/// SIGTERM shuts down as SHUTDOWN does: with `save` rules set, the data
/// is saved first and loads back; `shutdown-on-sigterm nosave` skips the
/// save.
#[test]
fn sigterm_saves_under_save_rules_and_nosave_skips_it() {
    let dir = common::temp_dir();
    let mut server = Server::start_in(&dir, 2, &["--save", "3600 1"]);
    let mut c = server.raw();
    for i in 0..50 {
        assert_eq!(c.cmd(&["SET", &format!("k{i}"), "v"]), Reply::ok());
    }
    signal(&server, "-TERM");
    let status = server.wait_exit().expect("SIGTERM stops the server");
    assert!(status.success(), "{status:?}");
    assert!(dir.join("dump.rdb").exists());

    let mut again = Server::start_in(&dir, 2, &["--shutdown-on-sigterm", "nosave"]);
    let mut c = again.raw();
    assert_eq!(c.int(&["DBSIZE"]), 50);
    let saved = std::fs::metadata(dir.join("dump.rdb"))
        .unwrap()
        .modified()
        .unwrap();
    c.cmd(&["SET", "late", "v"]);
    signal(&again, "-TERM");
    assert!(again.wait_exit().expect("stops").success());
    let after = std::fs::metadata(dir.join("dump.rdb"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(saved, after, "nosave wrote the file");

    // SIGINT with no save rules: exits without a file of its own.
    let _ = std::fs::remove_file(dir.join("dump.rdb"));
    let mut third = Server::start_in(&dir, 1, &["--save", ""]);
    third.raw().cmd(&["SET", "x", "1"]);
    signal(&third, "-INT");
    assert!(third
        .wait_exit()
        .expect("SIGINT stops the server")
        .success());
    assert!(!dir.join("dump.rdb").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A signal's shutdown whose save fails leaves the server running, as
/// Redis's does (and `force` among the flags exits anyway).
#[test]
fn a_failed_final_save_keeps_the_server_up_unless_forced() {
    let dir = common::temp_dir();
    let mut server = Server::start_in(&dir, 1, &["--save", "3600 1"]);
    let mut c = server.raw();
    c.cmd(&["SET", "k", "v"]);
    // An unwritable target: a folder where the file should go.
    std::fs::create_dir(dir.join("dump.rdb")).unwrap();
    signal(&server, "-TERM");
    std::thread::sleep(Duration::from_millis(500));
    assert!(server.alive(), "exited although the save failed");
    assert_eq!(c.cmd(&["GET", "k"]), Reply::bulk("v"));
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "shutdown-on-sigterm", "force"]),
        Reply::ok()
    );
    signal(&server, "-TERM");
    assert!(wait_until(Duration::from_secs(10), || !server.alive()));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `daemonize yes` returns at once and leaves a server running in the
/// background; `pidfile` names it and goes at shutdown; `logfile` has its
/// log.
#[test]
fn daemonize_pidfile_and_logfile_as_redis_server() {
    let dir = common::temp_dir();
    let (pidfile, logfile) = (dir.join("ember.pid"), dir.join("ember.log"));
    let port = common::free_port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_ember"));
    command.current_dir(&dir).args([
        "--port",
        &port.to_string(),
        "--save",
        "",
        "--daemonize",
        "yes",
        "--pidfile",
        &pidfile.display().to_string(),
        "--logfile",
        &logfile.display().to_string(),
    ]);
    let (status, _) = common::run_to_exit(command);
    assert!(status.success());
    // Whatever happens below, the background server goes.
    struct Kill(std::path::PathBuf);
    impl Drop for Kill {
        fn drop(&mut self) {
            if let Ok(pid) = std::fs::read_to_string(&self.0) {
                let _ = Command::new("kill").args(["-9", pid.trim()]).status();
            }
        }
    }
    let _kill = Kill(pidfile.clone());
    assert!(wait_until(Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    }));
    let mut c = common::Raw::connect(port);
    assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()));
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let info = c.cmd(&["INFO", "server"]).text();
    assert_eq!(
        common::info_field(&info, "process_id").unwrap(),
        pid.trim(),
        "the pid file names the server"
    );
    for (name, want) in [
        ("daemonize", "yes"),
        ("pidfile", pidfile.to_str().unwrap()),
        ("logfile", logfile.to_str().unwrap()),
    ] {
        assert_eq!(
            c.cmd(&["CONFIG", "GET", name]).items()[1],
            Reply::bulk(want)
        );
    }
    assert!(wait_until(Duration::from_secs(5), || {
        std::fs::read_to_string(&logfile).is_ok_and(|t| t.contains("Ready to accept connections"))
    }));
    c.send(b"SHUTDOWN NOSAVE\r\n");
    assert!(wait_until(Duration::from_secs(10), || !pidfile.exists()));
    let log = std::fs::read_to_string(&logfile).unwrap();
    assert!(log.contains("ready to exit"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A port someone listens on stops start-up with Redis's lines.
#[test]
fn a_busy_port_fails_start_up_as_redis_server_does() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let mut command = Command::new(env!("CARGO_BIN_EXE_ember"));
    command.args(["--port", &port, "--bind", "127.0.0.1", "--save", ""]);
    let (status, stderr) = common::run_to_exit(command);
    assert!(!status.success());
    assert!(
        stderr.contains(&format!(
            "Warning: Could not create server TCP listening socket 127.0.0.1:{port}: bind: Address already in use"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("Failed listening on port {port} (TCP), aborting.")),
        "{stderr}"
    );
}
