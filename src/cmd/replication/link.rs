//! Replica side: the thread that keeps this server replicating its
//! master (REPLICAOF host port), in Redis's protocol, so ember replicates
//! a redis-server (the migration path) or another ember.
//!
//! # The link
//!
//! 1. Connect (through TLS with `tls-replication yes`: `master_stream`); PING; AUTH with `masteruser`/`masterauth` when set;
//!    `REPLCONF listening-port`, `REPLCONF capa eof capa psync2`.
//! 2. `PSYNC <replid> <offset+1>` of the history this server holds
//!    (`PSYNC ? -1` without one). `+CONTINUE`: the stream goes on from
//!    there. `+FULLRESYNC <replid> <offset>`: the file follows (`$<len>`
//!    or diskless `$EOF:<mark>`), read whole, then loaded into the shards
//!    in one transaction holding every shard (flushing them first).
//! 3. The stream: each command is written, as it came, on a connection
//!    this thread made to one of its own shards (`exec::Msg::Adopt`), so
//!    it runs through the shards as any client's command does: a MULTI
//!    ... EXEC atomically under the key locks, SELECT on that session.
//!    The connection is the master client: not refused as read-only,
//!    obeyed whatever the ACL says, and it sees keys this replica holds
//!    logically expired as live (`store::Expiry`). Its replies are read
//!    and dropped by a thread of their own.
//! 4. `REPLCONF ACK <offset>` every second; `REPLCONF GETACK` answered at
//!    once. The offset counts the stream's bytes up to the last command
//!    outside a transaction, as Redis's does, so a link lost inside MULTI
//!    resumes from before it (the half transaction is discarded).
//!
//! While this server is a replica its own replicas get the master's
//! stream byte for byte (the backlog is fed here, not from the feed), with
//! the master's replication ID and offsets, as Redis's chained replicas do.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::master_stream::MasterStream;
use crate::exec::repl::{Ids, Link};
use crate::exec::{Msg, Shared};

/// How long to wait between two connection attempts.
const RETRY: Duration = Duration::from_secs(1);
/// How often the replica acknowledges its offset.
const ACK_EVERY: Duration = Duration::from_secs(1);

/// Starts the link thread for `link`.
pub fn start(shared: Arc<Shared>, link: Arc<Link>) {
    let spawned = std::thread::Builder::new()
        .name("ember-master-link".into())
        .spawn(move || run(&shared, &link));
    if let Err(e) = spawned {
        log::warn!("cannot start the replication link: {e}");
    }
}

fn now_ms() -> u64 {
    super::super::save::now_ms()
}

fn run(shared: &Arc<Shared>, link: &Arc<Link>) {
    while !link.stop.load(Relaxed) {
        // Redis's replica connects from its event loop, so not while the
        // server is blocked (DEBUG SLEEP, a long script): nor does this
        // one while a shard is, which could not apply the stream anyway.
        if !shards_answer(shared, link) {
            break;
        }
        // A master client per connection to the master: when the link
        // ends, what it was given is all applied (or its half transaction
        // dropped) before the next PSYNC names the offset.
        let Some(mut apply) = Applier::open(shared, link) else {
            std::thread::sleep(RETRY);
            continue;
        };
        log::info!("Connecting to MASTER {}:{}", link.host, link.port);
        link.set_state("connecting");
        match session(shared, link, &mut apply) {
            Ok(()) => {}
            Err(e) => log::warn!("Master link {}:{}: {e}", link.host, link.port),
        }
        if link.is_up() || link.down_since_ms.load(Relaxed) == 0 {
            link.down_since_ms.store(now_ms(), Relaxed);
        }
        link.set_state("connect");
        apply.close();
        if link.stop.load(Relaxed) {
            break;
        }
        std::thread::sleep(RETRY);
    }
}

/// Waits until every shard ran a message of this thread's (false: the
/// link was stopped meanwhile).
fn shards_answer(shared: &Shared, link: &Link) -> bool {
    let (tx, rx) = std::sync::mpsc::channel();
    let peers = shared.peers();
    for peer in peers {
        let tx = tx.clone();
        let op = crate::exec::Op::keyless(move |_| {
            let _ = tx.send(());
            crate::exec::Out::Count(0)
        });
        let _ = peer.inbox.send(vec![Msg::Post(op)]);
        let _ = peer.waker.wake();
    }
    drop(tx);
    let mut answered = 0;
    while answered < peers.len() {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(()) => answered += 1,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if !link.stop.load(Relaxed) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return false,
            // A shard dropped the message (it is stopping).
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return true,
        }
    }
    true
}

/// Reads lines and bulks from the master; writes go through
/// `reader.get_mut()`, the one stream (TLS or not) under the buffer.
struct MasterConn {
    reader: BufReader<MasterStream>,
    link: Arc<Link>,
    /// `repl-timeout`: this long without a byte from the master ends the
    /// link (the socket's own timeout is shorter, to see REPLICAOF's stop).
    timeout: Duration,
}

/// How often a blocked read looks at the link's stop flag.
const STOP_CHECK: Duration = Duration::from_secs(1);

fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

impl MasterConn {
    fn command(&mut self, args: &[&[u8]]) -> std::io::Result<String> {
        let mut out = Vec::new();
        crate::exec::feed::write_command(
            &mut out,
            &args
                .iter()
                .map(|a| bytes::Bytes::copy_from_slice(a))
                .collect::<Vec<_>>(),
        );
        let stream = self.reader.get_mut();
        stream.write_all(&out)?;
        stream.flush()?;
        self.line()
    }

    /// One line, without its CRLF; newlines alone (keepalives) skipped.
    fn line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        let mut last = Instant::now();
        loop {
            // The master's keepalives must not keep a stopped link going.
            self.stopped()?;
            match self.reader.read_line(&mut line) {
                Ok(0) => return Err(std::io::Error::other("the master closed the connection")),
                Ok(_) => {
                    last = Instant::now();
                    let text = line.trim_end_matches(['\r', '\n']);
                    if !text.is_empty() {
                        return Ok(text.to_string());
                    }
                    line.clear();
                }
                // What came before the timeout stays in `line`.
                Err(e) if timed_out(&e) => self.waited(last)?,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Some bytes of the master's, waiting for them as [`MasterConn::line`].
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let last = Instant::now();
        loop {
            self.stopped()?;
            match self.reader.read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if timed_out(&e) => self.waited(last)?,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn stopped(&self) -> std::io::Result<()> {
        if self.link.stop.load(Relaxed) {
            return Err(std::io::Error::other("the replication link was stopped"));
        }
        Ok(())
    }

    /// A read timed out: REPLICAOF moved on (the link ends at once, as
    /// Redis cancels a handshake), or the master was silent too long.
    fn waited(&self, since: Instant) -> std::io::Result<()> {
        self.stopped()?;
        if since.elapsed() >= self.timeout {
            return Err(std::io::Error::from(std::io::ErrorKind::TimedOut));
        }
        Ok(())
    }
}

/// One connection to the master, from the handshake to its end.
fn session(shared: &Arc<Shared>, link: &Arc<Link>, apply: &mut Applier) -> std::io::Result<()> {
    let timeout = Duration::from_secs(shared.config.repl_timeout_s().max(1));
    let addr = format!("{}:{}", link.host, link.port);
    let addrs: Vec<_> = std::net::ToSocketAddrs::to_socket_addrs(&addr)?.collect();
    let first = addrs
        .first()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    let stream = TcpStream::connect_timeout(first, timeout)?;
    link.set_state("handshake");
    let _ = stream.set_nodelay(true);
    stream.set_read_timeout(Some(timeout.min(STOP_CHECK)))?;
    stream.set_write_timeout(Some(timeout))?;
    // tls-replication: the master's TLS port, with the client set-up
    // config::tls built (its CAs, this server's certificate).
    let tls = if shared.config.tls_replication() {
        let config = crate::config::tls::client().ok_or_else(|| {
            std::io::Error::other("tls-replication is on but the TLS set-up did not build")
        })?;
        Some(config)
    } else {
        None
    };
    let mut m = MasterConn {
        reader: BufReader::with_capacity(64 * 1024, MasterStream::new(stream, tls, &link.host)?),
        link: Arc::clone(link),
        timeout,
    };
    // PING: an error for missing authentication is fine here, as Redis
    // takes it (AUTH follows).
    let pong = m.command(&[b"PING"])?;
    if pong.starts_with('-') && !pong.starts_with("-NOAUTH") && !pong.starts_with("-NOPERM") {
        return Err(std::io::Error::other(format!(
            "Error reply to PING from master: '{pong}'"
        )));
    }
    log::info!("Master replied to PING, replication can continue...");
    let (user, pass) = (shared.config.masteruser(), shared.config.masterauth());
    if !pass.is_empty() {
        let reply = if user.is_empty() {
            m.command(&[b"AUTH", pass.as_bytes()])?
        } else {
            m.command(&[b"AUTH", user.as_bytes(), pass.as_bytes()])?
        };
        if reply.starts_with('-') {
            return Err(std::io::Error::other(format!(
                "Unable to AUTH to MASTER: {reply}"
            )));
        }
    }
    // The port the master would reach this server on, the TLS one when
    // replication speaks TLS (Redis announces the same).
    let port = match shared.config.tls_port() {
        tls_port if shared.config.tls_replication() && tls_port != 0 => tls_port,
        _ => shared.config.port(),
    }
    .to_string();
    let _ = m.command(&[b"REPLCONF", b"listening-port", port.as_bytes()])?;
    let _ = m.command(&[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"])?;
    // PSYNC with the history this server holds.
    let ids = shared.repl.ids();
    let offset = shared.repl.backlog().end;
    let cached = shared.repl.backlog().history;
    let (replid, next) = if cached {
        (ids.replid.clone(), (offset + 1).to_string())
    } else {
        ("?".to_string(), "-1".to_string())
    };
    // A master failing over hands its role to this master (`failover`).
    let reply = if super::failover::handing_over(shared) {
        m.command(&[b"PSYNC", replid.as_bytes(), next.as_bytes(), b"FAILOVER"])
    } else {
        m.command(&[b"PSYNC", replid.as_bytes(), next.as_bytes()])
    };
    // A master that neither answers nor sends its keepalives while it
    // waits to start the sync (`repl-diskless-sync-delay`).
    let reply = reply.map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            std::io::Error::other("Timeout connecting to the MASTER...")
        }
        _ => e,
    })?;
    super::failover::handover_answered(
        shared,
        reply.starts_with("+FULLRESYNC") || reply.starts_with("+CONTINUE"),
    );
    if let Some(rest) = reply.strip_prefix("+FULLRESYNC ") {
        link.set_state("sync");
        let mut words = rest.split(' ');
        let new_id = words.next().unwrap_or_default().to_string();
        let at: u64 = words.next().and_then(|o| o.parse().ok()).unwrap_or(0);
        log::info!("Full resync from master: {new_id}:{at}");
        let file = read_file(&mut m, link)?;
        log::info!(
            "MASTER <-> REPLICA sync: Loading DB in memory ({} bytes)",
            file.len()
        );
        apply.load(shared, file)?;
        link.stream_db.store(0, Relaxed);
        shared.repl.set_ids(Ids {
            replid: new_id,
            ..Ids::default()
        });
        reset_backlog(shared, at);
        // This server's replicas held the old history: they sync again.
        for r in shared.repl.list() {
            r.kill.store(true, Relaxed);
        }
        shared.repl.wake();
        link.read_offset.store(at, Relaxed);
        log::info!("MASTER <-> REPLICA sync: Finished with success");
    } else if let Some(rest) = reply.strip_prefix("+CONTINUE") {
        let new_id = rest.trim();
        if !new_id.is_empty() && new_id != ids.replid {
            // The master's history moved on (it was promoted): ours
            // becomes the second ID up to here.
            shared.repl.set_ids(Ids {
                replid: new_id.to_string(),
                replid2: ids.replid.clone(),
                second_offset: offset as i64 + 1,
            });
            // This server's replicas learn the new ID by reconnecting
            // (and continue: it is their history's second ID here).
            for r in shared.repl.list() {
                r.kill.store(true, Relaxed);
            }
            shared.repl.wake();
        }
        link.read_offset.store(offset, Relaxed);
        apply.resume_db()?;
        log::info!("Successful partial resynchronization with master.");
    } else {
        return Err(std::io::Error::other(format!(
            "Unexpected reply to PSYNC from master: {reply}"
        )));
    }
    link.set_state("connected");
    link.last_io_ms.store(now_ms(), Relaxed);
    stream_commands(shared, link, apply, m)
}

/// A full sync starts this server's history at the master's offset.
fn reset_backlog(shared: &Shared, at: u64) {
    let mut backlog = shared.repl.backlog();
    backlog.reset_at(at);
}

/// Reads the file of a full sync: `$<len>` and the bytes, or `$EOF:<mark>`
/// and bytes up to the mark.
fn read_file(m: &mut MasterConn, link: &Link) -> std::io::Result<Vec<u8>> {
    let head = m.line()?;
    let Some(size) = head.strip_prefix('$') else {
        return Err(std::io::Error::other(format!(
            "Bad protocol from MASTER, the first byte is not '$': {head}"
        )));
    };
    if let Some(mark) = size.strip_prefix("EOF:") {
        let mark = mark.as_bytes().to_vec();
        log::info!("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk");
        let mut file = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let n = m.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::Error::other("the master closed the connection"));
            }
            file.extend_from_slice(&chunk[..n]);
            link.sync_read.store(file.len() as u64, Relaxed);
            if file.len() >= mark.len() && file.ends_with(&mark) {
                file.truncate(file.len() - mark.len());
                return Ok(file);
            }
        }
    }
    let len: usize = size
        .parse()
        .map_err(|_| std::io::Error::other(format!("bad bulk length {size}")))?;
    log::info!("MASTER <-> REPLICA sync: receiving {len} bytes from master to disk");
    link.sync_total.store(len as u64, Relaxed);
    let mut file = vec![0u8; len];
    let mut at = 0;
    while at < len {
        let n = m.read(&mut file[at..])?;
        if n == 0 {
            return Err(std::io::Error::other("the master closed the connection"));
        }
        at += n;
        link.sync_read.store(at as u64, Relaxed);
    }
    Ok(file)
}

/// The command stream: frames applied through the master connection,
/// offsets kept, ACKs sent, the bytes proxied to this server's replicas.
fn stream_commands(
    shared: &Arc<Shared>,
    link: &Arc<Link>,
    apply: &mut Applier,
    mut m: MasterConn,
) -> std::io::Result<()> {
    let timeout_ms = shared.config.repl_timeout_s().max(1) * 1000;
    m.reader
        .get_ref()
        .socket()
        .set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut last_ack = Instant::now() - ACK_EVERY;
    loop {
        if link.stop.load(Relaxed) {
            return Ok(());
        }
        if apply.closed.load(Relaxed) {
            return Err(std::io::Error::other("the master client was closed"));
        }
        if last_ack.elapsed() >= ACK_EVERY || shared.repl.ack_requested.swap(false, Relaxed) {
            send_ack(m.reader.get_mut(), shared)?;
            last_ack = Instant::now();
        }
        // What the BufReader holds first, then the socket.
        let n = {
            let held = m.reader.buffer().len();
            if held > 0 {
                buf.extend_from_slice(m.reader.buffer());
                m.reader.consume(held);
                held
            } else {
                match m.reader.get_mut().read(&mut chunk) {
                    Ok(0) => return Err(std::io::Error::other("the master closed the connection")),
                    Ok(n) => {
                        buf.extend_from_slice(&chunk[..n]);
                        n
                    }
                    Err(e)
                        if e.kind() == std::io::ErrorKind::WouldBlock
                            || e.kind() == std::io::ErrorKind::TimedOut =>
                    {
                        0
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
                    Err(e) => return Err(e),
                }
            }
        };
        if n == 0 {
            if now_ms().saturating_sub(link.last_io_ms.load(Relaxed)) > timeout_ms {
                return Err(std::io::Error::other(
                    "MASTER timeout: no data nor PING received",
                ));
            }
            continue;
        }
        link.last_io_ms.store(now_ms(), Relaxed);
        // Whole commands only go on: a link lost mid-command must leave
        // nothing half written on the master client.
        let mut at = 0;
        while let Some(len) = frame_len(&buf[at..]) {
            at += len;
        }
        if at > 0 {
            link.read_offset.fetch_add(at as u64, Relaxed);
            apply.conn.write_all(&buf[..at])?;
            buf.drain(..at);
        }
        if shared.repl.ack_requested.swap(false, Relaxed) {
            send_ack(m.reader.get_mut(), shared)?;
            last_ack = Instant::now();
        }
    }
}

/// `REPLCONF ACK <offset>`: what this replica applied, up to its last
/// command outside a transaction (its backlog's end).
fn send_ack(writer: &mut impl Write, shared: &Shared) -> std::io::Result<()> {
    let offset = shared.repl.backlog().end.to_string();
    let mut out = Vec::new();
    crate::exec::feed::write_command(
        &mut out,
        &[
            bytes::Bytes::from_static(b"REPLCONF"),
            bytes::Bytes::from_static(b"ACK"),
            bytes::Bytes::from(offset),
        ],
    );
    writer.write_all(&out)?;
    writer.flush()
}

/// The length of the whole command at the start of `buf`; None until it
/// is complete. The master sends multibulks (and, between them, nothing
/// else Redis would count: a stray newline goes on as one byte).
fn frame_len(buf: &[u8]) -> Option<usize> {
    match buf.first()? {
        b'*' => {}
        // An inline command: up to its newline.
        _ => return buf.iter().position(|&b| b == b'\n').map(|end| end + 1),
    }
    let (count, mut at) = number_line(buf, 1)?;
    for _ in 0..count.max(0) {
        if buf.get(at) != Some(&b'$') {
            return None;
        }
        let (len, start) = number_line(buf, at + 1)?;
        let end = start + len.max(0) as usize;
        if buf.len() < end + 2 {
            return None;
        }
        at = end + 2;
    }
    Some(at)
}

/// The decimal number from `at` to the next CRLF, and where the next line starts.
fn number_line(buf: &[u8], at: usize) -> Option<(i64, usize)> {
    let rel = buf.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
    let n = std::str::from_utf8(&buf[at..at + rel]).ok()?.parse().ok()?;
    Some((n, at + rel + 2))
}

/// The master client: a connection to shard 0 made by this thread, and
/// the thread that drops its replies.
struct Applier {
    conn: TcpStream,
    /// The database the applied stream has selected (the master client
    /// keeps it, `replication::applied`): a master client made for a
    /// `+CONTINUE` starts there, as Redis's cached master keeps its db.
    db: Arc<std::sync::atomic::AtomicUsize>,
    /// The shard closed the master client (CLIENT KILL, or after
    /// [`Applier::close`] once it ran everything it was given).
    closed: Arc<std::sync::atomic::AtomicBool>,
}

impl Applier {
    fn open(shared: &Arc<Shared>, link: &Link) -> Option<Applier> {
        let made = (|| -> std::io::Result<(TcpStream, TcpStream)> {
            let listener = TcpListener::bind("127.0.0.1:0")?;
            let ours = TcpStream::connect(listener.local_addr()?)?;
            let (theirs, _) = listener.accept()?;
            Ok((ours, theirs))
        })();
        let (ours, theirs) = match made {
            Ok(pair) => pair,
            Err(e) => {
                log::warn!("cannot make the master client's connection: {e}");
                return None;
            }
        };
        let _ = ours.set_nodelay(true);
        let peers = shared.peers();
        // Shown (and killed by CLIENT KILL) as the master's address.
        let _ = peers[0].inbox.send(vec![Msg::Adopt {
            stream: theirs,
            master: true,
            addr: format!("{}:{}", link.host, link.port),
        }]);
        let _ = peers[0].waker.wake();
        let mut drain = ours.try_clone().ok()?;
        let closed = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = Arc::clone(&closed);
        let _ = std::thread::Builder::new()
            .name("ember-master-replies".into())
            .spawn(move || {
                let mut sink = vec![0u8; 64 * 1024];
                while matches!(drain.read(&mut sink), Ok(n) if n > 0) {}
                seen.store(true, Relaxed);
            });
        Some(Applier {
            conn: ours,
            db: Arc::clone(&link.stream_db),
            closed,
        })
    }

    /// A master client made for a `+CONTINUE` selects the stream's database.
    fn resume_db(&mut self) -> std::io::Result<()> {
        let db = self.db.load(Relaxed).to_string();
        let mut out = Vec::new();
        crate::exec::feed::write_command(
            &mut out,
            &[
                bytes::Bytes::from_static(b"REPLCONF"),
                bytes::Bytes::from_static(b"ember-select"),
                bytes::Bytes::from(db),
            ],
        );
        self.conn.write_all(&out)
    }

    /// A full sync's file: loaded into every shard in one transaction
    /// (flushing them first), before the stream that follows it.
    fn load(&mut self, shared: &Shared, file: Vec<u8>) -> std::io::Result<()> {
        shared
            .repl
            .pending_file
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(file);
        self.conn
            .write_all(b"*3\r\n$8\r\nREPLCONF\r\n$10\r\nember-load\r\n$1\r\n1\r\n")
    }

    /// The link ended: a transaction it was inside goes (its first half
    /// never counted in the offset; outside one, the DISCARD only gets an
    /// error nobody reads); then the master client ends, once the shard
    /// ran what it was given, so nothing of this link runs after the next.
    fn close(mut self) {
        let _ = self.conn.write_all(b"*1\r\n$7\r\nDISCARD\r\n");
        let _ = self.conn.shutdown(std::net::Shutdown::Write);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.closed.load(Relaxed) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.conn.shutdown(std::net::Shutdown::Both);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_whole_commands() {
        let buf = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET";
        assert_eq!(frame_len(buf), Some(23));
        assert_eq!(frame_len(&buf[23..]), Some(14));
        assert_eq!(frame_len(&buf[37..]), None);
        assert_eq!(frame_len(b"\n*1"), Some(1));
        assert_eq!(frame_len(b"PING\r\n"), Some(6));
    }
}
