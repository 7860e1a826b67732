//! The latency monitor (Redis's `latency-monitor-threshold` and LATENCY):
//! every stretch of work that blocked a shard for at least the threshold is
//! logged under an event name, one time series per event and shard.
//!
//! Events, with Redis's names where Redis has the same event:
//! - `command`, `fast-command`: a command ran that long (the `fast` flag of
//!   the command table decides which).
//! - `expire-cycle`: one slice of the active-expiry sweep. Redis times its
//!   whole cycle, which blocks its clients; in ember a slice is what blocks.
//! - `event-loop` (ember): one pass of a shard's loop, from the moment it
//!   stopped waiting for events until it went back to waiting. A request
//!   that arrived during the pass waited up to that long.
//! - `off-cpu` (ember): the part of such a pass during which the shard's
//!   thread did not run: another thread, process or kernel worker had its
//!   core, or the hypervisor had the virtual CPU, or it waited in the kernel
//!   (a page fault that needed a lock). What the server did not do itself.
//!
//! Like Redis: spikes of one event in the same second keep the largest; a
//! series holds the last [`HISTORY_LEN`] of them and the all-time maximum;
//! nothing is recorded while the threshold is 0 (the default), and the
//! `event-loop`/`off-cpu` measurement, which reads the thread's CPU clock
//! twice per pass, is skipped then too.

use std::fmt::Write as _;

/// Redis's `LATENCY_TS_LEN`: samples kept per event.
pub const HISTORY_LEN: usize = 160;

/// What took long (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Command,
    FastCommand,
    ExpireCycle,
    EventLoop,
    OffCpu,
}

impl Event {
    pub const ALL: [Event; 5] = [
        Event::Command,
        Event::FastCommand,
        Event::ExpireCycle,
        Event::EventLoop,
        Event::OffCpu,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Event::Command => "command",
            Event::FastCommand => "fast-command",
            Event::ExpireCycle => "expire-cycle",
            Event::EventLoop => "event-loop",
            Event::OffCpu => "off-cpu",
        }
    }

    pub fn named(name: &[u8]) -> Option<Event> {
        Event::ALL
            .into_iter()
            .find(|e| e.name().as_bytes().eq_ignore_ascii_case(name))
    }
}

/// One spike: Unix seconds and milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub time_s: u64,
    pub ms: u64,
}

/// The spikes of one event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Series {
    /// Oldest first, at most [`HISTORY_LEN`], one per second.
    pub samples: std::collections::VecDeque<Sample>,
    pub max_ms: u64,
}

impl Series {
    fn add(&mut self, s: Sample) {
        self.max_ms = self.max_ms.max(s.ms);
        match self.samples.back_mut() {
            Some(last) if last.time_s == s.time_s => last.ms = last.ms.max(s.ms),
            _ => {
                if self.samples.len() == HISTORY_LEN {
                    self.samples.pop_front();
                }
                self.samples.push_back(s);
            }
        }
    }

    /// The latest spike.
    pub fn latest(&self) -> Option<Sample> {
        self.samples.back().copied()
    }

    /// Folds another shard's series of the same event into this one.
    pub fn merge(&mut self, other: &Series) {
        let mut all: Vec<Sample> = self.samples.iter().chain(&other.samples).copied().collect();
        all.sort_by_key(|s| s.time_s);
        let max_ms = self.max_ms.max(other.max_ms);
        *self = Series::default();
        for s in all {
            self.add(s);
        }
        self.max_ms = max_ms;
    }
}

/// One shard's series, by event.
#[derive(Clone, Debug, Default)]
pub struct Monitor {
    series: [Option<Series>; Event::ALL.len()],
}

impl Monitor {
    /// Logs `event` if it took at least `threshold_ms` (0: monitoring off).
    /// `elapsed_us` is rounded down to whole milliseconds, as Redis does.
    pub fn record(&mut self, event: Event, elapsed_us: u64, threshold_ms: u64, now_ms: u64) {
        let ms = elapsed_us / 1000;
        if threshold_ms == 0 || ms < threshold_ms {
            return;
        }
        self.series[event as usize]
            .get_or_insert_with(Series::default)
            .add(Sample {
                time_s: now_ms / 1000,
                ms,
            });
    }

    /// Logs a pass of the shard loop that took `wall_us`, of which the
    /// thread ran `cpu_us`: `event-loop`, and `off-cpu` for the rest.
    pub fn record_pass(&mut self, wall_us: u64, cpu_us: u64, threshold_ms: u64, now_ms: u64) {
        self.record(Event::EventLoop, wall_us, threshold_ms, now_ms);
        let off_us = wall_us.saturating_sub(cpu_us);
        self.record(Event::OffCpu, off_us, threshold_ms, now_ms);
    }

    pub fn series(&self, event: Event) -> Option<&Series> {
        self.series[event as usize].as_ref()
    }

    /// Forgets `events` (all when empty); returns which had a series.
    pub fn reset(&mut self, events: &[Event]) -> Vec<Event> {
        let chosen: &[Event] = if events.is_empty() {
            &Event::ALL
        } else {
            events
        };
        chosen
            .iter()
            .copied()
            .filter(|&e| self.series[e as usize].take().is_some())
            .collect()
    }

    /// Folds another shard's monitor into this one.
    pub fn merge(&mut self, other: &Monitor) {
        for (mine, theirs) in self.series.iter_mut().zip(&other.series) {
            if let Some(theirs) = theirs {
                mine.get_or_insert_with(Series::default).merge(theirs);
            }
        }
    }

    /// The events with a series, in [`Event::ALL`] order.
    pub fn events(&self) -> impl Iterator<Item = (Event, &Series)> {
        Event::ALL
            .into_iter()
            .filter_map(|e| Some((e, self.series(e)?)))
    }
}

/// The start of a timed pass of a shard loop: wall clock and the thread's
/// CPU clock.
pub struct PassClock {
    wall: std::time::Instant,
    cpu_us: u64,
}

impl PassClock {
    pub fn start() -> PassClock {
        PassClock {
            wall: std::time::Instant::now(),
            cpu_us: crate::util::clock::thread_cpu_us(),
        }
    }

    /// Logs the pass begun at `self` (see [`Monitor::record_pass`]).
    pub fn finish(self, monitor: &mut Monitor, threshold_ms: u64, now_ms: u64) {
        let wall_us = self.wall.elapsed().as_micros() as u64;
        let cpu_us = crate::util::clock::thread_cpu_us().saturating_sub(self.cpu_us);
        monitor.record_pass(wall_us, cpu_us, threshold_ms, now_ms);
    }
}

/// What an event's spikes suggest (LATENCY DOCTOR).
fn advice(event: Event) -> &'static str {
    match event {
        Event::Command | Event::FastCommand => {
            "Commands ran for longer than the threshold. INFO commandstats and \
             latencystats show which; commands over whole large values (KEYS, \
             SMEMBERS or HGETALL of a big key, DEL of a large container) take time \
             in proportion to their size."
        }
        Event::ExpireCycle => {
            "Slices of the expiry sweep ran longer than the threshold. Each slice \
             stops after active-expire-slice-us; a slice much longer than that was \
             deleting large values, or its thread was kept off its CPU (see off-cpu)."
        }
        Event::EventLoop => {
            "A pass of a shard's event loop took longer than the threshold: a long \
             pipeline of heavy commands, a long expiry slice, or time off the CPU \
             (off-cpu tells how much of it was not ember's own work)."
        }
        Event::OffCpu => {
            "A shard's thread was kept off its CPU while it had work: another \
             process, a kernel thread or the hypervisor ran on its core, or the \
             thread waited in the kernel. Give the shards cores of their own \
             (taskset, cpusets, isolcpus) and keep other busy processes away from \
             them; a virtual machine's host can take its CPUs too (steal time)."
        }
    }
}

/// LATENCY DOCTOR: a report per event and what to do about it.
pub fn doctor(monitor: &Monitor, threshold_ms: u64) -> String {
    let mut out = String::new();
    if threshold_ms == 0 {
        out += "Latency monitoring is off. Turn it on with \
                'CONFIG SET latency-monitor-threshold <milliseconds>'; every event \
                that blocks a shard for at least that long is then logged.\n";
        return out;
    }
    let events: Vec<(Event, &Series)> = monitor.events().collect();
    if events.is_empty() {
        let _ = writeln!(
            out,
            "No latency spike of {threshold_ms} ms or more was logged since the \
             monitor was last reset."
        );
        return out;
    }
    let _ = writeln!(
        out,
        "Latency spikes of {threshold_ms} ms or more were logged:\n"
    );
    for (i, (event, series)) in events.iter().enumerate() {
        let n = series.samples.len() as u64;
        let sum: u64 = series.samples.iter().map(|s| s.ms).sum();
        let avg = sum / n.max(1);
        let deviation = series
            .samples
            .iter()
            .map(|s| s.ms.abs_diff(avg))
            .sum::<u64>()
            / n.max(1);
        // The mean time between two spikes.
        let period_s = match (series.samples.front(), series.samples.back()) {
            (Some(a), Some(b)) if n > 1 => (b.time_s - a.time_s) as f64 / (n - 1) as f64,
            _ => 0.0,
        };
        let _ = writeln!(
            out,
            "{}. {}: {n} spikes (average {avg} ms, mean deviation {deviation} ms, \
             period {:.2} s). Worst of all time {} ms.",
            i + 1,
            event.name(),
            period_s,
            series.max_ms
        );
    }
    out += "\nWhat to look at:\n\n";
    for (event, _) in &events {
        let _ = writeln!(out, "- {}: {}", event.name(), advice(*event));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_spikes_at_or_over_the_threshold_are_logged() {
        let mut m = Monitor::default();
        m.record(Event::Command, 50_000, 0, 1_000_000);
        assert!(m.series(Event::Command).is_none(), "threshold 0: off");
        m.record(Event::Command, 9_999, 10, 1_000_000);
        assert!(m.series(Event::Command).is_none(), "9.999 ms is 9 ms");
        m.record(Event::Command, 10_000, 10, 1_000_000);
        let s = m.series(Event::Command).unwrap();
        assert_eq!(
            s.latest(),
            Some(Sample {
                time_s: 1_000,
                ms: 10
            })
        );
    }

    #[test]
    fn one_sample_per_second_keeps_the_largest_and_history_is_bounded() {
        let mut m = Monitor::default();
        for (at_ms, us) in [
            (5_000, 3_000),
            (5_400, 7_000),
            (5_900, 2_000),
            (6_000, 4_000),
        ] {
            m.record(Event::EventLoop, us, 1, at_ms);
        }
        let s = m.series(Event::EventLoop).unwrap();
        let got: Vec<(u64, u64)> = s.samples.iter().map(|s| (s.time_s, s.ms)).collect();
        assert_eq!(got, vec![(5, 7), (6, 4)]);
        assert_eq!(s.max_ms, 7);
        for sec in 0..500u64 {
            m.record(Event::OffCpu, 2_000 + sec, 1, sec * 1000);
        }
        let s = m.series(Event::OffCpu).unwrap();
        assert_eq!(s.samples.len(), HISTORY_LEN);
        assert_eq!(s.samples.front().unwrap().time_s, 500 - HISTORY_LEN as u64);
    }

    #[test]
    fn shards_merge_by_second_and_reset_reports_what_it_cleared() {
        let mut a = Monitor::default();
        let mut b = Monitor::default();
        a.record(Event::ExpireCycle, 3_000, 1, 10_000);
        a.record(Event::ExpireCycle, 2_000, 1, 12_000);
        b.record(Event::ExpireCycle, 9_000, 1, 10_500);
        b.record(Event::ExpireCycle, 1_000, 1, 11_000);
        b.record(Event::Command, 5_000, 1, 11_000);
        a.merge(&b);
        let s = a.series(Event::ExpireCycle).unwrap();
        let got: Vec<(u64, u64)> = s.samples.iter().map(|s| (s.time_s, s.ms)).collect();
        assert_eq!(got, vec![(10, 9), (11, 1), (12, 2)]);
        assert_eq!(s.max_ms, 9);
        let names: Vec<&str> = a.events().map(|(e, _)| e.name()).collect();
        assert_eq!(names, vec!["command", "expire-cycle"]);
        assert_eq!(
            a.reset(&[Event::Command, Event::OffCpu]),
            vec![Event::Command]
        );
        assert_eq!(a.reset(&[]), vec![Event::ExpireCycle]);
        assert_eq!(a.events().count(), 0);
    }

    #[test]
    fn a_pass_is_split_into_its_wall_time_and_its_time_off_the_cpu() {
        let mut m = Monitor::default();
        m.record_pass(9_000, 2_500, 5, 7_000);
        m.record_pass(4_000, 3_900, 5, 8_000);
        assert_eq!(m.series(Event::EventLoop).unwrap().max_ms, 9);
        let off = m.series(Event::OffCpu).unwrap();
        assert_eq!(off.samples.len(), 1, "the second pass ran on its CPU");
        assert_eq!(off.latest(), Some(Sample { time_s: 7, ms: 6 }));
    }

    #[test]
    fn a_timed_pass_of_sleeping_is_all_off_the_cpu() {
        let mut m = Monitor::default();
        let pass = PassClock::start();
        std::thread::sleep(std::time::Duration::from_millis(30));
        pass.finish(&mut m, 20, 1_000);
        assert!(m.series(Event::EventLoop).unwrap().max_ms >= 30);
        assert!(m.series(Event::OffCpu).unwrap().max_ms >= 20);
    }

    #[test]
    fn event_names_are_case_insensitive() {
        assert_eq!(Event::named(b"FAST-command"), Some(Event::FastCommand));
        assert_eq!(Event::named(b"off-cpu"), Some(Event::OffCpu));
        assert_eq!(Event::named(b"fork"), None);
    }

    #[test]
    fn the_doctor_reports_each_event_with_advice() {
        let mut m = Monitor::default();
        assert!(doctor(&m, 0).contains("latency-monitor-threshold"));
        assert!(doctor(&m, 5).starts_with("No latency spike of 5 ms"));
        m.record(Event::OffCpu, 8_000, 5, 100_000);
        m.record(Event::OffCpu, 6_000, 5, 104_000);
        let text = doctor(&m, 5);
        assert!(
            text.contains("1. off-cpu: 2 spikes (average 7 ms, mean deviation 1 ms, period 4.00 s). Worst of all time 8 ms."),
            "{text}"
        );
        assert!(
            text.contains("- off-cpu: A shard's thread was kept off its CPU"),
            "{text}"
        );
    }
}
