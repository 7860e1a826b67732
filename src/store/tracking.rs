//! Client-side caching on one shard: which clients read which of this
//! shard's keys (Redis's tracking table, the part of it whose keys this
//! shard owns), and the changes they must hear about.
//!
//! A read by a tracking client remembers the reader's id under the key
//! (`remember`, from `cmd::tracking` after the command ran). Every change
//! to a key reaches [`Table::touch`] through the keyspace event path
//! (`Notifier::signal`: writes, deletions, lazy and active expiry,
//! evictions), which moves the key's readers to `invalidated` and forgets
//! the key, as Redis frees its entry once it sent the invalidations; a key
//! is remembered again by its next tracked read. While some client
//! broadcasts (BCAST), every changed key is also listed in `broadcast`
//! for the prefixes to match. The shard loop turns both lists into
//! messages to the readers' connections (`shard::worker::tracking`).
//!
//! As in Redis the table is keyed by the key's name alone, whatever its
//! database: a read in db 0 hears of a change to the same name in db 9.

use std::collections::HashMap;

use bytes::Bytes;

/// A changed key and the clients that had read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalidated {
    pub key: Bytes,
    pub readers: Vec<u64>,
    /// The client whose work changed it (NOLOOP: not told of its own
    /// changes); None for the sweep and evictions.
    pub by: Option<u64>,
}

#[derive(Default, Clone, Debug)]
pub struct Table {
    readers: HashMap<Bytes, Vec<u64>>,
    /// Reader ids summed over every key (INFO `tracking_total_items`).
    items: usize,
    /// The client whose command or op runs now (set by the loop around
    /// each piece of work; None between them, so the sweep is nobody's).
    pub caller: Option<u64>,
    /// Some client broadcasts: every change is listed in `broadcast`.
    /// The loop refreshes it from the shared registry each pass.
    pub bcast: bool,
    pub invalidated: Vec<Invalidated>,
    /// Keys evicted over `maxmemory`: their readers hear of it before the
    /// reply of the command whose admission evicted them, as in Redis
    /// (a command's own changes are told after its reply).
    pub evicted: Vec<Invalidated>,
    /// Changed keys for the BCAST prefixes, with the client that changed
    /// them (None for expiry, as Redis passes no client there).
    pub broadcast: Vec<(Bytes, Option<u64>)>,
    /// A FLUSHALL / FLUSHDB ran here: every tracking client hears a null.
    pub flushed: bool,
}

impl Table {
    /// Whether a change has anything to do here (one test per change).
    pub fn active(&self) -> bool {
        self.bcast || !self.readers.is_empty()
    }

    /// Keys with at least one reader (INFO `tracking_total_keys`).
    pub fn len(&self) -> usize {
        self.readers.len()
    }

    /// Changes not routed yet.
    pub fn has_news(&self) -> bool {
        !self.invalidated.is_empty()
            || !self.evicted.is_empty()
            || !self.broadcast.is_empty()
            || self.flushed
    }

    pub fn is_empty(&self) -> bool {
        self.readers.is_empty()
    }

    pub fn items(&self) -> usize {
        self.items
    }

    /// Client `id` read `key`.
    pub fn remember(&mut self, key: &[u8], id: u64) {
        let ids = match self.readers.get_mut(key) {
            Some(ids) => ids,
            None => self.readers.entry(Bytes::copy_from_slice(key)).or_default(),
        };
        if !ids.contains(&id) {
            ids.push(id);
            self.items += 1;
        }
    }

    /// `key` changed; `by_command`: a command's doing (not expiry's), which
    /// matters to BCAST's NOLOOP only, as in Redis; `evicted`: by eviction.
    pub fn touch(&mut self, key: &[u8], by_command: bool, evicted: bool) {
        if self.bcast {
            let by = if by_command { self.caller } else { None };
            self.broadcast.push((Bytes::copy_from_slice(key), by));
        }
        if let Some((key, readers)) = self.readers.remove_entry(key) {
            self.items -= readers.len();
            let change = Invalidated {
                key,
                readers,
                by: self.caller.filter(|_| !evicted),
            };
            match evicted {
                true => self.evicted.push(change),
                false => self.invalidated.push(change),
            }
        }
    }

    /// Every database was emptied (or one: Redis forgets the whole table
    /// either way, since it is keyed by name alone).
    pub fn flush(&mut self) {
        self.readers.clear();
        self.items = 0;
        self.flushed = true;
    }

    /// Forgets some key, its readers told it changed: the table holds
    /// more keys than `tracking-table-max-keys`. False when empty.
    pub fn evict_one(&mut self) -> bool {
        let Some(key) = self.readers.keys().next().cloned() else {
            return false;
        };
        if let Some(readers) = self.readers.remove(&key) {
            self.items -= readers.len();
            self.invalidated.push(Invalidated {
                key,
                readers,
                by: None,
            });
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_hands_the_readers_over_once() {
        let mut t = Table::default();
        t.remember(b"k", 1);
        t.remember(b"k", 1);
        t.remember(b"k", 2);
        t.remember(b"j", 2);
        assert_eq!((t.len(), t.items()), (2, 3));
        t.caller = Some(9);
        t.touch(b"k", true, false);
        assert_eq!(
            t.invalidated,
            vec![Invalidated {
                key: Bytes::from_static(b"k"),
                readers: vec![1, 2],
                by: Some(9)
            }]
        );
        t.touch(b"k", true, false);
        assert_eq!(t.invalidated.len(), 1, "forgotten after its first change");
        assert_eq!((t.len(), t.items()), (1, 1));
        assert!(t.broadcast.is_empty(), "nobody broadcasts");
    }

    #[test]
    fn broadcasting_lists_every_change_and_expiry_is_nobodys() {
        let mut t = Table {
            bcast: true,
            caller: Some(4),
            ..Table::default()
        };
        assert!(t.active());
        t.touch(b"a", true, false);
        t.touch(b"b", false, true);
        assert_eq!(t.evicted.len(), 0, "b was not read");
        assert_eq!(
            t.broadcast,
            vec![
                (Bytes::from_static(b"a"), Some(4)),
                (Bytes::from_static(b"b"), None)
            ]
        );
    }

    #[test]
    fn eviction_and_flush_empty_the_table() {
        let mut t = Table::default();
        t.remember(b"a", 1);
        t.remember(b"b", 1);
        assert!(t.evict_one());
        assert_eq!(t.len(), 1);
        assert_eq!(t.invalidated.len(), 1);
        t.flush();
        assert!(t.is_empty() && t.flushed && t.items() == 0);
        assert!(!t.evict_one());
    }
}
