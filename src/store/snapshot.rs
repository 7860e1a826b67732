//! A snapshot of one database's table taken while the shard keeps
//! serving: the table is written in slices between client work, and it
//! holds the table as it was at the instant the snapshot began.
//!
//! # The cursor
//!
//! The table's slots are dense (`dict`): positions `0..len`, a removal
//! moving the last slot into the hole, an insert appending at the end.
//! The cursor walks the positions from the top down, like SCAN
//! (`Keyspace::scan`), and not the hash index: the index resizes a step
//! at a time and moves keys between its tables, the slots never move but
//! for that one swap. Positions at or above the cursor are *visited*
//! (written, or added after the start); those below are still to write.
//!
//! # Write before modify
//!
//! Before anything changes the slot at a position below the cursor (its
//! value, its deadline, or its removal), the old key is written first,
//! unless it was already, and remembered in `early` (Dragonfly's rule):
//! so every key is written with the value it had at the start, once.
//!
//! 1. A change at or above the cursor needs nothing: that key is written,
//!    or is new since the start and must not be written.
//! 2. A removal below the cursor writes the removed key first; the last
//!    slot then moves into its hole. If the last slot was visited, the key
//!    moved is marked `early` (written or new), so the cursor skips it.
//! 3. The cursor skips the keys marked `early` as it meets them (and
//!    forgets them then, so the set only ever holds keys changed ahead of
//!    the cursor).
//! 4. A key expired at the start is not written (the seeds' rule).
//!
//! A snapshot that must end at once (FLUSHDB, FLUSHALL and DEBUG RELOAD
//! empty the table) writes the rest first ([`Cursor::finish`]).

use std::collections::HashSet;

use ahash::RandomState;

use super::rdb::writer::{put_string, without_compression};
use super::rdb::{encode_value, RDB_VERSION_7_0};
use super::Value;

/// One database's keys, serialized as RDB key records ([`put_key`]),
/// with the counts RESIZEDB announces.
///
/// The records are kept in chunks of about [`CHUNK`] bytes: a snapshot of
/// gigabytes grows by a new chunk, never by moving what it holds (one
/// growing buffer doubled in place, and each doubling copied and faulted in
/// hundreds of megabytes inside a shard's slice: 150 ms stalls at 10M keys).
/// Joining parts ([`DbPart::append`]) shares the full chunks.
#[derive(Default, Debug, Clone)]
pub struct DbPart {
    done: Vec<std::sync::Arc<Vec<u8>>>,
    done_len: usize,
    /// The chunk being written.
    tail: Vec<u8>,
    pub keys: u64,
    pub expires: u64,
}

/// A chunk is closed once it holds this much (a record may pass it).
pub const CHUNK: usize = 1 << 20;

impl DbPart {
    /// Appends `key` with its value and deadline; returns the RDB version
    /// the value's encoding needs.
    pub fn put(&mut self, key: &[u8], value: &Value, expire_at: Option<u64>) -> u16 {
        self.keys += 1;
        if expire_at.is_some() {
            self.expires += 1;
        }
        if self.tail.len() >= CHUNK {
            // Room for the record that crosses the mark, mostly.
            let next = Vec::with_capacity(CHUNK + CHUNK / 8);
            self.seal(next);
        }
        put_key(&mut self.tail, key, value, expire_at)
    }

    fn seal(&mut self, next: Vec<u8>) {
        let full = std::mem::replace(&mut self.tail, next);
        if !full.is_empty() {
            self.done_len += full.len();
            self.done.push(std::sync::Arc::new(full));
        }
    }

    /// Bytes of records held.
    pub fn len(&self) -> usize {
        self.done_len + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The records, in order, as the chunks hold them.
    pub fn chunks(&self) -> impl Iterator<Item = &[u8]> {
        self.done
            .iter()
            .map(|c| c.as_slice())
            .chain(std::iter::once(self.tail.as_slice()))
            .filter(|c| !c.is_empty())
    }

    /// The records as one buffer.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        for c in self.chunks() {
            out.extend_from_slice(c);
        }
        out
    }

    /// Adds `other`'s keys (another shard's part of the same database):
    /// its full chunks are shared, its last one copied.
    pub fn append(&mut self, other: &DbPart) {
        self.seal(Vec::new());
        self.done.extend(other.done.iter().cloned());
        self.done_len += other.done_len;
        if !other.tail.is_empty() {
            self.done_len += other.tail.len();
            self.done.push(std::sync::Arc::new(other.tail.clone()));
        }
        self.keys += other.keys;
        self.expires += other.expires;
    }
}

/// `EXPIRETIME_MS`: the opcode before a key's deadline.
pub const EXPIRETIME_MS: u8 = 252;

/// Appends one key record: its deadline, then type, key and body.
pub fn put_key(out: &mut Vec<u8>, key: &[u8], value: &Value, expire_at: Option<u64>) -> u16 {
    if let Some(at) = expire_at {
        out.push(EXPIRETIME_MS);
        out.extend_from_slice(&at.to_le_bytes());
    }
    // The key goes between the type byte and the body.
    let mut encoded = Vec::new();
    let version = encode_value(value, &mut encoded);
    out.push(encoded[0]);
    put_string(out, key);
    out.extend_from_slice(&encoded[1..]);
    version
}

/// Whether a key is still there at `now_ms`: keys already expired are not
/// written.
pub fn is_live(value: &Value, expire_at: Option<u64>, now_ms: u64) -> bool {
    expire_at.is_none_or(|at| now_ms <= at)
        && !matches!(value, Value::Hash(h) if h.all_expired(now_ms))
}

/// A snapshot of one table in progress (see the module docs).
#[derive(Debug)]
pub struct Cursor {
    /// Positions below this are still to write.
    pub next: usize,
    /// The instant of the snapshot (Unix ms): keys expired then are left out.
    pub start_ms: u64,
    /// Keys below `next` written already, or moved there from above it.
    early: HashSet<Vec<u8>, RandomState>,
    pub out: DbPart,
    /// The newest RDB version a value needed.
    pub version: u16,
    /// `rdbcompression`.
    compress: bool,
    /// The database the table was when the snapshot began (SWAPDB moves
    /// the table, its snapshot with it).
    pub db: usize,
    /// Bytes written ahead of the cursor because a write was about to
    /// change the key: what ember copies where a forked save's memory is
    /// copied on write (INFO `current_cow_size`).
    pub copied: u64,
}

impl Cursor {
    pub fn new(db: usize, len: usize, start_ms: u64, compress: bool) -> Cursor {
        Cursor {
            next: len,
            start_ms,
            early: HashSet::default(),
            out: DbPart::default(),
            version: RDB_VERSION_7_0,
            compress,
            db,
            copied: 0,
        }
    }

    pub fn is_done(&self) -> bool {
        self.next == 0
    }

    /// Writes one key as of the start, if it was live then (`compress`:
    /// with `rdbcompression`'s LZF, when it is on).
    fn write(&mut self, key: &[u8], value: &Value, expire_at: Option<u64>, compress: bool) {
        if !is_live(value, expire_at, self.start_ms) {
            return;
        }
        let out = &mut self.out;
        let version = if compress && self.compress {
            out.put(key, value, expire_at)
        } else {
            without_compression(|| out.put(key, value, expire_at))
        };
        self.version = self.version.max(version);
    }

    /// Before the key at `pos` changes: writes it first if the cursor has
    /// yet to reach it and it was not written already. Uncompressed: this
    /// runs inside a client's write, which should wait for a copy, not for
    /// LZF (and the bytes copied are then what `copied` says).
    pub fn before_change(&mut self, pos: usize, key: &[u8], value: &Value, at: Option<u64>) {
        if pos < self.next && !self.early.contains(key) {
            self.early.insert(key.to_vec());
            let before = self.out.len();
            self.write(key, value, at, false);
            self.copied += (self.out.len() - before) as u64;
        }
    }

    /// After the key at `pos` was removed and the slot that was last
    /// (`moved_from`) moved into it with `moved_key`; `len` is the new
    /// length.
    pub fn after_removal(
        &mut self,
        pos: usize,
        removed: &[u8],
        moved: Option<(usize, &[u8])>,
        len: usize,
    ) {
        if !self.early.is_empty() {
            self.early.remove(removed);
        }
        if let Some((moved_from, moved_key)) = moved {
            if pos < self.next && moved_from >= self.next {
                self.early.insert(moved_key.to_vec());
            }
        }
        self.next = self.next.min(len);
    }

    /// Visits the slot at the cursor, given by `slot(pos)`; returns false
    /// when there was none left.
    pub fn step<'a>(
        &mut self,
        slot: impl FnOnce(usize) -> (&'a [u8], &'a Value, Option<u64>),
    ) -> bool {
        if self.next == 0 {
            return false;
        }
        self.next -= 1;
        let (key, value, at) = slot(self.next);
        if !self.early.is_empty() && self.early.remove(key) {
            return true;
        }
        self.write(key, value, at, true);
        true
    }

    /// Keys held in `early` (for tests).
    pub fn early_len(&self) -> usize {
        self.early.len()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand_xoshiro::rand_core::{RngCore, SeedableRng};

    use super::super::rdb::reader::Reader;
    use super::super::rdb::{decode_value, Limits};
    use super::super::Db;
    use super::*;

    const NOW: u64 = 1_000_000;

    /// The records of a part, decoded: key -> (value, deadline).
    fn records(part: &DbPart) -> BTreeMap<Vec<u8>, (Value, Option<u64>)> {
        let bytes = part.to_vec();
        let mut r = Reader::new(&bytes);
        let mut out = BTreeMap::new();
        while r.remaining() > 0 {
            let mut kind = r.u8().unwrap();
            let mut at = None;
            if kind == EXPIRETIME_MS {
                at = Some(r.millis().unwrap());
                kind = r.u8().unwrap();
            }
            let key = r.string().unwrap().into_owned();
            let value = decode_value(kind, &mut r, &Limits::default()).unwrap();
            assert!(
                out.insert(key, (value, at)).is_none(),
                "a key written twice"
            );
        }
        assert_eq!(out.len() as u64, part.keys);
        out
    }

    #[test]
    fn a_part_of_many_chunks_keeps_its_records_in_order_and_joins_without_copying() {
        let value = |i: usize| Value::copy_of(&vec![b'v'; 100 + i % 7]);
        let mut a = DbPart::default();
        let mut b = DbPart::default();
        // Uncompressed, so that 15,000 records of 100 bytes pass a chunk.
        without_compression(|| {
            for i in 0..30_000 {
                let part = if i % 2 == 0 { &mut a } else { &mut b };
                part.put(
                    format!("k{i}").as_bytes(),
                    &value(i),
                    (i % 3 == 0).then_some(NOW),
                );
            }
        });
        assert!(a.chunks().count() > 1, "{} bytes in one chunk", a.len());
        let mut joined = DbPart::default();
        joined.append(&a);
        joined.append(&b);
        assert_eq!(joined.len(), a.len() + b.len());
        assert_eq!(joined.expires, a.expires + b.expires);
        let all = records(&joined);
        assert_eq!(all.len(), 30_000);
        assert_eq!(all[b"k29999".as_slice()].0, value(29_999));
        // The full chunks are shared, not copied.
        assert!(std::sync::Arc::ptr_eq(&joined.done[0], &a.done[0]));
    }

    fn live_state(db: &Db, now: u64) -> BTreeMap<Vec<u8>, (Value, Option<u64>)> {
        db.iter()
            .filter(|&(_, e, at)| is_live(&e.value, at, now))
            .map(|(k, e, at)| (k.to_vec(), (e.value.clone(), at)))
            .collect()
    }

    /// Random writes, overwrites, deadline changes and removals between
    /// the slices: the part is the table as it was at the start, each key
    /// once, and the keys expired then are not in it.
    #[test]
    fn a_snapshot_holds_the_table_of_its_start_whatever_the_writes_do() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        for round in 0..40 {
            let mut db = Db::default();
            let keys = 1 + (rng.next_u32() % 3000) as usize;
            for i in 0..keys {
                let at = match rng.next_u32() % 5 {
                    0 => Some(NOW - 1),
                    1 => Some(NOW + 1000),
                    _ => None,
                };
                db.insert_raw(format!("k{i}").as_bytes(), Value::copy_of(b"old"), at, NOW);
            }
            let want = live_state(&db, NOW);
            db.begin_snapshot(round, NOW, round % 2 == 0);
            let mut n = 0u64;
            while db.snapshot().is_some_and(|s| !s.is_done()) {
                for _ in 0..rng.next_u32() % 8 {
                    let key = format!("k{}", rng.next_u32() as usize % (keys + 200));
                    n += 1;
                    match rng.next_u32() % 4 {
                        0 => db.insert_raw(
                            key.as_bytes(),
                            Value::copy_of(format!("new{n}").as_bytes()),
                            None,
                            NOW,
                        ),
                        1 => {
                            db.remove_raw(key.as_bytes());
                        }
                        2 => {
                            db.set_expire_raw(key.as_bytes(), Some(NOW + n));
                        }
                        _ => {
                            db.insert_raw(
                                format!("fresh{n}").as_bytes(),
                                Value::copy_of(b"x"),
                                None,
                                NOW,
                            );
                        }
                    }
                }
                db.snapshot_step(1 + rng.next_u32() as usize % 16);
            }
            let snap = db.take_snapshot().unwrap();
            assert_eq!(snap.db, round);
            assert_eq!(records(&snap.out), want, "round {round}");
        }
    }

    #[test]
    fn a_flush_finishes_the_snapshot_first() {
        let mut db = Db::default();
        for i in 0..100 {
            db.insert_raw(format!("k{i}").as_bytes(), Value::copy_of(b"v"), None, NOW);
        }
        let want = live_state(&db, NOW);
        db.begin_snapshot(0, NOW, true);
        db.snapshot_step(10);
        let old = db.clear();
        assert_eq!(old.len(), 100);
        assert!(db.is_empty());
        let snap = db.take_snapshot().unwrap();
        assert!(snap.is_done());
        assert_eq!(records(&snap.out), want);
    }
}
