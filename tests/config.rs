//! Configuration end to end: `tcp-keepalive` on the server's sockets, the
//! command line (a file first, flags over it, `--help`), and CONFIG SET of
//! what CONFIG GET gave, as Redis's own "CONFIG sanity" test does.
//! Expected replies were taken from redis-server 7.0.15.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{free_port, temp_conf, wait_until, Raw, Reply, Server};

/// The kernel's view of the server's side of `client`'s connection, from
/// `/proc/<server pid>/net/tcp`: the `tr` column (2: the keepalive timer
/// is armed; 0: no timer) and `tm->when`, the time left on it in clock
/// ticks (USER_HZ, 100 a second on Linux).
#[cfg(target_os = "linux")]
fn server_side_timer(server: &Server, client: &Raw) -> Option<(u32, u64)> {
    let client_port: u16 = client.local_addr().rsplit(':').next()?.parse().ok()?;
    let table = std::fs::read_to_string(format!("/proc/{}/net/tcp", server.pid())).ok()?;
    let port = |addr: &str| u16::from_str_radix(addr.rsplit(':').next()?, 16).ok();
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if port(fields.get(1)?) != Some(server.port) || port(fields.get(2)?) != Some(client_port) {
            return None;
        }
        let (tr, when) = fields.get(5)?.split_once(':')?;
        Some((tr.parse().ok()?, u64::from_str_radix(when, 16).ok()?))
    })
}

/// A connection that has been served (so the server accepted it and set
/// its socket up), and the server side's timer.
#[cfg(target_os = "linux")]
fn served_timer(server: &Server) -> (Raw, (u32, u64)) {
    let mut client = server.raw();
    assert_eq!(client.cmd(&["PING"]), Reply::Simple("PONG".into()));
    let timer = settled_timer(server, &client);
    (client, timer)
}

/// The server side's timer once no reply is in flight: until the last
/// reply is acknowledged the retransmit timer shows instead (`tr` 1).
#[cfg(target_os = "linux")]
fn settled_timer(server: &Server, client: &Raw) -> (u32, u64) {
    let mut timer = None;
    wait_until(Duration::from_secs(5), || {
        timer = server_side_timer(server, client);
        timer.is_some_and(|(tr, _)| tr != 1)
    });
    timer.expect("the server's socket is in /proc/<pid>/net/tcp")
}

#[cfg(target_os = "linux")]
#[test]
fn tcp_keepalive_arms_the_keepalive_timer_of_accepted_sockets() {
    const TICKS_PER_S: u64 = 100;
    let server = Server::start(1, &["--tcp-keepalive", "7"]);
    let (_client, (tr, when)) = served_timer(&server);
    assert_eq!(tr, 2, "keepalive timer armed");
    assert!(
        when > 0 && when <= 7 * TICKS_PER_S,
        "first probe within 7 s: {when}"
    );

    // The default, 300 s, as Redis.
    let server = Server::start(1, &[]);
    let (_client, (tr, when)) = served_timer(&server);
    assert_eq!(tr, 2);
    assert!(
        when > 7 * TICKS_PER_S && when <= 300 * TICKS_PER_S,
        "{when}"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn tcp_keepalive_zero_is_off_and_config_set_applies_to_new_connections() {
    let server = Server::start(1, &["--tcp-keepalive", "0"]);
    let (mut old, (tr, _)) = served_timer(&server);
    assert_eq!(tr, 0, "no keepalive timer");
    assert_eq!(
        old.cmd(&["CONFIG", "SET", "tcp-keepalive", "5"]),
        Reply::ok()
    );
    let (_new, (tr, when)) = served_timer(&server);
    assert_eq!(tr, 2);
    assert!(when > 0 && when <= 500, "{when}");
    // The connection accepted before keeps what it got.
    assert_eq!(old.cmd(&["PING"]), Reply::Simple("PONG".into()));
    let (tr, _) = settled_timer(&server, &old);
    assert_eq!(tr, 0);
}

/// Runs ember with `args` until it answers PING on `port`, then kills it;
/// false if it exited or never answered.
fn answers_on(args: &[&str], port: u16) -> bool {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ember");
    let up = wait_until(Duration::from_secs(10), || {
        matches!(child.try_wait(), Ok(None))
            && std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let mut config = Reply::Nil;
    if up {
        config = Raw::connect(port).cmd(&["CONFIG", "GET", "maxclients"]);
    }
    let _ = child.kill();
    let _ = child.wait();
    up && config == Reply::Array(vec![Reply::bulk("maxclients"), Reply::bulk("33")])
}

#[test]
fn a_config_file_comes_first_and_flags_override_it() {
    let (file_port, flag_port) = (free_port(), free_port());
    let path = temp_conf(&format!("port {file_port}\nmaxclients 33\nshards 1\n"));
    let file = path.display().to_string();
    let flag_port_text = flag_port.to_string();
    assert!(answers_on(&[&file, "--port", &flag_port_text], flag_port));
    assert!(answers_on(&["--config", &file], file_port));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn help_lists_the_parameters_and_exits() {
    let out = Command::new(env!("CARGO_BIN_EXE_ember"))
        .arg("--help")
        .output()
        .expect("run ember --help");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--port",
        "--shards",
        "--tcp-keepalive",
        "--hash-max-ziplist-entries",
    ] {
        assert!(text.contains(flag), "{flag} in:\n{text}");
    }
}

#[test]
fn config_set_takes_back_every_value_config_get_gives() {
    // Redis's "CONFIG sanity": everything but its immutable parameters,
    // with the protected ones allowed as Redis's test servers allow them.
    let server = Server::start(2, &["--enable-protected-configs", "yes"]);
    let mut c = server.raw();
    let all = c.cmd(&["CONFIG", "GET", "*"]).items();
    assert!(all.len() > 60, "{all:?}");
    for pair in all.chunks(2) {
        let (name, value) = (pair[0].text(), pair[1].text());
        // Redis's immutable ones, refused by it too.
        let immutable = [
            "databases",
            "enable-debug-command",
            "daemonize",
            "aclfile",
            "rdbchecksum",
            "always-show-logo",
            "pidfile",
            "logfile",
            "unixsocket",
            "unixsocketperm",
            "enable-protected-configs",
            "enable-module-command",
            "appendfilename",
            "appenddirname",
            // Accepted, not acted on (`config::compat`): immutable in
            // Redis, and in its own CONFIG sanity's skip list.
            "io-threads",
            "io-threads-do-reads",
            "tcp-backlog",
            "cluster-enabled",
            "cluster-config-file",
            "cluster-port",
            "supervised",
            "syslog-enabled",
            "syslog-ident",
            "syslog-facility",
            "set-proc-title",
            "disable-thp",
            "socket-mark-id",
            "server_cpulist",
            "bio_cpulist",
            "aof_rewrite_cpulist",
            "bgsave_cpulist",
            "replicaof",
            "slaveof",
        ];
        if immutable.contains(&name.as_str()) {
            continue;
        }
        assert_eq!(
            c.cmd(&["CONFIG", "SET", &name, &value]),
            Reply::ok(),
            "{name} {value:?}"
        );
    }
    assert_eq!(c.cmd(&["CONFIG", "GET", "*"]).items(), all);
    // A new tls-port is refused, as ember cannot open one live yet (a
    // new port or bind it can: tests/config_listen.rs).
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "tls-port", "6390"]),
        Reply::err(
            "ERR CONFIG SET failed (possibly related to argument 'tls-port') - can't set immutable config"
        )
    );
}

/// The encoding thresholds take effect on the containers that grow after
/// a CONFIG SET, and a container that outgrew its compact encoding keeps
/// the big one (Redis never converts back).
#[test]
fn encoding_thresholds_shape_object_encoding() {
    let server = Server::start(2, &[]);
    let mut r = server.raw();
    let encoding = |r: &mut Raw, key: &str| r.cmd(&["OBJECT", "ENCODING", key]);
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "set-max-intset-entries", "4"]),
        Reply::ok()
    );
    r.cmd(&["SADD", "small", "1", "2", "3", "4"]);
    assert_eq!(encoding(&mut r, "small"), Reply::bulk("intset"));
    r.cmd(&["SADD", "small", "5"]);
    assert_eq!(encoding(&mut r, "small"), Reply::bulk("hashtable"));
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "set-max-intset-entries", "512"]),
        Reply::ok()
    );
    r.cmd(&["SREM", "small", "5"]);
    assert_eq!(
        encoding(&mut r, "small"),
        Reply::bulk("hashtable"),
        "never back"
    );
    // The old name is the same parameter.
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "zset-max-ziplist-entries", "2"]),
        Reply::ok()
    );
    assert_eq!(
        r.cmd(&["CONFIG", "GET", "zset-max-listpack-entries"]),
        Reply::Array(vec![
            Reply::bulk("zset-max-listpack-entries"),
            Reply::bulk("2")
        ])
    );
    r.cmd(&["ZADD", "z", "1", "a", "2", "b"]);
    assert_eq!(encoding(&mut r, "z"), Reply::bulk("listpack"));
    r.cmd(&["ZADD", "z", "3", "c"]);
    assert_eq!(encoding(&mut r, "z"), Reply::bulk("skiplist"));
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "zset-max-listpack-value", "3"]),
        Reply::ok()
    );
    r.cmd(&["ZADD", "long", "1", "abcd"]);
    assert_eq!(encoding(&mut r, "long"), Reply::bulk("skiplist"));
    // A negative size class reads back as written; bad values get Redis's errors.
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "list-max-ziplist-size", "-5"]),
        Reply::ok()
    );
    assert_eq!(
        r.cmd(&["CONFIG", "GET", "list-max-listpack-size"]),
        Reply::Array(vec![
            Reply::bulk("list-max-listpack-size"),
            Reply::bulk("-5")
        ])
    );
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "list-compress-depth", "-1"]),
        Reply::err("ERR CONFIG SET failed (possibly related to argument 'list-compress-depth') - argument must be between 0 and 2147483647 inclusive")
    );
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "set-max-intset-entries", "x"]),
        Reply::err("ERR CONFIG SET failed (possibly related to argument 'set-max-intset-entries') - argument couldn't be parsed into an integer")
    );
}

/// CONFIG REWRITE brings the file the server started from up to date as
/// Redis's does: comments and lines it does not know stay, a parameter's
/// line takes its current value in place (a repeated `save` line goes),
/// the values changed from their defaults that the file lacked follow
/// `# Generated by CONFIG REWRITE`, and a server started from the result
/// has the same values. Without a file it answers as redis-server does.
#[test]
fn config_rewrite_updates_the_file_in_place() {
    let dir = common::temp_dir();
    let path = dir.join("ember.conf");
    std::fs::write(
        &path,
        "# my cache\nhz 15\n\nsave 900 1\nsave 300 10\nuser bob on >pw ~* +@all\n",
    )
    .unwrap();
    let file = path.display().to_string();
    let server = Server::start(1, &["--config", &file]);
    let mut c = server.raw();
    for (name, value) in [
        ("hz", "25"),
        ("save", ""),
        ("maxmemory", "12345678"),
        ("maxmemory-policy", "allkeys-lru"),
        ("notify-keyspace-events", "KEA"),
    ] {
        assert_eq!(c.cmd(&["CONFIG", "SET", name, value]), Reply::ok());
    }
    assert_eq!(c.cmd(&["CONFIG", "REWRITE"]), Reply::ok());
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The second save line is gone (its rules are in the first).
    assert_eq!(
        lines[..4],
        ["# my cache", "hz 25", "", "save \"\""],
        "{text}"
    );
    // The ACL users as ACL LIST words them, in the place of the file's
    // user lines (the password as its hash), the rest appended.
    let acl_list = c.cmd(&["ACL", "LIST"]).items();
    assert_eq!(lines[4], acl_list[0].text(), "{text}");
    assert!(lines[4].starts_with("user bob on #"), "{text}");
    let tail = &lines[lines
        .iter()
        .position(|l| *l == "# Generated by CONFIG REWRITE")
        .unwrap()..];
    for line in [
        format!("port {}", server.port),
        "maxmemory 12345678".to_string(),
        "maxmemory-policy allkeys-lru".to_string(),
        acl_list[1].text(),
    ] {
        assert!(tail.contains(&line.as_str()), "{line} in {text}");
    }
    // Nothing at its default is added.
    assert!(!text.contains("maxclients"), "{text}");
    // A server started from the file has the same values (its own port).
    let again = Server::start(1, &["--config", &file]);
    let mut d = again.raw();
    for name in [
        "hz",
        "save",
        "maxmemory",
        "maxmemory-policy",
        "notify-keyspace-events",
    ] {
        assert_eq!(
            d.cmd(&["CONFIG", "GET", name]),
            c.cmd(&["CONFIG", "GET", name]),
            "{name}"
        );
    }
    assert_eq!(d.cmd(&["ACL", "LIST"]), c.cmd(&["ACL", "LIST"]));
    let _ = std::fs::remove_dir_all(&dir);

    let plain = Server::start(1, &[]);
    let want = Reply::err("ERR The server is running without a config file");
    assert_eq!(plain.raw().cmd(&["CONFIG", "REWRITE"]), want);
    if let Some(redis) = common::reference::Redis::or_skip("config_rewrite_updates_the_file") {
        assert_eq!(Raw::connect(redis.port).cmd(&["CONFIG", "REWRITE"]), want);
    }
}

/// DEBUG CONFIG-REWRITE-FORCE-ALL writes every parameter, defaults too,
/// and a server started from that file has every value CONFIG GET showed
/// (Redis's "CONFIG REWRITE sanity").
#[test]
fn a_forced_rewrite_starts_a_server_with_every_value() {
    let dir = common::temp_dir();
    let path = dir.join("ember.conf");
    std::fs::write(&path, "# empty\n").unwrap();
    let file = path.display().to_string();
    let args = ["--config", &file, "--enable-debug-command", "yes"];
    let server = Server::start(2, &args);
    let mut c = server.raw();
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "hz", "33", "save", "", "maxmemory", "1mb"]),
        Reply::ok()
    );
    assert_eq!(c.cmd(&["DEBUG", "CONFIG-REWRITE-FORCE-ALL"]), Reply::ok());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\nmaxclients 10000\n"), "{text}");
    let before = c.cmd(&["CONFIG", "GET", "*"]).items();
    let again = Server::start(2, &args);
    let after = again.raw().cmd(&["CONFIG", "GET", "*"]).items();
    for (b, a) in before.chunks(2).zip(after.chunks(2)) {
        if b[0].text() == "port" {
            continue; // each its own
        }
        assert_eq!(b, a);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
