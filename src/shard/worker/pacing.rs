//! Expiry pacing: when the shard's active-expiry sweep starts a cycle, how
//! much it may take, and when a pass of the loop runs a slice of it.
//!
//! A cycle starts at each tick (`hz` a second) with the normal budget, and
//! between ticks when a deadline window ends (so a storm's keys go as soon
//! as their window hands them over). In a storm the sweep may also take what
//! the clients, the normal sweep and the core's other tenants leave of
//! `active-expire-storm-busy-perc` of the tick; past its normal share of
//! the time since the cycle began, it runs only in passes that served no
//! client. The pacing state knows no connection: the loop asks it.

use std::time::{Duration, Instant};

use crate::exec::{ShardData, Shared};
use crate::store::{ExpireParams, SliceOutcome};

pub(super) struct Pacing {
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
}

impl Pacing {
    pub(super) fn new(shared: &Shared) -> Pacing {
        Pacing {
            next_tick: Instant::now(),
            next_cron: Instant::now(),
            params: current_params(shared),
            busy_us: 0,
            spare_us: 0,
            sweep_us_at_tick: 0,
            tick_budget_spent: false,
            cycle_started: Instant::now(),
            storm_reported: false,
            run_delay_us: None,
        }
    }

    /// How long the loop may wait for events: until the next tick, or the
    /// end of the earliest deadline window (`early_cycle_at`, unix ms).
    pub(super) fn wait_for(&self, early_cycle_at: Option<u64>, now_ms: u64) -> Duration {
        let tick = self.next_tick.saturating_duration_since(Instant::now());
        match early_cycle_at {
            Some(end) => tick.min(Duration::from_millis(end.saturating_sub(now_ms))),
            None => tick,
        }
    }

    /// Counts `us` of client work in this tick.
    pub(super) fn add_busy(&mut self, us: u64) {
        self.busy_us += us;
    }

    /// Starts the cycles due now: the tick's, or one at the end of a
    /// deadline window. True when the once-a-second housekeeping is due.
    pub(super) fn start_cycles(
        &mut self,
        data: &mut ShardData,
        early_cycle_at: Option<u64>,
        now: Instant,
    ) -> bool {
        if now >= self.next_tick {
            return self.tick(data, now);
        }
        if early_cycle_at.is_some_and(|end| end <= data.now_ms) {
            self.start_early_cycle(data, now);
        }
        false
    }

    /// Whether this pass runs a slice of the sweep: a cycle is under way
    /// and, once it has had its normal share of the time since it began,
    /// the pass served no client (`ActiveExpire::yields_to_clients`).
    pub(super) fn slice_due(&self, data: &ShardData, served: bool) -> bool {
        let sweep = &data.sweep;
        if !sweep.in_cycle() || !data.shared.sweeping() || data.store.stats.expiry_paused {
            return false;
        }
        let since_cycle_us = self.cycle_started.elapsed().as_micros() as u64;
        !(served && sweep.yields_to_clients(&self.params, since_cycle_us))
    }

    /// Runs one slice of the cycle under way; returns how long it took, µs.
    pub(super) fn run_slice(&mut self, data: &mut ShardData) -> u64 {
        let clock_origin = Instant::now();
        let outcome = data
            .sweep
            .run_slice(&mut data.store, data.now_ms, &self.params, || {
                clock_origin.elapsed().as_micros() as u64
            });
        debug_assert_ne!(outcome, SliceOutcome::Idle);
        if outcome == SliceOutcome::Done {
            self.report_storm(data);
        }
        clock_origin.elapsed().as_micros() as u64
    }

    /// Tells `util::purge` whether this shard reclaims a storm (jemalloc
    /// purges nothing while one does). A sweep turned off ends it.
    fn report_storm(&mut self, data: &ShardData) {
        let in_storm = data.sweep.in_storm() && data.shared.sweeping();
        crate::util::purge::report_storm(&mut self.storm_reported, in_storm);
    }

    /// The timer: start an expiry cycle `hz` times a second. True once a
    /// second, when idle clients are closed and ops/sec and memory sampled.
    fn tick(&mut self, data: &mut ShardData, now: Instant) -> bool {
        self.params = current_params(&data.shared);
        let hz = data.shared.config.hz().clamp(1, 500);
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
        if data.shared.sweeping() {
            // Keep the shard at most `active-expire-storm-busy-perc` busy:
            // the storm budget gets what the clients, the normal sweep and
            // the core's other tenants leave.
            let period_us = period.as_micros() as u64;
            let busy_perc = data.shared.config.active_expire_storm_busy_perc();
            let cap = period_us * busy_perc / 100;
            let taken = self.busy_us + waited_us + self.params.cycle_budget_us;
            self.spare_us = cap.saturating_sub(taken);
            self.begin_cycle(data, self.params, self.spare_us, now);
        } else {
            self.report_storm(data);
        }
        self.busy_us = 0;
        self.sweep_us_at_tick = data.store.stats.cycle_cpu_us;
        self.tick_budget_spent = false;
        data.store.tidy();
        if now >= self.next_cron {
            self.next_cron = now + Duration::from_secs(1);
            return true;
        }
        false
    }

    /// When a cycle may start before the next tick (unix ms): when the
    /// earliest deadline window ends, so a storm's keys go as soon as their
    /// window hands them over rather than up to a tick later (a second at
    /// hz 1). Not while a cycle runs, nor after one ran out of budget (a
    /// storm: the ticks pace it).
    pub(super) fn early_cycle_at_ms(&self, data: &ShardData) -> Option<u64> {
        let sweep = &data.sweep;
        if sweep.in_cycle() || sweep.in_storm() || self.tick_budget_spent || !data.shared.sweeping()
        {
            return None;
        }
        data.store.next_window_end_ms()
    }

    /// Starts a cycle between ticks with what is left of the tick's
    /// budgets: their share of the time to the next tick, less what the
    /// sweep used since the last one. So the sweep's share per tick stays
    /// as set however many windows end in it.
    fn start_early_cycle(&mut self, data: &mut ShardData, now: Instant) {
        let period_us = self.params.tick_us;
        let left_us = self.next_tick.saturating_duration_since(now).as_micros() as u64;
        // Saturating: CONFIG RESETSTAT may have zeroed the counter since.
        let used_us = data
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
        self.begin_cycle(data, params, spare_us, now);
    }

    /// Starts a sweep cycle (at a tick or between ticks), noting when it
    /// began and whether it put the shard in storm mode.
    fn begin_cycle(
        &mut self,
        data: &mut ShardData,
        params: ExpireParams,
        spare_us: u64,
        now: Instant,
    ) {
        self.cycle_started = now;
        data.sweep
            .start_cycle(&params, &data.store, data.now_ms, Some(spare_us));
        self.report_storm(data);
    }
}

fn current_params(shared: &Shared) -> ExpireParams {
    let c = &shared.config;
    ExpireParams::new(
        c.hz(),
        c.active_expire_effort(),
        c.active_expire_slice_us(),
        c.active_expire_storm_cpu_perc(),
    )
}
