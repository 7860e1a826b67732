//! Bitmap commands against a real ember: SETBIT/GETBIT, BITCOUNT, BITPOS,
//! BITOP (across shards too), BITFIELD/BITFIELD_RO, their errors and
//! keyspace events; and a differential run of random bitmap sequences
//! against redis-server (skipped where it is not installed).

mod common;

use common::reference::Redis;
use common::{err, int, Raw, Reply, Rng, Server};

const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";

#[test]
fn setbit_grows_with_zeros_and_getbit_reads_past_the_end() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(c.cmd(&["SETBIT", "b", "7", "1"]), int(0));
    assert_eq!(c.cmd(&["GET", "b"]), Reply::bulk("\x01"));
    assert_eq!(c.cmd(&["SETBIT", "b", "7", "1"]), int(1));
    assert_eq!(c.cmd(&["SETBIT", "b", "23", "1"]), int(0));
    assert_eq!(c.cmd(&["STRLEN", "b"]), int(3));
    assert_eq!(c.cmd(&["GETBIT", "b", "23"]), int(1));
    assert_eq!(c.cmd(&["GETBIT", "b", "22"]), int(0));
    assert_eq!(c.cmd(&["GETBIT", "b", "100000"]), int(0));
    assert_eq!(c.cmd(&["GETBIT", "missing", "3"]), int(0));
    // An integer is its decimal text: "1" is 0x31.
    c.cmd(&["SET", "n", "1"]);
    assert_eq!(c.cmd(&["GETBIT", "n", "2"]), int(1));
    assert_eq!(c.cmd(&["SETBIT", "n", "6", "1"]), int(0));
    assert_eq!(c.cmd(&["GET", "n"]), Reply::bulk("3"));
    // A TTL stays.
    c.cmd(&["SET", "t", "a", "EX", "100"]);
    c.cmd(&["SETBIT", "t", "100", "1"]);
    assert!(c.int(&["TTL", "t"]) > 0);
}

#[test]
fn bit_errors_are_redis_texts() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["LPUSH", "l", "a"]);
    assert_eq!(c.cmd(&["SETBIT", "b", "-1", "1"]), err(BAD_OFFSET));
    assert_eq!(c.cmd(&["SETBIT", "b", "4294967296", "1"]), err(BAD_OFFSET));
    assert_eq!(c.cmd(&["SETBIT", "b", "4294967295", "1"]), int(0));
    assert_eq!(c.cmd(&["STRLEN", "b"]), int(512 * 1024 * 1024));
    assert_eq!(
        c.cmd(&["SETBIT", "b", "1", "2"]),
        err("ERR bit is not an integer or out of range")
    );
    assert_eq!(
        c.cmd(&["SETBIT", "l", "1", "1"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    assert_eq!(c.cmd(&["GETBIT", "x", "a"]), err(BAD_OFFSET));
    assert_eq!(
        c.cmd(&["BITPOS", "b", "2"]),
        err("ERR The bit argument must be 1 or 0.")
    );
    assert_eq!(c.cmd(&["BITCOUNT", "b", "0"]), err("ERR syntax error"));
    assert_eq!(
        c.cmd(&["BITCOUNT", "b", "0", "1", "bits"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["BITOP", "NOT", "d", "a", "b"]),
        err("ERR BITOP NOT must be called with a single source key.")
    );
    assert_eq!(c.cmd(&["BITOP", "NAND", "d", "a"]), err("ERR syntax error"));
    // The offset limit follows proto-max-bulk-len.
    c.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "1048576"]);
    assert_eq!(c.cmd(&["SETBIT", "c", "8388608", "1"]), err(BAD_OFFSET));
    assert_eq!(c.cmd(&["SETBIT", "c", "8388607", "1"]), int(0));
}

#[test]
fn bitcount_and_bitpos_in_bytes_and_bits() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["SET", "s", "foobar"]);
    assert_eq!(c.cmd(&["BITCOUNT", "s"]), int(26));
    assert_eq!(c.cmd(&["BITCOUNT", "s", "1", "1"]), int(6));
    assert_eq!(c.cmd(&["BITCOUNT", "s", "1", "1", "BYTE"]), int(6));
    assert_eq!(c.cmd(&["BITCOUNT", "s", "5", "30", "BIT"]), int(17));
    assert_eq!(c.cmd(&["BITCOUNT", "s", "-1", "-5"]), int(0));
    assert_eq!(c.cmd(&["BITCOUNT", "nokey", "a", "b"]), int(0));
    c.cmd_bytes(&[b"SET", b"p", b"\xff\xf0\x00"]);
    assert_eq!(c.cmd(&["BITPOS", "p", "0"]), int(12));
    c.cmd_bytes(&[b"SET", b"p", b"\x00\xff\xf0"]);
    assert_eq!(c.cmd(&["BITPOS", "p", "1", "0"]), int(8));
    assert_eq!(c.cmd(&["BITPOS", "p", "1", "2", "-1", "BYTE"]), int(16));
    assert_eq!(c.cmd(&["BITPOS", "p", "1", "7", "15", "BIT"]), int(8));
    c.cmd_bytes(&[b"SET", b"f", b"\xff\xff\xff"]);
    assert_eq!(c.cmd(&["BITPOS", "f", "0"]), int(24));
    assert_eq!(c.cmd(&["BITPOS", "f", "0", "0", "-1"]), int(-1));
    assert_eq!(c.cmd(&["BITPOS", "nokey", "0"]), int(0));
    assert_eq!(c.cmd(&["BITPOS", "nokey", "1"]), int(-1));
}

#[test]
fn bitop_across_shards_stores_on_the_destination() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    c.cmd_bytes(&[b"SET", b"a", b"\xff\x0f"]);
    c.cmd_bytes(&[b"SET", b"b", b"\x0f"]);
    assert_eq!(c.cmd(&["BITOP", "AND", "dest", "a", "b"]), int(2));
    assert_eq!(
        c.cmd_bytes(&[b"GET", b"dest"]),
        Reply::Bulk(b"\x0f\x00".to_vec())
    );
    assert_eq!(c.cmd(&["BITOP", "OR", "dest", "a", "b", "missing"]), int(2));
    assert_eq!(
        c.cmd_bytes(&[b"GET", b"dest"]),
        Reply::Bulk(b"\xff\x0f".to_vec())
    );
    assert_eq!(c.cmd(&["BITOP", "XOR", "dest", "a", "b"]), int(2));
    assert_eq!(
        c.cmd_bytes(&[b"GET", b"dest"]),
        Reply::Bulk(b"\xf0\x0f".to_vec())
    );
    assert_eq!(c.cmd(&["BITOP", "NOT", "dest", "b"]), int(1));
    assert_eq!(
        c.cmd_bytes(&[b"GET", b"dest"]),
        Reply::Bulk(b"\xf0".to_vec())
    );
    // The destination's TTL goes; an empty result deletes it.
    c.cmd(&["EXPIRE", "dest", "100"]);
    assert_eq!(c.cmd(&["BITOP", "AND", "dest", "a"]), int(2));
    assert_eq!(c.cmd(&["TTL", "dest"]), int(-1));
    assert_eq!(c.cmd(&["BITOP", "AND", "dest", "missing", "c"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "dest"]), int(0));
    c.cmd(&["LPUSH", "c", "x"]);
    assert_eq!(
        c.cmd(&["BITOP", "OR", "dest", "a", "c"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

#[test]
fn bitfield_get_set_incrby_with_overflow_rules() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(
        c.cmd(&["BITFIELD", "f", "SET", "u8", "0", "255", "GET", "u8", "0"]),
        Reply::Array(vec![int(0), int(255)])
    );
    assert_eq!(
        c.cmd(&["BITFIELD", "f", "INCRBY", "u8", "0", "10"]),
        Reply::Array(vec![int(9)])
    );
    assert_eq!(
        c.cmd(&["BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "300"]),
        Reply::Array(vec![int(255)])
    );
    assert_eq!(
        c.cmd(&["BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "1"]),
        Reply::Array(vec![Reply::Nil])
    );
    assert_eq!(
        c.cmd(&["BITFIELD", "f", "SET", "i8", "#1", "-2", "GET", "i8", "#1", "GET", "u4", "8"]),
        Reply::Array(vec![int(0), int(-2), int(15)])
    );
    assert_eq!(c.cmd(&["STRLEN", "f"]), int(2));
    assert_eq!(
        c.cmd(&["BITFIELD_RO", "f", "GET", "u8", "0"]),
        Reply::Array(vec![int(255)])
    );
    assert_eq!(
        c.cmd(&["BITFIELD_RO", "f", "SET", "u8", "0", "1"]),
        err("ERR BITFIELD_RO only supports the GET subcommand")
    );
    assert_eq!(
        c.cmd(&["BITFIELD", "f", "GET", "u64", "0"]),
        err("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")
    );
    assert_eq!(
        c.cmd(&["BITFIELD", "f", "OVERFLOW", "NOPE"]),
        err("ERR Invalid OVERFLOW type specified")
    );
    assert_eq!(
        c.cmd(&["BITFIELD", "missing", "GET", "i64", "0"]),
        Reply::Array(vec![int(0)])
    );
    assert_eq!(c.cmd(&["EXISTS", "missing"]), int(0));
}

#[test]
fn writes_fire_setbit_and_bitop_fires_set_or_del() {
    let server = Server::start(1, &["--notify-keyspace-events", "KEA"]);
    let mut sub = server.raw();
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    let mut c = server.raw();
    c.cmd(&["SETBIT", "a", "1", "1"]);
    c.cmd(&["SETBIT", "a", "1", "1"]); // no change, no event
    c.cmd(&["BITFIELD", "a", "SET", "u8", "0", "3"]);
    c.cmd(&["BITOP", "NOT", "d", "a"]);
    c.cmd(&["BITOP", "AND", "d", "missing"]);
    let mut events = Vec::new();
    for _ in 0..4 {
        if let Some(Reply::Array(items)) = sub.read() {
            events.push(format!("{:?} {:?}", items[2], items[3]));
        }
    }
    let want = [("setbit", "a"), ("setbit", "a"), ("set", "d"), ("del", "d")];
    for (got, (event, key)) in events.iter().zip(want) {
        assert_eq!(
            got,
            &format!(
                "{:?} {:?}",
                Reply::bulk(&format!("__keyevent@0__:{event}")),
                Reply::bulk(key)
            )
        );
    }
    assert_eq!(events.len(), 4);
}

const KEYS: &[&str] = &["k0", "k1", "k2", "k3", "{t}a", "{t}b"];

/// One random command over bitmaps, with strings and a list among the keys
/// so WRONGTYPE and integer-as-text paths come up.
fn command(r: &mut Rng) -> Vec<String> {
    let k = r.pick(KEYS).to_string();
    let k2 = r.pick(KEYS).to_string();
    let k3 = r.pick(KEYS).to_string();
    let off = r.range(0, 90).to_string();
    let n = |r: &mut Rng| r.int(-12, 12);
    let unit = |r: &mut Rng| match r.below(3) {
        0 => vec![],
        1 => vec!["BIT".to_string()],
        _ => vec!["BYTE".to_string()],
    };
    let ty = |r: &mut Rng| {
        let signed = r.chance(2);
        let bits = r.range(1, if signed { 64 } else { 63 });
        format!("{}{bits}", if signed { "i" } else { "u" })
    };
    let words: Vec<String> = match r.below(16) {
        0..=2 => vec!["SETBIT".into(), k, off, r.below(2).to_string()],
        3 => vec!["GETBIT".into(), k, off],
        4 => {
            let mut w = vec!["BITCOUNT".into(), k];
            if r.chance(3) {
                w.extend([n(r), n(r)]);
                w.extend(unit(r));
            }
            w
        }
        5 | 6 => {
            let mut w = vec!["BITPOS".into(), k, r.below(2).to_string()];
            match r.below(4) {
                0 => {}
                1 => w.push(n(r)),
                _ => {
                    w.extend([n(r), n(r)]);
                    w.extend(unit(r));
                }
            }
            w
        }
        7 | 8 => {
            let op = ["AND", "OR", "XOR", "NOT"][r.below(4)];
            let mut w = vec!["BITOP".into(), op.into(), k, k2];
            if op != "NOT" {
                w.push(k3);
            }
            w
        }
        9..=11 => {
            let mut w = vec![
                if r.chance(5) {
                    "BITFIELD_RO"
                } else {
                    "BITFIELD"
                }
                .to_string(),
                k,
            ];
            for _ in 0..r.range(1, 3) {
                match r.below(4) {
                    0 => w.extend([
                        "OVERFLOW".into(),
                        ["WRAP", "SAT", "FAIL"][r.below(3)].into(),
                    ]),
                    1 => w.extend(["GET".into(), ty(r), r.range(0, 70).to_string()]),
                    2 => {
                        let t = ty(r);
                        w.extend(["SET".into(), t, format!("#{}", r.range(0, 6)), n(r)]);
                        if r.chance(3) {
                            let last = w.len() - 1;
                            w[last] = (r.next() as i64).to_string();
                        }
                    }
                    _ => {
                        let by = if r.chance(2) {
                            n(r)
                        } else {
                            (r.next() as i64 >> 3).to_string()
                        };
                        w.extend(["INCRBY".into(), ty(r), r.range(0, 70).to_string(), by]);
                    }
                }
            }
            w
        }
        12 => vec!["GET".into(), k],
        13 => match r.below(4) {
            0 => vec!["SET".into(), k, r.int(-100, 100)],
            1 => vec!["APPEND".into(), k, "xy".into()],
            2 => vec!["LPUSH".into(), k, "a".into()],
            _ => vec!["DEL".into(), k],
        },
        14 => vec!["STRLEN".into(), k],
        _ => vec!["INCR".into(), k],
    };
    words
}

#[test]
fn random_bitmap_sequences_match_redis() {
    let Some(redis) = Redis::or_skip("the bitmap differential test") else {
        return;
    };
    let server = Server::start(3, &[]);
    let mut ember = server.raw();
    let mut reference = Raw::connect(redis.port);
    for seed in [0xb17_u64, 0xf1e1d, 7, 0xdead_beef] {
        ember.cmd(&["FLUSHALL"]);
        reference.cmd(&["FLUSHALL"]);
        let mut rng = Rng(seed);
        let mut history = Vec::new();
        for step in 0..2500 {
            let args = command(&mut rng);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            history.push(args.join(" "));
            let (mine, theirs) = (ember.cmd(&args), reference.cmd(&args));
            if mine != theirs {
                let from = history.len().saturating_sub(12);
                panic!(
                    "seed {seed}, step {step}: {args:?}\n ember: {mine:?}\n redis: {theirs:?}\n last commands:\n  {}",
                    history[from..].join("\n  ")
                );
            }
        }
    }
}
