//! The process-wide persistence state behind LASTSAVE, INFO persistence,
//! `stop-writes-on-bgsave-error` and the `save` rules: one per server, in
//! `exec::Shared`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use super::child::SaveChild;

/// What the last saves did.
#[derive(Debug, Clone)]
pub struct Status {
    /// Unix seconds of the last successful save (start-up time before any).
    pub last_save_s: u64,
    /// Whether the last background save succeeded (`rdb_last_bgsave_status`).
    pub last_bgsave_ok: bool,
    /// Seconds the last background save took, -1 before any.
    pub last_bgsave_time_s: i64,
    /// Unix ms when the running background save started.
    pub bgsave_started_ms: Option<u64>,
    /// Unix seconds of the last background save attempt (a failed one is
    /// retried by the rules only 5 s later, as Redis does).
    pub last_bgsave_try_s: u64,
    /// Successful saves since start (`rdb_saves`).
    pub saves: u64,
    /// The sum of the shards' change counters at the last save's instant.
    pub changes_at_save: u64,
    /// BGSAVE SCHEDULE asked for one while another ran.
    pub scheduled: bool,
    pub last_load_keys_loaded: u64,
    pub last_load_keys_expired: u64,
    /// What the last background save copied before writes changed keys
    /// (`rdb_last_cow_size`; ember forks nothing, see `store::snapshot`).
    pub last_cow_size: u64,
}

pub struct State {
    status: Mutex<Status>,
    /// The parts of the running background save that shards finished
    /// (None: the shard's was aborted, by FLUSHALL).
    parts: Mutex<Vec<Option<super::Part>>>,
    /// A background save is running (checked before taking `status`).
    pub bgsave_in_progress: AtomicBool,
    /// The last background save failed (`rdb_last_bgsave_status:err`),
    /// read by every write while `stop-writes-on-bgsave-error` is on.
    pub bgsave_failed: AtomicBool,
    /// Each shard's change counter as of its last tick, for the `save`
    /// rules, which one thread checks for all.
    pub shard_changes: Vec<AtomicU64>,
    /// The running background save's process (`persist::child`).
    child: Mutex<Option<SaveChild>>,
    /// It ended before it was handed the file (killed): every shard's
    /// snapshot aborts at its next slice. Reset when the next one starts.
    pub child_lost: AtomicBool,
    /// Unix ms of the last look at whether it lives (one `waitpid` per
    /// [`CHILD_CHECK_MS`] for all shards).
    child_checked_ms: AtomicU64,
    /// Save processes started (INFO `total_forks`: Redis's forks).
    pub forks: AtomicU64,
    /// `rdb-key-save-delay` as the running background save started with
    /// (Redis's child keeps the value it was forked with), in µs.
    pub key_delay_us: AtomicU64,
}

/// How often the shards' slices look at the save process, in ms.
const CHILD_CHECK_MS: u64 = 10;

impl State {
    pub fn new(nshards: usize, now_s: u64) -> State {
        State {
            status: Mutex::new(Status {
                last_save_s: now_s,
                last_bgsave_ok: true,
                last_bgsave_time_s: -1,
                bgsave_started_ms: None,
                last_bgsave_try_s: 0,
                saves: 0,
                changes_at_save: 0,
                scheduled: false,
                last_load_keys_loaded: 0,
                last_load_keys_expired: 0,
                last_cow_size: 0,
            }),
            parts: Mutex::new(Vec::new()),
            bgsave_in_progress: AtomicBool::new(false),
            bgsave_failed: AtomicBool::new(false),
            shard_changes: (0..nshards).map(|_| AtomicU64::new(0)).collect(),
            child: Mutex::new(None),
            child_lost: AtomicBool::new(false),
            child_checked_ms: AtomicU64::new(0),
            forks: AtomicU64::new(0),
            key_delay_us: AtomicU64::new(0),
        }
    }

    fn child_slot(&self) -> std::sync::MutexGuard<'_, Option<SaveChild>> {
        self.child.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the save process of a background save (BGSAVE, an AOF
    /// rewrite), which runs with `key_delay_us` of `rdb-key-save-delay`;
    /// its pid, or None when it could not start (the save then writes its
    /// file itself).
    pub fn start_child(&self, key_delay_us: u64) -> Option<u32> {
        self.key_delay_us.store(key_delay_us, Relaxed);
        let mut slot = self.child_slot();
        if let Some(old) = slot.take() {
            old.stop();
        }
        self.child_lost.store(false, Relaxed);
        match SaveChild::spawn() {
            Ok(child) => {
                let pid = child.pid();
                *slot = Some(child);
                self.forks.fetch_add(1, Relaxed);
                Some(pid)
            }
            Err(e) => {
                log::warn!("Can't start the save process ({e}): the server writes the file itself");
                None
            }
        }
    }

    /// Whether the save process died before it was handed the file;
    /// looks (`waitpid`) at most once per [`CHILD_CHECK_MS`] for all
    /// shards, which ask at every snapshot slice.
    pub fn child_died(&self, now_ms: u64) -> bool {
        if self.child_lost.load(Relaxed) {
            return true;
        }
        let last = self.child_checked_ms.load(Relaxed);
        if now_ms.saturating_sub(last) < CHILD_CHECK_MS
            || self
                .child_checked_ms
                .compare_exchange(last, now_ms, Relaxed, Relaxed)
                .is_err()
        {
            return false;
        }
        let mut slot = self.child_slot();
        let died = slot.as_mut().is_some_and(|c| c.exited().is_some());
        if died {
            self.child_lost.store(true, Relaxed);
        }
        died
    }

    /// The save process, for the file (or to stop it); with how it ended
    /// when it already has (a kill).
    pub fn take_child(&self) -> (Option<SaveChild>, Option<std::process::ExitStatus>) {
        let mut child = self.child_slot().take();
        let ended = child.as_mut().and_then(SaveChild::exited);
        (child, ended)
    }

    /// A copy of the status.
    pub fn status(&self) -> Status {
        self.lock().clone()
    }

    /// Changes the status under its lock.
    pub fn update<R>(&self, f: impl FnOnce(&mut Status) -> R) -> R {
        f(&mut self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Status> {
        // A panic elsewhere never leaves the status half-written (each
        // update is a few field stores), so a poisoned lock is still good.
        self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Claims the right to run a background save; false if one runs.
    pub fn try_begin_bgsave(&self, now_ms: u64) -> bool {
        if self.bgsave_in_progress.swap(true, Relaxed) {
            return false;
        }
        self.update(|s| {
            s.bgsave_started_ms = Some(now_ms);
            s.last_bgsave_try_s = now_ms / 1000;
            s.scheduled = false;
        });
        true
    }

    /// A background save ended without a file (FLUSHALL aborted it, as it
    /// kills Redis's child): not an error, and the changes still count.
    pub fn abort_bgsave(&self) {
        self.update(|s| {
            s.bgsave_started_ms = None;
        });
        self.bgsave_in_progress.store(false, Relaxed);
    }

    /// A save (`background` or not) finished, taken at `changes`.
    pub fn finish_save(&self, ok: bool, background: bool, changes: u64, now_ms: u64) {
        self.update(|s| {
            if ok {
                s.last_save_s = now_ms / 1000;
                s.saves += 1;
                s.changes_at_save = changes;
            }
            if background {
                s.last_bgsave_ok = ok;
                if let Some(started) = s.bgsave_started_ms.take() {
                    s.last_bgsave_time_s = (now_ms.saturating_sub(started) / 1000) as i64;
                }
            }
        });
        if background {
            self.bgsave_failed.store(!ok, Relaxed);
            self.bgsave_in_progress.store(false, Relaxed);
        }
    }

    /// A shard hands in its finished part; the last of `nshards` gets
    /// them all back, to write the file.
    pub fn deposit(
        &self,
        part: Option<super::Part>,
        nshards: usize,
    ) -> Option<Vec<Option<super::Part>>> {
        let mut parts = self.parts.lock().unwrap_or_else(|e| e.into_inner());
        parts.push(part);
        (parts.len() >= nshards).then(|| std::mem::take(&mut *parts))
    }

    /// The sum of the shards' last published change counters.
    pub fn changes_now(&self) -> u64 {
        self.shard_changes
            .iter()
            .fold(0u64, |sum, c| sum.wrapping_add(c.load(Relaxed)))
    }
}

/// The `save` rules: pairs of (seconds, changes). A save is due when some
/// rule has at least `changes` changes and more than `seconds` since the
/// last save; after a failed background save, not before 5 s passed
/// (Redis's `CONFIG_BGSAVE_RETRY_DELAY`).
pub fn rule_due(rules: &[(u64, u64)], status: &Status, changes: u64, now_s: u64) -> bool {
    let since = now_s.saturating_sub(status.last_save_s);
    let retry_ok = status.last_bgsave_ok || now_s.saturating_sub(status.last_bgsave_try_s) > 5;
    retry_ok
        && rules
            .iter()
            .any(|&(seconds, need)| changes >= need && since > seconds && changes > 0)
}

/// Parses the text of `save` (checked already): `"3600 1 300 100"`.
pub fn parse_rules(text: &str) -> Vec<(u64, u64)> {
    let words: Vec<u64> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    words.chunks_exact(2).map(|p| (p[0], p[1])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_fire_as_redis_checks_them() {
        let state = State::new(1, 1000);
        let status = state.status();
        let rules = parse_rules("3600 1 300 100 60 10000");
        assert_eq!(rules, vec![(3600, 1), (300, 100), (60, 10000)]);
        assert!(!rule_due(&rules, &status, 0, 10_000), "no changes");
        assert!(!rule_due(&rules, &status, 50, 1200), "too soon");
        assert!(rule_due(&rules, &status, 100, 1301));
        assert!(rule_due(&rules, &status, 1, 4601));
        let mut failed = status.clone();
        failed.last_bgsave_ok = false;
        failed.last_bgsave_try_s = 4600;
        assert!(!rule_due(&rules, &failed, 1, 4603), "retry waits 5 s");
        assert!(rule_due(&rules, &failed, 1, 4606));
    }
}
