//! Ctrl-C and the embedded server.

mod common;
use common::*;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_prints_the_partial_report() {
    let srv = server_under_test();
    let port = srv.port.to_string();
    let mut child = Command::new(loadgen_bin())
        .args([
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "-c",
            "2",
            "--test-time",
            "30",
            "--rate-limiting",
            "500",
            "--hide-histogram",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("loadgen did not stop after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{out}");
    assert!(
        out.contains("ALL STATS") && out.contains("interrupted"),
        "{out}"
    );
}

/// A stand-in for ember: a script that runs redis-server with ember's flags.
fn fake_ember(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("ember");
    std::fs::write(
        &p,
        "#!/bin/sh\n# ember --port N --bind ADDR --shards N\nwhile [ $# -gt 0 ]; do case $1 in --port) P=$2; shift;; --bind) B=$2; shift;; esac; shift; done\nexec redis-server --port \"$P\" --bind \"$B\" --save '' --appendonly no\n",
    )
    .unwrap();
    let _ = Command::new("chmod")
        .args(["+x", p.to_str().unwrap()])
        .status();
    p
}

#[test]
fn embedded_server_is_started_and_stopped() {
    // Needs redis-server to impersonate ember (the real ember is covered by the other tests once built).
    assert!(
        Command::new("redis-server")
            .arg("--version")
            .output()
            .is_ok(),
        "redis-server is required for this test"
    );
    let dir = tmpdir("embedded");
    let bin = fake_ember(&dir);
    let json = dir.join("out.json");
    let o = Command::new(loadgen_bin())
        .args([
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--hide-histogram",
            "-q",
            "--ember-bin",
            bin.to_str().unwrap(),
        ])
        .args(["--json-out-file", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("started embedded ember"), "{err}");
    let v = read_json(&json);
    assert_eq!(v["ALL STATS"]["Totals"]["Count"].as_u64(), Some(200));
    // The child is gone: its port no longer answers.
    let server = v["configuration"]["server"].as_str().unwrap().to_string();
    let port: u16 = server.rsplit(':').next().unwrap().parse().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        raw_cmd(port, "PING").is_none(),
        "embedded server still running on {port}"
    );
}

#[test]
fn missing_ember_binary_is_a_clear_error() {
    let o = Command::new(loadgen_bin())
        .args(["-n", "1", "--ember-bin", "/nonexistent/ember"])
        .output()
        .unwrap();
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(all.contains("/nonexistent/ember"), "{all}");
    assert!(!all.contains("panicked"), "{all}");
}
