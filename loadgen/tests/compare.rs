//! `compare` with two targets started by the test.

mod common;
use common::*;
use serde_json::Value;
use std::time::Duration;

fn check(dir: &std::path::Path, scenario: &str, first_metric: &str) {
    let md = std::fs::read_to_string(dir.join("compare.md")).unwrap();
    assert!(md.contains("| metric | a | b | b / a |"), "{md}");
    assert!(md.contains(first_metric), "{md}");
    let v: Value = read_json(&dir.join("compare.json"));
    assert_eq!(v["scenario"], scenario);
    let t = v["targets"].as_array().unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(t[0]["name"], "a");
    assert_eq!(t[1]["name"], "b");
    let svg = std::fs::read_to_string(dir.join("compare.svg")).unwrap();
    assert!(svg.contains("a p99") && svg.contains("b p99"));
    assert!(dir.join("compare.png").is_file());
}

#[test]
fn compare_two_targets_steady() {
    let (s1, s2) = (server_under_test(), server_under_test());
    let dir = tmpdir("cmp-steady");
    let (t1, t2) = (
        format!("a=127.0.0.1:{}", s1.port),
        format!("b=127.0.0.1:{}", s2.port),
    );
    let o = run_loadgen(
        &[
            "compare",
            "--target",
            &t1,
            "--target",
            &t2,
            "--scenario",
            "steady",
            "--test-time",
            "1",
            "--rate",
            "1000",
            "--bg-keys",
            "500",
            "--out-dir",
            dir.to_str().unwrap(),
        ],
        Duration::from_secs(50),
    );
    assert!(o.status.success(), "{}", text(&o));
    check(&dir, "steady", "| ops/sec |");
    let v: Value = read_json(&dir.join("compare.json"));
    for t in v["targets"].as_array().unwrap() {
        assert!(t["report"]["ops"].as_u64().unwrap() > 0);
    }
}

#[test]
fn compare_two_targets_storm() {
    let (s1, s2) = (server_under_test(), server_under_test());
    let dir = tmpdir("cmp-storm");
    let (t1, t2) = (
        format!("a=127.0.0.1:{}", s1.port),
        format!("b=127.0.0.1:{}", s2.port),
    );
    let o = run_loadgen(
        &[
            "compare",
            "--target",
            &t1,
            "--target",
            &t2,
            "--keys",
            "5000",
            "--pre",
            "0.5",
            "--post",
            "0.5",
            "--cap",
            "15",
            "--rate",
            "1000",
            "-c",
            "2",
            "--bg-keys",
            "500",
            "--out-dir",
            dir.to_str().unwrap(),
        ],
        Duration::from_secs(55),
    );
    assert!(o.status.success(), "{}", text(&o));
    check(&dir, "storm", "| during p99 (ms) |");
    let md = std::fs::read_to_string(dir.join("compare.md")).unwrap();
    assert!(md.contains("| reclaim, all keys (ms) |"), "{md}");
}
