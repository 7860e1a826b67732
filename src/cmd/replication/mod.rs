//! Replication, master side: REPLCONF, PSYNC and SYNC, as redis-server
//! 7.0 answers them, so a redis-server (or an ember) replicates from ember.
//!
//! # A replica's connection leaves the shard
//!
//! A replica is served by a thread of its own ([`serve`]), not by its
//! shard's loop: PSYNC answers with `Action::Handoff`, and once the
//! replies before it are written the shard hands the socket over. The
//! shards only append to the backlog (`exec::repl`), so however slowly a
//! replica reads, no shard waits for it; a replica whose unsent stream
//! passes `client-output-buffer-limit replica` is dropped by its thread.
//!
//! # A full sync
//!
//! 1. PSYNC takes a hold on the feed and launches one job holding every
//!    shard whole (the snapshot's instant, as BGSAVE's): each shard starts
//!    its sliced, fork-less snapshot (or, while a BGSAVE of its own runs,
//!    serializes at once), and shard 0's op asks the feed to attach the
//!    backlog (or a mark on it) when the job commits.
//! 2. The commit attaches it under the feed's lock: the backlog's end then
//!    is the offset the snapshot stands for, the `+FULLRESYNC` offset.
//! 3. The thread sends `+FULLRESYNC <replid> <offset>`, the file once the
//!    shards wrote it (`$EOF:<mark>` ... `<mark>` with `repl-diskless-sync`
//!    and a replica that can read it, else `$<len>`), then the backlog from
//!    the offset on. A partial resync (`+CONTINUE`) skips 1 to 3 and
//!    sends the backlog from the replica's offset.

pub mod failover;
pub mod info;
pub mod link;
mod master_stream;
pub mod serve;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use bytes::Bytes;

use super::args::err;
use super::meta::CommandFlags;
use super::{CommandSpec, Session, ShardData};
use crate::exec::repl::{BacklogSink, ReplicaInfo, StartMark, StartSlot};
use crate::exec::sync_group::SyncGroup;
use crate::exec::{Action, ClientsOp, Job, Op, Out};
use crate::persist::snapshot;
use crate::resp::Frame;

/// What a replica said in REPLCONF before its PSYNC.
#[derive(Debug, Clone, Default)]
pub struct Hello {
    /// `listening-port`.
    pub port: u16,
    /// `ip-address`.
    pub ip: Option<String>,
    /// `capa eof`: it reads the diskless `$EOF:` form.
    pub eof: bool,
    /// `capa psync2`: it understands `+CONTINUE <replid>`.
    pub psync2: bool,
}

/// REPLCONF option value [option value ...].
pub fn replconf(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    if argv.len().is_multiple_of(2) {
        return err::syntax().into();
    }
    for pair in argv[1..].chunks(2) {
        let (option, value) = (&pair[0], &pair[1]);
        let option = String::from_utf8_lossy(option).to_ascii_lowercase();
        match option.as_str() {
            "listening-port" => match super::args::int_arg(value) {
                Ok(port) if (0..=65535).contains(&port) => session.hello.port = port as u16,
                Ok(_) => return err::frame("ERR value is out of range").into(),
                Err(e) => return e.into(),
            },
            "ip-address" => {
                session.hello.ip = Some(String::from_utf8_lossy(value).into_owned());
            }
            "capa" => {
                if value.eq_ignore_ascii_case(b"eof") {
                    session.hello.eof = true;
                } else if value.eq_ignore_ascii_case(b"psync2") {
                    session.hello.psync2 = true;
                }
            }
            // The master asks this replica for its offset: the link
            // thread sends it, now that what came before is applied.
            "getack" if session.master => {
                shard.shared.repl.ack_requested.store(true, Relaxed);
                return Frame::Sequence(Vec::new()).into();
            }
            // A new master client after a reconnect takes up the stream's
            // database.
            "ember-select" if session.master => {
                if let Ok(db) = super::args::int_arg(value) {
                    if (0..shard.shared.config.databases() as i64).contains(&db) {
                        session.db = db as usize;
                    }
                }
                return Frame::OK.into();
            }
            // A full sync's file, which the link thread read, goes into
            // the shards before the stream that follows it.
            "ember-load" if session.master => {
                let file = shard
                    .shared
                    .repl
                    .pending_file
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take();
                return match file {
                    Some(file) => super::save::load_replica_file(&shard.shared, file),
                    None => Frame::OK.into(),
                };
            }
            // From a replica these arrive on its own thread (`serve`);
            // from anyone else Redis answers nothing.
            "ack" | "getack" => return Frame::Sequence(Vec::new()).into(),
            "rdb-only" | "rdb-filter-only" => {}
            _ => {
                return Frame::Error(format!(
                    "ERR Unrecognized REPLCONF option: {}",
                    String::from_utf8_lossy(&pair[0])
                ))
                .into()
            }
        }
    }
    Frame::OK.into()
}

/// SYNC: a full sync for replicas older than PSYNC (no `+FULLRESYNC`
/// line, the file in the `$<len>` form).
pub fn sync(shard: &mut ShardData, session: &mut Session, _: &[Bytes]) -> Action {
    if let Some(refusal) = failover::sync_refusal(&shard.shared) {
        return refusal.into();
    }
    full_sync(shard, session, false)
}

/// PSYNC replid offset [FAILOVER].
pub fn psync(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    if let Some(refusal) = failover::psync_refusal(shard, session, argv) {
        return refusal.into();
    }
    let shared = Arc::clone(&shard.shared);
    // The replica's next byte is `offset`; the stream was sent up to
    // offset - 1.
    let wanted = match super::args::int_arg(&argv[2]) {
        Ok(o) => Some(o),
        Err(e) => {
            log::warn!(
                "Replica {} asks for synchronization but with a wrong offset",
                session.addr
            );
            return e.into();
        }
    };
    let ids = shared.repl.ids();
    // Our own history, or (PSYNC2) the one before our promotion, up to
    // where it ended.
    let known = argv[1].as_ref() == ids.replid.as_bytes()
        || (argv[1].as_ref() == ids.replid2.as_bytes()
            && wanted.is_some_and(|o| o <= ids.second_offset));
    let waiting_for_master =
        shared.repl.is_replica() && !shared.repl.current_link().is_some_and(|l| l.is_up());
    if waiting_for_master {
        return err::frame("NOMASTERLINK Can't SYNC while not connected with my master").into();
    }
    let asked = String::from_utf8_lossy(&argv[1]);
    let name = format!("{}:{}", replica_ip(session), session.hello.port);
    if known {
        if let Some(next) = wanted.filter(|&o| o > 0) {
            let from = next as u64 - 1;
            let ok = {
                let mut backlog = shared.repl.backlog();
                backlog.resize(shared.config.repl_backlog_size() as usize);
                backlog.can_continue(from)
            };
            if !ok {
                log::info!("Unable to partial resync with replica {name} for lack of backlog (Replica request was: {next}).");
            }
            if ok {
                shared.repl.sync_partial_ok.fetch_add(1, Relaxed);
                let info = new_replica(shard, session, from);
                let psync2 = session.hello.psync2;
                return Action::Handoff(Box::new(move |detached| {
                    serve::spawn(shared, detached, info, serve::Start::Continue { psync2 })
                }));
            }
        }
        shared.repl.sync_partial_err.fetch_add(1, Relaxed);
    } else if argv[1].as_ref() != b"?" {
        if asked != ids.replid && asked != ids.replid2 {
            log::info!("Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '{asked}', my replication IDs are '{}' and '{}')", ids.replid, ids.replid2);
        } else {
            log::info!("Partial resynchronization not accepted: Requested offset for second ID was {}, but I can reply up to {}", wanted.unwrap_or(0), ids.second_offset);
        }
        shared.repl.sync_partial_err.fetch_add(1, Relaxed);
    } else {
        log::info!("Full resync requested by replica {name}");
    }
    full_sync(shard, session, true)
}

/// The replica's entry in the table INFO reads, holding the backlog from
/// `sent` on (0 at a full sync: everything, until its offset is known).
fn new_replica(shard: &ShardData, session: &Session, sent: u64) -> Arc<ReplicaInfo> {
    let ip = replica_ip(session);
    let info = Arc::new(ReplicaInfo {
        id: session.id,
        ip,
        port: session.hello.port,
        state: std::sync::Mutex::new("wait_bgsave"),
        sent: Arc::new(AtomicU64::new(sent)),
        ack: AtomicU64::new(0),
        ack_ms: AtomicU64::new(super::save::now_ms()),
        kill: AtomicBool::new(false),
        closer: std::sync::Mutex::new(None),
    });
    let repl = &shard.shared.repl;
    repl.backlog().holds.push(Arc::clone(&info.sent));
    repl.add(Arc::clone(&info));
    info
}

/// The address a replica is known by: its `REPLCONF ip-address`, else
/// its connection's.
fn replica_ip(session: &Session) -> String {
    session.hello.ip.clone().unwrap_or_else(|| {
        session
            .addr
            .rsplit_once(':')
            .map_or(session.addr.clone(), |(ip, _)| {
                ip.trim_matches(['[', ']']).to_string()
            })
    })
}

fn full_sync(shard: &mut ShardData, session: &mut Session, psync: bool) -> Action {
    let shared = Arc::clone(&shard.shared);
    shared
        .repl
        .sync_full
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let info = new_replica(shard, session, 0);
    let n = shared.nshards;
    let now = super::save::now_ms();
    let diskless = shared.config.repl_diskless_sync() && session.hello.eof && psync;
    // A full sync waiting out its delay, or whose save to disk runs,
    // takes this replica along (`exec::sync_group`).
    if psync {
        if let Some(group) = shared.repl.pending_sync.join(diskless) {
            log::info!("Waiting for the full sync in progress to serve this replica too");
            return Action::Handoff(Box::new(move |detached| {
                serve::spawn(shared, detached, info, serve::Start::Join { group })
            }));
        }
    }
    // The backlog joins the feed at the first full sync; later ones mark
    // their instant on it.
    let first = {
        let mut backlog = shared.repl.backlog();
        backlog.size = shared.config.repl_backlog_size() as usize;
        let first = backlog.sink.is_none();
        if first {
            backlog.sink = Some(0); // claimed; the id comes at attach
        }
        if backlog.last_ping_ms == 0 {
            // The first PING a period after the first replica, as Redis's cron.
            backlog.last_ping_ms = now;
        }
        first
    };
    let background = shared.persist.try_begin_bgsave(now);
    let (tx, rx) = std::sync::mpsc::channel();
    if background {
        log::info!(
            "Starting BGSAVE for SYNC with target: {}",
            if diskless { "replicas sockets" } else { "disk" }
        );
        // As a BGSAVE's: the save process INFO and the tests see, and
        // `rdb-key-save-delay` as it was at the start.
        if let Some(pid) = shared
            .persist
            .start_child(shared.config.rdb_key_save_delay_us())
        {
            log::info!("Background RDB transfer started by pid {pid}");
        }
        shared
            .repl
            .diskless_save
            .store(diskless, std::sync::atomic::Ordering::Relaxed);
        shared.repl.sync_save.store(true, Relaxed);
        shared
            .repl
            .rdb_waiters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(tx);
    }
    let slot = Arc::new(StartSlot::default());
    // A diskless sync waits `repl-diskless-sync-delay` for others to
    // share its snapshot; one to disk shares its background save.
    let delayed = diskless && shared.config.repl_diskless_sync_delay_s() > 0;
    let group = (psync && (delayed || (background && !diskless)))
        .then(|| Arc::new(SyncGroup::new(Arc::clone(&slot), now, diskless)));
    let hold = shared.feed.hold();
    let compress = shared.config.rdbcompression();
    let mark: Arc<std::sync::Mutex<Option<crate::exec::feed::SinkId>>> = Default::default();
    let ops = (0..n)
        .map(|s| {
            let (slot, shared, mark) = (Arc::clone(&slot), Arc::clone(&shared), Arc::clone(&mark));
            let op = move |ctx: &mut super::Ctx| {
                if s == 0 {
                    attach_at_commit(ctx, &shared, first, slot, &mark);
                    mark_snapshot(&shared);
                }
                let now = ctx.shard.now_ms;
                if background {
                    ctx.shard.store.begin_snapshot(now, compress);
                    Out::Count(0)
                } else {
                    Out::Snapshot(Box::new(snapshot::serialize(
                        &ctx.shard.store,
                        now,
                        compress,
                    )))
                }
            };
            (s, Op::store(0, op))
        })
        .collect();
    let job = Job::new(ops, move |outs| {
        drop(hold);
        let rdb = if background {
            serve::Rdb::Wait(rx)
        } else {
            serve::Rdb::Parts(
                outs.into_iter()
                    .filter_map(|o| match o {
                        Out::Snapshot(p) => Some(*p),
                        _ => None,
                    })
                    .collect(),
            )
        };
        let mark = mark.lock().unwrap_or_else(|e| e.into_inner()).take();
        Action::Handoff(Box::new(move |detached| {
            serve::spawn(
                shared,
                detached,
                info,
                serve::Start::Full {
                    slot,
                    rdb,
                    mark,
                    psync,
                    diskless,
                    group,
                },
            )
        }))
    });
    Action::Job(job.locked(super::save::every_shard(n)))
}

/// In the snapshot's transaction: the backlog (first sync) or a mark on
/// it joins the feed when the transaction commits.
fn attach_at_commit(
    ctx: &mut super::Ctx,
    shared: &Arc<crate::exec::Shared>,
    first: bool,
    slot: Arc<StartSlot>,
    mark: &std::sync::Mutex<Option<crate::exec::feed::SinkId>>,
) {
    let repl = Arc::clone(&shared.repl);
    let sink: Box<dyn crate::exec::feed::Sink> = if first {
        Box::new(BacklogSink { repl, start: slot })
    } else {
        Box::new(StartMark { repl, start: slot })
    };
    let id = match ctx.shard.op_tx {
        Some(tx) => shared.feed.attach_on_commit(tx, sink),
        None => shared.feed.attach(sink),
    };
    if first {
        shared.repl.backlog().sink = Some(id);
    } else {
        *mark.lock().unwrap_or_else(|e| e.into_inner()) = Some(id);
    }
}

/// Redis's refusals for replication's sake, in its order: too few good
/// replicas on a master (`min-replicas-to-write`), a replica's link down
/// (`replica-serve-stale-data no`), a write on a read-only replica.
pub fn refusal(shard: &ShardData, session: &Session, spec: &CommandSpec) -> Option<Frame> {
    if session.master {
        return None;
    }
    let shared = &shard.shared;
    let write = spec.flags.contains(CommandFlags::WRITE);
    let config = &shared.config;
    if !shared.repl.is_replica() {
        let min = config.min_replicas_to_write();
        if write && min > 0 && (good_replicas(shared) as u64) < min {
            return Some(err::frame("NOREPLICAS Not enough good replicas to write."));
        }
        return None;
    }
    let link_up = shared.repl.current_link().is_some_and(|l| l.is_up());
    if !link_up && !config.replica_serve_stale_data() && !spec.flags.contains(CommandFlags::STALE) {
        return Some(err::frame(
            "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        ));
    }
    if write && config.replica_read_only() {
        return Some(err::frame(
            "READONLY You can't write against a read only replica.",
        ));
    }
    None
}

/// Replicas online that acknowledged within `min-replicas-max-lag`.
pub fn good_replicas(shared: &crate::exec::Shared) -> usize {
    let max_lag_ms = shared.config.min_replicas_max_lag_s() * 1000;
    let now = super::save::now_ms();
    shared
        .repl
        .list()
        .iter()
        .filter(|r| {
            r.state() == "online" && now.saturating_sub(r.ack_ms.load(Relaxed)) <= max_lag_ms
        })
        .count()
}

/// A command of the master's stream ran on the master client (`bytes`:
/// its wire form): a replica's backlog and offset are that stream, so
/// it goes there, whole transactions at their EXEC (a link lost inside
/// one resumes from before its MULTI, as Redis's offset does).
pub fn applied(shared: &crate::exec::Shared, session: &mut Session, name: &str, bytes: Vec<u8>) {
    // The database the applied stream is in, for a master client made
    // after a reconnect: a SELECT counts once applied (at EXEC inside a
    // transaction), not when the link thread passed it on.
    let set_db = |db: usize| {
        if let Some(link) = shared.repl.current_link() {
            link.stream_db.store(db, Relaxed);
        }
    };
    if name == "select" {
        let db = std::str::from_utf8(&bytes)
            .ok()
            .and_then(|t| t.trim_end().rsplit("\r\n").next()?.parse::<usize>().ok());
        if let Some(db) = db {
            if session.multi.is_some() {
                session.master_tx_db = Some(db);
            } else {
                set_db(db);
            }
        }
    }
    match name {
        "exec" => {
            let mut unit = std::mem::take(&mut session.master_tx);
            unit.extend_from_slice(&bytes);
            shared.repl.append(&unit);
            if let Some(db) = session.master_tx_db.take() {
                set_db(db);
            }
        }
        // Only the link thread sends DISCARD, after a lost link.
        "discard" => {
            session.master_tx.clear();
            session.master_tx_db = None;
        }
        _ if session.multi.is_some() => session.master_tx.extend_from_slice(&bytes),
        _ => shared.repl.append(&bytes),
    }
}

/// The link thread's own command on the master client (not the
/// master's stream, so not in the offset).
pub fn is_internal(argv: &[Bytes]) -> bool {
    argv.len() > 1
        && argv[0].eq_ignore_ascii_case(b"replconf")
        && (argv[1].eq_ignore_ascii_case(b"ember-load")
            || argv[1].eq_ignore_ascii_case(b"ember-select"))
}

/// REPLICAOF host port | NO ONE (and SLAVEOF).
pub fn replicaof(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let shared = Arc::clone(&shard.shared);
    let repl = &shared.repl;
    if repl.failover().phase != crate::exec::failover::Phase::None {
        return err::frame("ERR REPLICAOF not allowed while failing over.").into();
    }
    if argv[1].eq_ignore_ascii_case(b"no") && argv[2].eq_ignore_ascii_case(b"one") {
        if unset_master(&shared) {
            log::info!(
                "MASTER MODE enabled (user request from 'id={} addr={}')",
                session.id,
                session.addr
            );
        }
        return Frame::OK.into();
    }
    if repl.list().iter().any(|r| r.id == session.id) {
        return err::frame("ERR Command is not valid when client is a replica.").into();
    }
    let port = match super::args::int_arg(&argv[2]) {
        Ok(p) if (0..=65535).contains(&p) => p as u16,
        _ => return err::frame("ERR Invalid master port").into(),
    };
    let host = String::from_utf8_lossy(&argv[1]).into_owned();
    let same = repl
        .current_link()
        .is_some_and(|link| link.host.eq_ignore_ascii_case(&host) && link.port == port);
    if same {
        log::info!("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
        return Frame::Simple("OK Already connected to specified master").into();
    }
    log::info!(
        "REPLICAOF {host}:{port} enabled (user request from 'id={} addr={}')",
        session.id,
        session.addr
    );
    set_master(&shared, host, port);
    // Clients blocked while this was a master would otherwise be served
    // by its master's stream and diverge from it: Redis ends their wait.
    let ops = (0..shared.nshards)
        .map(|s| (s, Op::Clients(ClientsOp::UnblockAll(STATE_CHANGED))))
        .collect();
    Action::Job(Job::new(ops, |_| Action::Reply(Frame::OK)))
}

/// What a client blocked when this server became a replica is told.
const STATE_CHANGED: &str =
    "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)";

/// This server replicates `host:port` from now on (a link it had to
/// another master ends); its own replicas stay, and continue with the
/// new master's stream.
pub fn set_master(shared: &Arc<crate::exec::Shared>, host: String, port: u16) {
    let repl = &shared.repl;
    let mut current = repl.link.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(link) = current.as_ref() {
        link.stop.store(true, Relaxed);
    }
    shared.config.set_replicaof(Some((&host, port)));
    let link = Arc::new(crate::exec::repl::Link::new(host, port));
    *current = Some(Arc::clone(&link));
    drop(current);
    repl.set_replica(true);
    link::start(Arc::clone(shared), link);
}

/// REPLICAOF NO ONE's work: the link ends and this server becomes a
/// master ([`promote`]). False when it was one already.
pub fn unset_master(shared: &crate::exec::Shared) -> bool {
    let link = shared
        .repl
        .link
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let Some(link) = link else {
        return false;
    };
    link.stop.store(true, Relaxed);
    shared.config.set_replicaof(None);
    promote(shared);
    true
}

/// REPLICAOF NO ONE: this server's history goes on under a new ID, the
/// old one kept as the second (PSYNC2), so its replicas continue; it
/// expires keys again, as a master.
pub fn promote(shared: &crate::exec::Shared) {
    let repl = &shared.repl;
    let ids = repl.ids();
    let end = repl.backlog().end;
    repl.set_ids(crate::exec::repl::Ids {
        replid: crate::exec::shared::new_replid(),
        replid2: ids.replid,
        second_offset: end as i64 + 1,
    });
    repl.set_master_conn(0);
    repl.set_replica(false);
    // `repl-backlog-ttl` counts from the promotion, not from before it.
    repl.no_replicas_since_ms
        .store(super::save::now_ms(), Relaxed);
    // A replica that never served a full sync has no backlog in the feed:
    // from now on its own writes are the stream a replica continues with.
    let unfed = {
        let mut backlog = repl.backlog();
        let unfed = backlog.sink.is_none();
        if unfed {
            backlog.sink = Some(0); // claimed; the id comes at attach
        }
        unfed
    };
    if unfed {
        let sink = BacklogSink {
            repl: Arc::clone(repl),
            start: Arc::default(),
        };
        let id = shared.feed.attach(Box::new(sink));
        repl.backlog().sink = Some(id);
    } else if let Some(id) = repl.backlog().sink {
        shared.feed.reselect(id);
    }
    // Replicas of this server reconnect and continue under the new ID.
    for r in repl.list() {
        r.kill.store(true, Relaxed);
    }
    repl.wake();
}

/// Once a second or so (shard 0's cron): a master whose last replica
/// left `repl-backlog-ttl` seconds ago frees its backlog, which also
/// takes it out of the feed, and goes on under a new replication ID with
/// no second one, as Redis does: writes from then on are in no backlog,
/// so no replica of the old history may continue past them.
pub fn backlog_cron(shared: &crate::exec::Shared) {
    let ttl_s = shared.config.repl_backlog_ttl_s();
    let repl = &shared.repl;
    if ttl_s == 0 || repl.is_replica() || !repl.list().is_empty() {
        return;
    }
    let since = repl.no_replicas_since_ms.load(Relaxed);
    if since == 0 || super::save::now_ms().saturating_sub(since) <= ttl_s * 1000 {
        return;
    }
    let Some(sink) = repl.backlog().free() else {
        return;
    };
    shared.feed.detach(sink);
    repl.set_ids(crate::exec::repl::Ids {
        replid: crate::exec::shared::new_replid(),
        ..Default::default()
    });
    log::info!("Replication backlog freed after {ttl_s} seconds without connected replicas.");
}

/// ROLE: `master`, its offset and its online replicas; or `slave`, the
/// master's address, the link's state and the offset applied.
pub fn role(shard: &mut ShardData, _: &mut Session, _: &[Bytes]) -> Action {
    let repl = &shard.shared.repl;
    let offset = repl.backlog().end as i64;
    let reply = match repl.current_link() {
        Some(link) => {
            let applied = if link.is_up() { offset } else { -1 };
            Frame::Array(vec![
                Frame::bulk("slave"),
                Frame::Bulk(Bytes::from(link.host.clone())),
                Frame::Integer(i64::from(link.port)),
                Frame::bulk(link.state()),
                Frame::Integer(applied),
            ])
        }
        None => {
            let replicas = repl
                .list()
                .iter()
                .filter(|r| r.state() == "online")
                .map(|r| {
                    Frame::Array(vec![
                        Frame::Bulk(Bytes::from(r.ip.clone())),
                        Frame::Bulk(Bytes::from(r.port.to_string())),
                        Frame::Bulk(Bytes::from(r.ack.load(Relaxed).to_string())),
                    ])
                })
                .collect();
            Frame::Array(vec![
                Frame::bulk("master"),
                Frame::Integer(offset),
                Frame::Array(replicas),
            ])
        }
    };
    reply.into()
}

/// The GETACK a master sends its replicas for WAIT.
const GETACK: &[u8] = b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";

/// WAIT numreplicas timeout: how many replicas acknowledged this
/// server's stream up to now, waiting up to `timeout` ms (0: forever)
/// for `numreplicas` of them. The wait is a thread's, never the shard's.
pub fn wait(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let shared = Arc::clone(&shard.shared);
    if shared.repl.is_replica() {
        return err::frame("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.").into();
    }
    let wanted = match super::args::int_arg(&argv[1]) {
        Ok(n) => n,
        Err(e) => return e.into(),
    };
    let timeout_ms = match std::str::from_utf8(&argv[2])
        .ok()
        .and_then(|t| t.parse::<i64>().ok())
    {
        Some(t) if t < 0 => return err::frame("ERR timeout is negative").into(),
        Some(t) => t as u64,
        None => return err::frame("ERR timeout is not an integer or out of range").into(),
    };
    let offset = shared.repl.backlog().end;
    let acked = move |shared: &crate::exec::Shared| {
        shared
            .repl
            .list()
            .iter()
            .filter(|r| r.ack.load(Relaxed) >= offset)
            .count() as i64
    };
    let now = acked(&shared);
    if now >= wanted || session.multi.is_some() || session.exec.is_some() {
        return Frame::Integer(now).into();
    }
    // Not while writes are paused (a FAILOVER waits for the offsets to
    // meet): the replicas acknowledge each second anyway.
    if shared.pause.active(shard.now_ms).is_none() {
        shared.repl.append(GETACK);
    }
    Action::Later(Box::new(move |reply| {
        let spawned = std::thread::Builder::new()
            .name("ember-wait".into())
            .spawn(move || {
                let start = std::time::Instant::now();
                loop {
                    let n = acked(&shared);
                    let over = timeout_ms > 0
                        && start.elapsed() >= std::time::Duration::from_millis(timeout_ms);
                    if n >= wanted || over {
                        reply.send(Frame::Integer(n));
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            });
        if spawned.is_err() {
            log::warn!("WAIT: cannot start its thread");
        }
    }))
}

/// At a snapshot's instant (in its transaction holding every shard): the
/// offset the file will stand at.
pub fn mark_snapshot(shared: &crate::exec::Shared) {
    let end = shared.repl.backlog().end;
    shared.repl.snapshot_offset.store(end, Relaxed);
}

/// The replication fields of a file (`repl-stream-db`, `repl-id`,
/// `repl-offset`), once this server has a history to continue.
pub fn save_info(shared: &crate::exec::Shared) -> Option<(usize, String, u64)> {
    if !shared.repl.backlog().history {
        return None;
    }
    let offset = shared.repl.snapshot_offset.load(Relaxed);
    Some((0, shared.repl.replid(), offset))
}

/// At start-up, a file's replication fields: this server's history goes
/// on from there, so its replicas (or its master) can continue.
pub fn restore_info(shared: &crate::exec::Shared, id: Option<&str>, offset: Option<&str>) {
    let (Some(id), Some(offset)) = (id, offset.and_then(|o| o.parse::<u64>().ok())) else {
        return;
    };
    if id.len() != 40 {
        return;
    }
    shared.repl.set_ids(crate::exec::repl::Ids {
        replid: id.to_string(),
        ..Default::default()
    });
    shared.repl.backlog().reset_at(offset);
}

/// A script's write refused for replication's sake: too few good
/// replicas (`-NOREPLICAS`), or a read-only replica (`-READONLY`), unless
/// the master's stream runs it, or the AOF's replay (only the loader's
/// connection runs scripts while the AOF loads).
pub fn script_write_refusal(shard: &ShardData) -> Option<Frame> {
    let shared = &shard.shared;
    if shard.from_master || shared.aof.is_loading() {
        return None;
    }
    if shared.repl.is_replica() {
        return shared
            .config
            .replica_read_only()
            .then(|| err::frame("READONLY You can't write against a read only replica."));
    }
    let min = shared.config.min_replicas_to_write();
    (min > 0 && (good_replicas(shared) as u64) < min)
        .then(|| err::frame("NOREPLICAS Not enough good replicas to write."))
}

/// DEBUG REPLICATE cmd [arg ...]: the command goes to the replicas (and
/// the backlog) without running here, as Redis's test of divergence uses.
pub fn debug_replicate(shard: &ShardData, argv: &[Bytes]) -> Frame {
    let mut out = Vec::new();
    crate::exec::feed::write_command(&mut out, argv);
    if !shard.shared.repl.is_replica() && shard.shared.repl.backlog().history {
        shard.shared.repl.append(&out);
    }
    Frame::OK
}

/// A reply to the master that is an error: Redis logs it, since it means
/// the replica's data and the master's diverged.
pub fn log_error_to_master(frame: &Frame, command: &str) {
    let text = match frame {
        Frame::Error(text) => text.clone(),
        Frame::ErrorBytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        _ => return,
    };
    {
        let text = text.strip_prefix('-').unwrap_or(&text);
        log::warn!(
            "== CRITICAL == This replica is sending an error to its master: '{text}' after processing the command '{command}'"
        );
    }
}

/// `replicaof host port` in the configuration: the link starts with the
/// server.
pub fn start_from_config(shared: &Arc<crate::exec::Shared>) {
    let text = shared.config.replicaof();
    let mut words = text.split_whitespace();
    let (Some(host), Some(port)) = (words.next(), words.next().and_then(|p| p.parse().ok())) else {
        return;
    };
    let link = Arc::new(crate::exec::repl::Link::new(host.to_string(), port));
    *shared.repl.link.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&link));
    shared.repl.set_replica(true);
    link::start(Arc::clone(shared), link);
}
