//! A client that pipelines a lot does not keep the others waiting: each pass
//! of a shard's loop runs a bounded stretch of one connection's commands,
//! serves everyone else, and comes back for the rest.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{wait_until, Server};

#[test]
fn a_bulk_loader_shares_the_shard_with_an_interactive_client() {
    let server = Server::start(1, &[]);
    let n = 200_000;
    let mut batch = Vec::new();
    for i in 0..n {
        let key = format!("bulk:{i}");
        batch.extend_from_slice(
            format!("*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n$1\r\nv\r\n", key.len()).as_bytes(),
        );
    }
    let mut loader = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let mut replies = loader.try_clone().unwrap();
    // Read the loader's replies (5 bytes each) as they come, so the server
    // never waits to write them.
    let reader = std::thread::spawn(move || {
        let mut left = n * 5;
        let mut buf = vec![0u8; 64 * 1024];
        while left > 0 {
            let got = replies.read(&mut buf).unwrap();
            assert!(got > 0, "the server closed the loader");
            left -= got;
        }
    });
    let writer = std::thread::spawn(move || loader.write_all(&batch).unwrap());

    // Meanwhile another client asks how far the load got, again and again:
    // how many keys the shard stored between two of its answers.
    let mut raw = server.raw();
    assert!(wait_until(Duration::from_secs(30), || raw.int(&["DBSIZE"]) > 0));
    let mut steps = Vec::new();
    let mut last = raw.int(&["DBSIZE"]);
    while last < n as i64 {
        let keys = raw.int(&["DBSIZE"]);
        steps.push(keys - last);
        last = keys;
    }
    writer.join().unwrap();
    reader.join().unwrap();
    steps.sort_unstable();
    let median = steps[steps.len() / 2];
    // A turn runs at most 256 commands, so a few turns pass between two
    // answers; a server that ran all the loader's buffered commands (a 64
    // KiB read holds some 2,000) before answering anyone else stored
    // thousands between two answers, and up to 100,000.
    assert!(
        median < 1_500,
        "{} answers, median step {median}",
        steps.len()
    );
}
