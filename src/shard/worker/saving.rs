//! A background snapshot's slices (`store::snapshot`): each pass of the
//! loop writes keys for a bounded time after the clients were served, as
//! the expiry sweep does, so no client waits behind a whole table.

use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use super::Worker;

/// The longest run of snapshot work in one pass of the loop. Serializing
/// a small key takes well under a microsecond, so a slice writes a few
/// hundred keys; a client's command waits at most this long behind one.
const SLICE_US: u64 = 200;
/// Keys written between two looks at the clock.
const KEYS_PER_CHECK: usize = 32;

impl Worker {
    pub(super) fn snapshot_slice(&mut self) {
        // The save process died (`kill -9`): the snapshot is given up on
        // every shard, each at its next slice.
        if self.data.shared.persist.child_died(self.data.now_ms) {
            self.save_paced_at = None;
            if self.data.store.abort_snapshot() {
                crate::cmd::save::shard_aborted(&self.data.shared);
            }
            return;
        }
        let delay_us = self.data.shared.persist.key_delay_us.load(Relaxed);
        if delay_us > 0 {
            // `rdb-key-save-delay` (as the save started with) is Redis's
            // child's sleep per key of the whole file: with N shards
            // writing side by side, each writes one key once N times that
            // has passed since its last (the first once it passed since
            // the start), so the save takes as long as Redis's, and never
            // sleeps the shard.
            let Some(at) = self.save_paced_at else {
                self.save_paced_at = Some(Instant::now());
                return;
            };
            let per_key = delay_us.saturating_mul(self.data.shared.nshards.max(1) as u64);
            if at.elapsed() >= Duration::from_micros(per_key) {
                self.save_paced_at = Some(Instant::now());
                if let Some(done) = self.data.store.snapshot_slice(1) {
                    self.save_paced_at = None;
                    crate::cmd::save::shard_finished(&self.data.shared, done);
                }
            }
            return;
        }
        let started = Instant::now();
        let budget = Duration::from_micros(SLICE_US);
        loop {
            if let Some(done) = self.data.store.snapshot_slice(KEYS_PER_CHECK) {
                crate::cmd::save::shard_finished(&self.data.shared, done);
                return;
            }
            if started.elapsed() >= budget {
                return;
            }
        }
    }
}
