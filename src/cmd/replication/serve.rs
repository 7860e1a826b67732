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

use crate::cmd::meta::CommandFlags;
use crate::config::ObufClass;
use crate::exec::feed::SinkId;
use crate::exec::handoff::{Detached, Half};
use crate::exec::repl::{ReplicaInfo, StartSlot};
use crate::exec::sync_group::SyncGroup;
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
        /// The group sharing this snapshot (`repl-diskless-sync-delay`),
        /// which this replica leads.
        group: Option<Arc<SyncGroup>>,
    },
    /// A replica that joined another's group: its offset and file.
    Join {
        group: Arc<SyncGroup>,
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
                stop_useless_save(&shared, &info);
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
            group,
        } => {
            // Followers of the group get its file even if this replica
            // leaves on the way (None then: they resync).
            let mut publisher = Publisher {
                shared: Arc::clone(shared),
                group: group.clone(),
            };
            if let Some(group) = &group {
                shared.repl.pending_sync.open(group);
                if diskless {
                    delay(shared, &mut stream, info, group)?;
                }
            }
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
            shared.repl.sync_save.store(false, Relaxed);
            publisher.publish(&bytes);
            transfer(&mut stream, info, &bytes, diskless)?;
            offset
        }
        Start::Join { group } => {
            // The group's first replica ends the wait for all.
            while !group.is_closed() {
                keepalive(shared, &mut stream, info)?;
            }
            let offset = group
                .start
                .wait(Duration::from_secs(30))
                .ok_or_else(|| std::io::Error::other("the snapshot did not start"))?;
            info.sent.store(offset, Relaxed);
            let line = format!("+FULLRESYNC {} {offset}\r\n", shared.repl.replid());
            stream.write_all(line.as_bytes())?;
            let diskless = group.diskless;
            let bytes = loop {
                match group.file(Duration::from_secs(1)) {
                    Ok(Some(bytes)) => break bytes,
                    Ok(None) => return Err(std::io::Error::other("the background save failed")),
                    Err(()) => keepalive(shared, &mut stream, info)?,
                }
            };
            transfer(&mut stream, info, &bytes, diskless)?;
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

/// The file, then (diskless) the wait for the replica's first ACK.
fn transfer(
    stream: &mut impl Write,
    info: &ReplicaInfo,
    bytes: &[u8],
    diskless: bool,
) -> std::io::Result<()> {
    info.set_state("send_bulk");
    info.ack_ms.store(0, Relaxed);
    send_file(stream, bytes, diskless)?;
    if diskless {
        // The replica finds the file's end by the mark in the last
        // bytes it read: nothing may follow until it loaded the
        // file and says so with its first ACK (Redis waits too).
        while info.ack_ms.load(Relaxed) == 0 {
            if info.kill.load(Relaxed) {
                return Err(std::io::Error::other("the replica left"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    log::info!(
        "Synchronization with replica {}:{} succeeded",
        info.ip,
        info.port
    );
    Ok(())
}

/// The group's `repl-diskless-sync-delay`, counted from its first
/// replica, or until `repl-diskless-sync-max-replicas` replicas wait;
/// then nobody joins it any more.
fn delay(
    shared: &Shared,
    stream: &mut impl Write,
    info: &ReplicaInfo,
    group: &Arc<SyncGroup>,
) -> std::io::Result<()> {
    log::info!("Delay next BGSAVE for diskless SYNC");
    loop {
        let waited = super::super::save::now_ms().saturating_sub(group.since_ms);
        let max = shared.config.repl_diskless_sync_max_replicas();
        let full = max > 0 && group.members.load(Relaxed) as u64 >= max;
        if full || waited >= shared.config.repl_diskless_sync_delay_s() * 1000 {
            shared.repl.pending_sync.close(group);
            log::info!(
                "Diskless sync delay over: {} replicas share the snapshot",
                group.members.load(Relaxed)
            );
            return Ok(());
        }
        if let Err(e) = keepalive(shared, stream, info) {
            shared.repl.pending_sync.close(group);
            return Err(e);
        }
    }
}

/// A second of waiting before the sync starts: a newline to the replica
/// (which takes it as a keepalive), unless a shard is blocked (DEBUG
/// SLEEP, a long script), when Redis's one thread would be silent too.
fn keepalive(shared: &Shared, stream: &mut impl Write, info: &ReplicaInfo) -> std::io::Result<()> {
    for _ in 0..10 {
        if info.kill.load(Relaxed) {
            return Err(std::io::Error::other("the replica left"));
        }
        std::thread::sleep(IDLE);
    }
    if shared
        .repl
        .shards_alive(super::super::save::now_ms(), ALIVE_MS)
    {
        stream.write_all(b"\n")?;
    }
    Ok(())
}

/// A shard whose cron has not run for this long counts as blocked.
const ALIVE_MS: u64 = 1000;

/// Publishes the group's file for its followers and closes it to new
/// ones, or (dropped without) tells them there is none.
struct Publisher {
    shared: Arc<Shared>,
    group: Option<Arc<SyncGroup>>,
}

impl Publisher {
    fn publish(&mut self, bytes: &Arc<Vec<u8>>) {
        if let Some(group) = self.group.take() {
            self.shared.repl.pending_sync.close(&group);
            group.publish(Some(Arc::clone(bytes)));
        }
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        if let Some(group) = self.group.take() {
            self.shared.repl.pending_sync.close(&group);
            group.publish(None);
        }
    }
}

/// A replica that waited for the background save left: when no other
/// replica waits for it and no `save` rule wants the file, the save
/// stops, as Redis kills a child whose file nobody needs.
fn stop_useless_save(shared: &Shared, left: &ReplicaInfo) {
    let repl = &shared.repl;
    let waiting = |r: &ReplicaInfo| r.state() == "wait_bgsave";
    if !waiting(left)
        || !repl.sync_save.load(Relaxed)
        || !shared.persist.bgsave_in_progress.load(Relaxed)
        || !shared.config.save_text().is_empty()
        || repl.list().iter().any(|r| waiting(r))
    {
        return;
    }
    repl.sync_save.store(false, Relaxed);
    log::warn!("Background saving for the replicas is not needed any more: stopping it");
    // As when the save process dies: each shard drops its snapshot at its
    // next slice, and the save ends without a file and without an error.
    shared.persist.child_lost.store(true, Relaxed);
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
                let spec = crate::cmd::lookup(&argv[0]);
                // A command that would touch the keyspace is refused first,
                // and Redis logs the error it would send.
                let keyspace =
                    CommandFlags::READONLY | CommandFlags::WRITE | CommandFlags::MAY_REPLICATE;
                if spec.is_some_and(|s| s.flags.intersects(keyspace)) {
                    log::warn!("== CRITICAL == This master is sending an error to its replica: 'Replica can't interact with the keyspace' after processing the command '{name}'");
                }
                let name = match (spec, argv.get(1)) {
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
