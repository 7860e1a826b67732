//! String commands against a real ember, replies checked byte for byte against
//! what Redis 7.0 answers (observed on redis-server 7.0.15).

mod common;

use common::{bulks, err, int, keys_on_shard, ok, unix_ms, Raw, Reply, Server};

const NOT_INT: &str = "ERR value is not an integer or out of range";
const SYNTAX: &str = "ERR syntax error";

fn nil() -> Reply {
    Reply::Nil
}

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn pair(a: i64, b: i64) -> Reply {
    Reply::Array(vec![int(a), int(b)])
}

fn start() -> (Server, Raw) {
    let server = Server::start(2, &[]);
    let raw = server.raw();
    (server, raw)
}

#[test]
fn get_and_set_basics() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["GET", "k"]), nil());
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["GET", "k"]), b("v"));
    assert_eq!(r.cmd(&["SET", "k", "w"]), ok());
    assert_eq!(r.cmd(&["GET", "k"]), b("w"));
    assert_eq!(r.cmd(&["SET", "empty", ""]), ok());
    assert_eq!(r.cmd(&["GET", "empty"]), b(""));
    assert_eq!(
        r.cmd(&["GET"]),
        err("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(
        r.cmd(&["SET", "k"]),
        err("ERR wrong number of arguments for 'set' command")
    );
}

#[test]
fn set_nx_xx_get() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "old"]), ok());
    assert_eq!(r.cmd(&["SET", "k", "x", "NX"]), nil());
    assert_eq!(r.cmd(&["GET", "k"]), b("old"));
    assert_eq!(r.cmd(&["SET", "k", "new", "nx", "get"]), b("old"));
    assert_eq!(r.cmd(&["GET", "k"]), b("old"));
    assert_eq!(r.cmd(&["SET", "k", "new2", "XX", "GET"]), b("old"));
    assert_eq!(r.cmd(&["GET", "k"]), b("new2"));
    assert_eq!(r.cmd(&["SET", "k", "new3", "GET"]), b("new2"));
    assert_eq!(r.cmd(&["SET", "missing", "v", "XX"]), nil());
    assert_eq!(r.cmd(&["SET", "missing", "v", "XX", "GET"]), nil());
    assert_eq!(r.cmd(&["EXISTS", "missing"]), int(0));
    assert_eq!(r.cmd(&["SET", "missing", "v", "NX", "GET"]), nil());
    assert_eq!(r.cmd(&["GET", "missing"]), b("v"));
    assert_eq!(r.cmd(&["SET", "fresh", "v", "NX"]), ok());
    assert_eq!(r.cmd(&["SET", "fresh", "w", "XX"]), ok());
    assert_eq!(r.cmd(&["GET", "fresh"]), b("w"));
    // The same option twice is accepted.
    assert_eq!(r.cmd(&["SET", "fresh", "x", "nx", "nx"]), nil());
    assert_eq!(r.cmd(&["SET", "fresh", "x", "get", "get"]), b("w"));
    assert_eq!(r.cmd(&["SET", "fresh", "y", "xx", "xx"]), ok());
}

#[test]
fn set_expire_options() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v", "EX", "100"]), ok());
    assert_eq!(r.cmd(&["TTL", "k"]), int(100));
    assert_eq!(r.cmd(&["SET", "k", "v", "PX", "100000"]), ok());
    let pttl = r.int(&["PTTL", "k"]);
    assert!((99_000..=100_000).contains(&pttl), "{pttl}");
    let at_s = unix_ms() / 1000 + 1000;
    assert_eq!(r.cmd(&["SET", "k", "v", "EXAT", &at_s.to_string()]), ok());
    assert_eq!(r.cmd(&["EXPIRETIME", "k"]), int(at_s as i64));
    let at_ms = unix_ms() + 500_000;
    assert_eq!(r.cmd(&["SET", "k", "v", "PXAT", &at_ms.to_string()]), ok());
    assert_eq!(r.cmd(&["PEXPIRETIME", "k"]), int(at_ms as i64));
    assert_eq!(r.cmd(&["SET", "k", "w", "KEEPTTL"]), ok());
    assert_eq!(r.cmd(&["PEXPIRETIME", "k"]), int(at_ms as i64));
    assert_eq!(r.cmd(&["SET", "k", "x", "KEEPTTL", "GET"]), b("w"));
    assert_eq!(r.cmd(&["PEXPIRETIME", "k"]), int(at_ms as i64));
    assert_eq!(r.cmd(&["SET", "k", "y", "keepttl", "keepttl"]), ok());
    assert_eq!(r.cmd(&["PEXPIRETIME", "k"]), int(at_ms as i64));
    assert_eq!(r.cmd(&["GET", "k"]), b("y"));
    // A repeated EX is accepted and the last one wins.
    assert_eq!(r.cmd(&["SET", "k", "v", "EX", "10", "EX", "20"]), ok());
    assert_eq!(r.cmd(&["TTL", "k"]), int(20));
    // Plain SET clears the TTL.
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    // KEEPTTL on a key without TTL keeps none; on a missing key creates one.
    assert_eq!(r.cmd(&["SET", "k", "v", "KEEPTTL"]), ok());
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(r.cmd(&["SET", "new", "v", "KEEPTTL"]), ok());
    assert_eq!(r.cmd(&["TTL", "new"]), int(-1));
    // NX with EX: the TTL only lands when the value does.
    assert_eq!(r.cmd(&["SET", "k", "z", "NX", "EX", "50"]), nil());
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(r.cmd(&["SET", "k", "z", "XX", "EX", "50"]), ok());
    assert_eq!(r.cmd(&["TTL", "k"]), int(50));
}

#[test]
fn set_option_errors() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "orig"]), ok());
    let invalid = err("ERR invalid expire time in 'set' command");
    for bad in [
        &["EX", "0"][..],
        &["EX", "-1"],
        &["PX", "0"],
        &["PX", "-5"],
        &["EXAT", "0"],
        &["PXAT", "-1"],
        &["EX", "9223372036854775807"],
        &["PX", "9223372036854775807"],
        &["EXAT", "9223372036854775807"],
        &["EX", "9223372036854775"],
    ] {
        let mut cmd = vec!["SET", "k", "v"];
        cmd.extend_from_slice(bad);
        assert_eq!(r.cmd(&cmd), invalid, "{bad:?}");
    }
    assert_eq!(r.cmd(&["SET", "k", "v", "EX", "abc"]), err(NOT_INT));
    assert_eq!(r.cmd(&["SET", "k", "v", "PX", "1.5"]), err(NOT_INT));
    for bad in [
        &["NX", "XX"][..],
        &["XX", "NX"],
        &["EX", "10", "PX", "10"],
        &["PX", "100", "EX", "100"],
        &["EXAT", "100", "PXAT", "100"],
        &["EX", "10", "KEEPTTL"],
        &["KEEPTTL", "EX", "10"],
        &["EX", "10", "GET", "KEEPTTL"],
        &["EX"],
        &["FOO"],
        &["PERSIST"],
        // The syntax check runs before the number is read.
        &["EX", "abc", "FOO"],
    ] {
        let mut cmd = vec!["SET", "k", "v"];
        cmd.extend_from_slice(bad);
        assert_eq!(r.cmd(&cmd), err(SYNTAX), "{bad:?}");
    }
    // Errors leave the key alone, and an invalid TTL is rejected even for a
    // key that does not exist.
    assert_eq!(r.cmd(&["GET", "k"]), b("orig"));
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(r.cmd(&["SET", "nokey", "v", "EX", "0"]), invalid);
    assert_eq!(r.cmd(&["EXISTS", "nokey"]), int(0));
}

#[test]
fn setnx() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SETNX", "k", "v"]), int(1));
    assert_eq!(r.cmd(&["SETNX", "k", "w"]), int(0));
    assert_eq!(r.cmd(&["GET", "k"]), b("v"));
}

#[test]
fn setex_and_psetex() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "old", "EX", "5000"]), ok());
    assert_eq!(r.cmd(&["SETEX", "k", "100", "v"]), ok());
    assert_eq!(r.cmd(&["GET", "k"]), b("v"));
    assert_eq!(r.cmd(&["TTL", "k"]), int(100));
    assert_eq!(r.cmd(&["PSETEX", "k", "100000", "w"]), ok());
    assert_eq!(r.cmd(&["GET", "k"]), b("w"));
    let pttl = r.int(&["PTTL", "k"]);
    assert!((99_000..=100_000).contains(&pttl), "{pttl}");
    for (name, amount) in [
        ("setex", "0"),
        ("setex", "-1"),
        ("setex", "9223372036854775807"),
    ] {
        assert_eq!(
            r.cmd(&[name, "k", amount, "v"]),
            err("ERR invalid expire time in 'setex' command")
        );
    }
    for amount in ["0", "-10", "9223372036854775807"] {
        assert_eq!(
            r.cmd(&["PSETEX", "k", amount, "v"]),
            err("ERR invalid expire time in 'psetex' command")
        );
    }
    assert_eq!(r.cmd(&["SETEX", "k", "abc", "v"]), err(NOT_INT));
    assert_eq!(r.cmd(&["PSETEX", "k", "1.5", "v"]), err(NOT_INT));
    assert_eq!(r.cmd(&["GET", "k"]), b("w"));
    assert_eq!(
        r.cmd(&["SETEX", "k", "10"]),
        err("ERR wrong number of arguments for 'setex' command")
    );
}

#[test]
fn getset_returns_old_and_clears_ttl() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["GETSET", "k", "v"]), nil());
    assert_eq!(r.cmd(&["GET", "k"]), b("v"));
    assert_eq!(r.cmd(&["EXPIRE", "k", "100"]), int(1));
    assert_eq!(r.cmd(&["GETSET", "k", "w"]), b("v"));
    assert_eq!(r.cmd(&["GET", "k"]), b("w"));
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
}

#[test]
fn getdel() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v", "EX", "100"]), ok());
    assert_eq!(r.cmd(&["GETDEL", "k"]), b("v"));
    assert_eq!(r.cmd(&["GETDEL", "k"]), nil());
    assert_eq!(r.cmd(&["EXISTS", "k"]), int(0));
    assert_eq!(r.cmd(&["TTL", "k"]), int(-2));
}

#[test]
fn getex_changes_the_ttl() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v", "EX", "100"]), ok());
    assert_eq!(r.cmd(&["GETEX", "k"]), b("v"));
    assert_eq!(r.cmd(&["TTL", "k"]), int(100));
    assert_eq!(r.cmd(&["GETEX", "k", "PERSIST"]), b("v"));
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    assert_eq!(r.cmd(&["GETEX", "k", "EX", "200"]), b("v"));
    assert_eq!(r.cmd(&["TTL", "k"]), int(200));
    assert_eq!(r.cmd(&["GETEX", "k", "PX", "300000"]), b("v"));
    let pttl = r.int(&["PTTL", "k"]);
    assert!((299_000..=300_000).contains(&pttl), "{pttl}");
    let at_s = unix_ms() / 1000 + 1000;
    assert_eq!(r.cmd(&["GETEX", "k", "EXAT", &at_s.to_string()]), b("v"));
    assert_eq!(r.cmd(&["EXPIRETIME", "k"]), int(at_s as i64));
    let at_ms = unix_ms() + 700_000;
    assert_eq!(r.cmd(&["GETEX", "k", "PXAT", &at_ms.to_string()]), b("v"));
    assert_eq!(r.cmd(&["PEXPIRETIME", "k"]), int(at_ms as i64));
    // Repeats: the last one wins; PERSIST twice is fine.
    assert_eq!(r.cmd(&["GETEX", "k", "ex", "30", "ex", "40"]), b("v"));
    assert_eq!(r.cmd(&["TTL", "k"]), int(40));
    assert_eq!(r.cmd(&["GETEX", "k", "persist", "persist"]), b("v"));
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    // A deadline in the past: the value is returned and the key deleted.
    assert_eq!(r.cmd(&["GETEX", "k", "EXAT", "1"]), b("v"));
    assert_eq!(r.cmd(&["EXISTS", "k"]), int(0));
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["GETEX", "k", "PXAT", "1"]), b("v"));
    assert_eq!(r.cmd(&["EXISTS", "k"]), int(0));
    assert_eq!(r.cmd(&["GETEX", "nokey"]), nil());
}

#[test]
fn getex_errors() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    let invalid = err("ERR invalid expire time in 'getex' command");
    for bad in [
        &["EX", "0"][..],
        &["PX", "-1"],
        &["EXAT", "0"],
        &["EXAT", "9223372036854775807"],
        &["EX", "9223372036854775807"],
    ] {
        let mut cmd = vec!["GETEX", "k"];
        cmd.extend_from_slice(bad);
        assert_eq!(r.cmd(&cmd), invalid, "{bad:?}");
    }
    assert_eq!(r.cmd(&["GETEX", "k", "EX", "abc"]), err(NOT_INT));
    for bad in [
        &["EX", "10", "PX", "10"][..],
        &["PERSIST", "EX", "10"],
        &["PX", "100000", "PERSIST"],
        &["FOO"],
        &["EX"],
        &["KEEPTTL"],
        &["NX"],
        &["GET"],
    ] {
        let mut cmd = vec!["GETEX", "k"];
        cmd.extend_from_slice(bad);
        assert_eq!(r.cmd(&cmd), err(SYNTAX), "{bad:?}");
    }
    assert_eq!(r.cmd(&["TTL", "k"]), int(-1));
    // On a missing key only syntax errors show: the number is never read.
    assert_eq!(r.cmd(&["GETEX", "nokey", "EX", "0"]), nil());
    assert_eq!(r.cmd(&["GETEX", "nokey", "PX", "-1"]), nil());
    assert_eq!(r.cmd(&["GETEX", "nokey", "EX", "abc"]), nil());
    assert_eq!(r.cmd(&["GETEX", "nokey", "FOO"]), err(SYNTAX));
    assert_eq!(r.cmd(&["GETEX", "nokey", "EX"]), err(SYNTAX));
}

#[test]
fn mget_mset_msetnx_across_shards() {
    let (_s, mut r) = start();
    let a = keys_on_shard("a", 0, 2, 3);
    let z = keys_on_shard("z", 1, 2, 3);
    assert_eq!(
        r.cmd(&["MSET", &a[0], "1", &z[0], "2", &a[1], "3", &z[1], "4"]),
        ok()
    );
    assert_eq!(
        r.cmd(&["MGET", &z[1], &a[0], "nokey", &z[0], &a[1], &a[2]]),
        Reply::Array(vec![b("4"), b("1"), nil(), b("2"), b("3"), nil()])
    );
    assert_eq!(r.cmd(&["MGET", "nokey"]), Reply::Array(vec![nil()]));
    // The last value for a repeated key wins.
    assert_eq!(r.cmd(&["MSET", &a[0], "x", &a[0], "y"]), ok());
    assert_eq!(r.cmd(&["GET", &a[0]]), b("y"));
    for bad in [&["MSET", "a"][..], &["MSET", "a", "b", "c"]] {
        assert_eq!(
            r.cmd(bad),
            err("ERR wrong number of arguments for 'mset' command")
        );
    }
    for bad in [&["MSETNX", "a"][..], &["MSETNX", "a", "b", "c"]] {
        assert_eq!(
            r.cmd(bad),
            err("ERR wrong number of arguments for 'msetnx' command")
        );
    }
    // MSETNX is all or nothing, also when the existing key is on another shard.
    assert_eq!(r.cmd(&["MSETNX", &a[2], "n", &z[0], "n"]), int(0));
    assert_eq!(r.cmd(&["EXISTS", &a[2]]), int(0));
    assert_eq!(r.cmd(&["GET", &z[0]]), b("2"));
    assert_eq!(r.cmd(&["MSETNX", &a[2], "p", &z[2], "q"]), int(1));
    assert_eq!(r.cmd(&["MGET", &a[2], &z[2]]), bulks(&["p", "q"]));
}

#[test]
fn incr_and_decr_family() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["INCR", "n"]), int(1));
    assert_eq!(r.cmd(&["INCR", "n"]), int(2));
    assert_eq!(r.cmd(&["DECR", "n"]), int(1));
    assert_eq!(r.cmd(&["INCRBY", "n", "10"]), int(11));
    assert_eq!(r.cmd(&["INCRBY", "n", "-20"]), int(-9));
    assert_eq!(r.cmd(&["DECRBY", "n", "-9"]), int(0));
    assert_eq!(r.cmd(&["DECRBY", "m", "5"]), int(-5));
    assert_eq!(r.cmd(&["DECR", "fresh"]), int(-1));
    assert_eq!(r.cmd(&["GET", "n"]), b("0"));
    for v in [
        "abc",
        " 1",
        "1 ",
        "01",
        "+1",
        "-0",
        "1.5",
        "",
        "9223372036854775808",
    ] {
        assert_eq!(r.cmd(&["SET", "s", v]), ok());
        assert_eq!(r.cmd(&["INCR", "s"]), err(NOT_INT), "{v:?}");
    }
    assert_eq!(r.cmd(&["INCRBY", "n", "abc"]), err(NOT_INT));
    assert_eq!(r.cmd(&["INCRBY", "n", "9223372036854775808"]), err(NOT_INT));
    assert_eq!(r.cmd(&["DECRBY", "n", "1.0"]), err(NOT_INT));
    let overflow = err("ERR increment or decrement would overflow");
    assert_eq!(r.cmd(&["SET", "n", "9223372036854775807"]), ok());
    assert_eq!(r.cmd(&["INCR", "n"]), overflow);
    assert_eq!(r.cmd(&["INCRBY", "n", "1"]), overflow);
    assert_eq!(r.cmd(&["GET", "n"]), b("9223372036854775807"));
    assert_eq!(r.cmd(&["SET", "n", "-9223372036854775808"]), ok());
    assert_eq!(r.cmd(&["DECR", "n"]), overflow);
    assert_eq!(r.cmd(&["DECRBY", "n", "1"]), overflow);
    assert_eq!(
        r.cmd(&["DECRBY", "n", "-9223372036854775808"]),
        err("ERR decrement would overflow")
    );
    assert_eq!(r.cmd(&["SET", "n", "0"]), ok());
    assert_eq!(
        r.cmd(&["DECRBY", "n", "-9223372036854775808"]),
        err("ERR decrement would overflow")
    );
    assert_eq!(
        r.cmd(&["INCRBY", "n", "-9223372036854775808"]),
        int(i64::MIN)
    );
    assert_eq!(r.cmd(&["GET", "n"]), b("-9223372036854775808"));
    assert_eq!(
        r.cmd(&["INCR", "n", "1"]),
        err("ERR wrong number of arguments for 'incr' command")
    );
}

#[test]
fn incrbyfloat() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "f", "10.50"]), ok());
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "0.1"]), b("10.6"));
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "-0.1"]), b("10.5"));
    assert_eq!(r.cmd(&["GET", "f"]), b("10.5"));
    assert_eq!(r.cmd(&["SET", "f", "5.0e3"]), ok());
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "0"]), b("5000"));
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "2.0e2"]), b("5200"));
    assert_eq!(r.cmd(&["INCRBYFLOAT", "new", "3"]), b("3"));
    assert_eq!(r.cmd(&["INCRBYFLOAT", "new", "1e-3"]), b("3.001"));
    assert_eq!(r.cmd(&["SET", "f", "3"]), ok());
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "1.5e1"]), b("18"));
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "-18.0"]), b("0"));
    assert_eq!(
        r.cmd(&["INCRBYFLOAT", "f", "1e20"]),
        b("100000000000000000000")
    );
    assert_eq!(r.cmd(&["SET", "f", "1"]), ok());
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "1e-10"]), b("1.0000000001"));
    let not_float = err("ERR value is not a valid float");
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "abc"]), not_float);
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "nan"]), not_float);
    assert_eq!(r.cmd(&["SET", "s", "abc"]), ok());
    assert_eq!(r.cmd(&["INCRBYFLOAT", "s", "1"]), not_float);
    assert_eq!(r.cmd(&["SET", "s", " 1"]), ok());
    assert_eq!(r.cmd(&["INCRBYFLOAT", "s", "1"]), not_float);
    assert_eq!(r.cmd(&["SET", "f", "1"]), ok());
    let nan_inf = err("ERR increment would produce NaN or Infinity");
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "inf"]), nan_inf);
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "-inf"]), nan_inf);
    assert_eq!(r.cmd(&["GET", "f"]), b("1"));
}

/// Redis adds in `long double` (80-bit on x86-64) and prints `%.17Lf`, so
/// 0.1 + 0.2 is "0.3" and 1e308 + 1e308 does not overflow; ember computes
/// in the same type. Expected texts from redis-server 7.0 on x86-64.
#[cfg(target_arch = "x86_64")]
#[test]
fn incrbyfloat_long_double_precision() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "f", "0.1"]), ok());
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "0.2"]), b("0.3"));
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "-5.5"]), b("-5.2"));
    assert_eq!(r.cmd(&["SET", "f", "1.1"]), ok());
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "2.2"]), b("3.3"));
    assert_eq!(r.cmd(&["SET", "f", "1000"]), ok());
    assert_eq!(
        r.cmd(&["INCRBYFLOAT", "f", "3.0e-2"]),
        b("1000.03000000000000003")
    );
    assert_eq!(
        r.cmd(&["INCRBYFLOAT", "k", "1.23456789012345678"]),
        b("1.23456789012345678")
    );
    assert_eq!(
        r.cmd(&["INCRBYFLOAT", "x", "0x10"]),
        b("16"),
        "strtold reads hex"
    );
    assert_eq!(r.cmd(&["SET", "m", "1e308"]), ok());
    let big = r.cmd(&["INCRBYFLOAT", "m", "1e308"]).text();
    assert_eq!(big.len(), 309, "{big}");
    assert!(big.starts_with("19999999999999999999337"), "{big}");
    assert_eq!(r.cmd(&["GET", "m"]).text(), big, "stored as replied");
}

#[test]
fn incrbyfloat_checks_the_key_before_the_increment() {
    let (_s, mut r) = start();
    r.cmd(&["RPUSH", "l", "x"]);
    assert_eq!(
        r.cmd(&["INCRBYFLOAT", "l", "abc"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

#[test]
fn append_and_strlen() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["STRLEN", "s"]), int(0));
    assert_eq!(r.cmd(&["APPEND", "s", "Hello"]), int(5));
    assert_eq!(r.cmd(&["APPEND", "s", " World"]), int(11));
    assert_eq!(r.cmd(&["APPEND", "s", ""]), int(11));
    assert_eq!(r.cmd(&["GET", "s"]), b("Hello World"));
    assert_eq!(r.cmd(&["STRLEN", "s"]), int(11));
    assert_eq!(r.cmd(&["APPEND", "e", ""]), int(0));
    assert_eq!(r.cmd(&["EXISTS", "e"]), int(1));
    assert_eq!(r.cmd(&["SET", "n", "12"]), ok());
    assert_eq!(r.cmd(&["APPEND", "n", "34"]), int(4));
    assert_eq!(r.cmd(&["INCR", "n"]), int(1235));
    assert_eq!(r.cmd(&["STRLEN", "n"]), int(4));
}

#[test]
fn getrange_and_substr() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "s", "Hello World"]), ok());
    let cases = [
        ("0", "3", "Hell"),
        ("-3", "-1", "rld"),
        ("0", "-1", "Hello World"),
        ("10", "100", "d"),
        ("100", "200", ""),
        ("-100", "2", "Hel"),
        ("-1", "-5", ""),
        ("5", "3", ""),
        ("-1", "0", ""),
        ("0", "0", "H"),
    ];
    for (start, end, want) in cases {
        assert_eq!(
            r.cmd(&["GETRANGE", "s", start, end]),
            b(want),
            "{start} {end}"
        );
    }
    assert_eq!(r.cmd(&["SUBSTR", "s", "0", "4"]), b("Hello"));
    assert_eq!(r.cmd(&["SUBSTR", "s", "-5", "-1"]), b("World"));
    assert_eq!(r.cmd(&["GETRANGE", "nokey", "0", "-1"]), b(""));
    assert_eq!(r.cmd(&["SUBSTR", "nokey", "0", "10"]), b(""));
    assert_eq!(r.cmd(&["GETRANGE", "s", "0", "abc"]), err(NOT_INT));
    assert_eq!(r.cmd(&["SET", "e", ""]), ok());
    assert_eq!(r.cmd(&["GETRANGE", "e", "0", "-1"]), b(""));
}

#[test]
fn setrange() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SETRANGE", "s", "5", "ab"]), int(7));
    assert_eq!(r.cmd(&["GET", "s"]), Reply::Bulk(b"\0\0\0\0\0ab".to_vec()));
    assert_eq!(r.cmd(&["SETRANGE", "s", "0", "XY"]), int(7));
    assert_eq!(r.cmd(&["GET", "s"]), Reply::Bulk(b"XY\0\0\0ab".to_vec()));
    assert_eq!(r.cmd(&["SETRANGE", "s", "6", "cdef"]), int(10));
    assert_eq!(r.cmd(&["GET", "s"]), Reply::Bulk(b"XY\0\0\0acdef".to_vec()));
    assert_eq!(r.cmd(&["SETRANGE", "s", "1", ""]), int(10));
    assert_eq!(
        r.cmd(&["SETRANGE", "s", "-1", "x"]),
        err("ERR offset is out of range")
    );
    let too_big = err("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    assert_eq!(r.cmd(&["SETRANGE", "s", "536870912", "x"]), too_big);
    assert_eq!(r.cmd(&["SETRANGE", "s", "536870911", "xy"]), too_big);
    assert_eq!(r.cmd(&["SETRANGE", "s", "abc", "x"]), err(NOT_INT));
    // An empty value on a missing key answers 0 and creates nothing, even
    // with an offset that would be too big.
    assert_eq!(r.cmd(&["SETRANGE", "nokey", "0", ""]), int(0));
    assert_eq!(r.cmd(&["SETRANGE", "nokey", "536870912", ""]), int(0));
    assert_eq!(r.cmd(&["EXISTS", "nokey"]), int(0));
    assert_eq!(
        r.cmd(&["SETRANGE", "nokey", "-1", ""]),
        err("ERR offset is out of range")
    );
    assert_eq!(r.cmd(&["SETRANGE", "nokey", "536870912", "x"]), too_big);
    assert_eq!(r.cmd(&["EXISTS", "nokey"]), int(0));
    assert_eq!(r.cmd(&["GET", "s"]), Reply::Bulk(b"XY\0\0\0acdef".to_vec()));
}

fn lcs_idx_reply(with_len: bool, min: i64) -> Reply {
    // "ohmytext" vs "mynewtext": "text" at 4..7/5..8, "my" at 2..3/0..1.
    let matches = [((4, 7), (5, 8), 4), ((2, 3), (0, 1), 2)]
        .into_iter()
        .filter(|m| m.2 >= min)
        .map(|((a0, a1), (b0, b1), len)| {
            let mut item = vec![pair(a0, a1), pair(b0, b1)];
            if with_len {
                item.push(int(len));
            }
            Reply::Array(item)
        })
        .collect();
    Reply::Array(vec![b("matches"), Reply::Array(matches), b("len"), int(6)])
}

fn check_lcs(r: &mut Raw, k1: &str, k2: &str) {
    assert_eq!(r.cmd(&["MSET", k1, "ohmytext", k2, "mynewtext"]), ok());
    assert_eq!(r.cmd(&["LCS", k1, k2]), b("mytext"));
    assert_eq!(r.cmd(&["LCS", k1, k2, "LEN"]), int(6));
    assert_eq!(r.cmd(&["LCS", k1, k2, "IDX"]), lcs_idx_reply(false, 0));
    assert_eq!(
        r.cmd(&["LCS", k1, k2, "IDX", "WITHMATCHLEN"]),
        lcs_idx_reply(true, 0)
    );
    assert_eq!(
        r.cmd(&["LCS", k1, k2, "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"]),
        lcs_idx_reply(true, 4)
    );
    assert_eq!(
        r.cmd(&["LCS", k1, k2, "idx", "minmatchlen", "-5"]),
        lcs_idx_reply(false, 0)
    );
    assert_eq!(
        r.cmd(&["LCS", k1, k2, "LEN", "IDX"]),
        err("ERR If you want both the length and indexes, please just use IDX.")
    );
    assert_eq!(r.cmd(&["LCS", k1, k2, "FOO"]), err(SYNTAX));
    assert_eq!(r.cmd(&["LCS", k1, k2, "MINMATCHLEN"]), err(SYNTAX));
    assert_eq!(r.cmd(&["LCS", k1, k2, "MINMATCHLEN", "abc"]), err(NOT_INT));
    assert_eq!(r.cmd(&["LCS", k1, "lcs-missing"]), b(""));
    assert_eq!(
        r.cmd(&["LCS", "lcs-missing", "lcs-missing2", "LEN"]),
        int(0)
    );
}

#[test]
fn lcs_same_shard() {
    let (_s, mut r) = start();
    let k = keys_on_shard("lcs", 1, 2, 2);
    check_lcs(&mut r, &k[0], &k[1]);
}

#[test]
fn lcs_across_shards() {
    let (_s, mut r) = start();
    let a = keys_on_shard("lcs", 0, 2, 1);
    let z = keys_on_shard("lcs", 1, 2, 1);
    check_lcs(&mut r, &a[0], &z[0]);
    // And the other way round through the connection's shard.
    check_lcs(&mut r, &z[0], &a[0]);
}

#[test]
fn lcs_single_shard_server() {
    let server = Server::start(1, &[]);
    let mut r = server.raw();
    check_lcs(&mut r, "lcs1", "lcs2");
}

#[test]
fn binary_safe_values() {
    let (_s, mut r) = start();
    let all: Vec<u8> = (0..=255u8).collect();
    let mut crlf = b"a\r\nb\r\n$3\r\n*1\r\n".to_vec();
    crlf.push(0);
    let key: &[u8] = b"bin\x00\xff\r\nkey";
    assert_eq!(r.cmd_bytes(&[b"SET", key, &all]), ok());
    assert_eq!(r.cmd_bytes(&[b"GET", key]), Reply::Bulk(all.clone()));
    assert_eq!(r.cmd_bytes(&[b"STRLEN", key]), int(256));
    assert_eq!(
        r.cmd_bytes(&[b"APPEND", key, &crlf]),
        int(256 + crlf.len() as i64)
    );
    let mut joined = all.clone();
    joined.extend_from_slice(&crlf);
    assert_eq!(r.cmd_bytes(&[b"GET", key]), Reply::Bulk(joined.clone()));
    assert_eq!(
        r.cmd_bytes(&[b"GETRANGE", key, b"10", b"13"]),
        Reply::Bulk(vec![10, 11, 12, 13])
    );
    assert_eq!(
        r.cmd_bytes(&[b"SETRANGE", key, b"0", b"\r\n"]),
        int(joined.len() as i64)
    );
    joined[0] = b'\r';
    joined[1] = b'\n';
    assert_eq!(r.cmd_bytes(&[b"GETDEL", key]), Reply::Bulk(joined));
    assert_eq!(r.cmd_bytes(&[b"SET", b"crlf", &crlf]), ok());
    assert_eq!(
        r.cmd_bytes(&[b"MGET", b"crlf", key]),
        Reply::Array(vec![Reply::Bulk(crlf.clone()), Reply::Nil])
    );
    assert_eq!(r.cmd_bytes(&[b"GETSET", b"crlf", &all]), Reply::Bulk(crlf));
    assert_eq!(r.cmd_bytes(&[b"GET", b"crlf"]), Reply::Bulk(all));
    // An 8-bit key pattern round-trips through KEYS.
    assert_eq!(r.cmd_bytes(&[b"SET", b"\xfe\xfe", b"v"]), ok());
    assert_eq!(
        r.cmd_bytes(&[b"KEYS", b"\xfe*"]),
        Reply::Array(vec![Reply::Bulk(b"\xfe\xfe".to_vec())])
    );
}

#[test]
fn redis_crate_client_sees_the_same() {
    let server = Server::start(2, &[]);
    let mut c = server.client();
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg(b"\x00\x01")
        .query(&mut c)
        .unwrap();
    let v: Vec<u8> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, b"\x00\x01");
    let n: i64 = redis::cmd("INCRBY").arg("n").arg(5).query(&mut c).unwrap();
    assert_eq!(n, 5);
    let e = redis::cmd("INCR")
        .arg("k")
        .query::<i64>(&mut c)
        .unwrap_err();
    assert_eq!(e.detail(), Some("value is not an integer or out of range"));
}

/// Values stored inside the slot (up to 37 bytes) and in a buffer of their
/// own must read, edit and report OBJECT ENCODING the same: every command
/// that edits a string in place, taking it across that limit both ways,
/// answered as redis-server answers.
#[test]
fn edits_across_the_inline_limit_match_redis() {
    let Some(redis) = common::reference::Redis::or_skip("the inline string check") else {
        return;
    };
    let server = Server::start(1, &[]);
    let mut ember = server.raw();
    let mut reference = Raw::connect(redis.port);
    let x36 = "x".repeat(36);
    let x40 = "y".repeat(40);
    let digits = "1".repeat(19);
    let script: Vec<Vec<&str>> = vec![
        vec!["SET", "s", &x36],
        vec!["OBJECT", "ENCODING", "s"],
        vec!["APPEND", "s", "a"],
        vec!["OBJECT", "ENCODING", "s"],
        vec!["APPEND", "s", "bc"],
        vec!["GET", "s"],
        vec!["STRLEN", "s"],
        vec!["GETRANGE", "s", "30", "-1"],
        vec!["SETRANGE", "s", "50", "z"],
        vec!["GET", "s"],
        vec!["SET", "e", &x40],
        vec!["OBJECT", "ENCODING", "e"],
        vec!["SET", "e", "short"],
        vec!["OBJECT", "ENCODING", "e"],
        vec!["SETRANGE", "e", "35", "abcd"],
        vec!["GET", "e"],
        vec!["OBJECT", "ENCODING", "e"],
        vec!["SET", "n", &digits],
        vec!["OBJECT", "ENCODING", "n"],
        vec!["INCR", "n"],
        vec!["INCRBY", "n", "8888888888888888888"],
        vec!["SET", "n", "9223372036854775800"],
        vec!["INCRBY", "n", "7"],
        vec!["GET", "n"],
        vec!["OBJECT", "ENCODING", "n"],
        vec!["INCRBYFLOAT", "f", "1.5"],
        vec!["OBJECT", "ENCODING", "f"],
        vec!["INCRBYFLOAT", "f", "0.000000000000001"],
        vec!["GET", "f"],
        vec!["SETBIT", "b", "295", "1"],
        vec!["STRLEN", "b"],
        vec!["SETBIT", "b", "296", "1"],
        vec!["STRLEN", "b"],
        vec!["BITCOUNT", "b"],
        vec!["GETBIT", "b", "296"],
        vec![
            "BITFIELD", "b", "SET", "u8", "600", "255", "GET", "u8", "296",
        ],
        vec!["GET", "b"],
        vec!["SET", "o1", &x36],
        vec!["SET", "o2", &x40],
        vec!["BITOP", "OR", "o3", "o1", "o2"],
        vec!["GET", "o3"],
        vec!["OBJECT", "ENCODING", "o3"],
        vec!["PFADD", "h", "a", "b", "c"],
        vec!["PFCOUNT", "h"],
        vec!["APPEND", "new", &x36],
        vec!["OBJECT", "ENCODING", "new"],
        vec!["LCS", "s", "o1"],
        vec!["SET", "g", &x36],
        vec!["GETSET", "g", &x40],
        vec!["GETDEL", "g"],
    ];
    for args in &script {
        assert_eq!(ember.cmd(args), reference.cmd(args), "{args:?}");
    }
    // DUMP payloads cross both ways: each server restores the other's
    // (their LZF output may differ byte for byte, both being valid).
    for key in ["s", "e", "n", "f", "b", "o3", "h"] {
        let copy = format!("{key}-copy");
        for flip in [false, true] {
            let (from, to) = if flip {
                (&mut reference, &mut ember)
            } else {
                (&mut ember, &mut reference)
            };
            let Reply::Bulk(payload) = from.cmd(&["DUMP", key]) else {
                panic!("DUMP {key}");
            };
            let restore: [&[u8]; 4] = [b"RESTORE", copy.as_bytes(), b"0", &payload];
            assert_eq!(to.cmd_bytes(&restore), ok(), "{key}");
            assert_eq!(to.cmd(&["GET", &copy]), from.cmd(&["GET", key]), "{key}");
            to.cmd(&["DEL", &copy]);
        }
    }
}
