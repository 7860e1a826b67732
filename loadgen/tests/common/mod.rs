//! Shared test helpers: the server under test and running loadgen.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A server started for one test; killed on drop.
pub struct TestServer {
    child: Child,
    pub port: u16,
    pub kind: &'static str,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Sends one inline command and returns the raw reply bytes (best effort).
pub fn raw_cmd(port: u16, cmd: &str) -> Option<String> {
    let mut s = TcpStream::connect_timeout(
        &format!("127.0.0.1:{port}").parse().unwrap(),
        Duration::from_millis(300),
    )
    .ok()?;
    s.set_read_timeout(Some(Duration::from_millis(1000))).ok()?;
    s.write_all(format!("{cmd}\r\n").as_bytes()).ok()?;
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

fn answers_ping(port: u16) -> bool {
    raw_cmd(port, "PING").is_some_and(|r| r.starts_with("+PONG"))
}

fn wait_ready(child: &mut Child, port: u16) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if answers_ping(port) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    false
}

/// The loadgen binary under test.
pub fn loadgen_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_loadgen"))
}

/// ember next to loadgen (same profile directory), if built.
pub fn ember_bin() -> Option<PathBuf> {
    let p = loadgen_bin()
        .parent()?
        .join(format!("ember{}", std::env::consts::EXE_SUFFIX));
    p.is_file().then_some(p)
}

/// Spawns `program` and waits until it answers PING on `port`.
fn spawn_ready(
    program: &std::path::Path,
    args: &[&str],
    port: u16,
    kind: &'static str,
) -> Option<TestServer> {
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    if wait_ready(&mut child, port) {
        return Some(TestServer { child, port, kind });
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn start_ember() -> Option<TestServer> {
    let bin = ember_bin()?;
    let port = free_port();
    let port_text = port.to_string();
    let args = ["--port", &port_text, "--bind", "127.0.0.1", "--shards", "2"];
    let server = spawn_ready(&bin, &args, port, "ember");
    if server.is_none() {
        eprintln!(
            "note: {} does not answer PING; trying redis-server",
            bin.display()
        );
    }
    server
}

fn start_redis() -> Option<TestServer> {
    let port = free_port();
    let port_text = port.to_string();
    let args = [
        "--port",
        &port_text,
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
    ];
    spawn_ready(
        std::path::Path::new("redis-server"),
        &args,
        port,
        "redis-server",
    )
}

/// The server under test: the workspace's ember when it exists and answers
/// PING, else redis-server from PATH; fails the test if neither is available.
pub fn server_under_test() -> TestServer {
    if let Some(s) = start_ember() {
        return s;
    }
    if let Some(s) = start_redis() {
        return s;
    }
    panic!(
        "no server under test: neither an ember binary next to {} that answers PING \
         nor redis-server on PATH (build ember with `cargo build --workspace` or install redis-server)",
        loadgen_bin().display()
    );
}

/// Runs loadgen with `args`, with a hard timeout.
pub fn run_loadgen(args: &[&str], timeout: Duration) -> Output {
    let mut child = Command::new(loadgen_bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start loadgen");
    let deadline = Instant::now() + timeout;
    // Drain pipes in threads so the child never blocks on a full pipe.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let t2 = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let st = child.wait().unwrap();
            let out = String::from_utf8_lossy(&t1.join().unwrap()).into_owned();
            let err = String::from_utf8_lossy(&t2.join().unwrap()).into_owned();
            panic!("loadgen {args:?} timed out ({st});\nstdout:\n{out}\nstderr:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: t1.join().unwrap(),
        stderr: t2.join().unwrap(),
    }
}

pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A fresh temporary directory for one test, removed when dropped (at the
/// end of the test, passed or failed).
pub struct TmpDir(PathBuf);

impl std::ops::Deref for TmpDir {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TmpDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn tmpdir(name: &str) -> TmpDir {
    let d = std::env::temp_dir().join(format!(
        "loadgen-test-{name}-{}-{}",
        std::process::id(),
        free_port()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TmpDir(d)
}

pub fn read_json(p: &std::path::Path) -> serde_json::Value {
    let s = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&s).unwrap()
}
