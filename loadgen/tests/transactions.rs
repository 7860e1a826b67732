//! Multi-command `--command` templates (`MULTI ; ... ; EXEC`): one request,
//! one latency sample, every reply read; against a server started by the test.

mod common;
use common::*;
use serde_json::Value;
use std::time::Duration;

const T: Duration = Duration::from_secs(50);

/// Runs one `--command` template; returns the "ALL STATS" JSON section.
fn run_template(port: u16, template: &str, extra: &[&str]) -> Value {
    let dir = tmpdir("tx");
    let json = dir.join("out.json");
    let port = port.to_string();
    let mut args = vec![
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "--command",
        template,
        "--hide-histogram",
        "-q",
        "--json-out-file",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run_loadgen(&args, T);
    assert!(o.status.success(), "{}", text(&o));
    read_json(&json)["ALL STATS"].clone()
}

/// The integer stored at `key` (0 when missing).
fn get_int(port: u16, key: &str) -> u64 {
    let r = raw_cmd(port, &format!("GET {key}")).expect("GET answered");
    if r.starts_with("$-1") {
        return 0;
    }
    let mut lines = r.lines();
    assert!(lines.next().is_some_and(|l| l.starts_with('$')), "{r}");
    lines.next().unwrap().parse().unwrap()
}

fn errors(all: &Value, field: &str) -> u64 {
    all["Errors"][field].as_u64().unwrap()
}

#[test]
fn two_key_transactions_across_shards_count_one_op_each() {
    let srv = server_under_test();
    let all = run_template(
        srv.port,
        "MULTI ; INCR __key__ ; INCR __key2__ ; EXEC",
        &[
            "-c",
            "2",
            "-n",
            "150",
            "--pipeline",
            "3",
            "--key-prefix",
            "tx:",
            "--key-maximum",
            "19",
        ],
    );
    assert_eq!(
        all["Txs"]["Count"].as_u64(),
        Some(300),
        "{} {all}",
        srv.kind
    );
    assert_eq!(all["Totals"]["Count"].as_u64(), Some(300));
    assert_eq!(all["Txs"]["Failed Requests"].as_u64(), Some(0), "{all}");
    assert_eq!(errors(&all, "error_replies"), 0, "{all}");
    assert_eq!(errors(&all, "aborted"), 0, "{all}");
    // Two increments per committed transaction, none lost or doubled.
    let total: u64 = (0..20).map(|i| get_int(srv.port, &format!("tx:{i}"))).sum();
    assert_eq!(total, 600);
}

#[test]
fn hash_tagged_transactions_move_both_counters_together() {
    let srv = server_under_test();
    let all = run_template(
        srv.port,
        "MULTI ; INCR {__key__}a ; INCR {__key__}b ; EXEC",
        &[
            "-c",
            "2",
            "-n",
            "100",
            "--key-prefix",
            "ht:",
            "--key-maximum",
            "9",
        ],
    );
    assert_eq!(
        all["Txs"]["Count"].as_u64(),
        Some(200),
        "{} {all}",
        srv.kind
    );
    assert_eq!(all["Txs"]["Failed Requests"].as_u64(), Some(0), "{all}");
    let mut total = 0;
    for i in 0..10 {
        let a = get_int(srv.port, &format!("{{ht:{i}}}a"));
        let b = get_int(srv.port, &format!("{{ht:{i}}}b"));
        assert_eq!(a, b, "key {i}: both INCRs of a request use the same key");
        total += a;
    }
    assert_eq!(total, 200);
}

#[test]
fn execabort_counts_every_error_reply_and_the_request_once() {
    let srv = server_under_test();
    // Replies: +OK, -ERR unknown command, -EXECABORT.
    let all = run_template(
        srv.port,
        "MULTI ; FOO __key__ ; EXEC",
        &["-c", "1", "-n", "25"],
    );
    assert_eq!(all["Txs"]["Count"].as_u64(), Some(25), "{} {all}", srv.kind);
    assert_eq!(all["Txs"]["Failed Requests"].as_u64(), Some(25), "{all}");
    assert_eq!(errors(&all, "error_replies"), 50, "{all}");
    let samples = all["Errors"]["samples"].to_string();
    assert!(samples.contains("EXECABORT"), "{samples}");
}

#[test]
fn exec_answering_nil_counts_as_aborted() {
    let srv = server_under_test();
    // The request changes the key it WATCHes, so its EXEC answers nil.
    let all = run_template(
        srv.port,
        "WATCH __key__ ; SET __key__ x ; MULTI ; SET __key__ y ; EXEC",
        &[
            "-c",
            "2",
            "-n",
            "20",
            "--pipeline",
            "2",
            "--key-prefix",
            "w:",
        ],
    );
    assert_eq!(
        all["Watch..."]["Count"].as_u64(),
        Some(40),
        "{} {all}",
        srv.kind
    );
    assert_eq!(all["Watch..."]["Failed Requests"].as_u64(), Some(40));
    assert_eq!(errors(&all, "aborted"), 40, "{all}");
    assert_eq!(errors(&all, "error_replies"), 0, "{all}");
}

#[test]
fn errors_inside_the_exec_array_count() {
    let srv = server_under_test();
    // INCR of a non-number fails inside EXEC, which itself answers an array.
    let all = run_template(
        srv.port,
        "SET __key__ abc ; MULTI ; INCR __key__ ; EXEC",
        &["-c", "1", "-n", "30", "--key-prefix", "ne:"],
    );
    assert_eq!(
        all["Set..."]["Count"].as_u64(),
        Some(30),
        "{} {all}",
        srv.kind
    );
    assert_eq!(all["Set..."]["Failed Requests"].as_u64(), Some(30));
    assert_eq!(errors(&all, "error_replies"), 30, "{all}");
    assert_eq!(errors(&all, "aborted"), 0, "{all}");
}

#[test]
fn single_commands_report_no_failed_requests() {
    let srv = server_under_test();
    let all = run_template(
        srv.port,
        "INCR __key__",
        &[
            "-c",
            "1",
            "-n",
            "40",
            "--key-prefix",
            "one:",
            "--key-maximum",
            "4",
        ],
    );
    assert_eq!(
        all["Incrs"]["Count"].as_u64(),
        Some(40),
        "{} {all}",
        srv.kind
    );
    assert_eq!(all["Incrs"]["Failed Requests"].as_u64(), Some(0));
    let total: u64 = (0..5).map(|i| get_int(srv.port, &format!("one:{i}"))).sum();
    assert_eq!(total, 40);
}
