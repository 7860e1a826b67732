//! Latency statistics: HDR histograms in microseconds, per-kind totals and
//! 100 ms windows.
//!
//! Worker threads record each reply into a full-resolution histogram of its
//! kind (3 significant digits) and into the current 100 ms window (2
//! significant digits). When a thread's window closes it is sent to the
//! [`Collector`], which merges the threads' windows, turns each finished
//! window into a [`WindowSummary`] and each finished second into memtier's
//! per-second "Time-Serie" entries. Window histograms are dropped once
//! summarised unless the caller asked to keep them (storm phases need them).

use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;

/// Largest latency tracked (values above saturate): 60 s.
pub const MAX_US: u64 = 60_000_000;
/// Width of one time-series window.
pub const WINDOW_MS: u64 = 100;

/// A full-resolution latency histogram (µs, 3 significant digits).
pub fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, 3).expect("valid histogram bounds")
}

/// A window histogram (µs, 2 significant digits: ~1% precision, ~20 KB).
pub fn new_win_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, 2).expect("valid histogram bounds")
}

/// Microseconds to milliseconds.
pub fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Totals for one request kind (Sets, Gets or one `--command`).
#[derive(Clone, Debug)]
pub struct KindTotals {
    pub hist: Histogram<u64>,
    pub ops: u64,
    pub bytes: u64,
    pub hits: u64,
    pub misses: u64,
    pub errors: u64,
}

impl Default for KindTotals {
    fn default() -> Self {
        KindTotals {
            hist: new_hist(),
            ops: 0,
            bytes: 0,
            hits: 0,
            misses: 0,
            errors: 0,
        }
    }
}

impl KindTotals {
    pub fn merge(&mut self, o: &KindTotals) {
        self.hist.add(&o.hist).expect("same histogram bounds");
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.hits += o.hits;
        self.misses += o.misses;
        self.errors += o.errors;
    }
}

/// Errors seen by a run (never fatal).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ErrorCounts {
    /// Connections that could not be established.
    pub connect_failed: u64,
    /// Connections closed or reset by the server mid-run.
    pub connections_dropped: u64,
    /// `-ERR ...` replies: to any command of a request, and inside an
    /// EXEC's array (one per queued command that failed).
    pub error_replies: u64,
    /// Transactions whose EXEC answered nil (a WATCHed key changed).
    pub aborted: u64,
    /// Bytes that were not valid RESP.
    pub protocol_errors: u64,
    /// Requests without a reply: lost with a dropped connection or still
    /// pending when the run ended.
    pub unanswered: u64,
    /// The first few error messages.
    pub samples: Vec<String>,
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        self.connect_failed
            + self.connections_dropped
            + self.error_replies
            + self.aborted
            + self.protocol_errors
            + self.unanswered
    }

    pub fn sample(&mut self, msg: String) {
        if self.samples.len() < 10 && !self.samples.contains(&msg) {
            self.samples.push(msg);
        }
    }

    pub fn merge(&mut self, o: &ErrorCounts) {
        self.connect_failed += o.connect_failed;
        self.connections_dropped += o.connections_dropped;
        self.error_replies += o.error_replies;
        self.aborted += o.aborted;
        self.protocol_errors += o.protocol_errors;
        self.unanswered += o.unanswered;
        for s in &o.samples {
            self.sample(s.clone());
        }
    }
}

/// One thread's finished window: a histogram per kind.
pub struct WindowMsg {
    pub idx: u32,
    pub kinds: Vec<Histogram<u64>>,
    /// The longest delay of a reply after its request was actually sent, µs
    /// (the latencies count from when it was due).
    pub service_max_us: u64,
}

/// Summary of one 100 ms window, all kinds together. Latencies in µs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WindowSummary {
    /// Window start, ms since the run's epoch.
    pub t_ms: u64,
    pub count: u64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    /// Replies per kind in this window.
    pub per_kind: Vec<u64>,
    /// The longest delay of a reply after its request was sent (without
    /// loadgen's own lateness in sending it).
    pub service_max_us: u64,
}

/// One kind's numbers for one second (memtier's "Time-Serie"). µs.
#[derive(Clone, Debug, Default)]
pub struct SecondKind {
    pub count: u64,
    pub avg_us: f64,
    pub min_us: u64,
    pub max_us: u64,
    /// Values at the run's `--print-percentiles`.
    pub pcts_us: Vec<u64>,
}

/// Latency summary of a histogram (µs).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LatSummary {
    pub count: u64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

impl LatSummary {
    pub fn of(h: &Histogram<u64>) -> LatSummary {
        if h.is_empty() {
            return LatSummary::default();
        }
        LatSummary {
            count: h.len(),
            p50_us: h.value_at_quantile(0.50),
            p99_us: h.value_at_quantile(0.99),
            p999_us: h.value_at_quantile(0.999),
            max_us: h.max(),
        }
    }
}

/// Merges per-thread windows into summaries.
pub struct Collector {
    nkinds: usize,
    keep_hists: bool,
    percentiles: Vec<f64>,
    /// Windows still collecting: histograms per kind, longest service time.
    open: BTreeMap<u32, (Vec<Histogram<u64>>, u64)>,
    finalized_upto: u32,
    sec_open: Option<(u32, Vec<Histogram<u64>>)>,
    pub windows: Vec<WindowSummary>,
    /// Merged (all kinds) window histograms, when kept.
    pub window_hists: Vec<Histogram<u64>>,
    /// Per second: one entry per kind, then the total of all kinds.
    pub seconds: Vec<Vec<SecondKind>>,
}

impl Collector {
    pub fn new(nkinds: usize, keep_hists: bool, percentiles: Vec<f64>) -> Collector {
        Collector {
            nkinds,
            keep_hists,
            percentiles,
            open: BTreeMap::new(),
            finalized_upto: 0,
            sec_open: None,
            windows: Vec::new(),
            window_hists: Vec::new(),
            seconds: Vec::new(),
        }
    }

    pub fn add(&mut self, msg: WindowMsg) {
        if msg.idx < self.finalized_upto {
            // Late window (a thread stalled): fold its counts into the summary.
            let w = &mut self.windows[msg.idx as usize];
            w.service_max_us = w.service_max_us.max(msg.service_max_us);
            for (k, h) in msg.kinds.iter().enumerate() {
                if h.is_empty() {
                    continue;
                }
                w.count += h.len();
                w.per_kind[k] += h.len();
                w.max_us = w.max_us.max(h.max());
                if self.keep_hists {
                    self.window_hists[msg.idx as usize]
                        .add(h)
                        .expect("same bounds");
                }
            }
            return;
        }
        match self.open.get_mut(&msg.idx) {
            Some((v, service)) => {
                for (a, b) in v.iter_mut().zip(msg.kinds.iter()) {
                    a.add(b).expect("same bounds");
                }
                *service = (*service).max(msg.service_max_us);
            }
            None => {
                self.open.insert(msg.idx, (msg.kinds, msg.service_max_us));
            }
        }
    }

    /// Summarises every window before `idx_excl`.
    pub fn finalize_before(&mut self, idx_excl: u32) {
        while self.finalized_upto < idx_excl {
            let w = self.finalized_upto;
            let (kinds, service_max_us) = self
                .open
                .remove(&w)
                .unwrap_or_else(|| ((0..self.nkinds).map(|_| new_win_hist()).collect(), 0));
            let mut total = new_win_hist();
            let mut per_kind = Vec::with_capacity(self.nkinds);
            for h in &kinds {
                total.add(h).expect("same bounds");
                per_kind.push(h.len());
            }
            let s = LatSummary::of(&total);
            self.windows.push(WindowSummary {
                t_ms: w as u64 * WINDOW_MS,
                count: s.count,
                p50_us: s.p50_us,
                p99_us: s.p99_us,
                p999_us: s.p999_us,
                max_us: s.max_us,
                per_kind,
                service_max_us,
            });
            if self.keep_hists {
                self.window_hists.push(total);
            }
            // Per-second aggregation.
            let sec = w / 10;
            match &mut self.sec_open {
                Some((s, acc)) if *s == sec => {
                    for (a, b) in acc.iter_mut().zip(kinds.iter()) {
                        a.add(b).expect("same bounds");
                    }
                }
                _ => {
                    self.close_second();
                    self.sec_open = Some((sec, kinds));
                }
            }
            if w % 10 == 9 {
                self.close_second();
            }
            self.finalized_upto += 1;
        }
    }

    fn close_second(&mut self) {
        if let Some((sec, kinds)) = self.sec_open.take() {
            while self.seconds.len() < sec as usize {
                self.seconds
                    .push(vec![SecondKind::default(); self.nkinds + 1]);
            }
            let mut total = new_win_hist();
            for h in &kinds {
                total.add(h).expect("same bounds");
            }
            let v = kinds
                .iter()
                .chain(std::iter::once(&total))
                .map(|h| {
                    if h.is_empty() {
                        SecondKind {
                            pcts_us: vec![0; self.percentiles.len()],
                            ..Default::default()
                        }
                    } else {
                        SecondKind {
                            count: h.len(),
                            avg_us: h.mean(),
                            min_us: h.min(),
                            max_us: h.max(),
                            pcts_us: self
                                .percentiles
                                .iter()
                                .map(|p| h.value_at_quantile(p / 100.0))
                                .collect(),
                        }
                    }
                })
                .collect();
            self.seconds.push(v);
        }
    }

    /// Summarises all remaining windows, up to and including `last_idx`.
    pub fn finish(&mut self, last_idx: u32) {
        let last = self
            .open
            .keys()
            .next_back()
            .copied()
            .unwrap_or(0)
            .max(last_idx);
        self.finalize_before(last + 1);
        self.close_second();
    }

    /// Ops and worst p99 over the last `n` finished windows (for progress).
    pub fn recent(&self, n: usize) -> (u64, u64) {
        let from = self.windows.len().saturating_sub(n);
        let ws = &self.windows[from..];
        (
            ws.iter().map(|w| w.count).sum(),
            ws.iter().map(|w| w.p99_us).max().unwrap_or(0),
        )
    }

    /// Merged histogram of the kept windows whose start lies in `[from_ms, to_ms)`.
    pub fn merged(&self, from_ms: u64, to_ms: u64) -> Histogram<u64> {
        self.merged_if(|t_ms| t_ms >= from_ms && t_ms < to_ms)
    }

    /// The windows whose start (ms from the epoch) `keep` accepts, merged.
    pub fn merged_if(&self, keep: impl Fn(u64) -> bool) -> Histogram<u64> {
        let mut h = new_win_hist();
        for (w, wh) in self.windows.iter().zip(self.window_hists.iter()) {
            if keep(w.t_ms) {
                h.add(wh).expect("same bounds");
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(idx: u32, vals: &[u64]) -> WindowMsg {
        let mut h = new_win_hist();
        for v in vals {
            h.record(*v).unwrap();
        }
        WindowMsg {
            idx,
            kinds: vec![h, new_win_hist()],
            service_max_us: vals.iter().max().copied().unwrap_or(0) / 2,
        }
    }

    #[test]
    fn windows_and_seconds() {
        let mut c = Collector::new(2, true, vec![50.0, 99.0]);
        c.add(msg(0, &[100, 200]));
        c.add(msg(0, &[300]));
        c.add(msg(3, &[1000]));
        c.add(msg(12, &[5]));
        c.finalize_before(2);
        c.add(msg(1, &[7])); // late
        c.finish(12);
        assert_eq!(c.windows.len(), 13);
        assert_eq!(c.windows[0].count, 3);
        assert_eq!(c.windows[1].count, 1);
        assert_eq!(c.windows[3].t_ms, 300);
        assert_eq!(c.windows.iter().map(|w| w.count).sum::<u64>(), 6);
        assert_eq!(c.seconds.len(), 2);
        assert_eq!(c.seconds[0][0].count, 4);
        assert_eq!(c.seconds[1][0].count, 1);
        assert_eq!(c.seconds[1][2].count, 1);
        assert_eq!(c.merged(0, 400).len(), 5);
        assert_eq!(
            c.windows[0].service_max_us, 150,
            "the longer of two threads'"
        );
        assert_eq!(c.windows[1].service_max_us, 3, "a late message counts");
        for w in &c.windows {
            assert!(w.p50_us <= w.p99_us && w.p99_us <= w.p999_us && w.p999_us <= w.max_us);
        }
    }
}
