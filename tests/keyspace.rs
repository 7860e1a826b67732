//! Keyspace commands against a real ember, replies checked byte for byte
//! against what Redis 7.0 answers (observed on redis-server 7.0.15).

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{err, int, keys_on_shard, ok, simple, wait_until, Raw, Reply, Server};

const NOT_INT: &str = "ERR value is not an integer or out of range";
const SYNTAX: &str = "ERR syntax error";
const SAME: &str = "ERR source and destination objects are the same";
const DB_RANGE: &str = "ERR DB index is out of range";
const NO_SUCH_KEY: &str = "ERR no such key";

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn start() -> (Server, Raw) {
    let server = Server::start(2, &["--enable-debug-command", "local"]);
    let raw = server.raw();
    (server, raw)
}

/// The strings of an array reply, sorted.
fn sorted(reply: Reply) -> Vec<String> {
    let Reply::Array(items) = reply else {
        panic!("expected an array, got {reply:?}");
    };
    let mut out: Vec<String> = items
        .into_iter()
        .map(|i| match i {
            Reply::Bulk(b) => String::from_utf8(b).unwrap(),
            other => panic!("expected a bulk, got {other:?}"),
        })
        .collect();
    out.sort();
    out
}

fn set_of(items: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// Runs a full SCAN with `opts`, checking the cursor protocol, and returns
/// every key seen (sorted, duplicates kept).
fn full_scan(r: &mut Raw, opts: &[&str]) -> Vec<String> {
    let mut cursor = "0".to_string();
    let mut seen = Vec::new();
    for _ in 0..100_000 {
        let mut cmd = vec!["SCAN", cursor.as_str()];
        cmd.extend_from_slice(opts);
        let Reply::Array(parts) = r.cmd(&cmd) else {
            panic!("SCAN answered a non-array");
        };
        let [Reply::Bulk(next), keys] = &parts[..] else {
            panic!("SCAN answered {parts:?}");
        };
        seen.extend(sorted(keys.clone()));
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            seen.sort();
            return seen;
        }
    }
    panic!("SCAN never finished");
}

#[test]
fn del_unlink_exists_touch_count() {
    let (_s, mut r) = start();
    let a = keys_on_shard("a", 0, 2, 2);
    let z = keys_on_shard("z", 1, 2, 2);
    assert_eq!(
        r.cmd(&["MSET", &a[0], "1", &a[1], "1", &z[0], "1", &z[1], "1"]),
        ok()
    );
    // EXISTS and TOUCH count a repeated key each time it is named.
    assert_eq!(r.cmd(&["EXISTS", &a[0], &a[0], "nokey"]), int(2));
    assert_eq!(r.cmd(&["EXISTS", &a[0], &z[0], &z[0], &a[1]]), int(4));
    assert_eq!(r.cmd(&["EXISTS", "nokey"]), int(0));
    assert_eq!(r.cmd(&["TOUCH", &a[0], &a[0], "nokey"]), int(2));
    assert_eq!(r.cmd(&["TOUCH", &a[0], &z[1]]), int(2));
    // DEL counts each key removed once.
    assert_eq!(r.cmd(&["DEL", &a[0], &a[0]]), int(1));
    assert_eq!(r.cmd(&["DEL", &a[1], &z[0], "nokey"]), int(2));
    assert_eq!(r.cmd(&["UNLINK", &z[1], "nokey"]), int(1));
    assert_eq!(r.cmd(&["UNLINK", &z[1]]), int(0));
    assert_eq!(r.cmd(&["DBSIZE"]), int(0));
    assert_eq!(
        r.cmd(&["DEL"]),
        err("ERR wrong number of arguments for 'del' command")
    );
    assert_eq!(
        r.cmd(&["EXISTS"]),
        err("ERR wrong number of arguments for 'exists' command")
    );
}

#[test]
fn type_of_keys() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["TYPE", "k"]), simple("none"));
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["TYPE", "k"]), simple("string"));
    assert_eq!(r.cmd(&["SET", "n", "12"]), ok());
    assert_eq!(r.cmd(&["TYPE", "n"]), simple("string"));
    assert_eq!(r.cmd(&["SET", "gone", "v", "PX", "1"]), ok());
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(r.cmd(&["TYPE", "gone"]), simple("none"));
}

fn check_rename(r: &mut Raw, src: &str, dst: &str) {
    assert_eq!(r.cmd(&["SET", src, "v1"]), ok());
    assert_eq!(r.cmd(&["RENAME", src, dst]), ok());
    assert_eq!(r.cmd(&["GET", dst]), b("v1"));
    assert_eq!(r.cmd(&["EXISTS", src]), int(0));
    // Over an existing destination.
    assert_eq!(r.cmd(&["SET", src, "v2"]), ok());
    assert_eq!(r.cmd(&["RENAME", src, dst]), ok());
    assert_eq!(r.cmd(&["GET", dst]), b("v2"));
    assert_eq!(r.cmd(&["RENAME", src, dst]), err(NO_SUCH_KEY));
    assert_eq!(r.cmd(&["RENAMENX", src, dst]), err(NO_SUCH_KEY));
    // RENAMENX refuses an existing destination.
    assert_eq!(r.cmd(&["SET", src, "v3"]), ok());
    assert_eq!(r.cmd(&["RENAMENX", src, dst]), int(0));
    assert_eq!(r.cmd(&["GET", src]), b("v3"));
    assert_eq!(r.cmd(&["GET", dst]), b("v2"));
    assert_eq!(r.cmd(&["DEL", dst]), int(1));
    assert_eq!(r.cmd(&["RENAMENX", src, dst]), int(1));
    assert_eq!(r.cmd(&["GET", dst]), b("v3"));
    assert_eq!(r.cmd(&["EXISTS", src]), int(0));
    assert_eq!(r.cmd(&["DEL", dst]), int(1));
}

#[test]
fn rename_and_renamenx() {
    let (_s, mut r) = start();
    let k = keys_on_shard("r", 0, 2, 2);
    check_rename(&mut r, &k[0], &k[1]);
    // Same key: RENAME is a no-op OK, RENAMENX answers 0.
    assert_eq!(r.cmd(&["SET", "same", "v"]), ok());
    assert_eq!(r.cmd(&["RENAME", "same", "same"]), ok());
    assert_eq!(r.cmd(&["RENAMENX", "same", "same"]), int(0));
    assert_eq!(r.cmd(&["GET", "same"]), b("v"));
    assert_eq!(r.cmd(&["RENAME", "nokey", "x"]), err(NO_SUCH_KEY));
    assert_eq!(r.cmd(&["RENAMENX", "nokey", "x"]), err(NO_SUCH_KEY));
    assert_eq!(r.cmd(&["RENAME", "nokey", "nokey"]), err(NO_SUCH_KEY));
    assert_eq!(r.cmd(&["RENAMENX", "nokey", "nokey"]), err(NO_SUCH_KEY));
    assert_eq!(r.cmd(&["EXISTS", "x"]), int(0));
}

#[test]
fn rename_across_shards() {
    let (_s, mut r) = start();
    let a = keys_on_shard("r", 0, 2, 1);
    let z = keys_on_shard("r", 1, 2, 1);
    check_rename(&mut r, &a[0], &z[0]);
    check_rename(&mut r, &z[0], &a[0]);
}

#[test]
fn rename_on_one_shard_server() {
    let server = Server::start(1, &[]);
    let mut r = server.raw();
    check_rename(&mut r, "src", "dst");
}

fn check_copy(r: &mut Raw, src: &str, dst: &str) {
    assert_eq!(r.cmd(&["SET", src, "v"]), ok());
    assert_eq!(r.cmd(&["COPY", src, dst]), int(1));
    assert_eq!(r.cmd(&["GET", dst]), b("v"));
    assert_eq!(r.cmd(&["GET", src]), b("v"));
    assert_eq!(r.cmd(&["SET", src, "w"]), ok());
    assert_eq!(r.cmd(&["COPY", src, dst]), int(0));
    assert_eq!(r.cmd(&["GET", dst]), b("v"));
    assert_eq!(r.cmd(&["COPY", src, dst, "REPLACE"]), int(1));
    assert_eq!(r.cmd(&["GET", dst]), b("w"));
    // The copy is independent of its source.
    assert_eq!(r.cmd(&["APPEND", src, "x"]), int(2));
    assert_eq!(r.cmd(&["GET", dst]), b("w"));
    assert_eq!(r.cmd(&["COPY", "nokey", dst]), int(0));
    assert_eq!(r.cmd(&["COPY", "nokey", dst, "REPLACE"]), int(0));
    assert_eq!(r.cmd(&["GET", dst]), b("w"));
    assert_eq!(r.cmd(&["DEL", src, dst]), int(2));
}

#[test]
fn copy_same_shard_and_options() {
    let (s, mut r) = start();
    let k = keys_on_shard("c", 1, 2, 2);
    check_copy(&mut r, &k[0], &k[1]);
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["COPY", "k", "k"]), err(SAME));
    assert_eq!(r.cmd(&["COPY", "k", "k", "DB", "0"]), err(SAME));
    assert_eq!(r.cmd(&["COPY", "nokey", "nokey"]), err(SAME));
    assert_eq!(r.cmd(&["COPY", "k", "k", "DB", "99"]), err(DB_RANGE));
    assert_eq!(r.cmd(&["COPY", "k", "k", "DB", "16"]), err(DB_RANGE));
    assert_eq!(r.cmd(&["COPY", "k", "k", "DB", "-1"]), err(DB_RANGE));
    assert_eq!(r.cmd(&["COPY", "k", "k", "DB", "abc"]), err(NOT_INT));
    assert_eq!(r.cmd(&["COPY", "k", "c", "FOO"]), err(SYNTAX));
    assert_eq!(r.cmd(&["COPY", "k", "c", "DB"]), err(SYNTAX));
    assert_eq!(r.cmd(&["EXISTS", "c"]), int(0));
    // To another database, same name allowed there.
    assert_eq!(r.cmd(&["COPY", "k", "k", "DB", "1"]), int(1));
    assert_eq!(r.cmd(&["COPY", "k", "k", "DB", "1"]), int(0));
    assert_eq!(r.cmd(&["COPY", "k", "k", "db", "1", "replace"]), int(1));
    let mut other = s.raw();
    assert_eq!(other.cmd(&["SELECT", "1"]), ok());
    assert_eq!(other.cmd(&["GET", "k"]), b("v"));
    assert_eq!(other.cmd(&["DBSIZE"]), int(1));
    // From db 1, DB 1 names the same object, DB 0 does not.
    assert_eq!(other.cmd(&["COPY", "k", "k", "DB", "1"]), err(SAME));
    assert_eq!(other.cmd(&["SET", "only1", "x"]), ok());
    assert_eq!(other.cmd(&["COPY", "only1", "only1", "DB", "0"]), int(1));
    assert_eq!(r.cmd(&["GET", "only1"]), b("x"));
}

#[test]
fn copy_across_shards() {
    let (s, mut r) = start();
    let a = keys_on_shard("c", 0, 2, 1);
    let z = keys_on_shard("c", 1, 2, 1);
    check_copy(&mut r, &a[0], &z[0]);
    check_copy(&mut r, &z[0], &a[0]);
    assert_eq!(r.cmd(&["SET", &a[0], "v"]), ok());
    assert_eq!(r.cmd(&["COPY", &a[0], &z[0], "DB", "2"]), int(1));
    let mut other = s.raw();
    assert_eq!(other.cmd(&["SELECT", "2"]), ok());
    assert_eq!(other.cmd(&["GET", &z[0]]), b("v"));
    assert_eq!(r.cmd(&["EXISTS", &z[0]]), int(0));
}

#[test]
fn move_between_databases() {
    let (s, mut r) = start();
    let mut db1 = s.raw();
    assert_eq!(db1.cmd(&["SELECT", "1"]), ok());
    assert_eq!(r.cmd(&["SET", "k", "v", "EX", "100"]), ok());
    assert_eq!(r.cmd(&["MOVE", "k", "1"]), int(1));
    assert_eq!(r.cmd(&["EXISTS", "k"]), int(0));
    assert_eq!(db1.cmd(&["GET", "k"]), b("v"));
    assert_eq!(db1.cmd(&["TTL", "k"]), int(100));
    // The key exists in the target: nothing moves.
    assert_eq!(r.cmd(&["SET", "k", "v2"]), ok());
    assert_eq!(r.cmd(&["MOVE", "k", "1"]), int(0));
    assert_eq!(r.cmd(&["GET", "k"]), b("v2"));
    assert_eq!(db1.cmd(&["GET", "k"]), b("v"));
    assert_eq!(r.cmd(&["MOVE", "nokey", "1"]), int(0));
    // Errors.
    assert_eq!(r.cmd(&["MOVE", "k", "0"]), err(SAME));
    assert_eq!(r.cmd(&["MOVE", "nokey", "0"]), err(SAME));
    assert_eq!(r.cmd(&["MOVE", "k", "99"]), err(DB_RANGE));
    assert_eq!(r.cmd(&["MOVE", "k", "-1"]), err(DB_RANGE));
    assert_eq!(r.cmd(&["MOVE", "k", "abc"]), err(NOT_INT));
    assert_eq!(r.cmd(&["MOVE", "k", "8x"]), err(NOT_INT));
    assert_eq!(
        r.cmd(&["MOVE", "k", "4294967296"]),
        err("ERR value is out of range, value must between -2147483648 and 2147483647")
    );
    assert_eq!(r.cmd(&["GET", "k"]), b("v2"));
    // Back from db 1 to db 0 after the clash is gone.
    assert_eq!(r.cmd(&["DEL", "k"]), int(1));
    assert_eq!(db1.cmd(&["MOVE", "k", "0"]), int(1));
    assert_eq!(r.cmd(&["GET", "k"]), b("v"));
    assert_eq!(r.cmd(&["TTL", "k"]), int(100));
}

const GLOB_KEYS: &[&str] = &[
    "hello", "hallo", "hxllo", "hllo", "heeello", "h*llo", "h?llo", "hbllo",
];

fn glob_cases() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        (
            "h?llo",
            vec!["h*llo", "hello", "hxllo", "h?llo", "hbllo", "hallo"],
        ),
        ("h*llo", GLOB_KEYS.to_vec()),
        ("h[ae]llo", vec!["hello", "hallo"]),
        (
            "h[^e]llo",
            vec!["hxllo", "h?llo", "hbllo", "hallo", "h*llo"],
        ),
        ("h[a-b]llo", vec!["hbllo", "hallo"]),
        ("h\\*llo", vec!["h*llo"]),
        ("h\\?llo", vec!["h?llo"]),
        ("*", GLOB_KEYS.to_vec()),
        ("nomatch*", vec![]),
        ("hello", vec!["hello"]),
    ]
}

#[test]
fn keys_glob_patterns() {
    let (_s, mut r) = start();
    for k in GLOB_KEYS {
        assert_eq!(r.cmd(&["SET", k, "1"]), ok());
    }
    for (pattern, want) in glob_cases() {
        assert_eq!(
            sorted(r.cmd(&["KEYS", pattern])),
            set_of(&want),
            "{pattern}"
        );
    }
}

#[test]
fn scan_match_count_type() {
    let (_s, mut r) = start();
    for k in GLOB_KEYS {
        assert_eq!(r.cmd(&["SET", k, "1"]), ok());
    }
    for (pattern, want) in glob_cases() {
        assert_eq!(
            full_scan(&mut r, &["MATCH", pattern, "COUNT", "3"]),
            set_of(&want),
            "{pattern}"
        );
    }
    // Many keys, small COUNT: each key exactly once.
    let many: Vec<String> = (0..500).map(|i| format!("many:{i}")).collect();
    for k in &many {
        assert_eq!(r.cmd(&["SET", k, "v"]), ok());
    }
    let mut want: Vec<String> = many.clone();
    want.extend(GLOB_KEYS.iter().map(|s| s.to_string()));
    want.sort();
    assert_eq!(full_scan(&mut r, &[]), want);
    assert_eq!(full_scan(&mut r, &["COUNT", "7"]), want);
    assert_eq!(full_scan(&mut r, &["count", "1000"]), want);
    assert_eq!(full_scan(&mut r, &["TYPE", "string", "COUNT", "50"]), want);
    assert_eq!(full_scan(&mut r, &["TYPE", "STRING"]), want);
    assert_eq!(
        full_scan(&mut r, &["TYPE", "list", "COUNT", "100"]),
        Vec::<String>::new()
    );
    assert_eq!(
        full_scan(&mut r, &["TYPE", "foo", "COUNT", "100"]),
        Vec::<String>::new()
    );
    assert_eq!(
        full_scan(&mut r, &["MATCH", "many:4?", "COUNT", "10"]).len(),
        10
    );
}

#[test]
fn scan_errors() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SCAN", "abc"]), err("ERR invalid cursor"));
    assert_eq!(
        r.cmd(&["SCAN", "18446744073709551616"]),
        err("ERR invalid cursor")
    );
    assert_eq!(r.cmd(&["SCAN", "0", "COUNT", "0"]), err(SYNTAX));
    assert_eq!(r.cmd(&["SCAN", "0", "COUNT", "-1"]), err(SYNTAX));
    assert_eq!(r.cmd(&["SCAN", "0", "COUNT", "abc"]), err(NOT_INT));
    assert_eq!(r.cmd(&["SCAN", "0", "MATCH"]), err(SYNTAX));
    assert_eq!(r.cmd(&["SCAN", "0", "foo", "bar"]), err(SYNTAX));
    assert_eq!(
        r.cmd(&["SCAN"]),
        err("ERR wrong number of arguments for 'scan' command")
    );
    // An empty database: cursor 0 and no keys.
    assert_eq!(
        r.cmd(&["SCAN", "0"]),
        Reply::Array(vec![b("0"), Reply::Array(vec![])])
    );
}

#[test]
fn randomkey() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["RANDOMKEY"]), Reply::Nil);
    assert_eq!(r.cmd(&["SET", "only", "v"]), ok());
    for _ in 0..10 {
        assert_eq!(r.cmd(&["RANDOMKEY"]), b("only"));
    }
    let a = keys_on_shard("rk", 0, 2, 1);
    let z = keys_on_shard("rk", 1, 2, 1);
    assert_eq!(r.cmd(&["DEL", "only"]), int(1));
    assert_eq!(r.cmd(&["MSET", &a[0], "1", &z[0], "1"]), ok());
    let mut seen = BTreeSet::new();
    for _ in 0..200 {
        match r.cmd(&["RANDOMKEY"]) {
            Reply::Bulk(k) => {
                seen.insert(String::from_utf8(k).unwrap());
            }
            other => panic!("RANDOMKEY answered {other:?}"),
        }
        if seen.len() == 2 {
            break;
        }
    }
    assert_eq!(seen, [a[0].clone(), z[0].clone()].into_iter().collect());
}

#[test]
fn object_encoding() {
    let (_s, mut r) = start();
    let a44 = "a".repeat(44);
    let a45 = "a".repeat(45);
    let cases = [
        ("12345", "int"),
        ("-1", "int"),
        ("0", "int"),
        ("9223372036854775807", "int"),
        ("-9223372036854775808", "int"),
        ("9223372036854775808", "embstr"),
        ("123456789012345678901", "embstr"),
        (" 1", "embstr"),
        ("01", "embstr"),
        ("abc", "embstr"),
        ("", "embstr"),
        (a44.as_str(), "embstr"),
        (a45.as_str(), "raw"),
    ];
    for (value, want) in cases {
        assert_eq!(r.cmd(&["SET", "k", value]), ok());
        assert_eq!(r.cmd(&["OBJECT", "ENCODING", "k"]), b(want), "{value:?}");
    }
    assert_eq!(r.cmd(&["SET", "n", "abc"]), ok());
    assert_eq!(r.cmd(&["SET", "n", "10"]), ok());
    assert_eq!(r.cmd(&["INCR", "n"]), int(11));
    assert_eq!(r.cmd(&["OBJECT", "ENCODING", "n"]), b("int"));
    assert_eq!(r.cmd(&["OBJECT", "encoding", "nokey"]), Reply::Nil);
}

/// Redis chooses a string's encoding when it writes it: APPEND to a string
/// and SETRANGE make it `raw` whatever its length, INCRBYFLOAT's text is
/// never `int`, and COPY/RENAME keep what the value had.
#[test]
fn object_encoding_follows_the_command_that_wrote_the_string() {
    let (_s, mut r) = start();
    let enc = |r: &mut Raw, key: &str| r.cmd(&["OBJECT", "ENCODING", key]);
    assert_eq!(r.cmd(&["SET", "k", "ab"]), ok());
    assert_eq!(r.cmd(&["APPEND", "k", "c"]), int(3));
    assert_eq!(enc(&mut r, "k"), b("raw"));
    assert_eq!(r.cmd(&["COPY", "k", "k2"]), int(1));
    assert_eq!(r.cmd(&["RENAME", "k2", "k3"]), ok());
    assert_eq!(enc(&mut r, "k3"), b("raw"));
    assert_eq!(r.cmd(&["SET", "k", "abc"]), ok());
    assert_eq!(enc(&mut r, "k"), b("embstr"), "a SET writes it anew");
    // APPEND creating the key stores the argument as SET would.
    assert_eq!(r.cmd(&["APPEND", "n", "12"]), int(2));
    assert_eq!(enc(&mut r, "n"), b("int"));
    assert_eq!(r.cmd(&["APPEND", "n", ""]), int(2));
    assert_eq!(enc(&mut r, "n"), b("raw"), "even an empty APPEND");
    assert_eq!(r.cmd(&["INCR", "n"]), int(13));
    assert_eq!(enc(&mut r, "n"), b("int"));
    assert_eq!(r.cmd(&["SETRANGE", "m", "0", "x"]), int(1));
    assert_eq!(enc(&mut r, "m"), b("raw"));
    assert_eq!(r.cmd(&["SET", "e", "ab"]), ok());
    assert_eq!(r.cmd(&["SETRANGE", "e", "5", ""]), int(2));
    assert_eq!(
        enc(&mut r, "e"),
        b("embstr"),
        "an empty SETRANGE changes nothing"
    );
    assert_eq!(r.cmd(&["INCRBYFLOAT", "f", "3"]), b("3"));
    assert_eq!(enc(&mut r, "f"), b("embstr"));
    // Only `int` strings share Redis's integers 0..10000.
    assert_eq!(r.cmd(&["OBJECT", "REFCOUNT", "f"]), int(1));
    assert_eq!(r.cmd(&["SET", "g", "5"]), ok());
    assert_eq!(r.cmd(&["OBJECT", "REFCOUNT", "g"]), int(2147483647));
    assert_eq!(r.cmd(&["APPEND", "g", ""]), int(1));
    assert_eq!(r.cmd(&["OBJECT", "REFCOUNT", "g"]), int(1));
}

#[test]
fn object_refcount_freq_and_errors() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "100"]), ok());
    assert_eq!(r.cmd(&["OBJECT", "REFCOUNT", "k"]), int(2147483647));
    assert_eq!(r.cmd(&["SET", "k", "10000"]), ok());
    assert_eq!(r.cmd(&["OBJECT", "REFCOUNT", "k"]), int(1));
    assert_eq!(r.cmd(&["SET", "k", "-1"]), ok());
    assert_eq!(r.cmd(&["OBJECT", "REFCOUNT", "k"]), int(1));
    assert_eq!(r.cmd(&["SET", "k", "abc"]), ok());
    assert_eq!(r.cmd(&["OBJECT", "REFCOUNT", "k"]), int(1));
    assert_eq!(
        r.cmd(&["OBJECT", "FREQ", "k"]),
        err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
    );
    for sub in ["ENCODING", "IDLETIME", "FREQ", "REFCOUNT"] {
        assert_eq!(r.cmd(&["OBJECT", sub, "nokey"]), Reply::Nil, "{sub}");
    }
    assert_eq!(
        r.cmd(&["OBJECT", "foo", "k"]),
        err("ERR unknown subcommand 'foo'. Try OBJECT HELP.")
    );
    assert_eq!(
        r.cmd(&["OBJECT"]),
        err("ERR wrong number of arguments for 'object' command")
    );
    assert_eq!(
        r.cmd(&["OBJECT", "ENCODING"]),
        err("ERR wrong number of arguments for 'object|encoding' command")
    );
    assert_eq!(
        r.cmd(&["OBJECT", "encoding", "a", "b"]),
        err("ERR wrong number of arguments for 'object|encoding' command")
    );
    let help = [
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    ];
    assert_eq!(
        r.cmd(&["OBJECT", "HELP"]),
        Reply::Array(help.iter().map(|l| simple(l)).collect())
    );
}

#[test]
fn object_idletime() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["SET", "k", "v"]), ok());
    assert_eq!(r.cmd(&["OBJECT", "IDLETIME", "k"]), int(0));
    // OBJECT IDLETIME itself does not count as an access.
    assert!(wait_until(Duration::from_secs(4), || {
        r.int(&["OBJECT", "IDLETIME", "k"]) >= 1
    }));
    assert_eq!(r.cmd(&["GET", "k"]), b("v"));
    assert_eq!(r.cmd(&["OBJECT", "IDLETIME", "k"]), int(0));
}

#[test]
fn dbsize_counts_expired_keys_until_removed() {
    let (_s, mut r) = start();
    assert_eq!(r.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), ok());
    let a = keys_on_shard("d", 0, 2, 2);
    let z = keys_on_shard("d", 1, 2, 2);
    for k in [&a[0], &z[0]] {
        assert_eq!(r.cmd(&["SET", k, "v", "PX", "30"]), ok());
    }
    for k in [&a[1], &z[1]] {
        assert_eq!(r.cmd(&["SET", k, "v"]), ok());
    }
    assert_eq!(r.cmd(&["DBSIZE"]), int(4));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(r.cmd(&["DBSIZE"]), int(4));
    assert_eq!(
        sorted(r.cmd(&["KEYS", "*"])),
        set_of(&[a[1].as_str(), z[1].as_str()])
    );
    assert_eq!(r.cmd(&["DBSIZE"]), int(4), "KEYS does not delete");
    assert_eq!(r.cmd(&["EXISTS", &a[0]]), int(0));
    assert_eq!(r.cmd(&["DBSIZE"]), int(3));
    assert_eq!(r.cmd(&["GET", &z[0]]), Reply::Nil);
    assert_eq!(r.cmd(&["DBSIZE"]), int(2));
    assert_eq!(r.cmd(&["FLUSHDB"]), ok());
    assert_eq!(r.cmd(&["DBSIZE"]), int(0));
}
