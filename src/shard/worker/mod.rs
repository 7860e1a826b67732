//! The shard loop: one thread, one mio poll, its connections, its store.
//!
//! Each iteration: wait for socket events, inbox wake-ups or the expiry
//! timer; serve readable sockets (running local commands inline, sending the
//! rest to their owners); run the ops other shards sent; run one slice of
//! active expiry if a cycle is under way (past the sweep's normal share,
//! only in a pass that served no client); send this iteration's hops as one
//! batch per shard; write replies out. Blocked clients (BLPOP and friends)
//! are served and timed out by the hooks in `waits`.
//!
//! The loop's parts, one file each:
//! - `input`: reading sockets, parsing, running commands (`cmd::admit`
//!   decides what a command does; the loop carries out the [`Action`]),
//!   Pub/Sub deliveries and writing replies out;
//! - `hops`: jobs, the ops other shards send, their answers and the key
//!   locks of transactions (`exec::hop`);
//! - `clients`: accepting and closing connections, CLIENT LIST / KILL,
//!   output limits, idle timeouts;
//! - `pacing`: when the active-expiry sweep runs and how much it takes;
//! - `waits`: blocked clients;
//! - `tracking`: client-side caching's invalidations, out and in;
//! - `client_evict`: this shard's part of `maxmemory-clients`.
//!
//! Nothing here calls back into itself: a job that finishes hands its
//! client back to the loop (`resume`), which reads on with that client's
//! input after the current step, so no step runs inside another.

mod busy;
mod client_evict;
mod clients;
mod hops;
mod input;
mod pacing;
mod saving;
mod tracking;
mod waits;

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use self::hops::Transactions;
use self::pacing::Pacing;
use super::blocking::Blocking;
use super::WAKER_TOKEN;
use crate::exec::{Msg, ShardData, Shared};
use crate::latency::{Event, PassClock};
use crate::net::Conn;

/// The token of listener `i` is `LISTENER - i` (one per `bind` address).
const LISTENER: usize = usize::MAX - 2;
/// At most this many listeners: Redis's CONFIG_BINDADDR_MAX (16) bind
/// addresses, each on `port` and on `tls-port`.
const LISTENERS_MAX: usize = 32;
/// Largest single read from a socket.
const READ_CHUNK: usize = 64 * 1024;
/// A connection's turn in a pass of the loop: at most this many commands
/// or this long (µs), whichever comes first; then the other connections are
/// served and it resumes in the next pass. Loading millions of new keys, a
/// pass over one 64 KiB read of SETs took up to 14 ms (page faults of a
/// growing keyspace). Redis's bound is its 16 KiB read, some 500 commands.
const TURN_COMMANDS: usize = 256;
const TURN_US: u64 = 500;

pub struct Worker {
    data: ShardData,
    poll: Poll,
    /// This shard's listener on each `bind` address: those on `port`, then
    /// those on `tls-port`.
    listeners: Vec<TcpListener>,
    /// With `tls-port`: the index in `listeners` of its first listener
    /// (its clients start from `config::tls::current()`).
    tls_from: Option<usize>,
    conns: Slab<Conn>,
    inbox: Receiver<Vec<Msg>>,
    /// Messages for each shard produced this iteration, sent as one batch.
    outbox: Vec<Vec<Msg>>,
    /// Connections with output to write at the end of the iteration.
    dirty: Vec<usize>,
    /// Connections with input left for the next pass (each marked in its
    /// `deferred_input`, with whether its peer has closed): a socket that
    /// may hold more than the last read took, or commands left when their
    /// turn ended (`TURN_US`). The next pass does not wait for events.
    unread: Vec<usize>,
    scratch: Vec<u8>,
    /// Clients whose pending job finished: their input is read on once
    /// the current step is over (`resume_input`).
    resume: Vec<usize>,
    pacing: Pacing,
    /// Waiters on this shard's keys and this shard's blocked clients.
    blocking: Blocking,
    /// Transactions started by this shard's clients.
    txs: Transactions,
    /// When the last key of a background save paced by
    /// `rdb-key-save-delay` was written.
    save_paced_at: Option<Instant>,
    /// What the loop lends a running script's busy passes (`busy`); None
    /// while lent, or if its stand-in poll could not be made (then
    /// scripts run without busy passes).
    spare: Option<busy::Spare>,
    /// The keys and reader ids of this shard's tracking table as last
    /// added to the shared figures (`tracking`).
    tracked_said: (usize, usize),
    /// Connections whose next command waits for CLIENT PAUSE to end.
    postponed: Vec<usize>,
    /// Connections whose read buffer grew past its first size for a large
    /// command, looked at every [`GROWN_TRIM_MS`] (`trim_grown`) rather
    /// than at the once-a-second cron, and when that is next due.
    grown: Vec<usize>,
    grown_trim_at_ms: u64,
    /// The connection whose command runs now: client eviction closes it
    /// once the command is over, not under it.
    executing: Option<usize>,
}

/// How often a read buffer grown for a large command is checked for being
/// given back (Redis's clientsCron looks at each client about every
/// 1000 / hz ms, 100 at its default hz). It goes back at the second check
/// that finds it empty and finds only small commands since the first.
pub(super) const GROWN_TRIM_MS: u64 = 100;

pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Worker {
    pub fn new(
        id: usize,
        shared: Arc<Shared>,
        poll: Poll,
        listeners: Vec<TcpListener>,
        inbox: Receiver<Vec<Msg>>,
    ) -> Worker {
        let n = shared.nshards;
        crate::util::stamp::calibrate();
        let pacing = Pacing::new(&shared);
        let data = ShardData::new(id, shared, 0x5eed ^ (id as u64) ^ unix_ms(), unix_ms());
        Worker {
            data,
            poll,
            listeners,
            tls_from: None,
            conns: Slab::new(),
            inbox,
            outbox: (0..n).map(|_| Vec::new()).collect(),
            dirty: Vec::new(),
            unread: Vec::new(),
            scratch: vec![0; READ_CHUNK],
            resume: Vec::new(),
            pacing,
            blocking: Blocking::default(),
            txs: Transactions::default(),
            save_paced_at: None,
            spare: busy::Spare::new()
                .map_err(|e| log::warn!("shard {id}: no busy pass for long scripts: {e}"))
                .ok(),
            tracked_said: (0, 0),
            postponed: Vec::new(),
            grown: Vec::new(),
            grown_trim_at_ms: 0,
            executing: None,
        }
    }

    /// Listeners from `first` on are `tls-port`'s: their clients speak TLS.
    pub fn with_tls_from(mut self, first: usize) -> Worker {
        self.tls_from = Some(first);
        self
    }

    /// Registers listener `i` with the poll as `LISTENER - i`. False (and
    /// logged) if one could not be.
    fn register_listeners(&mut self) -> bool {
        for (i, listener) in self.listeners.iter_mut().enumerate().take(LISTENERS_MAX) {
            let token = Token(LISTENER - i);
            if let Err(e) = self
                .poll
                .registry()
                .register(listener, token, Interest::READABLE)
            {
                log::error!("shard {}: cannot register listener: {e}", self.data.id);
                return false;
            }
        }
        true
    }

    pub fn run(mut self) {
        crate::exec::busy::install(busy::pass);
        if !self.register_listeners() {
            return;
        }
        let mut events = Events::with_capacity(1024);
        // Over `maxmemory` at the end of the last pass: evict again soon.
        let mut over_limit = false;
        loop {
            let sweeping = self.data.sweep.in_cycle() && self.data.shared.sweeping();
            // Read once a pass: nothing the pass serves can end a window
            // sooner (a key filed now has a deadline in its future).
            let early_cycle_at = self.pacing.early_cycle_at_ms(&self.data);
            let saving = self.data.store.snapshot_running();
            let timeout = if sweeping || saving || !self.unread.is_empty() {
                Duration::ZERO
            } else {
                self.pacing.wait_for(early_cycle_at, unix_ms())
            };
            let timeout = self.poll_timeout_for_blocked(timeout);
            let timeout = if over_limit { Duration::ZERO } else { timeout };
            let latency_ms = self.data.shared.config.latency_threshold_ms();
            // With the latency monitor on, each pass is timed; one that
            // does not mean to sleep from before its poll, so time off the
            // CPU in the poll counts too.
            let mut pass = (latency_ms > 0 && timeout.is_zero()).then(PassClock::start);
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    log::error!("shard {}: poll failed: {e}", self.data.id);
                    return;
                }
            }
            self.data.now_ms = unix_ms();
            if latency_ms > 0 && pass.is_none() {
                pass = Some(PassClock::start());
            }
            let served_from = Instant::now();
            self.data.store.stats.notify.flags = self.data.shared.config.notify_flags();
            self.data.store.stats.notify.tracking.bcast = self.data.shared.tracking.broadcasting();
            // CLIENT PAUSE holds expiry and eviction back too.
            let paused = self.data.shared.pause.active(self.data.now_ms).is_some();
            self.data.store.stats.expiry_paused = paused;
            let deferred = std::mem::take(&mut self.unread);
            let mut served = !events.is_empty() || !deferred.is_empty();
            for event in events.iter() {
                match event.token() {
                    WAKER_TOKEN => {}
                    Token(t) if t <= LISTENER && t > LISTENER - LISTENERS_MAX => {
                        self.accept(LISTENER - t)
                    }
                    Token(t) => {
                        let readable =
                            event.is_readable() || event.is_read_closed() || event.is_error();
                        // A connection with input left over reads once, below,
                        // knowing what this event says of its peer.
                        match self.conns.get_mut(t).map(|c| &mut c.deferred_input) {
                            Some(Some(closed)) => *closed |= event.is_read_closed(),
                            _ if readable => self.on_readable(t, event.is_read_closed()),
                            _ => {}
                        }
                        if event.is_writable() {
                            self.dirty.push(t);
                        }
                    }
                }
            }
            // Input left over from the last pass, after this pass's events.
            for token in deferred {
                // The token may have been closed and reused since: only a
                // connection still marked deferred reads here.
                let marked = self
                    .conns
                    .get_mut(token)
                    .and_then(|c| c.deferred_input.take());
                if let Some(peer_closed) = marked {
                    self.on_readable(token, peer_closed);
                }
            }
            served |= self.drain_inbox();
            self.expire_blocked();
            // Keys a transaction released outside a command or message.
            self.serve_ready_keys();
            // Commands CLIENT PAUSE held back, once it is over.
            self.resume_postponed();
            // Clients whose job finished in this pass go on with their input.
            self.resume_input();
            self.route_deliveries();
            if self
                .pacing
                .start_cycles(&mut self.data, early_cycle_at, Instant::now())
            {
                self.cron();
            }
            if !self.grown.is_empty() {
                self.trim_grown();
            }
            let mut sweep_us = 0;
            if self.pacing.slice_due(&self.data, served) {
                sweep_us = self.pacing.run_slice(&mut self.data);
                self.data.publish_expired();
                self.route_deliveries();
            }
            if saving {
                self.snapshot_slice();
            }
            let now_ms = self.data.now_ms;
            let monitor = &mut self.data.latency;
            monitor.record(Event::ExpireCycle, sweep_us, latency_ms, now_ms);
            // `appendfsync always`: what this pass appended to the AOF is
            // on disk before any reply or hop tells of it (the writer
            // thread writes and syncs; `persist::aof::writer`).
            crate::persist::aof::writer::wait_here();
            self.flush_dirty();
            // Eviction from the loop comes after this shard's clients'
            // output went out, as Redis's comes after its beforeSleep
            // wrote replies: checked before, the invalidations of the last
            // evictions, still queued, counted as used memory and made
            // more evictions, whose invalidations made more (a tracked
            // 1 KB key name goes to each reader). It comes before the
            // answers to other shards go: what a shard owes is paid
            // before the command that made the excess is answered.
            over_limit = self.data.evict_in_background();
            if over_limit
                || !self.data.store.stats.notify.events.is_empty()
                || self.data.store.stats.notify.tracking.has_news()
            {
                self.route_deliveries();
            }
            crate::persist::aof::writer::wait_here();
            self.send_outbox();
            if !self.dirty.is_empty() {
                self.flush_dirty();
            }
            // Only iterations that served something count as client work.
            if served {
                let busy_us = served_from.elapsed().as_micros() as u64;
                self.pacing.add_busy(busy_us.saturating_sub(sweep_us));
            }
            if let Some(pass) = pass {
                pass.finish(&mut self.data.latency, latency_ms, self.data.now_ms);
            }
        }
    }
}
