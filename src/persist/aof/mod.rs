//! The append-only file in Redis 7.0's multi-part layout, so redis-server
//! loads ember's `appendonlydir` and ember loads redis-server's.
//!
//! ```text
//!   dir/appenddirname/
//!     appendonly.aof.manifest        which files, in which order (manifest)
//!     appendonly.aof.3.base.rdb      the keyspace at the last rewrite's instant
//!     appendonly.aof.3.incr.aof      every write since that instant, as RESP
//! ```
//!
//! - The writer ([`writer`]) is a reader of the propagation feed: the
//!   shards hand it whole units (SELECT, MULTI/EXEC, absolute deadlines,
//!   DEL for expired and evicted keys) and its thread writes and syncs them.
//! - A rewrite (`cmd::aof`) takes a fork-less snapshot of every shard at
//!   one instant; the new incr file starts at exactly that instant of the
//!   stream; when the base is written the manifest is swapped (temporary
//!   file, rename, directory sync) and the old files become history.
//! - At start-up the base is read into the shards' stores like an RDB file
//!   and the commands of the incr files ([`commands`]) are replayed through
//!   the shards (`shard::persist`).
//!
//! This module holds the files and their state; the commands and the
//! feed's side are in `cmd::aof`.

pub mod commands;
pub mod manifest;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};

pub use manifest::Manifest;

/// The process-wide AOF state, in `exec::Shared`.
#[derive(Default)]
pub struct Aof {
    /// The start-up load is running (of `dbfilename`, or of the AOF's
    /// base and then its replay): clients other than the loader get
    /// `-LOADING` (INFO `loading:1`). The one loading state of the
    /// server, whichever file loads (`shard::loading`).
    pub loading: AtomicBool,
    /// The address (as the server sees it) of the loopback connection
    /// that replays the incr files at start-up.
    pub loader_addr: Mutex<String>,
    /// A rewrite runs (`aof_rewrite_in_progress`).
    pub rewriting: AtomicBool,
    /// A rewrite waits for a background save to end (`aof_rewrite_scheduled`).
    pub scheduled: AtomicBool,
    pub stats: Arc<writer::Stats>,
    /// The start-up load's progress (INFO `loading_*`): Unix seconds it
    /// started, the bytes to load (the RDB file, or the AOF's base and
    /// commands) and those loaded so far, and the `used-mem` the RDB
    /// file says its writer had.
    pub loading_start_s: AtomicU64,
    pub loading_total: AtomicU64,
    pub loading_done: AtomicU64,
    pub loading_used_mem: AtomicU64,
    /// What the last rewrite's snapshot copied before writes changed
    /// keys (`aof_last_cow_size`).
    pub last_cow_size: AtomicU64,
    state: Mutex<State>,
}

/// What the AOF is doing, under one lock.
#[derive(Default)]
pub struct State {
    pub manifest: Manifest,
    /// `dir/appenddirname`.
    pub dir: PathBuf,
    /// `appendfilename`: the files' names start with it.
    pub prefix: String,
    pub writer: Option<Arc<writer::Writer>>,
    /// The feed's id of the sink appending to `writer`.
    pub sink: Option<u64>,
    /// Which sink writes: a rewrite's new sink takes over at its instant
    /// by storing its own number here (`cmd::aof`).
    pub current: Arc<AtomicU64>,
    pub next_epoch: u64,
    /// The size of all the files at the last rewrite or load, which the
    /// automatic rewrite measures growth against.
    pub rewrite_base_size: u64,
    /// The running rewrite.
    pub rewrite: Option<Rewrite>,
    /// A rewrite that ended while running was stopped (`appendonly no`).
    pub last_rewrite_time_s: i64,
    pub last_bgrewrite_ok: bool,
    pub rewrites: u64,
    pub consecutive_failures: u64,
    /// The back-off of automatic and scheduled rewrites after failures.
    pub limit: RewriteLimit,
}

/// Redis's limit on rewrites that keep failing (`aofRewriteLimited`):
/// after [`LIMIT_THRESHOLD`] failures in a row, automatic and scheduled
/// rewrites wait 1 minute, then 2, 4, ... up to [`LIMIT_MAX_MINUTES`];
/// BGREWRITEAOF still runs at once. A success (failures back under the
/// threshold) resets it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RewriteLimit {
    delay_minutes: u64,
    /// Unix seconds before which rewrites wait (0: not waiting).
    until_s: u64,
}

/// Failures in a row that start the limit.
pub const LIMIT_THRESHOLD: u64 = 3;
/// The longest wait, in minutes.
pub const LIMIT_MAX_MINUTES: u64 = 60;

impl RewriteLimit {
    /// Whether a rewrite must wait now, after `failures` in a row; the
    /// minutes of a wait that starts with this call (to log).
    pub fn check(&mut self, failures: u64, now_s: u64) -> (bool, Option<u64>) {
        if failures < LIMIT_THRESHOLD {
            *self = RewriteLimit::default();
            return (false, None);
        }
        if self.until_s != 0 {
            if now_s < self.until_s {
                return (true, None);
            }
            self.until_s = 0;
            return (false, None);
        }
        self.delay_minutes = (self.delay_minutes * 2).clamp(1, LIMIT_MAX_MINUTES);
        self.until_s = now_s + self.delay_minutes * 60;
        (true, Some(self.delay_minutes))
    }
}

/// A rewrite under way.
pub struct Rewrite {
    pub started_ms: u64,
    /// The incr file opened at the rewrite's instant (in the manifest
    /// already when the AOF was on; a temporary name when it was being
    /// turned on).
    pub incr: String,
    /// The AOF is being turned on by this rewrite (CONFIG SET appendonly
    /// yes): the manifest is written only when it succeeds.
    pub enabling: bool,
    /// `appendonly no` came meanwhile: the result is thrown away.
    pub cancelled: bool,
    /// The new incr file is open and in the manifest (the switch ran at
    /// the instant): the base may replace what came before only then.
    pub switched: bool,
}

impl Aof {
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn is_loading(&self) -> bool {
        self.loading.load(Relaxed)
    }
}

impl State {
    /// A new sink number.
    pub fn epoch(&mut self) -> u64 {
        self.next_epoch += 1;
        self.next_epoch
    }

    /// The bytes of the base and incr files (`aof_current_size`) and of
    /// the base alone (`aof_base_size`).
    pub fn sizes(&self) -> (u64, u64) {
        let size = |name: &str| std::fs::metadata(self.dir.join(name)).map_or(0, |m| m.len());
        let base = self.manifest.base.as_ref().map_or(0, |b| size(&b.name));
        let incrs: u64 = self.manifest.incrs.iter().map(|e| size(&e.name)).sum();
        (base + incrs, base)
    }
}

/// `dir/appenddirname`.
pub fn dir_path(dir: &str, dirname: &str) -> PathBuf {
    Path::new(dir).join(dirname)
}

/// `<prefix>.manifest`.
pub fn manifest_name(prefix: &str) -> String {
    format!("{prefix}.manifest")
}

/// Writes the manifest as Redis does: `temp_<name>`, synced, renamed over
/// the manifest, and the directory synced so the rename survives a crash.
pub fn persist_manifest(dir: &Path, prefix: &str, m: &Manifest) -> std::io::Result<()> {
    write_atomically(
        dir,
        &format!("temp_{}", manifest_name(prefix)),
        &manifest_name(prefix),
        m.to_text().as_bytes(),
        false,
        None,
    )
}

/// Writes `bytes` to `temp` in `dir`, synced (every 4 MB too when
/// `incremental`), then renames it to `name` and syncs the directory;
/// the save process writes the file when there is one (`child`).
pub fn write_atomically(
    dir: &Path,
    temp: &str,
    name: &str,
    bytes: &[u8],
    incremental: bool,
    child: Option<crate::persist::child::SaveChild>,
) -> std::io::Result<()> {
    let temp_path = dir.join(temp);
    let result = (|| {
        crate::persist::disk::write_temp(&temp_path, bytes, incremental, child)?;
        std::fs::rename(&temp_path, dir.join(name))?;
        sync_dir(dir);
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp_path);
    }
    result
}

/// Makes a rename or a new file in `dir` durable.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Opens (creating) a file of the log to append to.
pub fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// The files found at start-up, as Redis 7.0 finds them.
#[derive(Debug)]
pub enum Found {
    /// No AOF at all: a new one is made (an empty base, incr 1).
    Nothing,
    Manifest(Manifest),
}

/// Reads `dir/appenddirname/<prefix>.manifest`; a legacy single file
/// `dir/<prefix>` (Redis before 7.0) is moved into the directory first and
/// named as the base, as Redis 7 upgrades it. Errors are the lines to log.
pub fn find(root: &Path, dirname: &str, prefix: &str) -> Result<Found, Vec<String>> {
    let dir = root.join(dirname);
    let legacy = root.join(prefix);
    let manifest_path = dir.join(manifest_name(prefix));
    let read = |path: &Path| -> Result<Option<Manifest>, Vec<String>> {
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(vec![format!(
                    "Fatal error: can't open the AOF manifest file {} for reading: {e}",
                    manifest_name(prefix)
                )])
            }
        };
        Manifest::parse(&text).map(Some).map_err(|e| {
            let mut lines = vec!["*** FATAL AOF MANIFEST FILE ERROR ***".to_string()];
            if let Some((n, line)) = &e.line {
                lines.push(format!("Reading the manifest file, at line {n}"));
                lines.push(format!(">>> '{line}'"));
            }
            lines.push(e.what.to_string());
            lines
        })
    };
    let manifest = if dir.is_dir() {
        read(&manifest_path)?
    } else {
        None
    };
    let legacy_upgrade = legacy.is_file()
        && match &manifest {
            None => true,
            Some(m) => {
                m.is_empty()
                    || (m.incrs.is_empty()
                        && m.base.as_ref().is_some_and(|b| b.name == prefix)
                        && !dir.join(prefix).exists())
            }
        };
    if legacy_upgrade {
        return upgrade(root, &dir, prefix).map(Found::Manifest);
    }
    Ok(match manifest {
        Some(m) if !m.is_empty() => Found::Manifest(m),
        Some(m) if !m.history.is_empty() => Found::Manifest(m),
        _ => Found::Nothing,
    })
}

/// Moves a Redis 6 `appendonly.aof` into the directory as the base of a
/// new manifest (written first, so a crash between leaves the old file
/// where Redis 6 and this upgrade both find it).
fn upgrade(root: &Path, dir: &Path, prefix: &str) -> Result<Manifest, Vec<String>> {
    let fail = |what: String| vec![what];
    std::fs::create_dir_all(dir).map_err(|e| {
        fail(format!(
            "Can't open or create append-only dir {}: {e}",
            dir.display()
        ))
    })?;
    let m = Manifest {
        base: Some(manifest::Entry {
            name: prefix.to_string(),
            seq: 1,
            kind: manifest::Kind::Base,
        }),
        base_seq: 1,
        ..Manifest::default()
    };
    persist_manifest(dir, prefix, &m).map_err(|e| {
        fail(format!(
            "Can't write the AOF manifest file {}: {e}",
            manifest_name(prefix)
        ))
    })?;
    std::fs::rename(root.join(prefix), dir.join(prefix)).map_err(|e| {
        fail(format!(
            "Error trying to move the old AOF file {prefix} into dir {}: {e}",
            dir.display()
        ))
    })?;
    sync_dir(dir);
    log::info!(
        "Successfully migrated an old-style AOF file ({prefix}) into the AOF directory ({}).",
        dir.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    );
    Ok(m)
}

/// The total size of the files a manifest names, in `dir`.
pub fn files_size(dir: &Path, m: &Manifest) -> u64 {
    m.to_load()
        .map(|e| std::fs::metadata(dir.join(&e.name)).map_or(0, |md| md.len()))
        .sum()
}

/// Whether a rewrite should start by itself: the files grew by
/// `percentage` over `base` (the size at the last rewrite or load) and
/// are at least `min_size`, as Redis's `serverCron` checks.
pub fn auto_rewrite_due(current: u64, base: u64, percentage: u64, min_size: u64) -> bool {
    if percentage == 0 || current < min_size {
        return false;
    }
    let base = base.max(1);
    let growth = (current.saturating_sub(base)) * 100 / base;
    current > base && growth >= percentage
}

/// Whether a write error of the writer refuses writes: `MISCONF` with
/// the error, as Redis answers while its AOF cannot be written.
pub fn write_error(aof: &Aof) -> Option<String> {
    if !aof.stats.write_failed.load(Relaxed) {
        return None;
    }
    let why = aof
        .stats
        .last_error
        .lock()
        .map_or_else(|_| String::new(), |e| e.clone());
    Some(format!("MISCONF Errors writing to the AOF file: {why}"))
}

/// What reading the files of a manifest found.
#[derive(Debug, Default)]
pub struct Read {
    /// Each file's name and its commands as clean RESP (none for a file
    /// that is only an RDB base).
    pub commands: Vec<(String, Vec<u8>)>,
    /// The code of the function libraries of the RDB base.
    pub libraries: Vec<Vec<u8>>,
    pub keys_loaded: u64,
    pub keys_expired: u64,
    /// The bytes of commands to replay.
    pub command_bytes: u64,
}

/// Reads the files `m` lists in `dir` as Redis 7.0 loads them: an RDB base
/// (or RDB preamble) gives its keys to `key`; every file's commands are
/// read and checked. A torn end of the last file is truncated there when
/// `truncate` (`aof-load-truncated yes`). Errors are the lines to log.
pub fn read_files(
    dir: &Path,
    m: &Manifest,
    opts: &super::LoadOptions,
    truncate: bool,
    known: impl Fn(&[u8]) -> bool,
    mut key: impl FnMut(usize, &[u8], crate::store::Value, Option<u64>),
) -> Result<Read, Vec<String>> {
    let entries: Vec<&manifest::Entry> = m.to_load().collect();
    let mut out = Read::default();
    for (i, entry) in entries.iter().enumerate() {
        let last = i + 1 == entries.len();
        let name = &entry.name;
        let path = dir.join(name);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(vec![format!(
                    "The append log file {name} doesn't exist: {e}"
                )])
            }
            Err(e) => {
                return Err(vec![format!(
                    "Fatal error: can't open the append log file {name} for reading: {e}"
                )])
            }
        };
        if bytes.is_empty() {
            continue;
        }
        let started = std::time::Instant::now();
        let mut from = 0;
        if is_rdb(&bytes) {
            log::info!("Reading RDB preamble from AOF file...");
            let loaded = super::file::load(&bytes, opts, &mut key).map_err(|e| {
                vec![
                    e.to_string(),
                    format!(
                        "Error reading the RDB preamble of the AOF file {name}, AOF loading aborted"
                    ),
                ]
            })?;
            out.libraries.extend(loaded.libraries);
            out.keys_loaded += loaded.keys_loaded;
            out.keys_expired += loaded.keys_expired;
            from = loaded.size;
            if from < bytes.len() {
                log::info!("Reading the remaining AOF tail...");
            }
        }
        let scanned = commands::scan(&bytes, from, &known);
        match scanned.end {
            commands::End::Complete => {}
            commands::End::Truncated { valid_up_to, multi } => {
                if multi {
                    log::warn!("Revert incomplete MULTI/EXEC transaction in AOF file {name}");
                }
                if !(last && truncate) {
                    return Err(vec![format!("Unexpected end of file reading the append only file {name}. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server.")]);
                }
                log::warn!("!!! Warning: short read while loading the AOF file {name}!!!");
                log::warn!("!!! Truncating the AOF {name} at offset {valid_up_to} !!!");
                let cut = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .and_then(|f| f.set_len(valid_up_to as u64).and_then(|()| f.sync_all()));
                if let Err(e) = cut {
                    return Err(vec![format!("Error truncating the AOF file {name}: {e}")]);
                }
                log::warn!("AOF {name} loaded anyway because aof-load-truncated is enabled");
            }
            commands::End::BadFormat { .. } => {
                return Err(vec![format!("Bad file format reading the append only file {name}: make a backup of your AOF file, then use ./redis-check-aof --fix <filename>")]);
            }
            commands::End::Unknown { name: command } => {
                return Err(vec![format!(
                    "Unknown command '{command}' reading the append only file {name}"
                )]);
            }
        }
        if scanned.resp.is_empty() {
            let kind = if entry.kind == manifest::Kind::Base {
                "base"
            } else {
                "incr"
            };
            log::info!(
                "DB loaded from {kind} file {name}: {:.3} seconds",
                started.elapsed().as_secs_f64()
            );
        } else {
            out.command_bytes += scanned.resp.len() as u64;
            out.commands.push((name.clone(), scanned.resp));
        }
    }
    Ok(out)
}

/// Redis's first bytes of an RDB file: a base, or an AOF with a preamble.
pub fn is_rdb(bytes: &[u8]) -> bool {
    bytes.starts_with(b"REDIS")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_root(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("ember-aof-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        root
    }

    #[test]
    fn rewrites_failing_in_a_row_wait_one_minute_then_twice_as_long() {
        let mut limit = RewriteLimit::default();
        assert_eq!(limit.check(2, 1000), (false, None));
        assert_eq!(limit.check(3, 1000), (true, Some(1)));
        assert_eq!(limit.check(3, 1059), (true, None));
        // The wait is over: one try, then a wait twice as long.
        assert_eq!(limit.check(3, 1060), (false, None));
        assert_eq!(limit.check(4, 1061), (true, Some(2)));
        for _ in 0..10 {
            limit.until_s = 0;
            limit.check(5, 2000);
        }
        assert_eq!(limit.delay_minutes, LIMIT_MAX_MINUTES);
        // A success resets it.
        assert_eq!(limit.check(0, 3000), (false, None));
        assert_eq!(limit, RewriteLimit::default());
    }

    #[test]
    fn the_automatic_rewrite_waits_for_growth_and_size() {
        assert!(!auto_rewrite_due(100, 100, 100, 0));
        assert!(auto_rewrite_due(200, 100, 100, 0));
        assert!(!auto_rewrite_due(200, 100, 100, 1000), "under the minimum");
        assert!(!auto_rewrite_due(10_000, 100, 0, 0), "0: never");
        assert!(auto_rewrite_due(64, 0, 100, 64));
    }

    #[test]
    fn a_legacy_file_is_moved_in_as_the_base() {
        let root = temp_root("legacy");
        std::fs::write(root.join("appendonly.aof"), b"*1\r\n$4\r\nPING\r\n").unwrap();
        let Found::Manifest(m) = find(&root, "appendonlydir", "appendonly.aof").unwrap() else {
            panic!("no manifest");
        };
        assert_eq!(m.to_text(), "file appendonly.aof seq 1 type b\n");
        assert!(root.join("appendonlydir/appendonly.aof").is_file());
        assert!(!root.join("appendonly.aof").exists());
        let again = find(&root, "appendonlydir", "appendonly.aof").unwrap();
        assert!(matches!(again, Found::Manifest(m2) if m2 == m));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_bad_manifest_is_refused_and_none_is_nothing() {
        let root = temp_root("bad");
        assert!(matches!(
            find(&root, "appendonlydir", "appendonly.aof").unwrap(),
            Found::Nothing
        ));
        std::fs::create_dir_all(root.join("appendonlydir")).unwrap();
        std::fs::write(
            root.join("appendonlydir/appendonly.aof.manifest"),
            b"garbage\n",
        )
        .unwrap();
        let lines = find(&root, "appendonlydir", "appendonly.aof").unwrap_err();
        assert_eq!(lines[0], "*** FATAL AOF MANIFEST FILE ERROR ***");
        assert_eq!(lines.last().unwrap(), "Invalid AOF manifest file format");
        let m = {
            let mut m = Manifest::default();
            m.new_base("appendonly.aof", true);
            m.new_incr("appendonly.aof");
            m
        };
        persist_manifest(&root.join("appendonlydir"), "appendonly.aof", &m).unwrap();
        assert!(matches!(
            find(&root, "appendonlydir", "appendonly.aof").unwrap(),
            Found::Manifest(read) if read == m
        ));
        let _ = std::fs::remove_dir_all(&root);
    }
}
