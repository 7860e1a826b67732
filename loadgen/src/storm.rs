//! The expiry storm.
//!
//! 1. Load S volatile keys (`<prefix>vol:<i>`, value size d) with
//!    `SET ... PXAT <instant>` over a few pipelined connections, plus the
//!    non-expiring background range (`<prefix>bg:<i>`).
//! 2. From `pre` seconds before the instant, run rate-limited (open-loop)
//!    background traffic on the background range; poll INFO every 100 ms.
//! 3. Stop `post` seconds after the volatile keys are gone (INFO `expires`
//!    back to its level before the load), or `cap` seconds after the instant.
//! 4. Report latency before / during / after, reclaim times, memory, the
//!    100 ms windows, and a chart.

use crate::chart::{self, ChartSpec, Line};
use crate::client::{self, Control, Ops, RunResult, Workload};
use crate::config::{parse_ratio, StormArgs, StormParams};
use crate::cpuwait::{self, WaitSample};
use crate::keys::{below, rng, KeySpace, Pattern};
use crate::progress::Progress;
use crate::report::{self, r3};
use crate::resp::{put_array_header, put_bulk, put_bulk_header, put_bulk_u64, put_key};
use crate::server::{self, parse_info, CtlConn, InfoSample};
use crate::stats::{ms, LatSummary, WINDOW_MS};
use crate::verify::{self, wall_us, GetCheck, VerifyReport};
use serde::Serialize;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long memory figures are given to catch up with a load before they
/// are read (ember samples its allocator's statistics every 100 ms).
const MEMORY_SETTLE: Duration = Duration::from_millis(300);

/// Writer id of the volatile keys' value tags.
const VOL_WRITER: u64 = 0xffff_ffff;

/// Latency of one phase, ms.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Phase {
    pub count: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

impl Phase {
    fn of(s: &LatSummary) -> Phase {
        Phase {
            count: s.count,
            p50_ms: r3(ms(s.p50_us)),
            p99_ms: r3(ms(s.p99_us)),
            p999_ms: r3(ms(s.p999_us)),
            max_ms: r3(ms(s.max_us)),
        }
    }
}

/// One 100 ms window of the background traffic, relative to the instant.
#[derive(Clone, Debug, Serialize)]
pub struct StormWindow {
    pub t_ms: i64,
    pub count: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    #[serde(rename = "p99.9_ms")]
    pub p999_ms: f64,
    pub max_ms: f64,
    /// The longest a reply took after its request was actually sent, ms:
    /// where `max_ms` is much larger, the request left loadgen late.
    pub service_max_ms: f64,
    /// Volatile keys remaining per the last INFO sample at or before the window's end.
    pub volatile_keys: Option<u64>,
    /// How long the server's serving threads were runnable but kept off a
    /// CPU in this window, ms (absent where not measurable; see `cpuwait`).
    pub server_cpu_wait_ms: Option<f64>,
    /// The same for loadgen's own load threads.
    pub client_cpu_wait_ms: Option<f64>,
    /// CPU time of the kernel threads that take cores for milliseconds
    /// (kdamond, kswapd, ...) plus hypervisor steal time, ms.
    pub machine_ms: Option<f64>,
}

/// A window counts as contended when either side waited this long for a CPU.
pub const CONTENDED_MS: f64 = 1.0;

/// CPU waits over the run, and latency over the windows free of them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CpuWait {
    /// The server process whose threads were measured (`name[pid]`).
    pub server_process: Option<String>,
    pub server_before_ms: Option<f64>,
    pub server_during_ms: Option<f64>,
    pub client_before_ms: Option<f64>,
    pub client_during_ms: Option<f64>,
    /// Kernel threads' CPU time plus steal (see `StormWindow::machine_ms`).
    pub machine_before_ms: Option<f64>,
    pub machine_during_ms: Option<f64>,
    /// Windows (before / during) in which the server or loadgen waited at
    /// least `CONTENDED_MS` for a CPU.
    pub contended_windows_before: u64,
    pub contended_windows_during: u64,
    pub windows_during: u64,
    /// Latency over the windows that were not contended.
    pub before_uncontended: Phase,
    pub during_uncontended: Phase,
}

/// Latency of the background traffic before the instant, over every
/// stretch as long as the storm: what the machine's own noise makes of that
/// many requests with nothing expiring. A storm whose p99.9 lies within
/// these stretches' is not visible in the latency.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QuietStretches {
    /// Each stretch's length: the storm's, in whole windows, ms.
    pub length_ms: u64,
    /// Stretches measured; one starts at every window, so they overlap.
    pub count: u64,
    pub p999_median_ms: f64,
    pub p999_worst_ms: f64,
}

/// The stretches of `len_ms` (whole windows) before `inst_ms` (both ms
/// from the collector's epoch), one starting at each window but the first,
/// partial one. None when the storm lasted longer than the time before it.
fn quiet_stretches(
    coll: &crate::stats::Collector,
    inst_ms: u64,
    len_ms: u64,
) -> Option<QuietStretches> {
    if len_ms == 0 {
        return None;
    }
    let mut p999: Vec<u64> = (1..)
        .map(|i| i * WINDOW_MS)
        .take_while(|start| start + len_ms <= inst_ms)
        .map(|start| LatSummary::of(&coll.merged(start, start + len_ms)).p999_us)
        .collect();
    p999.sort_unstable();
    Some(QuietStretches {
        length_ms: len_ms,
        count: p999.len() as u64,
        p999_median_ms: r3(ms(*p999.get(p999.len() / 2)?)),
        p999_worst_ms: r3(ms(*p999.last()?)),
    })
}

/// A stall the server logged itself (`LATENCY LATEST`, with
/// `latency-monitor-threshold` set): its longest of an event since the load.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerStall {
    pub event: String,
    pub max_ms: u64,
}

/// The server's `LATENCY LATEST`: [name, time, latest, max] per event.
fn server_stalls(ctl: &mut CtlConn) -> Vec<ServerStall> {
    let Ok(values) = ctl.cmd_flat(&[b"LATENCY", b"LATEST"]) else {
        return Vec::new();
    };
    if values
        .first()
        .is_some_and(|(kind, _)| *kind == crate::resp::Kind::Error)
    {
        return Vec::new();
    }
    values
        .chunks_exact(4)
        .map(|f| ServerStall {
            event: String::from_utf8_lossy(&f[0].1).into_owned(),
            max_ms: String::from_utf8_lossy(&f[3].1).parse().unwrap_or(0),
        })
        .collect()
}

/// Everything a storm measured.
#[derive(Clone, Debug, Serialize)]
pub struct StormReport {
    pub target: String,
    pub instant_unix_ms: u64,
    pub keys: u64,
    pub load: Value,
    pub before: Phase,
    pub during: Phase,
    pub after: Phase,
    /// ms from the instant until no volatile key remained (None: not within the cap).
    pub reclaim_ms: Option<i64>,
    /// ms from the instant until at most 1% remained.
    pub reclaim_99_ms: Option<i64>,
    pub remaining_at_end: u64,
    /// Replies in the worst second from the instant to the end of the
    /// storm, over the mean replies per second before the instant.
    pub worst_second_ratio: Option<f64>,
    /// INFO `expires` that were not this storm's keys.
    pub base_expires: u64,
    /// `used_memory` with the background keys loaded, before the volatile load.
    pub memory_preload: u64,
    pub memory_before: u64,
    pub memory_peak: u64,
    pub memory_after: u64,
    pub expired_keys: u64,
    pub max_expired_stale_perc: f64,
    pub background: Value,
    pub windows: Vec<StormWindow>,
    pub info: Vec<InfoSample>,
    pub cpu_wait: CpuWait,
    /// p99.9 before the instant over stretches as long as the storm.
    pub quiet_stretches: Option<QuietStretches>,
    /// The server's own record of its stalls from the end of the load
    /// (LATENCY LATEST; empty where the server has none or it is off).
    pub server_stalls: Vec<ServerStall>,
    pub errors: crate::stats::ErrorCounts,
    pub verify: VerifyReport,
    pub interrupted: bool,
    pub warnings: Vec<String>,
}

fn now_ms() -> u64 {
    wall_us() / 1000
}

fn vol_value_len(p: &StormParams) -> usize {
    p.data_size.max(1)
}

/// Pipelined load of keys `[from, to)` named `prefix + i`.
#[allow(clippy::too_many_arguments)]
fn load_range(
    addr: SocketAddr,
    prefix: &[u8],
    from: u64,
    to: u64,
    len: usize,
    pxat: Option<u64>,
    batch: usize,
    filler: &[u8],
) -> Result<(u64, u64, Option<String>), String> {
    let mut c = CtlConn::connect(addr, Duration::from_secs(3))
        .map_err(|e| format!("load: cannot connect to {addr}: {e}"))?;
    let mut buf = Vec::with_capacity(batch * (len + 64));
    let mut ok = 0;
    let mut errs = 0;
    let mut first_err = None;
    let mut i = from;
    while i < to {
        let end = (i + batch as u64).min(to);
        buf.clear();
        for k in i..end {
            put_array_header(&mut buf, if pxat.is_some() { 5 } else { 3 });
            put_bulk(&mut buf, b"SET");
            put_key(&mut buf, prefix, k);
            put_bulk_header(&mut buf, len);
            verify::write_value(&mut buf, verify::tag(VOL_WRITER, k, 1), len, filler);
            buf.extend_from_slice(b"\r\n");
            if let Some(at) = pxat {
                put_bulk(&mut buf, b"PXAT");
                put_bulk_u64(&mut buf, at);
            }
        }
        c.send_raw(&buf).map_err(|e| format!("load: {e}"))?;
        for _ in i..end {
            let r = c.read_reply().map_err(|e| format!("load: {e}"))?;
            if r.kind == crate::resp::Kind::Error {
                errs += 1;
                first_err.get_or_insert_with(|| String::from_utf8_lossy(&r.data).into_owned());
            } else {
                ok += 1;
            }
        }
        i = end;
    }
    Ok((ok, errs, first_err))
}

/// Loads `[0, n)` over `conns` connections.
#[allow(clippy::too_many_arguments)]
fn load_parallel(
    addr: SocketAddr,
    prefix: Vec<u8>,
    n: u64,
    len: usize,
    pxat: Option<u64>,
    conns: usize,
    batch: usize,
    filler: Arc<Vec<u8>>,
) -> Result<(u64, u64, Option<String>), String> {
    let conns = conns.max(1) as u64;
    let per = n.div_ceil(conns);
    let mut hs = Vec::new();
    for c in 0..conns {
        let (from, to) = (c * per, ((c + 1) * per).min(n));
        if from >= to {
            continue;
        }
        let (prefix, filler) = (prefix.clone(), filler.clone());
        hs.push(std::thread::spawn(move || {
            load_range(addr, &prefix, from, to, len, pxat, batch.max(1), &filler)
        }));
    }
    let mut tot = (0, 0, None);
    for h in hs {
        let (ok, errs, e) = h.join().map_err(|_| "load thread panicked".to_string())??;
        tot.0 += ok;
        tot.1 += errs;
        if tot.2.is_none() {
            tot.2 = e;
        }
    }
    Ok(tot)
}

fn info_sample(c: &mut CtlConn) -> Result<InfoSample, String> {
    let r = c.cmd(&[b"INFO"]).map_err(|e| e.to_string())?;
    if r.kind != crate::resp::Kind::Bulk {
        return Err(format!(
            "INFO answered {:?}",
            String::from_utf8_lossy(&r.data)
        ));
    }
    Ok(parse_info(&String::from_utf8_lossy(&r.data)))
}

/// Polls INFO every 100 ms (from `start`) into `out` until `stop`, and
/// the CPU waits just before each INFO into `waits`.
#[allow(clippy::too_many_arguments)]
fn poller(
    addr: SocketAddr,
    at_ms: u64,
    start: Instant,
    stop: Arc<AtomicBool>,
    out: Arc<Mutex<Vec<InfoSample>>>,
    probe: cpuwait::Probe,
    waits: Arc<Mutex<Vec<WaitSample>>>,
    errors: Arc<Mutex<Vec<String>>>,
) {
    cpuwait::lower_current_thread();
    client::sleep_until(start, &stop);
    let mut conn: Option<CtlConn> = None;
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if conn.is_none() {
            match CtlConn::connect(addr, Duration::from_secs(1)) {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    errors.lock().unwrap().push(format!("INFO poller: {e}"));
                }
            }
        }
        let rel_ms = || now_ms() as i64 - at_ms as i64;
        waits.lock().unwrap().push(probe.sample(rel_ms()));
        if let Some(c) = conn.as_mut() {
            match info_sample(c) {
                Ok(mut s) => {
                    s.t_ms = rel_ms();
                    out.lock().unwrap().push(s);
                }
                Err(e) => {
                    errors.lock().unwrap().push(format!("INFO poller: {e}"));
                    conn = None;
                }
            }
        }
        next += Duration::from_millis(100);
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
}

/// Reads random volatile keys and checks them against the instant.
#[allow(clippy::too_many_arguments)]
fn probe(
    addr: SocketAddr,
    prefix: Vec<u8>,
    keys: u64,
    len: usize,
    at_ms: u64,
    stop: Arc<AtomicBool>,
    filler: Arc<Vec<u8>>,
) -> VerifyReport {
    let mut rep = VerifyReport {
        enabled: true,
        ..Default::default()
    };
    let Ok(mut c) = CtlConn::connect(addr, Duration::from_secs(3)) else {
        return rep;
    };
    let mut r = rng(0x9e0be);
    let at_us = at_ms * 1000;
    let mut buf = Vec::new();
    let mut batch = Vec::with_capacity(16);
    while !stop.load(Ordering::Relaxed) {
        buf.clear();
        batch.clear();
        for _ in 0..16 {
            let k = below(&mut r, keys);
            batch.push(k);
            put_array_header(&mut buf, 2);
            put_bulk(&mut buf, b"GET");
            put_key(&mut buf, &prefix, k);
        }
        let sent = wall_us();
        if c.send_raw(&buf).is_err() {
            break;
        }
        for &k in &batch {
            let Ok(reply) = c.read_reply() else {
                return rep;
            };
            let got_us = wall_us();
            if reply.kind == crate::resp::Kind::Error {
                continue;
            }
            rep.checked += 1;
            let check = GetCheck {
                key: format!("{}{k}", String::from_utf8_lossy(&prefix)),
                got: (reply.kind == crate::resp::Kind::Bulk).then_some(&reply.data[..]),
                get_sent_us: sent,
                get_reply_us: got_us,
                tag: verify::tag(VOL_WRITER, k, 1),
                len,
                deadlines: Some((at_us, at_us)),
            };
            if let Some(v) = verify::check_get(&check, &filler) {
                rep.add(v);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    rep
}

/// The background traffic: rate-limited SET/GET on the non-expiring range
/// (closed loop when `rate` is 0).
pub fn background_workload(
    addr: SocketAddr,
    p: &StormParams,
    set: u32,
    get: u32,
    epoch: Option<Instant>,
    duration: Option<Duration>,
) -> Workload {
    let conns = (p.threads * p.clients) as f64;
    Workload {
        addr,
        threads: p.threads,
        clients: p.clients,
        pipeline: p.pipeline,
        ops: Ops::SetGet {
            set,
            get,
            set_pattern: Pattern::Random,
            get_pattern: Pattern::Random,
        },
        keys: KeySpace {
            min: 0,
            max: p.bg_keys.max(1) - 1,
            stddev: None,
            median: None,
            zipf_exp: 1.0,
        },
        prefix: format!("{}bg:", p.key_prefix).into_bytes(),
        data_min: p.data_size.max(1),
        data_max: p.data_size.max(1),
        expiry: None,
        requests: None,
        duration,
        rate_per_conn: (p.rate > 0.0).then(|| p.rate / conns),
        seed: 42,
        distinct_client_seed: true,
        verify: p.verify,
        keep_window_hists: true,
        percentiles: vec![50.0, 99.0, 99.9],
        epoch,
        drain: Duration::from_secs(2),
        cache_aside: false,
        scan: None,
    }
}

/// Loads the background range (no expiry).
pub fn load_background(
    addr: SocketAddr,
    p: &StormParams,
) -> Result<(u64, u64, Option<String>), String> {
    let filler = Arc::new(client::filler(p.data_size.max(16)));
    let prefix = format!("{}bg:", p.key_prefix).into_bytes();
    load_parallel(
        addr,
        prefix,
        p.bg_keys,
        p.data_size.max(1),
        None,
        p.load_conns,
        p.load_batch,
        filler,
    )
}

/// Windows per second.
const WINDOWS_PER_S: usize = (1000 / WINDOW_MS) as usize;

/// Replies in the worst whole second (10 consecutive windows) that starts
/// between the instant and the end of the storm (`gone_ms` after it, at
/// least one second), over the mean per second before the instant. The
/// first window is left out of the mean: traffic starts inside it.
fn worst_second_ratio(windows: &[StormWindow], gone_ms: Option<i64>) -> Option<f64> {
    let before: Vec<u64> = windows
        .iter()
        .filter(|w| w.t_ms < 0)
        .skip(1)
        .map(|w| w.count)
        .collect();
    if before.is_empty() {
        return None;
    }
    let per_s = before.iter().sum::<u64>() as f64 * WINDOWS_PER_S as f64 / before.len() as f64;
    let storm_end = gone_ms.unwrap_or(i64::MAX).max(1000);
    let worst = windows
        .windows(WINDOWS_PER_S)
        .filter(|span| (0..storm_end).contains(&span[0].t_ms))
        .map(|span| span.iter().map(|w| w.count).sum::<u64>())
        .min()?;
    Some(r3(worst as f64 / per_s.max(1.0)))
}

/// Runs one storm against `addr`.
pub fn run_storm(
    addr: SocketAddr,
    label: &str,
    p: &StormParams,
    stop: Arc<AtomicBool>,
) -> Result<StormReport, String> {
    if p.keys == 0 {
        return Err("--keys must be at least 1".into());
    }
    if p.threads == 0 || p.clients == 0 || p.pipeline == 0 {
        return Err("--threads, --clients and --pipeline must be at least 1".into());
    }
    let (set, get) = parse_ratio(&p.ratio)?;
    server::ping(addr, Duration::from_secs(3))?;
    let mut warnings = Vec::new();
    let len = vol_value_len(p);
    let filler = Arc::new(client::filler(len.max(16)));
    let vol_prefix = format!("{}vol:", p.key_prefix).into_bytes();
    let mut ctl = CtlConn::connect(addr, Duration::from_secs(3)).map_err(|e| e.to_string())?;
    let base = info_sample(&mut ctl)?;
    // Volatile keys left over from an earlier storm would expire too; they
    // are not ours but `expires` counts them, so wait for them to go.
    let pre_ms = ((p.pre * 1000.0) as u64).div_ceil(WINDOW_MS) * WINDOW_MS;
    let delay_ms = match p.instant_delay {
        Some(d) => (d * 1000.0) as u64,
        None => pre_ms + 1000 + p.keys * 1000 / 100_000,
    };
    let load_start = Instant::now();
    let at_ms = now_ms() + delay_ms.max(pre_ms);
    eprintln!(
        "storm: loading {} volatile keys ({} bytes) expiring at unix ms {} (in {:.1} s) + {} background keys on {label}",
        p.keys,
        len,
        at_ms,
        delay_ms as f64 / 1000.0,
        p.bg_keys
    );
    let (bg_ok, bg_err, e1) = load_background(addr, p)?;
    // Some servers' memory figures are sampled (ember's every 100 ms): one
    // read right after the load can miss its last part.
    std::thread::sleep(MEMORY_SETTLE);
    let memory_preload = info_sample(&mut ctl)?.used_memory;
    let (vol_ok, vol_err, e2) = load_parallel(
        addr,
        vol_prefix.clone(),
        p.keys,
        len,
        Some(at_ms),
        p.load_conns,
        p.load_batch,
        filler.clone(),
    )?;
    let load_time = load_start.elapsed();
    let load_done_ms = now_ms();
    if let Some(e) = e1.or(e2) {
        warnings.push(format!(
            "load: {} error replies, first: {e}",
            bg_err + vol_err
        ));
    }
    let load = json!({
        "volatile_keys": vol_ok,
        "background_keys": bg_ok,
        "errors": bg_err + vol_err,
        "duration_ms": load_time.as_millis() as u64,
        "ops_per_sec": r3((vol_ok + bg_ok + vol_err + bg_err) as f64 / load_time.as_secs_f64().max(1e-9)),
        "finished_ms_before_instant": at_ms as i64 - load_done_ms as i64,
    });
    eprintln!(
        "storm: loaded in {:.2} s ({:.0} keys/s)",
        load_time.as_secs_f64(),
        (vol_ok + bg_ok) as f64 / load_time.as_secs_f64().max(1e-9)
    );
    let start_ms = at_ms.saturating_sub(pre_ms);
    if load_done_ms > at_ms {
        warnings.push(format!(
            "the load finished {} ms after the instant: raise --instant-delay",
            load_done_ms - at_ms
        ));
    } else if load_done_ms > start_ms {
        warnings.push(format!(
            "the load finished only {} ms before the instant (wanted --pre {} ms): raise --instant-delay",
            at_ms - load_done_ms,
            pre_ms
        ));
    }
    for w in &warnings {
        eprintln!("storm: warning: {w}");
    }
    let cur = info_sample(&mut ctl)?;
    let base_expires = cur.expires.saturating_sub(vol_ok).min(base.expires);
    // The server's latency monitor (if on) starts afresh: the load's long
    // pipelined passes are not part of what is measured.
    let _ = ctl.cmd(&[b"LATENCY", b"RESET"]);
    // Background traffic starts at instant - pre (or now, if later).
    let now = now_ms();
    let epoch = Instant::now() + Duration::from_millis(start_ms.saturating_sub(now));
    let epoch_ms = start_ms.max(now);
    let samples = Arc::new(Mutex::new(Vec::new()));
    let wait_samples = Arc::new(Mutex::new(Vec::new()));
    let poll_errors = Arc::new(Mutex::new(Vec::new()));
    let poll_stop = Arc::new(AtomicBool::new(false));
    let wait_probe = cpuwait::Probe::new(cpuwait::local_server_pid(addr, base.process_id));
    let server_pid = wait_probe.server_pid;
    let poll_h = {
        let (s, o, w, e) = (
            poll_stop.clone(),
            samples.clone(),
            wait_samples.clone(),
            poll_errors.clone(),
        );
        let start = epoch
            .checked_sub(Duration::from_millis(200))
            .unwrap_or(epoch);
        std::thread::spawn(move || poller(addr, at_ms, start, s, o, wait_probe, w, e))
    };
    let bg_stop = Arc::new(AtomicBool::new(false));
    let wl = background_workload(addr, p, set, get, Some(epoch), None);
    let quiet = p.quiet;
    let bg_h = {
        let ctl = Control {
            stop: bg_stop.clone(),
        };
        std::thread::spawn(move || {
            let mut progress = Progress::off();
            client::run(wl, &ctl, &mut progress)
        })
    };
    let probe_h = p.verify.then(|| {
        let (s, f, pre) = (bg_stop.clone(), filler.clone(), vol_prefix.clone());
        let keys = p.keys;
        std::thread::spawn(move || {
            client::sleep_until(epoch, &s);
            probe(addr, pre, keys, len, at_ms, s, f)
        })
    });
    // Watch INFO until the volatile keys are gone (+ post) or the cap.
    let threshold_99 = p.keys / 100;
    let mut gone_ms: Option<i64> = None;
    let mut gone99_ms: Option<i64> = None;
    let mut last_print = Instant::now();
    let post_ms = (p.post * 1000.0) as i64;
    let cap_ms = (p.cap * 1000.0) as i64;
    let mut progress = if quiet {
        Progress::off()
    } else {
        Progress::auto("storm")
    };
    progress.start(None, None);
    let mut interrupted = false;
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let rel = now_ms() as i64 - at_ms as i64;
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let last = samples.lock().unwrap().last().cloned();
        if let Some(s) = &last {
            let remaining = s.expires.saturating_sub(base_expires);
            if s.t_ms >= 0 {
                if gone99_ms.is_none() && remaining <= threshold_99 {
                    gone99_ms = Some(s.t_ms);
                }
                if gone_ms.is_none() && remaining == 0 {
                    gone_ms = Some(s.t_ms);
                }
            }
            if last_print.elapsed() >= Duration::from_secs(1) {
                last_print = Instant::now();
                progress.note(format!(
                    "{:>+7.1}s volatile keys {remaining}, used_memory {:.1} MB, expired_stale_perc {:.1}",
                    rel as f64 / 1000.0,
                    s.used_memory as f64 / 1e6,
                    s.expired_stale_perc
                ));
            }
        }
        if gone_ms.is_some_and(|g| rel >= g + post_ms) || rel >= cap_ms {
            break;
        }
    }
    progress.finish();
    bg_stop.store(true, Ordering::SeqCst);
    let run: RunResult = bg_h
        .join()
        .map_err(|_| "background thread panicked".to_string())?;
    let mut verify = run.verify.clone();
    if let Some(h) = probe_h {
        if let Ok(r) = h.join() {
            verify.merge(&r);
        }
    }
    poll_stop.store(true, Ordering::SeqCst);
    let _ = poll_h.join();
    let info = std::mem::take(&mut *samples.lock().unwrap());
    let server_stalls = server_stalls(&mut ctl);
    let waits: std::collections::HashMap<i64, WaitSample> =
        cpuwait::per_window(&wait_samples.lock().unwrap(), WINDOW_MS as i64)
            .into_iter()
            .map(|w| (w.t_ms, w))
            .collect();
    let mut errors = run.errors.clone();
    for e in poll_errors.lock().unwrap().iter() {
        errors.sample(e.clone());
    }
    // Windows relative to the instant.
    let shift = at_ms as i64 - epoch_ms as i64; // ms from window 0 to the instant
    let coll = &run.collector;
    let windows: Vec<StormWindow> = coll
        .windows
        .iter()
        .map(|w| {
            let t = w.t_ms as i64 - shift;
            let end = t + WINDOW_MS as i64;
            let vk = info
                .iter()
                .rev()
                .find(|s| s.t_ms <= end)
                .map(|s| s.expires.saturating_sub(base_expires));
            let wait = waits.get(&t).copied().unwrap_or_default();
            let to_ms = |us: Option<u64>| us.map(|us| r3(us as f64 / 1000.0));
            StormWindow {
                t_ms: t,
                count: w.count,
                p50_ms: r3(ms(w.p50_us)),
                p99_ms: r3(ms(w.p99_us)),
                p999_ms: r3(ms(w.p999_us)),
                max_ms: r3(ms(w.max_us)),
                service_max_ms: r3(ms(w.service_max_us)),
                volatile_keys: vk,
                server_cpu_wait_ms: to_ms(wait.server_us),
                client_cpu_wait_ms: to_ms(wait.client_us),
                machine_ms: to_ms(wait.machine_us),
            }
        })
        .collect();
    let inst = shift.max(0) as u64;
    let during_end = match gone_ms {
        Some(g) => (inst + g.max(0) as u64).div_ceil(WINDOW_MS) * WINDOW_MS,
        None => u64::MAX,
    };
    // The storm's windows: those starting in [inst, during_end).
    let storm_len = during_end
        .checked_sub(inst.div_ceil(WINDOW_MS) * WINDOW_MS)
        .filter(|_| gone_ms.is_some())
        .unwrap_or(0);
    let quiet = quiet_stretches(coll, inst, storm_len);
    let before = Phase::of(&LatSummary::of(&coll.merged(0, inst)));
    let during = Phase::of(&LatSummary::of(&coll.merged(inst, during_end)));
    let after = Phase::of(&LatSummary::of(&coll.merged(during_end, u64::MAX)));
    let cpu_wait = cpu_wait_summary(
        &windows,
        coll,
        shift,
        (during_end.min(i64::MAX as u64) as i64).saturating_sub(shift),
        server_pid,
    );
    let mem_before = info
        .iter()
        .rev()
        .find(|s| s.t_ms < 0)
        .or(info.first())
        .map(|s| s.used_memory)
        .unwrap_or(0);
    let expired_before = info
        .iter()
        .rev()
        .find(|s| s.t_ms < 0)
        .or(info.first())
        .map(|s| s.expired_keys)
        .unwrap_or(0);
    let last = info.last().cloned().unwrap_or_default();
    let secs = run.duration.as_secs_f64().max(1e-9);
    let background = json!({
        "ratio": p.ratio,
        "rate": p.rate,
        "connections": run.connections,
        "ops": run.total_ops(),
        "ops_per_sec": r3(run.total_ops() as f64 / secs),
        "hits": run.totals.iter().map(|k| k.hits).sum::<u64>(),
        "misses": run.totals.iter().map(|k| k.misses).sum::<u64>(),
        "all": Phase::of(&LatSummary::of(&run.total_hist())),
        "duration_ms": run.duration.as_millis() as u64,
    });
    Ok(StormReport {
        target: label.to_string(),
        instant_unix_ms: at_ms,
        keys: p.keys,
        load,
        before,
        during,
        after,
        reclaim_ms: gone_ms,
        reclaim_99_ms: gone99_ms,
        worst_second_ratio: worst_second_ratio(&windows, gone_ms),
        remaining_at_end: last.expires.saturating_sub(base_expires),
        base_expires,
        memory_preload,
        memory_before: mem_before,
        memory_peak: info.iter().map(|s| s.used_memory).max().unwrap_or(0),
        memory_after: last.used_memory,
        expired_keys: last.expired_keys.saturating_sub(expired_before),
        max_expired_stale_perc: info
            .iter()
            .map(|s| s.expired_stale_perc)
            .fold(0.0, f64::max),
        background,
        windows,
        info,
        cpu_wait,
        quiet_stretches: quiet,
        server_stalls,
        errors,
        verify,
        interrupted,
        warnings,
    })
}

/// Sums the CPU waits of the windows before and during the storm (`during_end`:
/// ms after the instant) and summarises latency over the uncontended ones.
/// `shift`: ms from the collector's epoch to the instant.
fn cpu_wait_summary(
    windows: &[StormWindow],
    coll: &crate::stats::Collector,
    shift: i64,
    during_end: i64,
    server_pid: Option<u32>,
) -> CpuWait {
    let during = |t: i64| (0..during_end).contains(&t);
    let before = |t: i64| t < 0;
    let total = |phase: &dyn Fn(i64) -> bool, side: fn(&StormWindow) -> Option<f64>| {
        let picked: Vec<Option<f64>> = windows.iter().filter(|w| phase(w.t_ms)).map(side).collect();
        // Unknown as soon as one window is.
        let sum: Option<f64> = picked.iter().copied().sum();
        sum.filter(|_| !picked.is_empty()).map(r3)
    };
    let contended = |w: &StormWindow| {
        let waited = |v: Option<f64>| v.is_some_and(|ms| ms >= CONTENDED_MS);
        waited(w.server_cpu_wait_ms) || waited(w.client_cpu_wait_ms)
    };
    let contended_at: std::collections::HashSet<i64> = windows
        .iter()
        .filter(|w| contended(w))
        .map(|w| w.t_ms)
        .collect();
    let uncontended = |phase: &dyn Fn(i64) -> bool| {
        Phase::of(&LatSummary::of(&coll.merged_if(|t_epoch| {
            let t = t_epoch as i64 - shift;
            phase(t) && !contended_at.contains(&t)
        })))
    };
    let count = |phase: &dyn Fn(i64) -> bool| {
        windows
            .iter()
            .filter(|w| phase(w.t_ms) && contended(w))
            .count() as u64
    };
    CpuWait {
        server_process: server_pid
            .map(|pid| format!("{}[{pid}]", cpuwait::process_name(pid).unwrap_or_default())),
        server_before_ms: total(&before, |w| w.server_cpu_wait_ms),
        server_during_ms: total(&during, |w| w.server_cpu_wait_ms),
        client_before_ms: total(&before, |w| w.client_cpu_wait_ms),
        client_during_ms: total(&during, |w| w.client_cpu_wait_ms),
        machine_before_ms: total(&before, |w| w.machine_ms),
        machine_during_ms: total(&during, |w| w.machine_ms),
        contended_windows_before: count(&before),
        contended_windows_during: count(&during),
        windows_during: windows.iter().filter(|w| during(w.t_ms)).count() as u64,
        before_uncontended: uncontended(&before),
        during_uncontended: uncontended(&during),
    }
}

/// The chart of one storm.
pub fn chart_spec(r: &StormReport) -> ChartSpec {
    let pts = |f: fn(&StormWindow) -> f64| -> Vec<(f64, f64)> {
        r.windows
            .iter()
            .filter(|w| w.count > 0)
            .map(|w| (w.t_ms as f64 / 1000.0, f(w)))
            .collect()
    };
    ChartSpec {
        title: format!("Expiry storm: {} keys, {}", r.keys, r.target),
        x_desc: "seconds from the expiry instant (100 ms windows)".into(),
        y_desc: "latency (ms)".into(),
        lines: vec![
            Line {
                name: "p50".into(),
                points: pts(|w| w.p50_ms),
            },
            Line {
                name: "p99".into(),
                points: pts(|w| w.p99_ms),
            },
            Line {
                name: "p99.9".into(),
                points: pts(|w| w.p999_ms),
            },
        ],
        secondary: Some((
            "volatile keys remaining".into(),
            Line {
                name: "volatile keys".into(),
                points: r
                    .info
                    .iter()
                    .map(|s| {
                        (
                            s.t_ms as f64 / 1000.0,
                            s.expires.saturating_sub(r.base_expires) as f64,
                        )
                    })
                    .collect(),
            },
        )),
        marker: Some((0.0, "expiry instant".into())),
    }
}

fn fmt_opt_ms(v: Option<i64>) -> String {
    v.map(|x| format!("{x} ms"))
        .unwrap_or_else(|| "not reached".into())
}

/// Human-readable summary.
pub fn print_summary(r: &StormReport) {
    println!("\nEXPIRY STORM ({}, {} keys)", r.target, r.keys);
    println!("{}", "=".repeat(72));
    println!(
        "{:<8} {:>10} {:>12} {:>12} {:>12} {:>12}",
        "Phase", "Requests", "p50 (ms)", "p99 (ms)", "p99.9 (ms)", "max (ms)"
    );
    println!("{}", "-".repeat(72));
    for (name, ph) in [
        ("before", &r.before),
        ("during", &r.during),
        ("after", &r.after),
    ] {
        println!(
            "{:<8} {:>10} {:>12.3} {:>12.3} {:>12.3} {:>12.3}",
            name, ph.count, ph.p50_ms, ph.p99_ms, ph.p999_ms, ph.max_ms
        );
    }
    println!("{}", "-".repeat(72));
    let w = &r.cpu_wait;
    let opt = |v: Option<f64>| v.map_or("n/a".to_string(), |ms| format!("{ms:.1} ms"));
    let clean = &w.during_uncontended;
    let without = if clean.count > 0 {
        format!("p99.9 {:.3} ms, max {:.3} ms", clean.p999_ms, clean.max_ms)
    } else {
        "no window left".to_string()
    };
    println!(
        "CPU wait (runnable, off a CPU) during the storm: server {} ({}), loadgen {}; kernel threads \
         and steal {}; {} of {} storm windows with a wait of {} ms or more; without them: {without}",
        opt(w.server_during_ms),
        w.server_process.as_deref().unwrap_or("not on this machine"),
        opt(w.client_during_ms),
        opt(w.machine_during_ms),
        w.contended_windows_during,
        w.windows_during,
        CONTENDED_MS,
    );
    match &r.quiet_stretches {
        Some(q) => println!(
            "before the instant, over {} stretches as long as the storm ({} ms): p99.9 median {:.3} ms, worst {:.3} ms",
            q.count, q.length_ms, q.p999_median_ms, q.p999_worst_ms
        ),
        None => println!("before the instant: no stretch as long as the storm"),
    }
    if !r.server_stalls.is_empty() {
        let stalls: Vec<String> = r
            .server_stalls
            .iter()
            .map(|s| format!("{} {} ms", s.event, s.max_ms))
            .collect();
        println!(
            "server's LATENCY LATEST (longest of each event): {}",
            stalls.join(", ")
        );
    }
    println!(
        "reclaim: all volatile keys gone {}; 99% gone {}; remaining at end {}",
        fmt_opt_ms(r.reclaim_ms),
        fmt_opt_ms(r.reclaim_99_ms),
        r.remaining_at_end
    );
    println!(
        "memory: before the volatile load {:.1} MB, before the instant {:.1} MB, peak {:.1} MB, after {:.1} MB; expired_keys +{}; max expired_stale_perc {:.1}",
        r.memory_preload as f64 / 1e6,
        r.memory_before as f64 / 1e6,
        r.memory_peak as f64 / 1e6,
        r.memory_after as f64 / 1e6,
        r.expired_keys,
        r.max_expired_stale_perc
    );
    println!("background: {}", r.background);
    report::print_errors(&r.errors);
    r.verify.print();
    for w in &r.warnings {
        println!("warning: {w}");
    }
    if r.interrupted {
        println!("(partial results: interrupted)");
    }
}

/// Storm JSON (the report plus the configuration).
pub fn to_json(r: &StormReport, p: &StormParams) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert(
            "configuration".into(),
            json!({
                "keys": p.keys, "data_size": p.data_size, "pre_s": p.pre, "post_s": p.post,
                "cap_s": p.cap, "ratio": p.ratio, "rate": p.rate, "threads": p.threads,
                "clients": p.clients, "pipeline": p.pipeline, "bg_keys": p.bg_keys,
                "key_prefix": p.key_prefix, "verify": p.verify,
            }),
        );
        m.insert("scenario".into(), json!("storm"));
    }
    v
}

pub fn main(a: &StormArgs, stop: Arc<AtomicBool>) -> Result<u8, String> {
    let target = server::target(&a.conn)?;
    let r = run_storm(target.addr, &target.label, &a.params, stop)?;
    print_summary(&r);
    let json_path = a
        .json_out_file
        .clone()
        .unwrap_or_else(|| a.params.out_dir.join("storm.json"));
    report::write_json(&json_path, &to_json(&r, &a.params))?;
    println!("\nwrote {}", json_path.display());
    let base: PathBuf = json_path.with_extension("");
    match chart::write(&base, &chart_spec(&r)) {
        Ok(files) => {
            for f in files {
                println!("wrote {}", f.display());
            }
        }
        Err(e) => eprintln!("chart: {e}"),
    }
    drop(target);
    Ok(if r.verify.violations() > 0 {
        1
    } else if r.interrupted {
        130
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(t_ms: i64, count: u64) -> StormWindow {
        StormWindow {
            t_ms,
            count,
            p50_ms: 0.0,
            p99_ms: 0.0,
            p999_ms: 0.0,
            max_ms: 0.0,
            service_max_ms: 0.0,
            volatile_keys: None,
            server_cpu_wait_ms: None,
            client_cpu_wait_ms: None,
            machine_ms: None,
        }
    }

    #[test]
    fn contended_windows_are_counted_and_left_out_of_the_clean_figures() {
        use crate::stats::{new_win_hist, Collector, WindowMsg};
        // The instant is 300 ms after the epoch; windows -300..=200 ms.
        let mut coll = Collector::new(1, true, vec![99.0]);
        let latencies = [100, 100, 100, 100, 7_000, 100];
        for (idx, us) in latencies.iter().enumerate() {
            let mut h = new_win_hist();
            h.record(*us).unwrap();
            coll.add(WindowMsg {
                idx: idx as u32,
                kinds: vec![h],
                service_max_us: *us,
            });
        }
        coll.finish(latencies.len() as u32 - 1);
        let waits = [
            (Some(0.2), Some(0.0)),
            (Some(1.5), Some(0.0)), // the server waited: contended
            (Some(0.1), Some(0.1)),
            (Some(0.1), Some(0.3)),
            (Some(6.9), Some(0.2)), // the 7 ms spike, with a 6.9 ms wait
            (None, Some(2.0)),      // loadgen waited; the server unknown
        ];
        let windows: Vec<StormWindow> = waits
            .iter()
            .enumerate()
            .map(|(i, &(server, client))| StormWindow {
                server_cpu_wait_ms: server,
                client_cpu_wait_ms: client,
                ..window(i as i64 * 100 - 300, 1)
            })
            .collect();
        let c = cpu_wait_summary(&windows, &coll, 300, 300, None);
        assert_eq!(
            (c.contended_windows_before, c.contended_windows_during),
            (1, 2)
        );
        assert_eq!(c.windows_during, 3);
        assert_eq!(c.server_before_ms, Some(1.8));
        assert_eq!(c.server_during_ms, None, "one window unknown");
        assert_eq!(c.client_during_ms, Some(2.5));
        assert_eq!(c.before_uncontended.count, 2);
        assert_eq!(c.during_uncontended.count, 1);
        assert!(c.during_uncontended.max_ms < 1.0, "the spike is left out");
    }

    #[test]
    fn quiet_stretches_slide_over_the_time_before_the_instant() {
        use crate::stats::{new_win_hist, Collector, WindowMsg};
        // Ten windows before the instant at 1 s: the first (traffic starts
        // inside it) is slow and must be left out; one 3 ms spike at 500 ms.
        let mut coll = Collector::new(1, true, vec![99.0]);
        for idx in 0..10u32 {
            let us = match idx {
                0 => 50_000,
                5 => 3_000,
                _ => 100,
            };
            let mut h = new_win_hist();
            h.record(us).unwrap();
            coll.add(WindowMsg {
                idx,
                kinds: vec![h],
                service_max_us: us,
            });
        }
        coll.finish(9);
        // 200 ms stretches start at 100..=800 ms: eight, two of them
        // holding the spike.
        let q = quiet_stretches(&coll, 1_000, 200).expect("stretches fit");
        assert_eq!((q.length_ms, q.count), (200, 8));
        assert!(q.p999_median_ms < 0.2, "median {}", q.p999_median_ms);
        assert!(
            (q.p999_worst_ms - 3.0).abs() < 0.01,
            "worst {}",
            q.p999_worst_ms
        );
        // A stretch reaching into the storm is not quiet.
        assert_eq!(quiet_stretches(&coll, 1_000, 900).map(|q| q.count), Some(1));
        assert_eq!(quiet_stretches(&coll, 1_000, 1_000), None);
        assert_eq!(quiet_stretches(&coll, 1_000, 0), None, "no storm");
    }

    #[test]
    fn the_worst_second_is_found_inside_the_storm() {
        // 4,000 replies a second before the instant (400 per window; the
        // first, partial window is left out), a dip to 100 in the windows
        // from 500 ms to 800 ms, and a deeper dip after the storm ended.
        let mut ws = vec![window(-300, 10)];
        ws.extend((-2..0).map(|i| window(i * 100, 400)));
        ws.extend((0..30).map(|i| {
            let t = i * 100;
            let count = match t {
                500..=700 => 100,
                2_500.. => 0,
                _ => 400,
            };
            window(t, count)
        }));
        // Storm over at 1.2 s: spans start at 0..1200; the worst holds the dip.
        assert_eq!(worst_second_ratio(&ws, Some(1_200)), Some(0.775));
        // A short storm is still judged over its first whole second.
        assert_eq!(worst_second_ratio(&ws, Some(100)), Some(0.775));
        // Never over: the spans reach the silent end.
        assert_eq!(worst_second_ratio(&ws, None), Some(0.5));
        assert_eq!(
            worst_second_ratio(&ws[3..], Some(100)),
            None,
            "nothing before"
        );
    }
}
