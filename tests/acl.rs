//! Access control against a real ember: requirepass, AUTH and HELLO AUTH,
//! ACL users and their enforcement (keys on any shard, MULTI, Pub/Sub),
//! the ACL command, `user` lines and the ACL file; redis-cli and redis-rs
//! logging in; and differential tests of ACL LIST, GETUSER, DRYRUN and CAT
//! against redis-server 7.0.15.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use common::reference::Redis;
use common::{err, int, keys_on_shard, ok, temp_conf, wait_until, Raw, Reply, Server};

const NOAUTH: &str = "NOAUTH Authentication required.";
const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
const NOPERM_KEY: &str =
    "NOPERM this user has no permissions to access one of the keys used as arguments";
const NOPERM_CHANNEL: &str =
    "NOPERM this user has no permissions to access one of the channels used as arguments";

fn noperm_cmd(name: &str) -> Reply {
    err(&format!(
        "NOPERM this user has no permissions to run the '{name}' command"
    ))
}

/// A connection logged in as `user`.
fn login(port: u16, user: &str, pass: &str) -> Raw {
    let mut raw = Raw::connect(port);
    assert_eq!(raw.cmd(&["AUTH", user, pass]), ok());
    raw
}

#[test]
fn requirepass_from_the_command_line_and_config_set() {
    let server = Server::start(2, &["--requirepass", "s3cret"]);
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["GET", "k"]), err(NOAUTH));
    // Unknown commands and arity are answered before the login check.
    assert!(raw
        .cmd(&["NOSUCH"])
        .text()
        .starts_with("ERR unknown command"));
    assert_eq!(raw.cmd(&["AUTH", "nope"]), err(WRONGPASS));
    assert_eq!(raw.cmd(&["AUTH", "default", "nope"]), err(WRONGPASS));
    assert_eq!(
        raw.cmd(&["HELLO", "3"]),
        err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
    );
    assert_eq!(raw.cmd(&["AUTH", "s3cret"]), ok());
    assert_eq!(raw.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "requirepass"]),
        Reply::Array(vec![Reply::bulk("requirepass"), Reply::bulk("s3cret")])
    );
    let mut other = server.raw();
    let hello = other.cmd(&["HELLO", "2", "AUTH", "default", "s3cret"]);
    assert!(matches!(hello, Reply::Array(_)), "{hello:?}");
    assert_eq!(other.cmd(&["GET", "k"]), Reply::bulk("v"));
    // A new password applies at once; connections logged in stay so.
    assert_eq!(raw.cmd(&["CONFIG", "SET", "requirepass", "other"]), ok());
    assert_eq!(other.cmd(&["GET", "k"]), Reply::bulk("v"));
    let mut fresh = server.raw();
    assert_eq!(fresh.cmd(&["GET", "k"]), err(NOAUTH));
    assert_eq!(fresh.cmd(&["AUTH", "s3cret"]), err(WRONGPASS));
    assert_eq!(fresh.cmd(&["AUTH", "other"]), ok());
    // No password: everyone may run commands, and AUTH <password> says so.
    assert_eq!(raw.cmd(&["CONFIG", "SET", "requirepass", ""]), ok());
    let mut open = server.raw();
    assert_eq!(open.cmd(&["GET", "k"]), Reply::bulk("v"));
    assert!(open
        .cmd(&["AUTH", "x"])
        .text()
        .starts_with("ERR AUTH <password> called without any password configured"));
    assert_eq!(open.info_int("stats", "acl_access_denied_auth"), 3);
}

/// Until it logs in, a client may send multibulks of at most 10 arguments
/// of at most 16 KiB each, as Redis limits it.
#[test]
fn unauthenticated_clients_send_only_small_commands() {
    let server = Server::start(1, &["--requirepass", "pw"]);
    let mut raw = server.raw();
    raw.send(b"*100\r\n");
    assert_eq!(
        raw.read(),
        Some(err("ERR Protocol error: unauthenticated multibulk length"))
    );
    assert!(raw.closed());
    let mut raw = server.raw();
    raw.send(b"*1\r\n$100000000\r\n");
    assert_eq!(
        raw.read(),
        Some(err("ERR Protocol error: unauthenticated bulk length"))
    );
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["AUTH", "pw"]), ok());
    let big = "x".repeat(20_000);
    assert_eq!(raw.cmd(&["SET", "k", &big]), ok());
}

#[test]
fn requirepass_from_a_config_file() {
    let server = Server::start_with_config(1, "requirepass \"two words\"\n");
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["PING"]), err(NOAUTH));
    assert_eq!(raw.cmd(&["AUTH", "two words"]), ok());
    assert_eq!(raw.cmd(&["PING"]), Reply::Simple("PONG".into()));
}

#[test]
fn redis_rs_and_redis_cli_log_in() {
    let server = Server::start(2, &["--requirepass", "pw"]);
    let mut admin = login(server.port, "default", "pw");
    assert_eq!(
        admin.cmd(&["ACL", "SETUSER", "app", "on", ">apppw", "~app:*", "+@all"]),
        ok()
    );
    let url = format!("redis://app:apppw@127.0.0.1:{}/", server.port);
    let mut conn = redis::Client::open(url).unwrap().get_connection().unwrap();
    let _: () = redis::cmd("SET")
        .arg("app:1")
        .arg("x")
        .query(&mut conn)
        .unwrap();
    let got: String = redis::cmd("GET").arg("app:1").query(&mut conn).unwrap();
    assert_eq!(got, "x");
    let refused: redis::RedisResult<String> = redis::cmd("GET").arg("other").query(&mut conn);
    assert!(refused.is_err());
    let bad = format!("redis://app:wrong@127.0.0.1:{}/", server.port);
    assert!(redis::Client::open(bad).unwrap().get_connection().is_err());

    if Command::new("redis-cli").arg("--version").output().is_err() {
        eprintln!("redis-cli is not installed: its part of the test skipped");
        return;
    }
    let cli = |args: &[&str]| -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &server.port.to_string(), "--no-auth-warning"])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(cli(&["-a", "pw", "ping"]), "PONG");
    assert_eq!(
        cli(&["--user", "app", "--pass", "apppw", "get", "app:1"]),
        "x"
    );
    assert_eq!(
        cli(&["--user", "app", "--pass", "apppw", "acl", "whoami"]),
        "app"
    );
    assert!(cli(&["ping"]).contains("NOAUTH"));
}

#[test]
fn users_are_enforced_for_keys_on_every_shard_commands_and_channels() {
    let server = Server::start(3, &[]);
    let mut admin = server.raw();
    assert_eq!(
        admin.cmd(&[
            "ACL",
            "SETUSER",
            "u",
            "on",
            ">p",
            "~a*",
            "%R~r*",
            "&news.*",
            "+@read",
            "+@write",
            "+@transaction",
            "+publish",
            "+subscribe",
            "+psubscribe",
            "-flushall",
        ]),
        ok()
    );
    let mut u = login(server.port, "u", "p");
    assert_eq!(u.cmd(&["SET", "aval", "x"]), ok());
    assert_eq!(u.cmd(&["GET", "r1"]), Reply::Nil);
    assert_eq!(u.cmd(&["SET", "r1", "x"]), err(NOPERM_KEY));
    assert_eq!(u.cmd(&["GET", "zz"]), err(NOPERM_KEY));
    assert_eq!(u.cmd(&["FLUSHALL"]), noperm_cmd("flushall"));
    assert_eq!(u.cmd(&["CONFIG", "GET", "port"]), noperm_cmd("config|get"));
    // Keys on several shards are checked before any hop.
    let spread: Vec<String> = (0..3)
        .map(|s| keys_on_shard("a", s, 3, 1)[0].clone())
        .collect();
    let mut mset = vec!["MSET"];
    for k in &spread {
        mset.push(k);
        mset.push("1");
    }
    assert_eq!(u.cmd(&mset), ok());
    mset.extend(["b1", "1"]);
    assert_eq!(u.cmd(&mset), err(NOPERM_KEY));
    assert_eq!(u.cmd(&["PUBLISH", "news.x", "m"]), int(0));
    assert_eq!(u.cmd(&["PUBLISH", "sport", "m"]), err(NOPERM_CHANNEL));
    assert_eq!(u.cmd(&["PSUBSCRIBE", "news.x*"]), err(NOPERM_CHANNEL));
    // Inside MULTI the refusal is at queue time and fails EXEC.
    assert_eq!(u.cmd(&["MULTI"]), ok());
    assert_eq!(u.cmd(&["GET", "zz"]), err(NOPERM_KEY));
    assert_eq!(u.cmd(&["SET", "a2", "1"]), Reply::Simple("QUEUED".into()));
    assert_eq!(
        u.cmd(&["EXEC"]),
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    // Changes reach a connected client at its next command.
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "u", "-get"]), ok());
    assert_eq!(u.cmd(&["GET", "aval"]), noperm_cmd("get"));
    assert_eq!(admin.cmd(&["ACL", "SETUSER", "u", "+get"]), ok());
    assert_eq!(u.cmd(&["GET", "aval"]), Reply::bulk("x"));
    assert_eq!(u.cmd(&["ACL", "WHOAMI"]), noperm_cmd("acl|whoami"));
    // The log: newest first, similar refusals counted together.
    let log = admin.cmd(&["ACL", "LOG", "1"]).items();
    let entry = log[0].items();
    assert_eq!(
        entry[0..12].to_vec(),
        vec![
            Reply::bulk("count"),
            int(1),
            Reply::bulk("reason"),
            Reply::bulk("command"),
            Reply::bulk("context"),
            Reply::bulk("toplevel"),
            Reply::bulk("object"),
            Reply::bulk("acl|whoami"),
            Reply::bulk("username"),
            Reply::bulk("u"),
            Reply::bulk("age-seconds"),
            entry[11].clone(),
        ]
    );
    assert!(entry[13].text().contains("user=u"), "{:?}", entry[13]);
    assert_eq!(admin.info_int("stats", "acl_access_denied_key"), 4);
    assert_eq!(admin.info_int("stats", "acl_access_denied_cmd"), 4);
    assert_eq!(admin.info_int("stats", "acl_access_denied_channel"), 2);
    assert_eq!(admin.cmd(&["ACL", "LOG", "RESET"]), ok());
    assert_eq!(admin.cmd(&["ACL", "LOG"]), Reply::Array(vec![]));
}

#[test]
fn deleted_users_lose_their_connections_and_client_kill_user() {
    let server = Server::start(2, &[]);
    let mut admin = server.raw();
    assert_eq!(
        admin.cmd(&["ACL", "SETUSER", "a", "on", "nopass", "+@all", "~*"]),
        ok()
    );
    assert_eq!(
        admin.cmd(&["ACL", "SETUSER", "b", "on", "nopass", "+@all", "~*"]),
        ok()
    );
    let mut a = login(server.port, "a", "x");
    let mut b = login(server.port, "b", "x");
    let mut b2 = login(server.port, "b", "y");
    assert_eq!(admin.cmd(&["CLIENT", "KILL", "USER", "b"]), int(2));
    assert!(b.closed() && b2.closed());
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", "USER", "nobody"]),
        err("ERR No such user 'nobody'")
    );
    assert_eq!(admin.cmd(&["ACL", "DELUSER", "a", "zz"]), int(1));
    a.send(b"PING\r\n");
    assert!(a.closed());
    assert_eq!(
        admin.cmd(&["ACL", "DELUSER", "default"]),
        err("ERR The 'default' user cannot be removed")
    );
    assert_eq!(
        admin.cmd(&["ACL", "USERS"]),
        common::bulks(&["b", "default"])
    );
    assert!(wait_until(std::time::Duration::from_secs(5), || {
        !admin.cmd(&["CLIENT", "LIST"]).text().contains("user=b")
    }));
}

#[test]
fn user_lines_in_the_config_file_and_the_acl_file() {
    let server = Server::start_with_config(
        1,
        "user alice on >pw ~k* +get +set\nuser default on nopass ~* &* +@all\n",
    );
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["ACL", "LIST"]),
        common::bulks(&[
            "user alice on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~k* resetchannels -@all +get +set",
            "user default on nopass ~* &* +@all",
        ])
    );
    assert!(raw
        .cmd(&["ACL", "SAVE"])
        .text()
        .contains("not configured to use an ACL file"));

    let dir = std::env::temp_dir().join(format!("ember-aclfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("users.acl");
    std::fs::write(&path, "user bob on >b ~b* +@read\n").unwrap();
    let conf = format!("aclfile {}\n", path.display());
    let server = Server::start_with_config(1, &conf);
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["ACL", "USERS"]),
        common::bulks(&["bob", "default"])
    );
    assert_eq!(raw.cmd(&["ACL", "SETUSER", "carol", "on", "+ping"]), ok());
    assert_eq!(raw.cmd(&["ACL", "SAVE"]), ok());
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(
        saved.contains("user carol on resetchannels -@all +ping"),
        "{saved}"
    );
    assert_eq!(raw.cmd(&["ACL", "DELUSER", "carol"]), int(1));
    assert_eq!(raw.cmd(&["ACL", "LOAD"]), ok());
    assert_eq!(
        raw.cmd(&["ACL", "USERS"]),
        common::bulks(&["bob", "carol", "default"])
    );
    std::fs::write(&path, "user bob on +nosuch\n").unwrap();
    let e = raw.cmd(&["ACL", "LOAD"]).text();
    assert!(e.contains("Unknown command or category name in ACL"), "{e}");
    // A bad user line stops start-up.
    let (status, stderr) = common::run_with_bad_config("user x on +nosuch\n");
    assert!(!status.success());
    assert!(
        stderr.contains("Unknown command or category name in ACL"),
        "{stderr}"
    );
    let _ = temp_conf;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Rule lists whose ACL LIST, GETUSER and DRYRUN answers must be
/// redis-server's.
const RULE_SETS: &[&[&str]] = &[
    &[
        "on",
        ">p",
        "~a*",
        "%R~b*",
        "&ch*",
        "+get",
        "+@hash",
        "-hset",
        "+get",
        "(+set ~x*)",
    ],
    &["+@all", "-@hash", "+hget", "allkeys", "resetkeys", "%W~*"],
    &["reset"],
    &[
        "on",
        "nopass",
        "+@all",
        "-debug",
        "+config|get",
        "-config|set",
    ],
    &["+select|0", "+select|1", "~*", "allchannels"],
    &[
        "+@all",
        "-get",
        "nocommands",
        "+get",
        "(+get)",
        "(~a resetchannels)",
        "clearselectors",
        "(+ping ~p &c)",
    ],
    &[
        "#148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940",
        ">x",
        "<x",
        "skip-sanitize-payload",
    ],
    &["+@all", "-@hash", "+hget", "-@dangerous"],
    &["+@hash", "-hset", "+client|id", "+@geo"],
    &["+@string", "-@slow", "+@connection"],
    &["foo"],
    &["+nosuch"],
    &["%RR~x"],
    &["~*", "~x"],
    &["(~x"],
    &["<nope"],
    &["!abc"],
];

const DRYRUNS: &[&[&str]] = &[
    &["get", "a"],
    &["get", "z"],
    &["set", "x1", "1"],
    &["set", "z", "1"],
    &["hget", "a", "f"],
    &["publish", "ch1", "m"],
    &["select", "0"],
    &["select", "2"],
    &["config", "get", "port"],
    &["config", "set", "port", "1"],
    &["ping"],
];

/// Redis 7.0 writes the single commands of a rule list in its command
/// dictionary's order, which changes with every process: each run of
/// them is sorted before comparing.
fn norm(reply: Reply) -> Reply {
    match reply {
        Reply::Bulk(b) => {
            let text = String::from_utf8_lossy(&b).replace(')', " )");
            let mut out: Vec<String> = Vec::new();
            let mut run: Vec<String> = Vec::new();
            for word in text.split(' ') {
                let single =
                    (word.starts_with('+') || word.starts_with('-')) && !word.contains('@');
                if single {
                    run.push(word.to_string());
                    continue;
                }
                run.sort();
                out.append(&mut run);
                out.push(word.to_string());
            }
            run.sort();
            out.append(&mut run);
            Reply::Bulk(out.join(" ").into_bytes())
        }
        Reply::Array(items) => Reply::Array(items.into_iter().map(norm).collect()),
        Reply::Map(pairs) => Reply::Map(pairs.into_iter().map(|(k, v)| (k, norm(v))).collect()),
        other => other,
    }
}

#[test]
fn acl_list_getuser_and_dryrun_match_redis() {
    let Some(redis) = Redis::or_skip("acl_list_getuser_and_dryrun_match_redis") else {
        return;
    };
    let server = Server::start(2, &[]);
    let mut ours = server.raw();
    let mut theirs = Raw::connect(redis.port);
    for (i, rules) in RULE_SETS.iter().enumerate() {
        let name = format!("user{i}");
        let mut cmd = vec!["ACL", "SETUSER", &name];
        cmd.extend_from_slice(rules);
        assert_eq!(ours.cmd(&cmd), theirs.cmd(&cmd), "{cmd:?}");
        let get = ["ACL", "GETUSER", &name];
        assert_eq!(norm(ours.cmd(&get)), norm(theirs.cmd(&get)), "{rules:?}");
        for dry in DRYRUNS {
            let mut cmd = vec!["ACL", "DRYRUN", &name];
            cmd.extend_from_slice(dry);
            assert_eq!(ours.cmd(&cmd), theirs.cmd(&cmd), "{rules:?} {dry:?}");
        }
    }
    assert_eq!(
        norm(ours.cmd(&["ACL", "LIST"])),
        norm(theirs.cmd(&["ACL", "LIST"]))
    );
    for cmd in [
        &["ACL", "DRYRUN", "nosuch", "get", "x"][..],
        &["ACL", "DRYRUN", "default", "nosuchcmd"],
        &["ACL", "DRYRUN", "default", "get"],
        &["ACL", "SETUSER", "a b"],
        &["ACL", "CAT", "nosuch"],
        &["ACL", "GENPASS", "0"],
        &["ACL", "GENPASS", "x"],
        &["ACL", "WHOAMI", "x"],
        &["ACL", "NOSUCH"],
        &["ACL", "HELP"],
        &["ACL", "GETUSER", "nosuch"],
        &["ACL", "LOAD"],
    ] {
        assert_eq!(ours.cmd(cmd), theirs.cmd(cmd), "{cmd:?}");
    }
}

fn names(reply: Reply) -> BTreeSet<String> {
    reply.items().iter().map(Reply::text).collect()
}

/// ACL CAT of every category lists what redis-server's does, among the
/// commands (and subcommands) ember has.
#[test]
fn acl_cat_matches_redis_for_embers_commands() {
    let Some(redis) = Redis::or_skip("acl_cat_matches_redis_for_embers_commands") else {
        return;
    };
    let server = Server::start(1, &[]);
    let mut ours = server.raw();
    let mut theirs = Raw::connect(redis.port);
    let categories = names(ours.cmd(&["ACL", "CAT"]));
    assert_eq!(categories, names(theirs.cmd(&["ACL", "CAT"])));
    let mut all_ours = BTreeSet::new();
    let mut all_theirs = BTreeSet::new();
    for cat in &categories {
        all_ours.extend(names(ours.cmd(&["ACL", "CAT", cat])));
        all_theirs.extend(names(theirs.cmd(&["ACL", "CAT", cat])));
    }
    // Commands of one server only (ember's 7.4 hash-field TTL commands,
    // the commands ember lacks) are left out of the comparison.
    let both: BTreeSet<&String> = all_ours.intersection(&all_theirs).collect();
    let missing: Vec<&String> = all_theirs
        .iter()
        .filter(|c| !all_ours.contains(*c) && !c.contains('|'))
        .filter(|c| ours.cmd(&["COMMAND", "INFO", c]).items().first() != Some(&Reply::Nil))
        .collect();
    assert!(
        missing.is_empty(),
        "ember has these but lists them in no category: {missing:?}"
    );
    for cat in &categories {
        let mine: BTreeSet<String> = names(ours.cmd(&["ACL", "CAT", cat]))
            .into_iter()
            .filter(|c| both.contains(c))
            .collect();
        let redis_has: BTreeSet<String> = names(theirs.cmd(&["ACL", "CAT", cat]))
            .into_iter()
            .filter(|c| both.contains(c))
            .collect();
        assert_eq!(mine, redis_has, "category {cat}");
    }
}

#[test]
fn subscribers_are_closed_when_their_channels_are_revoked() {
    let server = Server::start(3, &[]);
    let mut admin = server.raw();
    let setuser = |admin: &mut Raw, rules: &[&str]| {
        let mut cmd = vec!["ACL", "SETUSER", "ps", "on", "nopass", "+@all"];
        cmd.extend_from_slice(rules);
        assert_eq!(admin.cmd(&cmd), ok());
    };
    setuser(&mut admin, &["resetchannels", "&foo:1", "&bar:*"]);
    let mut subs = Vec::new();
    for (name, cmd, arg) in [("ch", "SUBSCRIBE", "foo:1"), ("pat", "PSUBSCRIBE", "bar:*")] {
        let mut raw = login(server.port, "ps", "x");
        assert_eq!(raw.cmd(&["CLIENT", "SETNAME", name]), ok());
        assert!(matches!(raw.cmd(&[cmd, arg]), Reply::Array(_)));
        subs.push(raw);
    }
    // Keeping the literal permissions (or gaining all channels) pardons.
    setuser(&mut admin, &["resetchannels", "&foo:1", "&bar:*", "&more"]);
    setuser(&mut admin, &["allchannels"]);
    let list = admin.cmd(&["CLIENT", "LIST"]).text();
    assert!(
        list.contains("name=ch") && list.contains("name=pat"),
        "{list}"
    );
    // Losing the pattern closes the pattern subscriber before the reply.
    setuser(&mut admin, &["resetchannels", "&foo:1"]);
    let list = admin.cmd(&["CLIENT", "LIST"]).text();
    assert!(
        list.contains("name=ch") && !list.contains("name=pat"),
        "{list}"
    );
    setuser(&mut admin, &["resetchannels"]);
    assert!(!admin.cmd(&["CLIENT", "LIST"]).text().contains("name=ch"));
    assert!(subs.iter_mut().all(|s| s.closed()));
    // A client deleting its own user gets the reply, then is closed.
    let mut me = login(server.port, "ps", "x");
    assert_eq!(me.cmd(&["ACL", "DELUSER", "ps"]), int(1));
    assert!(me.closed());
}

/// A network namespace joined to this one by a veth pair, deleted when
/// dropped: a client in it reaches ember from a non-loopback address.
struct Netns {
    name: String,
}

impl Netns {
    /// None (with the reason) unless running as root with `ip` at hand.
    fn create(host_ip: &str, ns_ip: &str) -> Result<Netns, String> {
        let uid = Command::new("id")
            .arg("-u")
            .output()
            .map_err(|e| e.to_string())?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return Err("not running as root".into());
        }
        let tag = std::process::id() % 100_000;
        let ns = Netns {
            name: format!("ember-pm-{tag}"),
        };
        let (host_if, ns_if) = (format!("epm{tag}a"), format!("epm{tag}b"));
        let steps: Vec<Vec<String>> = vec![
            vec!["netns".into(), "add".into(), ns.name.clone()],
            vec![
                "link".into(),
                "add".into(),
                host_if.clone(),
                "type".into(),
                "veth".into(),
                "peer".into(),
                "name".into(),
                ns_if.clone(),
            ],
            vec![
                "link".into(),
                "set".into(),
                ns_if.clone(),
                "netns".into(),
                ns.name.clone(),
            ],
            vec![
                "addr".into(),
                "add".into(),
                format!("{host_ip}/30"),
                "dev".into(),
                host_if.clone(),
            ],
            vec!["link".into(), "set".into(), host_if, "up".into()],
            vec![
                "-n".into(),
                ns.name.clone(),
                "addr".into(),
                "add".into(),
                format!("{ns_ip}/30"),
                "dev".into(),
                ns_if.clone(),
            ],
            vec![
                "-n".into(),
                ns.name.clone(),
                "link".into(),
                "set".into(),
                ns_if,
                "up".into(),
            ],
            vec![
                "-n".into(),
                ns.name.clone(),
                "link".into(),
                "set".into(),
                "lo".into(),
                "up".into(),
            ],
        ];
        for step in steps {
            let out = Command::new("ip")
                .args(&step)
                .output()
                .map_err(|e| format!("ip: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "ip {step:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        Ok(ns)
    }

    /// Sends PING from inside the namespace; what came back (first line).
    fn ping(&self, ip: &str, port: u16) -> String {
        let script =
            format!("exec 3<>/dev/tcp/{ip}/{port} && printf 'PING\\r\\n' >&3 && head -n 1 <&3");
        let out = Command::new("ip")
            .args([
                "netns", "exec", &self.name, "timeout", "5", "bash", "-c", &script,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting the namespace deletes the veth pair with it.
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

#[test]
fn protected_mode_refuses_clients_not_on_loopback() {
    let (host_ip, ns_ip) = ("10.213.77.1", "10.213.77.2");
    let ns = match Netns::create(host_ip, ns_ip) {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("protected_mode_refuses_clients_not_on_loopback skipped: {why}");
            return;
        }
    };
    let bind = format!("127.0.0.1 {host_ip} -::1");
    let server = Server::start(2, &["--bind", &bind]);
    let mut admin = server.raw();
    assert_eq!(
        admin.cmd(&["CONFIG", "GET", "bind"]),
        Reply::Array(vec![Reply::bulk("bind"), Reply::bulk(&bind)])
    );
    let reply = ns.ping(host_ip, server.port);
    assert!(
        reply.starts_with(
            "-DENIED Redis is running in protected mode because protected mode is enabled"
        ),
        "{reply:?}"
    );
    // A password for the default user lifts it (the client must log in).
    assert_eq!(admin.cmd(&["CONFIG", "SET", "requirepass", "pw"]), ok());
    assert_eq!(
        ns.ping(host_ip, server.port),
        "-NOAUTH Authentication required.\r\n"
    );
    // So does turning protected mode off.
    assert_eq!(admin.cmd(&["AUTH", "pw"]), ok());
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "requirepass", "", "protected-mode", "no"]),
        ok()
    );
    assert_eq!(ns.ping(host_ip, server.port), "+PONG\r\n");
    // Loopback clients were never refused.
    assert_eq!(admin.cmd(&["CONFIG", "SET", "protected-mode", "yes"]), ok());
    assert_eq!(server.raw().cmd(&["PING"]), Reply::Simple("PONG".into()));
}

#[test]
fn bind_takes_several_addresses_and_optional_ones() {
    let server = Server::start(2, &["--bind", "127.0.0.1 -203.0.113.254 -::1"]);
    assert_eq!(server.raw().cmd(&["PING"]), Reply::Simple("PONG".into()));
    let (status, stderr) = common::run_with_bad_config("bind 127.0.0.1 203.0.113.254\n");
    assert!(!status.success(), "{stderr}");
}

/// Permissions are checked again at EXEC, as Redis does: a command the
/// user lost since it was queued gets an error in its place, the others run.
#[test]
fn exec_checks_permissions_again_as_redis() {
    let Some(redis) = Redis::or_skip("exec_checks_permissions_again_as_redis") else {
        return;
    };
    let server = Server::start(3, &[]);
    for port in [server.port, redis.port] {
        let mut admin = Raw::connect(port);
        assert_eq!(
            admin.cmd(&["ACL", "SETUSER", "t", "on", "nopass", "+@all", "~*"]),
            ok()
        );
        let mut t = login(port, "t", "x");
        assert_eq!(t.cmd(&["MULTI"]), ok());
        for cmd in [
            &["SET", "k1", "a"][..],
            &["GET", "k1"],
            &["SET", "k2", "b"],
            &["INCR", "n"],
        ] {
            assert_eq!(t.cmd(cmd), Reply::Simple("QUEUED".into()));
        }
        assert_eq!(
            admin.cmd(&["ACL", "SETUSER", "t", "-set", "resetkeys", "~k*"]),
            ok()
        );
        let changed = |why: &str| {
            err(&format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {why}"))
        };
        let cmd = changed("no permission to execute the command or subcommand");
        let key = changed("no permission to touch the specified keys");
        assert_eq!(
            t.cmd(&["EXEC"]),
            Reply::Array(vec![cmd.clone(), Reply::Nil, cmd, key]),
            "port {port}"
        );
        let log = admin.cmd(&["ACL", "LOG", "1"]).items()[0].items();
        assert_eq!(log[5], Reply::bulk("multi"));
    }
}

/// RESET puts the connection back to the default user, logged in only if
/// that user needs no password, as a new connection (Redis 7.0).
#[test]
fn reset_returns_to_the_default_user() {
    let server = Server::start(2, &[]);
    let mut admin = server.raw();
    assert_eq!(
        admin.cmd(&["ACL", "SETUSER", "user1", "on", ">secret", "+@all", "~*"]),
        ok()
    );
    let mut c = login(server.port, "user1", "secret");
    assert_eq!(c.cmd(&["ACL", "WHOAMI"]), Reply::bulk("user1"));
    assert_eq!(c.cmd(&["RESET"]), Reply::Simple("RESET".into()));
    assert_eq!(c.cmd(&["ACL", "WHOAMI"]), Reply::bulk("default"));
    // With a password on the default user, RESET logs the connection out.
    assert_eq!(admin.cmd(&["CONFIG", "SET", "requirepass", "pw"]), ok());
    let mut c = login(server.port, "user1", "secret");
    assert_eq!(c.cmd(&["RESET"]), Reply::Simple("RESET".into()));
    assert_eq!(c.cmd(&["GET", "k"]), err(NOAUTH));
    assert_eq!(c.cmd(&["AUTH", "pw"]), ok());
    assert_eq!(c.cmd(&["ACL", "WHOAMI"]), Reply::bulk("default"));
}
