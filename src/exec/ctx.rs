//! The context a command runs in on the shard that owns its keys.

use std::sync::Arc;

use crate::exec::Shared;
use crate::store::{ActiveExpire, Expiry, Keyspace, Store};

/// Everything one shard owns that commands touch.
pub struct ShardData {
    pub id: usize,
    pub store: Store,
    pub sweep: ActiveExpire,
    /// Unix milliseconds, read once per loop iteration: every command in the
    /// iteration sees the same instant, as Redis caches it per command.
    pub now_ms: u64,
    pub shared: Arc<Shared>,
    /// Command and network counters for INFO.
    pub counters: crate::exec::stats::ShardCounters,
    /// Spikes of work that blocked this shard (LATENCY).
    pub latency: crate::latency::Monitor,
    /// Pub/Sub messages produced by the current command, for the loop to route.
    pub deliveries: Vec<crate::pubsub::Delivery>,
    /// Key locks of transactions spanning shards, and the work waiting on them.
    pub locks: crate::exec::locks::Locks<crate::exec::Parked>,
    /// The transaction whose queued commands are being dispatched (EXEC): its
    /// commands hold the locks and must not wait for them.
    pub current_tx: Option<crate::exec::TxId>,
    /// The transaction of the op running now, if it runs in one (a script
    /// across shards tags the commands it sends other shards with it).
    pub op_tx: Option<crate::exec::TxId>,
    /// What this shard's clients hold (`client_memory`, summed by the loop
    /// as their buffers change): INFO `mem_clients_normal`.
    pub clients_mem: u64,
    /// A Lua script runs on this shard now: commands that answer a script
    /// differently read it (SORT BY a constant sorts a set, as Redis's
    /// CLIENT_SCRIPT does).
    pub in_script: bool,
    /// The tracking client whose reads the work running now remembers
    /// (CLIENT TRACKING; `cmd::tracking::remember`): set by the loop from
    /// the command's session or its op's `ReplyTo`, None otherwise.
    pub reader: Option<u64>,
    /// While a tracking client's script runs: whether one of its commands
    /// read (its declared keys are then remembered).
    pub script_reads: Option<bool>,
    /// The work running now is the master's (this server is a replica):
    /// it sees logically expired keys as live (`store::Expiry`).
    pub from_master: bool,
}

impl ShardData {
    /// Shard `id`'s data at start: empty databases (as many as
    /// `databases` says) feeding the shared propagation feed, a sweep
    /// seeded with `seed`, the clock at `now_ms`.
    pub fn new(id: usize, shared: Arc<Shared>, seed: u64, now_ms: u64) -> ShardData {
        let databases = shared.config.databases();
        ShardData {
            id,
            store: Store::new(databases).feeding(shared.feed.switch()),
            sweep: ActiveExpire::new(seed),
            now_ms,
            shared,
            counters: Default::default(),
            latency: Default::default(),
            deliveries: Vec::new(),
            locks: Default::default(),
            current_tx: None,
            op_tx: None,
            clients_mem: 0,
            in_script: false,
            reader: None,
            script_reads: None,
            from_master: false,
        }
    }
}

/// A command's view: the shard's data and the client's selected database.
pub struct Ctx<'a> {
    pub shard: &'a mut ShardData,
    pub db: usize,
}

impl<'a> Ctx<'a> {
    pub fn new(shard: &'a mut ShardData, db: usize) -> Ctx<'a> {
        Ctx { shard, db }
    }

    pub fn ks(&mut self) -> Keyspace<'_> {
        let expiry = self.shard.expiry();
        self.shard
            .store
            .keyspace(self.db, self.shard.now_ms)
            .with_expiry(expiry)
    }

    pub fn now_ms(&self) -> u64 {
        self.shard.now_ms
    }

    /// Fires keyspace event `event` of `class` (`store::notify`) for `key`.
    pub fn notify(&mut self, class: u32, event: &'static str, key: &[u8]) {
        let db = self.db;
        self.shard.store.stats.notify.notify(class, event, db, key);
    }
}

impl ShardData {
    /// Names the client whose work runs next: `id` for NOLOOP, and as the
    /// reader to remember when `reads` (None: nobody's work, as the sweep).
    pub fn set_caller(&mut self, id: Option<u64>, reads: bool) {
        self.store.stats.notify.tracking.caller = id;
        self.reader = id.filter(|_| reads);
    }

    /// How lookups treat logically expired keys: a replica never removes
    /// them itself (its master's DEL does); its clients read them as
    /// missing, its master's commands as live. While the AOF replays at
    /// start-up nothing expires either (only the replay runs commands):
    /// its commands meet the keys as they were when they were logged, as
    /// Redis's loading does; the keys expire once loading ends.
    pub fn expiry(&self) -> Expiry {
        if self.shared.aof.is_loading() {
            Expiry::Keep
        } else if !self.shared.repl.is_replica() {
            Expiry::Remove
        } else if self.from_master {
            Expiry::Keep
        } else {
            Expiry::Hide
        }
    }

    /// Hands what the work just run recorded (a command, an op, a served
    /// waiter) to the feed as one unit: part of transaction `tx` when the
    /// work ran in one. Called by the shard loop after each piece of work,
    /// so the log is empty between two.
    pub fn publish_records(&mut self, tx: Option<super::TxId>) {
        if self.store.stats.propagate.is_empty() {
            return;
        }
        let unit = self.store.stats.propagate.take();
        self.shared.feed.append(tx, unit);
    }

    /// Hands a sweep slice's deletions to the feed, each on its own as
    /// Redis propagates each expired key; the deletion of a key that a
    /// transaction holds (the sweep does not wait for locks) goes with that
    /// transaction, after what it did to the key.
    pub fn publish_expired(&mut self) {
        if self.store.stats.propagate.is_empty() {
            return;
        }
        for record in self.store.stats.propagate.take() {
            let tx = record.key().and_then(|key| {
                self.locks.holder(&super::LockKey {
                    db: record.db,
                    key: key.clone(),
                })
            });
            self.shared.feed.append(tx, vec![record]);
        }
    }
}
