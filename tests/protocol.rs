//! RESP2/RESP3 wire behaviour: multibulk and inline requests, HELLO,
//! protocol errors with Redis's exact text, partial frames, limits.
//! Expected bytes were taken from redis-server 7.0.15.

mod common;

use std::io::Write;
use std::time::Duration;

use common::{info_field, wait_until, Raw, Reply, Server};

#[test]
fn multibulk_set_get() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    raw.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    raw.expect_bytes(b"+OK\r\n$5\r\nhello\r\n");
    // Binary-safe payload with CRLF inside.
    raw.send_cmd(&[b"SET", b"bin", b"a\r\nb\0c"]);
    assert_eq!(raw.read(), Some(Reply::ok()));
    raw.send_cmd(&[b"GET", b"bin"]);
    raw.expect_bytes(b"$6\r\na\r\nb\0c\r\n");
    // Missing key is a null bulk in RESP2.
    raw.send_cmd(&[b"GET", b"missing"]);
    raw.expect_bytes(b"$-1\r\n");
    // `*0` and `*-1` are skipped silently.
    raw.send(b"*0\r\n*-1\r\nPING\r\n");
    raw.expect_bytes(b"+PONG\r\n");
}

#[test]
fn inline_commands_like_telnet() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    raw.send(b"SET a b\r\nGET a\r\n");
    raw.expect_bytes(b"+OK\r\n$1\r\nb\r\n");
    raw.send(b"SET k \"a b\"\r\nGET k\r\n");
    raw.expect_bytes(b"+OK\r\n$3\r\na b\r\n");
    raw.send(b"SET k 'x y'\r\nGET k\r\n");
    raw.expect_bytes(b"+OK\r\n$3\r\nx y\r\n");
    // Escapes inside double quotes.
    raw.send(b"SET k \"a\\nb\\x41\"\r\nGET k\r\n");
    raw.expect_bytes(b"+OK\r\n$4\r\na\nbA\r\n");
    // A bare \n ends an inline line too; empty lines are ignored.
    raw.send(b"\r\n\r\nPING\n");
    raw.expect_bytes(b"+PONG\r\n");
    // Mixed inline and multibulk in one write.
    raw.send(b"ECHO hi\r\n*2\r\n$4\r\nECHO\r\n$2\r\nyo\r\n");
    raw.expect_bytes(b"$2\r\nhi\r\n$2\r\nyo\r\n");
}

#[test]
fn unknown_command_and_wrong_arity() {
    let server = Server::start(1, &[]);
    let mut raw = server.raw();
    raw.send(b"foo a b\r\n");
    raw.expect_bytes(b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
    raw.send_cmd(&[b"foo"]);
    raw.expect_bytes(b"-ERR unknown command 'foo', with args beginning with: \r\n");
    // As Redis: arguments are listed while the list is under 128 bytes,
    // the last one cut to the room left (text from redis-server 7.0).
    let long = "x".repeat(100);
    raw.send_cmd(&[b"foo", long.as_bytes(), long.as_bytes(), b"never"]);
    let expected = format!(
        "-ERR unknown command 'foo', with args beginning with: '{long}' '{}' \r\n",
        &long[..128 - 103]
    );
    raw.expect_bytes(expected.as_bytes());
    raw.send(b"get\r\n");
    raw.expect_bytes(b"-ERR wrong number of arguments for 'get' command\r\n");
    raw.send_cmd(&[b"GET", b"a", b"b"]);
    raw.expect_bytes(b"-ERR wrong number of arguments for 'get' command\r\n");
    // The connection survives these errors.
    assert_eq!(raw.cmd(&["PING"]), Reply::Simple("PONG".into()));
}

#[test]
fn resp3_after_hello_3() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let id = raw.cmd(&["CLIENT", "ID"]).int();
    raw.send(b"HELLO 3\r\n");
    let expected = format!(
        "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:{id}\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
    );
    raw.expect_bytes(expected.as_bytes());
    // Nulls are `_`.
    raw.send(b"GET nokey\r\n");
    raw.expect_bytes(b"_\r\n");
    raw.send(b"MGET nokey nokey2\r\n");
    raw.expect_bytes(b"*2\r\n_\r\n_\r\n");
    // CONFIG GET is a map.
    raw.send(b"CONFIG GET hz\r\n");
    raw.expect_bytes(b"%1\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    // INCRBYFLOAT stays a bulk string in RESP3 (as in Redis 7.0).
    raw.send(b"INCRBYFLOAT f 1.5\r\n");
    raw.expect_bytes(b"$3\r\n1.5\r\n");
    // INFO and CLIENT LIST are verbatim strings.
    match raw.cmd(&["INFO", "server"]) {
        Reply::Verbatim(text) => {
            assert!(text.starts_with("# Server\r\n"), "{text}");
            assert_eq!(
                info_field(&text, "redis_version").as_deref(),
                Some("7.0.15")
            );
        }
        other => panic!("INFO in RESP3 should be verbatim: {other:?}"),
    }
    raw.send(b"CLIENT LIST\r\n");
    match raw.read() {
        Some(Reply::Verbatim(text)) => {
            assert!(text.contains(&format!("id={id} ")), "{text}");
            assert!(text.contains("resp=3"), "{text}");
        }
        other => panic!("CLIENT LIST in RESP3 should be verbatim: {other:?}"),
    }
    // The verbatim header is `=<len>\r\ntxt:` (the harness strips `txt:`).
    raw.send(b"CLIENT INFO\r\n");
    match raw.read().unwrap() {
        Reply::Verbatim(text) => assert!(text.starts_with(&format!("id={id} ")), "{text}"),
        other => panic!("CLIENT INFO in RESP3 should be verbatim: {other:?}"),
    }
    // Back to RESP2.
    raw.send(b"HELLO 2\r\n");
    match raw.read().unwrap() {
        Reply::Array(items) => {
            assert_eq!(items.len(), 14);
            assert_eq!(items[4], Reply::bulk("proto"));
            assert_eq!(items[5], Reply::Int(2));
        }
        other => panic!("HELLO 2 should be a flat array: {other:?}"),
    }
    raw.send(b"GET nokey\r\n");
    raw.expect_bytes(b"$-1\r\n");
    raw.send(b"CONFIG GET hz\r\n");
    raw.expect_bytes(b"*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
}

#[test]
fn hello_errors() {
    let server = Server::start(1, &[]);
    let mut raw = server.raw();
    raw.send(b"HELLO 4\r\n");
    raw.expect_bytes(b"-NOPROTO unsupported protocol version\r\n");
    raw.send(b"HELLO abc\r\n");
    raw.expect_bytes(b"-ERR Protocol version is not an integer or out of range\r\n");
    raw.send(b"HELLO 3 foo\r\n");
    raw.expect_bytes(b"-ERR Syntax error in HELLO option 'foo'\r\n");
    raw.send(b"HELLO 3 SETNAME \"a b\"\r\n");
    raw.expect_bytes(
        b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n",
    );
    // None of the failed HELLOs switched the protocol.
    raw.send(b"GET nokey\r\n");
    raw.expect_bytes(b"$-1\r\n");
    // HELLO 3 SETNAME sets the name.
    let _ = raw.cmd(&["HELLO", "3", "SETNAME", "myname"]);
    assert_eq!(raw.cmd(&["CLIENT", "GETNAME"]), Reply::bulk("myname"));
}

/// Sends `bytes` on a fresh connection and expects exactly `reply` followed
/// by the server closing the connection.
fn expect_error_then_close(server: &Server, bytes: &[u8], reply: &str) {
    let mut raw = server.raw();
    raw.send(bytes);
    assert_eq!(
        raw.read(),
        Some(Reply::Error(reply.into())),
        "for {:?}",
        String::from_utf8_lossy(bytes)
    );
    assert!(raw.closed(), "connection should be closed after {reply}");
}

#[test]
fn a_command_may_carry_more_than_a_million_arguments() {
    // Redis 7 accepts multibulk counts up to INT_MAX.
    let server = Server::start(1, &[]);
    let mut raw = server.raw();
    let keys = 1_048_577;
    let mut request = format!("*{}\r\n$3\r\nDEL\r\n", keys + 1).into_bytes();
    for _ in 0..keys {
        request.extend_from_slice(b"$1\r\nk\r\n");
    }
    raw.send(&request);
    raw.expect_bytes(b":0\r\n");
    expect_error_then_close(
        &server,
        b"*2147483648\r\n",
        "ERR Protocol error: invalid multibulk length",
    );
}

#[test]
fn protocol_errors_close_the_connection() {
    let server = Server::start(2, &[]);
    expect_error_then_close(
        &server,
        b"*abc\r\n",
        "ERR Protocol error: invalid multibulk length",
    );
    expect_error_then_close(
        &server,
        b"*1\r\nfoo\r\n",
        "ERR Protocol error: expected '$', got 'f'",
    );
    expect_error_then_close(
        &server,
        b"*1\r\n$-5\r\n",
        "ERR Protocol error: invalid bulk length",
    );
    expect_error_then_close(
        &server,
        b"*1\r\n$x\r\n",
        "ERR Protocol error: invalid bulk length",
    );
    expect_error_then_close(
        &server,
        b"SET k \"a b\r\n",
        "ERR Protocol error: unbalanced quotes in request",
    );
    expect_error_then_close(
        &server,
        b"SET k \"a\"b\r\n",
        "ERR Protocol error: unbalanced quotes in request",
    );
    // Commands before the bad frame are answered first.
    let mut raw = server.raw();
    raw.send(b"PING\r\nSET x 1\r\n*1\r\nfoo\r\n");
    raw.expect_bytes(b"+PONG\r\n+OK\r\n-ERR Protocol error: expected '$', got 'f'\r\n");
    assert!(raw.closed());
    // And the server is fine for new connections.
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["GET", "x"]), Reply::bulk("1"));
}

#[test]
fn half_sent_frames_complete_later() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let frame = b"*3\r\n$3\r\nSET\r\n$4\r\nslow\r\n$5\r\nvalue\r\n";
    for b in frame {
        raw.send(&[*b]);
        std::thread::sleep(Duration::from_millis(2));
    }
    raw.expect_bytes(b"+OK\r\n");
    // Inline, byte by byte.
    for b in b"GET slow\r\n" {
        raw.send(&[*b]);
        std::thread::sleep(Duration::from_millis(2));
    }
    raw.expect_bytes(b"$5\r\nvalue\r\n");
    // Split at awkward places: between \r and \n, inside a length, in the payload.
    let frame = b"*2\r\n$3\r\nGET\r\n$4\r\nslow\r\n";
    for cut in [3, 4, 9, 15, frame.len() - 1] {
        raw.send(&frame[..cut]);
        std::thread::sleep(Duration::from_millis(20));
        raw.send(&frame[cut..]);
        raw.expect_bytes(b"$5\r\nvalue\r\n");
    }
    // Two commands where the second is split across writes.
    raw.send(b"PING\r\n*1\r\n$4\r\nPI");
    raw.expect_bytes(b"+PONG\r\n");
    std::thread::sleep(Duration::from_millis(30));
    raw.send(b"NG\r\n");
    raw.expect_bytes(b"+PONG\r\n");
}

#[test]
fn bulk_bigger_than_proto_max_bulk_len() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "1mb"]),
        Reply::ok()
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "proto-max-bulk-len"]),
        Reply::Array(vec![
            Reply::bulk("proto-max-bulk-len"),
            Reply::bulk("1048576")
        ])
    );
    // Applies to the connection that changed it, as in Redis.
    raw.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n");
    assert_eq!(
        raw.read(),
        Some(Reply::err("ERR Protocol error: invalid bulk length"))
    );
    assert!(raw.closed());
    // And to new connections.
    expect_error_then_close(
        &server,
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n",
        "ERR Protocol error: invalid bulk length",
    );
    // At the limit is fine.
    let mut raw = server.raw();
    let value = vec![b'v'; 1024 * 1024];
    raw.send_cmd(&[b"SET", b"k", &value]);
    assert_eq!(raw.read(), Some(Reply::ok()));
    assert_eq!(raw.cmd(&["STRLEN", "k"]), Reply::Int(1024 * 1024));
    // Too small a limit is refused with Redis's text.
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "100"]),
        Reply::err("ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive")
    );
}

#[test]
fn garbage_then_fresh_connection_works() {
    let server = Server::start(2, &[]);
    for garbage in [
        &b"\x00\x01\x02\xff\xfe*$$$\r\n"[..],
        b"*-99999999999999999999\r\n",
        b"$5\r\nhello\r\n",
        b"*2\r\n$3\r\nGET\r\n:1\r\n",
    ] {
        let mut raw = server.raw();
        raw.send_lossy(garbage);
        // Whatever it answers, it must not hang forever or crash.
        raw.set_read_timeout(Duration::from_millis(300));
        while raw.read().is_some() {}
    }
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["SET", "after", "garbage"]), Reply::ok());
    assert_eq!(raw.cmd(&["GET", "after"]), Reply::bulk("garbage"));
}

#[test]
fn thousand_connections_churn_while_a_client_works() {
    let mut server = Server::start(2, &[]);
    let port = server.port;
    let churn = std::thread::spawn(move || {
        for i in 0..1000 {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
            match i % 4 {
                0 => {}
                1 => {
                    let _ = s.write_all(b"*3\r\n$3\r\nSET\r\n$4\r\npart");
                }
                2 => {
                    let _ = s.write_all(b"SET half \"open");
                }
                _ => {
                    let mut raw = Raw::connect(port);
                    assert_eq!(raw.cmd(&["PING"]), Reply::Simple("PONG".into()));
                }
            }
            drop(s);
        }
    });
    let mut raw = server.raw();
    let mut n = 0u64;
    while !churn.is_finished() || n < 100 {
        let key = format!("counter{}", n % 7);
        let value = n.to_string();
        assert_eq!(raw.cmd(&["SET", &key, &value]), Reply::ok());
        assert_eq!(raw.cmd(&["GET", &key]), Reply::bulk(&value));
        n += 1;
    }
    churn.join().unwrap();
    assert!(server.alive());
    assert_eq!(raw.cmd(&["EXISTS", "part", "half"]), Reply::Int(0));
    // All churned connections go away.
    let mut clients = None;
    let gone = wait_until(Duration::from_secs(5), || {
        let info = raw.cmd(&["INFO", "clients"]).text();
        clients = info_field(&info, "connected_clients");
        clients.as_deref() == Some("1")
    });
    let list = raw.cmd(&["CLIENT", "LIST"]).text();
    assert!(gone, "connected_clients:{clients:?}\n{list}");
}

#[test]
fn maxclients_rejects_extra_connections() {
    let server = Server::start(2, &[]);
    let mut admin = server.raw();
    // The harness's startup probe may still be counted for a moment.
    assert!(wait_until(Duration::from_secs(5), || {
        let info = admin.cmd(&["INFO", "clients"]).text();
        info_field(&info, "connected_clients").as_deref() == Some("1")
    }));
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "maxclients", "5"]),
        Reply::ok()
    );
    let mut conns: Vec<Raw> = (0..10).map(|_| server.raw()).collect();
    let (mut accepted, mut rejected) = (0, 0);
    for c in conns.iter_mut() {
        c.send_lossy(b"PING\r\n");
        match c.read() {
            Some(Reply::Simple(s)) if s == "PONG" => accepted += 1,
            Some(Reply::Error(e)) => {
                assert_eq!(e, "ERR max number of clients reached");
                assert!(c.closed());
                rejected += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(accepted, 4, "admin + 4 = maxclients 5");
    assert_eq!(rejected, 6);
    let info = admin.cmd(&["INFO", "stats"]).text();
    assert_eq!(
        info_field(&info, "rejected_connections").as_deref(),
        Some("6")
    );
    // Raising the limit lets new clients in again.
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "maxclients", "100"]),
        Reply::ok()
    );
    let mut late = server.raw();
    assert_eq!(late.cmd(&["PING"]), Reply::Simple("PONG".into()));
}

#[test]
fn query_buffer_limit_closes_the_client() {
    let server = Server::start(2, &[]);
    let mut admin = server.raw();
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "1mb"]),
        Reply::ok()
    );
    assert_eq!(
        admin.cmd(&["CONFIG", "GET", "client-query-buffer-limit"]),
        Reply::Array(vec![
            Reply::bulk("client-query-buffer-limit"),
            Reply::bulk("1048576")
        ])
    );
    // A 2 MB inline line that never ends.
    let mut raw = server.raw();
    let mut line = b"SET k ".to_vec();
    line.extend(std::iter::repeat_n(b'x', 2_000_000));
    raw.send_lossy(&line);
    while let Some(reply) = raw.read() {
        assert!(matches!(reply, Reply::Error(_)), "{reply:?}");
    }
    // A bulk declared bigger than the limit, never finished.
    let mut raw = server.raw();
    let mut frame = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n".to_vec();
    frame.extend(std::iter::repeat_n(b'x', 2_000_000));
    raw.send_lossy(&frame);
    assert!(raw.closed(), "client over the query buffer limit is closed");
    // Others are still served.
    assert_eq!(admin.cmd(&["PING"]), Reply::Simple("PONG".into()));
    assert_eq!(admin.cmd(&["EXISTS", "k"]), Reply::Int(0));
    let mut fresh = server.raw();
    assert_eq!(fresh.cmd(&["SET", "k", "ok"]), Reply::ok());
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "100"]),
        Reply::err("ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - argument must be between 1048576 and 9223372036854775807 inclusive")
    );
}

#[test]
fn pipelined_mixed_protocol_in_order() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let mut buf = Vec::new();
    for i in 0..200 {
        if i % 2 == 0 {
            buf.extend_from_slice(format!("SET key{i} v{i}\r\n").as_bytes());
        } else {
            buf.extend(common::encode_cmd(&[
                b"SET",
                format!("key{i}").as_bytes(),
                format!("v{i}").as_bytes(),
            ]));
        }
        buf.extend_from_slice(format!("GET key{i}\r\n").as_bytes());
    }
    raw.send(&buf);
    for i in 0..200 {
        assert_eq!(raw.read(), Some(Reply::ok()));
        assert_eq!(raw.read(), Some(Reply::bulk(&format!("v{i}"))));
    }
}
