//! `compare`: the same scenario against each target in turn, then one
//! report: a markdown table (values and ratios to the first target), JSON
//! and one chart with a p99 line per target.

use crate::chart::{self, ChartSpec, Line};
use crate::client::{self, Control};
use crate::config::{parse_ratio, resolve, CompareArgs, Scenario, StormParams};
use crate::progress::Progress;
use crate::report::{self, r3};
use crate::server::{self, find_ember, Embedded};
use crate::stats::{ms, LatSummary};
use crate::storm;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One target's numbers: (metric, value) in table order, plus its p99 line.
pub struct Outcome {
    pub name: String,
    pub addr: String,
    pub metrics: Vec<(String, Option<f64>)>,
    pub p99: Vec<(f64, f64)>,
    pub json: Value,
    pub violations: u64,
}

fn parse_target(s: &str) -> Result<(String, String), String> {
    let (name, addr) = s
        .split_once('=')
        .ok_or_else(|| format!("--target: expected name=host:port, got {s:?}"))?;
    if name.is_empty() || addr.is_empty() {
        return Err(format!("--target: expected name=host:port, got {s:?}"));
    }
    Ok((name.to_string(), addr.to_string()))
}

fn addr_of(spec: &str) -> Result<SocketAddr, String> {
    let (host, port) = spec
        .rsplit_once(':')
        .ok_or_else(|| format!("--target: expected host:port, got {spec:?}"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("--target: bad port in {spec:?}"))?;
    resolve(host, port)
}

fn storm_outcome(name: &str, addr: &str, r: &storm::StormReport, p: &StormParams) -> Outcome {
    let f = |v: f64| Some(v);
    let mut metrics = vec![
        (
            "background ops/sec".to_string(),
            r.background["ops_per_sec"].as_f64(),
        ),
        ("before p50 (ms)".into(), f(r.before.p50_ms)),
        ("before p99 (ms)".into(), f(r.before.p99_ms)),
        ("before p99.9 (ms)".into(), f(r.before.p999_ms)),
        ("during p50 (ms)".into(), f(r.during.p50_ms)),
        ("during p99 (ms)".into(), f(r.during.p99_ms)),
        ("during p99.9 (ms)".into(), f(r.during.p999_ms)),
        ("during max (ms)".into(), f(r.during.max_ms)),
        ("after p99 (ms)".into(), f(r.after.p99_ms)),
    ];
    // Where the server runs here: which windows someone else held its
    // CPU (or loadgen's), and latency without those windows.
    let w = &r.cpu_wait;
    let measured = |v: f64| w.server_process.is_some().then_some(v);
    // Latency over the uncontended windows, if any was left.
    let clean = |p: &storm::Phase, v: f64| (w.server_process.is_some() && p.count > 0).then_some(v);
    metrics.extend([
        (
            "server CPU wait during (ms)".to_string(),
            w.server_during_ms,
        ),
        ("loadgen CPU wait during (ms)".into(), w.client_during_ms),
        (
            "kernel threads + steal during (ms)".into(),
            w.machine_during_ms,
        ),
        (
            format!(
                "windows during with a CPU wait ≥ {} ms",
                storm::CONTENDED_MS
            ),
            measured(w.contended_windows_during as f64),
        ),
        (
            "before p99.9, uncontended windows (ms)".into(),
            clean(&w.before_uncontended, w.before_uncontended.p999_ms),
        ),
        (
            "during p99.9, uncontended windows (ms)".into(),
            clean(&w.during_uncontended, w.during_uncontended.p999_ms),
        ),
        (
            "during max, uncontended windows (ms)".into(),
            clean(&w.during_uncontended, w.during_uncontended.max_ms),
        ),
    ]);
    // The machine's noise alone over as many requests as the storm saw.
    let quiet = r.quiet_stretches.as_ref();
    metrics.extend([
        (
            "before p99.9, stretches as long as the storm: median (ms)".to_string(),
            quiet.map(|q| q.p999_median_ms),
        ),
        (
            "before p99.9, stretches as long as the storm: worst (ms)".into(),
            quiet.map(|q| q.p999_worst_ms),
        ),
    ]);
    // The server's own account (LATENCY), where it keeps one.
    for event in ["expire-cycle", "event-loop", "off-cpu"] {
        let longest = r.server_stalls.iter().find(|s| s.event == event);
        metrics.push((
            format!("server LATENCY: longest {event} (ms)"),
            longest.map(|s| s.max_ms as f64),
        ));
    }
    metrics.extend(vec![
        (
            "worst second / before (replies)".into(),
            r.worst_second_ratio,
        ),
        (
            "reclaim, all keys (ms)".into(),
            r.reclaim_ms.map(|v| v as f64),
        ),
        (
            "reclaim, 99% (ms)".into(),
            r.reclaim_99_ms.map(|v| v as f64),
        ),
        (
            "memory before the volatile load (MB)".into(),
            f(r.memory_preload as f64 / 1e6),
        ),
        ("memory before (MB)".into(), f(r.memory_before as f64 / 1e6)),
        ("memory peak (MB)".into(), f(r.memory_peak as f64 / 1e6)),
        ("memory after (MB)".into(), f(r.memory_after as f64 / 1e6)),
        (
            "memory after / before the volatile load".into(),
            Some(r3(
                r.memory_after as f64 / (r.memory_preload as f64).max(1.0)
            )),
        ),
    ]);
    Outcome {
        name: name.to_string(),
        addr: addr.to_string(),
        metrics,
        p99: r
            .windows
            .iter()
            .filter(|w| w.count > 0)
            .map(|w| (w.t_ms as f64 / 1000.0, w.p99_ms))
            .collect(),
        json: storm::to_json(r, p),
        violations: r.verify.violations(),
    }
}

fn steady(
    name: &str,
    addr: SocketAddr,
    p: &StormParams,
    stop: Arc<AtomicBool>,
) -> Result<Outcome, String> {
    let (set, get) = parse_ratio(&p.ratio)?;
    server::ping(addr, Duration::from_secs(3))?;
    storm::load_background(addr, p)?;
    let wl = storm::background_workload(
        addr,
        p,
        set,
        get,
        None,
        Some(Duration::from_secs_f64(p.test_time)),
    );
    let mut progress = if p.quiet {
        Progress::off()
    } else {
        Progress::auto(name)
    };
    let ctl = Control { stop };
    let r = client::run(wl, &ctl, &mut progress);
    let s = LatSummary::of(&r.total_hist());
    let ops = r.ops_per_sec();
    let metrics = vec![
        ("ops/sec".to_string(), Some(ops)),
        ("p50 (ms)".into(), Some(ms(s.p50_us))),
        ("p99 (ms)".into(), Some(ms(s.p99_us))),
        ("p99.9 (ms)".into(), Some(ms(s.p999_us))),
        ("max (ms)".into(), Some(ms(s.max_us))),
        ("errors".into(), Some(r.errors.total() as f64)),
    ];
    let json = json!({
        "scenario": "steady",
        "target": addr.to_string(),
        "ops": r.total_ops(),
        "ops_per_sec": r3(ops),
        "p50_ms": r3(ms(s.p50_us)),
        "p99_ms": r3(ms(s.p99_us)),
        "p99.9_ms": r3(ms(s.p999_us)),
        "max_ms": r3(ms(s.max_us)),
        "errors": r.errors,
        "verify": r.verify,
        "windows": report::windows_json(&r, 0),
    });
    Ok(Outcome {
        name: name.to_string(),
        addr: addr.to_string(),
        metrics,
        p99: r
            .collector
            .windows
            .iter()
            .filter(|w| w.count > 0)
            .map(|w| (w.t_ms as f64 / 1000.0, ms(w.p99_us)))
            .collect(),
        json,
        violations: r.verify.violations(),
    })
}

fn fmt_val(v: Option<f64>) -> String {
    match v {
        None => "n/a".into(),
        Some(x) if x.abs() >= 1000.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// The markdown table: one column per target, then a ratio column per
/// non-baseline target (target / baseline).
pub fn markdown(outcomes: &[Outcome], scenario: &str) -> String {
    let mut s = String::new();
    let base = &outcomes[0];
    s += &format!("### loadgen compare: {scenario}\n\n| metric |");
    for o in outcomes {
        s += &format!(" {} |", o.name);
    }
    for o in &outcomes[1..] {
        s += &format!(" {} / {} |", o.name, base.name);
    }
    s += "\n|---|";
    for _ in 0..(outcomes.len() * 2 - 1) {
        s += "---:|";
    }
    s += "\n";
    for (i, (metric, bv)) in base.metrics.iter().enumerate() {
        s += &format!("| {metric} |");
        for o in outcomes {
            s += &format!(" {} |", fmt_val(o.metrics.get(i).and_then(|m| m.1)));
        }
        for o in &outcomes[1..] {
            let ratio = match (o.metrics.get(i).and_then(|m| m.1), bv) {
                (Some(v), Some(b)) if *b != 0.0 => format!("{:.2}x", v / b),
                _ => "n/a".into(),
            };
            s += &format!(" {ratio} |");
        }
        s += "\n";
    }
    s += "\nTargets: ";
    s += &outcomes
        .iter()
        .map(|o| format!("{} = {}", o.name, o.addr))
        .collect::<Vec<_>>()
        .join(", ");
    s += "\n";
    s
}

pub fn main(a: &CompareArgs, stop: Arc<AtomicBool>) -> Result<u8, String> {
    let targets: Vec<(String, String)> = a
        .target
        .iter()
        .map(|t| parse_target(t))
        .collect::<Result<_, _>>()?;
    let scenario = match a.scenario {
        Scenario::Storm => "storm",
        Scenario::Steady => "steady",
    };
    let mut outcomes = Vec::new();
    for (name, spec) in &targets {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        // `embedded` starts the workspace's ember for this target only.
        let mut embedded: Option<Embedded> = None;
        let addr = if spec == "embedded" {
            let bin = find_ember(a.ember_bin.as_deref())?;
            let e = Embedded::start(&bin, a.ember_shards)?;
            let addr = e.addr;
            embedded = Some(e);
            addr
        } else {
            addr_of(spec)?
        };
        eprintln!("compare: {scenario} against {name} ({addr})");
        let o = match a.scenario {
            Scenario::Storm => {
                let r = storm::run_storm(addr, name, &a.params, stop.clone())?;
                storm::print_summary(&r);
                storm_outcome(name, &addr.to_string(), &r, &a.params)
            }
            Scenario::Steady => steady(name, addr, &a.params, stop.clone())?,
        };
        drop(embedded);
        outcomes.push(o);
    }
    if outcomes.is_empty() {
        return Ok(130);
    }
    let md = markdown(&outcomes, scenario);
    println!("\n{md}");
    let dir = &a.params.out_dir;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let md_path = dir.join("compare.md");
    std::fs::write(&md_path, &md).map_err(|e| format!("{}: {e}", md_path.display()))?;
    let json_path = dir.join("compare.json");
    let v = json!({
        "scenario": scenario,
        "baseline": outcomes[0].name,
        "targets": outcomes.iter().map(|o| json!({
            "name": o.name,
            "addr": o.addr,
            "metrics": o.metrics.iter().map(|(k, v)| (k.clone(), json!(v.map(r3)))).collect::<serde_json::Map<_, _>>(),
            "report": o.json,
        })).collect::<Vec<_>>(),
        "markdown": md,
    });
    report::write_json(&json_path, &v)?;
    let spec = ChartSpec {
        title: format!("loadgen compare ({scenario}): p99 latency per 100 ms window"),
        x_desc: if a.scenario == Scenario::Storm {
            "seconds from the expiry instant".into()
        } else {
            "seconds from start".into()
        },
        y_desc: "p99 latency (ms)".into(),
        lines: outcomes
            .iter()
            .map(|o| Line {
                name: format!("{} p99", o.name),
                points: o.p99.clone(),
            })
            .collect(),
        secondary: None,
        marker: (a.scenario == Scenario::Storm).then(|| (0.0, "expiry instant".to_string())),
    };
    println!("wrote {}\nwrote {}", md_path.display(), json_path.display());
    match chart::write(&dir.join("compare"), &spec) {
        Ok(files) => {
            for f in files {
                println!("wrote {}", f.display());
            }
        }
        Err(e) => eprintln!("chart: {e}"),
    }
    let violations: u64 = outcomes.iter().map(|o| o.violations).sum();
    Ok(if violations > 0 {
        1
    } else if stop.load(Ordering::Relaxed) {
        130
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_ratios() {
        let mk = |name: &str, v: f64| Outcome {
            name: name.into(),
            addr: "x".into(),
            metrics: vec![("p99 (ms)".into(), Some(v)), ("reclaim".into(), None)],
            p99: vec![],
            json: Value::Null,
            violations: 0,
        };
        let md = markdown(&[mk("ember", 2.0), mk("redis", 5.0)], "storm");
        assert!(
            md.contains("| metric | ember | redis | redis / ember |"),
            "{md}"
        );
        assert!(md.contains("| p99 (ms) | 2.000 | 5.000 | 2.50x |"), "{md}");
        assert!(md.contains("| reclaim | n/a | n/a | n/a |"), "{md}");
        assert!(parse_target("nope").is_err());
    }
}
