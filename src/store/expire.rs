//! Active expiry: the per-shard sampling sweep, cut into short slices.
//!
//! Redis runs `activeExpireCycle` `hz` times a second and lets each run take
//! up to 25% of a tick (25 ms at hz 10) in one go, stalling every client for
//! that long during an expiry storm. ember keeps Redis's algorithm and budget
//! but spends the budget in slices of at most `active-expire-slice-us`; the
//! shard loop serves its sockets between slices, so no request waits behind
//! more than one slice.
//!
//! One cycle (started at every tick, and between ticks when a deadline
//! window ends, with what is left of the tick's budget; see the shard loop):
//! 1. For each database with volatile keys, sample `keys_per_loop` of them at
//!    random (O(1) pick from the expires index) and delete the expired ones.
//! 2. Repeat on the same database while more than `acceptable_stale` percent
//!    of a sample was expired; otherwise move to the next database.
//! 3. Stop when every database is done, or when the cycle's time budget is
//!    spent (counted in `expired_time_cap_reached_count`).
//! 4. A slice ends after `slice_us` microseconds; the cycle resumes in the
//!    next slice where it stopped.
//!
//! A cycle that runs out of budget with work left turns on storm mode: the
//! following cycles may use up to `active-expire-storm-cpu-perc` of a tick
//! instead of 25% (still in slices), until a cycle finishes its work; this is
//! what Redis's extra "fast" cycles do, without their long stall. A cycle
//! that finds more keys in passed deadline windows than a normal cycle can
//! take starts in storm mode at once. The share above 25% is never more
//! than the CPU the clients left spare in the last tick (the loop passes
//! it to `start_cycle`), so reclaiming a storm takes
//! spare CPU, not the clients'. Time the shard's thread spent waiting for
//! its core counts as taken too: another process that shares the core
//! (a web server on the same machine, a load generator) keeps its CPU.
//! Since no slice is long, the slices may run between any two batches of
//! socket work; a request waits behind one slice at most. Once a cycle has
//! had its normal share of the time since it began, its slices wait for
//! loop passes without client work (`yields_to_clients`).
//!
//! Before sampling a database, the sweep drains its deadline windows that
//! have passed (`buckets`): every key there is expired, so a storm among many
//! live volatile keys is reclaimed without sampling for it. A window hands
//! its keys back last filed first, which are the dict's last slots, so
//! removing them moves no other slot (`Db::expire_due`); to keep that order,
//! sampling leaves an expired key to its window until the window ends (at
//! most 64 ms after the deadline). Then the sweep drains the passed windows
//! of hashes with field deadlines, removing each such hash's expired fields
//! in one visit (and the hash when none is left), under the same slices and
//! budget. A database with neither volatile keys nor hashes with field
//! deadlines costs the sweep nothing.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::db::Sampled;
use super::Store;

/// Redis's `ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP`: keys sampled per round at effort 1.
const KEYS_PER_LOOP: usize = 20;
/// Redis's `ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC`: share of CPU per cycle at effort 1, percent.
const SLOW_TIME_PERC: u64 = 25;
/// Redis's `ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE`: percent of expired keys in a sample
/// below which a database is considered clean enough, at effort 1.
const ACCEPTABLE_STALE: u64 = 10;
/// Rounds between clock reads: reading the clock costs more than a round of 20 picks.
const ROUNDS_PER_CLOCK_READ: u32 = 4;
/// Keys taken from passed deadline windows between clock reads.
const DUE_BATCH: usize = 64;
/// The same while the table's index is being resized. Each removal then
/// also zeroes a page of the next table (a page fault) or moves 64 of its
/// buckets, several times the cost of the removal itself. Sweeping a 2M-key
/// storm among 1M other keys (the bench's case), the index shrinks near the
/// end, and with 64 keys between clock reads about 70 slices of 100 µs ran
/// past 150 µs (up to 1.5 ms) during that shrink; with 4, one to three did.
const DUE_BATCH_WHILE_RESIZING: usize = 4;
/// Hashes visited for expired fields between clock reads: a visit walks the
/// whole hash, so fewer than keys.
const DUE_HASH_BATCH: usize = 8;
/// Passed-window keys per µs of a normal cycle's budget past which a cycle
/// starts in storm mode. The sweep removes 3-6 such keys a µs, so a backlog
/// of more than 2 a µs is more than one normal cycle can take, and waiting
/// for a capped cycle to find that out would cost the storm a tick.
const STORM_DUE_KEYS_PER_US: u64 = 2;

/// The sweep's tunables, derived from `hz`, `active-expire-effort` and
/// `active-expire-slice-us` exactly as Redis derives them from effort.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpireParams {
    pub keys_per_loop: usize,
    pub acceptable_stale_pct: u64,
    /// Time one cycle may use, microseconds (25% of a tick at effort 1).
    pub cycle_budget_us: u64,
    /// Time a cycle may use while a storm is being reclaimed (the previous
    /// cycle ran out of budget with work left), microseconds.
    pub storm_budget_us: u64,
    /// Longest uninterrupted run of sweep work, microseconds.
    pub slice_us: u64,
    /// Time between two timer ticks (`hz`), microseconds.
    pub tick_us: u64,
    /// The normal share of the core a cycle may take, percent (25 at
    /// effort 1): how fast it may go while clients want the core.
    pub cpu_perc: u64,
}

impl ExpireParams {
    /// `storm_cpu_perc` is the share of a tick a cycle may use while a storm
    /// is being reclaimed (never less than the normal share).
    pub fn new(hz: u32, effort: u32, slice_us: u64, storm_cpu_perc: u64) -> ExpireParams {
        let hz = u64::from(hz.clamp(1, 500));
        let extra = u64::from(effort.clamp(1, 10) - 1);
        let cpu_perc = SLOW_TIME_PERC + 2 * extra;
        let storm_perc = storm_cpu_perc.clamp(cpu_perc, 100);
        ExpireParams {
            keys_per_loop: KEYS_PER_LOOP + KEYS_PER_LOOP / 4 * extra as usize,
            acceptable_stale_pct: ACCEPTABLE_STALE - extra,
            cycle_budget_us: 1_000_000 * cpu_perc / hz / 100,
            storm_budget_us: 1_000_000 * storm_perc / hz / 100,
            slice_us: slice_us.max(10),
            tick_us: 1_000_000 / hz,
            cpu_perc,
        }
    }

    /// These parameters for a cycle that has `left_us` of a tick to run
    /// (started between ticks): its budgets shrink in proportion.
    pub fn scaled(&self, left_us: u64) -> ExpireParams {
        let tick_us = self.tick_us.max(1);
        let part = |budget: u64| budget * left_us.min(tick_us) / tick_us;
        ExpireParams {
            cycle_budget_us: part(self.cycle_budget_us),
            storm_budget_us: part(self.storm_budget_us),
            ..*self
        }
    }

    /// These parameters with `used_us` of their budgets already spent.
    pub fn less(&self, used_us: u64) -> ExpireParams {
        ExpireParams {
            cycle_budget_us: self.cycle_budget_us.saturating_sub(used_us),
            storm_budget_us: self.storm_budget_us.saturating_sub(used_us),
            ..*self
        }
    }
}

/// What a slice left behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceOutcome {
    /// No cycle is running.
    Idle,
    /// The slice ran out of time; the cycle has more work.
    More,
    /// The cycle finished (clean or out of budget).
    Done,
}

struct Cycle {
    /// Time this cycle may still use: the normal 25% of a tick, plus the
    /// storm share (bounded by the spare CPU) in storm mode.
    budget_left_us: u64,
    /// Time its slices took so far.
    spent_us: u64,
    /// Next database to visit, and how many were finished this cycle.
    db: usize,
    dbs_done: usize,
    sampled: u64,
    expired: u64,
}

/// The sweep state of one shard.
pub struct ActiveExpire {
    rng: Xoshiro256PlusPlus,
    cycle: Option<Cycle>,
    /// The last cycle ran out of budget with work left: a storm is on.
    storm: bool,
}

impl ActiveExpire {
    pub fn new(seed: u64) -> ActiveExpire {
        ActiveExpire {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            cycle: None,
            storm: false,
        }
    }

    pub fn rng(&mut self) -> &mut Xoshiro256PlusPlus {
        &mut self.rng
    }

    /// True while a cycle has work left (the loop should not sleep).
    pub fn in_cycle(&self) -> bool {
        self.cycle.is_some()
    }

    /// True while reclaiming a storm with the larger budget.
    pub fn in_storm(&self) -> bool {
        self.storm
    }

    /// Starts a new cycle at a timer tick (or when a deadline window ends).
    /// A cycle still running from the last tick is replaced: its unspent
    /// budget does not carry over, as in Redis. `spare_us` is how much of a
    /// tick the clients left unused lately (None: unknown, no limit); a storm
    /// cycle's extra budget never exceeds it.
    pub fn start_cycle(
        &mut self,
        params: &ExpireParams,
        store: &Store,
        now_ms: u64,
        spare_us: Option<u64>,
    ) {
        if store
            .dbs
            .iter()
            .all(|db| db.volatile_len() == 0 && !db.has_field_deadlines())
        {
            // Nothing left to expire (FLUSHALL, say): no storm either.
            self.cycle = None;
            self.storm = false;
            return;
        }
        if let Some(unfinished) = &self.cycle {
            // The tick came before the cycle could finish: it was capped.
            if unfinished.dbs_done < store.dbs.len() {
                self.storm = true;
            }
        }
        let due: usize = store.dbs.iter().map(|db| db.due_len(now_ms)).sum();
        if due as u64 > params.cycle_budget_us * STORM_DUE_KEYS_PER_US {
            self.storm = true;
        }
        let db = self.cycle.as_ref().map_or(0, |c| c.db);
        let storm_extra = if self.storm {
            let allowed = params
                .storm_budget_us
                .saturating_sub(params.cycle_budget_us);
            spare_us.map_or(allowed, |spare| allowed.min(spare))
        } else {
            0
        };
        self.cycle = Some(Cycle {
            budget_left_us: params.cycle_budget_us + storm_extra,
            spent_us: 0,
            db,
            dbs_done: 0,
            sampled: 0,
            expired: 0,
        });
    }

    /// Whether a pass of the shard loop that served clients should leave
    /// out its slice: the cycle has had its normal share (`cpu_perc`) of the
    /// `elapsed_us` since it began. The rest of its budget (a storm's) is
    /// spent in passes with no client work, so when clients fall behind
    /// (their core was taken away for a few ms) they catch up at the
    /// core's full speed instead of with a slice between every two
    /// batches; and a shard whose clients never leave it idle still gives
    /// the sweep the share Redis gives it.
    pub fn yields_to_clients(&self, params: &ExpireParams, elapsed_us: u64) -> bool {
        self.cycle
            .as_ref()
            .is_some_and(|c| c.spent_us * 100 >= elapsed_us * params.cpu_perc)
    }

    /// Runs sweep work for at most one slice. `clock_us` reads a monotonic
    /// clock in microseconds (injected so tests can drive time).
    pub fn run_slice(
        &mut self,
        store: &mut Store,
        now_ms: u64,
        params: &ExpireParams,
        mut clock_us: impl FnMut() -> u64,
    ) -> SliceOutcome {
        let Some(cycle) = self.cycle.as_mut() else {
            return SliceOutcome::Idle;
        };
        let start = clock_us();
        let limit = params.slice_us.min(cycle.budget_left_us);
        let ndbs = store.dbs.len();
        let mut elapsed = 0;
        let mut rounds = 0u32;
        let mut out_of_time = false;

        'dbs: while cycle.dbs_done < ndbs {
            let db_index = cycle.db % ndbs;
            // Deadline windows that have passed first: every key there is a
            // hit, so no time goes on sampling live keys.
            while store.dbs[db_index].has_due(now_ms) {
                let db = &mut store.dbs[db_index];
                let batch = if db.index_resizing() {
                    DUE_BATCH_WHILE_RESIZING
                } else {
                    DUE_BATCH
                };
                db.expire_due(db_index, now_ms, batch, &mut store.stats);
                elapsed = clock_us().saturating_sub(start);
                if elapsed >= limit {
                    out_of_time = true;
                    break 'dbs;
                }
            }
            while store.dbs[db_index].has_due_fields(now_ms) {
                store.dbs[db_index].expire_due_fields(
                    db_index,
                    now_ms,
                    DUE_HASH_BATCH,
                    &mut store.stats,
                );
                elapsed = clock_us().saturating_sub(start);
                if elapsed >= limit {
                    out_of_time = true;
                    break 'dbs;
                }
            }
            loop {
                let db = &mut store.dbs[db_index];
                let volatile = db.volatile_len();
                if volatile == 0 {
                    break;
                }
                let (sampled, expired, ttl_sum) = sample_round(
                    db,
                    db_index,
                    &mut store.stats,
                    &mut self.rng,
                    params.keys_per_loop,
                    now_ms,
                );
                cycle.sampled += sampled;
                cycle.expired += expired;
                let live = sampled - expired;
                if live > 0 {
                    // Redis's running estimate: avg_ttl = avg_ttl*49/50 + sample/50.
                    let sample_avg = ttl_sum as f64 / live as f64;
                    db.avg_ttl_ms = if db.avg_ttl_ms == 0.0 {
                        sample_avg
                    } else {
                        db.avg_ttl_ms / 50.0 * 49.0 + sample_avg / 50.0
                    };
                }
                rounds += 1;
                if rounds.is_multiple_of(ROUNDS_PER_CLOCK_READ) || db.index_resizing() {
                    elapsed = clock_us().saturating_sub(start);
                    if elapsed >= limit {
                        out_of_time = true;
                        break 'dbs;
                    }
                }
                if sampled == 0 || expired * 100 <= sampled * params.acceptable_stale_pct {
                    break;
                }
            }
            cycle.db = db_index + 1;
            cycle.dbs_done += 1;
        }
        if !out_of_time {
            elapsed = clock_us().saturating_sub(start);
        }

        let stats = &mut store.stats;
        stats.slices += 1;
        stats.slice_max_us = stats.slice_max_us.max(elapsed);
        stats.cycle_cpu_us += elapsed;
        cycle.budget_left_us = cycle.budget_left_us.saturating_sub(elapsed);
        cycle.spent_us += elapsed;

        let budget_spent = cycle.budget_left_us == 0;
        if cycle.dbs_done < ndbs && !budget_spent {
            return SliceOutcome::More;
        }
        let capped = budget_spent && cycle.dbs_done < ndbs;
        if capped {
            stats.time_cap_reached += 1;
        }
        self.storm = capped;
        if cycle.sampled > 0 {
            let perc = cycle.expired as f64 * 100.0 / cycle.sampled as f64;
            stats.stale_perc = perc * 0.05 + stats.stale_perc * 0.95;
        }
        self.cycle = None;
        SliceOutcome::Done
    }
}

/// Samples up to `n` volatile keys of `db`, deleting the expired ones.
/// Returns (sampled, expired, sum of remaining TTLs of the live ones in ms).
fn sample_round(
    db: &mut super::Db,
    db_index: usize,
    stats: &mut super::ExpiryStats,
    rng: &mut Xoshiro256PlusPlus,
    n: usize,
    now_ms: u64,
) -> (u64, u64, u64) {
    let (mut sampled, mut expired, mut ttl_sum) = (0u64, 0u64, 0u64);
    let len = db.volatile_len();
    // Few enough to check them all: walk down so a removal (which moves the
    // last entry into the hole) never skips one. Otherwise pick at random.
    let mut every = (len <= n).then_some(len);
    for _ in 0..n.min(len) {
        let nth = match every.as_mut() {
            Some(next) => {
                *next -= 1;
                *next
            }
            None => match db.volatile_len() {
                0 => break,
                left => (rng.next_u64() % left as u64) as usize,
            },
        };
        match db.sample_volatile(nth, now_ms) {
            Sampled::Expired(key, at) => {
                sampled += 1;
                expired += 1;
                stats.record_expired(db_index, &key, at, now_ms);
            }
            Sampled::Live(at) => {
                sampled += 1;
                ttl_sum += at - now_ms;
            }
            // Left for its deadline window's drain: neither hit nor miss,
            // so a sample of such keys alone ends the sampling.
            Sampled::Pending => {}
        }
    }
    (sampled, expired, ttl_sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Value;
    use bytes::Bytes;
    use std::cell::Cell;

    fn fill(store: &mut Store, prefix: &str, n: usize, deadline: Option<u64>) {
        for i in 0..n {
            let key = format!("{prefix}{i}");
            store.dbs[0].insert_raw(
                key.as_bytes(),
                Value::string(Bytes::from_static(b"v")),
                deadline,
                0,
            );
        }
    }

    #[test]
    fn params_follow_redis_effort_scaling() {
        let p1 = ExpireParams::new(10, 1, 500, 50);
        assert_eq!(
            (
                p1.keys_per_loop,
                p1.acceptable_stale_pct,
                p1.cycle_budget_us
            ),
            (20, 10, 25_000)
        );
        let p10 = ExpireParams::new(10, 10, 500, 50);
        assert_eq!(
            (
                p10.keys_per_loop,
                p10.acceptable_stale_pct,
                p10.cycle_budget_us
            ),
            (65, 1, 43_000)
        );
    }

    #[test]
    fn past_its_normal_share_a_cycle_leaves_passes_with_client_work_alone() {
        let mut store = Store::new(1);
        fill(&mut store, "dead", 50_000, Some(10));
        // hz 10, effort 1: 25 ms a tick of 100 ms, in slices of 100 µs.
        let params = ExpireParams::new(10, 1, 100, 90);
        assert_eq!(params.cpu_perc, 25);
        let mut sweep = ActiveExpire::new(1);
        assert!(!sweep.yields_to_clients(&params, 0), "no cycle");
        sweep.start_cycle(&params, &store, 100, None);
        assert!(!sweep.yields_to_clients(&params, 1), "nothing spent yet");
        let clock = Cell::new(0);
        let tick = || {
            clock.set(clock.get() + 10);
            clock.get()
        };
        assert_eq!(
            sweep.run_slice(&mut store, 100, &params, tick),
            SliceOutcome::More
        );
        let spent = store.stats.cycle_cpu_us;
        assert!(spent >= params.slice_us);
        // A quarter of the time since the cycle began is its normal share.
        assert!(sweep.yields_to_clients(&params, 4 * spent));
        assert!(!sweep.yields_to_clients(&params, 4 * spent + 1));
        // Passes without client work do not ask: the slice runs.
        assert_eq!(
            sweep.run_slice(&mut store, 100, &params, tick),
            SliceOutcome::More
        );
        assert!(sweep.yields_to_clients(&params, 4 * spent + 1));
    }

    #[test]
    fn a_cycle_started_between_ticks_gets_the_budget_of_what_is_left() {
        let params = ExpireParams::new(10, 1, 100, 50);
        assert_eq!(params.tick_us, 100_000);
        let part = params.scaled(40_000);
        assert_eq!(
            (part.cycle_budget_us, part.storm_budget_us),
            (10_000, 20_000)
        );
        assert_eq!(part.slice_us, params.slice_us);
        let whole = params.scaled(250_000);
        assert_eq!(whole.cycle_budget_us, params.cycle_budget_us, "never more");
        let rest = part.less(15_000);
        assert_eq!((rest.cycle_budget_us, rest.storm_budget_us), (0, 5_000));
    }

    /// Runs one whole cycle with a clock that never advances (no time limit).
    fn full_cycle(sweep: &mut ActiveExpire, store: &mut Store, params: &ExpireParams) {
        sweep.start_cycle(params, store, 100, None);
        while sweep.run_slice(store, 100, params, || 0) == SliceOutcome::More {}
    }

    #[test]
    fn one_cycle_reclaims_a_storm_among_live_volatile_keys() {
        let mut store = Store::new(2);
        fill(&mut store, "dead", 5_000, Some(10));
        fill(&mut store, "live", 5_000, Some(1_000_000));
        fill(&mut store, "plain", 100, None);
        let params = ExpireParams::new(10, 1, 1_000_000, 50);
        let mut sweep = ActiveExpire::new(1);
        full_cycle(&mut sweep, &mut store, &params);
        // Sampling alone would stop at the first sample at most 10% stale;
        // the passed deadline window hands over every expired key.
        assert_eq!(
            store.dbs[0].volatile_len(),
            5_000,
            "only live volatile keys remain"
        );
        assert_eq!(store.dbs[0].len(), 5_100);
        assert_eq!(store.stats.expired_keys, 5_000);
        assert!(store.dbs[0].iter().all(|(k, _, _)| !k.starts_with(b"dead")));
    }

    #[test]
    fn sampling_leaves_expired_keys_to_a_window_that_has_not_ended() {
        // Deadline 100 falls in the window ending at 128. Before then
        // sampling finds the expired keys but leaves them for the window,
        // which hands them back in the dict's order; nor does it spend its
        // budget sampling them again and again.
        let mut store = Store::new(1);
        fill(&mut store, "dead", 2_000, Some(100));
        fill(&mut store, "live", 2_000, Some(1_000_000));
        let params = ExpireParams::new(10, 1, 1_000_000, 50);
        let mut sweep = ActiveExpire::new(4);
        let clock = Cell::new(0);
        let tick = || {
            clock.set(clock.get() + 1);
            clock.get()
        };
        for now in [101, 127] {
            sweep.start_cycle(&params, &store, now, None);
            while sweep.run_slice(&mut store, now, &params, tick) == SliceOutcome::More {}
        }
        assert_eq!(store.dbs[0].volatile_len(), 4_000, "nothing removed yet");
        assert_eq!(
            store.stats.time_cap_reached, 0,
            "a few rounds, not the budget"
        );
        sweep.start_cycle(&params, &store, 128, None);
        while sweep.run_slice(&mut store, 128, &params, tick) == SliceOutcome::More {}
        assert_eq!(store.dbs[0].volatile_len(), 2_000);
        assert_eq!(store.stats.expired_keys, 2_000);
    }

    #[test]
    fn slices_stop_at_their_limit_and_cycles_at_their_budget() {
        let mut store = Store::new(1);
        fill(&mut store, "dead", 50_000, Some(10));
        // hz 100: a 2.5 ms budget in slices of 100 µs; every clock read advances 10 µs.
        let params = ExpireParams::new(100, 1, 100, 25);
        assert_eq!(params.cycle_budget_us, 2_500);
        let mut sweep = ActiveExpire::new(2);
        sweep.start_cycle(&params, &store, 100, None);
        let clock = Cell::new(0u64);
        let read = || {
            clock.set(clock.get() + 10);
            clock.get()
        };
        let mut slices = 0;
        loop {
            let before = store.stats.expired_keys;
            let outcome = sweep.run_slice(&mut store, 100, &params, read);
            slices += 1;
            let removed = store.stats.expired_keys - before;
            // At most 10 clock reads per slice, ROUNDS_PER_CLOCK_READ rounds of 20 keys between reads.
            assert!(
                removed <= 10 * ROUNDS_PER_CLOCK_READ as u64 * 20,
                "slice removed {removed}"
            );
            if outcome == SliceOutcome::Done {
                break;
            }
        }
        assert!(
            store.stats.slice_max_us <= 110,
            "longest slice {} µs",
            store.stats.slice_max_us
        );
        assert_eq!(store.stats.time_cap_reached, 1);
        assert!((20..=30).contains(&slices), "{slices} slices");
        assert!(
            !store.dbs[0].is_empty(),
            "the budget stopped the cycle before the end"
        );
    }

    #[test]
    fn slices_read_the_clock_more_often_while_the_index_resizes() {
        // Expired keys until the index of a large table starts to double:
        // from then on every removal also zeroes or moves part of it.
        let mut store = Store::new(1);
        let mut n = 0;
        while n < 20_000 || !store.dbs[0].index_resizing() {
            let key = format!("dead{n}");
            let value = Value::string(Bytes::from_static(b"v"));
            store.dbs[0].insert_raw(key.as_bytes(), value, Some(10), 0);
            n += 1;
        }
        // Slices of 100 µs; every clock read advances 10 µs.
        let params = ExpireParams::new(100, 1, 100, 25);
        let clock = Cell::new(0u64);
        let read = || {
            clock.set(clock.get() + 10);
            clock.get()
        };
        let mut sweep = ActiveExpire::new(7);
        sweep.start_cycle(&params, &store, 100, None);
        let outcome = sweep.run_slice(&mut store, 100, &params, read);
        assert_eq!(outcome, SliceOutcome::More);
        assert!(store.dbs[0].index_resizing(), "still resizing");
        // About 10 clock reads, 4 keys between two of them (64 otherwise).
        let removed = store.stats.expired_keys;
        assert!(
            (1..=48).contains(&removed),
            "{removed} of {n} keys in one slice"
        );
    }

    #[test]
    fn the_storm_share_is_bounded_by_the_spare_cpu() {
        // hz 100: normal budget 2.5 ms, storm budget 5 ms, slices of 100 µs.
        let params = ExpireParams::new(100, 1, 100, 50);
        let clock = Cell::new(0u64);
        let read = || {
            clock.set(clock.get() + 10);
            clock.get()
        };
        // Spare CPU per tick (None: unknown) -> time the storm cycle may use.
        for (spare, expected) in [(None, 5_000), (Some(1_000), 3_500), (Some(0), 2_500)] {
            // 50,000 keys in a passed window, 20 a µs of the normal budget:
            // the first cycle is a storm cycle, and cannot take them all.
            let mut store = Store::new(1);
            fill(&mut store, "dead", 50_000, Some(10));
            let mut sweep = ActiveExpire::new(5);
            sweep.start_cycle(&params, &store, 100, spare);
            assert!(sweep.in_storm(), "a backlog past a normal cycle is a storm");
            while sweep.run_slice(&mut store, 100, &params, read) == SliceOutcome::More {}
            let used = store.stats.cycle_cpu_us;
            assert!(
                (expected..=expected + 100).contains(&used),
                "spare {spare:?}: storm cycle used {used} µs"
            );
            assert!(sweep.in_storm(), "work is left: the storm goes on");
        }
    }

    #[test]
    fn a_passed_window_beyond_a_normal_cycle_starts_the_storm_at_once() {
        // hz 100: a normal budget of 2.5 ms, which takes 5,000 keys at the
        // threshold of 2 a µs.
        let params = ExpireParams::new(100, 1, 100, 50);
        for (keys, storm) in [(5_000, false), (5_001, true)] {
            let mut store = Store::new(1);
            fill(&mut store, "dead", keys, Some(10));
            let mut before = ActiveExpire::new(6);
            before.start_cycle(&params, &store, 63, None);
            assert!(!before.in_storm(), "{keys} keys: the window has not ended");
            let mut after = ActiveExpire::new(6);
            after.start_cycle(&params, &store, 64, None);
            assert_eq!(after.in_storm(), storm, "{keys} keys");
        }
    }

    #[test]
    fn the_sweep_reclaims_expired_hash_fields_without_volatile_keys() {
        let mut store = Store::new(1);
        for i in 0..100 {
            let mut h: crate::store::value::Hash = (0..10)
                .map(|f| (Bytes::from(format!("f{f}")), Bytes::from_static(b"v")))
                .collect();
            for f in 0..10 {
                // Half the hashes keep one field without a deadline.
                if i % 2 == 0 || f > 0 {
                    h.set_deadline(format!("f{f}").as_bytes(), 10);
                }
            }
            let key = format!("h{i}");
            store.dbs[0].insert_raw(key.as_bytes(), Value::Hash(h), None, 0);
        }
        assert_eq!(store.dbs[0].volatile_len(), 0);
        let params = ExpireParams::new(10, 1, 1_000_000, 50);
        let mut sweep = ActiveExpire::new(4);
        full_cycle(&mut sweep, &mut store, &params);
        assert_eq!(store.stats.expired_subkeys, 950);
        assert_eq!(store.dbs[0].len(), 50, "emptied hashes are gone");
        sweep.start_cycle(&params, &store, 100, None);
        assert!(!sweep.in_cycle(), "nothing left to sweep");
    }

    #[test]
    fn a_clean_database_ends_the_cycle_quickly() {
        let mut store = Store::new(1);
        fill(&mut store, "live", 1_000, Some(1_000_000));
        let params = ExpireParams::new(10, 1, 1_000, 50);
        let mut sweep = ActiveExpire::new(3);
        sweep.start_cycle(&params, &store, 100, None);
        let outcome = sweep.run_slice(&mut store, 100, &params, || 0);
        assert_eq!(outcome, SliceOutcome::Done);
        assert_eq!(store.stats.expired_keys, 0);
        assert!(store.dbs[0].avg_ttl_ms > 0.0);
    }
}
