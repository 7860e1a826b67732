//! What a client's buffers may cost: `client-output-buffer-limit` for
//! normal clients, the query buffer limit, and the memory the process
//! really spends (its RSS, read from /proc) for pending replies and
//! unfinished requests, as CLIENT LIST and INFO report it.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use common::*;

const MB: usize = 1024 * 1024;

/// A field of `/proc/<pid>/status`, in bytes (`VmRSS`, `VmHWM`).
fn proc_status(pid: u32, field: &str) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    let kb: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// The CLIENT LIST line of the client at `addr`, if it is connected.
fn client_line(admin: &mut Raw, addr: &str) -> Option<String> {
    admin
        .cmd(&["CLIENT", "LIST"])
        .text()
        .lines()
        .find(|l| l.contains(&format!("addr={addr} ")))
        .map(str::to_string)
}

fn field(line: &str, name: &str) -> usize {
    line.split(' ')
        .find_map(|f| f.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("{name} in {line}"))
        .parse()
        .unwrap()
}

/// A client that sends and never reads: its replies pile up on the server
/// once the sockets' buffers are full.
fn non_reader(server: &Server) -> (TcpStream, String) {
    let stream = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let addr = stream.local_addr().unwrap().to_string();
    (stream, addr)
}

fn set_big(admin: &mut Raw, key: &str, len: usize) {
    let value = vec![b'v'; len];
    assert_eq!(
        admin.cmd_bytes(&[b"SET", key.as_bytes(), &value]),
        Reply::ok()
    );
}

fn gets(key: &str, n: usize) -> Vec<u8> {
    encode_cmd(&[b"GET", key.as_bytes()]).repeat(n)
}

#[test]
fn output_buffer_limit_is_configured_as_redis_takes_it() {
    let server = Server::start(
        2,
        &[
            "--client-output-buffer-limit",
            "normal 1mb 512kb 5 replica 128mb 32mb 30",
        ],
    );
    let mut admin = server.raw();
    let get = |admin: &mut Raw| admin.cmd(&["CONFIG", "GET", "client-output-buffer-limit"]);
    assert_eq!(
        get(&mut admin),
        bulks(&[
            "client-output-buffer-limit",
            "normal 1048576 524288 5 slave 134217728 33554432 30 pubsub 33554432 8388608 60"
        ])
    );
    assert_eq!(
        admin.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 0 0 0 pubsub 1k 2kb 3"
        ]),
        Reply::ok()
    );
    assert_eq!(
        get(&mut admin),
        bulks(&[
            "client-output-buffer-limit",
            "normal 0 0 0 slave 134217728 33554432 30 pubsub 1000 2048 3"
        ])
    );
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "client-output-buffer-limit", "normal 1mb"]),
        Reply::err(
            "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Wrong number of arguments in buffer limit configuration."
        )
    );
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "client-output-buffer-limit", "master 1 2 3"]),
        Reply::err(
            "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Invalid client class specified in buffer limit configuration."
        )
    );
    // Config file lines, one class each.
    let server = Server::start_with_config(
        1,
        "client-output-buffer-limit normal 2mb 1mb 10\nclient-output-buffer-limit pubsub 0 0 0\n",
    );
    assert_eq!(
        get(&mut server.raw()),
        bulks(&[
            "client-output-buffer-limit",
            "normal 2097152 1048576 10 slave 268435456 67108864 60 pubsub 0 0 0"
        ])
    );
}

#[test]
fn a_client_over_the_hard_limit_is_closed_and_others_are_served() {
    let server = Server::start(2, &[]);
    let mut admin = server.raw();
    set_big(&mut admin, "big", MB);
    assert_eq!(
        admin.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 8mb 0 0"
        ]),
        Reply::ok()
    );
    let (mut hog, addr) = non_reader(&server);
    // 64 MB of replies: the sockets' buffers take a few, the rest is over 8 MB.
    hog.write_all(&gets("big", 64)).unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || client_line(&mut admin, &addr)
            .is_none()),
        "the client over its hard limit is gone"
    );
    // Another client is served, the same value and all.
    let mut other = server.raw();
    assert_eq!(other.cmd(&["PING"]), simple("PONG"));
    assert_eq!(other.cmd(&["STRLEN", "big"]), int(MB as i64));
    drop(hog);
}

#[test]
fn a_client_over_the_soft_limit_for_longer_than_its_seconds_is_closed() {
    let server = Server::start(1, &[]);
    let mut admin = server.raw();
    set_big(&mut admin, "big", MB);
    assert_eq!(
        admin.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 0 4mb 1"
        ]),
        Reply::ok()
    );
    let (mut slow, addr) = non_reader(&server);
    slow.write_all(&gets("big", 32)).unwrap();
    // Over the soft limit: the clock starts, the client stays.
    assert!(wait_until(Duration::from_secs(10), || {
        client_line(&mut admin, &addr).is_some_and(|l| field(&l, "omem") >= 4 * MB)
    }));
    std::thread::sleep(Duration::from_millis(200));
    assert!(client_line(&mut admin, &addr).is_some(), "not yet closed");
    // More than a second later, still over it: the next reply closes it.
    std::thread::sleep(Duration::from_millis(2200));
    slow.write_all(&gets("big", 1)).unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || client_line(&mut admin, &addr)
            .is_none()),
        "over the soft limit for longer than 1 s: closed"
    );
}

#[test]
fn client_list_and_info_count_pending_output() {
    let server = Server::start(2, &[]);
    let mut admin = server.raw();
    set_big(&mut admin, "big", MB);
    let idle = admin.info_int("memory", "mem_clients_normal") as usize;
    let (mut reader, addr) = non_reader(&server);
    reader.write_all(&gets("big", 48)).unwrap();
    let mut line = String::new();
    // The replies may all be queued in the pass that answers CLIENT LIST,
    // before that pass's write finds the socket full and asks for `w`.
    assert!(
        wait_until(Duration::from_secs(10), || {
            line = client_line(&mut admin, &addr).unwrap_or_default();
            !line.is_empty() && field(&line, "omem") >= 24 * MB && line.contains(" events=rw ")
        }),
        "omem shows the pending replies, and the write interest: {line}"
    );
    assert!(field(&line, "oll") > 0, "{line}");
    assert!(field(&line, "tot-mem") >= field(&line, "omem"), "{line}");
    let normal = admin.info_int("memory", "mem_clients_normal") as usize;
    assert!(normal >= field(&line, "omem"), "{normal} against {line}");
    assert_eq!(admin.info_int("memory", "mem_clients_slaves"), 0);
    // Gone, its memory is no longer counted.
    drop(reader);
    let mut now = 0;
    assert!(
        wait_until(Duration::from_secs(30), || {
            now = admin.info_int("memory", "mem_clients_normal") as usize;
            now < idle + 8 * MB
        }),
        "{now} against {idle} before"
    );
}

#[test]
fn pending_replies_cost_at_most_1_2_times_their_bytes_in_rss() {
    let server = Server::start(1, &[]);
    let pid = server.pid();
    let mut admin = server.raw();
    set_big(&mut admin, "big", MB);
    // A list of 100k 100-byte elements: its LRANGE is 10.6 MB of small
    // bulks, copied into the reply blocks.
    let element = "e".repeat(100);
    for _ in 0..100 {
        let mut cmd: Vec<&str> = vec!["RPUSH", "list"];
        cmd.extend(std::iter::repeat_n(element.as_str(), 1000));
        admin.cmd(&cmd);
    }
    let lrange = encode_cmd(&[b"LRANGE", b"list", b"0", b"-1"]);
    let lrange_reply = 100_000 * (100 + "$100\r\n\r\n".len()) + "*100000\r\n".len();
    // Warm up: one LRANGE read through, so its transient frames are counted
    // in the baseline rather than as output.
    admin.send(&lrange);
    assert_eq!(admin.read().unwrap().items().len(), 100_000);
    let before = proc_status(pid, "VmRSS");
    let (mut reader, addr) = non_reader(&server);
    let mut request = gets("big", 48);
    for _ in 0..6 {
        request.extend_from_slice(&lrange);
    }
    reader.write_all(&request).unwrap();
    let pending = 48 * (MB + "$1048576\r\n\r\n".len()) + 6 * lrange_reply;
    // All of it is queued once the last command has run.
    let mut line = String::new();
    assert!(wait_until(Duration::from_secs(30), || {
        line = client_line(&mut admin, &addr).unwrap_or_default();
        line.contains(" cmd=lrange ") && field(&line, "omem") > pending / 2
    }));
    std::thread::sleep(Duration::from_millis(300));
    let grown = proc_status(pid, "VmRSS").saturating_sub(before);
    assert!(
        grown as f64 <= 1.2 * pending as f64,
        "RSS grew {} MB for {} MB of pending replies ({line})",
        grown / MB,
        pending / MB
    );
    drop(reader);
}

#[test]
fn a_query_buffer_over_its_limit_is_closed_with_rss_near_the_limit() {
    let server = Server::start(1, &[]);
    let pid = server.pid();
    let mut admin = server.raw();
    // Redis's smallest limit is 1mb.
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "1048575"]),
        Reply::err(
            "ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - argument must be between 1048576 and 9223372036854775807 inclusive"
        )
    );
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "64mb"]),
        Reply::ok()
    );
    let peak_before = proc_status(pid, "VmHWM");
    // A 100 MB bulk: cut once 64 MB of it are buffered.
    let mut raw = server.raw();
    raw.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$104857600\r\n");
    let chunk = vec![b'x'; MB];
    for _ in 0..100 {
        if !raw.send_lossy(&chunk) {
            break;
        }
    }
    assert!(raw.closed(), "over the query buffer limit: closed");
    assert_eq!(admin.cmd(&["EXISTS", "k"]), int(0));
    let peak = proc_status(pid, "VmHWM").saturating_sub(peak_before);
    assert!(
        peak as f64 <= 1.2 * (64 * MB) as f64,
        "RSS peaked {} MB above the start for a 64 MB limit",
        peak / MB
    );
}

#[test]
fn an_unfinished_multibulk_costs_about_its_wire_bytes() {
    let server = Server::start(1, &[]);
    let pid = server.pid();
    let mut admin = server.raw();
    let before = proc_status(pid, "VmRSS");
    let args = 5_000_000;
    let mut raw = server.raw();
    raw.send(format!("*{}\r\n", args + 1).as_bytes());
    let block = b"$0\r\n\r\n".repeat(100_000);
    for _ in 0..args / 100_000 {
        raw.send(&block);
    }
    let sent = args * 6;
    let addr = raw.local_addr();
    assert!(wait_until(Duration::from_secs(10), || {
        client_line(&mut admin, &addr).is_some_and(|l| field(&l, "tot-mem") >= sent)
    }));
    let grown = proc_status(pid, "VmRSS").saturating_sub(before);
    // The wire bytes, moved out of the read buffer in parts of their own
    // size (left in the buffer, which doubled as it grew, they cost twice
    // that); Redis spends some 40 bytes an argument on the same request,
    // over six times the bytes sent.
    assert!(
        grown as f64 <= 1.2 * sent as f64,
        "RSS grew {} MB for {} MB sent",
        grown / MB,
        sent / MB
    );
}

fn used_memory(c: &mut Raw) -> usize {
    c.info_int("memory", "used_memory") as usize
}

/// A client that sent one large command gives the read buffer it grew
/// back within a few seconds, whether it goes idle or keeps sending small
/// commands (Redis's test: `UNLINK can reclaim memory in background`).
#[test]
fn a_read_buffer_grown_for_a_large_command_is_given_back() {
    let server = Server::start(1, &[]);
    for keeps_talking in [true, false] {
        let mut c = server.raw();
        let base = used_memory(&mut c);
        let mut sadd = vec!["SADD".to_string(), "big".to_string()];
        sadd.extend((0..100_000).map(|i| i.to_string()));
        let words: Vec<&str> = sadd.iter().map(String::as_str).collect();
        assert_eq!(c.cmd(&words), Reply::Int(100_000));
        assert_eq!(c.cmd(&["DEL", "big"]), Reply::Int(1));
        let mut freed = false;
        for _ in 0..50 {
            if keeps_talking {
                assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()));
            }
            std::thread::sleep(Duration::from_millis(100));
            let mut other = server.raw();
            if used_memory(&mut other) < base + MB {
                freed = true;
                break;
            }
        }
        assert!(
            freed,
            "keeps talking: {keeps_talking}: the read buffer stayed"
        );
    }
}

/// `qbuf` + `qbuf-free` of the client at `addr`: its query buffer's size,
/// as Redis's querybuf unit reads it.
fn query_buffer(admin: &mut Raw, addr: &str) -> usize {
    let line = client_line(admin, addr).expect("client listed");
    field(&line, "qbuf") + field(&line, "qbuf-free")
}

/// CLIENT LIST's `qbuf` (bytes waiting in the query buffer) and
/// `qbuf-free` (room left in its allocation) read as Redis's do: a fresh
/// client's buffer is its first read size (16 KiB, under Redis's 32 KiB
/// resize threshold), a large command grows it, small commands after it
/// let it shrink without going to nothing, and an idle client's is given
/// back (Redis's `query buffer resized correctly` tests, whose bounds
/// redis-server itself is held to here too).
#[test]
fn query_buffer_fields_grow_and_shrink_as_redis_reads_them() {
    let ember = Server::start(2, &[]);
    let redis = common::reference::Redis::or_skip("query_buffer_fields_grow_and_shrink");
    let mut ports = vec![ember.port];
    ports.extend(redis.as_ref().map(|r| r.port));
    for port in ports {
        let mut admin = Raw::connect(port);
        let mut c = Raw::connect(port);
        let addr = c.local_addr();
        assert_eq!(c.cmd(&["CLIENT", "SETNAME", "qb"]), Reply::ok());
        let fresh = query_buffer(&mut admin, &addr);
        assert!((16384..32768).contains(&fresh), "port {port}: {fresh}");
        assert_eq!(field(&client_line(&mut admin, &addr).unwrap(), "qbuf"), 0);
        // Idle for over two seconds: given back.
        assert!(
            wait_until(Duration::from_secs(8), || query_buffer(&mut admin, &addr)
                == 0),
            "port {port}: idle, still {}",
            query_buffer(&mut admin, &addr)
        );
        // And the next command reads into a buffer of the first size again.
        assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()));
        let again = query_buffer(&mut admin, &addr);
        assert!((16384..32768).contains(&again), "port {port}: {again}");

        let mut c = Raw::connect(port);
        let addr = c.local_addr();
        let big = "A".repeat(400_000);
        assert_eq!(c.cmd(&["SET", "x", &big]), Reply::ok());
        let grown = query_buffer(&mut admin, &addr);
        assert!(grown > 32768, "port {port}: {grown}");
        // Small commands: it shrinks, but keeps room for them.
        assert!(
            wait_until(Duration::from_secs(5), || {
                assert_eq!(c.cmd(&["SET", "x", "small"]), Reply::ok());
                std::thread::sleep(Duration::from_millis(20));
                let now = query_buffer(&mut admin, &addr);
                now > 0 && now < grown
            }),
            "port {port}: still {}",
            query_buffer(&mut admin, &addr)
        );
    }
}
