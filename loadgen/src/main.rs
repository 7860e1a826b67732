//! `loadgen`: a memtier_benchmark-compatible load generator for RESP servers
//! (ember, redis-server) that also measures expiry storms.
//!
//! Commands:
//! * default: a memtier-style benchmark (`-s -p -t -c --pipeline --ratio
//!   --key-pattern ... --json-out-file`), printing memtier's ALL STATS table;
//! * `storm`: S keys expiring at one instant under steady background traffic;
//! * `compare`: the same scenario against several targets, one report.
//!
//! With neither `--server` nor `--port`, an embedded ember is started on a
//! free port and stopped at the end.
//!
//! Modules:
//! * [`config`]: command line (clap) and its translation into a workload;
//! * [`client`]: the engine: worker threads, mio connections, pipelining,
//!   open/closed loop;
//! * [`resp`]: the incremental RESP reply reader and request encoding;
//! * [`keys`]: key patterns R, S, G, Z, P;
//! * [`stats`]: HDR histograms, 100 ms windows, per-second series;
//! * [`report`]: the stats table, latency distribution, JSON, HDR files;
//! * [`progress`]: the progress line;
//! * [`server`]: the embedded ember, control connections, INFO parsing;
//! * [`storm`]: the expiry-storm scenario;
//! * [`cpuwait`]: how long the server's and loadgen's threads waited for a CPU;
//! * [`compare`]: several targets, ratios table and chart;
//! * [`chart`]: SVG and PNG charts (plotters, embedded DejaVu font);
//! * [`verify`]: `--verify` rules.

mod chart;
mod client;
mod compare;
mod config;
mod cpuwait;
mod keys;
mod progress;
mod report;
mod resp;
mod server;
mod stats;
mod storm;
mod verify;

use clap::Parser;
use client::{Control, RunResult};
use config::{BenchArgs, Cli, Cmd};
use progress::Progress;
use report::Summary;
use serde_json::{json, Map, Value};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Set by Ctrl-C: stop issuing, drain, print the partial report.
pub fn install_ctrlc() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let presses = Arc::new(AtomicUsize::new(0));
    let _ = ctrlc::set_handler(move || {
        if presses.fetch_add(1, Ordering::SeqCst) >= 1 {
            eprintln!("\ninterrupted twice, exiting");
            std::process::exit(130);
        }
        eprintln!("\ninterrupted: finishing in-flight requests, printing the partial report (Ctrl-C again to quit)");
        s.store(true, Ordering::SeqCst);
    });
    stop
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stop = install_ctrlc();
    let res = match cli.cmd {
        None => run_bench(&cli.bench, stop),
        Some(Cmd::Storm(a)) => storm::main(&a, stop),
        Some(Cmd::Compare(a)) => compare::main(&a, stop),
    };
    match res {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::from(2)
        }
    }
}

fn config_json(a: &BenchArgs, addr: &str) -> Value {
    json!({
        "server": addr,
        "threads": a.threads,
        "clients": a.clients,
        "requests": if a.test_time.is_some() { Value::Null } else { json!(a.requests) },
        "test_time": a.test_time,
        "pipeline": a.pipeline,
        "ratio": a.ratio,
        "key_pattern": a.key_pattern,
        "key_minimum": a.key_minimum,
        "key_maximum": a.key_maximum,
        "key_prefix": a.key_prefix,
        "data_size": a.data_size,
        "data_size_range": a.data_size_range,
        "expiry_range": a.expiry_range,
        "rate_limiting": a.rate_limiting,
        "distinct_client_seed": a.distinct_client_seed,
        "randomize": a.randomize,
        "run_count": a.run_count,
        "command": a.command,
        "print_percentiles": a.print_percentiles,
        "verify": a.verify,
        "cache_aside": a.cache_aside,
    })
}

/// The default command: a memtier-style benchmark.
fn run_bench(a: &BenchArgs, stop: Arc<AtomicBool>) -> Result<u8, String> {
    let target = server::target(&a.conn)?;
    let wl = a.workload(target.addr)?;
    if let Err(e) = server::ping(target.addr, std::time::Duration::from_secs(3)) {
        // Unreachable: report like any other error, with a non-zero exit.
        println!("{e}");
        return Ok(2);
    }
    let pcts = wl.percentiles.clone();
    let set_get = a.command.is_empty();
    let ctl = Control { stop: stop.clone() };
    let mut runs: Vec<RunResult> = Vec::new();
    for run_no in 1..=a.run_count.max(1) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut progress = if a.quiet {
            Progress::off()
        } else {
            Progress::auto(&format!("run #{run_no}"))
        };
        let r = client::run(wl.clone(), &ctl, &mut progress);
        if let Some(prefix) = &a.hdr_file_prefix {
            match report::write_hdr_files(prefix, run_no, &r.total_hist(), &r) {
                Ok(files) => eprintln!("wrote {}", files.join(", ")),
                Err(e) => eprintln!("cannot write HDR files: {e}"),
            }
        }
        runs.push(r);
    }
    let Some(first) = runs.first() else {
        return Ok(130);
    };
    let summaries: Vec<Summary> = runs.iter().map(|r| Summary::of(r, set_get)).collect();
    let mut errors = stats::ErrorCounts::default();
    let mut verify = verify::VerifyReport {
        enabled: a.verify,
        ..Default::default()
    };
    for r in &runs {
        errors.merge(&r.errors);
        verify.merge(&r.verify);
    }
    let mut out = String::new();
    let mut sections: Vec<(String, Value)> = Vec::new();
    if runs.len() == 1 {
        out += &report::table("ALL STATS", &summaries[0], &pcts);
        if !a.hide_histogram {
            out += &report::distribution(&summaries[0]);
        }
        sections.push((
            "ALL STATS".into(),
            report::section_json(&summaries[0], &pcts, Some(first), &errors, &verify),
        ));
    } else {
        let best = (0..runs.len())
            .max_by(|&x, &y| {
                summaries[x]
                    .totals
                    .ops_sec
                    .total_cmp(&summaries[y].totals.ops_sec)
            })
            .unwrap_or(0);
        let worst = (0..runs.len())
            .min_by(|&x, &y| {
                summaries[x]
                    .totals
                    .ops_sec
                    .total_cmp(&summaries[y].totals.ops_sec)
            })
            .unwrap_or(0);
        let avg = Summary::average(&summaries);
        let avg_title = format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len());
        for (title, s, r) in [
            (
                "BEST RUN RESULTS".to_string(),
                &summaries[best],
                Some(&runs[best]),
            ),
            (
                "WORST RUN RESULTS".to_string(),
                &summaries[worst],
                Some(&runs[worst]),
            ),
            (avg_title, &avg, None),
        ] {
            out += &report::table(&title, s, &pcts);
            if !a.hide_histogram && r.is_none() {
                out += &report::distribution(s);
            }
            sections.push((
                title.clone(),
                report::section_json(s, &pcts, r, &errors, &verify),
            ));
        }
    }
    print!("{out}");
    println!();
    if a.cache_aside {
        // GETs that found their key, of all GETs (the refills are SETs).
        let (hits, misses) = runs
            .iter()
            .flat_map(|r| r.totals.iter())
            .fold((0u64, 0u64), |(h, m), k| (h + k.hits, m + k.misses));
        let ratio = hits as f64 / (hits + misses).max(1) as f64;
        println!("Hit ratio: {ratio:.3} ({hits} hits, {misses} misses)");
    }
    report::print_errors(&errors);
    verify.print();
    if stop.load(Ordering::Relaxed) {
        println!("\n(partial results: interrupted)");
    }
    if let Some(path) = &a.json_out_file {
        let mut root = Map::new();
        root.insert("configuration".into(), config_json(a, &target.label));
        root.insert(
            "run information".into(),
            json!({
                "Total runs": runs.len(),
                "Tool": "loadgen",
                "Version": env!("CARGO_PKG_VERSION"),
                "Connections": first.connections,
                "Interrupted": stop.load(Ordering::Relaxed),
            }),
        );
        for (k, v) in sections {
            root.insert(k, v);
        }
        report::write_json(path, &Value::Object(root))?;
        eprintln!("wrote {}", path.display());
    }
    drop(target);
    let code = if verify.violations() > 0 {
        1
    } else if first.connections == 0 {
        2
    } else if stop.load(Ordering::Relaxed) {
        130
    } else {
        0
    };
    Ok(code)
}
