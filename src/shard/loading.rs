//! The start-up load, once the shards run: one code path for `dbfilename`
//! and for the append-only file, so a long load answers other clients
//! `-LOADING Redis is loading the dataset in memory` (INFO `loading:1` and
//! the `loading_*` fields) instead of leaving them unanswered.
//!
//! ```text
//!   before the shards start: plan() marks the server loading (the gate in
//!   cmd::admit answers LOADING to everything but `loading` commands)
//!   |
//!   thread ember-load: read the file, decode its records in order;
//!     each live key goes into its shard's batch (1024 keys), sent to
//!     that shard's inbox as a Post op that inserts it there
//!     (the shards insert in parallel; at most IN_FLIGHT batches wait)
//!   |  every batch sent: one more op per shard, answered back, so every
//!   |  key is in place before what comes next (the AOF's commands)
//!   v
//!   loading ends ("Ready to accept connections"); the replication link
//!   (replicaof) starts only now
//! ```
//!
//! A file that does not load stops the process with Redis's lines, as a
//! failed load stops redis-server; `SHUTDOWN` meanwhile saves nothing
//! (`cmd::save`), so a half-loaded keyspace never overwrites the file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use crate::exec::{Msg, Op, Out, Shared};
use crate::store::Value;

use super::StartError;

/// What the start-up load has to read.
pub enum Plan {
    Nothing,
    /// `dir/dbfilename`.
    Rdb(PathBuf),
    /// `appendonly yes`: the manifest's files.
    Aof,
}

/// Keys per batch sent to a shard: large enough that a message costs
/// little per key, small enough that a shard's turn with one is short.
const BATCH: usize = 1024;

/// Batches sent but not yet inserted, per shard, before the reader waits:
/// what a reader ahead of the shards holds in memory besides the keys.
const IN_FLIGHT_PER_SHARD: usize = 8;

/// Marks the server loading when there is something to load; returns what.
pub fn plan(shared: &Shared) -> Result<Plan, StartError> {
    let config = &shared.config;
    let plan = if config.appendonly() {
        Plan::Aof
    } else {
        let path = crate::persist::disk::target(&config.dir(), &config.dbfilename());
        match std::fs::metadata(&path) {
            Ok(_) => Plan::Rdb(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Plan::Nothing,
            Err(e) => return Err(StartError::Load(e.to_string())),
        }
    };
    if !matches!(plan, Plan::Nothing) {
        let aof = &shared.aof;
        aof.loading_start_s
            .store(crate::shard::worker::unix_ms() / 1000, Relaxed);
        aof.loading.store(true, Relaxed);
    }
    // A replica from its config is one while it loads, as Redis's is
    // (nothing expires meanwhile); its link starts once loading ends.
    if shared.config.replicaof().split_whitespace().count() >= 2 {
        shared.repl.set_replica(true);
    }
    Ok(plan)
}

/// Runs `plan` on a thread of its own (`addr`: this server, for the AOF's
/// replay), then ends loading and starts the replication link.
pub fn start(shared: Arc<Shared>, plan: Plan, addr: String) {
    if matches!(plan, Plan::Nothing) {
        log::info!("Ready to accept connections");
        crate::cmd::replication::start_from_config(&shared);
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("ember-load".into())
        .spawn(move || {
            let done = match plan {
                Plan::Nothing => Ok(()),
                Plan::Rdb(path) => super::persist::load_rdb(&shared, &path),
                Plan::Aof => super::aof_load::load(&shared, &addr),
            };
            if let Err(e) = done {
                // What `ember::run` does with a start-up error.
                log::error!("{e}");
                eprintln!("{e}");
                std::process::exit(1);
            }
            shared.aof.loading.store(false, Relaxed);
            // Redis's line once it serves everyone (its test suite waits
            // for it before the first command).
            log::info!("Ready to accept connections");
            crate::cmd::replication::start_from_config(&shared);
        });
    if let Err(e) = spawned {
        log::error!("Can't start the load of the data set: {e}");
        std::process::exit(1);
    }
}

/// A key read from a file: database, name, value, deadline.
type Loaded = (usize, Vec<u8>, Value, Option<u64>);

/// Where a reader puts the keys it decodes: batched per shard, inserted by
/// the shards' own threads. [`Keys::finish`] waits until all are in.
pub struct Keys<'a> {
    shared: &'a Shared,
    batches: Vec<Vec<Loaded>>,
    in_flight: Arc<AtomicUsize>,
    /// `key-load-delay`, read once at the start as Redis reads it.
    delay: i64,
    count: u64,
}

impl<'a> Keys<'a> {
    pub fn new(shared: &'a Shared) -> Keys<'a> {
        Keys {
            shared,
            batches: (0..shared.nshards.max(1)).map(|_| Vec::new()).collect(),
            in_flight: Arc::new(AtomicUsize::new(0)),
            delay: shared.config.key_load_delay(),
            count: 0,
        }
    }

    /// One key for its shard (`now` of the insert is the shard's).
    pub fn put(&mut self, db: usize, key: &[u8], value: Value, deadline: Option<u64>) {
        self.count += 1;
        self.pause();
        let shard = crate::cmd::shard_of(key, self.batches.len());
        let batch = &mut self.batches[shard];
        batch.push((db, key.to_vec(), value, deadline));
        if batch.len() >= BATCH {
            self.send(shard);
        }
    }

    /// `key-load-delay` after each key: µs, or for -n one µs once in n
    /// keys (Redis's `debugDelay` draws that at random; a count is as good).
    fn pause(&self) {
        let us = match self.delay {
            0 => return,
            d if d > 0 => d as u64,
            d if self.count.is_multiple_of(d.unsigned_abs()) => 1,
            _ => return,
        };
        std::thread::sleep(std::time::Duration::from_micros(us));
    }

    fn send(&mut self, shard: usize) {
        let limit = IN_FLIGHT_PER_SHARD * self.batches.len();
        while self.in_flight.load(Relaxed) >= limit {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        let keys = std::mem::take(&mut self.batches[shard]);
        let in_flight = Arc::clone(&self.in_flight);
        in_flight.fetch_add(1, Relaxed);
        let op = Op::keyless(move |ctx| {
            let now = ctx.shard.now_ms;
            let store = &mut ctx.shard.store;
            for (db, key, value, at) in keys {
                store.dbs[db].insert_raw(&key, value, at, now);
            }
            in_flight.fetch_sub(1, Relaxed);
            Out::Count(0)
        });
        post(self.shared, shard, op);
    }

    /// Sends what is left and returns once every shard has inserted all
    /// it was sent (each shard runs its inbox in order).
    pub fn finish(mut self) {
        for shard in 0..self.batches.len() {
            if !self.batches[shard].is_empty() {
                self.send(shard);
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        for shard in 0..self.batches.len() {
            let tx = tx.clone();
            let op = Op::keyless(move |_| {
                let _ = tx.send(());
                Out::Count(0)
            });
            post(self.shared, shard, op);
        }
        drop(tx);
        // A shard that stops drops its message, and with it the sender.
        while rx.recv().is_ok() {}
    }
}

fn post(shared: &Shared, shard: usize, op: Op) {
    if let Some(peer) = shared.peers().get(shard) {
        if peer.inbox.send(vec![Msg::Post(op)]).is_ok() {
            let _ = peer.waker.wake();
        }
    }
}
