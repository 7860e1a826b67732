//! The thread that serves one replica: the sync's preamble and file, then
//! the backlog from the replica's offset, PINGs every
//! `repl-ping-replica-period`, and a reader thread for its
//! `REPLCONF ACK`s. It waits on the backlog (`exec::repl`), never the
//! other way round: the shards append and go on.

use std::io::{Read, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;

use crate::config::ObufClass;
use crate::exec::feed::SinkId;
use crate::exec::handoff::{Detached, Half};
use crate::exec::repl::{ReplicaInfo, StartSlot};
use crate::exec::Shared;
use crate::persist::Part;
use crate::resp::{ParseLimits, Parser};

/// Where the file of a full sync comes from.
pub enum Rdb {
    /// The background save started for it.
    Wait(Receiver<Option<Arc<Vec<u8>>>>),
    /// The shards' parts, serialized at the instant (a BGSAVE of its own
    /// was running): this thread builds the file.
    Parts(Vec<Part>),
}

pub enum Start {
    Full {
        slot: Arc<StartSlot>,
        rdb: Rdb,
        /// The mark to detach once it gave the offset.
        mark: Option<SinkId>,
        /// PSYNC (else SYNC: no `+FULLRESYNC` line).
        psync: bool,
        diskless: bool,
    },
    Continue {
        psync2: bool,
    },
}

/// The most stream written in one go.
const CHUNK: usize = 64 * 1024;
/// How long the writer sleeps when nothing is new, to look at its kill
/// flag, its output limit and the PING period.
const IDLE: Duration = Duration::from_millis(100);

pub fn spawn(shared: Arc<Shared>, detached: Detached, info: Arc<ReplicaInfo>, start: Start) {
    let thread = {
        let (shared, info) = (Arc::clone(&shared), Arc::clone(&info));
        std::thread::Builder::new()
            .name("ember-replica".into())
            .spawn(move || {
                let addr = format!("{}:{}", info.ip, info.port);
                // Closed at once when its thread ends (the ACK reader holds
                // a clone), so a replica dropped for an ID change
                // reconnects without waiting for a timeout.
                let closer = detached.stream.try_clone();
                *info.closer.lock().unwrap_or_else(|e| e.into_inner()) =
                    detached.stream.try_clone().ok();
                match serve(&shared, detached, &info, start) {
                    Ok(()) => log::info!("Connection with replica {addr} lost."),
                    Err(e) => log::warn!("Connection with replica {addr} lost: {e}"),
                }
                info.kill.store(true, Relaxed);
                if let Ok(closer) = closer {
                    let _ = closer.shutdown(std::net::Shutdown::Both);
                }
                *info.closer.lock().unwrap_or_else(|e| e.into_inner()) = None;
                shared.repl.remove(&info);
            })
    };
    if let Err(e) = thread {
        log::warn!("cannot start a replica's thread: {e}");
        shared.repl.remove(&info);
    }
}

fn serve(
    shared: &Arc<Shared>,
    detached: Detached,
    info: &Arc<ReplicaInfo>,
    start: Start,
) -> std::io::Result<()> {
    detached.stream.set_nonblocking(false)?;
    let _ = detached.stream.set_nodelay(true);
    let timeout = Duration::from_secs(shared.config.repl_timeout_s().max(1));
    detached.stream.set_write_timeout(Some(timeout))?;
    // A replica of `tls-port` keeps its TLS session: both threads write
    // and read through it (`exec::handoff`).
    let (mut stream, reader, unread) = detached.split()?;
    {
        let (shared, info) = (Arc::clone(shared), Arc::clone(info));
        std::thread::Builder::new()
            .name("ember-replica-acks".into())
            .spawn(move || read_acks(&shared, reader, unread, &info))?;
    }
    let mut sent = match start {
        Start::Continue { psync2 } => {
            let line = if psync2 {
                format!("+CONTINUE {}\r\n", shared.repl.replid())
            } else {
                "+CONTINUE\r\n".to_string()
            };
            stream.write_all(line.as_bytes())?;
            log::info!(
                "Partial resynchronization request from {} accepted.",
                info.ip
            );
            info.sent.load(Relaxed)
        }
        Start::Full {
            slot,
            rdb,
            mark,
            psync,
            diskless,
        } => {
            let offset = slot
                .wait(Duration::from_secs(30))
                .ok_or_else(|| std::io::Error::other("the snapshot did not start"))?;
            if let Some(id) = mark {
                shared.feed.detach(id);
            }
            info.sent.store(offset, Relaxed);
            if psync {
                let line = format!("+FULLRESYNC {} {offset}\r\n", shared.repl.replid());
                stream.write_all(line.as_bytes())?;
            }
            let bytes = match rdb {
                Rdb::Parts(parts) => Arc::new(super::super::save::file_bytes(shared, &parts).0),
                Rdb::Wait(rx) => wait_file(&mut stream, &rx, info)?,
            };
            info.set_state("send_bulk");
            info.ack_ms.store(0, Relaxed);
            send_file(&mut stream, &bytes, diskless)?;
            if diskless {
                // The replica finds the file's end by the mark in the last
                // bytes it read: nothing may follow until it loaded the
                // file and says so with its first ACK (Redis waits too).
                while info.ack_ms.load(Relaxed) == 0 {
                    if info.kill.load(Relaxed) {
                        return Ok(());
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            log::info!(
                "Synchronization with replica {}:{} succeeded",
                info.ip,
                info.port
            );
            offset
        }
    };
    info.set_state("online");
    let mut soft_since: Option<Instant> = None;
    loop {
        if info.kill.load(Relaxed) {
            return Ok(());
        }
        ping_if_due(shared);
        shared.repl.wait_past(sent, IDLE);
        let (chunk, end) = {
            let backlog = shared.repl.backlog();
            (backlog.after(sent, CHUNK), backlog.end)
        };
        let Some(chunk) = chunk else {
            return Err(std::io::Error::other("fell behind the backlog"));
        };
        let limit = shared.config.obuf(ObufClass::Replica);
        let pending = end - sent;
        if limit.hard > 0 && pending >= limit.hard {
            log::warn!("Client id={} addr={}:{} scheduled to be closed ASAP for overcoming of output buffer limits.", info.id, info.ip, info.port);
            return Ok(());
        }
        if limit.soft > 0 && pending >= limit.soft {
            let since = *soft_since.get_or_insert_with(Instant::now);
            if since.elapsed().as_secs() > limit.soft_seconds {
                log::warn!("Client id={} addr={}:{} scheduled to be closed ASAP for overcoming of output buffer limits.", info.id, info.ip, info.port);
                return Ok(());
            }
        } else {
            soft_since = None;
        }
        if chunk.is_empty() {
            continue;
        }
        // Killed while it waited (this server's ID changed): nothing of
        // the stream after that may reach it.
        if info.kill.load(Relaxed) {
            return Ok(());
        }
        // The chunk counts in the replication buffers while it is written
        // (a write to a replica that reads nothing blocks with it).
        let in_flight = &shared.repl.in_flight;
        in_flight.fetch_add(chunk.len() as u64, Relaxed);
        let written = stream.write_all(&chunk);
        in_flight.fetch_sub(chunk.len() as u64, Relaxed);
        written?;
        sent += chunk.len() as u64;
        info.sent.store(sent, Relaxed);
    }
}

/// Appends a PING to the stream when the period has passed since the
/// last (one for all replicas: the backlog is one stream).
fn ping_if_due(shared: &Shared) {
    let period_ms = shared.config.repl_ping_replica_period_s() * 1000;
    let now = super::super::save::now_ms();
    let mut backlog = shared.repl.backlog();
    backlog.size = shared.config.repl_backlog_size() as usize;
    // A replica passes its master's PINGs on and makes none of its own;
    // a master failing over stops its offset for the target to reach it.
    if shared.repl.is_replica() || shared.pause.failover() {
        return;
    }
    if now.saturating_sub(backlog.last_ping_ms) >= period_ms {
        backlog.last_ping_ms = now;
        backlog.append(b"*1\r\n$4\r\nPING\r\n");
        drop(backlog);
        shared.repl.wake();
    }
}

/// Waits for the background save's file, sending a newline each second
/// meanwhile (the replica takes them as keepalives before the file).
fn wait_file(
    stream: &mut impl Write,
    rx: &Receiver<Option<Arc<Vec<u8>>>>,
    info: &ReplicaInfo,
) -> std::io::Result<Arc<Vec<u8>>> {
    loop {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(Some(bytes)) => return Ok(bytes),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                return Err(std::io::Error::other("the background save failed"))
            }
            Err(RecvTimeoutError::Timeout) => {
                if info.kill.load(Relaxed) {
                    return Err(std::io::Error::other("the replica left"));
                }
                stream.write_all(b"\n")?;
            }
        }
    }
}

/// The file as a bulk: `$<len>` then the bytes, or (diskless) `$EOF:` with
/// a 40-byte mark, the bytes and the mark again.
fn send_file(stream: &mut impl Write, bytes: &[u8], diskless: bool) -> std::io::Result<()> {
    if diskless {
        let mark = crate::exec::shared::new_replid();
        stream.write_all(format!("$EOF:{mark}\r\n").as_bytes())?;
        stream.write_all(bytes)?;
        stream.write_all(mark.as_bytes())
    } else {
        stream.write_all(format!("${}\r\n", bytes.len()).as_bytes())?;
        stream.write_all(bytes)
    }
}

/// Reads what the replica sends: `REPLCONF ACK <offset>` (the rest is
/// ignored, as Redis ignores a replica's other commands). Ends the
/// replica when its side closes.
fn read_acks(shared: &Shared, mut stream: Half, unread: Vec<u8>, info: &ReplicaInfo) {
    let mut parser = Parser::new(ParseLimits::default());
    let mut buf = BytesMut::from(&unread[..]);
    let mut scratch = vec![0u8; 16 * 1024];
    let _ = stream
        .socket()
        .set_read_timeout(Some(Duration::from_millis(500)));
    let timeout_ms = shared.config.repl_timeout_s().max(1) * 1000;
    loop {
        while let Ok(Some(argv)) = parser.next_command(&mut buf) {
            let replconf = argv[0].eq_ignore_ascii_case(b"replconf");
            if !replconf {
                // A replica's link carries no replies: Redis drops a
                // replica whose command would get one.
                let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
                let name = match (crate::cmd::lookup(&argv[0]), argv.get(1)) {
                    (Some(spec), Some(sub)) if spec.container => {
                        format!(
                            "{name}|{}",
                            String::from_utf8_lossy(sub).to_ascii_lowercase()
                        )
                    }
                    _ => name,
                };
                log::warn!(
                    "Replica generated a reply to command '{name}', disconnecting it: id={} addr={}:{}",
                    info.id,
                    info.ip,
                    info.port
                );
                info.kill.store(true, Relaxed);
                shared.repl.wake();
                let _ = stream.socket().shutdown(std::net::Shutdown::Both);
                return;
            }
            let is_ack = argv.len() >= 3 && argv[1].eq_ignore_ascii_case(b"ack");
            if is_ack {
                if let Some(off) = std::str::from_utf8(&argv[2])
                    .ok()
                    .and_then(|o| o.parse::<u64>().ok())
                {
                    info.ack.store(off, Relaxed);
                }
                info.ack_ms.store(super::super::save::now_ms(), Relaxed);
            }
        }
        if info.kill.load(Relaxed) {
            let _ = stream.socket().shutdown(std::net::Shutdown::Both);
            return;
        }
        match stream.read(&mut scratch) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&scratch[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                let online = info.state() == "online";
                let quiet = super::super::save::now_ms().saturating_sub(info.ack_ms.load(Relaxed));
                if online && quiet > timeout_ms {
                    log::warn!("Disconnecting timedout replica: {}:{}", info.ip, info.port);
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    info.kill.store(true, Relaxed);
    let _ = stream.socket().shutdown(std::net::Shutdown::Both);
    shared.repl.wake();
}
