//! The server under test: a given address, or an embedded ember started as a
//! child on a free port (stopped when the guard drops). Also a small blocking
//! RESP client for control traffic (PING, INFO, loading).

use crate::resp::{encode_command, flatten_reply, parse_reply, Flat, Kind, ProtoError};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A blocking connection for control commands.
pub struct CtlConn {
    stream: TcpStream,
    buf: Vec<u8>,
    len: usize,
}

/// A reply with its payload copied out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    pub kind: Kind,
    pub data: Vec<u8>,
}

impl CtlConn {
    pub fn connect(addr: SocketAddr, timeout: Duration) -> std::io::Result<CtlConn> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(CtlConn {
            stream,
            buf: vec![0; 64 * 1024],
            len: 0,
        })
    }

    pub fn set_read_timeout(&self, t: Duration) {
        let _ = self.stream.set_read_timeout(Some(t));
    }

    pub fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Reads one reply, copying its payload.
    pub fn read_reply(&mut self) -> std::io::Result<Owned> {
        self.read_parsed(|buf| {
            Ok(parse_reply(buf)?.map(|r| {
                let out = Owned {
                    kind: r.kind,
                    data: buf[r.start..r.end].to_vec(),
                };
                (out, r.len)
            }))
        })
    }

    /// Sends one command and reads its reply's scalar values, flattened.
    pub fn cmd_flat(&mut self, args: &[&[u8]]) -> std::io::Result<Flat> {
        self.send_raw(&encode_command(args))?;
        self.read_parsed(flatten_reply)
    }

    /// Reads until `parse` finds a whole reply (and how many bytes it took).
    fn read_parsed<T>(
        &mut self,
        parse: impl Fn(&[u8]) -> Result<Option<(T, usize)>, ProtoError>,
    ) -> std::io::Result<T> {
        loop {
            match parse(&self.buf[..self.len]) {
                Ok(Some((out, used))) => {
                    self.buf.copy_within(used..self.len, 0);
                    self.len -= used;
                    return Ok(out);
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        e.to_string(),
                    ))
                }
            }
            if self.len == self.buf.len() {
                let n = self.buf.len() * 2;
                self.buf.resize(n, 0);
            }
            let n = self.stream.read(&mut self.buf[self.len..])?;
            if n == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed by server",
                ));
            }
            self.len += n;
        }
    }

    /// Sends one command and reads its reply.
    pub fn cmd(&mut self, args: &[&[u8]]) -> std::io::Result<Owned> {
        self.send_raw(&encode_command(args))?;
        self.read_reply()
    }
}

/// PING → PONG within `timeout`.
pub fn ping(addr: SocketAddr, timeout: Duration) -> Result<(), String> {
    let mut c =
        CtlConn::connect(addr, timeout).map_err(|e| format!("cannot connect to {addr}: {e}"))?;
    c.set_read_timeout(timeout);
    let r = c
        .cmd(&[b"PING"])
        .map_err(|e| format!("PING to {addr} failed: {e}"))?;
    if r.kind == Kind::Simple && r.data.eq_ignore_ascii_case(b"PONG") {
        Ok(())
    } else {
        Err(format!(
            "{addr} answered PING with {:?} {:?}",
            r.kind,
            String::from_utf8_lossy(&r.data)
        ))
    }
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// The ember binary: `explicit`, `$EMBER_BIN`, or next to this executable
/// (and its parent directory, for test executables in `deps/`).
pub fn find_ember(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        return if p.is_file() {
            Ok(p.to_path_buf())
        } else {
            Err(format!("--ember-bin {}: no such file", p.display()))
        };
    }
    if let Some(p) = std::env::var_os("EMBER_BIN") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("EMBER_BIN={}: no such file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let mut tried = Vec::new();
    let mut dir = exe.parent().map(Path::to_path_buf);
    for _ in 0..2 {
        let Some(d) = dir else { break };
        let cand = d.join(format!("ember{}", std::env::consts::EXE_SUFFIX));
        if cand.is_file() {
            return Ok(cand);
        }
        tried.push(cand.display().to_string());
        dir = d.parent().map(Path::to_path_buf);
    }
    Err(format!(
        "no ember binary found (looked at {}); build it with `cargo build --release` \
         (or pass --server/--port, --ember-bin or EMBER_BIN)",
        tried.join(", ")
    ))
}

/// An ember child process; killed on drop.
pub struct Embedded {
    child: Child,
    pub addr: SocketAddr,
}

impl Embedded {
    pub fn start(bin: &Path, shards: usize) -> Result<Embedded, String> {
        let port = free_port().map_err(|e| format!("no free port: {e}"))?;
        let child = Command::new(bin)
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--shards",
                &shards.max(1).to_string(),
                // No snapshots: a measurement is not to include a BGSAVE
                // (redis-server is started with `--save ''` likewise).
                "--save",
                "",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let mut e = Embedded {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(st)) = e.child.try_wait() {
                return Err(format!("{} exited during startup ({st})", bin.display()));
            }
            match ping(e.addr, Duration::from_millis(500)) {
                Ok(()) => return Ok(e),
                Err(err) if Instant::now() > deadline => {
                    e.stop();
                    return Err(format!("embedded ember did not answer PING: {err}"));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The address to test plus, when embedded, the child that serves it.
pub struct Target {
    pub addr: SocketAddr,
    /// Keeps the embedded server alive while the target is in use.
    pub _embedded: Option<Embedded>,
    pub label: String,
}

/// Resolves the connection options into a target, starting ember if needed.
pub fn target(conn: &crate::config::ConnArgs) -> Result<Target, String> {
    if conn.server.is_none() && conn.port.is_none() {
        let bin = find_ember(conn.ember_bin.as_deref())?;
        let e = Embedded::start(&bin, conn.ember_shards)?;
        eprintln!("started embedded ember ({}) on {}", bin.display(), e.addr);
        return Ok(Target {
            addr: e.addr,
            label: format!("embedded ember {}", e.addr),
            _embedded: Some(e),
        });
    }
    let host = conn.server.clone().unwrap_or_else(|| "127.0.0.1".into());
    let addr = crate::config::resolve(&host, conn.port.unwrap_or(6379))?;
    Ok(Target {
        addr,
        _embedded: None,
        label: format!("{host}:{}", addr.port()),
    })
}

/// Numbers polled from INFO.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct InfoSample {
    /// ms relative to the storm instant (negative before).
    pub t_ms: i64,
    pub keys: u64,
    pub expires: u64,
    pub used_memory: u64,
    pub expired_keys: u64,
    pub expired_stale_perc: f64,
    /// The server's process id (`process_id`, INFO server).
    #[serde(skip)]
    pub process_id: Option<u32>,
}

/// Parses the fields of interest out of an INFO reply.
pub fn parse_info(text: &str) -> InfoSample {
    let mut s = InfoSample::default();
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("db0:") {
            for kv in v.split(',') {
                match kv.split_once('=') {
                    Some(("keys", n)) => s.keys = n.parse().unwrap_or(0),
                    Some(("expires", n)) => s.expires = n.parse().unwrap_or(0),
                    _ => {}
                }
            }
        } else if let Some((k, v)) = line.split_once(':') {
            match k {
                "used_memory" => s.used_memory = v.parse().unwrap_or(0),
                "expired_keys" => s.expired_keys = v.parse().unwrap_or(0),
                "expired_stale_perc" => s.expired_stale_perc = v.parse().unwrap_or(0.0),
                "process_id" => s.process_id = v.parse().ok(),
                _ => {}
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_parsing() {
        let t = "# Server\r\nprocess_id:77\r\n# Memory\r\nused_memory:123456\r\nused_memory_human:1M\r\n# Stats\r\nexpired_keys:42\r\nexpired_stale_perc:12.5\r\n# Keyspace\r\ndb0:keys=10,expires=7,avg_ttl=100\r\n";
        let s = parse_info(t);
        assert_eq!(
            (s.keys, s.expires, s.used_memory, s.expired_keys),
            (10, 7, 123456, 42)
        );
        assert_eq!(s.expired_stale_perc, 12.5);
        assert_eq!(s.process_id, Some(77));
        assert_eq!(parse_info("").expires, 0);
    }
}
