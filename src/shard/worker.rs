//! The shard loop: one thread, one mio poll, its connections, its store.
//!
//! Each iteration: wait for socket events, inbox wake-ups or the expiry
//! timer; serve readable sockets (running local commands inline, sending the
//! rest to their owners); run the ops other shards sent; run one slice of
//! active expiry if a cycle is under way (past the sweep's normal share,
//! only in a pass that served no client); send this iteration's hops as one
//! batch per shard; write replies out. Blocked clients (BLPOP and friends)
//! are served and timed out by the hooks in `waits`.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use crossbeam_channel::Receiver;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use super::blocking::{BlockMsg, Blocking};
use super::job::{Action, ClientType, ClientsOp, Job, KillFilter, Op, Out, Then};
use super::locks::{Need, TxId};
use super::{Shared, WAKER_TOKEN};
use crate::cmd::{self, Ctx, Session, ShardData};
use crate::latency::{Event, PassClock};
use crate::net::{Conn, Received};
use crate::resp::{Frame, ParseLimits, Parser};
use crate::store::{notify, ActiveExpire, ExpireParams, SliceOutcome, Store};
use crate::util::stamp::Stamp;

mod waits;

const LISTENER: Token = Token(usize::MAX - 2);
/// What a RESP2 client may send while subscribed.
const SUBSCRIBER_COMMANDS: &[&str] = &[
    "subscribe",
    "unsubscribe",
    "psubscribe",
    "punsubscribe",
    "ping",
    "quit",
    "reset",
];
/// A command's name as Redis reports it: `name|subcommand` for containers.
fn full_name(spec: &cmd::CommandSpec, argv: &[Bytes]) -> std::borrow::Cow<'static, str> {
    match argv.get(1) {
        Some(sub) if spec.container => format!(
            "{}|{}",
            spec.name,
            String::from_utf8_lossy(sub).to_ascii_lowercase()
        )
        .into(),
        _ => spec.name.into(),
    }
}

/// Largest single read from a socket.
const READ_CHUNK: usize = 64 * 1024;
/// A connection's turn in a pass of the loop: at most this many commands
/// or this long (µs), whichever comes first; then the other connections are
/// served and it resumes in the next pass. Loading millions of new keys, a
/// pass over one 64 KiB read of SETs took up to 14 ms (page faults of a
/// growing keyspace). Redis's bound is its 16 KiB read, some 500 commands.
const TURN_COMMANDS: usize = 256;
const TURN_US: u64 = 500;

/// A message between shards.
pub enum Msg {
    /// Run `op` here and send the output back to shard `from`. `tx`: the
    /// op belongs to that transaction, which holds the locks it needs.
    Run {
        from: usize,
        token: usize,
        conn_id: u64,
        seq: u64,
        part: usize,
        tx: Option<TxId>,
        op: Op,
    },
    /// The output of an op this shard asked for.
    Done {
        token: usize,
        conn_id: u64,
        seq: u64,
        part: usize,
        tx: Option<TxId>,
        out: Out,
    },
    /// Run `op` here; nobody waits for its output (cleanup of a client that left).
    Post(Op),
    /// Transaction `tx` is over: give back its locks here.
    Release { tx: TxId },
    /// A Pub/Sub message for one of this shard's connections.
    Deliver {
        token: usize,
        conn_id: u64,
        frame: Frame,
    },
    /// About a blocked client, between its shard and its keys' shards.
    Block(BlockMsg),
}

/// Where a job's output goes back to.
#[derive(Clone, Copy)]
struct ReplyTo {
    token: usize,
    conn_id: u64,
    seq: u64,
    /// The transaction the job runs in, once it holds locks.
    tx: Option<TxId>,
}

/// An op waiting on this shard for key locks to be released.
pub struct Parked {
    from: usize,
    to: ReplyTo,
    part: usize,
    op: Op,
}

pub struct Worker {
    data: ShardData,
    poll: Poll,
    listener: TcpListener,
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
    next_tick: Instant,
    next_cron: Instant,
    params: ExpireParams,
    /// Time spent serving sockets and inboxes since the last tick, µs: what
    /// the clients used, so a storm sweep takes only what they left.
    busy_us: u64,
    /// What a storm cycle may take beyond the normal budget, per tick, as
    /// of the last tick: the busy cap less what the clients, the normal
    /// sweep and the core's other tenants took.
    spare_us: u64,
    /// The sweep's CPU time (`expire_cycle_cpu_milliseconds`, in µs) at the
    /// last tick: cycles started between ticks share what is left of the
    /// tick's budget.
    sweep_us_at_tick: u64,
    /// What was left of this tick's budget did not pay for another cycle.
    tick_budget_spent: bool,
    /// When the current expiry cycle began: past its normal share of the
    /// time since, the sweep waits for passes without client work.
    cycle_started: Instant,
    /// Whether this shard last told `util::purge` it is in a storm.
    storm_reported: bool,
    /// This thread's run-queue wait at the last tick (`thread_run_delay_us`):
    /// the CPU other threads and processes wanted from this core, which a
    /// storm sweep leaves them too.
    run_delay_us: Option<u64>,
    /// Waiters on this shard's keys and this shard's blocked clients.
    blocking: Blocking,
    /// Transactions started by this shard's clients: the shards they lock.
    txs: HashMap<TxId, Vec<usize>>,
    next_tx: u64,
}

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
        listener: TcpListener,
        inbox: Receiver<Vec<Msg>>,
    ) -> Worker {
        let databases = shared.config.read().expect("config lock").databases;
        let n = shared.nshards;
        let params = current_params(&shared);
        crate::util::stamp::calibrate();
        Worker {
            data: ShardData {
                id,
                store: Store::new(databases).feeding(shared.feed.switch()),
                sweep: ActiveExpire::new(0x5eed ^ (id as u64) ^ unix_ms()),
                now_ms: unix_ms(),
                shared,
                counters: Default::default(),
                latency: Default::default(),
                deliveries: Vec::new(),
                locks: Default::default(),
                current_tx: None,
                clients_mem: 0,
            },
            poll,
            listener,
            conns: Slab::new(),
            inbox,
            outbox: (0..n).map(|_| Vec::new()).collect(),
            dirty: Vec::new(),
            unread: Vec::new(),
            scratch: vec![0; READ_CHUNK],
            next_tick: Instant::now(),
            next_cron: Instant::now(),
            params,
            busy_us: 0,
            spare_us: 0,
            sweep_us_at_tick: 0,
            tick_budget_spent: false,
            cycle_started: Instant::now(),
            storm_reported: false,
            run_delay_us: None,
            blocking: Blocking::default(),
            txs: HashMap::new(),
            next_tx: 0,
        }
    }

    pub fn run(mut self) {
        if let Err(e) =
            self.poll
                .registry()
                .register(&mut self.listener, LISTENER, Interest::READABLE)
        {
            log::error!("shard {}: cannot register listener: {e}", self.data.id);
            return;
        }
        let mut events = Events::with_capacity(1024);
        loop {
            let sweeping =
                self.data.sweep.in_cycle() && self.data.shared.expire.enabled.load(Relaxed);
            // Read once a pass: nothing the pass serves can end a window
            // sooner (a key filed now has a deadline in its future).
            let early_cycle_at = self.early_cycle_at_ms();
            let timeout = if sweeping || !self.unread.is_empty() {
                Duration::ZERO
            } else {
                let tick = self.next_tick.saturating_duration_since(Instant::now());
                match early_cycle_at {
                    Some(end) => tick.min(Duration::from_millis(end.saturating_sub(unix_ms()))),
                    None => tick,
                }
            };
            let timeout = self.poll_timeout_for_blocked(timeout);
            let latency_ms = self.data.shared.limits.latency_threshold_ms.load(Relaxed);
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
            let mut sweep_time = None;
            self.data.store.stats.notify.flags = self.data.shared.expire.notify_flags.load(Relaxed);
            let deferred = std::mem::take(&mut self.unread);
            let mut served = !events.is_empty() || !deferred.is_empty();
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept(),
                    WAKER_TOKEN => {}
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
            self.route_deliveries();
            let now = Instant::now();
            if now >= self.next_tick {
                self.tick(now);
            } else if early_cycle_at.is_some_and(|end| end <= self.data.now_ms) {
                self.start_early_cycle(now);
            }
            if self.sweep_slice_due(served) {
                let clock_origin = Instant::now();
                sweep_time = Some(clock_origin);
                let outcome = self.data.sweep.run_slice(
                    &mut self.data.store,
                    self.data.now_ms,
                    &self.params,
                    || clock_origin.elapsed().as_micros() as u64,
                );
                debug_assert_ne!(outcome, SliceOutcome::Idle);
                self.data.publish_expired();
                if outcome == SliceOutcome::Done {
                    self.report_storm();
                }
                self.route_deliveries();
            }
            let sweep_us = sweep_time.map_or(0, |t| t.elapsed().as_micros() as u64);
            let now_ms = self.data.now_ms;
            let monitor = &mut self.data.latency;
            monitor.record(Event::ExpireCycle, sweep_us, latency_ms, now_ms);
            self.send_outbox();
            self.flush_dirty();
            // Only iterations that served something count as client work.
            if served {
                self.busy_us += (served_from.elapsed().as_micros() as u64).saturating_sub(sweep_us);
            }
            if let Some(pass) = pass {
                pass.finish(&mut self.data.latency, latency_ms, self.data.now_ms);
            }
        }
    }

    /// Whether this pass runs a slice of the sweep: a cycle is under way
    /// and, once it has had its normal share of the time since it began,
    /// the pass served no client (`ActiveExpire::yields_to_clients`).
    fn sweep_slice_due(&self, served: bool) -> bool {
        let sweep = &self.data.sweep;
        if !sweep.in_cycle() || !self.data.shared.expire.enabled.load(Relaxed) {
            return false;
        }
        let since_cycle_us = self.cycle_started.elapsed().as_micros() as u64;
        !(served && sweep.yields_to_clients(&self.params, since_cycle_us))
    }

    /// Tells `util::purge` whether this shard reclaims a storm (jemalloc
    /// purges nothing while one does). A sweep turned off ends it.
    fn report_storm(&mut self) {
        let in_storm = self.data.sweep.in_storm() && self.data.shared.expire.enabled.load(Relaxed);
        crate::util::purge::report_storm(&mut self.storm_reported, in_storm);
    }

    /// The timer: start an expiry cycle `hz` times a second; once a second,
    /// close idle clients and sample ops/sec and memory.
    fn tick(&mut self, now: Instant) {
        self.params = current_params(&self.data.shared);
        let hz = self.data.shared.expire.hz.load(Relaxed).clamp(1, 500);
        let period = Duration::from_micros(1_000_000 / u64::from(hz));
        self.next_tick += period;
        if self.next_tick < now {
            self.next_tick = now + period;
        }
        // How long others kept this thread waiting for its core since the
        // last tick: they want that CPU, so a storm sweep does not take it.
        let run_delay = crate::util::clock::thread_run_delay_us();
        let waited_us = match (run_delay, self.run_delay_us) {
            (Some(now), Some(before)) => now.saturating_sub(before),
            _ => 0,
        };
        self.run_delay_us = run_delay;
        if self.data.shared.expire.enabled.load(Relaxed) {
            // Keep the shard at most `active-expire-storm-busy-perc` busy:
            // the storm budget gets what the clients, the normal sweep and
            // the core's other tenants leave.
            let period_us = period.as_micros() as u64;
            let busy_perc = self.data.shared.expire.storm_busy_perc.load(Relaxed);
            let cap = period_us * busy_perc / 100;
            let taken = self.busy_us + waited_us + self.params.cycle_budget_us;
            self.spare_us = cap.saturating_sub(taken);
            self.begin_cycle(self.params, self.spare_us, now);
        } else {
            self.report_storm();
        }
        self.busy_us = 0;
        self.sweep_us_at_tick = self.data.store.stats.cycle_cpu_us;
        self.tick_budget_spent = false;
        self.data.store.tidy();
        if now >= self.next_cron {
            self.next_cron = now + Duration::from_secs(1);
            self.cron();
        }
    }

    /// When a cycle may start before the next tick (unix ms): when the
    /// earliest deadline window ends, so a storm's keys go as soon as their
    /// window hands them over rather than up to a tick later (a second at
    /// hz 1). Not while a cycle runs, nor after one ran out of budget (a
    /// storm: the ticks pace it).
    fn early_cycle_at_ms(&self) -> Option<u64> {
        let sweep = &self.data.sweep;
        if sweep.in_cycle()
            || sweep.in_storm()
            || self.tick_budget_spent
            || !self.data.shared.expire.enabled.load(Relaxed)
        {
            return None;
        }
        self.data.store.next_window_end_ms()
    }

    /// Starts a cycle between ticks with what is left of the tick's
    /// budgets: their share of the time to the next tick, less what the
    /// sweep used since the last one. So the sweep's share per tick stays
    /// as set however many windows end in it.
    fn start_early_cycle(&mut self, now: Instant) {
        let period_us = self.params.tick_us;
        let left_us = self.next_tick.saturating_duration_since(now).as_micros() as u64;
        // Saturating: CONFIG RESETSTAT may have zeroed the counter since.
        let used_us = self
            .data
            .store
            .stats
            .cycle_cpu_us
            .saturating_sub(self.sweep_us_at_tick);
        let params = self.params.scaled(left_us).less(used_us);
        if params.cycle_budget_us == 0 {
            self.tick_budget_spent = true;
            return;
        }
        let spare_us = self.spare_us * left_us / period_us.max(1);
        self.begin_cycle(params, spare_us, now);
    }

    /// Starts a sweep cycle (at a tick or between ticks), noting when it
    /// began and whether it put the shard in storm mode.
    fn begin_cycle(&mut self, params: ExpireParams, spare_us: u64, now: Instant) {
        self.cycle_started = now;
        self.data
            .sweep
            .start_cycle(&params, &self.data.store, self.data.now_ms, Some(spare_us));
        self.report_storm();
    }

    fn cron(&mut self) {
        let c = &mut self.data.counters;
        c.ops_per_sec = c.commands_processed - c.ops_at_sample;
        c.ops_at_sample = c.commands_processed;
        let timeout_s = self.data.shared.config.read().map_or(0, |c| c.timeout);
        if timeout_s > 0 {
            let now = self.data.now_ms;
            let idle: Vec<usize> = self
                .conns
                .iter()
                .filter(|(_, c)| {
                    !c.has_pending() && now.saturating_sub(c.session.last_ms) > timeout_s * 1000
                })
                .map(|(t, _)| t)
                .collect();
            for token in idle {
                self.close(token);
            }
        }
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, addr)) => {
                    let shared = &self.data.shared;
                    let counters = &shared.counters;
                    counters.total_connections.fetch_add(1, Relaxed);
                    let count = counters.connected_clients.fetch_add(1, Relaxed) + 1;
                    if count > shared.limits.maxclients.load(Relaxed) {
                        counters.connected_clients.fetch_sub(1, Relaxed);
                        counters.rejected_connections.fetch_add(1, Relaxed);
                        use std::io::Write;
                        let _ = stream.write(b"-ERR max number of clients reached\r\n");
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    let laddr = stream
                        .local_addr()
                        .map(|a| a.to_string())
                        .unwrap_or_default();
                    let id = counters.next_client_id.fetch_add(1, Relaxed);
                    let mut session = Session::new(id, addr.to_string(), laddr, self.data.now_ms);
                    session.shard = self.data.id;
                    let limits = ParseLimits {
                        max_bulk_len: shared.limits.max_bulk_len(),
                        ..ParseLimits::default()
                    };
                    let entry = self.conns.vacant_entry();
                    let token = entry.key();
                    if let Err(e) =
                        self.poll
                            .registry()
                            .register(&mut stream, Token(token), Interest::READABLE)
                    {
                        log::warn!("cannot register a client: {e}");
                        counters.connected_clients.fetch_sub(1, Relaxed);
                        continue;
                    }
                    session.token = token;
                    entry.insert(Conn::new(stream, session, Parser::new(limits)));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Out of file descriptors and the like: try again on the next event.
                    log::warn!("accept failed: {e}");
                    return;
                }
            }
        }
    }

    /// `peer_closed`: the poll reported the peer's FIN. A short read stops
    /// before seeing end of stream, and the poll is edge-triggered, so without
    /// this a client that sent a partial frame and closed would never be freed.
    fn on_readable(&mut self, token: usize, peer_closed: bool) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        if conn.close_asap {
            return; // over its output limit: closed at the end of the pass
        }
        let limit = self.data.shared.limits.query_buffer_limit.load(Relaxed) as usize;
        // A large bulk being received gets the room it needs at once (up
        // to just past the query buffer limit), where growing the buffer a
        // read at a time doubled it and copied what it held: a 1.5 GB bulk
        // cut at the 1 GB limit peaked at 2-3 GB of RSS. Redis sizes its
        // query buffer for a big argument the same way.
        if let Some(missing) = conn.parser.pending_bulk_bytes(conn.rbuf.len()) {
            let queued = conn.rbuf.len() - conn.parser.held();
            let room = missing.min((limit + READ_CHUNK).saturating_sub(queued));
            if room > READ_CHUNK && conn.rbuf.capacity() - conn.rbuf.len() < room {
                conn.rbuf.reserve(room);
            }
        }
        // With commands still to run from the last turn, reading more would
        // only grow the buffer.
        let received = if conn.commands_left {
            Ok(Received {
                bytes: 0,
                open: true,
                drained: false,
            })
        } else {
            conn.fill_read_buffer(&mut self.scratch)
        };
        match received {
            Ok(received) => {
                self.data.counters.net_input_bytes += received.bytes as u64;
                // The complete arguments of an unfinished multibulk are
                // not query buffer: Redis holds them in argv, unlimited.
                if conn.rbuf.len() - conn.parser.held() > limit {
                    log::warn!(
                        "Closing client that reached max query buffer length: {} (qbuf initial bytes: {})",
                        client_line(conn, self.data.now_ms),
                        repr(&conn.rbuf[conn.parser.held()..][..64.min(conn.rbuf.len() - conn.parser.held())])
                    );
                    self.close(token);
                    return;
                }
                let all_run = self.process_input(token);
                if !(received.drained && all_run) {
                    // More to read or to run: next pass, after the others.
                    self.defer_input(token, peer_closed);
                } else if !received.open || peer_closed {
                    // The peer finished sending; answer what it sent, then close.
                    if let Some(conn) = self.conns.get_mut(token) {
                        conn.closing = true;
                        if self.blocking.clients.contains(conn.session.id) {
                            // Gone while blocked (or about to show as such):
                            // forget it now, as Redis does.
                            self.close(token);
                            return;
                        }
                    }
                }
                self.dirty.push(token);
            }
            Err(_) => self.close(token),
        }
    }

    /// Comes back to `token`'s input next pass (once, however often asked).
    fn defer_input(&mut self, token: usize, peer_closed: bool) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        match &mut conn.deferred_input {
            Some(closed) => *closed |= peer_closed,
            None => {
                conn.deferred_input = Some(peer_closed);
                self.unread.push(token);
            }
        }
    }

    /// Parses and dispatches the complete commands in the read buffer, for
    /// at most [`TURN_US`]. False if its turn ended with commands left; they
    /// run next pass.
    fn process_input(&mut self, token: usize) -> bool {
        // One clock reading per command: each command's end is the next
        // one's start (two readings a command cost 5% of the CPU).
        let turn_start = Stamp::now();
        let mut clock = turn_start;
        let mut run = 0;
        loop {
            let Some(conn) = self.conns.get_mut(token) else {
                return true;
            };
            conn.commands_left = false;
            if run == TURN_COMMANDS || clock.micros_since(turn_start) >= TURN_US {
                conn.commands_left = true;
                self.defer_input(token, false);
                return false;
            }
            if conn.closing || conn.barrier.is_some() {
                return true;
            }
            conn.parser
                .set_max_bulk_len(self.data.shared.limits.max_bulk_len());
            let argv = match conn.parser.next_command(&mut conn.rbuf) {
                Ok(Some(argv)) => argv,
                Ok(None) => return true,
                Err(e) => {
                    conn.push_reply(Frame::Error(format!("ERR {}", e.0)));
                    conn.closing = true;
                    return true;
                }
            };
            clock = self.execute(token, argv, clock);
            self.check_output_limit(token);
            run += 1;
            self.serve_ready_keys();
            self.route_deliveries();
        }
    }

    /// Publishes the keyspace events produced so far and sends every Pub/Sub
    /// message to its subscriber's shard.
    fn route_deliveries(&mut self) {
        let events = &mut self.data.store.stats.notify.events;
        if !events.is_empty() {
            let registry = &self.data.shared.pubsub;
            let flags = self.data.store.stats.notify.flags;
            for e in events.drain(..) {
                if registry.is_empty() {
                    continue;
                }
                if flags & notify::KEYSPACE != 0 {
                    let channel = Bytes::from(format!("__keyspace@{}__:", e.db).into_bytes());
                    let channel = [channel.as_ref(), e.key.as_ref()].concat();
                    registry.publish(
                        &Bytes::from(channel),
                        &Bytes::from_static(e.event.as_bytes()),
                        &mut self.data.deliveries,
                    );
                }
                if flags & notify::KEYEVENT != 0 {
                    let channel = Bytes::from(format!("__keyevent@{}__:{}", e.db, e.event));
                    registry.publish(&channel, &e.key, &mut self.data.deliveries);
                }
            }
        }
        if self.data.deliveries.is_empty() {
            return;
        }
        for d in std::mem::take(&mut self.data.deliveries) {
            let to = d.to;
            if to.shard == self.data.id {
                self.deliver(to.token, to.conn_id, d.frame);
            } else {
                self.outbox[to.shard].push(Msg::Deliver {
                    token: to.token,
                    conn_id: to.conn_id,
                    frame: d.frame,
                });
            }
        }
    }

    /// Queues a message on a subscriber, dropping the subscriber when it
    /// reads too slowly (so it cannot hold this shard's memory hostage).
    fn deliver(&mut self, token: usize, conn_id: u64, frame: Frame) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        if conn.session.id != conn_id {
            return;
        }
        conn.push_reply(frame);
        self.check_output_limit(token);
        self.dirty.push(token);
    }

    /// Redis's `closeClientOnOutputBufferLimitReached`, checked whenever a
    /// client's output grows: a client whose unsent replies hold its
    /// class's `client-output-buffer-limit` hard bytes or more, or the soft
    /// bytes or more for longer than the soft seconds, gets no more replies
    /// and is closed at the end of the pass (`Conn::close_asap`). Without
    /// it a client that sends and never reads holds memory without bound.
    fn check_output_limit(&mut self, token: usize) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        if conn.close_asap {
            return;
        }
        let limit = &self.data.shared.limits.obuf[obuf_class(&conn.session) as usize];
        let used = conn.out.mem() as u64;
        let hard = limit.hard.load(Relaxed);
        let soft = limit.soft.load(Relaxed);
        let over_hard = hard > 0 && used >= hard;
        let mut over_soft = false;
        if soft > 0 && used >= soft {
            // As Redis: the first time over only starts the clock, and the
            // soft limit counts once more than its seconds have passed.
            let now_s = self.data.now_ms / 1000;
            match conn.soft_limit_since {
                None => conn.soft_limit_since = Some(now_s),
                Some(since) => {
                    over_soft = now_s.saturating_sub(since) > limit.soft_seconds.load(Relaxed)
                }
            }
        } else {
            conn.soft_limit_since = None;
        }
        if !(over_hard || over_soft) {
            return;
        }
        log::warn!(
            "Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
            client_line(conn, self.data.now_ms)
        );
        conn.close_asap = true;
        conn.closing = true;
        self.dirty.push(token);
    }

    /// Runs a command that started at `started` (its parsing included);
    /// returns when it was done, the next command's start (`started` itself
    /// for a command refused before it ran: not worth a clock reading).
    fn execute(&mut self, token: usize, mut argv: Vec<Bytes>, started: Stamp) -> Stamp {
        let conn = &mut self.conns[token];
        conn.session.last_ms = self.data.now_ms;
        let Some(spec) = cmd::lookup(&argv[0]) else {
            conn.push_reply(cmd::unknown_command(&argv));
            if let Some(tx) = &mut conn.session.multi {
                tx.failed = true;
            }
            return started;
        };
        // EXEC answers a wrong arity itself: it ends the transaction too.
        if !spec.arity_ok(argv.len()) && spec.name != "exec" {
            conn.push_reply(cmd::args::err::wrong_arity(spec.name));
            if let Some(tx) = &mut conn.session.multi {
                tx.failed = true;
            }
            return started;
        }
        if conn.session.multi.is_some() && !cmd::transaction::CONTROL.contains(&spec.name) {
            let refusal = cmd::transaction::refusal_to_queue(&self.data, &conn.session, spec);
            let tx = conn.session.multi.as_mut().expect("checked above");
            match refusal {
                Some(refusal) => {
                    tx.failed = true;
                    conn.push_reply(refusal);
                }
                None => {
                    tx.queue(argv);
                    conn.push_reply(Frame::Simple("QUEUED"));
                }
            }
            return started;
        }
        if conn.session.in_subscriber_mode() && !SUBSCRIBER_COMMANDS.contains(&spec.name) {
            conn.push_reply(Frame::Error(format!(
                "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                full_name(spec, &argv)
            )));
            return started;
        }
        conn.session.last_cmd = spec.name;
        conn.session.last_sub = match argv.get(1) {
            Some(sub) if spec.container => Some(String::from_utf8_lossy(sub).to_ascii_lowercase()),
            _ => None,
        };
        let action = cmd::dispatch_spec(&mut self.data, &mut conn.session, spec, &mut argv);
        self.data.publish_records(None);
        conn.parser.recycle(argv);
        match action {
            Action::Reply(frame) => {
                let done = Stamp::now();
                let elapsed_us = done.micros_since(started);
                let data = &mut self.data;
                data.counters
                    .record(spec.id(), elapsed_us, frame.is_error());
                let latency_ms = data.shared.limits.latency_threshold_ms.load(Relaxed);
                if latency_ms > 0 && elapsed_us >= latency_ms * 1000 {
                    let event = if spec.has_flag("fast") {
                        Event::FastCommand
                    } else {
                        Event::Command
                    };
                    data.latency
                        .record(event, elapsed_us, latency_ms, data.now_ms);
                }
                conn.push_reply(frame);
                return done;
            }
            Action::Close(frame) => {
                conn.push_reply(frame);
                conn.closing = true;
            }
            Action::Block(wait) => {
                // Later commands of this client wait for the reply.
                let to = self.open_slot(token, spec, started, true);
                self.on_wait(to, *wait);
            }
            Action::Job(job) => {
                let to = self.open_slot(token, spec, started, job.ordered);
                self.launch(to, job);
            }
            Action::Exec { plan, check } => {
                let to = self.open_slot(token, spec, started, true);
                let conn = &mut self.conns[token];
                if let Some(run) = conn.session.exec.as_mut() {
                    run.seq = to.seq;
                }
                let job = if plan.is_empty() {
                    check
                } else {
                    check.locked(plan)
                };
                self.launch(to, job);
            }
            Action::RunQueued => {
                conn.push_reply(Frame::error("ERR internal: nothing to run"));
            }
        }
        Stamp::now()
    }

    /// Reserves the reply slot of a command answered later; `ordered`: the
    /// client's next commands wait for it.
    fn open_slot(
        &mut self,
        token: usize,
        cmd: &'static cmd::CommandSpec,
        started: Stamp,
        ordered: bool,
    ) -> ReplyTo {
        let conn = &mut self.conns[token];
        let seq = conn.push_waiting(0, Box::new(|_| Action::Reply(Frame::Null)), cmd, started);
        if ordered {
            conn.barrier = Some(seq);
        }
        ReplyTo {
            token,
            conn_id: conn.session.id,
            seq,
            tx: None,
        }
    }

    /// Runs the queued commands of the client's EXEC from where it stopped:
    /// local ones at once, and a job for the first one that needs other
    /// shards (its reply comes back through `complete`, which calls this
    /// again). The transaction's locks are held throughout.
    fn advance_exec(&mut self, to: ReplyTo) {
        loop {
            let Some(conn) = self.conns.get_mut(to.token) else {
                return;
            };
            let Some(run) = conn.session.exec.as_mut() else {
                return;
            };
            run.running = true;
            let (db, n) = (conn.session.db, self.data.shared.nshards);
            if let Some(batch) = cmd::transaction::remote_batch(run, db, self.data.id, n) {
                self.launch(to, batch);
                return;
            }
            let Some(mut argv) = run.steps.pop_front() else {
                let run = conn.session.exec.take().expect("checked");
                let exec = cmd::lookup(b"exec").expect("EXEC is in the table");
                self.finish(to, Frame::Array(run.replies), false, exec, run.started);
                return;
            };
            let Some(spec) = cmd::lookup(&argv[0]) else {
                continue;
            };
            self.data.current_tx = Some(to.tx.unwrap_or(0));
            let action = cmd::dispatch_spec(&mut self.data, &mut conn.session, spec, &mut argv);
            self.data.current_tx = None;
            self.data.publish_records(to.tx);
            match action {
                Action::Reply(frame) | Action::Close(frame) => {
                    if let Some(run) = conn.session.exec.as_mut() {
                        run.replies.push(frame);
                    }
                }
                Action::Job(mut job) => {
                    job.lock = None;
                    self.launch(to, job);
                    return;
                }
                Action::Exec { .. } | Action::RunQueued => {
                    if let Some(run) = conn.session.exec.as_mut() {
                        run.replies.push(Frame::error("ERR EXEC inside EXEC"));
                    }
                }
                // Blocking commands do not block inside EXEC (`dispatch_spec`).
                Action::Block(_) => {
                    if let Some(run) = conn.session.exec.as_mut() {
                        run.replies
                            .push(Frame::error("ERR internal: blocked inside EXEC"));
                    }
                }
            }
        }
    }

    /// Sends a job's ops (running local store ops at once) and completes the
    /// slot when every output is in. A job that needs locks and does not run
    /// in a transaction yet starts one: it takes the locks first.
    fn launch(&mut self, mut to: ReplyTo, job: Job) {
        let mut job = Some(job);
        while let Some(mut next) = job.take() {
            if let Some(plan) = next.lock.take() {
                if to.tx.is_none() && !plan.is_empty() {
                    self.next_tx += 1;
                    let tx = (self.data.id as u64) << 48 | self.next_tx;
                    to.tx = Some(tx);
                    self.txs.insert(tx, plan.keys().copied().collect());
                    self.data.shared.feed.open(tx);
                    if let Some(conn) = self.conns.get_mut(to.token) {
                        conn.tx = Some(tx);
                    }
                    next = Job::acquiring(plan, next);
                }
            }
            let Job { ops, then, .. } = next;
            let Some(conn) = self.conns.get_mut(to.token) else {
                return;
            };
            conn.rearm(to.seq, ops.len(), then);
            let mut done = None;
            if ops.is_empty() {
                done = conn.take_if_complete(to.seq);
            }
            for (part, (shard, op)) in ops.into_iter().enumerate() {
                if shard != self.data.id {
                    self.outbox[shard].push(Msg::Run {
                        from: self.data.id,
                        token: to.token,
                        conn_id: to.conn_id,
                        seq: to.seq,
                        part,
                        tx: to.tx,
                        op,
                    });
                } else if let Some(out) = self.admit_op(self.data.id, to, part, op) {
                    let Some(conn) = self.conns.get_mut(to.token) else {
                        return;
                    };
                    if let Some(complete) = conn.fill(to.seq, part, out) {
                        done = Some(complete);
                    }
                }
            }
            if let Some((then, outs, cmd, started)) = done {
                job = self.complete(to, then, outs, cmd, started);
            }
        }
    }

    /// An op arriving on this shard: runs it and returns its output, or parks
    /// it behind the key locks it meets (its output is sent when it runs).
    fn admit_op(&mut self, from: usize, to: ReplyTo, part: usize, op: Op) -> Option<Out> {
        let origin = (from, to.conn_id);
        match op {
            Op::Lock { need, wait } => {
                let Some(tx) = to.tx else {
                    return Some(Out::Count(0)); // not part of a transaction: nothing to lock for
                };
                if !wait {
                    let granted = self.data.locks.try_acquire(tx, &need, origin);
                    return Some(Out::Count(granted as i64));
                }
                let parked = Parked {
                    from,
                    to,
                    part,
                    op: Op::Lock {
                        need: Need::Nothing,
                        wait,
                    },
                };
                self.data
                    .locks
                    .acquire(tx, need, origin, parked)
                    .map(|_| Out::Count(1))
            }
            Op::Unlock => {
                if let Some(tx) = to.tx {
                    self.release_here(tx);
                }
                Some(Out::Count(0))
            }
            op if to.tx.is_some() || self.data.locks.is_idle() => Some(self.run_op_in(to.tx, op)),
            op => {
                let need = match &op {
                    Op::Store(need, _) => need.clone(),
                    _ => Need::Nothing,
                };
                let parked = Parked { from, to, part, op };
                let ready = self.data.locks.admit(need, origin, parked)?;
                Some(self.run_op_in(None, ready.op))
            }
        }
    }

    /// Runs `op` (part of transaction `tx`, if any) and hands what it
    /// recorded to the feed.
    fn run_op_in(&mut self, tx: Option<TxId>, op: Op) -> Out {
        let out = self.run_op(op);
        self.data.publish_records(tx);
        out
    }

    fn run_op(&mut self, op: Op) -> Out {
        match op {
            Op::Store(_, f) => f(&mut Ctx::new(&mut self.data, 0)),
            Op::Clients(q) => self.clients_op(q),
            // Lock ops are answered by `admit_op`; a granted request parks as this.
            Op::Lock { .. } => Out::Count(1),
            Op::Unlock => Out::Count(0),
        }
    }

    /// Sends an op's output to the shard that asked (or takes it here).
    fn send_out(&mut self, from: usize, to: ReplyTo, part: usize, out: Out) {
        if from == self.data.id {
            self.on_done(to, part, out);
        } else {
            self.outbox[from].push(Msg::Done {
                token: to.token,
                conn_id: to.conn_id,
                seq: to.seq,
                part,
                tx: to.tx,
                out,
            });
        }
    }

    /// Gives back `tx`'s locks on this shard and runs what waited for them.
    fn release_here(&mut self, tx: TxId) {
        for p in self.data.locks.release(tx) {
            let out = self.run_op_in(p.to.tx, p.op);
            self.send_out(p.from, p.to, p.part, out);
        }
    }

    /// Transaction `tx` of one of this shard's clients is over: every shard
    /// it locked gives its locks back.
    fn end_tx(&mut self, tx: TxId) {
        // Its records go out before any release lets other work at its keys.
        self.data.shared.feed.commit(tx);
        for shard in self.txs.remove(&tx).unwrap_or_default() {
            if shard == self.data.id {
                self.release_here(tx);
            } else {
                self.outbox[shard].push(Msg::Release { tx });
            }
        }
    }

    /// Runs a finished slot's continuation; returns the next step's job, if any.
    fn complete(
        &mut self,
        to: ReplyTo,
        then: Then,
        outs: Vec<Out>,
        cmd: &'static cmd::CommandSpec,
        started: Stamp,
    ) -> Option<Job> {
        let (frame, close) = match then(outs) {
            Action::Job(job) => return Some(job),
            Action::RunQueued => {
                self.advance_exec(to);
                return None;
            }
            Action::Block(wait) => {
                self.on_wait(to, *wait);
                return None;
            }
            Action::Reply(f) => (f, false),
            Action::Close(f) => (f, true),
            Action::Exec { .. } => (Frame::error("ERR internal: EXEC from a job"), false),
        };
        // The reply of a command queued in a running EXEC: keep it, go on.
        let conn = self.conns.get_mut(to.token)?;
        if let Some(run) = conn.session.exec.as_mut() {
            if run.running && run.seq == to.seq {
                let batched = std::mem::take(&mut run.batched);
                match frame {
                    Frame::Array(items) if batched => run.replies.extend(items),
                    frame => run.replies.push(frame),
                }
                self.advance_exec(to);
                return None;
            }
        }
        self.finish(to, frame, close, cmd, started);
        None
    }

    /// Resolves a slot with its reply; ends its transaction if it had one.
    fn finish(
        &mut self,
        to: ReplyTo,
        frame: Frame,
        close: bool,
        cmd: &'static cmd::CommandSpec,
        started: Stamp,
    ) {
        let elapsed_us = started.elapsed_us();
        self.data
            .counters
            .record(cmd.id(), elapsed_us, frame.is_error());
        if let Some(tx) = to.tx {
            if let Some(conn) = self.conns.get_mut(to.token) {
                conn.tx = None;
            }
            self.end_tx(tx);
        }
        let Some(conn) = self.conns.get_mut(to.token) else {
            return;
        };
        if conn.session.exec.as_ref().is_some_and(|r| r.seq == to.seq) {
            conn.session.exec = None; // WATCH failed before the commands ran
        }
        conn.resolve(to.seq, frame);
        conn.closing |= close;
        self.dirty.push(to.token);
        self.check_output_limit(to.token);
        let Some(conn) = self.conns.get_mut(to.token) else {
            return;
        };
        if conn.barrier == Some(to.seq) {
            conn.barrier = None;
            self.process_input(to.token);
        }
    }

    fn on_done(&mut self, to: ReplyTo, part: usize, out: Out) {
        let Some(conn) = self.conns.get_mut(to.token) else {
            return;
        };
        if conn.session.id != to.conn_id {
            return; // the client left and its token was reused
        }
        if let Some((then, outs, cmd, started)) = conn.fill(to.seq, part, out) {
            if let Some(job) = self.complete(to, then, outs, cmd, started) {
                self.launch(to, job);
            }
        }
    }

    /// Runs what other shards sent; returns whether there was any.
    fn drain_inbox(&mut self) -> bool {
        let mut any = false;
        while let Ok(batch) = self.inbox.try_recv() {
            any = true;
            for msg in batch {
                match msg {
                    Msg::Run {
                        from,
                        token,
                        conn_id,
                        seq,
                        part,
                        tx,
                        op,
                    } => {
                        let to = ReplyTo {
                            token,
                            conn_id,
                            seq,
                            tx,
                        };
                        if let Some(out) = self.admit_op(from, to, part, op) {
                            self.send_out(from, to, part, out);
                        }
                    }
                    Msg::Deliver {
                        token,
                        conn_id,
                        frame,
                    } => self.deliver(token, conn_id, frame),
                    Msg::Done {
                        token,
                        conn_id,
                        seq,
                        part,
                        tx,
                        out,
                    } => {
                        let to = ReplyTo {
                            token,
                            conn_id,
                            seq,
                            tx,
                        };
                        self.on_done(to, part, out);
                    }
                    Msg::Block(msg) => self.on_block_msg(msg),
                    Msg::Post(op) => {
                        self.run_op(op);
                    }
                    Msg::Release { tx } => self.release_here(tx),
                }
                // As after a local command: a write signals blocked clients.
                self.serve_ready_keys();
            }
        }
        any
    }

    fn send_outbox(&mut self) {
        let peers = self.data.shared.peers();
        for (shard, batch) in self.outbox.iter_mut().enumerate() {
            if batch.is_empty() {
                continue;
            }
            let batch = std::mem::take(batch);
            if peers[shard].inbox.send(batch).is_ok() {
                let _ = peers[shard].waker.wake();
            }
        }
    }

    fn flush_dirty(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        for token in dirty.drain(..) {
            let Some(conn) = self.conns.get_mut(token) else {
                continue;
            };
            conn.drain_ready();
            // Replies from other shards and woken blocked clients land here.
            self.check_output_limit(token);
            let Some(conn) = self.conns.get_mut(token) else {
                continue;
            };
            if conn.close_asap {
                self.close(token);
                continue;
            }
            match conn.flush() {
                Ok((written, all)) => {
                    self.data.counters.net_output_bytes += written as u64;
                    let mem = client_memory(conn);
                    self.data.clients_mem = (self.data.clients_mem + mem as u64)
                        .saturating_sub(std::mem::replace(&mut conn.accounted_mem, mem) as u64);
                    if all && conn.closing && !conn.has_pending() {
                        self.close(token);
                        continue;
                    }
                    if all == conn.wants_write {
                        conn.wants_write = !all;
                        let interest = if all {
                            Interest::READABLE
                        } else {
                            Interest::READABLE | Interest::WRITABLE
                        };
                        let _ = self.poll.registry().reregister(
                            &mut conn.stream,
                            Token(token),
                            interest,
                        );
                    }
                }
                Err(_) => self.close(token),
            }
        }
        self.dirty = dirty;
    }

    fn close(&mut self, token: usize) {
        if let Some(mut conn) = self.conns.try_remove(token) {
            let _ = self.poll.registry().deregister(&mut conn.stream);
            self.data.clients_mem = self
                .data
                .clients_mem
                .saturating_sub(conn.accounted_mem as u64);
            self.forget_blocked(conn.session.id);
            cmd::pubsub::forget(&self.data.shared.pubsub, &conn.session);
            if let Some(tx) = conn.tx {
                self.end_tx(tx);
            }
            for (shard, op) in
                cmd::transaction::unwatch_ops(&mut conn.session, self.data.shared.nshards)
            {
                if shard == self.data.id {
                    self.run_op(op);
                } else {
                    self.outbox[shard].push(Msg::Post(op));
                }
            }
            self.data
                .shared
                .counters
                .connected_clients
                .fetch_sub(1, Relaxed);
        }
    }

    fn clients_op(&mut self, op: ClientsOp) -> Out {
        match op {
            ClientsOp::List { ids, kind } => {
                // A set: CLIENT LIST ID with thousands of ids is O(clients + ids).
                let ids: Option<std::collections::HashSet<u64>> =
                    ids.map(|ids| ids.into_iter().collect());
                Out::Lines(
                    self.conns
                        .iter()
                        .filter(|(_, c)| ids.as_ref().is_none_or(|ids| ids.contains(&c.session.id)))
                        .filter(|(_, c)| kind.is_none_or(|k| k == client_type(&c.session)))
                        .map(|(_, c)| client_line(c, self.data.now_ms))
                        .collect(),
                )
            }
            ClientsOp::Kill(filter) => {
                let victims: Vec<usize> = self
                    .conns
                    .iter()
                    .filter(|(_, c)| kill_matches(&filter, &c.session))
                    .map(|(t, _)| t)
                    .collect();
                let count = victims.len() as i64;
                for token in victims {
                    if self.conns[token].session.id == filter.asker {
                        // As Redis: the reply to CLIENT KILL goes out, then
                        // the connection closes; it reads nothing more.
                        self.conns[token].closing = true;
                    } else {
                        self.close(token);
                    }
                }
                Out::Count(count)
            }
            ClientsOp::Unblock { id, error } => Out::Count(self.unblock_client(id, error)),
        }
    }
}

fn current_params(shared: &Shared) -> ExpireParams {
    let k = &shared.expire;
    ExpireParams::new(
        k.hz.load(Relaxed),
        k.effort.load(Relaxed),
        k.slice_us.load(Relaxed),
        k.storm_cpu_perc.load(Relaxed),
    )
}

/// The `client-output-buffer-limit` class of a client (no replicas yet).
fn obuf_class(s: &Session) -> crate::config::ObufClass {
    match client_type(s) {
        ClientType::PubSub => crate::config::ObufClass::PubSub,
        ClientType::Replica => crate::config::ObufClass::Replica,
        _ => crate::config::ObufClass::Normal,
    }
}

fn client_type(s: &Session) -> ClientType {
    if s.subscriptions() > 0 {
        ClientType::PubSub
    } else {
        ClientType::Normal
    }
}

fn kill_matches(filter: &KillFilter, s: &Session) -> bool {
    filter.skip_id != Some(s.id)
        && filter.id.is_none_or(|id| id == s.id)
        && filter.addr.as_ref().is_none_or(|a| *a == s.addr)
        && filter.laddr.as_ref().is_none_or(|a| *a == s.laddr)
        && filter.kind.is_none_or(|k| k == client_type(s))
}

/// CLIENT LIST's flags: `b` blocked, `P` subscribed, `N` nothing special.
fn client_flags(s: &Session) -> String {
    // Redis's letters, in Redis's order: P pubsub, x in MULTI, b blocked; N none.
    let mut flags = String::new();
    for (on, letter) in [
        (s.subscriptions() > 0, 'P'),
        (s.multi.is_some(), 'x'),
        (s.blocked, 'b'),
    ] {
        if on {
            flags.push(letter);
        }
    }
    if flags.is_empty() {
        flags.push('N');
    }
    flags
}

/// Bytes as Redis's `sdscatrepr` quotes them in its log.
fn repr(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &c in bytes {
        match c {
            b'\\' | b'"' => {
                out.push('\\');
                out.push(c as char);
            }
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push('"');
    out
}

/// What the commands queued in MULTI hold (CLIENT LIST `multi-mem`).
fn multi_mem(s: &Session) -> usize {
    s.multi.as_ref().map_or(0, |tx| tx.mem)
}

/// Everything a client holds: the connection itself, its read buffer (with
/// the arguments of an unfinished command), its pending and spare output
/// and its queued MULTI commands (CLIENT LIST `tot-mem`, INFO
/// `mem_clients_normal`).
pub fn client_memory(c: &Conn) -> usize {
    std::mem::size_of::<Conn>()
        + c.rbuf.capacity()
        + c.parser.stashed()
        + c.out.mem()
        + c.out.spare_mem()
        + multi_mem(&c.session)
}

/// One CLIENT LIST line, with Redis's field names.
pub fn client_line(c: &Conn, now_ms: u64) -> String {
    let s = &c.session;
    format!(
        "id={} addr={} laddr={} fd=0 name={} age={} idle={} flags={} db={} sub={} psub={} ssub=0 multi={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp=0 obl={} oll={} omem={} tot-mem={} events={} cmd={} user=default redir=-1 resp={}",
        s.id,
        s.addr,
        s.laddr,
        s.name.as_deref().unwrap_or(""),
        now_ms.saturating_sub(s.created_ms) / 1000,
        now_ms.saturating_sub(s.last_ms) / 1000,
        client_flags(s),
        s.db,
        s.channels.len(),
        s.patterns.len(),
        s.multi.as_ref().map_or(-1, |tx| tx.queued.len() as i64),
        // The arguments of an unfinished multibulk stay in the read
        // buffer; Redis counts them as argv, not query buffer.
        c.rbuf.len() - c.parser.held(),
        c.rbuf.capacity() - c.rbuf.len(),
        c.parser.argv_len(),
        multi_mem(s),
        c.rbuf.capacity(),
        c.out.front_len(),
        c.out.blocks().saturating_sub(1),
        c.out.mem(),
        client_memory(c),
        if c.wants_write { "rw" } else { "r" },
        match &s.last_sub {
            Some(sub) => format!("{}|{sub}", s.last_cmd),
            None => s.last_cmd.to_string(),
        },
        if s.proto == crate::resp::Protocol::Resp3 { 3 } else { 2 },
    )
}
