//! Commands whose keys live on different shards: ordering of pipelined
//! replies, multi-key commands, RENAME/COPY between shards, KEYS/SCAN/
//! RANDOMKEY/DBSIZE over all shards. Most tests run with 1, 2 and 4 shards.

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{encode_cmd, keys_on_shard, Raw, Reply, Server};

/// `n` keys of each shard, interleaved: shard 0, 1, ..., 0, 1, ...
fn spread(prefix: &str, nshards: usize, n: usize) -> Vec<String> {
    let per: Vec<Vec<String>> = (0..nshards)
        .map(|s| keys_on_shard(prefix, s, nshards, n))
        .collect();
    (0..n)
        .flat_map(|i| per.iter().map(move |keys| keys[i].clone()))
        .collect()
}

fn bulks(items: &[&str]) -> Reply {
    Reply::Array(items.iter().map(|s| Reply::bulk(s)).collect())
}

fn pipeline_in_order(nshards: usize) {
    let server = Server::start(nshards, &[]);
    let mut raw = server.raw();
    let keys = spread("p", nshards.max(2), 5000 / nshards.max(2));
    let mut buf = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let v = format!("value-{i}");
        buf.extend(encode_cmd(&[b"SET", k.as_bytes(), v.as_bytes()]));
        buf.extend(encode_cmd(&[b"GET", k.as_bytes()]));
    }
    // Write from another thread so neither side blocks on full buffers.
    let mut writer = raw.writer();
    let sender = std::thread::spawn(move || writer.write_all(&buf).unwrap());
    for i in 0..keys.len() {
        assert_eq!(raw.read(), Some(Reply::ok()), "SET reply {i}");
        assert_eq!(
            raw.read(),
            Some(Reply::bulk(&format!("value-{i}"))),
            "GET reply {i}"
        );
    }
    sender.join().unwrap();
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(keys.len() as i64));
}

#[test]
fn pipeline_10k_alternating_shards_two() {
    pipeline_in_order(2);
}

#[test]
fn pipeline_10k_one_shard() {
    pipeline_in_order(1);
}

#[test]
fn pipeline_mixed_multi_key_commands_keep_order() {
    let server = Server::start(4, &[]);
    let mut raw = server.raw();
    let keys = spread("mk", 4, 50);
    let mut buf = Vec::new();
    let mut expected = Vec::new();
    for (i, chunk) in keys.chunks(4).enumerate() {
        let v = i.to_string();
        let mut mset: Vec<&[u8]> = vec![b"MSET"];
        for k in chunk {
            mset.push(k.as_bytes());
            mset.push(v.as_bytes());
        }
        buf.extend(encode_cmd(&mset));
        expected.push(Reply::ok());
        let mut mget: Vec<&[u8]> = vec![b"MGET"];
        mget.extend(chunk.iter().map(|k| k.as_bytes()));
        buf.extend(encode_cmd(&mget));
        expected.push(Reply::Array(vec![Reply::bulk(&v); chunk.len()]));
        buf.extend(encode_cmd(&[b"GET", chunk[0].as_bytes()]));
        expected.push(Reply::bulk(&v));
        buf.extend(encode_cmd(&[b"PING"]));
        expected.push(Reply::Simple("PONG".into()));
        let mut exists: Vec<&[u8]> = vec![b"EXISTS"];
        exists.extend(chunk.iter().map(|k| k.as_bytes()));
        buf.extend(encode_cmd(&exists));
        expected.push(Reply::Int(chunk.len() as i64));
    }
    raw.send(&buf);
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(raw.read().as_ref(), Some(want), "reply {i}");
    }
}

fn multi_key_commands(nshards: usize) {
    let server = Server::start(nshards, &[]);
    let mut raw = server.raw();
    let keys = spread("m", nshards.max(2), 3);
    let k: Vec<&str> = keys.iter().map(|s| s.as_str()).collect();
    // MSET / MGET across all shards, with a missing key in the middle.
    let mut mset = vec!["MSET"];
    for (i, key) in k.iter().enumerate() {
        mset.push(key);
        mset.push(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"][i % 12]);
    }
    assert_eq!(raw.cmd(&mset), Reply::ok());
    let mut mget = vec!["MGET", k[0], "missing", k[1]];
    mget.extend(&k[2..]);
    let reply = raw.cmd(&mget).items();
    assert_eq!(reply[0], Reply::bulk("a"));
    assert_eq!(reply[1], Reply::Nil);
    assert_eq!(reply[2], Reply::bulk("b"));
    assert_eq!(reply.len(), k.len() + 1);
    for (i, r) in reply[3..].iter().enumerate() {
        assert_eq!(
            *r,
            Reply::bulk(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"][(i + 2) % 12])
        );
    }
    // Last value wins when MSET repeats a key.
    assert_eq!(
        raw.cmd(&["MSET", k[0], "x", k[1], "y", k[0], "z"]),
        Reply::ok()
    );
    assert_eq!(raw.cmd(&["MGET", k[0], k[1]]), bulks(&["z", "y"]));
    // EXISTS counts duplicates.
    assert_eq!(
        raw.cmd(&["EXISTS", k[0], k[0], k[1], "missing"]),
        Reply::Int(3)
    );
    let mut exists = vec!["EXISTS"];
    exists.extend(&k);
    exists.extend(&k);
    assert_eq!(raw.cmd(&exists), Reply::Int(2 * k.len() as i64));
    // TOUCH counts existing keys.
    let mut touch = vec!["TOUCH", "missing"];
    touch.extend(&k);
    assert_eq!(raw.cmd(&touch), Reply::Int(k.len() as i64));
    // DEL / UNLINK across shards.
    assert_eq!(raw.cmd(&["DEL", k[0], k[1], "missing"]), Reply::Int(2));
    assert_eq!(raw.cmd(&["DEL", k[0], k[1]]), Reply::Int(0));
    let mut unlink = vec!["UNLINK"];
    unlink.extend(&k[2..]);
    assert_eq!(raw.cmd(&unlink), Reply::Int(k.len() as i64 - 2));
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(0));
    // Wrong type inside MGET is a nil, not an error (only strings here, so
    // check arity errors instead).
    assert_eq!(
        raw.cmd(&["MSET", k[0], "v", k[1]]),
        Reply::err("ERR wrong number of arguments for 'mset' command")
    );
}

#[test]
fn multi_key_commands_two_shards() {
    multi_key_commands(2);
}

#[test]
fn multi_key_commands_four_shards() {
    multi_key_commands(4);
}

#[test]
fn multi_key_commands_one_shard() {
    multi_key_commands(1);
}

#[test]
fn msetnx_all_or_nothing() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let a = keys_on_shard("nx", 0, 2, 2);
    let b = keys_on_shard("nx", 1, 2, 2);
    assert_eq!(raw.cmd(&["MSETNX", &a[0], "1", &b[0], "2"]), Reply::Int(1));
    assert_eq!(raw.cmd(&["MGET", &a[0], &b[0]]), bulks(&["1", "2"]));
    // One key exists (on the other shard): nothing is set.
    assert_eq!(raw.cmd(&["MSETNX", &a[1], "x", &b[0], "y"]), Reply::Int(0));
    assert_eq!(raw.cmd(&["EXISTS", &a[1]]), Reply::Int(0));
    assert_eq!(raw.cmd(&["GET", &b[0]]), Reply::bulk("2"));
    assert_eq!(raw.cmd(&["MSETNX", &b[1], "x", &a[0], "y"]), Reply::Int(0));
    assert_eq!(raw.cmd(&["EXISTS", &b[1]]), Reply::Int(0));
    assert_eq!(raw.cmd(&["GET", &a[0]]), Reply::bulk("1"));
    assert_eq!(raw.cmd(&["MSETNX", &a[1], "x", &b[1], "y"]), Reply::Int(1));
    assert_eq!(raw.cmd(&["MGET", &a[1], &b[1]]), bulks(&["x", "y"]));
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(4));
}

#[test]
fn rename_between_shards() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let a = keys_on_shard("rn", 0, 2, 3);
    let b = keys_on_shard("rn", 1, 2, 3);
    assert_eq!(raw.cmd(&["SET", &a[0], "v1", "PX", "100000"]), Reply::ok());
    assert_eq!(raw.cmd(&["RENAME", &a[0], &b[0]]), Reply::ok());
    assert_eq!(raw.cmd(&["EXISTS", &a[0]]), Reply::Int(0));
    assert_eq!(raw.cmd(&["GET", &b[0]]), Reply::bulk("v1"));
    let pttl = raw.cmd(&["PTTL", &b[0]]).int();
    assert!(pttl > 95_000 && pttl <= 100_000, "{pttl}");
    // Overwrites an existing destination, dropping its TTL for the source's (none).
    assert_eq!(raw.cmd(&["SET", &a[1], "plain"]), Reply::ok());
    assert_eq!(raw.cmd(&["RENAME", &a[1], &b[0]]), Reply::ok());
    assert_eq!(raw.cmd(&["GET", &b[0]]), Reply::bulk("plain"));
    assert_eq!(raw.cmd(&["PTTL", &b[0]]), Reply::Int(-1));
    // Missing source.
    assert_eq!(
        raw.cmd(&["RENAME", "nosuchkey", &b[1]]),
        Reply::err("ERR no such key")
    );
    assert_eq!(
        raw.cmd(&["RENAMENX", "nosuchkey", &b[1]]),
        Reply::err("ERR no such key")
    );
    // RENAMENX when the destination exists on the other shard.
    assert_eq!(raw.cmd(&["SET", &a[2], "src"]), Reply::ok());
    assert_eq!(raw.cmd(&["RENAMENX", &a[2], &b[0]]), Reply::Int(0));
    assert_eq!(raw.cmd(&["GET", &a[2]]), Reply::bulk("src"));
    assert_eq!(raw.cmd(&["GET", &b[0]]), Reply::bulk("plain"));
    assert_eq!(raw.cmd(&["RENAMENX", &a[2], &b[2]]), Reply::Int(1));
    assert_eq!(raw.cmd(&["GET", &b[2]]), Reply::bulk("src"));
    assert_eq!(raw.cmd(&["EXISTS", &a[2]]), Reply::Int(0));
    // Back the other way, and onto itself.
    assert_eq!(raw.cmd(&["RENAME", &b[2], &a[2]]), Reply::ok());
    assert_eq!(raw.cmd(&["RENAME", &a[2], &a[2]]), Reply::ok());
    assert_eq!(raw.cmd(&["GET", &a[2]]), Reply::bulk("src"));
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(2));
}

#[test]
fn rename_then_get_pipelined_reads_own_writes() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let a = keys_on_shard("rw", 0, 2, 20);
    let b = keys_on_shard("rw", 1, 2, 20);
    let mut buf = Vec::new();
    for i in 0..20 {
        let v = format!("v{i}");
        buf.extend(encode_cmd(&[b"SET", a[i].as_bytes(), v.as_bytes()]));
        buf.extend(encode_cmd(&[b"RENAME", a[i].as_bytes(), b[i].as_bytes()]));
        buf.extend(encode_cmd(&[b"GET", b[i].as_bytes()]));
        buf.extend(encode_cmd(&[b"EXISTS", a[i].as_bytes()]));
        buf.extend(encode_cmd(&[b"COPY", b[i].as_bytes(), a[i].as_bytes()]));
        buf.extend(encode_cmd(&[b"GET", a[i].as_bytes()]));
    }
    raw.send(&buf);
    for i in 0..20 {
        let v = format!("v{i}");
        assert_eq!(raw.read(), Some(Reply::ok()));
        assert_eq!(raw.read(), Some(Reply::ok()));
        assert_eq!(raw.read(), Some(Reply::bulk(&v)), "GET after RENAME {i}");
        assert_eq!(raw.read(), Some(Reply::Int(0)));
        assert_eq!(raw.read(), Some(Reply::Int(1)));
        assert_eq!(raw.read(), Some(Reply::bulk(&v)), "GET after COPY {i}");
    }
}

#[test]
fn copy_between_shards() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let a = keys_on_shard("cp", 0, 2, 2);
    let b = keys_on_shard("cp", 1, 2, 2);
    assert_eq!(
        raw.cmd(&["SET", &a[0], "orig", "PX", "100000"]),
        Reply::ok()
    );
    assert_eq!(raw.cmd(&["COPY", &a[0], &b[0]]), Reply::Int(1));
    assert_eq!(raw.cmd(&["GET", &b[0]]), Reply::bulk("orig"));
    assert_eq!(raw.cmd(&["GET", &a[0]]), Reply::bulk("orig"));
    let pttl = raw.cmd(&["PTTL", &b[0]]).int();
    assert!(pttl > 95_000 && pttl <= 100_000, "{pttl}");
    // Destination exists: 0 without REPLACE, 1 with.
    assert_eq!(raw.cmd(&["SET", &a[1], "new"]), Reply::ok());
    assert_eq!(raw.cmd(&["COPY", &a[1], &b[0]]), Reply::Int(0));
    assert_eq!(raw.cmd(&["GET", &b[0]]), Reply::bulk("orig"));
    assert_eq!(raw.cmd(&["COPY", &a[1], &b[0], "REPLACE"]), Reply::Int(1));
    assert_eq!(raw.cmd(&["GET", &b[0]]), Reply::bulk("new"));
    assert_eq!(raw.cmd(&["PTTL", &b[0]]), Reply::Int(-1));
    // Missing source.
    assert_eq!(raw.cmd(&["COPY", "nosuchkey", &b[1]]), Reply::Int(0));
    // Into another db, on the other shard.
    assert_eq!(raw.cmd(&["COPY", &a[0], &b[1], "DB", "1"]), Reply::Int(1));
    assert_eq!(raw.cmd(&["EXISTS", &b[1]]), Reply::Int(0));
    assert_eq!(raw.cmd(&["COPY", &a[1], &b[1], "DB", "1"]), Reply::Int(0));
    assert_eq!(
        raw.cmd(&["COPY", &a[1], &b[1], "DB", "1", "REPLACE"]),
        Reply::Int(1)
    );
    assert_eq!(raw.cmd(&["SELECT", "1"]), Reply::ok());
    assert_eq!(raw.cmd(&["GET", &b[1]]), Reply::bulk("new"));
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(1));
    assert_eq!(raw.cmd(&["SELECT", "0"]), Reply::ok());
    // Same key, same db.
    assert_eq!(
        raw.cmd(&["COPY", &a[0], &a[0]]),
        Reply::err("ERR source and destination objects are the same")
    );
    assert_eq!(
        raw.cmd(&["COPY", &a[0], &b[1], "DB", "99"]),
        Reply::err("ERR DB index is out of range")
    );
    assert_eq!(
        raw.cmd(&["COPY", &a[0], &b[1], "foo"]),
        Reply::err("ERR syntax error")
    );
}

fn fill(raw: &mut Raw, keys: &[String]) {
    for chunk in keys.chunks(500) {
        let mut args: Vec<&[u8]> = vec![b"MSET"];
        for k in chunk {
            args.push(k.as_bytes());
            args.push(b"v");
        }
        raw.send_cmd(&args);
        assert_eq!(raw.read(), Some(Reply::ok()));
    }
}

/// Runs SCAN with the given options until cursor 0; returns all keys seen.
fn scan_all(raw: &mut Raw, opts: &[&str]) -> Vec<String> {
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    let mut rounds = 0;
    loop {
        let mut args = vec!["SCAN", cursor.as_str()];
        args.extend(opts);
        let reply = raw.cmd(&args).items();
        cursor = reply[0].text();
        seen.extend(reply[1].items().iter().map(|r| r.text()));
        rounds += 1;
        assert!(rounds < 100_000, "SCAN does not terminate");
        if cursor == "0" {
            return seen;
        }
    }
}

fn keys_and_scan(nshards: usize) {
    let server = Server::start(nshards, &[]);
    let mut raw = server.raw();
    let keys: Vec<String> = (0..10_000).map(|i| format!("key:{i}")).collect();
    fill(&mut raw, &keys);
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(10_000));
    let all: HashSet<String> = keys.iter().cloned().collect();

    let listed: Vec<String> = raw
        .cmd(&["KEYS", "*"])
        .items()
        .iter()
        .map(|r| r.text())
        .collect();
    assert_eq!(listed.len(), 10_000);
    assert_eq!(listed.iter().cloned().collect::<HashSet<_>>(), all);
    let mut some: Vec<String> = raw
        .cmd(&["KEYS", "key:1?"])
        .items()
        .iter()
        .map(|r| r.text())
        .collect();
    some.sort();
    assert_eq!(
        some,
        (10..20).map(|i| format!("key:{i}")).collect::<Vec<_>>()
    );

    let seen = scan_all(&mut raw, &["COUNT", "10"]);
    let seen_set: HashSet<String> = seen.iter().cloned().collect();
    assert_eq!(seen_set, all, "SCAN must return every key");
    assert!(seen.len() >= 10_000);

    let matched: HashSet<String> = scan_all(&mut raw, &["MATCH", "key:99*", "COUNT", "100"])
        .into_iter()
        .collect();
    let expected: HashSet<String> = keys
        .iter()
        .filter(|k| k.starts_with("key:99"))
        .cloned()
        .collect();
    assert_eq!(matched, expected);

    let strings = scan_all(&mut raw, &["TYPE", "string", "COUNT", "1000"]);
    assert_eq!(strings.into_iter().collect::<HashSet<_>>(), all);
    assert!(scan_all(&mut raw, &["TYPE", "list", "COUNT", "1000"]).is_empty());
}

#[test]
fn keys_and_scan_two_shards() {
    keys_and_scan(2);
}

#[test]
fn keys_and_scan_four_shards() {
    keys_and_scan(4);
}

#[test]
fn keys_and_scan_one_shard() {
    keys_and_scan(1);
}

#[test]
fn scan_errors() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["SCAN", "abc"]), Reply::err("ERR invalid cursor"));
    assert_eq!(
        raw.cmd(&["SCAN", "0", "COUNT", "0"]),
        Reply::err("ERR syntax error")
    );
    assert_eq!(
        raw.cmd(&["SCAN", "0", "TYPE"]),
        Reply::err("ERR syntax error")
    );
    assert_eq!(
        raw.cmd(&["SCAN", "0"]),
        Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])])
    );
}

#[test]
fn scan_never_misses_stable_keys_during_churn() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let stable: Vec<String> = (0..3000).map(|i| format!("stable:{i}")).collect();
    fill(&mut raw, &stable);
    let stop = Arc::new(AtomicBool::new(false));
    let port = server.port;
    let churn = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut c = Raw::connect(port);
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let batch: Vec<String> = (0..50).map(|j| format!("churn:{}", i * 50 + j)).collect();
                let mut args: Vec<&[u8]> = vec![b"MSET"];
                for k in &batch {
                    args.push(k.as_bytes());
                    args.push(b"x");
                }
                c.send_cmd(&args);
                assert_eq!(c.read(), Some(Reply::ok()));
                if i >= 2 {
                    let old: Vec<String> = (0..50)
                        .map(|j| format!("churn:{}", (i - 2) * 50 + j))
                        .collect();
                    let mut args: Vec<&[u8]> = vec![b"DEL"];
                    args.extend(old.iter().map(|k| k.as_bytes()));
                    c.send_cmd(&args);
                    assert_eq!(c.read(), Some(Reply::Int(50)));
                }
                i += 1;
            }
        })
    };
    for _ in 0..3 {
        let seen: HashSet<String> = scan_all(&mut raw, &["COUNT", "10"]).into_iter().collect();
        for k in &stable {
            assert!(seen.contains(k), "SCAN missed {k}");
        }
    }
    stop.store(true, Ordering::Relaxed);
    churn.join().unwrap();
}

#[test]
fn randomkey_returns_keys_from_every_shard() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["RANDOMKEY"]), Reply::Nil);
    let a = keys_on_shard("rk", 0, 2, 5);
    let b = keys_on_shard("rk", 1, 2, 5);
    for k in a.iter().chain(&b) {
        assert_eq!(raw.cmd(&["SET", k, "v"]), Reply::ok());
    }
    let (mut from_a, mut from_b) = (0, 0);
    for _ in 0..300 {
        let k = raw.cmd(&["RANDOMKEY"]).text();
        if a.contains(&k) {
            from_a += 1;
        } else if b.contains(&k) {
            from_b += 1;
        } else {
            panic!("RANDOMKEY returned unknown key {k}");
        }
    }
    assert!(from_a > 0 && from_b > 0, "{from_a} {from_b}");
    // Only one shard has keys.
    let mut del = vec!["DEL"];
    del.extend(a.iter().map(|s| s.as_str()));
    assert_eq!(raw.cmd(&del), Reply::Int(5));
    for _ in 0..50 {
        let k = raw.cmd(&["RANDOMKEY"]).text();
        assert!(b.contains(&k), "{k}");
    }
    assert_eq!(raw.cmd(&["FLUSHDB"]), Reply::ok());
    assert_eq!(raw.cmd(&["RANDOMKEY"]), Reply::Nil);
}

#[test]
fn dbsize_sums_shards() {
    for nshards in [1, 4] {
        let server = Server::start(nshards, &[]);
        let mut raw = server.raw();
        let keys = spread("ds", nshards.max(2), 25);
        fill(&mut raw, &keys);
        assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(keys.len() as i64));
        assert_eq!(
            raw.cmd(&["DEL", &keys[0], &keys[1], &keys[2]]),
            Reply::Int(3)
        );
        assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(keys.len() as i64 - 3));
        // Via the redis crate too.
        let mut client = server.client();
        let n: i64 = redis::cmd("DBSIZE").query(&mut client).unwrap();
        assert_eq!(n, keys.len() as i64 - 3);
    }
}

#[test]
fn redis_crate_pipeline_across_shards() {
    let server = Server::start(2, &[]);
    let mut client = server.client();
    let keys = spread("rc", 2, 100);
    let mut pipe = redis::pipe();
    for (i, k) in keys.iter().enumerate() {
        pipe.cmd("SET").arg(k).arg(i).ignore();
    }
    for k in &keys {
        pipe.cmd("GET").arg(k);
    }
    let values: Vec<usize> = pipe.query(&mut client).unwrap();
    assert_eq!(values, (0..keys.len()).collect::<Vec<_>>());
    let got: Vec<Option<usize>> = redis::cmd("MGET")
        .arg(&keys[..10])
        .arg("nokey")
        .query(&mut client)
        .unwrap();
    assert_eq!(got.len(), 11);
    assert_eq!(got[10], None);
    assert_eq!(got[3], Some(3));
}
