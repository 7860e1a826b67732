//! The latency monitor: `latency-monitor-threshold` and LATENCY LATEST,
//! HISTORY, RESET, DOCTOR, HELP. Replies and errors as redis-server 7.0.15
//! gives them; `event-loop` and `off-cpu` are ember's own events.

mod common;

use std::time::Duration;

use common::{args, unix_ms, wait_until, Reply, Server};

/// The events LATENCY LATEST lists, with (time, latest ms, max ms).
fn latest(raw: &mut common::Raw) -> Vec<(String, i64, i64, i64)> {
    raw.cmd(&["LATENCY", "LATEST"])
        .items()
        .into_iter()
        .map(|e| {
            let f = e.items();
            (f[0].text(), f[1].int(), f[2].int(), f[3].int())
        })
        .collect()
}

fn names(events: &[(String, i64, i64, i64)]) -> Vec<&str> {
    events.iter().map(|e| e.0.as_str()).collect()
}

#[test]
fn nothing_is_logged_until_a_threshold_is_set() {
    let server = Server::start(2, &["--enable-debug-command", "local"]);
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "latency-monitor-threshold"]),
        Reply::Array(vec![
            Reply::bulk("latency-monitor-threshold"),
            Reply::bulk("0")
        ])
    );
    assert_eq!(raw.cmd(&["DEBUG", "SLEEP", "0.03"]), Reply::ok());
    assert!(latest(&mut raw).is_empty());
    assert!(raw
        .cmd(&["LATENCY", "DOCTOR"])
        .text()
        .contains("CONFIG SET latency-monitor-threshold"));
}

#[test]
fn a_slow_command_is_logged_with_its_pass_and_time_off_the_cpu() {
    let server = Server::start(2, &["--enable-debug-command", "local"]);
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "20"]),
        Reply::ok()
    );
    let before_s = (unix_ms() / 1000) as i64;
    assert_eq!(raw.cmd(&["DEBUG", "SLEEP", "0.05"]), Reply::ok());
    let events = latest(&mut raw);
    // DEBUG SLEEP is a slow command; its pass of the loop took as long, and
    // the thread slept through it, off its CPU.
    assert_eq!(names(&events), vec!["command", "event-loop", "off-cpu"]);
    for (name, time, last, max) in &events {
        assert!((before_s..=before_s + 2).contains(time), "{name} at {time}");
        assert!((50..5_000).contains(last), "{name} took {last} ms");
        assert_eq!(last, max, "{name}");
    }
    // Fast commands are not slow enough to be logged.
    for _ in 0..100 {
        raw.cmd(&["SET", "k", "v"]);
    }
    assert!(!names(&latest(&mut raw)).contains(&"fast-command"));

    // One sample per second: a second sleep in a later second adds one.
    std::thread::sleep(Duration::from_millis(1_100));
    assert_eq!(raw.cmd(&["DEBUG", "SLEEP", "0.03"]), Reply::ok());
    let history = raw.cmd(&["LATENCY", "HISTORY", "command"]).items();
    assert_eq!(history.len(), 2, "{history:?}");
    let pair = |r: &Reply| {
        let f = r.items();
        (f[0].int(), f[1].int())
    };
    let (t0, ms0) = pair(&history[0]);
    let (t1, ms1) = pair(&history[1]);
    assert!(
        t1 > t0 && ms0 >= 50 && (30..ms0).contains(&ms1),
        "{history:?}"
    );
    let command = latest(&mut raw)
        .into_iter()
        .find(|e| e.0 == "command")
        .unwrap();
    assert_eq!(
        (command.2, command.3),
        (ms1, ms0),
        "latest and all-time max"
    );
    assert_eq!(
        raw.cmd(&["LATENCY", "HISTORY", "nosuch"]),
        Reply::Array(vec![])
    );

    let report = raw.cmd(&["LATENCY", "DOCTOR"]).text();
    assert!(report.contains("spikes of 20 ms or more"), "{report}");
    assert!(report.contains(". command: 2 spikes"), "{report}");
    assert!(report.contains("- off-cpu: "), "{report}");

    assert_eq!(
        raw.cmd(&["LATENCY", "RESET", "command", "nosuch"]),
        Reply::Int(1)
    );
    assert_eq!(raw.cmd(&["LATENCY", "RESET", "command"]), Reply::Int(0));
    assert_eq!(raw.cmd(&["LATENCY", "RESET"]), Reply::Int(2));
    assert!(latest(&mut raw).is_empty());
}

#[test]
fn long_expiry_slices_are_logged_as_expire_cycle() {
    let server = Server::start(1, &[]);
    let mut raw = server.raw();
    // Slices as long as a whole cycle's budget (25 ms at hz 10), and a
    // threshold of 1 ms.
    assert_eq!(
        raw.cmd(&[
            "CONFIG",
            "SET",
            "active-expire-slice-us",
            "1000000",
            "latency-monitor-threshold",
            "1"
        ]),
        Reply::ok()
    );
    let n = 100_000;
    let load: Vec<Vec<Vec<u8>>> = (0..n)
        .map(|i| args(&["SET", &format!("k{i}"), "v", "PX", "50"]))
        .collect();
    for chunk in load.chunks(10_000) {
        raw.pipeline(chunk);
    }
    assert!(
        wait_until(Duration::from_secs(30), || raw.int(&["DBSIZE"]) == 0),
        "the sweep reclaims the keys"
    );
    let events = latest(&mut raw);
    let cycle = events.iter().find(|e| e.0 == "expire-cycle");
    assert!(cycle.is_some_and(|c| c.3 >= 1), "{events:?}");
}

#[test]
fn errors_are_redis_errors() {
    let server = Server::start(1, &[]);
    let mut raw = server.raw();
    for (cmd, reply) in [
        (
            vec!["LATENCY"],
            "ERR wrong number of arguments for 'latency' command",
        ),
        (
            vec!["LATENCY", "LATEST", "x"],
            "ERR wrong number of arguments for 'latency|latest' command",
        ),
        (
            vec!["LATENCY", "HISTORY"],
            "ERR wrong number of arguments for 'latency|history' command",
        ),
        (
            vec!["LATENCY", "HISTORY", "a", "b"],
            "ERR wrong number of arguments for 'latency|history' command",
        ),
        (
            vec!["LATENCY", "DOCTOR", "x"],
            "ERR wrong number of arguments for 'latency|doctor' command",
        ),
        (
            vec!["LATENCY", "nosuch"],
            "ERR unknown subcommand 'nosuch'. Try LATENCY HELP.",
        ),
        (
            vec!["LATENCY", "GRAPH", "a", "b"],
            "ERR wrong number of arguments for 'latency|graph' command",
        ),
    ] {
        assert_eq!(raw.cmd(&cmd), Reply::Error(reply.into()), "{cmd:?}");
    }
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "-1"]),
        Reply::Error(
            "ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument must be between 0 and 9223372036854775807 inclusive".into()
        )
    );
    let help = raw.cmd(&["LATENCY", "HELP"]).items();
    assert!(help[0].text().starts_with("LATENCY <subcommand>"));
    // The connection is still usable.
    assert_eq!(raw.cmd(&["PING"]), Reply::Simple("PONG".into()));
}

/// One LATENCY HISTOGRAM entry: name, calls, and (bucket µs, calls at or below).
type Entry = (String, i64, Vec<(i64, i64)>);

fn histograms(raw: &mut common::Raw, names: &[&str]) -> Vec<Entry> {
    let mut words = vec!["LATENCY", "HISTOGRAM"];
    words.extend_from_slice(names);
    let flat = raw.cmd(&words).items();
    flat.chunks(2)
        .map(|pair| {
            let fields = pair[1].items();
            assert_eq!(fields[0].text(), "calls");
            assert_eq!(fields[2].text(), "histogram_usec");
            let buckets = fields[3]
                .items()
                .chunks(2)
                .map(|b| (b[0].int(), b[1].int()))
                .collect();
            (pair[0].text(), fields[1].int(), buckets)
        })
        .collect()
}

/// Redis 7.0's bucket labels: the highest µs of each log-2 bucket of its
/// nanosecond histogram, from 1024 ns.
fn redis_label(k: u32) -> i64 {
    let ns = 1024u64 << k;
    ((ns + ns / 128 - 1) / 1000) as i64
}

#[test]
fn latency_histogram_counts_commands_and_subcommands_as_redis_does() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["CONFIG", "RESETSTAT"]), Reply::ok());
    let only_resetstat = histograms(&mut raw, &[]);
    assert_eq!(only_resetstat.len(), 1);
    assert_eq!(only_resetstat[0].0, "config|resetstat");
    for i in 0..50 {
        assert_eq!(raw.cmd(&["SET", &format!("k{i}"), "v"]), Reply::ok());
    }
    raw.cmd(&["CLIENT", "ID"]);
    raw.cmd(&["GET", "k1"]);
    let got = histograms(&mut raw, &["set", "client", "nosuch", "get"]);
    let names: Vec<&str> = got.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(names, ["set", "client|id", "get"]);
    assert_eq!((got[0].1, got[1].1, got[2].1), (50, 1, 1));
    let labels: Vec<i64> = (0..40).map(redis_label).collect();
    for (name, calls, buckets) in &got {
        assert!(!buckets.is_empty(), "{name}");
        assert_eq!(buckets.last().unwrap().1, *calls, "{name}: cumulative");
        for pair in buckets.windows(2) {
            assert!(
                pair[0].0 < pair[1].0 && pair[0].1 < pair[1].1,
                "{name}: {buckets:?}"
            );
        }
        for (label, _) in buckets {
            assert!(
                labels.contains(label),
                "{name}: {label} is not one of Redis's buckets"
            );
        }
    }
    assert_eq!(histograms(&mut raw, &["client|id"]).len(), 1);
    assert!(histograms(&mut raw, &["blabla"]).is_empty());
    let stats = raw.cmd(&["INFO", "commandstats"]).text();
    assert!(stats.contains("cmdstat_client|id:calls=1,"), "{stats}");
    assert!(
        stats.contains("cmdstat_config|resetstat:calls=1,"),
        "{stats}"
    );
}

#[test]
fn latencystats_shows_the_configured_percentiles() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    raw.cmd(&["SET", "a", "b"]);
    let set_line = |raw: &mut common::Raw| {
        let info = raw.cmd(&["INFO", "latencystats"]).text();
        info.lines()
            .find(|l| l.starts_with("latency_percentiles_usec_set:"))
            .map(str::to_string)
            .unwrap()
    };
    assert!(set_line(&mut raw).contains(":p50=") && set_line(&mut raw).contains(",p99.9="));
    let pcts = "latency-tracking-info-percentiles";
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", pcts, "0 50.0 99.99 100"]),
        Reply::ok()
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", pcts]),
        Reply::Array(vec![Reply::bulk(pcts), Reply::bulk("0 50 99.99 100")])
    );
    let line = set_line(&mut raw);
    let labels: Vec<&str> = line
        .split_once(':')
        .unwrap()
        .1
        .split(',')
        .map(|f| f.split('=').next().unwrap())
        .collect();
    assert_eq!(labels, ["p0", "p50", "p99.99", "p100"], "{line}");
    assert_eq!(raw.cmd(&["CONFIG", "SET", pcts, ""]), Reply::ok());
    assert_eq!(set_line(&mut raw), "latency_percentiles_usec_set:");
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", pcts, "101"]),
        Reply::Error("ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - latency-tracking-info-percentiles parameters should sit between [0.0,100.0]".into())
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", pcts, "abc"]),
        Reply::Error("ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - Invalid latency-tracking-info-percentiles parameters".into())
    );
}
