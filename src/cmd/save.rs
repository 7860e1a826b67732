//! RDB snapshots as commands: SAVE, BGSAVE [SCHEDULE], LASTSAVE, DEBUG
//! RELOAD and SHUTDOWN's final save, and the MISCONF refusal of writes
//! after a failed background save.
//!
//! # One instant for every shard
//!
//! A snapshot starts on every shard inside one transaction that takes each
//! shard whole through the key locks (as FLUSHALL does), so it sits at one
//! point of the key-lock order: a cross-shard transaction (MSET over
//! shards, RENAME, EXEC) either committed on every shard before it, or
//! runs on none until it has started everywhere. The file is therefore
//! wholly with such a transaction or wholly without it.
//!
//! SAVE, SHUTDOWN and DEBUG RELOAD serialize every shard inside that
//! transaction and write the file before answering, stopping the server
//! for the save as Redis's SAVE does. BGSAVE only starts the snapshot
//! there (`store::snapshot`): each shard then serializes its table in
//! slices between client work, as it was at that instant (a key a client
//! changes before the snapshot reached it is written first).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use bytes::Bytes;

use super::args::err;
use super::{CommandSpec, Session, ShardData};
use crate::cmd::meta::CommandFlags;
use crate::exec::scripts::RestorePolicy;
use crate::exec::{Action, Job, LockPlan, Need, Op, Out, Shared};
use crate::persist::child::SaveChild;
use crate::persist::file::{self, Aux};
use crate::persist::{disk, snapshot, Part};
use crate::resp::Frame;

/// Redis's refusal of writes after a failed background save.
pub const MISCONF: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";

/// Whether `spec` is refused with MISCONF: a write (or PING, as Redis
/// does) while the last background save failed, `save` rules are set and
/// `stop-writes-on-bgsave-error` is on. One relaxed load while saves work.
pub fn refuses_writes(shard: &ShardData, spec: &CommandSpec) -> bool {
    let shared = &shard.shared;
    shared.persist.bgsave_failed.load(Relaxed)
        && (spec.flags.contains(CommandFlags::WRITE) || spec.name == "ping")
        && shared.config.stop_writes_on_bgsave_error()
        && !shared.config.save_text().is_empty()
}

/// A script's write (or a script that declares it may write) refused as
/// Redis's `writeCommandsDeniedByDiskError` refuses it from a script: the
/// same MISCONF, on the same conditions as [`refuses_writes`].
pub fn script_write_refusal(shard: &ShardData) -> Option<Frame> {
    let shared = &shard.shared;
    let refused = shared.persist.bgsave_failed.load(Relaxed)
        && shared.config.stop_writes_on_bgsave_error()
        && !shared.config.save_text().is_empty();
    refused.then(|| err::frame(MISCONF))
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The instant a snapshot leaves expired keys out at (the seeds' rule),
/// or 0, which keeps them all, after DEBUG SET-ACTIVE-EXPIRE 0: that
/// debugging switch keeps logically expired keys stored as Redis keeps
/// them, file included, so that a load's skipping of expired keys
/// (`rdb_last_load_keys_expired`) can be seen, as Redis's suite does.
fn filter_instant(shard: &ShardData) -> u64 {
    let active = shard.shared.active_expire.load(Relaxed);
    if active {
        shard.now_ms
    } else {
        0
    }
}

/// Every shard whole, for the instant a snapshot starts.
pub fn every_shard(nshards: usize) -> LockPlan {
    (0..nshards).map(|s| (s, Need::Whole)).collect()
}

/// Serializes every shard at one point of the key-lock order, then hands
/// the parts (in shard order) to `then`.
pub fn snapshot_all(shard: &ShardData, then: impl FnOnce(Vec<Part>) -> Action + 'static) -> Action {
    snapshot_every_shard(&shard.shared, then)
}

/// [`snapshot_all`] from the shared state alone (for a job's later step).
fn snapshot_every_shard(
    shared: &Shared,
    then: impl FnOnce(Vec<Part>) -> Action + 'static,
) -> Action {
    let n = shared.nshards;
    let compress = shared.config.rdbcompression();
    let ops = (0..n)
        .map(|s| {
            let op = move |ctx: &mut super::Ctx| {
                let now = filter_instant(ctx.shard);
                if s == 0 {
                    super::replication::mark_snapshot(&ctx.shard.shared);
                }
                Out::Snapshot(Box::new(snapshot::serialize(
                    &ctx.shard.store,
                    now,
                    compress,
                )))
            };
            (s, Op::store(0, op))
        })
        .collect();
    let job = Job::new(ops, move |outs| {
        let parts = outs
            .into_iter()
            .filter_map(|o| match o {
                Out::Snapshot(p) => Some(*p),
                _ => None,
            })
            .collect();
        then(parts)
    });
    Action::Job(job.locked(every_shard(n)))
}

/// Builds the file from the shards' parts and writes it into place.
/// Returns the change count it was taken at, or the log line of the failure.
pub fn write_parts(shared: &Shared, parts: &[Part]) -> Result<u64, String> {
    let (bytes, changes) = file_bytes(shared, parts);
    write_file(shared, &bytes, None)?;
    Ok(changes)
}

/// The file the shards' parts make, and the change count it was taken at.
pub fn file_bytes(shared: &Shared, parts: &[Part]) -> (Vec<u8>, u64) {
    let config = &shared.config;
    let (dbs, version) = crate::persist::merge(parts, config.databases());
    let now = now_ms();
    let aux = Aux {
        ctime_s: now / 1000,
        used_mem: crate::util::memory::memory_stats().allocated,
        aof_base: false,
        repl: super::replication::save_info(shared),
    };
    let libraries = shared.libraries.all();
    let codes: Vec<&[u8]> = libraries.iter().map(|l| l.code.as_ref()).collect();
    let build = || file::build(&dbs, &codes, &aux, config.rdbchecksum(), version);
    let bytes = if config.rdbcompression() {
        build()
    } else {
        crate::store::rdb::writer::without_compression(build)
    };
    let changes = parts
        .iter()
        .fold(0u64, |sum, p| sum.wrapping_add(p.changes));
    (bytes, changes)
}

/// Writes a built file into place (`dir/dbfilename`).
fn write_file(shared: &Shared, bytes: &[u8], child: Option<SaveChild>) -> Result<(), String> {
    let config = &shared.config;
    let dir = config.dir();
    disk::write_atomically(&dir, &config.dbfilename(), bytes, "ember", child).map_err(|e| {
        format!(
            "Failed opening the temp RDB file temp-ember-{}.rdb (in server root dir {dir}) for saving: {e}",
            std::process::id()
        )
    })
}

/// A save in the foreground: the file is written before the reply.
fn save_now(shared: &Shared, parts: &[Part]) -> bool {
    match write_parts(shared, parts) {
        Ok(changes) => {
            log::info!("DB saved on disk");
            shared.persist.finish_save(true, false, changes, now_ms());
            true
        }
        Err(line) => {
            log::warn!("{line}");
            false
        }
    }
}

/// FLUSHALL with `save` rules set writes the emptied keyspace to disk
/// before it answers, as Redis 7.0 does: a restart must not bring the
/// flushed keys back, and `rdb_changes_since_last_save` is 0 after it. The
/// save is one more step of FLUSHALL's job, inside the transaction that
/// holds every shard whole, so nothing lands between the flush and it.
pub fn save_after_flushall(shared: &Arc<Shared>, action: Action) -> Action {
    if shared.config.save_text().is_empty() {
        return action;
    }
    let Action::Job(mut job) = action else {
        return action;
    };
    let flush_then = std::mem::replace(&mut job.then, Box::new(|_| Action::Reply(Frame::Null)));
    let shared = Arc::clone(shared);
    job.ordered = true;
    job.then = Box::new(move |outs| match flush_then(outs) {
        Action::Reply(frame) if !frame.is_error() => {
            let writer = Arc::clone(&shared);
            snapshot_every_shard(&shared, move |parts| {
                save_now(&writer, &parts);
                Action::Reply(frame)
            })
        }
        other => other,
    });
    Action::Job(job)
}

/// SAVE.
pub fn save(shard: &mut ShardData, _: &mut Session, _: &[Bytes]) -> Action {
    if shard.shared.persist.bgsave_in_progress.load(Relaxed) {
        return err::frame("ERR Background save already in progress").into();
    }
    let shared = Arc::clone(&shard.shared);
    snapshot_all(shard, move |parts| {
        Action::Reply(if save_now(&shared, &parts) {
            Frame::OK
        } else {
            Frame::error("ERR")
        })
    })
}

/// BGSAVE [SCHEDULE].
pub fn bgsave(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    match argv.len() {
        1 => {}
        2 if argv[1].eq_ignore_ascii_case(b"schedule") => {}
        _ => return err::syntax().into(),
    }
    if shard.shared.aof.rewriting.load(Relaxed) {
        if argv.len() == 2 {
            shard.shared.persist.update(|s| s.scheduled = true);
            return Frame::Simple("Background saving scheduled").into();
        }
        return err::frame("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.").into();
    }
    match start_bgsave(shard) {
        Some(action) => action,
        None => err::frame("ERR Background save already in progress").into(),
    }
}

/// Starts a background save, answering "Background saving started" once
/// every shard has begun its snapshot at the same point of the key-lock
/// order; None when one is already running. Each shard then writes its
/// table in slices between client work (`shard` drives them), and the
/// last to finish hands every part to a writer thread.
pub fn start_bgsave(shard: &ShardData) -> Option<Action> {
    let shared = &shard.shared;
    if !shared.persist.try_begin_bgsave(now_ms()) {
        return None;
    }
    match shared
        .persist
        .start_child(shared.config.rdb_key_save_delay_us())
    {
        Some(pid) => log::info!("Background saving started by pid {pid}"),
        None => log::info!("Background saving started"),
    }
    let n = shared.nshards;
    let compress = shared.config.rdbcompression();
    let ops = (0..n)
        .map(|s| {
            let op = move |ctx: &mut super::Ctx| {
                let now = filter_instant(ctx.shard);
                if s == 0 {
                    super::replication::mark_snapshot(&ctx.shard.shared);
                }
                ctx.shard.store.begin_snapshot(now, compress);
                Out::Count(0)
            };
            (s, Op::store(0, op))
        })
        .collect();
    let job = Job::new(ops, |_| {
        Action::Reply(Frame::Simple("Background saving started"))
    });
    Some(Action::Job(job.locked(every_shard(n))))
}

/// A shard finished its part of the background save; the last one starts
/// the thread that writes the file.
pub fn shard_finished(shared: &Arc<Shared>, done: crate::store::ShardSnapshot) {
    let part = snapshot::from_shard(done, shared.config.databases());
    hand_in(shared, Some(part));
}

/// FLUSHALL dropped this shard's running snapshot: the save ends without
/// a file once every shard has handed in, as FLUSHALL kills Redis's child.
pub fn shard_aborted(shared: &Arc<Shared>) {
    hand_in(shared, None);
}

fn hand_in(shared: &Arc<Shared>, part: Option<Part>) {
    let Some(parts) = shared.persist.deposit(part, shared.nshards) else {
        return;
    };
    let copied: u64 = parts.iter().flatten().map(|p| p.copied).sum();
    if shared.aof.rewriting.load(Relaxed) && !shared.persist.bgsave_in_progress.load(Relaxed) {
        shared.aof.last_cow_size.store(copied, Relaxed);
        // The snapshot is an AOF rewrite's base (`cmd::aof`).
        let parts = parts.into_iter().collect::<Option<Vec<Part>>>();
        super::aof::snapshot_done(shared, parts);
        return;
    }
    let (child, ended) = shared.persist.take_child();
    if let Some(status) = ended {
        // The save process was killed: the save failed (MISCONF follows
        // under `stop-writes-on-bgsave-error`), as when Redis's child is.
        log::warn!(
            "Background saving {}",
            crate::persist::child::describe(status)
        );
        shared.repl.diskless_save.store(false, Relaxed);
        shared.persist.finish_save(false, true, 0, now_ms());
        hand_to_replicas(shared, None);
        return;
    }
    let Some(parts) = parts.into_iter().collect::<Option<Vec<Part>>>() else {
        // FLUSHALL ended it, as it kills Redis's child with SIGUSR1: no
        // file, and no error.
        drop(child);
        log::warn!("Background saving terminated by signal 10");
        shared.repl.diskless_save.store(false, Relaxed);
        shared.persist.abort_bgsave();
        hand_to_replicas(shared, None);
        return;
    };
    shared.persist.update(|s| s.last_cow_size = copied);
    let writer = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("ember-bgsave".into())
        .spawn(move || finish_bgsave(&writer, &parts, child));
    if let Err(e) = spawned {
        log::warn!("Can't save in background: {e}");
        shared.persist.finish_save(false, true, 0, now_ms());
        hand_to_replicas(shared, None);
    }
}

/// The background writer's end: the file, the status, the log; and the
/// file for the replicas whose full sync waited for this save (a save
/// started for a diskless sync only writes no file, as Redis's socket
/// target does not).
fn finish_bgsave(shared: &Shared, parts: &[Part], child: Option<SaveChild>) {
    let (bytes, changes) = file_bytes(shared, parts);
    let bytes = Arc::new(bytes);
    let diskless = shared.repl.diskless_save.swap(false, Relaxed);
    if diskless {
        drop(child);
        shared.persist.abort_bgsave();
        hand_to_replicas(shared, Some(bytes));
        log::info!("Background RDB transfer terminated with success");
        return;
    }
    match write_file(shared, &bytes, child) {
        Ok(()) => {
            log::info!("DB saved on disk");
            shared.persist.finish_save(true, true, changes, now_ms());
            log::info!("Background saving terminated with success");
            hand_to_replicas(shared, Some(bytes));
        }
        Err(line) => {
            log::warn!("{line}");
            shared.persist.finish_save(false, true, 0, now_ms());
            log::warn!("Background saving error");
            hand_to_replicas(shared, None);
        }
    }
}

/// The full syncs waiting for the background save get its file (None: it
/// failed or was aborted; they drop their replicas, which retry).
fn hand_to_replicas(shared: &Shared, bytes: Option<Arc<Vec<u8>>>) {
    let waiters = std::mem::take(
        &mut *shared
            .repl
            .rdb_waiters
            .lock()
            .unwrap_or_else(|e| e.into_inner()),
    );
    for waiter in waiters {
        let _ = waiter.send(bytes.clone());
    }
}

/// LASTSAVE: Unix seconds of the last successful save.
pub fn lastsave(shard: &mut ShardData, _: &mut Session, _: &[Bytes]) -> Action {
    Frame::Integer(shard.shared.persist.status().last_save_s as i64).into()
}

/// SHUTDOWN's save: with `save` forced, or with `save` rules set and not
/// NOSAVE (Redis saves then); exits once the file is written, or answers
/// Redis's error when it could not be.
pub fn shutdown_saving(shard: &ShardData, force_save: bool, nosave: bool, force: bool) -> Action {
    let shared = Arc::clone(&shard.shared);
    let rules = !shared.config.save_text().is_empty();
    super::aof::flush_for_exit(&shared);
    // A keyspace still loading is not saved over the file it comes from
    // (Redis forces NOSAVE while loading).
    if nosave || !(force_save || rules) || shared.aof.is_loading() {
        exit_now();
    }
    snapshot_all(shard, move |parts| {
        log::info!("Saving the final RDB snapshot before exiting.");
        if save_now(&shared, &parts) || force {
            exit_now();
        }
        log::warn!("Error trying to save the DB, can't exit.");
        log::warn!("Errors trying to shut down the server. Check the logs for more information.");
        Action::Reply(err::frame("ERR Errors trying to SHUTDOWN. Check logs."))
    })
}

pub fn exit_now() -> ! {
    crate::util::pidfile::remove();
    log::warn!("ember is now ready to exit, bye bye...");
    std::process::exit(0);
}

/// DEBUG RELOAD: save (unless NOSAVE), empty every shard (unless
/// NOFLUSH; keys from the file then replace the same keys), load the file
/// back (Redis's test of its own save and load), all inside one
/// transaction over every shard.
pub fn debug_reload(shard: &ShardData, save: bool, flush: bool) -> Action {
    let shared = Arc::clone(&shard.shared);
    snapshot_all(shard, move |parts| {
        if save && !save_now(&shared, &parts) {
            return Action::Reply(Frame::error("ERR Error trying to save the DB"));
        }
        let n = shared.nshards;
        let path = disk::target(&shared.config.dir(), &shared.config.dbfilename());
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => return Action::Reply(Frame::Error(format!("ERR Error loading: {e}"))),
        };
        let mut per_shard: Vec<Vec<LoadedKey>> = (0..n).map(|_| Vec::new()).collect();
        let opts = load_options(&shared, true);
        let loaded = file::load(&bytes, &opts, |db, key, value, at| {
            per_shard[super::shard_of(key, n)].push((db, key.to_vec(), value, at));
        });
        let loaded = match loaded {
            Ok(l) => l,
            Err(e) => {
                return Action::Reply(Frame::Error(format!(
                    "ERR Error trying to load the RDB dump: {e}"
                )))
            }
        };
        // The file's libraries: in place of the registry's (after a flush,
        // as Redis empties functions with the data), else over those of
        // the same name.
        let policy = if flush {
            RestorePolicy::Flush
        } else {
            RestorePolicy::Replace
        };
        let generation = shared.scripts.generation();
        let restored = super::scripting::functions::libraries_of(generation, loaded.libraries)
            .and_then(|libs| {
                shared
                    .libraries
                    .restore(libs, policy)
                    .map_err(|e| format!("ERR {e}"))
            });
        if let Err(e) = restored {
            return Action::Reply(Frame::Error(format!(
                "ERR Error trying to load the RDB dump: {e}"
            )));
        }
        let ops = load_ops(per_shard, flush);
        log::info!("DB reloaded by DEBUG RELOAD");
        Action::Job(Job::new(ops, |_| Action::Reply(Frame::OK)))
    })
}

/// Ops that place each shard's keys from a file (emptying the shard
/// first when `flush`).
fn load_ops(per_shard: Vec<Vec<LoadedKey>>, flush: bool) -> Vec<(usize, Op)> {
    per_shard
        .into_iter()
        .enumerate()
        .map(|(s, keys)| {
            let op = move |ctx: &mut super::Ctx| {
                let store = &mut ctx.shard.store;
                let now = ctx.shard.now_ms;
                if flush {
                    store.empty_every_db();
                }
                for (db, key, value, at) in keys {
                    store.dbs[db].insert_raw(&key, value, at, now);
                }
                Out::Count(0)
            };
            (s, Op::store(0, op))
        })
        .collect()
}

/// A replica's full sync: its master's file replaces every shard's keys,
/// in one transaction holding every shard, expired keys included (the
/// master's DELs follow for them).
pub fn load_replica_file(shared: &Arc<Shared>, bytes: Vec<u8>) -> Action {
    let n = shared.nshards;
    let mut per_shard: Vec<Vec<LoadedKey>> = (0..n).map(|_| Vec::new()).collect();
    let opts = load_options(shared, false);
    let loaded = file::load(&bytes, &opts, |db, key, value, at| {
        per_shard[super::shard_of(key, n)].push((db, key.to_vec(), value, at));
    });
    let loaded = match loaded {
        Ok(l) => l,
        Err(e) => {
            log::warn!("Failed trying to load the MASTER synchronization DB from socket: {e}");
            return Action::Reply(Frame::Error(format!("ERR {e}")));
        }
    };
    let generation = shared.scripts.generation();
    let restored = super::scripting::functions::libraries_of(generation, loaded.libraries)
        .and_then(|libs| {
            shared
                .libraries
                .restore(libs, RestorePolicy::Flush)
                .map_err(|e| format!("ERR {e}"))
        });
    if let Err(e) = restored {
        log::warn!("Failed loading the master's libraries: {e}");
    }
    log::info!(
        "MASTER <-> REPLICA sync: Loaded {} keys ({} already expired, kept for the master's DEL)",
        loaded.keys_loaded,
        loaded.keys_expired
    );
    let job = Job::new(load_ops(per_shard, true), |_| Action::Reply(Frame::OK));
    Action::Job(job.locked(every_shard(n)))
}

/// A key read from a file: database, name, value, deadline.
type LoadedKey = (usize, Vec<u8>, crate::store::Value, Option<u64>);

/// How this server loads a file: its databases, now, as a master.
pub fn load_options(shared: &Shared, master: bool) -> crate::persist::LoadOptions {
    crate::persist::LoadOptions {
        databases: shared.config.databases(),
        now_ms: now_ms(),
        master,
        limits: crate::store::rdb::Limits {
            hash: shared.config.hash_listpack(),
        },
    }
}
