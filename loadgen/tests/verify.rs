//! `--verify` against a correct server and against a tiny fake RESP server
//! that ignores expiry (so it returns stale values).

mod common;
use common::*;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Store = Arc<Mutex<HashMap<Vec<u8>, Vec<u8>>>>;

fn read_command(r: &mut BufReader<TcpStream>) -> Option<Vec<Vec<u8>>> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let n: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::with_capacity(n);
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut buf = vec![0; len + 2];
        r.read_exact(&mut buf).ok()?;
        buf.truncate(len);
        args.push(buf);
    }
    Some(args)
}

fn serve(stream: TcpStream, store: Store) {
    let mut w = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    while let Some(args) = read_command(&mut r) {
        let cmd = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
        let reply: Vec<u8> = match cmd.as_str() {
            "PING" => b"+PONG\r\n".to_vec(),
            // The bug under test: SET ignores EX/PX/PXAT, so values outlive their deadline.
            "SET" => {
                store
                    .lock()
                    .unwrap()
                    .insert(args[1].clone(), args[2].clone());
                b"+OK\r\n".to_vec()
            }
            "GET" => match store.lock().unwrap().get(&args[1]) {
                Some(v) => {
                    let mut out = format!("${}\r\n", v.len()).into_bytes();
                    out.extend_from_slice(v);
                    out.extend_from_slice(b"\r\n");
                    out
                }
                None => b"$-1\r\n".to_vec(),
            },
            "INFO" => {
                let body = "# Keyspace\r\n";
                format!("${}\r\n{body}\r\n", body.len()).into_bytes()
            }
            _ => b"-ERR unknown command\r\n".to_vec(),
        };
        if w.write_all(&reply).is_err() {
            return;
        }
    }
}

/// Starts the fake server; returns its port.
fn fake_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let store: Store = Arc::default();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let st = store.clone();
            std::thread::spawn(move || serve(s, st));
        }
    });
    port
}

fn verify_args(port: &str) -> Vec<String> {
    [
        "-s",
        "127.0.0.1",
        "-p",
        port,
        "-t",
        "1",
        "-c",
        "2",
        "--test-time",
        "2.5",
        "--rate-limiting",
        "200",
        "--ratio",
        "1:2",
        "--key-maximum",
        "40",
        "--expiry-range",
        "1-1",
        "--verify",
        "--hide-histogram",
        "-q",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn verify_catches_stale_values_from_a_wrong_server() {
    let port = fake_server().to_string();
    let args = verify_args(&port);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run_loadgen(&args, Duration::from_secs(40));
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(all.contains("VERIFY:"), "{all}");
    assert!(all.contains("Stale memtier-"), "{all}");
    assert!(all.contains("after the key's deadline"), "{all}");
    assert!(!all.contains("panicked"), "{all}");
}

#[test]
fn verify_passes_on_a_correct_server() {
    let srv = server_under_test();
    let port = srv.port.to_string();
    let args = verify_args(&port);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run_loadgen(&args, Duration::from_secs(40));
    let all = text(&o);
    assert_eq!(o.status.code(), Some(0), "{all} ({})", srv.kind);
    assert!(all.contains("0 violations"), "{all}");
}

#[test]
fn storm_verify_catches_values_after_the_instant() {
    // The fake server ignores PXAT: every volatile key outlives the instant.
    let port = fake_server().to_string();
    let dir = tmpdir("storm-fake");
    let o = run_loadgen(
        &[
            "storm",
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "--keys",
            "2000",
            "--pre",
            "0.5",
            "--post",
            "0.5",
            "--cap",
            "1.5",
            "--rate",
            "500",
            "-c",
            "2",
            "--bg-keys",
            "100",
            "--verify",
            "--out-dir",
            dir.to_str().unwrap(),
        ],
        Duration::from_secs(40),
    );
    let all = text(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(all.contains("Stale storm:vol:"), "{all}");
}
