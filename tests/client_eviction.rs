//! `maxmemory-clients` (Redis 7.0's client eviction) and MEMORY USAGE
//! against a real ember: the client holding the most goes once the
//! clients' total passes the limit, whichever shard it lives on; CLIENT
//! NO-EVICT protects; INFO `evicted_clients` counts. MEMORY USAGE of each
//! type stays near the `used_memory` growth a key of it causes.

mod common;

use std::time::Duration;

use common::{args, ok, wait_until, Raw, Reply, Server};

/// Sends the start of a bulk of `n` bytes that never ends: `n` bytes of
/// query buffer the client holds.
fn hold_query_buffer(c: &mut Raw, n: usize) {
    let mut bytes = format!("*2\r\n${n}\r\n").into_bytes();
    bytes.extend(std::iter::repeat_n(b'v', n));
    c.send(&bytes);
}

fn tot_mem(control: &mut Raw, name: &str) -> Option<u64> {
    let Reply::Bulk(list) = control.cmd(&["CLIENT", "LIST"]) else {
        return None;
    };
    let text = String::from_utf8_lossy(&list).into_owned();
    let line = text
        .lines()
        .find(|l| l.contains(&format!("name={name} ")))?;
    let field = line.split(' ').find_map(|f| f.strip_prefix("tot-mem="))?;
    field.parse().ok()
}

#[test]
fn the_largest_client_goes_and_no_evict_protects() {
    for shards in [1, 2] {
        let server = Server::start(shards, &[]);
        let mut control = server.raw();
        assert_eq!(control.cmd(&["CLIENT", "NO-EVICT", "on"]), ok());
        assert_eq!(
            control.cmd(&["CONFIG", "SET", "maxmemory-clients", "1mb"]),
            ok()
        );
        // Several clients, so that the large one may be on any shard.
        let mut small: Vec<Raw> = (0..4).map(|_| server.raw()).collect();
        for (i, c) in small.iter_mut().enumerate() {
            assert_eq!(c.cmd(&["CLIENT", "SETNAME", &format!("small{i}")]), ok());
        }
        let mut big = server.raw();
        assert_eq!(big.cmd(&["CLIENT", "SETNAME", "big"]), ok());
        hold_query_buffer(&mut big, 2 << 20);
        assert!(
            wait_until(Duration::from_secs(10), || tot_mem(&mut control, "big")
                .is_none()),
            "{shards} shard(s): the client over the limit is still there"
        );
        assert_eq!(control.info_int("stats", "evicted_clients"), 1);
        for (i, c) in small.iter_mut().enumerate() {
            assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()), "small{i}");
        }
        // Protected: it stays, over the limit, and the others go.
        assert_eq!(
            control.cmd(&["CONFIG", "SET", "maxmemory-clients", "0"]),
            ok()
        );
        let mut kept = server.raw();
        assert_eq!(kept.cmd(&["CLIENT", "SETNAME", "kept"]), ok());
        assert_eq!(kept.cmd(&["CLIENT", "NO-EVICT", "on"]), ok());
        hold_query_buffer(&mut kept, 2 << 20);
        let mut other = server.raw();
        assert_eq!(other.cmd(&["CLIENT", "SETNAME", "other"]), ok());
        hold_query_buffer(&mut other, 300 << 10);
        assert!(wait_until(Duration::from_secs(10), || {
            tot_mem(&mut control, "kept").is_some_and(|m| m > 2 << 20)
                && tot_mem(&mut control, "other").is_some_and(|m| m > 300 << 10)
        }));
        // A lower limit takes effect before CONFIG SET answers.
        assert_eq!(
            control.cmd(&["CONFIG", "SET", "maxmemory-clients", "1mb"]),
            ok()
        );
        assert_eq!(tot_mem(&mut control, "other"), None);
        assert!(tot_mem(&mut control, "kept").is_some_and(|m| m > 1 << 20));
        assert!(tot_mem(&mut control, "kept").is_some());
    }
}

/// 2,000 keys of one kind: `used_memory`'s growth per key, and MEMORY
/// USAGE of some of them on average.
fn growth_and_usage(c: &mut Raw, kind: &str, make: &dyn Fn(&str) -> Vec<Vec<u8>>) -> (f64, f64) {
    const KEYS: usize = 2000;
    assert_eq!(c.cmd(&["FLUSHALL", "SYNC"]), ok());
    std::thread::sleep(Duration::from_millis(500));
    let before = c.info_int("memory", "used_memory");
    let keys: Vec<String> = (0..KEYS).map(|i| format!("{kind}:{i:06}")).collect();
    for chunk in keys.chunks(200) {
        let cmds: Vec<Vec<Vec<u8>>> = chunk.iter().map(|k| make(k)).collect();
        for reply in c.pipeline(&cmds) {
            assert!(!matches!(reply, Reply::Error(_)), "{kind}: {reply:?}");
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let after = c.info_int("memory", "used_memory");
    let growth = (after - before) as f64 / KEYS as f64;
    let sampled: Vec<i64> = keys
        .iter()
        .step_by(100)
        .map(|k| c.int(&["MEMORY", "USAGE", k]))
        .collect();
    let usage = sampled.iter().sum::<i64>() as f64 / sampled.len() as f64;
    (growth, usage)
}

#[test]
fn memory_usage_follows_the_growth_a_key_causes() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    let many = |n: usize, f: &dyn Fn(usize) -> String| -> Vec<String> { (0..n).map(f).collect() };
    type Make = Box<dyn Fn(&str) -> Vec<Vec<u8>>>;
    let with = |head: &'static [&'static str], rest: Vec<String>| -> Make {
        Box::new(move |k: &str| {
            let mut a: Vec<String> = head.iter().map(|s| s.to_string()).collect();
            a.insert(1, k.to_string());
            a.extend(rest.iter().cloned());
            args(&a.iter().map(String::as_str).collect::<Vec<_>>())
        })
    };
    let pairs = |n: usize, f: &dyn Fn(usize) -> [String; 2]| -> Vec<String> {
        (0..n).flat_map(f).collect()
    };
    let cases: Vec<(&str, Make)> = vec![
        ("int", with(&["SET"], vec!["123456".into()])),
        ("embstr", with(&["SET"], vec!["v".repeat(20)])),
        ("raw", with(&["SET"], vec!["v".repeat(100)])),
        ("list", with(&["RPUSH"], many(10, &|j| format!("elem{j}")))),
        (
            "hash",
            with(
                &["HSET"],
                pairs(10, &|j| [format!("f{j}"), format!("v{j}")]),
            ),
        ),
        (
            "bighash",
            with(
                &["HSET"],
                pairs(600, &|j| [format!("field{j}"), format!("value{j}")]),
            ),
        ),
        ("intset", with(&["SADD"], many(10, &|j| j.to_string()))),
        ("set", with(&["SADD"], many(200, &|j| format!("member{j}")))),
        (
            "zset",
            with(&["ZADD"], pairs(10, &|j| [j.to_string(), format!("m{j}")])),
        ),
        (
            "skiplist",
            with(
                &["ZADD"],
                pairs(200, &|j| [j.to_string(), format!("member{j}")]),
            ),
        ),
        (
            "stream",
            with(
                &["XADD"],
                vec!["*".into(), "f".into(), "v".into(), "g".into(), "x".into()],
            ),
        ),
    ];
    for (kind, make) in &cases {
        let (growth, usage) = growth_and_usage(&mut c, kind, make.as_ref());
        let ratio = usage / growth;
        eprintln!(
            "{kind}: growth {growth:.0} B a key, MEMORY USAGE {usage:.0} B, ratio {ratio:.2}"
        );
        // A band, not a figure: the growth includes the table's steps.
        assert!((0.6..=1.5).contains(&ratio), "{kind}: ratio {ratio:.2}");
    }
}
