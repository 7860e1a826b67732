//! Steady (memtier-style) runs against a server started by the test.

mod common;
use common::*;
use serde_json::Value;
use std::time::Duration;

const T: Duration = Duration::from_secs(50);

fn steady(pattern: &str) {
    let srv = server_under_test();
    let dir = tmpdir(&format!("steady-{pattern}"));
    let json = dir.join("out.json");
    let port = srv.port.to_string();
    let kp = format!("{pattern}:{pattern}");
    let o = run_loadgen(
        &[
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "2",
            "-c",
            "3",
            "-n",
            "400",
            "--ratio",
            "1:3",
            "--key-pattern",
            &kp,
            "--key-maximum",
            "999",
            "--pipeline",
            "4",
            "--hide-histogram",
            "--json-out-file",
            json.to_str().unwrap(),
        ],
        T,
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for col in [
        "ALL STATS",
        "Ops/sec",
        "Hits/sec",
        "Misses/sec",
        "Avg. Latency",
        "p50 Latency",
        "p99 Latency",
        "p99.9 Latency",
        "KB/sec",
        "Totals",
    ] {
        assert!(out.contains(col), "missing {col} in\n{out}");
    }
    let v = read_json(&json);
    let all = &v["ALL STATS"];
    let total = all["Totals"]["Count"].as_u64().unwrap();
    assert_eq!(total, 2 * 3 * 400, "{}", srv.kind);
    assert_eq!(all["Sets"]["Count"].as_u64().unwrap(), 2 * 3 * 100);
    assert_eq!(all["Gets"]["Count"].as_u64().unwrap(), 2 * 3 * 300);
    assert!(all["Totals"]["Ops/sec"].as_f64().unwrap() > 0.0);
    let hits = all["Gets"]["Hits/sec"].as_f64().unwrap();
    let misses = all["Gets"]["Misses/sec"].as_f64().unwrap();
    assert!(hits + misses > 0.0);
    let p = &all["Totals"]["Percentile Latencies"];
    let (p50, p99, p999) = (
        p["p50.000"].as_f64().unwrap(),
        p["p99.000"].as_f64().unwrap(),
        p["p99.900"].as_f64().unwrap(),
    );
    assert!(p50 <= p99 && p99 <= p999, "{p}");
    assert!(!p["Histogram log format"]["Compressed Histogram"]
        .as_str()
        .unwrap()
        .is_empty());
    // The 100 ms series accounts for every reply.
    let ws = all["Time-Series-100ms"].as_array().unwrap();
    let sum: u64 = ws.iter().map(|w| w["count"].as_u64().unwrap()).sum();
    assert_eq!(sum, total);
    for (i, w) in ws.iter().enumerate() {
        assert_eq!(w["t_ms"].as_i64().unwrap(), i as i64 * 100);
        let f = |k: &str| w[k].as_f64().unwrap();
        assert!(
            f("p50_ms") <= f("p99_ms")
                && f("p99_ms") <= f("p99.9_ms")
                && f("p99.9_ms") <= f("max_ms"),
            "{w}"
        );
    }
    // memtier's per-second series too.
    let ts = all["Totals"]["Time-Serie"].as_object().unwrap();
    let sum: u64 = ts.values().map(|s| s["Count"].as_u64().unwrap()).sum();
    assert_eq!(sum, total);
    assert_eq!(all["Errors"]["error_replies"].as_u64().unwrap(), 0);
}

#[test]
fn steady_random() {
    steady("R");
}
#[test]
fn steady_sequential() {
    steady("S");
}
#[test]
fn steady_gaussian() {
    steady("G");
}
#[test]
fn steady_zipf() {
    steady("Z");
}
#[test]
fn steady_parallel() {
    steady("P");
}

#[test]
fn allkeys_parallel_writes_every_key() {
    let srv = server_under_test();
    let port = srv.port.to_string();
    let o = run_loadgen(
        &[
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "2",
            "-c",
            "2",
            "-n",
            "allkeys",
            "--ratio",
            "1:0",
            "--key-pattern",
            "P:P",
            "--key-minimum",
            "1",
            "--key-maximum",
            "1000",
            "--key-prefix",
            "ak-",
            "--pipeline",
            "16",
            "--hide-histogram",
            "-q",
        ],
        T,
    );
    assert!(o.status.success(), "{}", text(&o));
    let r = raw_cmd(srv.port, "DBSIZE").unwrap();
    assert_eq!(r.trim(), ":1000", "{}", srv.kind);
}

#[test]
fn rate_limited_test_time_and_runs() {
    let srv = server_under_test();
    let dir = tmpdir("rate");
    let json = dir.join("out.json");
    let prefix = dir.join("hdr");
    let port = srv.port.to_string();
    let o = run_loadgen(
        &[
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "-c",
            "2",
            "--test-time",
            "1",
            "--rate-limiting",
            "100",
            "-x",
            "2",
            "--data-size-range",
            "10-100",
            "--expiry-range",
            "10-20",
            "--distinct-client-seed",
            "--randomize",
            "--print-percentiles",
            "50,90,99",
            "--hdr-file-prefix",
            prefix.to_str().unwrap(),
            "--json-out-file",
            json.to_str().unwrap(),
        ],
        T,
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("BEST RUN RESULTS") && out.contains("AGGREGATED AVERAGE RESULTS (2 runs)"),
        "{out}"
    );
    assert!(out.contains("p90 Latency"));
    let v = read_json(&json);
    for sec in [
        "BEST RUN RESULTS",
        "WORST RUN RESULTS",
        "AGGREGATED AVERAGE RESULTS (2 runs)",
    ] {
        let c = v[sec]["Totals"]["Count"].as_u64().unwrap();
        // 2 connections x 100/s x ~1 s: bounded by the rate (never a speed floor).
        assert!(c > 0 && c <= 2 * 2 * 100 * 13 / 10, "{sec}: {c}");
        assert!(v[sec]["Totals"]["Percentile Latencies"]["p90.000"].is_number());
    }
    for n in [1, 2] {
        for ext in ["txt", "hgrm"] {
            let f = dir.join(format!("hdr_FULL_RUN_{n}.{ext}"));
            assert!(f.is_file(), "{} missing", f.display());
        }
    }
}

#[test]
fn arbitrary_commands() {
    let srv = server_under_test();
    let dir = tmpdir("cmd");
    let json = dir.join("out.json");
    let port = srv.port.to_string();
    let o = run_loadgen(
        &[
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "300",
            "--command",
            "SET __key__ __data__",
            "--command-ratio",
            "1",
            "--command-key-pattern",
            "S",
            "--command",
            "GET __key__",
            "--command-ratio",
            "2",
            "--command-key-pattern",
            "S",
            "--command",
            "APPEND a:__key__ v-__data__",
            "--key-maximum",
            "99",
            "--hide-histogram",
            "--json-out-file",
            json.to_str().unwrap(),
        ],
        T,
    );
    assert!(o.status.success(), "{}", text(&o));
    let v = read_json(&json);
    let all = &v["ALL STATS"];
    assert_eq!(all["Sets"]["Count"].as_u64().unwrap(), 150);
    assert_eq!(all["Gets"]["Count"].as_u64().unwrap(), 300);
    assert_eq!(all["Appends"]["Count"].as_u64().unwrap(), 150);
    assert_eq!(all["Totals"]["Count"].as_u64().unwrap(), 600);
    assert!(all["Gets"]["Hits/sec"].as_f64().unwrap() > 0.0);
    let r = raw_cmd(srv.port, "GET a:memtier-5").unwrap();
    assert!(r.contains("v-"), "{r}");
}

#[test]
fn unreachable_server_is_reported_not_a_panic() {
    let port = free_port().to_string(); // nothing listens there
    let o = run_loadgen(
        &[
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "10",
        ],
        T,
    );
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(all.contains("cannot connect"), "{all}");
    assert!(!all.contains("panicked"), "{all}");
}

#[test]
fn error_replies_are_counted() {
    let srv = server_under_test();
    let dir = tmpdir("err");
    let json = dir.join("out.json");
    let port = srv.port.to_string();
    let o = run_loadgen(
        &[
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "50",
            "--command",
            "NOSUCHCOMMAND __key__",
            "--hide-histogram",
            "--json-out-file",
            json.to_str().unwrap(),
        ],
        T,
    );
    assert!(o.status.success(), "{}", text(&o));
    let v: Value = read_json(&json);
    assert_eq!(
        v["ALL STATS"]["Errors"]["error_replies"].as_u64().unwrap(),
        50
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("error replies"));
}
