//! Expiry semantics, one test (or more) per row of `docs/EXPIRY.md`, with
//! the replies Redis 7.0 gives (observed on redis-server 7.0.15).

mod common;

use std::time::{Duration, Instant};

use common::{args, err, int, keys_on_shard, ok, unix_ms, wait_until, Raw, Reply, Server};

const NOT_INT: &str = "ERR value is not an integer or out of range";

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn start() -> (Server, Raw) {
    let server = Server::start(2, &["--enable-debug-command", "local"]);
    let raw = server.raw();
    (server, raw)
}

/// A fixed deadline far in the future (2100-01-01), so exact comparisons work.
const FAR_S: i64 = 4_102_444_800;
const FAR_MS: i64 = 4_102_444_800_123;

fn expired_keys(r: &mut Raw) -> i64 {
    r.info_int("stats", "expired_keys")
}

#[test]
fn a_key_has_no_ttl_until_one_is_set() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(r.cmd(&["PTTL", "k"]), int(-1));
    assert_eq!(r.cmd(&["EXPIRETIME", "k"]), int(-1));
    assert_eq!(r.cmd(&["PEXPIRETIME", "k"]), int(-1));
    for cmd in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        assert_eq!(r.cmd(&[cmd, "nokey"]), int(-2), "{cmd}");
    }
}

#[test]
fn expire_family_replies() {
    let (_s, mut r) = start();
    let a = keys_on_shard("e", 0, 2, 1);
    let z = keys_on_shard("e", 1, 2, 1);
    for k in [&a[0], &z[0]] {
        assert_eq!(r.cmd(&["SET", k, "v"]), ok());
        assert_eq!(r.cmd(&["EXPIRE", k, "100"]), int(1));
        assert_eq!(r.cmd(&["TTL", k]), int(100));
        assert_eq!(r.cmd(&["PEXPIRE", k, "200000"]), int(1));
        let pttl = r.int(&["PTTL", k]);
        assert!((199_000..=200_000).contains(&pttl), "{pttl}");
        assert_eq!(r.cmd(&["EXPIREAT", k, &FAR_S.to_string()]), int(1));
        assert_eq!(r.cmd(&["EXPIRETIME", k]), int(FAR_S));
        assert_eq!(r.cmd(&["PEXPIRETIME", k]), int(FAR_S * 1000));
        assert_eq!(r.cmd(&["PEXPIREAT", k, &FAR_MS.to_string()]), int(1));
        assert_eq!(r.cmd(&["PEXPIRETIME", k]), int(FAR_MS));
    }
    for cmd in ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"] {
        assert_eq!(r.cmd(&[cmd, "nokey", "100"]), int(0), "{cmd}");
        assert_eq!(r.cmd(&[cmd, "nokey", "-1"]), int(0), "{cmd}");
        assert_eq!(r.cmd(&[cmd, &a[0], "abc"]), err(NOT_INT), "{cmd}");
        assert_eq!(r.cmd(&[cmd, &a[0], "1.5"]), err(NOT_INT), "{cmd}");
    }
    assert_eq!(r.cmd(&["EXISTS", "nokey"]), int(0));
    // The largest PEXPIREAT is accepted (no overflow: nothing is added).
    assert_eq!(r.cmd(&["PEXPIREAT", &a[0], "9223372036854775807"]), int(1));
    assert_eq!(r.cmd(&["PEXPIRETIME", &a[0]]), int(i64::MAX));
    assert_eq!(r.cmd(&["EXPIRETIME", &a[0]]), int(9223372036854776));
}

#[test]
fn expire_overflow_errors_name_the_command() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    let cases = [
        ("EXPIRE", "9223372036854775807", "expire"),
        ("EXPIRE", "9223372036854775", "expire"),
        ("EXPIRE", "-9223372036854775808", "expire"),
        ("PEXPIRE", "9223372036854775807", "pexpire"),
        ("EXPIREAT", "9223372036854775807", "expireat"),
        ("expireat", "-9223372036854775808", "expireat"),
    ];
    for (cmd, amount, name) in cases {
        assert_eq!(
            r.cmd(&[cmd, "k", amount]),
            err(&format!("ERR invalid expire time in '{name}' command")),
            "{cmd} {amount}"
        );
    }
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(r.cmd(&["GET", "k"]), b("v"));
}

#[test]
fn nx_xx_gt_lt_rules() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    // No TTL: GT fails (no TTL is infinite), XX fails, LT succeeds.
    assert_eq!(r.cmd(&["EXPIRE", "k", "100", "GT"]), int(0));
    assert_eq!(r.cmd(&["EXPIRE", "k", "100", "XX"]), int(0));
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(r.cmd(&["EXPIRE", "k", "100", "LT"]), int(1));
    assert_eq!(r.cmd(&["TTL", "k"]), int(100));
    // With a TTL: NX fails.
    assert_eq!(r.cmd(&["EXPIRE", "k", "100", "NX"]), int(0));
    assert_eq!(r.cmd(&["EXPIRE", "k", "200", "gt"]), int(1));
    assert_eq!(r.cmd(&["EXPIRE", "k", "150", "gt"]), int(0));
    assert_eq!(r.cmd(&["EXPIRE", "k", "50", "lt"]), int(1));
    assert_eq!(r.cmd(&["EXPIRE", "k", "60", "LT"]), int(0));
    assert_eq!(r.cmd(&["EXPIRE", "k", "70", "XX"]), int(1));
    assert_eq!(r.cmd(&["TTL", "k"]), int(70));
    assert_eq!(r.cmd(&["EXPIRE", "k", "100", "XX", "GT"]), int(1));
    assert_eq!(r.cmd(&["EXPIRE", "k", "100", "NX", "NX"]), int(0));
    assert_eq!(r.cmd(&["TTL", "k"]), int(100));
    // NX on a key without TTL.
    assert_eq!(r.cmd(&["PERSIST", "k"]), int(1));
    assert_eq!(r.cmd(&["PEXPIRE", "k", "100000", "NX"]), int(1));
    // Equal is neither greater nor less.
    let far = FAR_S.to_string();
    assert_eq!(r.cmd(&["EXPIREAT", "k", &far]), int(1));
    assert_eq!(r.cmd(&["EXPIREAT", "k", &far, "GT"]), int(0));
    assert_eq!(r.cmd(&["EXPIREAT", "k", &far, "LT"]), int(0));
    assert_eq!(r.cmd(&["EXPIRE", "k", "100"]), int(1));
    // The same rules for the absolute forms.
    assert_eq!(r.cmd(&["EXPIREAT", "k", &FAR_S.to_string(), "GT"]), int(1));
    assert_eq!(
        r.cmd(&["EXPIREAT", "k", &(FAR_S - 1).to_string(), "GT"]),
        int(0)
    );
    assert_eq!(
        r.cmd(&["PEXPIREAT", "k", &FAR_MS.to_string(), "LT"]),
        int(0)
    );
    assert_eq!(
        r.cmd(&["PEXPIREAT", "k", &(FAR_S * 1000 - 1).to_string(), "LT"]),
        int(1)
    );
    assert_eq!(r.cmd(&["PEXPIRETIME", "k"]), int(FAR_S * 1000 - 1));
    // Options on a missing key: 0.
    assert_eq!(r.cmd(&["EXPIRE", "nokey", "100", "LT"]), int(0));
    assert_eq!(r.cmd(&["EXPIRE", "nokey", "100", "NX"]), int(0));
}

#[test]
fn expire_option_errors() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    let nx_err = err("ERR NX and XX, GT or LT options at the same time are not compatible");
    let gtlt_err = err("ERR GT and LT options at the same time are not compatible");
    for cmd in ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"] {
        assert_eq!(
            r.cmd(&[cmd, "k", "100", "FOO"]),
            err("ERR Unsupported option FOO")
        );
        assert_eq!(
            r.cmd(&[cmd, "k", "100", "foo"]),
            err("ERR Unsupported option foo")
        );
        assert_eq!(r.cmd(&[cmd, "k", "100", "NX", "XX"]), nx_err);
        assert_eq!(r.cmd(&[cmd, "k", "100", "nx", "gt"]), nx_err);
        assert_eq!(r.cmd(&[cmd, "k", "100", "NX", "LT"]), nx_err);
        assert_eq!(r.cmd(&[cmd, "k", "100", "GT", "LT"]), gtlt_err);
        // Options are checked before the number, and on missing keys too.
        assert_eq!(
            r.cmd(&[cmd, "k", "abc", "FOO"]),
            err("ERR Unsupported option FOO")
        );
        assert_eq!(r.cmd(&[cmd, "nokey", "100", "GT", "LT"]), gtlt_err);
    }
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(
        r.cmd(&["EXPIRE", "k"]),
        err("ERR wrong number of arguments for 'expire' command")
    );
}

#[test]
fn past_deadlines_delete_at_once_and_reply_1() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    let before = expired_keys(&mut r);
    let cases: [&[&str]; 6] = [
        &["EXPIRE", "k", "-1"],
        &["EXPIRE", "k", "0"],
        &["PEXPIRE", "k", "0"],
        &["PEXPIRE", "k", "-9223372036854775808"],
        &["EXPIREAT", "k", "1"],
        &["PEXPIREAT", "k", "1"],
    ];
    for cmd in cases {
        assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
        assert_eq!(r.cmd(cmd), int(1), "{cmd:?}");
        // Deleted at once: gone from DBSIZE without any access.
        assert_eq!(r.cmd(&["DBSIZE"]), int(0), "{cmd:?}");
        assert_eq!(r.cmd(&["EXISTS", "k"]), int(0), "{cmd:?}");
    }
    // GT on a key without TTL refuses even a past deadline; LT accepts it.
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["EXPIRE", "k", "-5", "GT"]), int(0));
    assert_eq!(r.cmd(&["EXISTS", "k"]), int(1));
    assert_eq!(r.cmd(&["EXPIRE", "k", "-5", "LT"]), int(1));
    assert_eq!(r.cmd(&["EXISTS", "k"]), int(0));
    // A deletion, not an expiry.
    assert_eq!(expired_keys(&mut r), before);
}

#[test]
fn ttl_rounds_half_up() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    // TTL = (ms + 500) / 1000; the margins allow up to ~100 ms between the
    // PEXPIRE and the TTL.
    for (ms, want) in [
        ("400", 0),
        ("1300", 1),
        ("1499", 1),
        ("1700", 2),
        ("2600", 3),
    ] {
        let t0 = Instant::now();
        assert_eq!(r.cmd(&["PEXPIRE", "k", ms]), int(1));
        let ttl = r.int(&["TTL", "k"]);
        if t0.elapsed() < Duration::from_millis(100) {
            assert_eq!(ttl, want, "PEXPIRE {ms}");
        }
    }
    // Exactly on the edge: 1500 ms left is 2, 1499 is 1 (as long as no ms passed).
    assert_eq!(r.cmd(&["PEXPIRE", "k", "1500"]), int(1));
    let ttl = r.int(&["TTL", "k"]);
    assert!(ttl == 2 || ttl == 1, "{ttl}");
    let pttl = r.int(&["PTTL", "k"]);
    assert!((1400..=1500).contains(&pttl), "{pttl}");
}

#[test]
fn expiretime_exact_values() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["EXPIREAT", "k", "4102444800"]), int(1));
    assert_eq!(r.cmd(&["EXPIRETIME", "k"]), int(4102444800));
    assert_eq!(r.cmd(&["PEXPIRETIME", "k"]), int(4102444800000));
    // EXPIRETIME rounds the ms deadline like TTL: (ms + 500) / 1000.
    for (ms, s) in [
        ("4102444800123", 4102444800),
        ("4102444800499", 4102444800),
        ("4102444800500", 4102444801),
        ("4102444800999", 4102444801),
    ] {
        assert_eq!(r.cmd(&["PEXPIREAT", "k", ms]), int(1));
        assert_eq!(r.cmd(&["PEXPIRETIME", "k"]), int(ms.parse().unwrap()));
        assert_eq!(r.cmd(&["EXPIRETIME", "k"]), int(s), "{ms}");
    }
    // Relative forms land at now + amount.
    let before = unix_ms() as i64;
    assert_eq!(r.cmd(&["PEXPIRE", "k", "50000"]), int(1));
    let after = unix_ms() as i64;
    let at = r.int(&["PEXPIRETIME", "k"]);
    assert!((before + 50_000..=after + 50_000).contains(&at), "{at}");
}

#[test]
fn persist_only_counts_a_removed_ttl() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["PERSIST", "nokey"]), int(0));
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["PERSIST", "k"]), int(0));
    assert_eq!(r.cmd(&["EXPIRE", "k", "100"]), int(1));
    assert_eq!(r.cmd(&["PERSIST", "k"]), int(1));
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(r.cmd(&["PERSIST", "k"]), int(0));
    assert_eq!(r.cmd(&["GET", "k"]), b("v"));
}

fn check_ttl_kept(r: &mut Raw, k: &str) {
    let set_ttl = |r: &mut Raw| {
        assert_eq!(r.cmd(&["PEXPIREAT", k, &FAR_MS.to_string()]), int(1));
    };
    let kept = |r: &mut Raw, what: &str| {
        assert_eq!(
            r.cmd(&["PEXPIRETIME", k]),
            int(FAR_MS),
            "{what} keeps the TTL"
        );
    };
    assert_eq!(r.cmd(&["SET", k, "10"]), ok());
    set_ttl(r);
    assert_eq!(r.cmd(&["INCR", k]), int(11));
    kept(r, "INCR");
    assert_eq!(r.cmd(&["DECR", k]), int(10));
    kept(r, "DECR");
    assert_eq!(r.cmd(&["INCRBY", k, "5"]), int(15));
    kept(r, "INCRBY");
    assert_eq!(r.cmd(&["DECRBY", k, "5"]), int(10));
    kept(r, "DECRBY");
    assert_eq!(r.cmd(&["INCRBYFLOAT", k, "0.5"]), b("10.5"));
    kept(r, "INCRBYFLOAT");
    assert_eq!(r.cmd(&["APPEND", k, "x"]), int(5));
    kept(r, "APPEND");
    assert_eq!(r.cmd(&["SETRANGE", k, "0", "ab"]), int(5));
    kept(r, "SETRANGE");
    assert_eq!(r.cmd(&["SET", k, "v", "KEEPTTL"]), ok());
    kept(r, "SET KEEPTTL");
    assert_eq!(r.cmd(&["SET", k, "w", "XX", "KEEPTTL", "GET"]), b("v"));
    kept(r, "SET XX KEEPTTL GET");
    assert_eq!(r.cmd(&["GETEX", k]), b("w"));
    kept(r, "GETEX without options");
    assert_eq!(r.cmd(&["GET", k]), b("w"));
    kept(r, "GET");
    // Refused writes leave it too.
    assert_eq!(r.cmd(&["SETNX", k, "x"]), int(0));
    assert_eq!(r.cmd(&["SET", k, "x", "NX"]), Reply::Nil);
    kept(r, "a refused SET NX");
    assert_eq!(r.cmd(&["INCR", k]), err(NOT_INT));
    kept(r, "a failed INCR");
}

#[test]
fn ttl_kept_by_in_place_changes() {
    let (_s, mut r) = start();
    for k in keys_on_shard("keep", 0, 2, 1)
        .into_iter()
        .chain(keys_on_shard("keep", 1, 2, 1))
    {
        check_ttl_kept(&mut r, &k);
    }
    let server = Server::start(1, &[]);
    check_ttl_kept(&mut server.raw(), "k");
}

#[test]
fn ttl_cleared_by_overwrites() {
    let (_s, mut r) = start();
    let a = keys_on_shard("clr", 0, 2, 1);
    let z = keys_on_shard("clr", 1, 2, 1);
    let (a, z) = (a[0].as_str(), z[0].as_str());
    let with_ttl = |r: &mut Raw, k: &str| {
        assert_eq!(r.cmd(&["SET", k, "v", "EX", "1000"]), ok());
        assert_eq!(r.cmd(&["TTL", k]), int(1000));
    };
    with_ttl(&mut r, a);
    assert_eq!(r.cmd(&["SET", a, "w"]), ok());
    assert_eq!(r.cmd(&["TTL", a]), int(-1), "SET");
    with_ttl(&mut r, a);
    assert_eq!(r.cmd(&["SET", a, "w", "GET"]), b("v"));
    assert_eq!(r.cmd(&["TTL", a]), int(-1), "SET GET");
    with_ttl(&mut r, a);
    assert_eq!(r.cmd(&["SET", a, "w", "XX"]), ok());
    assert_eq!(r.cmd(&["TTL", a]), int(-1), "SET XX");
    with_ttl(&mut r, a);
    assert_eq!(r.cmd(&["GETSET", a, "w"]), b("v"));
    assert_eq!(r.cmd(&["TTL", a]), int(-1), "GETSET");
    with_ttl(&mut r, a);
    with_ttl(&mut r, z);
    assert_eq!(r.cmd(&["MSET", a, "1", z, "2"]), ok());
    assert_eq!(r.cmd(&["TTL", a]), int(-1), "MSET");
    assert_eq!(r.cmd(&["TTL", z]), int(-1), "MSET on the other shard");
    with_ttl(&mut r, a);
    assert_eq!(r.cmd(&["SETEX", a, "50", "w"]), ok());
    assert_eq!(r.cmd(&["TTL", a]), int(50), "SETEX sets its own");
    assert_eq!(r.cmd(&["PSETEX", a, "70000", "w"]), ok());
    assert_eq!(r.cmd(&["TTL", a]), int(70), "PSETEX sets its own");
    assert_eq!(r.cmd(&["SET", a, "w", "EX", "30"]), ok());
    assert_eq!(r.cmd(&["TTL", a]), int(30), "SET EX sets its own");
    with_ttl(&mut r, a);
    assert_eq!(r.cmd(&["DEL", a]), int(1));
    assert_eq!(r.cmd(&["SET", a, "v"]), ok());
    assert_eq!(r.cmd(&["TTL", a]), int(-1), "DEL then SET");
    with_ttl(&mut r, a);
    assert_eq!(r.cmd(&["GETDEL", a]), b("v"));
    assert_eq!(r.cmd(&["INCR", a]), int(1));
    assert_eq!(r.cmd(&["TTL", a]), int(-1), "GETDEL then INCR");
    with_ttl(&mut r, a);
    assert_eq!(r.cmd(&["UNLINK", a]), int(1));
    assert_eq!(r.cmd(&["APPEND", a, "x"]), int(1));
    assert_eq!(r.cmd(&["TTL", a]), int(-1), "UNLINK then APPEND");
    with_ttl(&mut r, a);
    assert_eq!(r.cmd(&["GETEX", a, "PERSIST"]), b("v"));
    assert_eq!(r.cmd(&["TTL", a]), int(-1), "GETEX PERSIST");
}

fn check_ttl_moves(r: &mut Raw, src: &str, dst: &str) {
    let far = FAR_MS.to_string();
    // RENAME carries the TTL.
    assert_eq!(r.cmd(&["SET", src, "v", "PXAT", &far]), ok());
    assert_eq!(r.cmd(&["RENAME", src, dst]), ok());
    assert_eq!(r.cmd(&["PEXPIRETIME", dst]), int(FAR_MS));
    assert_eq!(r.cmd(&["TTL", src]), int(-2));
    // RENAMENX too.
    assert_eq!(r.cmd(&["RENAMENX", dst, src]), int(1));
    assert_eq!(r.cmd(&["PEXPIRETIME", src]), int(FAR_MS));
    // A source without TTL over a destination with one: the TTL is dropped.
    assert_eq!(r.cmd(&["SET", dst, "old", "EX", "100"]), ok());
    assert_eq!(r.cmd(&["PERSIST", src]), int(1));
    assert_eq!(r.cmd(&["RENAME", src, dst]), ok());
    assert_eq!(r.cmd(&["GET", dst]), b("v"));
    assert_eq!(r.cmd(&["TTL", dst]), int(-1));
    // A source with TTL over one with another: the source's wins.
    assert_eq!(r.cmd(&["SET", src, "s", "PXAT", &far]), ok());
    assert_eq!(r.cmd(&["EXPIRE", dst, "100"]), int(1));
    assert_eq!(r.cmd(&["RENAME", src, dst]), ok());
    assert_eq!(r.cmd(&["PEXPIRETIME", dst]), int(FAR_MS));
    // COPY copies it, and the copy's TTL is its own afterwards.
    assert_eq!(r.cmd(&["COPY", dst, src]), int(1));
    assert_eq!(r.cmd(&["PEXPIRETIME", src]), int(FAR_MS));
    assert_eq!(r.cmd(&["PEXPIRETIME", dst]), int(FAR_MS));
    assert_eq!(r.cmd(&["PERSIST", src]), int(1));
    assert_eq!(r.cmd(&["PEXPIRETIME", dst]), int(FAR_MS));
    // COPY REPLACE of a key without TTL over one with TTL: none left.
    assert_eq!(r.cmd(&["COPY", src, dst, "REPLACE"]), int(1));
    assert_eq!(r.cmd(&["TTL", dst]), int(-1));
    assert_eq!(r.cmd(&["DEL", src, dst]), int(2));
}

#[test]
fn ttl_moves_with_rename_and_copy() {
    let (_s, mut r) = start();
    let k = keys_on_shard("mv", 0, 2, 2);
    check_ttl_moves(&mut r, &k[0], &k[1]);
    let a = keys_on_shard("mv", 0, 2, 1);
    let z = keys_on_shard("mv", 1, 2, 1);
    check_ttl_moves(&mut r, &a[0], &z[0]);
    check_ttl_moves(&mut r, &z[0], &a[0]);
    let server = Server::start(1, &[]);
    check_ttl_moves(&mut server.raw(), "src", "dst");
}

#[test]
fn copy_and_move_to_another_db_keep_the_ttl() {
    let (s, mut r) = start();
    let mut db3 = s.raw();
    assert_eq!(db3.cmd(&["SELECT", "3"]), ok());
    let a = keys_on_shard("cp", 0, 2, 1);
    let z = keys_on_shard("cp", 1, 2, 1);
    assert_eq!(
        r.cmd(&["SET", &a[0], "v", "PXAT", &FAR_MS.to_string()]),
        ok()
    );
    assert_eq!(r.cmd(&["COPY", &a[0], &z[0], "DB", "3"]), int(1));
    assert_eq!(db3.cmd(&["PEXPIRETIME", &z[0]]), int(FAR_MS));
    assert_eq!(r.cmd(&["MOVE", &a[0], "3"]), int(1));
    assert_eq!(db3.cmd(&["PEXPIRETIME", &a[0]]), int(FAR_MS));
    assert_eq!(r.cmd(&["EXISTS", &a[0]]), int(0));
}

#[test]
fn set_exat_pxat_in_the_past_stores_the_key_already_expired() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    let before = expired_keys(&mut r);
    assert_eq!(r.cmd(&["SET", "k", "v", "PXAT", "1"]), ok());
    assert_eq!(r.cmd(&["DBSIZE"]), int(1));
    assert_eq!(r.cmd(&["GET", "k"]), Reply::Nil);
    assert_eq!(r.cmd(&["DBSIZE"]), int(0));
    assert_eq!(r.cmd(&["SET", "k", "old"]), ok());
    assert_eq!(r.cmd(&["SET", "k", "new", "EXAT", "1", "GET"]), b("old"));
    assert_eq!(r.cmd(&["DBSIZE"]), int(1));
    assert_eq!(r.cmd(&["EXISTS", "k"]), int(0));
    assert_eq!(r.cmd(&["DBSIZE"]), int(0));
    assert_eq!(expired_keys(&mut r), before + 2);
    // A past deadline one second ago works the same.
    let past = (unix_ms() - 1000).to_string();
    assert_eq!(r.cmd(&["SET", "k", "v", "PXAT", &past]), ok());
    assert_eq!(r.cmd(&["TTL", "k"]), int(-2));
}

#[test]
fn lazy_expiry_on_access() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    let before = expired_keys(&mut r);
    assert_eq!(r.cmd(&["SET", "k", "v", "PX", "50"]), ok());
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(r.cmd(&["DBSIZE"]), int(1));
    assert_eq!(r.cmd(&["GET", "k"]), Reply::Nil);
    assert_eq!(r.cmd(&["DBSIZE"]), int(0));
    assert_eq!(expired_keys(&mut r), before + 1);
    // Every kind of access answers as if the key did not exist.
    let accesses: [(&[&str], Reply); 12] = [
        (&["EXISTS", "k"], int(0)),
        (&["TTL", "k"], int(-2)),
        (&["PTTL", "k"], int(-2)),
        (&["EXPIRE", "k", "100"], int(0)),
        (&["PERSIST", "k"], int(0)),
        (&["STRLEN", "k"], int(0)),
        (&["TYPE", "k"], Reply::Simple("none".into())),
        (&["SETNX", "k", "fresh"], int(1)),
        (&["INCR", "k"], int(1)),
        (&["APPEND", "k", "x"], int(1)),
        (&["RENAME", "k", "other"], err("ERR no such key")),
        (&["MGET", "k"], Reply::Array(vec![Reply::Nil])),
    ];
    for (cmd, want) in accesses {
        assert_eq!(r.cmd(&["SET", "k", "v", "PX", "10"]), ok());
        std::thread::sleep(Duration::from_millis(25));
        assert_eq!(r.cmd(cmd), want, "{cmd:?}");
        // Writes that recreate the key do so without a TTL.
        if r.int(&["EXISTS", "k"]) == 1 {
            assert_eq!(r.cmd(&["TTL", "k"]), int(-1), "{cmd:?}");
        }
        r.cmd(&["DEL", "k", "other"]);
    }
}

#[test]
fn keys_skips_expired_scan_and_randomkey_delete_them() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    let before = expired_keys(&mut r);
    for i in 0..20 {
        assert_eq!(r.cmd(&["SET", &format!("dead{i}"), "v", "PX", "20"]), ok());
    }
    assert_eq!(r.cmd(&["SET", "live", "v"]), ok());
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(r.cmd(&["DBSIZE"]), int(21));
    // KEYS skips them without deleting.
    assert_eq!(r.cmd(&["KEYS", "*"]), Reply::Array(vec![b("live")]));
    assert_eq!(r.cmd(&["KEYS", "dead*"]), Reply::Array(vec![]));
    assert_eq!(r.cmd(&["DBSIZE"]), int(21));
    assert_eq!(expired_keys(&mut r), before);
    // SCAN deletes the ones it meets.
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    loop {
        let Reply::Array(parts) = r.cmd(&["SCAN", &cursor, "COUNT", "5"]) else {
            panic!("SCAN");
        };
        let (Reply::Bulk(next), Reply::Array(keys)) = (&parts[0], &parts[1]) else {
            panic!("SCAN answered {parts:?}");
        };
        seen.extend(keys.iter().cloned());
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen, vec![b("live")]);
    assert_eq!(r.cmd(&["DBSIZE"]), int(1));
    assert_eq!(expired_keys(&mut r), before + 20);

    // RANDOMKEY: never returns an expired key, deletes those it meets.
    let a = keys_on_shard("rk", 0, 2, 5);
    let z = keys_on_shard("rk", 1, 2, 5);
    for k in a.iter().chain(&z) {
        assert_eq!(r.cmd(&["SET", k, "v", "PX", "20"]), ok());
    }
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(r.cmd(&["DBSIZE"]), int(11));
    let mut calls = 0;
    while r.int(&["DBSIZE"]) == 11 && calls < 100 {
        assert_eq!(r.cmd(&["RANDOMKEY"]), b("live"));
        calls += 1;
    }
    assert!(r.int(&["DBSIZE"]) < 11, "RANDOMKEY deleted nothing");
    // With every key expired, RANDOMKEY answers nil and empties the db.
    assert_eq!(r.cmd(&["DEL", "live"]), int(1));
    for k in a.iter().chain(&z) {
        assert_eq!(r.cmd(&["SET", k, "v", "PX", "20"]), ok());
    }
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(r.cmd(&["RANDOMKEY"]), Reply::Nil);
    assert_eq!(r.cmd(&["DBSIZE"]), int(0));
}

#[test]
fn active_expiry_counts_in_expired_keys() {
    let (_s, mut r) = start();
    let before = expired_keys(&mut r);
    for i in 0..50 {
        assert_eq!(r.cmd(&["SET", &format!("k{i}"), "v", "PX", "20"]), ok());
    }
    assert!(wait_until(Duration::from_secs(3), || r.int(&["DBSIZE"]) == 0));
    assert_eq!(expired_keys(&mut r), before + 50);
}

/// At hz 1 a tick comes once a second, but keys go when their deadline
/// window ends (64 ms after the deadline at most), not at the next tick:
/// three rounds, each gone well within a second of its deadline.
#[test]
fn keys_go_when_their_deadline_window_ends_not_at_the_next_tick() {
    let server = Server::start(1, &["--hz", "1"]);
    let mut r = server.raw();
    for round in 0..3 {
        let before = expired_keys(&mut r);
        let cmds: Vec<_> = (0..2_000)
            .map(|i| args(&["SET", &format!("r{round}:{i}"), "v", "PX", "100"]))
            .collect();
        assert!(r.pipeline(&cmds).iter().all(|x| *x == ok()));
        let written = Instant::now();
        let gone = wait_until(Duration::from_millis(600), || {
            expired_keys(&mut r) == before + 2_000
        });
        assert!(
            gone,
            "round {round}: {} of 2000 gone after {:?}",
            expired_keys(&mut r) - before,
            written.elapsed()
        );
    }
}

#[test]
fn active_expiry_removes_untouched_keys_and_keeps_the_rest() {
    let (_s, mut r) = start();
    let n = 10_000;
    let mut cmds = Vec::with_capacity(2 * n);
    for i in 0..n {
        let key = format!("vol:{i}");
        if i % 2 == 0 {
            cmds.push(args(&["PSETEX", &key, "200", "v"]));
        } else {
            cmds.push(args(&["SET", &key, "v", "PX", "200"]));
        }
        cmds.push(args(&["SET", &format!("keep:{i}"), "v"]));
    }
    let replies = r.pipeline(&cmds);
    assert!(replies.iter().all(|x| *x == ok()), "a write failed");
    let written = Instant::now();
    // Volatile keys not yet removed count in both `keys` and `expires`.
    let line = r.info_field("keyspace", "db0").unwrap();
    let field = |name: &str| -> i64 {
        line.split(',')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(field("keys"), n as i64 + field("expires"), "{line}");
    assert!(field("expires") <= n as i64, "{line}");
    // Untouched, they go within 2 s.
    let gone = wait_until(Duration::from_secs(2), || r.int(&["DBSIZE"]) == n as i64);
    assert!(
        gone,
        "DBSIZE {} after {:?}",
        r.int(&["DBSIZE"]),
        written.elapsed()
    );
    assert!(r.int(&["DBSIZE"]) == n as i64);
    assert!(r.info_int("stats", "expired_keys") >= n as i64);
    // None of the keys without TTL is lost.
    let mut exists = vec!["EXISTS".to_string()];
    exists.extend((0..n).map(|i| format!("keep:{i}")));
    let exists: Vec<&str> = exists.iter().map(String::as_str).collect();
    assert_eq!(r.cmd(&exists), int(n as i64));
    assert_eq!(
        r.info_field("keyspace", "db0").unwrap(),
        "keys=10000,expires=0,avg_ttl=0"
    );
}

#[test]
fn info_keyspace_counts_and_avg_ttl() {
    let (s, mut r) = start();
    assert_eq!(
        r.info_field("keyspace", "db0"),
        None,
        "no line for an empty db"
    );
    for i in 0..100 {
        assert_eq!(r.cmd(&["SET", &format!("v{i}"), "x", "EX", "1000"]), ok());
    }
    for i in 0..50 {
        assert_eq!(r.cmd(&["SET", &format!("p{i}"), "x"]), ok());
    }
    let mut db5 = s.raw();
    assert_eq!(db5.cmd(&["SELECT", "5"]), ok());
    assert_eq!(db5.cmd(&["SET", "only", "x"]), ok());
    let line = r.info_field("keyspace", "db0").unwrap();
    assert!(line.starts_with("keys=150,expires=100,avg_ttl="), "{line}");
    assert_eq!(
        r.info_field("keyspace", "db5").unwrap(),
        "keys=1,expires=0,avg_ttl=0"
    );
    // avg_ttl is an estimate the sweep refreshes: soon positive, at most 1000 s.
    let avg = |r: &mut Raw| -> i64 {
        let line = r.info_field("keyspace", "db0").unwrap();
        line.rsplit("avg_ttl=").next().unwrap().parse().unwrap()
    };
    assert!(wait_until(Duration::from_secs(3), || avg(&mut r) > 0));
    let v = avg(&mut r);
    assert!(v > 0 && v <= 1_000_000, "avg_ttl={v}");
}

#[test]
fn info_stats_expiry_fields() {
    let (_s, mut r) = start();
    for field in [
        "expired_keys",
        "expired_time_cap_reached_count",
        "expire_cycle_cpu_milliseconds",
        "expire_lag_p50_ms",
        "expire_lag_p99_ms",
        "expire_lag_max_ms",
        "expire_slices",
        "expire_slice_max_us",
    ] {
        let v = r.info_int("stats", field);
        assert!(v >= 0, "{field}:{v}");
    }
    let stale = r.info_field("stats", "expired_stale_perc").unwrap();
    let stale: f64 = stale.parse().unwrap();
    assert!((0.0..=100.0).contains(&stale), "{stale}");
    // With a volatile key around, the sweep runs in slices.
    assert_eq!(r.cmd(&["SET", "k", "v", "EX", "1000"]), ok());
    assert!(wait_until(Duration::from_secs(2), || {
        r.info_int("stats", "expire_slices") > 0
    }));
}

#[test]
fn expire_lag_is_recorded_for_active_removals() {
    let (_s, mut r) = start();
    for i in 0..200 {
        assert_eq!(r.cmd(&["SET", &format!("k{i}"), "v", "PX", "10"]), ok());
    }
    assert!(wait_until(Duration::from_secs(3), || r.int(&["DBSIZE"]) == 0));
    let p50 = r.info_int("stats", "expire_lag_p50_ms");
    let p99 = r.info_int("stats", "expire_lag_p99_ms");
    let max = r.info_int("stats", "expire_lag_max_ms");
    assert!(p50 <= p99 && p99 <= max, "{p50} {p99} {max}");
    assert!(max < 3000, "lag {max} ms");
}

#[test]
fn active_expire_effort_is_1_to_10_and_the_sweep_follows_it() {
    let (_s, mut r) = start();
    assert_eq!(
        r.cmd(&["CONFIG", "GET", "active-expire-effort"]),
        common::bulks(&["active-expire-effort", "1"])
    );
    let range = err("ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - argument must be between 1 and 10 inclusive");
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "active-expire-effort", "11"]),
        range
    );
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "active-expire-effort", "0"]),
        range
    );
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "active-expire-effort", "abc"]),
        err("ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - argument couldn't be parsed into an integer")
    );
    assert_eq!(
        r.cmd(&["CONFIG", "SET", "active-expire-effort", "10"]),
        ok()
    );
    assert_eq!(
        r.cmd(&["CONFIG", "GET", "active-expire-effort"]),
        common::bulks(&["active-expire-effort", "10"])
    );
    // With the highest effort, untouched keys still go and live ones stay.
    for i in 0..500 {
        assert_eq!(r.cmd(&["SET", &format!("v{i}"), "x", "PX", "50"]), ok());
        assert_eq!(r.cmd(&["SET", &format!("p{i}"), "x"]), ok());
    }
    assert!(wait_until(Duration::from_secs(2), || r.int(&["DBSIZE"]) == 500));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(r.cmd(&["DBSIZE"]), int(500));
}

/// The counter pattern of EXPIRY.md, without MULTI: INCR then EXPIRE; a
/// visitor seen again keeps the counter (INCR keeps the TTL), an idle one
/// loses it.
#[test]
fn idle_counter_pattern() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["INCR", "pageviews.user:1"]), int(1));
    assert_eq!(r.cmd(&["PEXPIRE", "pageviews.user:1", "300"]), int(1));
    assert_eq!(r.cmd(&["INCR", "pageviews.user:1"]), int(2));
    let pttl = r.int(&["PTTL", "pageviews.user:1"]);
    assert!((1..=300).contains(&pttl), "INCR kept the TTL: {pttl}");
    assert!(wait_until(Duration::from_secs(3), || {
        r.cmd(&["GET", "pageviews.user:1"]) == Reply::Nil
    }));
    assert_eq!(r.cmd(&["INCR", "pageviews.user:1"]), int(1));
    assert_eq!(r.cmd(&["TTL", "pageviews.user:1"]), int(-1));
}

/// A key is still there at its deadline and gone once it has passed; with
/// active expiry off, only an access removes it, and PTTL never goes negative.
#[test]
fn pttl_counts_down_to_removal() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    let set_at = std::time::Instant::now();
    assert_eq!(r.cmd(&["SET", "k", "v", "PX", "150"]), ok());
    let mut last = i64::MAX;
    loop {
        let pttl = r.int(&["PTTL", "k"]);
        if pttl == -2 {
            // From before the SET was sent to after the answer that found
            // the key gone: at least the TTL (less a millisecond of clock
            // rounding), however long a loaded machine slept between polls.
            let waited = set_at.elapsed();
            assert!(
                waited >= Duration::from_millis(149),
                "the key vanished {waited:?} after SET PX 150 (last PTTL {last})"
            );
            break;
        }
        assert!(
            (0..=150).contains(&pttl) && pttl <= last,
            "{pttl} after {last}"
        );
        last = pttl;
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(r.cmd(&["DBSIZE"]), int(0));
}
