//! WATCH on one shard: which clients watch which of this shard's keys, and
//! which of them saw a watched key change since (their EXEC must fail).
//!
//! Every change to a key reaches [`Watches::touch`] through the keyspace
//! event path (writes, deletions, lazy and active expiry), so no command has
//! to remember WATCH. FLUSHDB, FLUSHALL and SWAPDB touch whole databases.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;

#[derive(Clone, Debug)]
struct Watcher {
    db: usize,
    client: u64,
    /// The key was already logically expired when watched: its deletion is
    /// no change (Redis 7 lets such an EXEC succeed).
    expired_at_watch: bool,
}

#[derive(Default, Clone, Debug)]
pub struct Watches {
    by_key: HashMap<Bytes, Vec<Watcher>>,
    /// Clients whose watched keys changed.
    dirty: HashSet<u64>,
}

impl Watches {
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    pub fn watch(&mut self, db: usize, key: &Bytes, client: u64, expired_at_watch: bool) {
        let list = self.by_key.entry(key.clone()).or_default();
        if !list.iter().any(|w| w.db == db && w.client == client) {
            list.push(Watcher {
                db,
                client,
                expired_at_watch,
            });
        }
    }

    /// `event` happened to `key` in `db`: its watchers' transactions fail.
    pub fn touch(&mut self, db: usize, key: &[u8], event: &str) {
        let Some(list) = self.by_key.get_mut(key) else {
            return;
        };
        for w in list.iter_mut().filter(|w| w.db == db) {
            if w.expired_at_watch && (event == "expired" || event == "del") {
                // Deleting a key that had already expired changes nothing.
                w.expired_at_watch = false;
                continue;
            }
            self.dirty.insert(w.client);
        }
    }

    /// A database was emptied or swapped: watchers of keys that existed
    /// there (`existed`) see a change.
    pub fn touch_db(&mut self, db: usize, existed: impl Fn(&[u8]) -> bool) {
        for (key, list) in &self.by_key {
            if list.iter().any(|w| w.db == db) && existed(key) {
                for w in list.iter().filter(|w| w.db == db) {
                    self.dirty.insert(w.client);
                }
            }
        }
    }

    /// Whether `client`'s watch on `key` in `db` was taken on an expired key.
    pub fn expired_at_watch(&self, db: usize, key: &[u8], client: u64) -> bool {
        self.by_key.get(key).is_some_and(|list| {
            list.iter()
                .any(|w| w.db == db && w.client == client && w.expired_at_watch)
        })
    }

    /// Whether `client` saw a change on this shard.
    pub fn is_dirty(&self, client: u64) -> bool {
        self.dirty.contains(&client)
    }

    /// Forgets `client`'s watches on `keys` and its changed mark.
    pub fn forget(&mut self, client: u64, keys: &[(usize, Bytes)]) {
        for (db, key) in keys {
            if let Some(list) = self.by_key.get_mut(key) {
                list.retain(|w| !(w.db == *db && w.client == client));
                if list.is_empty() {
                    self.by_key.remove(key);
                }
            }
        }
        self.dirty.remove(&client);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &'static str) -> Bytes {
        Bytes::from_static(k.as_bytes())
    }

    #[test]
    fn a_change_marks_only_the_watchers_of_that_key_and_db() {
        let mut w = Watches::default();
        w.watch(0, &key("a"), 1, false);
        w.watch(1, &key("a"), 2, false);
        w.watch(0, &key("b"), 3, false);
        w.touch(0, b"a", "set");
        assert!(w.is_dirty(1));
        assert!(!w.is_dirty(2) && !w.is_dirty(3));
        w.forget(1, &[(0, key("a"))]);
        assert!(!w.is_dirty(1));
        w.touch(0, b"a", "set");
        assert!(!w.is_dirty(1), "forgotten");
    }

    #[test]
    fn deleting_an_already_expired_key_is_no_change() {
        let mut w = Watches::default();
        w.watch(0, &key("a"), 1, true);
        w.touch(0, b"a", "expired");
        assert!(!w.is_dirty(1));
        w.touch(0, b"a", "set");
        assert!(w.is_dirty(1), "recreated afterwards");
    }

    #[test]
    fn flushing_touches_existing_watched_keys() {
        let mut w = Watches::default();
        w.watch(0, &key("a"), 1, false);
        w.watch(0, &key("b"), 2, false);
        w.touch_db(0, |k| k == b"a");
        assert!(w.is_dirty(1));
        assert!(!w.is_dirty(2), "b did not exist");
        w.forget(2, &[(0, key("b"))]);
        w.forget(1, &[(0, key("a"))]);
        assert!(w.is_empty());
    }
}
