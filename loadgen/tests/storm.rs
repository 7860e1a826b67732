//! The expiry storm with small numbers, against a server started by the test.

mod common;
use common::*;
use serde_json::Value;
use std::time::Duration;

#[test]
fn storm_report_is_consistent() {
    let srv = server_under_test();
    let dir = tmpdir("storm");
    let port = srv.port.to_string();
    let o = run_loadgen(
        &[
            "storm",
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "--keys",
            "20000",
            "-d",
            "32",
            "--pre",
            "1",
            "--post",
            "1",
            "--cap",
            "25",
            "--rate",
            "2000",
            "-c",
            "4",
            "--bg-keys",
            "1000",
            "--verify",
            "--out-dir",
            dir.to_str().unwrap(),
        ],
        Duration::from_secs(55),
    );
    assert!(o.status.success(), "{} ({})", text(&o), srv.kind);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("EXPIRY STORM") && out.contains("reclaim:"),
        "{out}"
    );
    let v: Value = read_json(&dir.join("storm.json"));
    assert_eq!(v["scenario"], "storm");
    assert_eq!(v["keys"].as_u64(), Some(20000));
    assert_eq!(v["load"]["volatile_keys"].as_u64(), Some(20000));

    // Windows: 100 ms apart, starting `pre` before the instant, ordered percentiles.
    let ws = v["windows"].as_array().unwrap();
    assert!(ws.len() >= 20, "{} windows", ws.len());
    assert_eq!(ws[0]["t_ms"].as_i64(), Some(-1000));
    for (i, w) in ws.iter().enumerate() {
        assert_eq!(w["t_ms"].as_i64().unwrap(), -1000 + 100 * i as i64);
        let f = |k: &str| w[k].as_f64().unwrap();
        assert!(
            f("p50_ms") <= f("p99_ms")
                && f("p99_ms") <= f("p99.9_ms")
                && f("p99.9_ms") <= f("max_ms"),
            "{w}"
        );
    }
    let window_total: u64 = ws.iter().map(|w| w["count"].as_u64().unwrap()).sum();
    let ops = v["background"]["ops"].as_u64().unwrap();
    assert!(ops > 0);
    assert_eq!(window_total, ops);

    // Phases partition the windows; their percentiles are ordered.
    let mut phase_total = 0;
    for ph in ["before", "during", "after"] {
        let p = &v[ph];
        phase_total += p["count"].as_u64().unwrap();
        let f = |k: &str| p[k].as_f64().unwrap();
        assert!(
            f("p50_ms") <= f("p99_ms")
                && f("p99_ms") <= f("p999_ms")
                && f("p999_ms") <= f("max_ms"),
            "{ph}: {p}"
        );
    }
    assert_eq!(phase_total, ops);
    assert!(v["before"]["count"].as_u64().unwrap() > 0);
    assert!(v["after"]["count"].as_u64().unwrap() > 0);

    // Reclaim: all gone within the cap, 99% no later than 100%.
    let reclaim = v["reclaim_ms"]
        .as_i64()
        .expect("volatile keys gone within the cap");
    let reclaim99 = v["reclaim_99_ms"].as_i64().unwrap();
    assert!(
        reclaim >= 0 && reclaim99 >= 0 && reclaim99 <= reclaim,
        "{reclaim99} {reclaim}"
    );
    assert_eq!(v["remaining_at_end"].as_u64(), Some(0));
    let last = ws.last().unwrap();
    assert_eq!(last["volatile_keys"].as_u64(), Some(0));
    // Before the instant all volatile keys were there.
    let first_known = ws.iter().find(|w| w["volatile_keys"].is_u64()).unwrap();
    assert_eq!(first_known["volatile_keys"].as_u64(), Some(20000));
    // The run lasted at least until reclaim + post.
    assert!(last["t_ms"].as_i64().unwrap() + 100 >= reclaim + 900);

    // INFO samples and memory.
    let info = v["info"].as_array().unwrap();
    assert!(info.len() >= 10);
    let (before, peak, after) = (
        v["memory_before"].as_u64().unwrap(),
        v["memory_peak"].as_u64().unwrap(),
        v["memory_after"].as_u64().unwrap(),
    );
    assert!(
        before > 0 && peak >= before && peak >= after,
        "{before} {peak} {after}"
    );
    assert!(v["expired_keys"].as_u64().unwrap() >= 20000);

    // --verify found nothing wrong on a correct server.
    assert!(v["verify"]["checked"].as_u64().unwrap() > 0);
    assert_eq!(v["verify"]["stale"].as_u64(), Some(0));
    assert_eq!(v["verify"]["missing"].as_u64(), Some(0));
    assert_eq!(v["verify"]["wrong"].as_u64(), Some(0));

    // Charts.
    let svg = std::fs::read_to_string(dir.join("storm.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("expiry instant"));
    let png = std::fs::read(dir.join("storm.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
}
