//! The figures one shard keeps for INFO: per-command calls, time and
//! latency, network bytes, and the report a shard sends when INFO asks.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::ShardData;
use crate::resp::Frame;
use crate::store::ExpiryStats;

/// Calls, time and latency of one command on one shard.
#[derive(Clone, Default)]
pub struct CmdStat {
    pub calls: u64,
    pub usec: u64,
    pub failed: u64,
    /// Refused before it ran (arity, ACL, OOM, MISCONF, a queueing error).
    pub rejected: u64,
    /// Microseconds per call (INFO latencystats): made at the first call
    /// recorded while `latency-tracking` is on, as Redis does, so that
    /// with it off a command costs no histogram (about 25 KB a command and
    /// shard, memory eviction cannot give back).
    pub latency: Option<Box<Histogram<u64>>>,
}

/// An empty latency histogram: 1 µs to 1000 s, two significant digits
/// (Redis's bounds and precision).
fn new_histogram() -> Box<Histogram<u64>> {
    Box::new(Histogram::new_with_bounds(1, 1_000_000_000, 2).expect("static bounds"))
}

/// One shard's per-command statistics, by command id (`CommandSpec::id`):
/// every request records into them, so no hashing.
#[derive(Default, Clone)]
pub struct CommandStats(Vec<Option<CmdStat>>);

impl CommandStats {
    fn entry(&mut self, id: usize) -> &mut CmdStat {
        if self.0.len() <= id {
            self.0.resize_with(id + 1, || None);
        }
        self.0[id].get_or_insert_with(CmdStat::default)
    }

    /// The commands called so far, by id, with their statistics.
    pub fn called(&self) -> impl Iterator<Item = (usize, &CmdStat)> {
        self.0
            .iter()
            .enumerate()
            .filter_map(|(id, stat)| Some((id, stat.as_ref()?)))
    }

    pub fn merge(&mut self, other: &CommandStats) {
        for (id, stat) in other.0.iter().enumerate() {
            if let Some(stat) = stat {
                let mine = self.entry(id);
                mine.calls += stat.calls;
                mine.usec += stat.usec;
                mine.failed += stat.failed;
                mine.rejected += stat.rejected;
                if let Some(theirs) = &stat.latency {
                    let _ = mine
                        .latency
                        .get_or_insert_with(new_histogram)
                        .add(theirs.as_ref());
                }
            }
        }
    }
}

/// Counters one shard's loop moves.
#[derive(Default, Clone)]
pub struct ShardCounters {
    pub commands: CommandStats,
    pub commands_processed: u64,
    pub net_input_bytes: u64,
    pub net_output_bytes: u64,
    /// Commands processed at the last ops/sec sample, and the rate then.
    pub ops_at_sample: u64,
    pub ops_per_sec: u64,
    /// Error replies by their first word (`ERR`, `WRONGTYPE`, ...), as
    /// INFO errorstats counts them.
    pub errors: BTreeMap<Box<str>, u64>,
}

impl ShardCounters {
    /// The totals without the per-command table.
    pub fn clone_totals(&self) -> ShardCounters {
        ShardCounters {
            commands: CommandStats::default(),
            errors: self.errors.clone(),
            ..*self
        }
    }

    /// Counts the error replies in `frame`, the reply a client gets: the
    /// frame itself, or each error in EXEC's array (Redis counts every
    /// error reply a client is sent, its transaction's included).
    pub fn record_errors(&mut self, frame: &Frame, in_exec: bool) {
        match frame {
            Frame::Array(items) if in_exec => {
                for item in items {
                    self.record_errors(item, false);
                }
            }
            _ => {
                if let Some(code) = frame.error_code() {
                    // Redis names an error by the word before its first
                    // space, looked for in the first 32 bytes; ERR else.
                    let word = match code.iter().take(32).position(|&b| b == b' ') {
                        Some(end) => &code[..end],
                        None => b"ERR",
                    };
                    let word = String::from_utf8_lossy(word);
                    match self.errors.get_mut(word.as_ref()) {
                        Some(count) => *count += 1,
                        None => {
                            self.errors.insert(word.into(), 1);
                        }
                    }
                }
            }
        }
    }

    /// Counts a call of the command `id` (`CommandSpec::id`); `track`:
    /// `latency-tracking` is on, so its histogram records it too.
    pub fn record(&mut self, id: usize, usec: u64, failed: bool, track: bool) {
        self.commands_processed += 1;
        let stat = self.commands.entry(id);
        stat.calls += 1;
        stat.usec += usec;
        stat.failed += failed as u64;
        if track {
            stat.latency
                .get_or_insert_with(new_histogram)
                .saturating_record(usec.max(1));
        }
    }

    /// Counts a refusal of the command `id` before it ran.
    pub fn record_rejected(&mut self, id: usize) {
        self.commands.entry(id).rejected += 1;
    }

    pub fn merge(&mut self, other: &ShardCounters) {
        self.commands.merge(&other.commands);
        self.commands_processed += other.commands_processed;
        self.net_input_bytes += other.net_input_bytes;
        self.net_output_bytes += other.net_output_bytes;
        self.ops_per_sec += other.ops_per_sec;
        for (code, count) in &other.errors {
            *self.errors.entry(code.clone()).or_default() += count;
        }
    }
}

/// What one shard reports for INFO.
pub struct ShardReport {
    pub shard: usize,
    /// Per database: (keys, volatile keys, avg_ttl ms).
    pub dbs: Vec<(usize, usize, f64)>,
    pub expiry: ExpiryStats,
    pub counters: ShardCounters,
    /// What the shard's clients hold (`ShardData::clients_mem`).
    pub clients_mem: u64,
    /// Changes commands made on the shard (`Notifier::dirty`, Redis's
    /// `server.dirty`): `rdb_changes_since_last_save`.
    pub changes: u64,
    /// Bytes the shard's Lua state holds (INFO `used_memory_vm_eval`); the
    /// scripting layer fills it in, this layer knows no VM.
    pub lua_mem: u64,
    /// What the shard's databases' tables hold besides keys and values
    /// (main and expires; INFO `used_memory_overhead`).
    pub tables_mem: u64,
    /// The shard's running (or last) background snapshot.
    pub snapshot: crate::store::SnapshotProgress,
}

/// What MEMORY STATS reads of one shard: its clients' memory and, per
/// database, its keys and the table overheads (`Db::overhead`), which INFO
/// does not need and so does not pay for.
pub struct ShardMemory {
    pub clients_mem: u64,
    /// Per database: (keys, main table overhead, expires overhead), bytes.
    pub dbs: Vec<(usize, usize, usize)>,
}

impl ShardMemory {
    pub fn of(data: &ShardData) -> ShardMemory {
        ShardMemory {
            clients_mem: data.clients_mem,
            dbs: data
                .store
                .dbs
                .iter()
                .map(|db| {
                    let (main, expires) = db.overhead();
                    (db.len(), main, expires)
                })
                .collect(),
        }
    }
}

impl ShardReport {
    /// `with_commands`: copy the per-command statistics too (commandstats,
    /// latencystats); they are the costly part, so only when asked for.
    pub fn of(data: &ShardData, with_commands: bool) -> ShardReport {
        let mut counters = data.counters.clone_totals();
        if with_commands {
            counters.commands = data.counters.commands.clone();
        }
        ShardReport {
            shard: data.id,
            dbs: data
                .store
                .dbs
                .iter()
                .map(|db| (db.len(), db.volatile_len(), db.avg_ttl_ms))
                .collect(),
            expiry: data.store.stats.clone(),
            counters,
            clients_mem: data.clients_mem,
            changes: data.store.stats.notify.dirty,
            snapshot: data.store.snapshot_progress(),
            lua_mem: 0,
            tables_mem: data
                .store
                .dbs
                .iter()
                .map(|db| {
                    let (main, expires) = db.overhead();
                    (main + expires) as u64
                })
                .sum(),
        }
    }
}
