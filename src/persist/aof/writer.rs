//! The append-only file's writer: one thread that writes what the shards
//! appended and syncs it as `appendfsync` says. No shard ever writes or
//! syncs the file itself.
//!
//! ```text
//!  shard threads (under the feed's lock)        writer thread
//!  ------------------------------------         -------------
//!  append(unit): copy into the queue,           wait for bytes (or 1 s)
//!   seq += 1, wake the writer                   take the whole queue
//!  (always: remember seq on this thread)        write(2) it to the incr file
//!                                               fsync: always -> now;
//!  before the shard sends replies or hops:       everysec -> once a second;
//!   wait until synced >= remembered seq          no -> never
//!                                               synced = seq; wake waiters
//! ```
//!
//! # The promise of `appendfsync always`
//!
//! A shard that appended a unit in a pass of its loop waits, before it
//! sends that pass's replies and hops ([`wait_here`]), until the writer has
//! written and synced everything up to that unit. So no client is
//! answered, and no other shard is told a write happened, before the write
//! is on disk. One fsync covers whatever every shard appended meanwhile
//! (group commit), so the cost is one fsync per busy pass, not per
//! command. The waiting shard serves nobody for that fsync; the other
//! shards go on.
//!
//! # Switching files
//!
//! A rewrite starts a new incr file at one instant of the stream: the
//! switch is queued at that point ([`Writer::switch`]), between two units,
//! and the writer opens the new file (and writes the manifest naming it)
//! when it gets there, after syncing the old one.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::config::AppendFsync;

/// What the writer reads of the configuration at each round.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub fsync: AppendFsync,
    /// `no-appendfsync-on-rewrite` while a rewrite runs: write, do not sync.
    pub skip_fsync: bool,
    /// `aof-timestamp-enabled`.
    pub timestamps: bool,
}

/// Opens the next incr file (and makes the manifest name it).
pub type Switch = Box<dyn FnOnce() -> std::io::Result<File> + Send>;

/// The writer's counters, for INFO persistence.
#[derive(Default)]
pub struct Stats {
    /// Bytes appended and not yet written (`aof_buffer_length`).
    pub buffered: AtomicU64,
    /// Bytes written to the incr files since the last rewrite or start.
    pub incr_written: AtomicU64,
    /// An fsync is running (`aof_pending_bio_fsync`).
    pub fsync_running: AtomicBool,
    /// Syncs that could not keep up with a second (`aof_delayed_fsync`).
    pub delayed_fsync: AtomicU64,
    /// The last write failed (`aof_last_write_status:err`).
    pub write_failed: AtomicBool,
    /// Why, for MISCONF.
    pub last_error: Mutex<String>,
}

struct Queue {
    bytes: Vec<u8>,
    /// Units appended so far.
    seq: u64,
    /// Switches to a new file, each at an offset of `bytes`.
    switches: Vec<(usize, Switch)>,
    stop: bool,
    /// The second of the last `#TS:` annotation.
    last_ts: u64,
}

struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
    /// The writer waits for bytes: only then does an append wake it (a
    /// wake-up is a system call; while the writer works, appends gather
    /// into its next round).
    idle: AtomicBool,
    /// The units written (and synced where the policy asks) so far.
    synced: Mutex<u64>,
    synced_cv: Condvar,
    settings: Box<dyn Fn() -> Settings + Send + Sync>,
    stats: Arc<Stats>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// DEBUG AOF-FLUSH-SLEEP: microseconds the writer sleeps before each
/// write, so Redis's tests can look at the file while a write is pending.
pub static FLUSH_SLEEP_US: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The writer and unit this thread must see synced before it answers
    /// (`appendfsync always`).
    static PENDING: RefCell<Option<(Arc<Shared>, u64)>> = const { RefCell::new(None) };
}

/// Waits until what this thread appended under `appendfsync always` is on
/// disk; returns at once when it appended nothing.
pub fn wait_here() {
    let Some((shared, seq)) = PENDING.with(|p| p.borrow_mut().take()) else {
        return;
    };
    let mut synced = lock(&shared.synced);
    while *synced < seq {
        let stopped = lock(&shared.queue).stop;
        if stopped {
            return;
        }
        synced = shared
            .synced_cv
            .wait_timeout(synced, Duration::from_millis(100))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// The handle the AOF keeps: append, switch files, stop.
pub struct Writer {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    /// Starts the writer thread appending to `file`.
    pub fn start(
        file: File,
        settings: Box<dyn Fn() -> Settings + Send + Sync>,
        stats: Arc<Stats>,
    ) -> std::io::Result<Writer> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                bytes: Vec::new(),
                seq: 0,
                switches: Vec::new(),
                stop: false,
                last_ts: 0,
            }),
            wake: Condvar::new(),
            idle: AtomicBool::new(false),
            synced: Mutex::new(0),
            synced_cv: Condvar::new(),
            settings,
            stats,
        });
        let run = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("ember-aof".into())
            .spawn(move || run_writer(&run, file))?;
        Ok(Writer {
            shared,
            thread: Some(thread),
        })
    }

    /// Appends one unit of the feed. Called on a shard's thread under the
    /// feed's lock: a copy into memory and a wake-up, never a write.
    pub fn append(&self, unit: &[u8]) {
        let settings = (self.shared.settings)();
        let seq = {
            let mut q = lock(&self.shared.queue);
            if settings.timestamps {
                let now_s = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                if now_s > q.last_ts {
                    q.last_ts = now_s;
                    let ts = format!("#TS:{now_s}\r\n");
                    q.bytes.extend_from_slice(ts.as_bytes());
                }
            }
            q.bytes.extend_from_slice(unit);
            q.seq += 1;
            self.shared
                .stats
                .buffered
                .store(q.bytes.len() as u64, Relaxed);
            q.seq
        };
        if self.shared.idle.swap(false, Relaxed) {
            self.shared.wake.notify_one();
        }
        if settings.fsync == AppendFsync::Always {
            let shared = Arc::clone(&self.shared);
            PENDING.with(|p| *p.borrow_mut() = Some((shared, seq)));
        }
    }

    /// From this point of the stream on, bytes go to the file `open`
    /// returns (run on the writer thread once everything before is
    /// written and synced).
    pub fn switch(&self, open: Switch) {
        let mut q = lock(&self.shared.queue);
        let at = q.bytes.len();
        q.switches.push((at, open));
        drop(q);
        self.shared.wake.notify_one();
    }

    /// Waits until everything appended so far is written and synced,
    /// switches included.
    pub fn flush(&self) {
        let seq = {
            let mut q = lock(&self.shared.queue);
            // A switch that keeps the file: the round syncs there.
            let at = q.bytes.len();
            q.switches.push((at, Box::new(|| Err(sync_marker()))));
            q.seq += 1;
            q.seq
        };
        self.shared.wake.notify_one();
        let mut synced = lock(&self.shared.synced);
        while *synced < seq {
            synced = self
                .shared
                .synced_cv
                .wait_timeout(synced, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
            if lock(&self.shared.queue).stop {
                return;
            }
        }
    }
}

impl Drop for Writer {
    /// Writes and syncs what is queued, then ends the thread.
    fn drop(&mut self) {
        lock(&self.shared.queue).stop = true;
        self.shared.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.shared.synced_cv.notify_all();
    }
}

/// The error a flush's marker "switch" returns: sync, keep the file.
fn sync_marker() -> std::io::Error {
    std::io::Error::other("ember-aof-sync-marker")
}

fn is_sync_marker(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Other && e.to_string() == "ember-aof-sync-marker"
}

/// Redis logs a write error at most this often (AOF_WRITE_LOG_ERROR_RATE).
const ERROR_LOG_EVERY: Duration = Duration::from_secs(30);
/// An everysec fsync that takes longer than this counts as delayed.
const FSYNC_SLOW: Duration = Duration::from_secs(2);

fn run_writer(shared: &Shared, mut file: File) {
    let mut last_fsync = Instant::now();
    let mut dirty = false;
    let mut last_error_log: Option<Instant> = None;
    loop {
        let (bytes, switches, seq, stop) = {
            let mut q = lock(&shared.queue);
            while q.bytes.is_empty() && q.switches.is_empty() && !q.stop {
                // Set under the queue's lock, so an append after this
                // sees it and wakes the wait below.
                shared.idle.store(true, Relaxed);
                let waited = shared
                    .wake
                    .wait_timeout(q, Duration::from_secs(1))
                    .unwrap_or_else(|e| e.into_inner());
                q = waited.0;
                if waited.1.timed_out() {
                    break;
                }
            }
            shared.idle.store(false, Relaxed);
            let bytes = std::mem::take(&mut q.bytes);
            shared.stats.buffered.store(0, Relaxed);
            (bytes, std::mem::take(&mut q.switches), q.seq, q.stop)
        };
        let settings = (shared.settings)();
        let mut from = 0;
        let pieces = switches
            .into_iter()
            .map(|(at, open)| (at, Some(open)))
            .chain(std::iter::once((bytes.len(), None)));
        for (at, open) in pieces {
            let piece = &bytes[from..at];
            from = at;
            if !piece.is_empty() {
                let sleep_us = FLUSH_SLEEP_US.load(Relaxed);
                if sleep_us > 0 {
                    std::thread::sleep(Duration::from_micros(sleep_us));
                }
                write_until_done(shared, &mut file, piece, &mut last_error_log);
                dirty = true;
            }
            let Some(open) = open else { continue };
            sync(&mut file, &shared.stats);
            dirty = false;
            last_fsync = Instant::now();
            match open() {
                Ok(next) => {
                    file = next;
                    shared.stats.incr_written.store(0, Relaxed);
                }
                Err(e) if is_sync_marker(&e) => {}
                Err(e) => log::warn!("Can't open the append-only file: {e}"),
            }
        }
        let due = match settings.fsync {
            AppendFsync::Always => true,
            AppendFsync::EverySec => last_fsync.elapsed() >= Duration::from_secs(1),
            AppendFsync::No => false,
        };
        if dirty && due && !settings.skip_fsync {
            let started = Instant::now();
            sync(&mut file, &shared.stats);
            if started.elapsed() >= FSYNC_SLOW {
                shared.stats.delayed_fsync.fetch_add(1, Relaxed);
            }
            last_fsync = Instant::now();
            dirty = false;
        }
        *lock(&shared.synced) = seq;
        shared.synced_cv.notify_all();
        if stop {
            if dirty {
                sync(&mut file, &shared.stats);
            }
            return;
        }
    }
}

/// Writes `bytes` whole, retrying every 100 ms while the disk refuses
/// (full, gone): meanwhile the status says so and writes get MISCONF, and
/// the shards' units wait in the queue, in order, as in Redis's buffer.
fn write_until_done(
    shared: &Shared,
    file: &mut File,
    bytes: &[u8],
    last_log: &mut Option<Instant>,
) {
    let mut left = bytes;
    loop {
        match file.write(left) {
            Ok(0) => note_error(
                shared,
                &std::io::Error::from(std::io::ErrorKind::WriteZero),
                last_log,
            ),
            Ok(n) => {
                shared.stats.incr_written.fetch_add(n as u64, Relaxed);
                left = &left[n..];
                if left.is_empty() {
                    if shared.stats.write_failed.swap(false, Relaxed) {
                        log::warn!("AOF write error looks solved, Redis can write again.");
                    }
                    return;
                }
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => note_error(shared, &e, last_log),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn sync(file: &mut File, stats: &Stats) {
    stats.fsync_running.store(true, Relaxed);
    if let Err(e) = file.sync_data() {
        log::warn!("Fail to fsync the AOF file: {e}");
    }
    stats.fsync_running.store(false, Relaxed);
}

fn note_error(shared: &Shared, e: &std::io::Error, last_log: &mut Option<Instant>) {
    shared.stats.write_failed.store(true, Relaxed);
    *lock(&shared.stats.last_error) = e.to_string();
    if last_log.is_none_or(|at| at.elapsed() >= ERROR_LOG_EVERY) {
        log::warn!("Error writing to the AOF file: {e}");
        *last_log = Some(Instant::now());
    }
    if (shared.settings)().fsync == AppendFsync::Always {
        log::warn!(
            "Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting..."
        );
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(fsync: AppendFsync, timestamps: bool) -> Box<dyn Fn() -> Settings + Send + Sync> {
        Box::new(move || Settings {
            fsync,
            skip_fsync: false,
            timestamps,
        })
    }

    #[test]
    fn units_reach_the_file_in_order_and_switches_fall_between_them() {
        let dir = std::env::temp_dir().join(format!("ember-aof-writer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let first = dir.join("1");
        let second = dir.join("2");
        let stats = Arc::new(Stats::default());
        let w = Writer::start(
            File::create(&first).unwrap(),
            settings(AppendFsync::Always, false),
            Arc::clone(&stats),
        )
        .unwrap();
        w.append(b"a");
        w.append(b"b");
        wait_here();
        assert_eq!(
            std::fs::read(&first).unwrap(),
            b"ab",
            "synced before wait_here returns"
        );
        let path = second.clone();
        w.switch(Box::new(move || File::create(path)));
        w.append(b"c");
        w.flush();
        drop(w);
        assert_eq!(std::fs::read(&first).unwrap(), b"ab");
        assert_eq!(std::fs::read(&second).unwrap(), b"c");
        assert_eq!(stats.incr_written.load(Relaxed), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn timestamps_come_before_the_first_unit_of_a_second() {
        let path = std::env::temp_dir().join(format!("ember-aof-ts-{}", std::process::id()));
        let w = Writer::start(
            File::create(&path).unwrap(),
            settings(AppendFsync::No, true),
            Arc::new(Stats::default()),
        )
        .unwrap();
        w.append(b"x");
        w.append(b"y");
        drop(w);
        let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
        assert!(text.starts_with("#TS:"), "{text}");
        assert_eq!(text.matches("#TS:").count(), 1, "{text}");
        assert!(text.ends_with("\r\nxy"), "{text}");
        let _ = std::fs::remove_file(&path);
    }
}
