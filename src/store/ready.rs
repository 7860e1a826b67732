//! Keys that blocked clients wait on, and which of them were written since
//! the shard last served its waiters (Redis's `signalKeyAsReady`).
//!
//! Every keyspace event passes through [`ReadyKeys::signal`], so a write of
//! any kind (a push, ZADD, RENAME or MOVE onto the key, ...) marks a waited
//! key ready without the command knowing about waiters. The shard then
//! decides what the key holds when it serves; a key signalled for nothing
//! (a pop, a `del`) costs one lookup. With nobody waiting, a signal costs one
//! `is_empty` check.

use ahash::RandomState;
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};

#[derive(Default, Clone)]
pub struct ReadyKeys {
    /// Waited keys: for each database the key is waited on in, whether it
    /// was signalled since it was last taken (so it is queued once).
    /// Keyed by the key alone so a signal looks it up without allocating.
    watched: HashMap<Bytes, Vec<(usize, bool)>, RandomState>,
    /// Signalled keys in the order of their first signal.
    ready: VecDeque<(usize, Bytes)>,
}

impl ReadyKeys {
    /// Starts watching `key` of database `db` (the first waiter arrived).
    pub fn watch(&mut self, db: usize, key: &Bytes) {
        let dbs = self.watched.entry(key.clone()).or_default();
        if !dbs.iter().any(|(d, _)| *d == db) {
            dbs.push((db, false));
        }
    }

    /// Stops watching `key` of database `db` (its last waiter left).
    pub fn unwatch(&mut self, db: usize, key: &[u8]) {
        if let Some(dbs) = self.watched.get_mut(key) {
            dbs.retain(|(d, _)| *d != db);
            if dbs.is_empty() {
                self.watched.remove(key);
            }
        }
    }

    /// Something happened to `key` of database `db`: queue it if waited on.
    pub fn signal(&mut self, db: usize, key: &[u8]) {
        if self.watched.is_empty() {
            return;
        }
        let Some(dbs) = self.watched.get_mut(key) else {
            return;
        };
        if let Some((_, queued)) = dbs.iter_mut().find(|(d, _)| *d == db) {
            if !*queued {
                *queued = true;
                self.ready.push_back((db, Bytes::copy_from_slice(key)));
            }
        }
    }

    /// Queues every waited key of database `db` (SWAPDB replaced its content).
    pub fn signal_db(&mut self, db: usize) {
        let keys: Vec<Bytes> = self
            .watched
            .iter()
            .filter(|(_, dbs)| dbs.iter().any(|(d, _)| *d == db))
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            self.signal(db, &key);
        }
    }

    /// The next signalled key; a later write signals it again.
    pub fn take(&mut self) -> Option<(usize, Bytes)> {
        let (db, key) = self.ready.pop_front()?;
        if let Some(dbs) = self.watched.get_mut(&key) {
            if let Some((_, queued)) = dbs.iter_mut().find(|(d, _)| *d == db) {
                *queued = false;
            }
        }
        Some((db, key))
    }

    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Whether anybody waits on a key of this shard.
    pub fn is_empty(&self) -> bool {
        self.watched.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_watched_keys_are_queued_once_per_take() {
        let mut r = ReadyKeys::default();
        r.signal(0, b"k");
        assert!(!r.has_ready(), "nobody waits: nothing queued");
        r.watch(0, &Bytes::from_static(b"k"));
        r.signal(1, b"k");
        r.signal(0, b"other");
        assert!(!r.has_ready(), "another db or key is not the waited one");
        r.signal(0, b"k");
        r.signal(0, b"k");
        assert_eq!(r.take(), Some((0, Bytes::from_static(b"k"))));
        assert_eq!(r.take(), None, "queued once until taken");
        r.signal(0, b"k");
        assert!(r.has_ready(), "a write after the take queues it again");
        r.unwatch(0, b"k");
        assert!(r.is_empty());
    }

    #[test]
    fn signal_db_queues_the_waited_keys_of_that_db() {
        let mut r = ReadyKeys::default();
        r.watch(0, &Bytes::from_static(b"a"));
        r.watch(1, &Bytes::from_static(b"b"));
        r.signal_db(1);
        assert_eq!(r.take(), Some((1, Bytes::from_static(b"b"))));
        assert_eq!(r.take(), None);
    }
}
