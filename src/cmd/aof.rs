//! The append-only file as commands and as a reader of the propagation
//! feed: BGREWRITEAOF, CONFIG SET appendonly, the sink that hands the
//! feed's units to the writer thread (`persist::aof::writer`), the
//! rewrite's end, INFO's AOF fields.
//!
//! # A rewrite without fork
//!
//! ```text
//!  BGREWRITEAOF (or appendonly yes)
//!    | a job holding every shard whole (as BGSAVE's start):
//!    |   each shard starts its snapshot cursor (store::snapshot)
//!    |   shard 0's op: feed.attach_on_commit(tx, new sink)
//!    | the job's commit = the instant: the new sink is attached, and in
//!    | its `attached` (under the feed's lock) the writer is told to switch
//!    | to the new incr file at that point of the stream; the old sink
//!    | drops what it gets from then on, and is detached
//!    v
//!  shards write their tables in slices (as BGSAVE)
//!    | the last one hands the parts to a thread
//!    v
//!  the base (RDB preamble, or commands) -> temp-rewriteaof-bg-<pid>.aof,
//!  synced, renamed to <prefix>.<n>.base.rdb; the manifest now lists the
//!  new base and the incr files from the instant on (temp file, rename,
//!  directory sync); the old files are history, deleted.
//! ```
//!
//! Everything before the instant is in the base and nothing after it;
//! everything after it is in the new incr file and nothing before. While
//! the rewrite runs the old base and incr files still hold everything, so
//! a crash or a failed rewrite loses nothing: the manifest lists the new
//! incr file after the old ones from the moment it is opened.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::args::err;
use super::{Session, ShardData};
use crate::config::AppendFsync;
use crate::exec::feed::Sink;
use crate::exec::{Action, Job, Need, Op, Out, Shared};
use crate::persist::aof::writer::{Settings, Stats, Switch, Writer};
use crate::persist::aof::{self, Manifest, Rewrite};
use crate::persist::child::SaveChild;
use crate::persist::Part;
use crate::resp::Frame;

pub const IN_PROGRESS: &str = "ERR Background append only file rewriting already in progress";
pub const LOADING: &str = "LOADING Redis is loading the dataset in memory";

/// Hands the feed's units to the writer while it is the current sink.
struct AofSink {
    writer: Arc<Writer>,
    epoch: u64,
    current: Arc<AtomicU64>,
    /// A rewrite's sink: at its instant it becomes the current one and
    /// switches the writer to the new incr file.
    switch: Option<Switch>,
}

impl Sink for AofSink {
    fn write(&mut self, unit: &[u8]) {
        if self.current.load(Relaxed) == self.epoch {
            self.writer.append(unit);
        }
    }

    fn attached(&mut self) {
        if let Some(open) = self.switch.take() {
            self.current.store(self.epoch, Relaxed);
            self.writer.switch(open);
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What the writer reads of the configuration at each round.
fn settings(shared: &Arc<Shared>) -> Box<dyn Fn() -> Settings + Send + Sync> {
    let weak = Arc::downgrade(shared);
    Box::new(move || {
        let Some(shared) = weak.upgrade() else {
            return Settings {
                fsync: AppendFsync::No,
                skip_fsync: true,
                timestamps: false,
            };
        };
        let config = &shared.config;
        Settings {
            fsync: config.appendfsync(),
            skip_fsync: config.no_appendfsync_on_rewrite() && rewrite_or_save_running(&shared),
            timestamps: config.aof_timestamp_enabled(),
        }
    })
}

fn rewrite_or_save_running(shared: &Shared) -> bool {
    shared.aof.rewriting.load(Relaxed) || shared.persist.bgsave_in_progress.load(Relaxed)
}

/// Whether this client is the start-up replay's connection (which passes
/// the LOADING gate, the ACL and the memory limit, as Redis's fake AOF
/// client does). Asked only while loading.
pub fn is_loader(shard: &ShardData, session: &mut Session) -> bool {
    if !session.aof_loader {
        let addr = shard
            .shared
            .aof
            .loader_addr
            .lock()
            .map_or_else(|_| String::new(), |a| a.clone());
        session.aof_loader = !addr.is_empty() && addr == session.addr;
        if session.aof_loader {
            // May run anything (EXEC's second look at its queue and a
            // script's calls included), as Redis's AOF client may.
            session.auth.user = std::sync::Arc::new(super::acl::default_user());
            session.auth.generation = shard.shared.acl.generation();
            session.auth.authenticated = true;
            session.auth.free = true;
        }
    }
    session.aof_loader
}

/// Redis's refusal of writes (and PING) while the AOF cannot be written:
/// `MISCONF Errors writing to the AOF file: <error>`. One relaxed load
/// while the writer is well.
pub fn refuses_writes(shard: &ShardData, spec: &super::CommandSpec) -> Option<String> {
    let shared = &shard.shared;
    if !shared.aof.stats.write_failed.load(Relaxed) || !shared.config.appendonly() {
        return None;
    }
    if !(spec.flags.contains(super::CommandFlags::WRITE) || spec.name == "ping") {
        return None;
    }
    aof::write_error(&shared.aof)
}

/// BGREWRITEAOF.
pub fn bgrewriteaof(shard: &mut ShardData, _: &mut Session, _: &[Bytes]) -> Action {
    let shared = &shard.shared;
    if shared.aof.rewriting.load(Relaxed) {
        return err::frame(IN_PROGRESS).into();
    }
    if shared.persist.bgsave_in_progress.load(Relaxed) {
        shared.aof.scheduled.store(true, Relaxed);
        return Frame::Simple("Background append only file rewriting scheduled").into();
    }
    match start_rewrite(
        shard,
        Frame::Simple("Background append only file rewriting started"),
    ) {
        Ok(action) => action,
        Err(text) => Frame::Error(text).into(),
    }
}

/// CONFIG SET changed `appendonly`: turning it on starts a rewrite that
/// writes the base (answering `reply` once it has started), as Redis's
/// does; turning it off stops the writer.
pub fn appendonly_changed(shard: &mut ShardData, reply: Frame) -> Action {
    let shared = Arc::clone(&shard.shared);
    let on = shared.config.appendonly();
    let running = shared.aof.state().writer.is_some();
    if on && !running {
        if shared.persist.bgsave_in_progress.load(Relaxed) {
            log::warn!("AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.");
            shared.aof.scheduled.store(true, Relaxed);
            return reply.into();
        }
        if shared.aof.rewriting.load(Relaxed) {
            // A rewrite without the log (AOF was off) runs: this one
            // replaces it.
            log::warn!("AOF was enabled but there is already an AOF rewriting in background. Stopping background AOF and starting a rewrite now.");
            if let Some(rw) = shared.aof.state().rewrite.as_mut() {
                rw.cancelled = true;
            }
            shared.aof.scheduled.store(true, Relaxed);
            return reply.into();
        }
        return match start_rewrite(shard, reply) {
            Ok(action) => action,
            Err(text) => {
                shared.config.set_appendonly(false);
                log::warn!("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.");
                Frame::Error(text).into()
            }
        };
    }
    if !on {
        // Nothing scheduled survives `appendonly no` (a retry of the
        // rewrite that was turning it on included), as in Redis.
        shared.aof.scheduled.store(false, Relaxed);
    }
    if !on && running {
        stop(&shared);
    }
    reply.into()
}

/// Stops appending: the sink leaves the feed, the writer writes and syncs
/// what it holds and ends; a running rewrite's result will be dropped.
pub fn stop(shared: &Shared) {
    let (sink, writer) = {
        let mut st = shared.aof.state();
        if let Some(rw) = st.rewrite.as_mut() {
            rw.cancelled = true;
        }
        (st.sink.take(), st.writer.take())
    };
    if let Some(id) = sink {
        drop(shared.feed.detach(id));
    }
    if let Some(writer) = writer {
        writer.flush();
    }
}

/// Writes and syncs what the writer holds (SHUTDOWN, before exiting).
pub fn flush_for_exit(shared: &Shared) {
    let writer = shared.aof.state().writer.clone();
    if let Some(writer) = writer {
        log::info!("Calling fsync() on the AOF file.");
        writer.flush();
    }
}

/// Starts a rewrite: the snapshot of every shard at one instant and, when
/// the AOF is on (or being turned on), a new incr file from that instant.
/// Answers `reply` once every shard has started.
fn start_rewrite(shard: &ShardData, reply: Frame) -> Result<Action, String> {
    let shared = Arc::clone(&shard.shared);
    if shared.aof.rewriting.swap(true, Relaxed) {
        return Err(IN_PROGRESS.into());
    }
    if shared.persist.bgsave_in_progress.load(Relaxed) {
        // A BGSAVE started meanwhile: wait for it, as Redis schedules.
        shared.aof.rewriting.store(false, Relaxed);
        shared.aof.scheduled.store(true, Relaxed);
        return Ok(Frame::Simple("Background append only file rewriting scheduled").into());
    }
    shared.aof.scheduled.store(false, Relaxed);
    // The save process first: INFO shows the rewrite running from the
    // swap above, and the rewrite keeps the `rdb-key-save-delay` of that
    // moment (a CONFIG SET right after is not its, as for a forked child).
    let pid = shared
        .persist
        .start_child(shared.config.rdb_key_save_delay_us());
    let prepared = prepare_rewrite(&shared);
    let sink = match prepared {
        Ok(sink) => sink,
        Err(e) => {
            drop(shared.persist.take_child());
            shared.aof.rewriting.store(false, Relaxed);
            log::warn!("Can't rewrite append only file in background: {e}");
            return Err(format!(
                "ERR Can't rewrite append only file in background: {e}"
            ));
        }
    };
    match pid {
        Some(pid) => log::info!("Background append only file rewriting started by pid {pid}"),
        None => log::info!("Background append only file rewriting started"),
    }
    let hold = shared.feed.hold();
    let n = shared.nshards;
    let compress = shared.config.rdbcompression();
    let new_id: Arc<Mutex<Option<u64>>> = Arc::default();
    let mut sink = sink;
    let ops = (0..n)
        .map(|s| {
            let attach = if s == 0 { sink.take() } else { None };
            let new_id = Arc::clone(&new_id);
            let op = move |ctx: &mut super::Ctx| {
                let now = ctx.shard.now_ms;
                ctx.shard.store.begin_snapshot(now, compress);
                if let Some(sink) = attach {
                    let feed = &ctx.shard.shared.feed;
                    let id = match ctx.shard.op_tx {
                        Some(tx) => feed.attach_on_commit(tx, sink),
                        None => feed.attach(sink),
                    };
                    if let Ok(mut slot) = new_id.lock() {
                        *slot = Some(id);
                    }
                }
                Out::Count(0)
            };
            (s, Op::store(0, op))
        })
        .collect();
    let job = Job::new(ops, move |_| {
        drop(hold);
        let id = new_id.lock().ok().and_then(|mut s| s.take());
        let old = {
            let mut st = shared.aof.state();
            match id {
                Some(id) => st.sink.replace(id),
                None => None,
            }
        };
        if let Some(old) = old {
            drop(shared.feed.detach(old));
        }
        Action::Reply(reply)
    });
    let plan = (0..n).map(|s| (s, Need::Whole)).collect();
    Ok(Action::Job(job.locked(plan)))
}

/// Opens what a rewrite writes to from its instant on and records the
/// rewrite; returns the sink to attach at the instant (None: the AOF is
/// off, the rewrite makes a base only).
fn prepare_rewrite(shared: &Arc<Shared>) -> std::io::Result<Option<Box<dyn Sink>>> {
    let config = &shared.config;
    let dir = aof::dir_path(&config.dir(), &config.appenddirname());
    let prefix = config.appendfilename();
    std::fs::create_dir_all(&dir)?;
    let mut st = shared.aof.state();
    st.dir = dir.clone();
    st.prefix = prefix.clone();
    let started_ms = now_ms();
    if let Some(writer) = st.writer.clone() {
        // The AOF is on: a new incr file, in the manifest from its first
        // byte on (the switch runs on the writer thread).
        let mut next = st.manifest.clone();
        let incr = next.new_incr(&prefix);
        let epoch = st.epoch();
        let weak = Arc::downgrade(shared);
        let name = incr.clone();
        let switch: Switch = Box::new(move || {
            let file = aof::open_append(&dir.join(&name))?;
            if let Some(shared) = weak.upgrade() {
                let mut st = shared.aof.state();
                if !st.manifest.incrs.iter().any(|e| e.name == name) {
                    st.manifest.new_incr(&prefix);
                }
                aof::persist_manifest(&dir, &prefix, &st.manifest)?;
                if let Some(rw) = st.rewrite.as_mut() {
                    rw.switched = true;
                }
            }
            log::info!("Creating AOF incr file {name} on background rewrite");
            Ok(file)
        });
        st.rewrite = Some(Rewrite {
            started_ms,
            incr,
            enabling: false,
            cancelled: false,
            switched: false,
        });
        return Ok(Some(Box::new(AofSink {
            writer,
            epoch,
            current: Arc::clone(&st.current),
            switch: Some(switch),
        })));
    }
    if !config.appendonly() {
        st.rewrite = Some(Rewrite {
            started_ms,
            incr: String::new(),
            enabling: false,
            cancelled: false,
            switched: true,
        });
        return Ok(None);
    }
    // Being turned on: the writer starts on a temporary incr file, named
    // in the manifest only once the base is written.
    let temp = format!("temp-{prefix}.incr");
    let file = std::fs::File::create(dir.join(&temp))?;
    log::info!("Creating AOF incr file {temp} on background rewrite");
    let (writer, epoch) = start_writer(shared, &mut st, file)?;
    st.rewrite = Some(Rewrite {
        started_ms,
        incr: temp,
        enabling: true,
        cancelled: false,
        switched: true,
    });
    Ok(Some(Box::new(AofSink {
        writer,
        epoch,
        current: Arc::clone(&st.current),
        switch: None,
    })))
}

/// The rewrite's snapshot is complete (`parts`; None: FLUSHALL dropped
/// it): writes the base and swaps the manifest, on a thread of its own.
pub fn snapshot_done(shared: &Arc<Shared>, parts: Option<Vec<Part>>) {
    let shared = Arc::clone(shared);
    let (child, ended) = shared.persist.take_child();
    let spawned = std::thread::Builder::new()
        .name("ember-aof-rewrite".into())
        .spawn({
            let shared = Arc::clone(&shared);
            move || finish_rewrite(&shared, parts, child, ended)
        });
    if let Err(e) = spawned {
        log::warn!("Can't rewrite append only file in background: {e}");
        end_rewrite(&shared, false);
    }
}

/// The longest a finished snapshot waits for its instant's switch (the
/// snapshot of a small keyspace can be done before the transaction that
/// started it has committed).
const SWITCH_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

fn finish_rewrite(
    shared: &Arc<Shared>,
    parts: Option<Vec<Part>>,
    child: Option<SaveChild>,
    ended: Option<std::process::ExitStatus>,
) {
    // The switch to the new incr file runs on the writer thread once the
    // starting transaction commits; the manifest may change here only
    // after it, or the old incr files would stay listed.
    let waited = std::time::Instant::now();
    loop {
        let switched = shared
            .aof
            .state()
            .rewrite
            .as_ref()
            .is_none_or(|rw| rw.switched || rw.cancelled);
        if switched || waited.elapsed() > SWITCH_WAIT {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let ok = match (parts, ended) {
        (_, Some(status)) => {
            // The save process was killed: the rewrite failed.
            log::warn!(
                "Background AOF rewrite {}",
                crate::persist::child::describe(status)
            );
            false
        }
        (None, None) => {
            // FLUSHALL (or a new rewrite) ended it, as it kills Redis's child.
            if let Some(child) = child {
                child.stop();
            }
            log::warn!("Background AOF rewrite terminated by signal 10");
            false
        }
        (Some(parts), None) => match write_base(shared, &parts, child) {
            Ok(()) => true,
            Err(e) => {
                log::warn!("Background AOF rewrite failed: {e}");
                false
            }
        },
    };
    end_rewrite(shared, ok);
}

/// Builds the base from the parts, writes it into place and swaps the
/// manifest; the history files go unless `aof-disable-auto-gc`.
fn write_base(
    shared: &Arc<Shared>,
    parts: &[Part],
    child: Option<SaveChild>,
) -> Result<(), String> {
    let config = &shared.config;
    let rdb = config.aof_use_rdb_preamble();
    let bytes = if rdb {
        base_rdb(shared, parts)
    } else {
        base_commands(shared, parts)?
    };
    let temp = format!("temp-rewriteaof-bg-{}.aof", std::process::id());
    let mut st = shared.aof.state();
    let Some(rw) = st.rewrite.as_ref() else {
        return Err("no rewrite".into());
    };
    if rw.cancelled {
        return Err("cancelled".into());
    }
    if !rw.switched {
        return Err("the new incr file was never opened".into());
    }
    let (incr, enabling) = (rw.incr.clone(), rw.enabling);
    let dir = st.dir.clone();
    let prefix = st.prefix.clone();
    let mut next: Manifest = st.manifest.clone();
    let base = next.new_base(&prefix, rdb);
    aof::write_atomically(
        &dir,
        &temp,
        &base,
        &bytes,
        config.aof_rewrite_incremental_fsync(),
        child,
    )
    .map_err(|e| {
        format!("Error trying to rename the temporary AOF base file {temp} into {base}: {e}")
    })?;
    log::info!("Background AOF rewrite terminated with success");
    log::info!("Successfully renamed the temporary AOF base file {temp} into {base}");
    if enabling {
        // Every older incr file is history; the temporary one, which the
        // writer has appended to since the instant, takes its real name.
        let name = next.new_incr(&prefix);
        next.retire_incrs_before(&name);
        std::fs::rename(dir.join(&incr), dir.join(&name)).map_err(|e| {
            format!("Error trying to rename the temporary AOF incr file {incr} into {name}: {e}")
        })?;
        log::info!("Successfully renamed the temporary AOF incr file {incr} into {name}");
    } else if incr.is_empty() {
        // The AOF is off: the base alone.
        let all: Vec<_> = std::mem::take(&mut next.incrs);
        for mut e in all {
            e.kind = aof::manifest::Kind::History;
            next.history.insert(0, e);
        }
    } else {
        next.retire_incrs_before(&incr);
    }
    aof::persist_manifest(&dir, &prefix, &next)
        .map_err(|e| format!("Can't write the AOF manifest file: {e}"))?;
    if !config.aof_disable_auto_gc() {
        delete_history(&dir, &prefix, &mut next)?;
    }
    st.manifest = next;
    st.rewrite_base_size = st.sizes().0;
    Ok(())
}

/// Deletes the history files `manifest` lists and writes it without them
/// (Redis's `aofDelHistoryFiles`).
fn delete_history(
    dir: &std::path::Path,
    prefix: &str,
    manifest: &mut Manifest,
) -> Result<(), String> {
    if manifest.history.is_empty() {
        return Ok(());
    }
    for old in manifest.take_history() {
        log::info!("Removing the history file {} in the background", old.name);
        let _ = std::fs::remove_file(dir.join(&old.name));
    }
    aof::persist_manifest(dir, prefix, manifest)
        .map_err(|e| format!("Can't write the AOF manifest file: {e}"))
}

/// The history files go now, unless `aof-disable-auto-gc` keeps them or a
/// rewrite is changing the manifest (its end deletes them): CONFIG SET
/// aof-disable-auto-gc no and DEBUG LOADAOF, as Redis's do.
pub fn gc_history(shared: &Shared) {
    if shared.config.aof_disable_auto_gc() || shared.aof.rewriting.load(Relaxed) {
        return;
    }
    let mut st = shared.aof.state();
    let (dir, prefix) = (st.dir.clone(), st.prefix.clone());
    if dir.as_os_str().is_empty() {
        return;
    }
    let mut next = st.manifest.clone();
    match delete_history(&dir, &prefix, &mut next) {
        Ok(()) => st.manifest = next,
        Err(line) => log::warn!("{line}"),
    }
}

/// The base as an RDB file marked `aof-base 1`.
fn base_rdb(shared: &Shared, parts: &[Part]) -> Vec<u8> {
    let config = &shared.config;
    let (dbs, version) = crate::persist::merge(parts, config.databases());
    let aux = crate::persist::file::Aux {
        ctime_s: now_ms() / 1000,
        used_mem: crate::util::memory::memory_stats().allocated,
        aof_base: true,
        repl: None,
    };
    let libraries = shared.libraries.all();
    let codes: Vec<&[u8]> = libraries.iter().map(|l| l.code.as_ref()).collect();
    crate::persist::file::build(&dbs, &codes, &aux, config.rdbchecksum(), version)
}

/// The base as commands (`aof-use-rdb-preamble no`): each key's value by
/// RESTORE of its DUMP payload (every type, exactly), strings by SET, with
/// the deadline as PEXPIREAT; the function libraries by FUNCTION RESTORE.
fn base_commands(shared: &Shared, parts: &[Part]) -> Result<Vec<u8>, String> {
    use crate::exec::feed::write_command;
    let rdb = base_rdb(shared, parts);
    let opts = super::save::load_options(shared, true);
    let mut out = Vec::new();
    if shared.config.aof_timestamp_enabled() {
        out.extend_from_slice(format!("#TS:{}\r\n", now_ms() / 1000).as_bytes());
    }
    let mut selected = None;
    let b = |s: &str| Bytes::copy_from_slice(s.as_bytes());
    let loaded = crate::persist::file::load(&rdb, &opts, |db, key, value, at| {
        if selected != Some(db) {
            write_command(&mut out, &[b("SELECT"), b(&db.to_string())]);
            selected = Some(db);
        }
        let key = Bytes::copy_from_slice(key);
        match &value {
            crate::store::Value::Str(s) => {
                write_command(&mut out, &[b("SET"), key.clone(), s.to_bytes()]);
            }
            other => {
                let payload = crate::store::rdb::dump(other);
                write_command(
                    &mut out,
                    &[
                        b("RESTORE"),
                        key.clone(),
                        b("0"),
                        payload.into(),
                        b("REPLACE"),
                    ],
                );
            }
        }
        if let Some(at) = at {
            write_command(&mut out, &[b("PEXPIREAT"), key, b(&at.to_string())]);
        }
    })
    .map_err(|e| e.to_string())?;
    if !loaded.libraries.is_empty() {
        let codes: Vec<&[u8]> = loaded.libraries.iter().map(|c| c.as_slice()).collect();
        let payload = crate::store::rdb::functions::dump(codes);
        let mut head = vec![b("FUNCTION"), b("RESTORE"), payload.into()];
        head.push(b("REPLACE"));
        let mut function = Vec::new();
        write_command(&mut function, &head);
        // After the timestamp, if there is one.
        let at = if out.starts_with(b"#TS:") {
            out.iter().position(|&c| c == b'\n').map_or(0, |i| i + 1)
        } else {
            0
        };
        out.splice(at..at, function);
    }
    Ok(out)
}

/// The rewrite is over: the status INFO shows, and a failed turn-on
/// turns the AOF off again.
fn end_rewrite(shared: &Arc<Shared>, ok: bool) {
    let now = now_ms();
    let mut retry = false;
    {
        let mut st = shared.aof.state();
        let rw = st.rewrite.take();
        if let Some(rw) = &rw {
            st.last_rewrite_time_s = (now.saturating_sub(rw.started_ms) / 1000) as i64;
            if !ok && rw.enabling && !rw.cancelled {
                // The AOF stays on its way to being on: the temporary incr
                // file goes and a new rewrite is scheduled, as Redis's
                // AOF_WAIT_REWRITE retries.
                retry = true;
                log::info!(
                    "Removing the temp incr aof file {} in the background",
                    rw.incr
                );
                let _ = std::fs::remove_file(st.dir.join(&rw.incr));
            }
        }
        let cancelled = rw.as_ref().is_some_and(|r| r.cancelled);
        if ok {
            st.rewrites += 1;
            st.consecutive_failures = 0;
            st.last_bgrewrite_ok = true;
            log::info!("Background AOF rewrite finished successfully");
        } else if !cancelled {
            st.consecutive_failures += 1;
            st.last_bgrewrite_ok = false;
            log::warn!("Background AOF rewrite terminated with error");
        }
    }
    if retry {
        stop(shared);
        shared.aof.scheduled.store(true, Relaxed);
    }
    shared.aof.rewriting.store(false, Relaxed);
}

/// INFO persistence's AOF fields, in Redis 7.0's order.
pub fn info_fields(shared: &Shared) -> Vec<(&'static str, String)> {
    let aof = &shared.aof;
    let st = aof.state();
    let stats: &Stats = &aof.stats;
    let on = shared.config.appendonly();
    let rewriting = aof.rewriting.load(Relaxed);
    let current = st.rewrite.as_ref().map_or(-1, |rw| {
        (now_ms().saturating_sub(rw.started_ms) / 1000) as i64
    });
    let last_time = if st.rewrites == 0 && st.consecutive_failures == 0 {
        -1
    } else {
        st.last_rewrite_time_s
    };
    let ok = |b: bool| if b { "ok" } else { "err" }.to_string();
    let mut out = vec![
        ("aof_enabled", u8::from(on).to_string()),
        ("aof_rewrite_in_progress", u8::from(rewriting).to_string()),
        (
            "aof_rewrite_scheduled",
            u8::from(aof.scheduled.load(Relaxed)).to_string(),
        ),
        ("aof_last_rewrite_time_sec", last_time.to_string()),
        ("aof_current_rewrite_time_sec", current.to_string()),
        (
            "aof_last_bgrewrite_status",
            ok(st.last_bgrewrite_ok || st.rewrites + st.consecutive_failures == 0),
        ),
        ("aof_rewrites", st.rewrites.to_string()),
        (
            "aof_rewrites_consecutive_failures",
            st.consecutive_failures.to_string(),
        ),
        (
            "aof_last_write_status",
            ok(!stats.write_failed.load(Relaxed)),
        ),
        (
            "aof_last_cow_size",
            aof.last_cow_size.load(Relaxed).to_string(),
        ),
        ("module_fork_in_progress", "0".into()),
        ("module_fork_last_cow_size", "0".into()),
    ];
    if on {
        let (current_size, base_size) = st.sizes();
        out.extend([
            ("aof_current_size", current_size.to_string()),
            ("aof_base_size", base_size.to_string()),
            (
                "aof_pending_rewrite",
                u8::from(aof.scheduled.load(Relaxed)).to_string(),
            ),
            (
                "aof_buffer_length",
                stats.buffered.load(Relaxed).to_string(),
            ),
            (
                "aof_pending_bio_fsync",
                u8::from(stats.fsync_running.load(Relaxed)).to_string(),
            ),
            (
                "aof_delayed_fsync",
                stats.delayed_fsync.load(Relaxed).to_string(),
            ),
        ]);
    }
    out
}

/// INFO persistence's `loading_*` fields while the start-up load runs.
pub fn loading_fields(shared: &Shared) -> Vec<(&'static str, String)> {
    let aof = &shared.aof;
    let start = aof.loading_start_s.load(Relaxed);
    let total = aof.loading_total.load(Relaxed);
    let done = aof.loading_done.load(Relaxed).min(total);
    let perc = if total == 0 {
        0.0
    } else {
        done as f64 * 100.0 / total as f64
    };
    let elapsed = (now_ms() / 1000).saturating_sub(start);
    let eta = ((total - done) * elapsed).checked_div(done).unwrap_or(1);
    vec![
        ("loading_start_time", start.to_string()),
        ("loading_total_bytes", total.to_string()),
        (
            "loading_rdb_used_mem",
            aof.loading_used_mem.load(Relaxed).to_string(),
        ),
        ("loading_loaded_bytes", done.to_string()),
        ("loading_loaded_perc", format!("{perc:.2}")),
        ("loading_eta_seconds", eta.to_string()),
    ]
}

/// Whether the automatic rewrite (or a scheduled one) should start now;
/// asked once a second by the rules thread.
pub fn rewrite_due(shared: &Shared) -> bool {
    if shared.aof.rewriting.load(Relaxed) || shared.persist.bgsave_in_progress.load(Relaxed) {
        return false;
    }
    let scheduled = shared.aof.scheduled.load(Relaxed);
    if !scheduled && !shared.config.appendonly() {
        return false;
    }
    let mut st = shared.aof.state();
    let growth = if scheduled || st.writer.is_none() {
        None
    } else {
        let (percentage, min_size) = shared.config.auto_aof_rewrite();
        let (current, _) = st.sizes();
        let base = st.rewrite_base_size;
        aof::auto_rewrite_due(current, base, percentage, min_size)
            .then(|| current.saturating_sub(base) * 100 / base.max(1))
    };
    if !scheduled && growth.is_none() {
        return false;
    }
    // Only a rewrite that would start now meets the limit, as in Redis.
    let failures = st.consecutive_failures;
    let (limited, minutes) = st.limit.check(failures, now_ms() / 1000);
    if let Some(minutes) = minutes {
        log::warn!("Background AOF rewrite has repeatedly failed and triggered the limit, will retry in {minutes} minutes");
    }
    if limited {
        return false;
    }
    if let Some(growth) = growth {
        log::info!("Starting automatic rewriting of AOF on {growth}% growth");
    }
    true
}

/// Starts the writer on `file` as the current one, in a new epoch.
fn start_writer(
    shared: &Arc<Shared>,
    st: &mut aof::State,
    file: std::fs::File,
) -> std::io::Result<(Arc<Writer>, u64)> {
    let writer = Arc::new(Writer::start(
        file,
        settings(shared),
        Arc::clone(&shared.aof.stats),
    )?);
    let epoch = st.epoch();
    st.current.store(epoch, Relaxed);
    st.writer = Some(Arc::clone(&writer));
    Ok((writer, epoch))
}

/// After the start-up load: the writer appends to the last incr file
/// (made, and named in the manifest, if there is none) from now on.
pub fn attach_at_start(shared: &Arc<Shared>) -> std::io::Result<()> {
    let mut st = shared.aof.state();
    let dir = st.dir.clone();
    let prefix = st.prefix.clone();
    let before = st.manifest.incrs.len();
    let name = st.manifest.last_incr(&prefix);
    let file = aof::open_append(&dir.join(&name))?;
    if st.manifest.incrs.len() != before {
        aof::persist_manifest(&dir, &prefix, &st.manifest)?;
    }
    let (writer, epoch) = start_writer(shared, &mut st, file)?;
    let sink = AofSink {
        writer,
        epoch,
        current: Arc::clone(&st.current),
        switch: None,
    };
    st.sink = Some(shared.feed.attach(Box::new(sink)));
    st.rewrite_base_size = st.sizes().0;
    Ok(())
}

/// A key read from a file: database, name, value, deadline.
type LoadedKey = (usize, Vec<u8>, crate::store::Value, Option<u64>);

/// The commands of the files, each given to the shard that owns its keys
/// (every shard for FLUSHALL, FLUSHDB and SWAPDB), in file order, with the
/// database the file had selected. MULTI/EXEC are dropped: the reload
/// holds every shard, so nothing comes between. A command whose keys lie
/// on several shards (a file redis-server wrote: MSET a b ...) is split
/// per key where that means the same (MSET, MSETNX of fresh keys, DEL,
/// UNLINK), else it is skipped with a warning.
fn steps_by_shard(commands: &[(String, Vec<u8>)], nshards: usize) -> Vec<Vec<(usize, Vec<Bytes>)>> {
    use super::table::Route;
    let mut steps: Vec<Vec<(usize, Vec<Bytes>)>> = (0..nshards).map(|_| Vec::new()).collect();
    let mut db = 0usize;
    for (_, resp) in commands {
        for words in aof::commands::split(resp) {
            let argv: Vec<Bytes> = words.iter().map(|w| Bytes::copy_from_slice(w)).collect();
            let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
            match name.as_str() {
                "select" => {
                    db = argv
                        .get(1)
                        .and_then(|d| std::str::from_utf8(d).ok()?.parse().ok())
                        .unwrap_or(db);
                    continue;
                }
                "multi" | "exec" => continue,
                _ => {}
            }
            let Some(spec) = super::lookup(&argv[0]) else {
                continue;
            };
            match spec.route {
                Route::EveryShard(..) => {
                    for s in steps.iter_mut() {
                        s.push((db, argv.clone()));
                    }
                }
                Route::Keyed(..) => {
                    let owners: Vec<usize> = spec
                        .key_positions(&argv)
                        .map(|p| super::shard_of(&argv[p], nshards))
                        .collect();
                    let one = owners.first().copied().unwrap_or(0);
                    if owners.iter().all(|&s| s == one)
                        && !spec.reaches_unnamed_keys(&argv, nshards)
                    {
                        steps[one].push((db, argv));
                        continue;
                    }
                    match name.as_str() {
                        "mset" | "msetnx" => {
                            for pair in argv[1..].chunks_exact(2) {
                                let s = super::shard_of(&pair[0], nshards);
                                steps[s].push((
                                    db,
                                    vec![
                                        Bytes::from_static(b"SET"),
                                        pair[0].clone(),
                                        pair[1].clone(),
                                    ],
                                ));
                            }
                        }
                        "del" | "unlink" => {
                            for key in &argv[1..] {
                                let s = super::shard_of(key, nshards);
                                steps[s].push((db, vec![argv[0].clone(), key.clone()]));
                            }
                        }
                        _ => log::warn!(
                            "DEBUG LOADAOF: skipped '{name}', whose keys are on several shards"
                        ),
                    }
                }
                Route::Conn(_) => {}
            }
        }
    }
    steps
}

/// DEBUG LOADAOF: writes and syncs what the writer holds, empties every
/// shard and loads the append-only files back, all inside one transaction
/// over every shard (as DEBUG RELOAD does with the RDB file). Nothing the
/// reload does is appended to the AOF again.
pub fn debug_loadaof(shard: &ShardData) -> Action {
    let shared = Arc::clone(&shard.shared);
    let writer = shared.aof.state().writer.clone();
    if let Some(writer) = &writer {
        writer.flush();
    }
    let (dir, manifest) = {
        let mut st = shared.aof.state();
        // The manifest is read back from disk, as Redis's DEBUG LOADAOF
        // does: the sequence numbers given out next follow the files it
        // lists (none listed, the next incr file is number 1 again).
        if st.rewrite.is_none() {
            let path = st.dir.join(aof::manifest_name(&st.prefix));
            if let Some(m) = std::fs::read(path)
                .ok()
                .and_then(|text| Manifest::parse(&text).ok())
            {
                st.manifest = m;
            }
        }
        (st.dir.clone(), st.manifest.clone())
    };
    gc_history(&shared);
    let manifest = {
        let st = shared.aof.state();
        if st.rewrite.is_none() {
            st.manifest.clone()
        } else {
            manifest
        }
    };
    let n = shared.nshards;
    let opts = super::save::load_options(&shared, true);
    let mut per_shard: Vec<Vec<LoadedKey>> = (0..n).map(|_| Vec::new()).collect();
    let read = if manifest.is_empty() {
        Err(vec!["DEBUG LOADAOF: no append-only file".to_string()])
    } else {
        aof::read_files(
            &dir,
            &manifest,
            &opts,
            shared.config.aof_load_truncated(),
            |name| super::lookup(name).is_some(),
            |db, key, value, at| {
                per_shard[super::shard_of(key, n)].push((db, key.to_vec(), value, at));
            },
        )
    };
    let read = match read {
        Ok(read) => read,
        Err(lines) => {
            for line in lines {
                log::warn!("{line}");
            }
            return err::frame("ERR Error loading the AOF").into();
        }
    };
    let generation = shared.scripts.generation();
    let restored =
        super::scripting::functions::libraries_of(generation, read.libraries).and_then(|libs| {
            shared
                .libraries
                .restore(libs, crate::exec::scripts::RestorePolicy::Flush)
                .map_err(|e| format!("ERR {e}"))
        });
    if let Err(e) = restored {
        log::warn!("DEBUG LOADAOF: {e}");
        return err::frame("ERR Error loading the AOF").into();
    }
    let mut steps = steps_by_shard(&read.commands, n).into_iter();
    let ops = per_shard
        .into_iter()
        .enumerate()
        .map(|(s, keys)| {
            let steps = steps.next().unwrap_or_default();
            let op = move |ctx: &mut super::Ctx| {
                reload_shard(ctx, keys, &steps);
                Out::Count(ctx.shard.store.stats.notify.dirty as i64)
            };
            (s, Op::store(0, op))
        })
        .collect();
    let plan = (0..n).map(|s| (s, Need::Whole)).collect();
    let done = Arc::clone(&shared);
    // Loading until the reload is over, as Redis is: other clients get
    // LOADING from a slow script's busy passes meanwhile (`cmd::busy`).
    shared.aof.loading_start_s.store(now_ms() / 1000, Relaxed);
    shared.aof.loading.store(true, Relaxed);
    Action::Job(
        Job::new(ops, move |outs| {
            done.aof.loading.store(false, Relaxed);
            // What was loaded is what the files hold: no change since a
            // save (Redis's `server.dirty = 0` after DEBUG LOADAOF).
            let changes = outs.iter().fold(0u64, |sum, o| match o {
                Out::Count(n) => sum.wrapping_add(*n as u64),
                _ => sum,
            });
            done.persist.update(|s| s.changes_at_save = changes);
            log::info!("DB reloaded by DEBUG LOADAOF");
            Action::Reply(Frame::OK)
        })
        .locked(plan),
    )
}

/// One shard's part of DEBUG LOADAOF: empty, the base's keys, the
/// commands; what they record for the feed is dropped.
fn reload_shard(ctx: &mut super::Ctx, keys: Vec<LoadedKey>, steps: &[(usize, Vec<Bytes>)]) {
    use super::table::Route;
    {
        let store = &mut ctx.shard.store;
        let now = ctx.shard.now_ms;
        store.empty_every_db();
        for (db, key, value, at) in keys {
            store.dbs[db].insert_raw(&key, value, at, now);
        }
    }
    let databases = ctx.shard.store.dbs.len();
    for (db, argv) in steps {
        if *db >= databases {
            continue;
        }
        let Some(spec) = super::lookup(&argv[0]) else {
            continue;
        };
        let mut c = super::Ctx::new(&mut *ctx.shard, *db);
        match spec.route {
            Route::Keyed(handler, _) => {
                let _ = super::propagate::call(&mut c, handler, argv);
            }
            Route::EveryShard(handler, _) => {
                let _ = handler(&mut c, argv);
            }
            Route::Conn(_) => {}
        }
    }
    drop(ctx.shard.store.stats.propagate.take());
}
