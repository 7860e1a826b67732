//! Coarse deadline buckets: a cheap source of expiry candidates.
//!
//! Random sampling (Redis's way) finds expired keys quickly only while they
//! are a large share of the volatile keys. When 2M keys expire among 2M others
//! with long TTLs, the share of each sample that is expired falls below the
//! 10% stop threshold long before the storm is reclaimed. So each shard also
//! files every volatile key under the 64 ms window its deadline falls in (the
//! idea of Segcache's time-to-live buckets); once a window has passed, every key
//! filed there whose deadline has not moved is expired and can be removed
//! without searching.
//!
//! An entry is the key's hash in the dict's index (8 bytes, where the key
//! itself would cost a copy), so the key is found again with one probe.
//! Entries are hints, checked against the dict when drained:
//! - a key whose deadline moved later keeps its old entry; when that window
//!   passes the key is re-filed under its new deadline (so refreshing a TTL on
//!   every request adds no entries);
//! - a key given an earlier deadline is filed again (the late entry is dropped
//!   when met);
//! - deleted or persisted keys leave entries that are dropped when met.
//!
//! Each database keeps a second set of buckets for hashes with field
//! deadlines, filed under their earliest one (`Db::file_field_deadlines`),
//! with the same hint rules.

use std::collections::BTreeMap;

/// log2 of the window width in milliseconds (64 ms).
pub const WINDOW_SHIFT: u32 = 6;

/// The longest window [`DeadlineBuckets::forget`] searches (8 KiB of hashes).
pub const FORGET_SCAN_MAX: usize = 1024;

/// The window a deadline falls in.
pub fn window(deadline_ms: u64) -> u64 {
    deadline_ms >> WINDOW_SHIFT
}

/// Whether the window of `deadline_ms` has ended at `now_ms` (its entries
/// are due).
pub fn window_ended(deadline_ms: u64, now_ms: u64) -> bool {
    (window(deadline_ms) + 1) << WINDOW_SHIFT <= now_ms
}

#[derive(Default)]
pub struct DeadlineBuckets {
    windows: BTreeMap<u64, Vec<u64>>,
    len: usize,
}

impl DeadlineBuckets {
    /// Files the key whose dict hash is `key_hash`.
    pub fn file(&mut self, key_hash: u64, deadline_ms: u64) {
        self.windows
            .entry(window(deadline_ms))
            .or_default()
            .push(key_hash);
        self.len += 1;
    }

    /// Drops the entry of `key_hash` filed under the window of
    /// `deadline_ms`, if that window holds at most [`FORGET_SCAN_MAX`]
    /// entries (a longer one keeps it as a stale hint: finding it would cost
    /// a scan of the window). For evictions: an evicted key's entry would
    /// otherwise stay until its window passes, 8 bytes per key that an
    /// eviction is meant to give back (a flood of SETEX with a long TTL
    /// over `maxmemory` grew the buckets by the whole flood).
    pub fn forget(&mut self, key_hash: u64, deadline_ms: u64) {
        let w = window(deadline_ms);
        let Some(hashes) = self.windows.get_mut(&w) else {
            return;
        };
        if hashes.len() > FORGET_SCAN_MAX {
            return;
        }
        if let Some(at) = hashes.iter().position(|&h| h == key_hash) {
            hashes.swap_remove(at);
            self.len -= 1;
            if hashes.is_empty() {
                self.windows.remove(&w);
            }
        }
    }

    /// Entries filed, stale ones included.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes held: each window's list, and its tree entry (the key,
    /// the list's header, a share of the node).
    pub fn heap_size(&self) -> usize {
        const PER_WINDOW: usize = 8 + std::mem::size_of::<Vec<u64>>() + 16;
        self.windows
            .values()
            .map(|hints| PER_WINDOW + hints.capacity() * 8)
            .sum()
    }

    /// Whether some window ended at or before `now_ms`.
    pub fn has_due(&self, now_ms: u64) -> bool {
        self.windows
            .first_key_value()
            .is_some_and(|(&w, _)| window_ended(w << WINDOW_SHIFT, now_ms))
    }

    /// Entries (stale ones included) of the windows that ended at or before
    /// `now_ms`: the backlog a sweep cycle faces.
    pub fn due_len(&self, now_ms: u64) -> usize {
        self.windows
            .iter()
            .take_while(|(&w, _)| window_ended(w << WINDOW_SHIFT, now_ms))
            .map(|(_, hashes)| hashes.len())
            .sum()
    }

    /// When the earliest window with entries ends (unix ms).
    pub fn next_end_ms(&self) -> Option<u64> {
        let (&w, _) = self.windows.first_key_value()?;
        Some((w + 1) << WINDOW_SHIFT)
    }

    /// The earliest window each key hash is filed under, and whether the
    /// count of entries is right. For `Db::check_invariants`; O(entries).
    #[doc(hidden)]
    pub fn earliest_windows(&self) -> Result<std::collections::HashMap<u64, u64>, String> {
        let mut earliest = std::collections::HashMap::new();
        let mut entries = 0;
        for (&w, hashes) in &self.windows {
            if hashes.is_empty() {
                return Err(format!("window {w} is kept empty"));
            }
            entries += hashes.len();
            for &h in hashes {
                earliest.entry(h).or_insert(w);
            }
        }
        if entries != self.len {
            return Err(format!("{entries} entries filed, len says {}", self.len));
        }
        Ok(earliest)
    }

    /// Takes one key hash from the earliest window that ended at or before `now_ms`.
    pub fn pop_due(&mut self, now_ms: u64) -> Option<u64> {
        let mut first = self.windows.first_entry()?;
        if !window_ended(first.key() << WINDOW_SHIFT, now_ms) {
            return None;
        }
        let key = first.get_mut().pop();
        if first.get().is_empty() {
            // A storm's window can hold millions of entries.
            crate::store::lazyfree::free_buffer(first.remove());
        }
        if key.is_some() {
            self.len -= 1;
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_passed_windows_are_due() {
        let mut b = DeadlineBuckets::default();
        b.file(1, 100);
        b.file(2, 1_000);
        assert!(!b.has_due(100), "the window of 100 ends at 128");
        assert_eq!(b.pop_due(127), None);
        assert_eq!(b.pop_due(128), Some(1));
        assert_eq!(b.pop_due(128), None);
        assert_eq!(b.len(), 1);
        assert_eq!(b.pop_due(10_000), Some(2));
        assert!(b.is_empty());
    }

    #[test]
    fn a_forgotten_entry_leaves_its_window() {
        let mut b = DeadlineBuckets::default();
        b.file(1, 100);
        b.file(2, 101);
        b.forget(1, 100);
        assert_eq!(b.len(), 1);
        b.forget(2, 5_000); // another window: kept
        assert_eq!(b.len(), 1);
        b.forget(2, 101);
        assert!(b.is_empty());
        assert_eq!(b.next_end_ms(), None, "the empty window went too");
    }

    #[test]
    fn the_backlog_counts_passed_windows_and_the_next_end_is_the_first() {
        let mut b = DeadlineBuckets::default();
        assert_eq!(b.next_end_ms(), None);
        for (hash, deadline) in [(1, 100), (2, 120), (3, 130), (4, 1_000)] {
            b.file(hash, deadline);
        }
        assert_eq!(b.next_end_ms(), Some(128));
        assert_eq!(b.due_len(127), 0);
        assert_eq!(b.due_len(128), 2);
        assert_eq!(b.due_len(192), 3, "130 falls in the window ending at 192");
        assert_eq!(b.due_len(u64::MAX >> 1), 4);
    }
}
