//! The propagation feed: one ordered stream, in Redis's wire form, of the
//! commands that take a replica or an append-only file from an empty
//! keyspace to this server's state. The AOF and replication (later
//! issues) read it; today `DEBUG EMBER-RECORD START|STOP` records it for
//! the tests (`cmd::server`).
//!
//! What goes in: each shard hands over what one piece of its work recorded
//! (`store::propagate`, `cmd::propagate`) right after that piece ran, as
//! one unit; the feed writes it as RESP arrays, a `SELECT db` before any
//! record whose database is not the one the stream last selected, and
//! `MULTI` ... `EXEC` around a unit of more than one record (Redis 7.0
//! wraps the commands of one call the same way: a write and the lazy
//! expiry it met, SPOP's SREMs, a transaction).
//!
//! Transactions that span shards hold key locks (`exec::locks`) from
//! before their first op until their coordinator releases them. Their
//! records do not go into the stream when their ops run: the feed keeps
//! them per transaction ([`Feed::open`], [`Feed::append`] with the id) and
//! writes them as one unit when the coordinator commits, just before it
//! sends the releases ([`Feed::commit`]). Why that order is right for every
//! key: a record about a key is made on the key's shard, and
//! - a record made while no transaction holds the key goes into the stream
//!   before that shard does anything else, so it precedes anything a later
//!   transaction does to the key (which must take the key's lock first, on
//!   that same shard, after the record was written);
//! - a record made while transaction T holds the key is T's (its ops, or
//!   the sweep deleting a key T locked, which the shard routes to T by its
//!   lock table), and nothing else can touch the key until T's locks are
//!   released, which happens after T's unit is written;
//! - a record routed to T after T committed (the sweep, between the commit
//!   and the release reaching its shard) finds T no longer open and is
//!   written at once: after T's unit, before anything the release lets in.
//!
//! Records of different shards are about different keys, so their order
//! relative to each other does not matter, with one exception: commands
//! over whole databases (FLUSHALL, FLUSHDB, SWAPDB) touch every shard's
//! keys, so they run as a transaction holding every shard whole
//! (`cmd::propagate::every_shard_write`) and are recorded once.
//!
//! Off (the default), the feed costs the request path one relaxed load of
//! [`Feed::switch`] per command; the lock below is taken only while on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;

use super::TxId;
use crate::store::propagate::Record;
use crate::util::num::decimal_digits;

/// The process-wide feed, shared by every shard (`exec::Shared::feed`).
pub struct Feed {
    /// On while something records; every shard's log reads it (`Log::is_on`).
    on: Arc<AtomicBool>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The stream since recording started.
    out: Vec<u8>,
    /// The database the stream last selected (None: none yet, so the first
    /// record selects its own).
    selected: Option<usize>,
    /// Records of transactions under way, in the order they were made.
    open: HashMap<TxId, Vec<Record>>,
}

impl Default for Feed {
    fn default() -> Feed {
        Feed {
            on: Arc::new(AtomicBool::new(false)),
            state: Mutex::new(State::default()),
        }
    }
}

impl Feed {
    /// The switch every shard's log reads.
    pub fn switch(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.on)
    }

    pub fn is_on(&self) -> bool {
        self.on.load(Relaxed)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A shard that panicked holding the lock left whole records: go on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts recording an empty stream.
    pub fn start(&self) {
        let mut state = self.state();
        *state = State::default();
        self.on.store(true, Relaxed);
    }

    /// Stops recording and hands the stream over. Records of transactions
    /// still under way are dropped with them.
    pub fn stop(&self) -> Vec<u8> {
        let mut state = self.state();
        self.on.store(false, Relaxed);
        std::mem::take(&mut *state).out
    }

    /// Transaction `tx` starts: its records wait for [`Feed::commit`]. A
    /// transaction that started before recording did is never open; its
    /// records go out as its ops make them.
    pub fn open(&self, tx: TxId) {
        if self.is_on() {
            self.state().open.insert(tx, Vec::new());
        }
    }

    /// What one piece of a shard's work recorded: part of transaction `tx`
    /// if it is open, otherwise one unit of the stream.
    pub fn append(&self, tx: Option<TxId>, unit: Vec<Record>) {
        if unit.is_empty() || !self.is_on() {
            return;
        }
        let mut state = self.state();
        if let Some(pending) = tx.and_then(|tx| state.open.get_mut(&tx)) {
            pending.extend(unit);
            return;
        }
        state.write_unit(&unit);
    }

    /// Transaction `tx` is over (its locks are about to be released): its
    /// records go out as one unit.
    pub fn commit(&self, tx: TxId) {
        if !self.is_on() {
            return;
        }
        let mut state = self.state();
        if let Some(unit) = state.open.remove(&tx) {
            state.write_unit(&unit);
        }
    }
}

impl State {
    fn write_unit(&mut self, unit: &[Record]) {
        let group = unit.len() > 1;
        if group {
            write_command(&mut self.out, &[Bytes::from_static(b"MULTI")]);
        }
        for record in unit {
            if self.selected != Some(record.db) {
                let mut digits = [0; 20];
                let db = decimal_digits(record.db as u64, &mut digits);
                let select = [Bytes::from_static(b"SELECT"), Bytes::copy_from_slice(db)];
                write_command(&mut self.out, &select);
                self.selected = Some(record.db);
            }
            write_command(&mut self.out, &record.argv);
        }
        if group {
            write_command(&mut self.out, &[Bytes::from_static(b"EXEC")]);
        }
    }
}

/// Appends `argv` as a RESP array of bulk strings, the form Redis writes
/// its AOF and replication stream in.
pub fn write_command(out: &mut Vec<u8>, argv: &[Bytes]) {
    let mut digits = [0; 20];
    out.push(b'*');
    out.extend_from_slice(decimal_digits(argv.len() as u64, &mut digits));
    out.extend_from_slice(b"\r\n");
    for arg in argv {
        out.push(b'$');
        out.extend_from_slice(decimal_digits(arg.len() as u64, &mut digits));
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(db: usize, words: &str) -> Record {
        let argv = words
            .split(' ')
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        Record::new(db, argv)
    }

    /// The stream as redis-cli would show it: one line per command.
    fn lines(stream: &[u8]) -> Vec<String> {
        let text = String::from_utf8_lossy(stream);
        let mut parts = text.split("\r\n");
        let mut out = Vec::new();
        while let Some(head) = parts.next() {
            let Some(n) = head.strip_prefix('*') else {
                break;
            };
            let n: usize = n.parse().unwrap();
            let words: Vec<&str> = (0..n).map(|_| parts.nth(1).unwrap()).collect();
            out.push(words.join(" "));
        }
        out
    }

    #[test]
    fn commands_are_written_as_redis_writes_its_aof() {
        // The start of a redis-server 7.0.15 appendonly file after
        // `SET a 1 EX 100` and `EXPIRE d -1` on an existing `d`.
        let redis = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*5\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n$4\r\nPXAT\r\n$13\r\n1796174966173\r\n*2\r\n$3\r\nDEL\r\n$1\r\nd\r\n";
        let feed = Feed::default();
        feed.start();
        feed.append(None, vec![record(0, "SET a 1 PXAT 1796174966173")]);
        feed.append(None, vec![record(0, "DEL d")]);
        assert_eq!(
            String::from_utf8_lossy(&feed.stop()),
            String::from_utf8_lossy(redis)
        );
    }

    #[test]
    fn select_follows_the_database_and_units_are_transactions() {
        let feed = Feed::default();
        feed.start();
        feed.append(None, vec![record(2, "SET x 1")]);
        feed.append(None, vec![record(2, "DEL k"), record(2, "LPUSH k v")]);
        feed.append(None, vec![record(0, "SET y 1"), record(1, "SET y 2")]);
        feed.append(None, Vec::new());
        assert_eq!(
            lines(&feed.stop()),
            [
                "SELECT 2",
                "SET x 1",
                "MULTI",
                "DEL k",
                "LPUSH k v",
                "EXEC",
                "MULTI",
                "SELECT 0",
                "SET y 1",
                "SELECT 1",
                "SET y 2",
                "EXEC"
            ]
        );
    }

    #[test]
    fn a_transaction_goes_out_whole_when_it_commits() {
        let feed = Feed::default();
        feed.start();
        feed.open(7);
        feed.append(Some(7), vec![record(0, "SET a 1")]);
        feed.append(None, vec![record(0, "SET other 1")]);
        feed.append(Some(7), vec![record(0, "DEL b")]);
        feed.append(Some(9), vec![record(0, "SET never-opened 1")]);
        feed.commit(7);
        feed.append(Some(7), vec![record(0, "DEL a")]);
        feed.open(8);
        feed.append(Some(8), vec![record(0, "SET c 1")]);
        feed.commit(8);
        feed.open(10);
        feed.commit(10);
        assert_eq!(
            lines(&feed.stop()),
            [
                "SELECT 0",
                "SET other 1",
                "SET never-opened 1",
                "MULTI",
                "SET a 1",
                "DEL b",
                "EXEC",
                "DEL a",
                "SET c 1"
            ],
            "late records of a committed transaction come after it; one record is bare"
        );
    }

    #[test]
    fn nothing_is_kept_while_off_and_start_begins_afresh() {
        let feed = Feed::default();
        feed.open(1);
        feed.append(None, vec![record(0, "SET a 1")]);
        feed.append(Some(1), vec![record(0, "SET b 1")]);
        feed.commit(1);
        assert!(feed.stop().is_empty());
        feed.start();
        feed.open(2);
        feed.append(Some(2), vec![record(3, "SET c 1")]);
        feed.start();
        feed.commit(2);
        feed.append(None, vec![record(3, "SET d 1")]);
        assert_eq!(lines(&feed.stop()), ["SELECT 3", "SET d 1"]);
        assert!(!feed.is_on());
    }
}
