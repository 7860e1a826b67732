//! A shard's part of the propagation feed: the record type, and the buffer
//! that the store (for expiry and eviction) and the commands
//! (`cmd::propagate`) push what a replica or an append-only file must
//! apply to reach this shard's state.
//!
//! A [`Record`] is one command in Redis's wire form and the database it
//! applies to. The buffer is filled while the shard runs one thing (a
//! command, an op another shard sent, a slice of the sweep) and emptied by
//! the shard loop at once after it, into the process-wide feed
//! (`crate::exec::feed`), which orders the shards' records into one stream with
//! SELECT and MULTI/EXEC. So the buffer is empty between two pieces of work,
//! and what one piece recorded goes out together.
//!
//! The store records what happens to keys without a command's doing:
//! - a key removed because its deadline passed (looked up late or taken by
//!   the sweep): `DEL key`, or `UNLINK key` under `lazyfree-lazy-expire
//!   yes`, as Redis 7.0 writes it;
//! - hash fields removed because their deadline passed: `HDEL key field...`
//!   (the hash goes with its last field on the replica as here);
//! - a key evicted under `maxmemory` ([`Log::evicted`], for the eviction
//!   work to call): `DEL key`, or `UNLINK key` under
//!   `lazyfree-lazy-eviction yes`.
//!
//! Nothing is built while nobody listens: every push first reads the feed's
//! switch, one relaxed load.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use bytes::Bytes;

/// One command of the feed and the database it applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub db: usize,
    pub argv: Vec<Bytes>,
}

impl Record {
    pub fn new(db: usize, argv: Vec<Bytes>) -> Record {
        Record { db, argv }
    }

    /// The key a record made by the store is about (its first argument).
    pub fn key(&self) -> Option<&Bytes> {
        self.argv.get(1)
    }
}

/// One shard's records not yet handed to the feed.
pub struct Log {
    /// The feed's switch, shared by every shard: on while something records.
    on: Arc<AtomicBool>,
    records: Vec<Record>,
    /// Records pushed for commands so far (expiry's not counted), so the
    /// propagation point sees that a handler wrote its own rewrite.
    by_commands: u64,
}

impl Default for Log {
    /// A log nobody listens to (a store outside a server, tests).
    fn default() -> Log {
        Log::new(Arc::new(AtomicBool::new(false)))
    }
}

impl Log {
    /// A log that records while `on` is set (the feed's switch).
    pub fn new(on: Arc<AtomicBool>) -> Log {
        Log {
            on,
            records: Vec::new(),
            by_commands: 0,
        }
    }

    /// Whether something records: the one load the request path pays.
    pub fn is_on(&self) -> bool {
        self.on.load(Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The records not yet handed on, oldest first.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Hands the records over, oldest first, leaving the log empty.
    pub fn take(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.records)
    }

    /// How many records commands pushed so far (compare two readings).
    pub fn by_commands(&self) -> u64 {
        self.by_commands
    }

    /// A command's record (as run, or rewritten to be deterministic).
    pub fn command(&mut self, db: usize, argv: Vec<Bytes>) {
        if self.is_on() {
            self.by_commands += 1;
            self.records.push(Record::new(db, argv));
        }
    }

    /// `key` of `db` was removed because its deadline passed; `unlink`:
    /// `lazyfree-lazy-expire` is on.
    pub fn expired(&mut self, db: usize, key: &[u8], unlink: bool) {
        self.removed(db, key, unlink);
    }

    /// `fields` of the hash `key` of `db` were removed because their
    /// deadlines passed.
    pub fn fields_expired(&mut self, db: usize, key: &[u8], fields: Vec<Bytes>) {
        if !self.is_on() || fields.is_empty() {
            return;
        }
        let mut argv = Vec::with_capacity(2 + fields.len());
        argv.push(Bytes::from_static(b"HDEL"));
        argv.push(Bytes::copy_from_slice(key));
        argv.extend(fields);
        self.records.push(Record::new(db, argv));
    }

    /// Hook for eviction (`maxmemory`, a later issue): `key` of `db` was
    /// evicted; `unlink`: `lazyfree-lazy-eviction` is on. Redis propagates
    /// an eviction as the deletion it is, so a replica (which evicts nothing
    /// itself, `replica-ignore-maxmemory`) and a replayed file lose the key
    /// too. Call it where the key leaves, as expiry calls [`Log::expired`].
    pub fn evicted(&mut self, db: usize, key: &[u8], unlink: bool) {
        self.removed(db, key, unlink);
    }

    fn removed(&mut self, db: usize, key: &[u8], unlink: bool) {
        if !self.is_on() {
            return;
        }
        let name: &'static [u8] = if unlink { b"UNLINK" } else { b"DEL" };
        let argv = vec![Bytes::from_static(name), Bytes::copy_from_slice(key)];
        self.records.push(Record::new(db, argv));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(record: &Record) -> Vec<&str> {
        record
            .argv
            .iter()
            .map(|a| std::str::from_utf8(a).unwrap())
            .collect()
    }

    fn listening() -> (Arc<AtomicBool>, Log) {
        let on = Arc::new(AtomicBool::new(true));
        (on.clone(), Log::new(on))
    }

    #[test]
    fn nothing_is_built_while_nobody_listens() {
        let mut log = Log::default();
        log.expired(0, b"k", false);
        log.evicted(0, b"k", false);
        log.fields_expired(0, b"h", vec![Bytes::from_static(b"f")]);
        log.command(0, vec![Bytes::from_static(b"SET")]);
        assert!(log.is_empty());
        assert_eq!(log.by_commands(), 0);
    }

    #[test]
    fn expiry_and_eviction_are_deletions() {
        let (on, mut log) = listening();
        log.expired(3, b"gone", false);
        log.expired(0, b"big", true);
        log.evicted(1, b"cold", false);
        log.evicted(1, b"huge", true);
        log.fields_expired(
            2,
            b"h",
            vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")],
        );
        log.fields_expired(2, b"h", Vec::new());
        let records = log.take();
        let seen: Vec<(usize, Vec<&str>)> = records.iter().map(|r| (r.db, words(r))).collect();
        assert_eq!(
            seen,
            vec![
                (3, vec!["DEL", "gone"]),
                (0, vec!["UNLINK", "big"]),
                (1, vec!["DEL", "cold"]),
                (1, vec!["UNLINK", "huge"]),
                (2, vec!["HDEL", "h", "a", "b"]),
            ]
        );
        assert_eq!(records[0].key().map(|k| &k[..]), Some(&b"gone"[..]));
        assert_eq!(log.by_commands(), 0, "expiry is not a command's record");
        assert!(log.is_empty());
        on.store(false, Relaxed);
        log.expired(0, b"k", false);
        assert!(log.is_empty(), "the switch is read at every push");
    }

    #[test]
    fn commands_are_counted() {
        let (_on, mut log) = listening();
        let before = log.by_commands();
        log.command(
            0,
            vec![Bytes::from_static(b"PERSIST"), Bytes::from_static(b"k")],
        );
        assert_eq!(log.by_commands(), before + 1);
        assert_eq!(words(&log.records()[0]), ["PERSIST", "k"]);
    }
}
