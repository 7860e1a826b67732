//! Hashes, first part. Replies checked against redis-server 7.0.

mod common;

use common::{Reply, Server};

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn err(s: &str) -> Reply {
    Reply::Error(s.into())
}

#[test]
fn fields_counters_and_listings() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    assert_eq!(c.cmd(&["HSET", "H", "a", "1", "b", "2"]), Reply::Int(2));
    assert_eq!(c.cmd(&["HSET", "H", "a", "3"]), Reply::Int(0));
    assert_eq!(
        c.cmd(&["HSET", "H", "a"]),
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(c.cmd(&["HGET", "H", "a"]), b("3"));
    assert_eq!(c.cmd(&["HGET", "H", "zz"]), Reply::Nil);
    assert_eq!(c.cmd(&["HSETNX", "H", "a", "9"]), Reply::Int(0));
    assert_eq!(c.cmd(&["HSETNX", "H", "c", "9"]), Reply::Int(1));
    assert_eq!(
        c.cmd(&["HMGET", "H", "a", "zz", "c"]),
        Reply::Array(vec![b("3"), Reply::Nil, b("9")])
    );
    assert_eq!(
        c.cmd(&["HMGET", "missing", "a"]),
        Reply::Array(vec![Reply::Nil])
    );
    assert_eq!(c.cmd(&["HLEN", "H"]), Reply::Int(3));
    assert_eq!(c.cmd(&["HEXISTS", "H", "a"]), Reply::Int(1));
    assert_eq!(c.cmd(&["HDEL", "H", "a", "zz"]), Reply::Int(1));
    assert_eq!(c.cmd(&["HINCRBY", "H", "n", "5"]), Reply::Int(5));
    assert_eq!(
        c.cmd(&["HINCRBY", "H", "c", "abc"]),
        err("ERR value is not an integer or out of range")
    );
    c.cmd(&["HSET", "H", "f", "x"]);
    assert_eq!(
        c.cmd(&["HINCRBY", "H", "f", "1"]),
        err("ERR hash value is not an integer")
    );
    assert_eq!(
        c.cmd(&["HINCRBYFLOAT", "H", "f", "1"]),
        err("ERR hash value is not a float")
    );
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "H", "fl", "1.5"]), b("1.5"));
    // Small hashes keep insertion order, deletes included.
    let all = ["b", "2", "c", "9", "n", "5", "f", "x", "fl", "1.5"]
        .map(b)
        .to_vec();
    assert_eq!(c.cmd(&["HGETALL", "H"]), Reply::Array(all));
    assert_eq!(
        c.cmd(&["HKEYS", "H"]),
        Reply::Array(["b", "c", "n", "f", "fl"].map(b).to_vec())
    );
    assert_eq!(
        c.cmd(&["HVALS", "H"]),
        Reply::Array(["2", "9", "5", "x", "1.5"].map(b).to_vec())
    );
    assert_eq!(c.cmd(&["HSTRLEN", "H", "fl"]), Reply::Int(3));
    assert_eq!(c.cmd(&["HMSET", "H", "x", "1"]), Reply::Simple("OK".into()));
    assert_eq!(
        c.cmd(&["HMSET", "H", "x"]),
        err("ERR wrong number of arguments for 'hmset' command")
    );
    c.cmd(&["HSET", "H", "big", "9223372036854775807"]);
    assert_eq!(
        c.cmd(&["HINCRBY", "H", "big", "1"]),
        err("ERR increment or decrement would overflow")
    );
    // Redis 7.0 refuses an infinite increment with its own text.
    assert_eq!(
        c.cmd(&["HINCRBYFLOAT", "Q", "f", "inf"]),
        err("ERR value is NaN or Infinity")
    );
    assert_eq!(
        c.cmd(&["EXISTS", "Q"]),
        Reply::Int(0),
        "a failed call leaves nothing behind"
    );
    // RESP3: HGETALL is a map.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(c.cmd(&["HGETALL", "H2"]), Reply::Map(vec![]));
    c.cmd(&["HSET", "H2", "k", "v"]);
    assert_eq!(
        c.cmd(&["HGETALL", "H2"]),
        Reply::Map(vec![(b("k"), b("v"))])
    );
}

#[test]
fn session_hash_keeps_its_ttl_and_goes_with_its_last_field() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["HSET", "session:1", "user", "42", "cart", "3"]);
    assert_eq!(c.cmd(&["EXPIRE", "session:1", "1800"]), Reply::Int(1));
    c.cmd(&["HINCRBY", "session:1", "cart", "1"]);
    c.cmd(&["HSET", "session:1", "page", "/checkout"]);
    assert!(matches!(c.cmd(&["TTL", "session:1"]), Reply::Int(t) if t > 1790));
    assert_eq!(c.cmd(&["TYPE", "session:1"]), Reply::Simple("hash".into()));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "session:1"]), b("listpack"));
    assert_eq!(
        c.cmd(&["HDEL", "session:1", "user", "cart", "page"]),
        Reply::Int(3)
    );
    assert_eq!(c.cmd(&["EXISTS", "session:1"]), Reply::Int(0));
    c.cmd(&["SET", "s", "v"]);
    let wrong = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(c.cmd(&["HSET", "s", "a", "1"]), wrong);
    c.cmd(&["HSET", "h", "a", "1"]);
    assert_eq!(c.cmd(&["GET", "h"]), wrong);
    assert_eq!(c.cmd(&["LPUSH", "h", "x"]), wrong);
}

// Encodings: small hashes are listpacks until a limit is passed, then
// hashtables for good. Expected answers are redis-server 7.0.15's.

fn encoding(c: &mut common::Raw, key: &str) -> Reply {
    c.cmd(&["OBJECT", "ENCODING", key])
}

/// `HSET key` with fields `{prefix}0..{prefix}{n-1}`, each valued `v`.
fn hset_many(c: &mut common::Raw, key: &str, prefix: &str, n: usize) -> Reply {
    let fields: Vec<String> = (0..n).map(|i| format!("{prefix}{i}")).collect();
    let mut args = vec!["HSET", key];
    for f in &fields {
        args.extend([f.as_str(), "v"]);
    }
    c.cmd(&args)
}

#[test]
fn small_hashes_are_listpacks_until_a_limit_is_passed() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    // Entries: redis-server without a config file allows 512.
    assert_eq!(hset_many(&mut c, "h", "f", 512), Reply::Int(512));
    assert_eq!(encoding(&mut c, "h"), b("listpack"));
    assert_eq!(c.cmd(&["HSET", "h", "f0", "w"]), Reply::Int(0));
    assert_eq!(
        encoding(&mut c, "h"),
        b("listpack"),
        "an overwrite adds nothing"
    );
    assert_eq!(c.cmd(&["HSET", "h", "f512", "v"]), Reply::Int(1));
    assert_eq!(encoding(&mut c, "h"), b("hashtable"));
    let gone: Vec<String> = (1..=512).map(|i| format!("f{i}")).collect();
    let mut hdel = vec!["HDEL", "h"];
    hdel.extend(gone.iter().map(String::as_str));
    assert_eq!(c.cmd(&hdel), Reply::Int(512));
    assert_eq!(
        c.cmd(&["HGETALL", "h"]),
        Reply::Array(vec![b("f0"), b("w")])
    );
    assert_eq!(encoding(&mut c, "h"), b("hashtable"), "never converts back");

    // Lengths: 64 bytes fit, 65 convert, for a value or a field.
    let (fits, long) = ("x".repeat(64), "x".repeat(65));
    c.cmd(&["HSET", "v", "a", &fits, &fits, "1"]);
    assert_eq!(encoding(&mut c, "v"), b("listpack"));
    c.cmd(&["HSET", "v", "b", &long]);
    assert_eq!(encoding(&mut c, "v"), b("hashtable"));
    assert_eq!(c.cmd(&["HGET", "v", "b"]), b(&long));
    assert_eq!(c.cmd(&["HGET", "v", &fits]), b("1"));
    c.cmd(&["HSET", "f", &long, "1"]);
    assert_eq!(encoding(&mut c, "f"), b("hashtable"));
    c.cmd(&["HSET", "n", "a", "1"]);
    assert_eq!(c.cmd(&["HINCRBY", "n", &long, "2"]), Reply::Int(2));
    assert_eq!(encoding(&mut c, "n"), b("hashtable"));
    // HSETNX converts only when it writes.
    c.cmd(&["HSET", "nx", "a", "1"]);
    assert_eq!(c.cmd(&["HSETNX", "nx", "a", &long]), Reply::Int(0));
    assert_eq!(encoding(&mut c, "nx"), b("listpack"));
    assert_eq!(c.cmd(&["HSETNX", "nx", "b", &long]), Reply::Int(1));
    assert_eq!(encoding(&mut c, "nx"), b("hashtable"));
    assert_eq!(c.cmd(&["HGET", "nx", "a"]), b("1"));
    // A hash emptied is deleted; the next one starts small again.
    c.cmd(&["HDEL", "v", "a", "b", &fits]);
    assert_eq!(c.cmd(&["HINCRBYFLOAT", "v", "a", "1.5"]), b("1.5"));
    assert_eq!(encoding(&mut c, "v"), b("listpack"));
}

#[test]
fn a_field_deadline_converts_the_hash() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3"]);
    let missing = c.cmd(&["HEXPIRE", "h", "100", "FIELDS", "1", "zz"]);
    assert_eq!(missing, Reply::Array(vec![Reply::Int(-2)]));
    assert_eq!(
        encoding(&mut c, "h"),
        b("listpack"),
        "no field, no deadline"
    );
    let set = c.cmd(&["HEXPIRE", "h", "100", "FIELDS", "1", "b"]);
    assert_eq!(set, Reply::Array(vec![Reply::Int(1)]));
    // Redis 7.4 keeps small hashes with deadlines in a `listpackex`; ember
    // moves them to its table form.
    assert_eq!(encoding(&mut c, "h"), b("hashtable"));
    assert_eq!(
        c.cmd(&["HPERSIST", "h", "FIELDS", "1", "b"]),
        Reply::Array(vec![Reply::Int(1)])
    );
    assert_eq!(encoding(&mut c, "h"), b("hashtable"));
    assert_eq!(
        c.cmd(&["HGETALL", "h"]),
        Reply::Array(["a", "1", "b", "2", "c", "3"].map(b).to_vec()),
        "fields keep their order through the conversion"
    );
}

#[test]
fn config_set_moves_the_limits_on_every_shard() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let pair = |name: &str, value: &str| Reply::Array(vec![b(name), b(value)]);
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "hash-max-listpack-entries"]),
        pair("hash-max-listpack-entries", "512")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "hash-max-ziplist-value"]),
        pair("hash-max-ziplist-value", "64")
    );
    let keys = [
        common::keys_on_shard("a", 0, 2, 1).remove(0),
        common::keys_on_shard("b", 1, 2, 1).remove(0),
    ];
    for key in &keys {
        assert_eq!(hset_many(&mut c, key, "f", 200), Reply::Int(200));
    }
    // The sample redis.conf's value, set at run time (`ziplist` names too).
    let ok = Reply::Simple("OK".into());
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "hash-max-ziplist-entries", "128"]),
        ok
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "hash-max-listpack-entries"]),
        pair("hash-max-listpack-entries", "128")
    );
    for key in &keys {
        let small = format!("{key}:small");
        assert_eq!(hset_many(&mut c, &small, "f", 128), Reply::Int(128));
        assert_eq!(encoding(&mut c, &small), b("listpack"));
        c.cmd(&["HSET", &small, "f128", "v"]);
        assert_eq!(encoding(&mut c, &small), b("hashtable"), "129 fields");
        // A listpack over the new limit converts at its next write.
        assert_eq!(encoding(&mut c, key), b("listpack"));
        c.cmd(&["HSET", key, "f0", "w"]);
        assert_eq!(encoding(&mut c, key), b("hashtable"));
    }
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "hash-max-listpack-value", "1kb"]),
        ok
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "hash-max-listpack-value"]),
        pair("hash-max-listpack-value", "1024")
    );
    for key in &keys {
        let wide = format!("{key}:wide");
        c.cmd(&["HSET", &wide, "a", &"x".repeat(1024)]);
        assert_eq!(encoding(&mut c, &wide), b("listpack"));
        c.cmd(&["HSET", &wide, "b", &"x".repeat(1025)]);
        assert_eq!(encoding(&mut c, &wide), b("hashtable"));
    }
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "hash-max-listpack-value", "-1"]),
        err("ERR CONFIG SET failed (possibly related to argument 'hash-max-listpack-value') - argument must be a memory value")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "-1"]),
        err("ERR CONFIG SET failed (possibly related to argument 'hash-max-listpack-entries') - argument must be between 0 and 9223372036854775807 inclusive")
    );
    // 0 entries: every hash is a hashtable from its first field.
    c.cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "0"]);
    c.cmd(&["HSET", "zero", "a", "1"]);
    assert_eq!(encoding(&mut c, "zero"), b("hashtable"));
}

// ---- Hashes, second part: HRANDFIELD, HSCAN, encodings ----

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// Field/value pairs of a flat RESP2 reply.
fn pairs(reply: Reply) -> Vec<(String, String)> {
    reply
        .items()
        .chunks(2)
        .map(|p| (p[0].text(), p[1].text()))
        .collect()
}

/// Walks HSCAN to the end with `opts`, returning every pair it gave.
fn hscan_all(c: &mut common::Raw, key: &str, opts: &[&str]) -> Vec<(String, String)> {
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let mut cmd = vec!["HSCAN", key, &cursor];
        cmd.extend(opts);
        let reply = c.cmd(&cmd).items();
        let next = reply[0].text();
        seen.extend(pairs(reply[1].clone()));
        if next == "0" {
            return seen;
        }
        cursor = next;
    }
}

#[test]
fn hrandfield_counts_and_withvalues() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["HSET", "H", "b", "1", "a", "2", "c", "3"]);
    let value_of = |f: &str| match f {
        "b" => "1",
        "a" => "2",
        "c" => "3",
        other => panic!("unknown field {other}"),
    };
    let one = c.cmd(&["HRANDFIELD", "H"]).text();
    value_of(&one);
    let two = c.cmd(&["HRANDFIELD", "H", "2"]).items();
    assert_eq!(two.len(), 2);
    assert_ne!(two[0], two[1], "a positive count picks distinct fields");
    // Every value comes with its own field.
    let repeated = pairs(c.cmd(&["HRANDFIELD", "H", "-20", "WITHVALUES"]));
    assert_eq!(repeated.len(), 20);
    for (field, value) in &repeated {
        assert_eq!(value, value_of(field));
    }
    // Asking for all of it gives the hash in its order, as a listpack lists.
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "10", "WITHVALUES"]),
        common::bulks(&["b", "1", "a", "2", "c", "3"])
    );
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "0", "WITHVALUES"]),
        Reply::Array(vec![])
    );
    assert_eq!(c.cmd(&["HRANDFIELD", "nosuch"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["HRANDFIELD", "nosuch", "3", "WITHVALUES"]),
        Reply::Array(vec![])
    );
    // Errors in Redis's order: the count, other words, then pair overflow.
    let not_int = err("ERR value is not an integer or out of range");
    assert_eq!(c.cmd(&["HRANDFIELD", "H", "x"]), not_int);
    assert_eq!(c.cmd(&["HRANDFIELD", "H", "x", "foo"]), not_int);
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "1", "foo"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "1", "WITHVALUES", "x"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "-9223372036854775808"]),
        err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
    );
    for too_big in ["4611686018427387904", "-4611686018427387904"] {
        assert_eq!(
            c.cmd(&["HRANDFIELD", "H", too_big, "WITHVALUES"]),
            err("ERR value is out of range")
        );
    }
    // A repeating pick so large that building its reply would exhaust
    // memory is refused (Redis streams it until memory runs out); the
    // server lives on. The limit is the same for sets and sorted sets.
    let too_many =
        err("ERR value is out of range, a negative count picks at most 1000000 elements");
    for (cmd, key) in [
        ("HRANDFIELD", "H"),
        ("SRANDMEMBER", "S"),
        ("ZRANDMEMBER", "Z"),
    ] {
        c.cmd(&["SADD", "S", "m"]);
        c.cmd(&["ZADD", "Z", "1", "m"]);
        assert_eq!(
            c.cmd(&[cmd, key, "-9223372036854775807"]),
            too_many,
            "{cmd}"
        );
        assert_eq!(c.cmd(&[cmd, key, "-1000001"]), too_many, "{cmd}");
    }
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "-1000000"]).items().len(),
        1_000_000
    );
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "9223372036854775807"])
            .items()
            .len(),
        3
    );
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(c.cmd(&["HRANDFIELD", "str", "0"]), err(WRONGTYPE));
    // RESP3: WITHVALUES answers [field, value] pairs.
    c.cmd(&["HELLO", "3"]);
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "3", "WITHVALUES"]),
        Reply::Array(vec![
            Reply::Array(vec![b("b"), b("1")]),
            Reply::Array(vec![b("a"), b("2")]),
            Reply::Array(vec![b("c"), b("3")]),
        ])
    );
    assert_eq!(
        c.cmd(&["HRANDFIELD", "H", "3"]),
        common::bulks(&["b", "a", "c"])
    );
}

#[test]
fn hscan_walks_every_field_once_with_its_value() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    // Past hash-max-listpack-entries, so the walk takes several calls.
    let fields: Vec<String> = (0..1000).map(|i| format!("f{i}")).collect();
    let mut hset = vec!["HSET".to_string(), "H".to_string()];
    for f in &fields {
        hset.push(f.clone());
        hset.push(format!("v-{f}"));
    }
    let hset: Vec<&str> = hset.iter().map(String::as_str).collect();
    c.cmd(&hset);
    let first = c.cmd(&["HSCAN", "H", "0", "COUNT", "25"]).items();
    assert_ne!(first[0].text(), "0");
    assert_eq!(first[1].items().len(), 50);
    let mut seen = hscan_all(&mut c, "H", &["COUNT", "25"]);
    seen.sort();
    let mut expected: Vec<(String, String)> = fields
        .iter()
        .map(|f| (f.clone(), format!("v-{f}")))
        .collect();
    expected.sort();
    assert_eq!(seen, expected, "every field exactly once, with its value");
    let mut matched: Vec<String> = hscan_all(&mut c, "H", &["MATCH", "f99*"])
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    matched.sort();
    assert_eq!(
        matched,
        ["f99", "f990", "f991", "f992", "f993", "f994", "f995", "f996", "f997", "f998", "f999"]
    );
}

#[test]
fn hscan_of_a_small_hash_and_its_errors() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    c.cmd(&["HSET", "H", "b", "1", "a", "2", "c", "3"]);
    c.cmd(&["HDEL", "H", "a"]);
    c.cmd(&["HSET", "H", "a", "9"]);
    // A listpack hash comes whole, in its order, whatever COUNT says.
    assert_eq!(
        c.cmd(&["HSCAN", "H", "0", "COUNT", "1"]),
        Reply::Array(vec![b("0"), common::bulks(&["b", "1", "c", "3", "a", "9"])])
    );
    assert_eq!(
        c.cmd(&["HSCAN", "H", "0", "MATCH", "[ab]"]),
        Reply::Array(vec![b("0"), common::bulks(&["b", "1", "a", "9"])])
    );
    assert_eq!(
        c.cmd(&["HSCAN", "nosuch", "0"]),
        Reply::Array(vec![b("0"), Reply::Array(vec![])])
    );
    assert_eq!(c.cmd(&["HSCAN", "H", "x"]), err("ERR invalid cursor"));
    // NOVALUES is Redis 7.4; 7.0 answers a syntax error, as TYPE.
    assert_eq!(
        c.cmd(&["HSCAN", "H", "0", "NOVALUES"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["HSCAN", "H", "0", "TYPE", "hash"]),
        err("ERR syntax error")
    );
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(c.cmd(&["HSCAN", "str", "0"]), err(WRONGTYPE));
}

#[test]
fn object_encoding_of_hashes_follows_redis_7_0() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let enc = |c: &mut common::Raw, key: &str| c.cmd(&["OBJECT", "ENCODING", key]).text();
    let mut hset = vec!["HSET".to_string(), "H".to_string()];
    for i in 1..=512 {
        hset.push(format!("f{i}"));
        hset.push("v".to_string());
    }
    let hset: Vec<&str> = hset.iter().map(String::as_str).collect();
    c.cmd(&hset);
    assert_eq!(enc(&mut c, "H"), "listpack", "512 fields still fit");
    c.cmd(&["HSET", "H", "f513", "v"]);
    assert_eq!(enc(&mut c, "H"), "hashtable");
    c.cmd(&["HDEL", "H", "f513"]);
    assert_eq!(enc(&mut c, "H"), "hashtable", "never converts back");
    let renamed = common::keys_on_shard("renamed", 1, 2, 1).remove(0);
    c.cmd(&["RENAME", "H", &renamed]);
    assert_eq!(enc(&mut c, &renamed), "hashtable");
    let (v64, v65) = ("x".repeat(64), "x".repeat(65));
    c.cmd(&["HSET", "V", "f", &v64]);
    assert_eq!(enc(&mut c, "V"), "listpack", "64-byte values still fit");
    c.cmd(&["HSET", "V", "f", &v65]);
    assert_eq!(enc(&mut c, "V"), "hashtable");
    c.cmd(&["HSET", "V", "f", "short"]);
    assert_eq!(enc(&mut c, "V"), "hashtable");
    c.cmd(&["HSET", "F", &v65, "v"]);
    assert_eq!(enc(&mut c, "F"), "hashtable", "long field");
    c.cmd(&["HINCRBYFLOAT", "N", "f", "1e300"]);
    assert_eq!(
        enc(&mut c, "N"),
        "hashtable",
        "a long value written by HINCRBYFLOAT"
    );
}

/// A listpack's pairs are gathered once for a pick, not walked to each
/// picked position: 1M picks of a 500-field hash cost O(picks + fields).
/// They used to cost O(picks x fields): 1.1 s in a release build (Redis
/// 0.1-0.2 s, ember now 0.04-0.07 s, commandstats).
#[test]
fn hrandfield_on_a_listpack_walks_it_once() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    let mut hset = vec!["HSET".to_string(), "r".into()];
    for i in 0..500 {
        hset.extend([format!("field:{i}"), format!("value:{i}")]);
    }
    let hset: Vec<&str> = hset.iter().map(String::as_str).collect();
    assert_eq!(c.cmd(&hset), common::int(500));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "r"]), b("listpack"));
    // The server's own time in the command (commandstats), not the
    // client's parsing of the reply: some 40 ms in a debug build now;
    // walking to each pick took seconds.
    c.cmd(&["CONFIG", "RESETSTAT"]);
    assert_eq!(
        c.cmd(&["HRANDFIELD", "r", "-300000"]).items().len(),
        300_000
    );
    let stats = c.info_field("commandstats", "cmdstat_hrandfield").unwrap();
    let usec: u64 = stats
        .split(',')
        .find_map(|kv| kv.strip_prefix("usec="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(usec < 1_000_000, "{stats}");
    let value_of = |field: &str| field.replace("field:", "value:");
    let seen = pairs(c.cmd(&["HRANDFIELD", "r", "-1000000", "WITHVALUES"]));
    assert_eq!(seen.len(), 1_000_000);
    let mut counts = std::collections::HashMap::new();
    for (field, value) in &seen {
        assert!(field.starts_with("field:"), "{field}");
        assert_eq!(*value, value_of(field));
        *counts.entry(field.as_str()).or_insert(0) += 1;
    }
    // Every field about 2,000 times: none missing, none favoured (the
    // standard deviation is 45; 1,500..2,500 is 11 of it).
    assert_eq!(counts.len(), 500);
    assert!(
        counts.values().all(|&n| (1_500..2_500).contains(&n)),
        "{counts:?}"
    );
    let distinct = c.cmd(&["HRANDFIELD", "r", "499"]).items();
    let fields: std::collections::HashSet<String> = distinct.iter().map(Reply::text).collect();
    assert_eq!(fields.len(), 499, "a positive count picks distinct fields");
    assert!(fields.iter().all(|f| f.starts_with("field:")));
}
