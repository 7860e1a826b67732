//! Differential test of the command metadata: for every command of ember's
//! table that redis-server 7.0.15 also has, and every subcommand ember
//! implements, COMMAND INFO and COMMAND DOCS must answer exactly as Redis
//! does, over RESP2 and RESP3; COMMAND LIST's filters must select the same
//! commands among ember's; GETKEYS and GETKEYSANDFLAGS, the errors and the
//! help text must match. Replies are compared with their RESP types
//! (a status string is not a bulk string, a set not an array, `$-1` not
//! `*-1`), so equal replies are equal bytes.
//!
//! Two differences are allowed, as they must be: Redis lists its
//! containers' subcommands in the random order of a hash table, so those
//! are compared by name; and ember implements some of a container's
//! subcommands only, so a container is compared on the subcommands ember
//! has. Commands Redis 7.0 lacks (the hash-field TTL family of 7.4) are
//! checked against ember's own table only.
//!
//! Runs where redis-server 7.0.15 is installed (`.ci/run` installs
//! redis-server); skipped with a note otherwise. The MULTI refusal of
//! `no_multi` commands is checked on ember either way.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::reference::Redis;
use common::Server;
use ember::cmd::COMMANDS;

/// The Redis release whose metadata ember reproduces.
const REDIS_VERSION: &str = "7.0.15";

/// Commands of ember's that Redis 7.0 does not have.
const NOT_IN_REDIS_7_0: &[&str] = &[
    "hexpire",
    "hpexpire",
    "hexpireat",
    "hpexpireat",
    "httl",
    "hpttl",
    "hexpiretime",
    "hpexpiretime",
    "hpersist",
];

/// The reference redis-server 7.0.15, or None (with a note) when there is
/// none or it is another version (the metadata is 7.0.15's).
fn redis_7_0_15(test: &str) -> Option<Redis> {
    let redis = Redis::or_skip(test)?;
    let version = Conn::new(redis.port).redis_version();
    if version != REDIS_VERSION {
        eprintln!("redis-server is {version}, not {REDIS_VERSION}: {test} skipped");
        return None;
    }
    Some(redis)
}

/// A reply as it came: its RESP type byte, the text of its line or bulk
/// (`-1` for a null bulk or array), and its items (a map's keys and values
/// in turn).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Resp {
    kind: u8,
    text: Vec<u8>,
    items: Vec<Resp>,
}

impl std::fmt::Debug for Resp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = String::from_utf8_lossy(&self.text);
        if self.items.is_empty() {
            write!(f, "{}{}", self.kind as char, text)
        } else {
            write!(f, "{}{} {:?}", self.kind as char, text, self.items)
        }
    }
}

impl Resp {
    fn is_aggregate(&self) -> bool {
        matches!(self.kind, b'*' | b'~' | b'%' | b'>') && self.text != b"-1"
    }

    /// A map's (key, value) pairs; RESP2 writes a map as a flat array.
    fn pairs(&self) -> Vec<(&Resp, &Resp)> {
        self.items.chunks(2).map(|p| (&p[0], &p[1])).collect()
    }

    fn str(&self) -> String {
        String::from_utf8_lossy(&self.text).into_owned()
    }
}

/// A connection that reads replies with their types.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn new(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Conn {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
        }
    }

    /// A connection speaking RESP `proto` (2 or 3).
    fn with_proto(port: u16, proto: u8) -> Conn {
        let mut conn = Conn::new(port);
        let hello = conn.call(&["HELLO", &proto.to_string()]);
        assert!(hello.is_aggregate(), "HELLO {proto}: {hello:?}");
        conn
    }

    fn call(&mut self, args: &[&str]) -> Resp {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
        }
        self.writer.write_all(&out).expect("send");
        self.read()
    }

    fn read(&mut self) -> Resp {
        let mut line = Vec::new();
        self.reader.read_until(b'\n', &mut line).expect("read");
        assert!(line.ends_with(b"\r\n"), "truncated reply {line:?}");
        line.truncate(line.len() - 2);
        let (kind, text) = (line[0], line[1..].to_vec());
        let count = || -> i64 { String::from_utf8_lossy(&text).parse().unwrap() };
        let items = match kind {
            b'$' | b'=' if count() >= 0 => {
                let mut body = vec![0; count() as usize + 2];
                self.reader.read_exact(&mut body).expect("read bulk");
                body.truncate(body.len() - 2);
                return Resp {
                    kind,
                    text: body,
                    items: Vec::new(),
                };
            }
            b'*' | b'~' | b'>' if count() >= 0 => (0..count()).map(|_| self.read()).collect(),
            b'%' => (0..count() * 2).map(|_| self.read()).collect(),
            _ => Vec::new(),
        };
        Resp { kind, text, items }
    }

    fn redis_version(&mut self) -> String {
        let info = self.call(&["INFO", "server"]).str();
        info.lines()
            .find_map(|l| l.strip_prefix("redis_version:"))
            .unwrap_or("unknown")
            .to_string()
    }

    /// The bulk strings of an array reply.
    fn names(&mut self, args: &[&str]) -> Vec<String> {
        let reply = self.call(args);
        assert_eq!(reply.kind, b'*', "{args:?}: {reply:?}");
        reply.items.iter().map(Resp::str).collect()
    }
}

/// The first place where two replies differ, for the failure message.
fn first_difference(ember: &Resp, redis: &Resp, path: &str) -> String {
    if ember.kind != redis.kind
        || ember.text != redis.text
        || ember.items.len() != redis.items.len()
    {
        return format!("at {path}: ember {ember:?}, redis {redis:?}");
    }
    for (i, (e, r)) in ember.items.iter().zip(&redis.items).enumerate() {
        if e != r {
            return first_difference(e, r, &format!("{path}/{i}"));
        }
    }
    String::from("nowhere")
}

fn assert_same(what: &str, ember: &Resp, redis: &Resp) {
    assert!(
        ember == redis,
        "{what}: replies differ {}",
        first_difference(ember, redis, "")
    );
}

/// Every command of ember's table, and `container|sub` for each
/// subcommand it implements.
fn embers_commands() -> Vec<String> {
    let mut names = Vec::new();
    for spec in COMMANDS {
        names.push(spec.name.to_string());
        names.extend(spec.meta.subcommands.iter().map(|s| s.name.to_string()));
    }
    names
}

/// Compares one COMMAND INFO entry. A container's subcommands are matched
/// by name: each of ember's must be Redis's exactly.
fn compare_info(what: &str, ember: &Resp, redis: &Resp) {
    let is_container = |r: &Resp| r.items.len() == 10 && r.items[9].kind == b'*';
    if !(is_container(ember) && is_container(redis)) {
        return assert_same(what, ember, redis);
    }
    for (i, (e, r)) in ember.items[..9].iter().zip(&redis.items[..9]).enumerate() {
        assert_same(&format!("{what} field {i}"), e, r);
    }
    let redis_subs: BTreeMap<String, &Resp> = redis.items[9]
        .items
        .iter()
        .map(|s| (s.items[0].str(), s))
        .collect();
    for sub in &ember.items[9].items {
        let name = sub.items[0].str();
        let theirs = redis_subs
            .get(&name)
            .unwrap_or_else(|| panic!("{what}: redis has no subcommand {name}"));
        assert_same(&format!("{what} subcommand {name}"), sub, theirs);
    }
}

/// Compares one command's COMMAND DOCS map (the value under its name),
/// its `subcommands` map matched by name as in [`compare_info`].
fn compare_docs(what: &str, ember: &Resp, redis: &Resp) {
    let ours = ember.pairs();
    let theirs = redis.pairs();
    assert_eq!(
        ours.iter().map(|(k, _)| k.str()).collect::<Vec<_>>(),
        theirs.iter().map(|(k, _)| k.str()).collect::<Vec<_>>(),
        "{what}: docs fields"
    );
    assert_eq!(ember.kind, redis.kind, "{what}: docs type");
    for ((key, e), (_, r)) in ours.into_iter().zip(theirs) {
        if key.str() != "subcommands" {
            assert_same(&format!("{what} {}", key.str()), e, r);
            continue;
        }
        assert_eq!(e.kind, r.kind, "{what}: subcommands type");
        let redis_subs: BTreeMap<String, &Resp> =
            r.pairs().into_iter().map(|(k, v)| (k.str(), v)).collect();
        for (name, sub) in e.pairs() {
            let theirs = redis_subs
                .get(&name.str())
                .unwrap_or_else(|| panic!("{what}: redis has no subcommand {}", name.str()));
            assert_same(&format!("{what} subcommand {}", name.str()), sub, theirs);
        }
    }
}

#[test]
fn info_and_docs_match_redis_for_every_command() {
    let Some(redis) = redis_7_0_15("info_and_docs_match_redis_for_every_command") else {
        return;
    };
    let ember = Server::start(2, &[]);
    for proto in [2, 3] {
        let mut e = Conn::with_proto(ember.port, proto);
        let mut r = Conn::with_proto(redis.port, proto);
        let mut compared = 0;
        let mut absent = Vec::new();
        for name in embers_commands() {
            let what = format!("{name} (RESP{proto})");
            let redis_info = r.call(&["COMMAND", "INFO", &name]);
            let ember_info = e.call(&["COMMAND", "INFO", &name]);
            assert_eq!(ember_info.items.len(), 1, "{what}: {ember_info:?}");
            assert!(ember_info.items[0].is_aggregate(), "{what}: ember lacks it");
            if !redis_info.items[0].is_aggregate() {
                absent.push(name);
                continue;
            }
            compare_info(&what, &ember_info.items[0], &redis_info.items[0]);

            let redis_docs = r.call(&["COMMAND", "DOCS", &name]);
            let ember_docs = e.call(&["COMMAND", "DOCS", &name]);
            assert_eq!(ember_docs.kind, redis_docs.kind, "{what}: DOCS type");
            assert_eq!(ember_docs.items.len(), 2, "{what}: {ember_docs:?}");
            assert_same(&what, &ember_docs.items[0], &redis_docs.items[0]);
            compare_docs(&what, &ember_docs.items[1], &redis_docs.items[1]);
            compared += 1;
        }
        assert_eq!(absent, NOT_IN_REDIS_7_0, "commands redis-server lacks");
        assert_eq!(compared, embers_commands().len() - NOT_IN_REDIS_7_0.len());

        // Several names at once, unknown ones and any case, subcommands by
        // their full names.
        for args in [
            &[
                "COMMAND",
                "INFO",
                "get",
                "nosuch",
                "SET",
                "config|get",
                "CONFIG|GET",
            ][..],
            &[
                "COMMAND",
                "INFO",
                "get|x",
                "object|encoding|x",
                "config|",
                "|get",
                "config|rewrite",
            ],
            &[
                "COMMAND",
                "DOCS",
                "get",
                "nosuch",
                "Object|Encoding",
                "get|x",
                "incr",
            ],
            &["COMMAND", "DOCS", "get", "get"],
            &["COMMAND", "DOCS", "nosuch"],
            &["COMMAND", "INFO", "nosuch"],
        ] {
            let ember_reply = e.call(args);
            let redis_reply = r.call(args);
            assert_same(
                &format!("{args:?} (RESP{proto})"),
                &ember_reply,
                &redis_reply,
            );
        }
    }
}

#[test]
fn count_and_list_are_embers_table() {
    let ember = Server::start(1, &[]);
    let mut e = Conn::with_proto(ember.port, 3);
    let count = e.call(&["COMMAND", "COUNT"]);
    assert_eq!(
        (count.kind, count.str()),
        (b':', COMMANDS.len().to_string())
    );
    assert_eq!(e.names(&["COMMAND", "LIST"]), embers_commands());
    for args in [&["COMMAND"][..], &["COMMAND", "INFO"]] {
        let all = e.call(args);
        let names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        let listed: Vec<String> = all.items.iter().map(|i| i.items[0].str()).collect();
        assert_eq!(listed, names, "{args:?}");
    }
    let docs = e.call(&["COMMAND", "DOCS"]);
    assert_eq!(docs.kind, b'%');
    let documented: Vec<String> = docs.pairs().iter().map(|(k, _)| k.str()).collect();
    let names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
    assert_eq!(documented, names);
    // Each entry of COMMAND is the entry COMMAND INFO gives for its name.
    let all = e.call(&["COMMAND"]);
    for (entry, spec) in all.items.iter().zip(COMMANDS) {
        let one = e.call(&["COMMAND", "INFO", spec.name]);
        assert_eq!(&one.items[0], entry, "{}", spec.name);
    }
}

#[test]
fn list_filters_match_redis_among_embers_commands() {
    let Some(redis) = redis_7_0_15("list_filters_match_redis_among_embers_commands") else {
        return;
    };
    let ember = Server::start(1, &[]);
    let mut e = Conn::with_proto(ember.port, 2);
    let mut r = Conn::with_proto(redis.port, 2);
    let embers: BTreeSet<String> = embers_commands().into_iter().collect();
    let redis_all: BTreeSet<String> = r.names(&["COMMAND", "LIST"]).into_iter().collect();
    let shared: BTreeSet<String> = embers.intersection(&redis_all).cloned().collect();
    assert_eq!(
        embers.difference(&redis_all).cloned().collect::<Vec<_>>(),
        {
            let mut v: Vec<String> = NOT_IN_REDIS_7_0.iter().map(|s| s.to_string()).collect();
            v.sort();
            v
        }
    );
    let filters: &[&[&str]] = &[
        &["ACLCAT", "read"],
        &["ACLCAT", "write"],
        &["ACLCAT", "keyspace"],
        &["ACLCAT", "string"],
        &["ACLCAT", "list"],
        &["ACLCAT", "hash"],
        &["ACLCAT", "set"],
        &["ACLCAT", "sortedset"],
        &["ACLCAT", "pubsub"],
        &["ACLCAT", "admin"],
        &["ACLCAT", "fast"],
        &["ACLCAT", "slow"],
        &["ACLCAT", "blocking"],
        &["ACLCAT", "dangerous"],
        &["ACLCAT", "connection"],
        &["ACLCAT", "transaction"],
        &["aclcat", "SortedSet"],
        &["ACLCAT", "scripting"],
        &["ACLCAT", "nosuch"],
        &["PATTERN", "z*"],
        &["PATTERN", "config*"],
        &["PATTERN", "*|*"],
        &["pattern", "GET"],
        &["PATTERN", "h?et"],
        &["PATTERN", "[lr]push"],
        &["MODULE", "nosuch"],
    ];
    let mut nonempty = 0;
    for filter in filters {
        let mut args = vec!["COMMAND", "LIST", "FILTERBY"];
        args.extend_from_slice(filter);
        let ours: BTreeSet<String> = e.names(&args).into_iter().collect();
        let theirs: BTreeSet<String> = r.names(&args).into_iter().collect();
        let theirs_ours: BTreeSet<String> = theirs.intersection(&shared).cloned().collect();
        let ours_shared: BTreeSet<String> = ours.intersection(&shared).cloned().collect();
        assert_eq!(ours_shared, theirs_ours, "{args:?}");
        assert!(ours.is_subset(&embers), "{args:?}");
        nonempty += usize::from(!ours.is_empty());
    }
    // Most filters select something: the comparison is not of empty sets.
    assert!(nonempty >= 20, "{nonempty}");
    // The 7.4 commands are in their categories too.
    let hash = e.names(&["COMMAND", "LIST", "FILTERBY", "ACLCAT", "hash"]);
    assert!(hash.iter().any(|n| n == "hexpire") && hash.iter().any(|n| n == "httl"));
}

/// COMMAND GETKEYS / GETKEYSANDFLAGS and COMMAND's own errors and help,
/// compared byte for byte.
#[test]
fn getkeys_help_and_errors_match_redis() {
    let Some(redis) = redis_7_0_15("getkeys_help_and_errors_match_redis") else {
        return;
    };
    let ember = Server::start(1, &[]);
    let cases: &[&str] = &[
        // Plain ranges, every step, last keys counted from the end.
        "GETKEYS get k",
        "GETKEYS mset a 1 b 2",
        "GETKEYS mset a 1 b",
        "GETKEYS del a a b",
        "GETKEYS blpop a b 0",
        "GETKEYS bzpopmax a b c 1.5",
        "GETKEYS lmove a b left right",
        "GETKEYS zrangestore dst src 0 -1",
        "GETKEYSANDFLAGS mset a 1 b 2",
        "GETKEYSANDFLAGS lmove a b left right",
        "GETKEYSANDFLAGS rename a b",
        "GETKEYSANDFLAGS getdel k",
        "GETKEYSANDFLAGS sinterstore d a b",
        // SET's flags depend on GET.
        "GETKEYSANDFLAGS set k v",
        "GETKEYSANDFLAGS set k v ex 10 GET",
        "GETKEYSANDFLAGS set k get",
        // Keys after a count (movablekeys), and counts that do not fit.
        "GETKEYS zunion 2 a b",
        "GETKEYS zunion 3 a b",
        "GETKEYS zunion 0 a",
        "GETKEYS zunion x a",
        "GETKEYS zintercard -1 a",
        "GETKEYS zunionstore d 2 a b weights 1 2",
        "GETKEYS zunionstore d 5 a b",
        "GETKEYS zunionstore d 1a a",
        "GETKEYSANDFLAGS zunionstore d 1a a",
        "GETKEYSANDFLAGS zunionstore d 2 a b",
        "GETKEYSANDFLAGS zdiffstore d 1 a",
        "GETKEYS lmpop 2 a b left",
        "GETKEYS lmpop 01 a left",
        "GETKEYS lmpop 4294967297 a left",
        "GETKEYS blmpop 0 2 a b left count 1",
        "GETKEYS bzmpop 1 2 a b min",
        "GETKEYS sintercard 2 a b limit 3",
        "GETKEYSANDFLAGS zmpop 1 a min",
        // Subcommands, unknown commands, commands without keys, arity.
        "GETKEYS object encoding k",
        "GETKEYS OBJECT Encoding k",
        "GETKEYS object help",
        "GETKEYS object nosuch k",
        "GETKEYS config get x",
        "GETKEYS nosuch a",
        "GETKEYS ping x",
        "GETKEYS keys *",
        "GETKEYS publish ch m",
        "GETKEYS get a b",
        "GETKEYS blmpop 0 2 a",
        "GETKEYS object encoding k x",
        "GETKEYS COMMAND GETKEYS get x",
        "GETKEYS get",
        "GETKEYSANDFLAGS",
        // COMMAND's own errors and help.
        "",
        "HELP",
        "help x",
        "COUNT x",
        "nosuch",
        "LIST FILTERBY",
        "LIST FILTERBY ACLCAT",
        "LIST FILTERBY ACLCAT a b",
        "LIST FILTERBY nosuch x",
        "LIST foo bar baz",
    ];
    for proto in [2, 3] {
        let mut e = Conn::with_proto(ember.port, proto);
        let mut r = Conn::with_proto(redis.port, proto);
        for case in cases {
            let mut args = vec!["COMMAND"];
            args.extend(case.split(' ').filter(|w| !w.is_empty()));
            if args.len() == 1 {
                continue; // plain COMMAND lists every command: compared above
            }
            let ours = e.call(&args);
            let theirs = r.call(&args);
            assert_same(&format!("{args:?} (RESP{proto})"), &ours, &theirs);
        }
    }
}

/// A `no_multi` command (SHUTDOWN) is refused when MULTI queues it, and
/// the transaction then fails at EXEC, as Redis does.
#[test]
fn no_multi_commands_are_refused_when_queued() {
    let ember = Server::start(2, &[]);
    let script: &[&[&str]] = &[
        &["MULTI"],
        &["SET", "k", "v"],
        &["SHUTDOWN", "NOSAVE"],
        &["EXEC"],
        &["GET", "k"],
    ];
    let run = |port: u16| -> Vec<Resp> {
        let mut conn = Conn::new(port);
        script.iter().map(|args| conn.call(args)).collect()
    };
    let ours = run(ember.port);
    let texts: Vec<String> = ours.iter().map(Resp::str).collect();
    assert_eq!(
        texts,
        [
            "OK",
            "QUEUED",
            "ERR Command not allowed inside a transaction",
            "EXECABORT Transaction discarded because of previous errors.",
            "-1",
        ]
    );
    assert_eq!(ours[2].kind, b'-');
    // The server is still there, and the flag is what refused it.
    assert_eq!(Conn::new(ember.port).call(&["PING"]).str(), "PONG");
    let shutdown = ember::cmd::lookup(b"shutdown").unwrap();
    assert!(shutdown.flags.contains(ember::cmd::CommandFlags::NO_MULTI));
    if let Some(redis) = redis_7_0_15("no_multi_commands_are_refused_when_queued (against redis)") {
        let theirs = run(redis.port);
        for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
            assert_same(&format!("step {i} {:?}", script[i]), o, t);
        }
    }
}
