mod common;

use common::{Reply, Server};

#[test]
fn ping_set_get_over_two_shards() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["PING"]), Reply::Simple("PONG".into()));
    assert_eq!(raw.cmd(&["SET", "k", "v"]), Reply::Simple("OK".into()));
    assert_eq!(raw.cmd(&["GET", "k"]), Reply::bulk("v"));
    let mut client = server.client();
    let v: String = redis::cmd("GET").arg("k").query(&mut client).unwrap();
    assert_eq!(v, "v");
}

/// A second server on a port in use must fail to start, as Redis does,
/// instead of joining the first one's SO_REUSEPORT group and taking a share
/// of its connections.
#[test]
fn a_second_server_on_the_same_port_refuses_to_start() {
    let server = Server::start(2, &[]);
    let mut second = std::process::Command::new(env!("CARGO_BIN_EXE_ember"))
        .args(["--port", &server.port.to_string(), "--shards", "2"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn ember");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while second.try_wait().expect("second ember").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = second.kill();
            panic!("a second ember started on port {}", server.port);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = second.wait_with_output().expect("second ember");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ddress already in use"), "{stderr}");
    // The first one still answers every new connection.
    for _ in 0..20 {
        assert_eq!(server.raw().cmd(&["PING"]), Reply::Simple("PONG".into()));
    }
}

/// Any parameter can be given on the command line, as redis-server takes it.
#[test]
fn parameters_are_taken_from_the_command_line() {
    let server = Server::start(1, &["--latency-monitor-threshold", "7", "--save", ""]);
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "latency-monitor-threshold"]),
        Reply::Array(vec![
            Reply::bulk("latency-monitor-threshold"),
            Reply::bulk("7")
        ])
    );
}
