//! Test harness: starts a real ember on a free port and talks RESP to it,
//! through the `redis` crate or raw bytes; `reference` starts the reference
//! redis-server.
#![allow(dead_code)]

pub mod reference;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running ember, killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
    /// Its working directory (its default `dir`, where `dump.rdb` goes):
    /// a fresh one per server unless the test chose one, removed on drop
    /// when fresh.
    pub dir: std::path::PathBuf,
    own_dir: bool,
}

static DIR_SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A fresh empty directory under the system's temporary one.
pub fn temp_dir() -> std::path::PathBuf {
    let n = DIR_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ember-test-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    /// Starts ember with `--shards shards` plus `extra` flags.
    pub fn start(shards: usize, extra: &[&str]) -> Server {
        let mut server = Server::start_in(&temp_dir(), shards, extra);
        server.own_dir = true;
        server
    }

    /// [`Server::start`] in working directory `dir` (kept on drop): a
    /// `dump.rdb` there is loaded, and saves go there.
    pub fn start_in(dir: &std::path::Path, shards: usize, extra: &[&str]) -> Server {
        Server::start_in_as(dir, shards, extra, false)
    }

    /// [`Server::start_in`], back as soon as it answers, `-LOADING`
    /// included: for tests of what a client meets during a long load.
    pub fn start_loading(dir: &std::path::Path, shards: usize, extra: &[&str]) -> Server {
        Server::start_in_as(dir, shards, extra, true)
    }

    fn start_in_as(dir: &std::path::Path, shards: usize, extra: &[&str], loading: bool) -> Server {
        for _ in 0..5 {
            let port = free_port();
            let mut args = vec!["--port".to_string(), port.to_string()];
            // A full sync starts at once unless a test asks for Redis's
            // default 5 s wait for more replicas (its own flag comes later).
            args.extend(["--repl-diskless-sync-delay".into(), "0".into()]);
            args.extend(extra.iter().map(|a| a.to_string()));
            if let Some(server) = Server::launch(dir, shards, &args, port, loading) {
                return server;
            }
        }
        panic!("ember did not start");
    }

    /// Spawns ember with `args` and waits until it answers PING on `port`
    /// (with `loading`, a `-LOADING` answer will do); None if it exited
    /// first (say the port was taken since it was probed).
    fn launch(
        dir: &std::path::Path,
        shards: usize,
        args: &[String],
        port: u16,
        loading: bool,
    ) -> Option<Server> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ember"))
            .current_dir(dir)
            .args(args)
            .args(["--shards", &shards.to_string(), "--loglevel", "warning"])
            .stdout(Stdio::null())
            // EMBER_TEST_STDERR=1 shows the servers' logs while debugging a test.
            .stderr(if std::env::var_os("EMBER_TEST_STDERR").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .expect("spawn ember");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return None;
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                let _ = s.write_all(b"PING\r\n");
                // A server started with a password answers NOAUTH.
                let mut line = String::new();
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                if BufReader::new(s).read_line(&mut line).is_ok()
                    && (line == "+PONG\r\n"
                        || line.starts_with("-NOAUTH")
                        || (loading && line.starts_with("-LOADING")))
                {
                    return Some(Server {
                        child,
                        port,
                        dir: dir.to_path_buf(),
                        own_dir: false,
                    });
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    pub fn client(&self) -> redis::Connection {
        redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))
            .unwrap()
            .get_connection_with_timeout(Duration::from_secs(5))
            .expect("connect")
    }

    pub fn raw(&self) -> Raw {
        Raw::connect(self.port)
    }

    /// The server's process id (to read its memory from /proc).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Server {
    /// Waits (at most 10 s) for the process to exit by itself (SHUTDOWN).
    pub fn wait_exit(&mut self) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if self.own_dir {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A decoded reply, RESP2 and RESP3.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    Nil,
    Array(Vec<Reply>),
    Map(Vec<(Reply, Reply)>),
    Set(Vec<Reply>),
    Double(String),
    Bool(bool),
    Verbatim(String),
    Push(Vec<Reply>),
}

impl Reply {
    pub fn bulk(s: &str) -> Reply {
        Reply::Bulk(s.as_bytes().to_vec())
    }
}

/// A raw TCP connection: send bytes, read decoded replies.
pub struct Raw {
    reader: BufReader<TcpStream>,
    stream: TcpStream,
}

impl Raw {
    pub fn connect(port: u16) -> Raw {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Raw {
            reader: BufReader::new(stream.try_clone().unwrap()),
            stream,
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("send");
    }

    /// Sends a command as a multibulk.
    pub fn send_cmd(&mut self, args: &[&[u8]]) {
        self.send(&encode_cmd(args));
    }

    /// Sends a command and reads its reply.
    pub fn cmd(&mut self, args: &[&str]) -> Reply {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send_cmd(&args);
        self.read().expect("reply")
    }

    /// Reads one reply; None when the server closed the connection.
    pub fn read(&mut self) -> Option<Reply> {
        let mut line = String::new();
        if self.reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end_matches("\r\n");
        let (kind, rest) = line.split_at(1);
        Some(match kind {
            "+" => Reply::Simple(rest.into()),
            "-" => Reply::Error(rest.into()),
            ":" => Reply::Int(rest.parse().unwrap()),
            "_" => Reply::Nil,
            "," => Reply::Double(rest.into()),
            "#" => Reply::Bool(rest == "t"),
            "$" | "=" => {
                let len: i64 = rest.parse().unwrap();
                if len < 0 {
                    return Some(Reply::Nil);
                }
                let mut buf = vec![0; len as usize + 2];
                self.reader.read_exact(&mut buf).ok()?;
                buf.truncate(len as usize);
                if kind == "=" {
                    Reply::Verbatim(String::from_utf8_lossy(&buf[4..]).into())
                } else {
                    Reply::Bulk(buf)
                }
            }
            "*" | "~" | ">" => {
                let n: i64 = rest.parse().unwrap();
                if n < 0 {
                    return Some(Reply::Nil);
                }
                let items = (0..n).map(|_| self.read()).collect::<Option<Vec<_>>>()?;
                match kind {
                    "*" => Reply::Array(items),
                    "~" => Reply::Set(items),
                    _ => Reply::Push(items),
                }
            }
            "%" => {
                let n: usize = rest.parse().unwrap();
                let mut pairs = Vec::new();
                for _ in 0..n {
                    pairs.push((self.read()?, self.read()?));
                }
                Reply::Map(pairs)
            }
            other => panic!("unexpected reply type {other:?} in {line:?}"),
        })
    }

    /// True once the server has closed the connection.
    pub fn closed(&mut self) -> bool {
        self.read().is_none()
    }
}

pub fn encode_cmd(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Polls `f` until it is true or `limit` passes.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    f()
}

/// Finds `n` keys with a given prefix that live on `shard` of `nshards`
/// (routing is CRC16 mod 16384 mod nshards), for cross-shard tests.
pub fn keys_on_shard(prefix: &str, shard: usize, nshards: usize, n: usize) -> Vec<String> {
    (0..)
        .map(|i| format!("{prefix}{i}"))
        .filter(|k| ember::util::slot::key_slot(k.as_bytes()) as usize % nshards == shard)
        .take(n)
        .collect()
}

// ---- Helpers for the semantics tests (strings, keyspace, expiry) ----

pub fn ok() -> Reply {
    Reply::Simple("OK".into())
}

pub fn int(n: i64) -> Reply {
    Reply::Int(n)
}

pub fn err(text: &str) -> Reply {
    Reply::Error(text.into())
}

pub fn simple(text: &str) -> Reply {
    Reply::Simple(text.into())
}

/// An array of bulk strings.
pub fn bulks(items: &[&str]) -> Reply {
    Reply::Array(items.iter().map(|s| Reply::bulk(s)).collect())
}

/// Wall clock, Unix milliseconds.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

impl Raw {
    /// Sends a command of raw byte arguments and reads its reply.
    pub fn cmd_bytes(&mut self, args: &[&[u8]]) -> Reply {
        self.send_cmd(args);
        self.read().expect("reply")
    }

    /// Sends a command whose reply must be an integer.
    pub fn int(&mut self, args: &[&str]) -> i64 {
        match self.cmd(args) {
            Reply::Int(n) => n,
            other => panic!("{args:?}: expected an integer, got {other:?}"),
        }
    }

    /// One field of INFO `section`, e.g. `info_field("stats", "expired_keys")`.
    pub fn info_field(&mut self, section: &str, field: &str) -> Option<String> {
        let text = match self.cmd(&["INFO", section]) {
            Reply::Bulk(b) => String::from_utf8(b).unwrap(),
            Reply::Verbatim(s) => s,
            other => panic!("INFO answered {other:?}"),
        };
        text.lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':').map(str::to_string))
    }

    /// An INFO field parsed as an integer.
    pub fn info_int(&mut self, section: &str, field: &str) -> i64 {
        let v = self
            .info_field(section, field)
            .unwrap_or_else(|| panic!("INFO {section} has no {field}"));
        v.parse()
            .unwrap_or_else(|_| panic!("{field}:{v} is not an integer"))
    }

    /// Waits (at most 20 s) until no AOF rewrite runs or is scheduled.
    pub fn wait_rewrite(&mut self) {
        assert!(
            wait_until(Duration::from_secs(20), || {
                self.info_int("persistence", "aof_rewrite_in_progress") == 0
                    && self.info_int("persistence", "aof_rewrite_scheduled") == 0
            }),
            "the rewrite did not end"
        );
    }

    /// Sends many commands in one write, then reads all their replies.
    pub fn pipeline(&mut self, cmds: &[Vec<Vec<u8>>]) -> Vec<Reply> {
        let mut buf = Vec::new();
        for c in cmds {
            let args: Vec<&[u8]> = c.iter().map(|a| a.as_slice()).collect();
            buf.extend_from_slice(&encode_cmd(&args));
        }
        // Write from another thread so a full socket buffer cannot deadlock us.
        let mut writer = self.stream.try_clone().unwrap();
        let sender = std::thread::spawn(move || writer.write_all(&buf).expect("send"));
        let replies = (0..cmds.len())
            .map(|_| self.read().expect("reply"))
            .collect();
        sender.join().unwrap();
        replies
    }
}

/// Builds a command for [`Raw::pipeline`] from string arguments.
pub fn args(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

// ---- Additions for the protocol / server / cross-shard suites ----

impl Reply {
    pub fn ok() -> Reply {
        Reply::Simple("OK".into())
    }

    pub fn err(text: &str) -> Reply {
        Reply::Error(text.into())
    }

    /// The text of a bulk, verbatim or simple reply.
    pub fn text(&self) -> String {
        match self {
            Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            Reply::Simple(s) | Reply::Verbatim(s) | Reply::Error(s) | Reply::Double(s) => s.clone(),
            other => panic!("not a string reply: {other:?}"),
        }
    }

    /// The items of an array (or set/push) reply.
    pub fn items(&self) -> Vec<Reply> {
        match self {
            Reply::Array(v) | Reply::Set(v) | Reply::Push(v) => v.clone(),
            other => panic!("not an array reply: {other:?}"),
        }
    }

    pub fn int(&self) -> i64 {
        match self {
            Reply::Int(n) => *n,
            other => panic!("not an integer reply: {other:?}"),
        }
    }
}

impl Raw {
    /// Writes bytes, ignoring failures (the server may already have closed).
    pub fn send_lossy(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).is_ok()
    }

    /// Reads exactly `expected.len()` raw bytes and checks them.
    pub fn expect_bytes(&mut self, expected: &[u8]) {
        let mut buf = vec![0; expected.len()];
        self.reader.read_exact(&mut buf).expect("read raw bytes");
        assert_eq!(
            String::from_utf8_lossy(&buf),
            String::from_utf8_lossy(expected),
            "raw reply bytes"
        );
    }

    /// A second handle on the socket, for writing from another thread.
    pub fn writer(&self) -> TcpStream {
        self.stream.try_clone().unwrap()
    }

    pub fn set_read_timeout(&mut self, limit: Duration) {
        self.stream.set_read_timeout(Some(limit)).unwrap();
    }

    /// The client side address, as the server shows it in CLIENT LIST.
    pub fn local_addr(&self) -> String {
        self.stream.local_addr().unwrap().to_string()
    }

    /// Sends an inline command line (`PING\r\n` style) and reads the reply.
    pub fn inline(&mut self, line: &str) -> Reply {
        self.send(format!("{line}\r\n").as_bytes());
        self.read().expect("reply")
    }
}

/// One `field:value` line of an INFO reply.
pub fn info_field(info: &str, field: &str) -> Option<String> {
    info.lines().find_map(|l| {
        l.strip_prefix(&format!("{field}:"))
            .map(|v| v.trim().to_string())
    })
}

static CONF_SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Writes `text` to a fresh temporary file and returns its path.
pub fn temp_conf(text: &str) -> std::path::PathBuf {
    let n = CONF_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("ember-test-{}-{n}.conf", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

impl Server {
    /// Starts ember with `--config FILE` only (plus `--shards`): the file
    /// gets `port <free port>` followed by `body`, so the port comes from it.
    pub fn start_with_config(shards: usize, body: &str) -> Server {
        for _ in 0..5 {
            let port = free_port();
            let path = temp_conf(&format!("port {port}\n{body}"));
            let args = ["--config".to_string(), path.display().to_string()];
            let dir = temp_dir();
            let started = Server::launch(&dir, shards, &args, port, false);
            let _ = std::fs::remove_file(&path);
            if let Some(mut server) = started {
                server.own_dir = true;
                return server;
            }
            let _ = std::fs::remove_dir_all(&dir);
        }
        panic!("ember did not start with a config file");
    }
}

/// Runs ember with `--config` on a file holding `text` and waits for it to
/// exit (at most 10 s); returns the exit status and stderr.
pub fn run_with_bad_config(text: &str) -> (std::process::ExitStatus, String) {
    let path = temp_conf(text);
    let mut command = Command::new(env!("CARGO_BIN_EXE_ember"));
    command.arg("--config").arg(&path).args(["--shards", "1"]);
    let result = run_to_exit(command);
    let _ = std::fs::remove_file(&path);
    result
}

/// Runs `command` (an ember) and waits for it to exit by itself (at most
/// 10 s): its status and what it logged.
pub fn run_to_exit(mut command: Command) -> (std::process::ExitStatus, String) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ember");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ember kept running");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (status, stderr)
}

/// A small seeded generator (xorshift64) for randomized workloads: the same
/// seed gives the same sequence, so a failure can be replayed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// A number in `lo..=hi`, as text.
    pub fn int(&mut self, lo: i64, hi: i64) -> String {
        (lo + (self.next() % (hi - lo + 1) as u64) as i64).to_string()
    }
}

/// Every key of every database (0..16), found by SCAN, with what
/// `describe` says of it: for comparing two servers' keyspaces key by key.
pub fn dump_keyspace(
    raw: &mut Raw,
    describe: impl Fn(&mut Raw, &[u8]) -> String,
) -> std::collections::BTreeMap<(usize, Vec<u8>), String> {
    let mut out = std::collections::BTreeMap::new();
    for db in 0..16 {
        assert_eq!(raw.cmd(&["SELECT", &db.to_string()]), Reply::ok());
        let mut keys = std::collections::BTreeSet::new();
        let mut cursor = "0".to_string();
        loop {
            let reply = raw.cmd(&["SCAN", &cursor, "COUNT", "1000"]).items();
            cursor = reply[0].text();
            for key in reply[1].items() {
                if let Reply::Bulk(k) = key {
                    keys.insert(k);
                }
            }
            if cursor == "0" {
                break;
            }
        }
        for key in keys {
            let description = describe(raw, &key);
            out.insert((db, key), description);
        }
    }
    out
}
