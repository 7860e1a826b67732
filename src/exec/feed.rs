//! The propagation feed: one ordered stream, in Redis's wire form, of the
//! commands that take a replica or an append-only file from an empty
//! keyspace to this server's state. Its readers are [`Sink`]s: the AOF
//! writer, the replication backlog, and `DEBUG EMBER-RECORD START|STOP`'s
//! recorder (`cmd::server`) that the tests read.
//!
//! What goes in: each shard hands over what one piece of its work recorded
//! (`store::propagate`, `cmd::propagate`) right after that piece ran, as
//! one unit; the feed writes it as RESP arrays, a `SELECT db` before any
//! record whose database is not the one the reader's stream last selected,
//! and `MULTI` ... `EXEC` around a unit of more than one record (Redis 7.0
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
//! # A reader that starts at a snapshot
//!
//! A replica's stream and a rewritten AOF's incr file must start exactly
//! where a snapshot of every shard was taken. A snapshot starts inside a
//! transaction holding every shard whole (`cmd::save::snapshot_all`), so
//! the instant is that transaction's commit: whatever reached the stream
//! before it is in the snapshot, and whatever comes after is not. So:
//! take a [`Hold`] before launching the snapshot's job (it keeps the feed
//! on, so the transaction opens and catches every record made on a shard
//! after that shard's part of the snapshot began), and from one of its
//! ops call [`Feed::attach_on_commit`] with the op's transaction; the sink
//! is attached when the transaction commits, just before the
//! transaction's own unit is written, which is therefore its first.
//!
//! Every attach makes every reader's next unit start with a SELECT, so a
//! reader that starts mid-stream always knows its database.
//!
//! Off (no reader, no hold: the default), the feed costs the request path
//! one relaxed load of [`Feed::switch`] per command; the lock below is
//! taken only while on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;

use super::TxId;
use crate::store::propagate::Record;
use crate::util::num::decimal_digits;

/// A reader of the feed.
pub trait Sink: Send {
    /// One whole unit of the stream as RESP bytes, its SELECT and
    /// MULTI/EXEC included. Called under the feed's lock on a shard's
    /// thread: append and wake, never block.
    fn write(&mut self, unit: &[u8]);
    /// Called under the feed's lock at the moment the sink is attached:
    /// nothing written before is in what it sees, everything after is.
    fn attached(&mut self) {}
}

/// Names an attached (or pending) sink for [`Feed::detach`].
pub type SinkId = u64;

/// The process-wide feed, shared by every shard (`exec::Shared::feed`).
pub struct Feed {
    /// On while something reads or holds; every shard's log reads it
    /// (`Log::is_on`).
    on: Arc<AtomicBool>,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    readers: Vec<Reader>,
    /// Sinks waiting for their transaction's commit.
    pending: HashMap<TxId, Vec<Waiting>>,
    /// Records of transactions under way, in the order they were made.
    open: HashMap<TxId, Vec<Record>>,
    /// DEBUG EMBER-RECORD's stream, while it records.
    recording: Option<Vec<u8>>,
    /// The database the recorder's stream last selected.
    recording_selected: Option<usize>,
    /// Live [`Hold`]s.
    holds: usize,
    next_id: SinkId,
}

/// A sink waiting for a commit, with the id it will have.
type Waiting = (SinkId, Box<dyn Sink>);

struct Reader {
    id: SinkId,
    sink: Box<dyn Sink>,
    /// The database this reader's stream last selected (None: the next
    /// unit selects its own).
    selected: Option<usize>,
}

impl Default for Feed {
    fn default() -> Feed {
        Feed {
            on: Arc::new(AtomicBool::new(false)),
            state: Arc::new(Mutex::new(State::default())),
        }
    }
}

/// Keeps the feed on while it lives (see the module doc).
pub struct Hold {
    on: Arc<AtomicBool>,
    state: Arc<Mutex<State>>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut state = lock(&self.state);
        state.holds -= 1;
        self.on.store(state.wanted(), Relaxed);
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A shard that panicked holding the lock left whole records: go on.
    state.lock().unwrap_or_else(|e| e.into_inner())
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
        lock(&self.state)
    }

    /// Keeps the feed on until the hold is dropped.
    pub fn hold(&self) -> Hold {
        let mut state = self.state();
        state.holds += 1;
        self.on.store(true, Relaxed);
        Hold {
            on: Arc::clone(&self.on),
            state: Arc::clone(&self.state),
        }
    }

    /// Attaches `sink` now: it receives every unit from the next on.
    pub fn attach(&self, sink: Box<dyn Sink>) -> SinkId {
        let mut state = self.state();
        let id = state.new_id();
        state.attach(id, sink);
        self.on.store(true, Relaxed);
        id
    }

    /// Attaches `sink` when transaction `tx` commits, just before its unit
    /// is written (at once when `tx` is not open: it committed, or started
    /// while the feed was off, which a [`Hold`] taken before its launch
    /// rules out).
    pub fn attach_on_commit(&self, tx: TxId, sink: Box<dyn Sink>) -> SinkId {
        let mut state = self.state();
        let id = state.new_id();
        if state.open.contains_key(&tx) {
            state.pending.entry(tx).or_default().push((id, sink));
        } else {
            state.attach(id, sink);
        }
        self.on.store(true, Relaxed);
        id
    }

    /// The next unit reader `id` gets starts with a SELECT: what it was
    /// given before went nowhere (a replica's backlog drops the feed; a
    /// promoted replica's stream must name its database, as Redis's does).
    pub fn reselect(&self, id: SinkId) {
        let mut state = self.state();
        if let Some(reader) = state.readers.iter_mut().find(|r| r.id == id) {
            reader.selected = None;
        }
    }

    /// Detaches a sink, attached or pending, and hands it back.
    pub fn detach(&self, id: SinkId) -> Option<Box<dyn Sink>> {
        let mut state = self.state();
        let mut found = None;
        if let Some(i) = state.readers.iter().position(|r| r.id == id) {
            found = Some(state.readers.remove(i).sink);
        } else {
            for sinks in state.pending.values_mut() {
                if let Some(i) = sinks.iter().position(|(s, _)| *s == id) {
                    found = Some(sinks.remove(i).1);
                    break;
                }
            }
            state.pending.retain(|_, sinks| !sinks.is_empty());
        }
        self.on.store(state.wanted(), Relaxed);
        found
    }

    /// Starts recording an empty stream (DEBUG EMBER-RECORD START).
    pub fn start(&self) {
        let mut state = self.state();
        if state.readers.is_empty() && state.pending.is_empty() && state.holds == 0 {
            // Transactions under way started before this stream: theirs
            // would be half a transaction in it.
            state.open.clear();
        }
        state.recording = Some(Vec::new());
        state.recording_selected = None;
        self.on.store(true, Relaxed);
    }

    /// Stops recording and hands the stream over.
    pub fn stop(&self) -> Vec<u8> {
        let mut state = self.state();
        let out = state.recording.take().unwrap_or_default();
        if !state.wanted() {
            // Nobody reads: records of transactions under way go with it.
            state.open.clear();
        }
        self.on.store(state.wanted(), Relaxed);
        out
    }

    /// Transaction `tx` starts: its records wait for [`Feed::commit`]. A
    /// transaction that started while the feed was off is never open; its
    /// records go out as its ops make them.
    pub fn open(&self, tx: TxId) {
        if self.is_on() {
            self.state().open.entry(tx).or_default();
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

    /// Transaction `tx` is over (its locks are about to be released): the
    /// sinks waiting for it are attached, then its records go out as one
    /// unit.
    pub fn commit(&self, tx: TxId) {
        if !self.is_on() {
            return;
        }
        let mut state = self.state();
        for (id, sink) in state.pending.remove(&tx).unwrap_or_default() {
            state.attach(id, sink);
        }
        if let Some(unit) = state.open.remove(&tx) {
            state.write_unit(&unit);
        }
    }
}

impl State {
    /// Whether shards should record.
    fn wanted(&self) -> bool {
        !self.readers.is_empty()
            || !self.pending.is_empty()
            || self.recording.is_some()
            || self.holds > 0
    }

    fn new_id(&mut self) -> SinkId {
        self.next_id += 1;
        self.next_id
    }

    fn attach(&mut self, id: SinkId, mut sink: Box<dyn Sink>) {
        sink.attached();
        for reader in &mut self.readers {
            reader.selected = None;
        }
        self.recording_selected = None;
        self.readers.push(Reader {
            id,
            sink,
            selected: None,
        });
    }

    fn write_unit(&mut self, unit: &[Record]) {
        let mut bytes = Vec::new();
        for reader in &mut self.readers {
            bytes.clear();
            encode_unit(&mut bytes, &mut reader.selected, unit);
            reader.sink.write(&bytes);
        }
        if let Some(out) = &mut self.recording {
            encode_unit(out, &mut self.recording_selected, unit);
        }
    }
}

/// Appends one unit to `out`: MULTI/EXEC around more than one record, a
/// SELECT wherever the database is not the one `selected` says.
fn encode_unit(out: &mut Vec<u8>, selected: &mut Option<usize>, unit: &[Record]) {
    let group = unit.len() > 1;
    if group {
        write_command(out, &[Bytes::from_static(b"MULTI")]);
    }
    for record in unit {
        if *selected != Some(record.db) {
            let mut digits = [0; 20];
            let db = decimal_digits(record.db as u64, &mut digits);
            let select = [Bytes::from_static(b"SELECT"), Bytes::copy_from_slice(db)];
            write_command(out, &select);
            *selected = Some(record.db);
        }
        write_command(out, &record.argv);
    }
    if group {
        write_command(out, &[Bytes::from_static(b"EXEC")]);
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

    /// A sink that shares what it got with the test.
    struct Shared(Arc<Mutex<Vec<u8>>>, Arc<Mutex<usize>>);

    impl Sink for Shared {
        fn write(&mut self, unit: &[u8]) {
            self.0.lock().unwrap().extend_from_slice(unit);
        }
        fn attached(&mut self) {
            *self.1.lock().unwrap() += 1;
        }
    }

    type Got = Arc<Mutex<Vec<u8>>>;

    /// A sink, what it got, and how often it was attached.
    fn sink() -> (Box<dyn Sink>, Got, Arc<Mutex<usize>>) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let attached = Arc::new(Mutex::new(0));
        let boxed = Box::new(Shared(Arc::clone(&got), Arc::clone(&attached)));
        (boxed, got, attached)
    }

    #[test]
    fn each_sink_selects_for_itself_and_an_attach_reselects_everyone() {
        let feed = Feed::default();
        let (a, got_a, attached_a) = sink();
        let id_a = feed.attach(a);
        assert!(feed.is_on());
        assert_eq!(*attached_a.lock().unwrap(), 1);
        feed.append(None, vec![record(1, "SET x 1")]);
        let (b, got_b, _) = sink();
        let id_b = feed.attach(b);
        feed.append(None, vec![record(1, "SET y 1")]);
        feed.append(None, vec![record(1, "SET z 1")]);
        assert_eq!(
            lines(&got_a.lock().unwrap()),
            ["SELECT 1", "SET x 1", "SELECT 1", "SET y 1", "SET z 1"]
        );
        assert_eq!(
            lines(&got_b.lock().unwrap()),
            ["SELECT 1", "SET y 1", "SET z 1"]
        );
        assert!(feed.detach(id_a).is_some());
        assert!(feed.is_on(), "b still reads");
        assert!(feed.detach(id_b).is_some());
        assert!(feed.detach(id_b).is_none());
        assert!(!feed.is_on());
    }

    #[test]
    fn a_sink_attached_on_commit_starts_with_its_transaction() {
        let feed = Feed::default();
        let (early, got_early, _) = sink();
        feed.attach(early);
        let hold = feed.hold();
        feed.open(4);
        feed.append(None, vec![record(0, "SET before 1")]);
        let (late, got_late, attached) = sink();
        feed.attach_on_commit(4, late);
        feed.append(Some(4), vec![record(0, "DEL swept")]);
        drop(hold);
        assert_eq!(*attached.lock().unwrap(), 0, "not before the commit");
        feed.commit(4);
        assert_eq!(*attached.lock().unwrap(), 1);
        feed.append(None, vec![record(0, "SET after 1")]);
        assert_eq!(
            lines(&got_late.lock().unwrap()),
            ["SELECT 0", "DEL swept", "SET after 1"]
        );
        assert_eq!(
            lines(&got_early.lock().unwrap()),
            [
                "SELECT 0",
                "SET before 1",
                "SELECT 0",
                "DEL swept",
                "SET after 1"
            ]
        );
    }

    #[test]
    fn a_hold_keeps_the_feed_on_and_a_pending_sink_can_be_withdrawn() {
        let feed = Feed::default();
        let hold = feed.hold();
        assert!(feed.is_on());
        feed.open(3);
        let (pending, got, _) = sink();
        let id = feed.attach_on_commit(3, pending);
        drop(hold);
        assert!(feed.is_on(), "the pending sink keeps it on");
        assert!(feed.detach(id).is_some());
        assert!(!feed.is_on());
        feed.commit(3);
        assert!(got.lock().unwrap().is_empty());
        // Not open: attached at once.
        let (now, got_now, attached) = sink();
        feed.attach_on_commit(99, now);
        assert_eq!(*attached.lock().unwrap(), 1);
        feed.append(None, vec![record(2, "SET k v")]);
        assert_eq!(lines(&got_now.lock().unwrap()), ["SELECT 2", "SET k v"]);
    }
}
