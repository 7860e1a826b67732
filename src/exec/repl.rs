//! The master side of replication as data: the replication backlog (one
//! stream, one offset, for every shard) and the table of connected
//! replicas INFO and ROLE read. The threads that serve replicas are in
//! `cmd::replication`; this module holds what they and the shards share.
//!
//! # One backlog, written by the feed
//!
//! The backlog is a reader of the propagation feed (`exec::feed`): a
//! [`BacklogSink`] appends each unit under the feed's lock, so the
//! backlog's bytes are the feed's stream in the feed's order and
//! `master_repl_offset` counts them (Redis's offset is the same count of
//! the bytes it sent to its replicas). A sink's `write` runs on a shard's
//! thread: it appends and wakes the serving threads, never waits for a
//! socket, so a slow replica never holds a shard up.
//!
//! The backlog keeps the last `repl-backlog-size` bytes (for a partial
//! resync) and, past that, what a connected replica has not been sent
//! yet; a replica whose unsent bytes pass its output buffer limit
//! (`client-output-buffer-limit replica`) is disconnected by its thread
//! (Redis's rule), which lets those bytes go.
//!
//! # Where a full sync starts
//!
//! The first full sync attaches the backlog's sink at its snapshot's
//! instant (`Feed::attach_on_commit`). A later one attaches a
//! [`StartMark`]: its `attached` runs under the feed's lock at that
//! instant and reads the backlog's end, which is therefore the exact
//! offset the snapshot stands for (`+FULLRESYNC <replid> <offset>`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::feed::{Sink, SinkId};

/// Where a full sync waits for its background save's file (None: the
/// save failed or was aborted).
pub type FileWaiter = std::sync::mpsc::Sender<Option<Arc<Vec<u8>>>>;

/// The replication backlog and the replicas it serves.
#[derive(Default)]
pub struct Repl {
    backlog: Mutex<Backlog>,
    /// Signalled when bytes are appended (serving threads wait on it).
    more: Condvar,
    /// The replicas connected to this server, for INFO and ROLE.
    pub replicas: Mutex<Vec<Arc<ReplicaInfo>>>,
    /// A full sync waits for the running background save it started.
    pub rdb_waiters: Mutex<Vec<FileWaiter>>,
    /// The running background save was started for a diskless sync only:
    /// it writes no file.
    pub diskless_save: AtomicBool,
    /// Full and partial syncs served (INFO stats `sync_full`, ...).
    pub sync_full: AtomicU64,
    pub sync_partial_ok: AtomicU64,
    pub sync_partial_err: AtomicU64,
    /// This server replicates a master (REPLICAOF host port).
    replica: AtomicBool,
    /// The client id of the connection the master's stream is applied
    /// through (0: none).
    master_conn: AtomicU64,
    /// The replication IDs (PSYNC2).
    ids: Mutex<Ids>,
    /// The link to this server's master while it is a replica.
    pub link: Mutex<Option<Arc<Link>>>,
    /// A full sync's file, read by the link thread, for the master
    /// client's `REPLCONF ember-load` to load into the shards.
    pub pending_file: Mutex<Option<Vec<u8>>>,
    /// The master asked for an ACK (`REPLCONF GETACK`), applied in order
    /// on the master client: the link thread sends it.
    pub ack_requested: AtomicBool,
    /// The offset at the last snapshot's instant (its file's `repl-offset`).
    pub snapshot_offset: AtomicU64,
    /// Unix ms the last replica left (or this server became a master):
    /// `repl-backlog-ttl` counts from there. 0: not yet.
    pub no_replicas_since_ms: AtomicU64,
    /// FAILOVER's state (`cmd::replication::failover` drives it).
    pub failover: Mutex<super::failover::Failover>,
    /// The diskless full sync waiting out `repl-diskless-sync-delay`,
    /// which replicas asking meanwhile join.
    pub pending_sync: super::sync_group::Pending,
    /// The running background save was started for a full sync (a
    /// replica's leaving may end it, `cmd::replication::serve`).
    pub sync_save: AtomicBool,
    /// Unix ms of each shard's last cron: a thread that speaks for the
    /// server (the keepalives to a replica waiting for its sync) stays
    /// quiet while a shard is blocked, as Redis's one thread would.
    ticks: Mutex<Vec<u64>>,
    /// Bytes of stream the replicas' threads copied out of the backlog
    /// and are writing now (part of the replication buffers).
    pub in_flight: AtomicU64,
}

/// The replication buffers' memory beyond `repl-backlog-size`, bytes, as
/// of the backlog's last change: what the replicas hold apart from the
/// backlog, which Redis leaves out of the memory eviction counts
/// (`freeMemoryGetNotCountedMemory`). Kept here so that the eviction
/// check before each command reads one load, not the backlog's lock.
static BEYOND_BACKLOG: AtomicU64 = AtomicU64::new(0);

/// This server's replication IDs: its history's (`master_replid`, a
/// replica takes its master's), and the one before a promotion with the
/// offset it ended at (`master_replid2`, `second_repl_offset`), so
/// replicas of the old master can continue from the promoted one.
#[derive(Clone, Debug)]
pub struct Ids {
    pub replid: String,
    pub replid2: String,
    pub second_offset: i64,
}

impl Default for Ids {
    fn default() -> Ids {
        Ids {
            replid: "0".repeat(40),
            replid2: "0".repeat(40),
            second_offset: -1,
        }
    }
}

/// The replica side's state, for INFO, ROLE and REPLICAOF.
pub struct Link {
    pub host: String,
    pub port: u16,
    /// `connect`, `connecting`, `handshake`, `sync` or `connected`
    /// (ROLE's words).
    pub state: Mutex<&'static str>,
    /// REPLICAOF NO ONE or another master: the link thread ends.
    pub stop: AtomicBool,
    /// The master's stream applied up to here (`slave_repl_offset`).
    pub offset: AtomicU64,
    /// Read from the master up to here (`slave_read_repl_offset`).
    pub read_offset: AtomicU64,
    /// Unix ms of the last bytes from the master.
    pub last_io_ms: AtomicU64,
    /// Unix ms the link went down (0: it was never up).
    pub down_since_ms: AtomicU64,
    /// A full sync's file: its size (-1 unknown) and bytes read so far.
    pub sync_total: AtomicU64,
    pub sync_read: AtomicU64,
    /// The database the applied master's stream has selected (the master
    /// client's SELECTs), for a master client made after a reconnect.
    pub stream_db: Arc<std::sync::atomic::AtomicUsize>,
}

impl Link {
    pub fn new(host: String, port: u16) -> Link {
        Link {
            host,
            port,
            state: Mutex::new("connect"),
            stop: AtomicBool::new(false),
            offset: AtomicU64::new(0),
            read_offset: AtomicU64::new(0),
            last_io_ms: AtomicU64::new(0),
            down_since_ms: AtomicU64::new(0),
            sync_total: AtomicU64::new(0),
            sync_read: AtomicU64::new(0),
            stream_db: Default::default(),
        }
    }

    pub fn state(&self) -> &'static str {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_state(&self, state: &'static str) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = state;
    }

    pub fn is_up(&self) -> bool {
        self.state() == "connected"
    }
}

#[derive(Default)]
pub struct Backlog {
    buf: VecDeque<u8>,
    /// The offset of `buf[0]`'s byte, counting from 1 as Redis does: the
    /// stream's first byte is offset 1, and `end` is the last one's.
    start: u64,
    /// `master_repl_offset`: bytes of stream ever appended.
    pub end: u64,
    /// `repl-backlog-size` as last applied.
    pub size: usize,
    /// The backlog's sink, once the first replica attached it.
    pub sink: Option<SinkId>,
    /// Unix ms of the last PING appended for the replicas.
    pub last_ping_ms: u64,
    /// Offsets the connected replicas were sent up to: nothing past the
    /// smallest is trimmed.
    pub holds: Vec<Arc<AtomicU64>>,
    /// The offsets stand for a history (this server had replicas, or
    /// synced with a master): a PSYNC may name it.
    pub history: bool,
}

impl Backlog {
    /// Appends bytes of stream and trims what nobody needs.
    pub fn append(&mut self, bytes: &[u8]) {
        if self.buf.is_empty() {
            self.start = self.end + 1;
        }
        self.buf.extend(bytes);
        self.end += bytes.len() as u64;
        self.trim();
    }

    /// The memory the backlog's buffer takes, bytes (INFO's
    /// `mem_total_replication_buffers` with what is in flight): its
    /// allocation, which is what `used_memory` sees, not its length.
    pub fn mem(&self) -> u64 {
        self.buf.capacity() as u64
    }

    /// Publishes what the buffer holds past `repl-backlog-size`.
    fn publish(&self) {
        let beyond = self.buf.capacity().saturating_sub(self.size);
        BEYOND_BACKLOG.store(beyond as u64, Relaxed);
    }

    /// A full sync from a master: this server's history now starts at
    /// the master's offset `at`, with nothing before it.
    pub fn reset_at(&mut self, at: u64) {
        self.buf.clear();
        self.end = at;
        self.start = at + 1;
        self.history = true;
        self.publish();
    }

    fn trim(&mut self) {
        let keep_from = self
            .holds
            .iter()
            .map(|h| h.load(Relaxed) + 1)
            .min()
            .unwrap_or(u64::MAX)
            .min((self.end + 1).saturating_sub(self.size as u64));
        if keep_from > self.start {
            let drop = ((keep_from - self.start) as usize).min(self.buf.len());
            self.buf.drain(..drop);
            self.start += drop as u64;
        }
        self.publish();
    }

    /// A lagging replica grew the buffer past the backlog; once it caught
    /// up (or left) the room goes back, as Redis frees the replication
    /// buffer's blocks nobody references. Called by the feed's writer, a
    /// shard thread, whose allocation counter `used_memory` reads at once
    /// (a replica's thread's frees show only at the next sample, while
    /// [`not_counted_for_evict`] would drop at once).
    fn give_back_room(&mut self) {
        let keep = self.buf.len().max(self.size);
        if self.buf.capacity() > 2 * keep && self.buf.capacity() > SHRINK_FROM {
            self.buf.shrink_to(keep);
            self.publish();
        }
    }

    /// The first offset the backlog still holds (`repl_backlog_first_byte_offset`).
    pub fn first(&self) -> u64 {
        if self.buf.is_empty() {
            self.end + 1
        } else {
            self.start
        }
    }

    pub fn histlen(&self) -> usize {
        self.buf.len()
    }

    /// The bytes after offset `from` (exclusive), at most `max`; None when
    /// the backlog no longer holds them.
    pub fn after(&self, from: u64, max: usize) -> Option<Vec<u8>> {
        if from >= self.end {
            return Some(Vec::new());
        }
        if from + 1 < self.first() {
            return None;
        }
        let skip = (from + 1 - self.start) as usize;
        let n = ((self.end - from) as usize).min(max);
        Some(self.buf.range(skip..skip + n).copied().collect())
    }

    /// Frees the stream kept (`repl-backlog-ttl`): no PSYNC can continue
    /// until a full sync starts a history again. Returns the sink to
    /// detach from the feed (None: there is no backlog, or a full sync is
    /// attaching one).
    pub fn free(&mut self) -> Option<SinkId> {
        if !self.history || !self.holds.is_empty() || matches!(self.sink, None | Some(0)) {
            return None;
        }
        self.buf = VecDeque::new();
        self.start = self.end + 1;
        self.history = false;
        self.publish();
        self.sink.take()
    }

    /// `repl-backlog-size` as set now, trimming to it (CONFIG SET takes
    /// effect here and at each PING, so a replica reconnecting after a
    /// smaller size was set finds what Redis's backlog would hold).
    pub fn resize(&mut self, size: usize) {
        self.size = size;
        self.trim();
    }

    /// Whether a partial resync from offset `from` (the replica's next
    /// byte is `from + 1`) can be served.
    pub fn can_continue(&self, from: u64) -> bool {
        from <= self.end && from + 1 >= self.first() && self.history
    }
}

/// A buffer is given back room only past this size (1 MiB): below it the
/// reallocation costs more than the memory is worth.
const SHRINK_FROM: usize = 1 << 20;

/// What the replication buffers hold past `repl-backlog-size` (see
/// [`BEYOND_BACKLOG`]), with what the replicas' threads are writing.
pub fn not_counted_for_evict(repl: &Repl) -> u64 {
    BEYOND_BACKLOG.load(Relaxed) + repl.in_flight.load(Relaxed)
}

impl Repl {
    /// Shard `shard`'s cron ran at `now_ms`.
    pub fn tick(&self, shard: usize, now_ms: u64) {
        let mut ticks = self.ticks.lock().unwrap_or_else(|e| e.into_inner());
        if ticks.len() <= shard {
            ticks.resize(shard + 1, now_ms);
        }
        ticks[shard] = now_ms;
    }

    /// Every shard's cron ran within `within_ms` of `now_ms`.
    pub fn shards_alive(&self, now_ms: u64, within_ms: u64) -> bool {
        let ticks = self.ticks.lock().unwrap_or_else(|e| e.into_inner());
        ticks.iter().all(|&t| now_ms.saturating_sub(t) <= within_ms)
    }

    /// A master's state at start: `replid` drawn for it.
    pub fn new(replid: String) -> Repl {
        Repl {
            ids: Mutex::new(Ids {
                replid,
                ..Ids::default()
            }),
            ..Repl::default()
        }
    }

    pub fn ids(&self) -> Ids {
        self.ids.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn set_ids(&self, ids: Ids) {
        *self.ids.lock().unwrap_or_else(|e| e.into_inner()) = ids;
    }

    pub fn replid(&self) -> String {
        self.ids().replid
    }

    /// The link to the master, while this server is a replica.
    pub fn current_link(&self) -> Option<Arc<Link>> {
        self.link.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn is_replica(&self) -> bool {
        self.replica.load(Relaxed)
    }

    pub fn set_replica(&self, on: bool) {
        self.replica.store(on, Relaxed);
    }

    /// Whether client `id` is the connection the master's stream runs on.
    pub fn is_master_conn(&self, id: u64) -> bool {
        id != 0 && self.master_conn.load(Relaxed) == id
    }

    pub fn set_master_conn(&self, id: u64) {
        self.master_conn.store(id, Relaxed);
    }

    /// FAILOVER's state.
    pub fn failover(&self) -> MutexGuard<'_, super::failover::Failover> {
        self.failover.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn backlog(&self) -> MutexGuard<'_, Backlog> {
        self.backlog.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends bytes that are not the feed's (the PINGs to replicas).
    pub fn append(&self, bytes: &[u8]) {
        self.backlog().append(bytes);
        self.more.notify_all();
    }

    /// Waits until the backlog passes offset `sent` or `timeout` passes.
    pub fn wait_past(&self, sent: u64, timeout: Duration) {
        let backlog = self.backlog();
        if backlog.end > sent {
            return;
        }
        let _ = self
            .more
            .wait_timeout_while(backlog, timeout, |b| b.end <= sent);
    }

    /// Wakes the serving threads (a replica left, a setting changed).
    pub fn wake(&self) {
        self.more.notify_all();
    }

    /// Registers a replica for INFO; [`Repl::remove`] forgets it.
    pub fn add(&self, replica: Arc<ReplicaInfo>) {
        self.replicas
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(replica);
    }

    pub fn remove(&self, replica: &Arc<ReplicaInfo>) {
        let mut replicas = self.replicas.lock().unwrap_or_else(|e| e.into_inner());
        replicas.retain(|r| !Arc::ptr_eq(r, replica));
        if replicas.is_empty() {
            self.no_replicas_since_ms.store(unix_ms(), Relaxed);
        }
        drop(replicas);
        let mut backlog = self.backlog();
        backlog.holds.retain(|h| !Arc::ptr_eq(h, &replica.sent));
        backlog.trim();
    }

    /// The replicas now connected.
    pub fn list(&self) -> Vec<Arc<ReplicaInfo>> {
        self.replicas
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

pub(crate) fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One connected replica, as INFO's `slaveN:` line shows it.
pub struct ReplicaInfo {
    pub id: u64,
    pub ip: String,
    /// `REPLCONF listening-port` (0 when it sent none).
    pub port: u16,
    /// `wait_bgsave`, `send_bulk` or `online`.
    pub state: Mutex<&'static str>,
    /// The offset the stream was sent up to.
    pub sent: Arc<AtomicU64>,
    /// The offset it last acknowledged (`REPLCONF ACK`).
    pub ack: AtomicU64,
    /// Unix ms of its last ACK.
    pub ack_ms: AtomicU64,
    /// Set to make its thread drop it (CLIENT KILL TYPE replica, REPLICAOF).
    pub kill: AtomicBool,
    /// A handle on its socket, to shut it down when it is killed: its
    /// thread may be blocked writing to a replica that reads nothing.
    pub closer: Mutex<Option<std::net::TcpStream>>,
}

impl ReplicaInfo {
    pub fn state(&self) -> &'static str {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set_state(&self, state: &'static str) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = state;
    }

    /// Drops this replica (CLIENT KILL): its thread ends at its next
    /// look at the flag, or at once if it was writing.
    pub fn kill(&self) {
        self.kill.store(true, Relaxed);
        if let Some(socket) = self
            .closer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            let _ = socket.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// The backlog as a reader of the feed.
pub struct BacklogSink {
    pub repl: Arc<Repl>,
    /// Set at attach to the backlog's end: where the first sync starts.
    pub start: Arc<StartSlot>,
}

impl Sink for BacklogSink {
    fn write(&mut self, unit: &[u8]) {
        // A replica's backlog is its master's stream, fed as the master
        // client applies it; what the feed says is that stream again.
        if !self.repl.is_replica() {
            let mut backlog = self.repl.backlog();
            backlog.append(unit);
            backlog.give_back_room();
            drop(backlog);
            self.repl.more.notify_all();
        }
    }

    fn attached(&mut self) {
        let mut backlog = self.repl.backlog();
        backlog.history = true;
        let end = backlog.end;
        drop(backlog);
        self.start.set(end);
    }
}

/// Reads the backlog's end at the instant it is attached, then is detached.
pub struct StartMark {
    pub repl: Arc<Repl>,
    pub start: Arc<StartSlot>,
}

impl Sink for StartMark {
    fn write(&mut self, _: &[u8]) {}

    fn attached(&mut self) {
        let end = self.repl.backlog().end;
        self.start.set(end);
    }
}

/// The offset a full sync stands for, known once its snapshot's
/// transaction commits.
#[derive(Default)]
pub struct StartSlot {
    offset: Mutex<Option<u64>>,
    known: Condvar,
}

impl StartSlot {
    pub fn set(&self, offset: u64) {
        *self.offset.lock().unwrap_or_else(|e| e.into_inner()) = Some(offset);
        self.known.notify_all();
    }

    /// The offset, waiting up to `timeout` for it.
    pub fn wait(&self, timeout: Duration) -> Option<u64> {
        let guard = self.offset.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .known
            .wait_timeout_while(guard, timeout, |o| o.is_none())
            .unwrap_or_else(|e| e.into_inner());
        *guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_from_one_and_trim_keeps_the_size() {
        let mut b = Backlog {
            size: 4,
            ..Backlog::default()
        };
        assert_eq!(b.first(), 1);
        b.append(b"abc");
        assert_eq!((b.first(), b.end), (1, 3));
        assert_eq!(b.after(0, 10).unwrap(), b"abc");
        b.append(b"defg");
        assert_eq!((b.first(), b.end, b.histlen()), (4, 7, 4));
        assert_eq!(b.after(3, 10).unwrap(), b"defg");
        assert_eq!(b.after(5, 1).unwrap(), b"f");
        assert!(b.after(2, 10).is_none());
        assert_eq!(b.after(7, 10).unwrap(), b"");
    }

    #[test]
    fn a_replica_behind_holds_its_bytes() {
        let hold = Arc::new(AtomicU64::new(1));
        let mut b = Backlog {
            size: 2,
            holds: vec![Arc::clone(&hold)],
            ..Backlog::default()
        };
        b.append(b"abcdef");
        assert_eq!(b.after(1, 10).unwrap(), b"bcdef");
        hold.store(6, Relaxed);
        b.append(b"g");
        assert_eq!(b.first(), 6);
    }
}
