//! Streams: XADD and the range commands, trims, consumer groups, DUMP and
//! RESTORE both ways with redis-server, keyspace events, XREAD across
//! shards, and a differential run against a real redis-server with a
//! random workload, replies compared exactly (times aside).

mod common;

use common::reference::Redis;
use common::{bulks, int, keys_on_shard, Raw, Reply, Rng, Server};

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn err(s: &str) -> Reply {
    Reply::Error(s.into())
}

fn arr(items: Vec<Reply>) -> Reply {
    Reply::Array(items)
}

fn entry(id: &str, fv: &[&str]) -> Reply {
    arr(vec![b(id), bulks(fv)])
}

#[test]
fn xadd_ids_ranges_and_errors() {
    for shards in [1, 3] {
        let server = Server::start(shards, &["--enable-debug-command", "yes"]);
        let mut c = server.raw();
        assert_eq!(c.cmd(&["XADD", "s", "1-1", "a", "1"]), b("1-1"));
        assert_eq!(c.cmd(&["XADD", "s", "1-*", "b", "2"]), b("1-2"));
        assert_eq!(c.cmd(&["XADD", "s", "2", "c", "3"]), b("2-0"));
        assert_eq!(
            c.cmd(&["XADD", "s", "2", "c", "3"]),
            err("ERR The ID specified in XADD is equal or smaller than the target stream top item")
        );
        assert_eq!(
            c.cmd(&["XADD", "s", "0-0", "c", "3"]),
            err("ERR The ID specified in XADD must be greater than 0-0")
        );
        assert_eq!(
            c.cmd(&["XADD", "s", "x-1", "c", "3"]),
            err("ERR Invalid stream ID specified as stream command argument")
        );
        assert_eq!(
            c.cmd(&["XADD", "s", "3-0", "c"]),
            err("ERR wrong number of arguments for 'xadd' command")
        );
        assert_eq!(
            c.cmd(&["XADD", "nope", "NOMKSTREAM", "*", "a", "1"]),
            Reply::Nil
        );
        assert_eq!(c.cmd(&["EXISTS", "nope"]), int(0));
        assert_eq!(c.cmd(&["XLEN", "s"]), int(3));
        assert_eq!(
            c.cmd(&["TYPE", "s"]).clone(),
            Reply::Simple("stream".into())
        );
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", "s"]), b("stream"));
        assert_eq!(
            c.cmd(&["XRANGE", "s", "-", "+", "COUNT", "2"]),
            arr(vec![entry("1-1", &["a", "1"]), entry("1-2", &["b", "2"])])
        );
        assert_eq!(
            c.cmd(&["XREVRANGE", "s", "+", "(1-1"]),
            arr(vec![entry("2-0", &["c", "3"]), entry("1-2", &["b", "2"])])
        );
        assert_eq!(
            c.cmd(&["XRANGE", "s", "(1-2", "2"]),
            arr(vec![entry("2-0", &["c", "3"])])
        );
        assert_eq!(c.cmd(&["XDEL", "s", "1-2", "9-9"]), int(1));
        assert_eq!(c.cmd(&["XTRIM", "s", "MAXLEN", "1"]), int(1));
        assert_eq!(
            c.cmd(&["XRANGE", "s", "-", "+"]),
            arr(vec![entry("2-0", &["c", "3"])])
        );
        assert_eq!(
            c.cmd(&["XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "-1"]),
            err("ERR The LIMIT argument must be >= 0.")
        );
        assert_eq!(
            c.cmd(&["XTRIM", "s", "MAXLEN", "0", "LIMIT", "10"]),
            err("ERR syntax error, LIMIT cannot be used without the special ~ option")
        );
        assert_eq!(
            c.cmd(&["XSETID", "s", "5-0", "ENTRIESADDED", "9"]),
            Reply::Simple("OK".into())
        );
        assert_eq!(
            c.cmd(&["XSETID", "s", "1-0"]),
            err("ERR The ID specified in XSETID is smaller than the target stream top item")
        );
        assert_eq!(c.cmd(&["XADD", "s", "*", "d", "4"]).clone(), {
            // Generated from the clock: above 5-0.
            let Reply::Bulk(id) =
                c.cmd(&["XREVRANGE", "s", "+", "-", "COUNT", "1"]).items()[0].items()[0].clone()
            else {
                panic!()
            };
            Reply::Bulk(id)
        });
        c.cmd(&["SET", "str", "x"]);
        assert_eq!(
            c.cmd(&["XADD", "str", "*", "a", "1"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        // An emptied stream stays.
        c.cmd(&["XADD", "e", "1-1", "a", "1"]);
        assert_eq!(c.cmd(&["XDEL", "e", "1-1"]), int(1));
        assert_eq!(c.cmd(&["EXISTS", "e"]), int(1));
        assert_eq!(c.cmd(&["DEBUG", "EMBER-CHECK"]), Reply::Simple("OK".into()));
    }
}

#[test]
fn approximate_trims_remove_whole_nodes() {
    let server = Server::start(1, &["--stream-node-max-entries", "10"]);
    let mut c = server.raw();
    for i in 1..=100 {
        c.cmd(&["XADD", "s", &format!("{i}-0"), "f", "v"]);
    }
    assert_eq!(c.cmd(&["XTRIM", "s", "MAXLEN", "~", "55"]), int(40));
    assert_eq!(c.cmd(&["XLEN", "s"]), int(60));
    c.cmd(&["XADD", "s", "101-0", "f", "v"]);
    assert_eq!(
        c.cmd(&["XADD", "s", "MAXLEN", "~", "25", "LIMIT", "20", "102-0", "f", "v"]),
        b("102-0")
    );
    assert_eq!(c.cmd(&["XLEN", "s"]), int(42));
    assert_eq!(c.cmd(&["XTRIM", "s", "MINID", "70"]), int(9));
    assert_eq!(
        c.cmd(&["XRANGE", "s", "-", "+", "COUNT", "1"]).items()[0].items()[0],
        b("70-0")
    );
}

#[test]
fn consumer_groups_deliver_ack_and_claim() {
    for shards in [1, 3] {
        let server = Server::start(shards, &["--enable-debug-command", "yes"]);
        let mut c = server.raw();
        assert_eq!(
            c.cmd(&["XGROUP", "CREATE", "s", "g", "$"]),
            err("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
        );
        assert_eq!(
            c.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]),
            Reply::Simple("OK".into())
        );
        assert_eq!(
            c.cmd(&["XGROUP", "CREATE", "s", "g", "$"]),
            err("BUSYGROUP Consumer Group name already exists")
        );
        for i in 1..=3 {
            c.cmd(&["XADD", "s", &format!("{i}-0"), "f", &i.to_string()]);
        }
        assert_eq!(
            c.cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "alice",
                "COUNT",
                "2",
                "STREAMS",
                "s",
                ">"
            ]),
            arr(vec![arr(vec![
                b("s"),
                arr(vec![entry("1-0", &["f", "1"]), entry("2-0", &["f", "2"])])
            ])])
        );
        assert_eq!(
            c.cmd(&["XPENDING", "s", "g"]),
            arr(vec![
                int(2),
                b("1-0"),
                b("2-0"),
                arr(vec![bulks(&["alice", "2"])])
            ])
        );
        assert_eq!(c.cmd(&["XACK", "s", "g", "1-0", "7-0"]), int(1));
        let claimed = c.cmd(&["XCLAIM", "s", "g", "bob", "0", "2-0", "JUSTID"]);
        assert_eq!(claimed, bulks(&["2-0"]));
        let pending = c.cmd(&["XPENDING", "s", "g", "-", "+", "10", "bob"]);
        assert_eq!(pending.items()[0].items()[1], b("bob"));
        assert_eq!(
            c.cmd(&["XAUTOCLAIM", "s", "g", "carol", "0", "0", "JUSTID"]),
            arr(vec![b("0-0"), bulks(&["2-0"]), arr(vec![])])
        );
        assert_eq!(
            c.cmd(&["XREADGROUP", "GROUP", "nog", "x", "STREAMS", "s", ">"]),
            err("NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option")
        );
        assert_eq!(c.cmd(&["XGROUP", "DELCONSUMER", "s", "g", "carol"]), int(1));
        assert_eq!(
            c.cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "dave"]),
            int(1)
        );
        assert_eq!(
            c.cmd(&["XGROUP", "SETID", "s", "g", "0"]),
            Reply::Simple("OK".into())
        );
        assert_eq!(c.cmd(&["XGROUP", "DESTROY", "s", "g"]), int(1));
        assert_eq!(c.cmd(&["XINFO", "GROUPS", "s"]), arr(vec![]));
    }
}

#[test]
fn xread_serves_streams_on_every_shard() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let a = keys_on_shard("sa", 0, 3, 1).remove(0);
    let z = keys_on_shard("sz", 2, 3, 1).remove(0);
    c.cmd(&["XADD", &a, "1-0", "f", "a"]);
    c.cmd(&["XADD", &z, "2-0", "f", "z"]);
    assert_eq!(
        c.cmd(&["XREAD", "COUNT", "5", "STREAMS", &z, "nokey", &a, "0", "0", "0"]),
        arr(vec![
            arr(vec![b(&z), arr(vec![entry("2-0", &["f", "z"])])]),
            arr(vec![b(&a), arr(vec![entry("1-0", &["f", "a"])])]),
        ])
    );
    assert_eq!(c.cmd(&["XREAD", "STREAMS", &z, &a, "$", "$"]), Reply::Nil);
    assert_eq!(
        c.cmd(&["XREAD", "STREAMS", &z, &a, "0"]),
        err("ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.")
    );
}

#[test]
fn keyspace_events_name_each_change() {
    let server = Server::start(1, &["--notify-keyspace-events", "KEt"]);
    let mut sub = server.raw();
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]);
    let mut c = server.raw();
    c.cmd(&["XADD", "s", "MAXLEN", "1", "1-0", "f", "v"]);
    c.cmd(&["XADD", "s", "MAXLEN", "1", "2-0", "f", "v"]);
    c.cmd(&["XDEL", "s", "2-0"]);
    c.cmd(&["XGROUP", "CREATE", "s", "g", "0"]);
    c.cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "c"]);
    c.cmd(&["XGROUP", "SETID", "s", "g", "0"]);
    c.cmd(&["XGROUP", "DELCONSUMER", "s", "g", "c"]);
    c.cmd(&["XGROUP", "DESTROY", "s", "g"]);
    c.cmd(&["XSETID", "s", "9-0"]);
    let want = [
        "xadd",
        "xadd",
        "xtrim",
        "xdel",
        "xgroup-create",
        "xgroup-createconsumer",
        "xgroup-setid",
        "xgroup-delconsumer",
        "xgroup-destroy",
        "xsetid",
    ];
    for event in want {
        let msg = sub.read().expect("an event");
        assert_eq!(
            msg.items()[2],
            b(&format!("__keyevent@0__:{event}")),
            "{msg:?}"
        );
    }
}

/// Fills `c` with a stream that has deletions, groups, pending entries
/// and consumers.
fn rich_stream(c: &mut Raw, key: &str) {
    for i in 1..=250 {
        let id = format!("{}-{}", 1000 + i / 7, i % 7);
        if i % 3 == 0 {
            c.cmd(&["XADD", key, &id, "f", &i.to_string(), "other", "x"]);
        } else {
            c.cmd(&["XADD", key, &id, "f", &i.to_string()]);
        }
    }
    c.cmd(&["XDEL", key, "1001-0", "1010-3", "1020-1"]);
    c.cmd(&["XGROUP", "CREATE", key, "g1", "0"]);
    c.cmd(&["XGROUP", "CREATE", key, "g2", "$", "ENTRIESREAD", "5"]);
    c.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "alice",
        "COUNT",
        "20",
        "STREAMS",
        key,
        ">",
    ]);
    c.cmd(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "bob",
        "COUNT",
        "5",
        "STREAMS",
        key,
        ">",
    ]);
    c.cmd(&["XACK", key, "g1", "1000-1", "1000-2"]);
    c.cmd(&["XGROUP", "CREATECONSUMER", key, "g2", "carol"]);
}

/// What must survive DUMP / RESTORE, times left out.
fn summary(c: &mut Raw, key: &str) -> Vec<Reply> {
    let mut out = vec![c.cmd(&["XRANGE", key, "-", "+"])];
    let info = c.cmd(&["XINFO", "STREAM", key]).items();
    out.extend(
        info.chunks(2)
            .filter(|p| p[0] != b("radix-tree-nodes") && p[0] != b("radix-tree-keys"))
            .flat_map(|p| p.to_vec()),
    );
    out.push(c.cmd(&["XINFO", "GROUPS", key]));
    out.push(c.cmd(&["XPENDING", key, "g1"]));
    for g in ["g1", "g2"] {
        for consumer in c.cmd(&["XINFO", "CONSUMERS", key, g]).items() {
            let fields = consumer.items();
            out.push(fields[1].clone());
            out.push(fields[3].clone());
        }
    }
    let pel = c.cmd(&["XPENDING", key, "g1", "-", "+", "100"]).items();
    out.extend(pel.iter().map(|p| {
        let p = p.items();
        arr(vec![p[0].clone(), p[1].clone(), p[3].clone()])
    }));
    out
}

#[test]
fn dump_and_restore_with_redis_both_ways() {
    let Some(redis) = Redis::or_skip("streams dump_and_restore_with_redis_both_ways") else {
        return;
    };
    let server = Server::start(1, &["--enable-debug-command", "yes"]);
    let mut ours = server.raw();
    let mut theirs = Raw::connect(redis.port);
    rich_stream(&mut theirs, "s");
    rich_stream(&mut ours, "s");
    let want = summary(&mut theirs, "s");
    assert_eq!(summary(&mut ours, "s"), want);
    // Redis's payload into ember.
    let Reply::Bulk(payload) = theirs.cmd(&["DUMP", "s"]) else {
        panic!("no dump")
    };
    assert_eq!(
        ours.cmd_bytes(&[b"RESTORE", b"r", b"0", &payload]),
        Reply::Simple("OK".into())
    );
    assert_eq!(summary(&mut ours, "r"), want);
    // ember's payload into Redis.
    let Reply::Bulk(payload) = ours.cmd(&["DUMP", "s"]) else {
        panic!("no dump")
    };
    assert_eq!(
        theirs.cmd_bytes(&[b"RESTORE", b"r", b"0", &payload]),
        Reply::Simple("OK".into())
    );
    assert_eq!(summary(&mut theirs, "r"), want);
    // An empty stream with a group, and the node layout kept.
    for c in [&mut ours, &mut theirs] {
        c.cmd(&["XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM"]);
    }
    let Reply::Bulk(payload) = ours.cmd(&["DUMP", "empty"]) else {
        panic!("no dump")
    };
    assert_eq!(
        theirs.cmd_bytes(&[b"RESTORE", b"e2", b"0", &payload]),
        Reply::Simple("OK".into())
    );
    assert_eq!(
        theirs.cmd(&["XINFO", "GROUPS", "e2"]),
        ours.cmd(&["XINFO", "GROUPS", "empty"])
    );
    assert_eq!(
        ours.cmd(&["DEBUG", "EMBER-CHECK"]),
        Reply::Simple("OK".into())
    );
}

/// Replies with their times (idle, delivery and seen times) zeroed, and
/// the count of radix tree nodes ember only estimates.
fn timeless(cmd: &[String], reply: Reply) -> Reply {
    let name = cmd[0].to_ascii_uppercase();
    let sub = cmd
        .get(1)
        .map(|s| s.to_ascii_uppercase())
        .unwrap_or_default();
    match (name.as_str(), reply) {
        ("XINFO", Reply::Array(items)) if sub == "STREAM" => Reply::Array(
            items
                .chunks(2)
                .flat_map(|p| {
                    if p.len() == 2 && p[0] == b("radix-tree-nodes") {
                        vec![p[0].clone(), int(0)]
                    } else {
                        p.to_vec()
                    }
                })
                .collect(),
        ),
        ("XINFO", Reply::Array(items)) if sub == "CONSUMERS" => Reply::Array(
            items
                .into_iter()
                .map(|c| match c {
                    Reply::Array(mut f) if f.len() == 6 => {
                        f[5] = int(0);
                        Reply::Array(f)
                    }
                    other => other,
                })
                .collect(),
        ),
        ("XPENDING", Reply::Array(items)) if cmd.len() > 3 => Reply::Array(
            items
                .into_iter()
                .map(|p| match p {
                    Reply::Array(mut f) if f.len() == 4 => {
                        f[2] = int(0);
                        Reply::Array(f)
                    }
                    other => other,
                })
                .collect(),
        ),
        (_, reply) => reply,
    }
}

fn random_command(r: &mut Rng, next_ms: &mut u64) -> Vec<String> {
    let key = r.pick(&["s1", "s2", "s3", "str"]).to_string();
    let group = r.pick(&["g1", "g2"]).to_string();
    let consumer = r.pick(&["alice", "bob"]).to_string();
    let some_id = format!("{}-{}", r.below(*next_ms as usize + 2), r.below(3));
    let words: Vec<String> = match r.below(24) {
        0..=5 => {
            *next_ms += r.below(3) as u64;
            let mut v = vec!["XADD".to_string(), key];
            match r.below(6) {
                0 => v.extend(["MAXLEN".into(), "~".into(), r.below(30).to_string()]),
                1 => v.extend(["MAXLEN".into(), r.below(30).to_string()]),
                2 => v.extend([
                    "MINID".into(),
                    "~".into(),
                    format!("{}", next_ms.saturating_sub(20)),
                ]),
                3 => v.push("NOMKSTREAM".into()),
                _ => {}
            }
            v.push(if r.chance(4) {
                format!("{next_ms}-*")
            } else {
                format!("{next_ms}-{}", r.below(4))
            });
            let fields = 1 + r.below(3);
            for f in 0..fields {
                v.push(if r.chance(3) {
                    format!("f{f}")
                } else {
                    "f".into()
                });
                v.push(r.below(1000).to_string());
            }
            v
        }
        6 => vec![
            "XDEL".into(),
            key,
            some_id.clone(),
            format!("{}-0", r.below(*next_ms as usize + 1)),
        ],
        7 => vec![
            "XTRIM".into(),
            key,
            "MAXLEN".into(),
            "~".into(),
            r.below(40).to_string(),
        ],
        8 => vec!["XTRIM".into(), key, "MINID".into(), some_id.clone()],
        9 => vec!["XLEN".into(), key],
        10 => vec![
            "XRANGE".into(),
            key,
            "-".into(),
            "+".into(),
            "COUNT".into(),
            r.below(5).to_string(),
        ],
        11 => vec!["XREVRANGE".into(), key, "+".into(), format!("({some_id}")],
        12 => vec!["XRANGE".into(), key, some_id.clone(), "+".into()],
        13 => vec!["XINFO".into(), "STREAM".into(), key],
        14 => vec![
            "XGROUP".into(),
            "CREATE".into(),
            key,
            group,
            r.pick(&["0", "$"]).into(),
            "MKSTREAM".into(),
        ],
        15 => vec![
            "XREADGROUP".into(),
            "GROUP".into(),
            group,
            consumer,
            "COUNT".into(),
            (1 + r.below(4)).to_string(),
            "STREAMS".into(),
            key,
            ">".into(),
        ],
        16 => vec![
            "XREADGROUP".into(),
            "GROUP".into(),
            group,
            consumer,
            "STREAMS".into(),
            key,
            "0".into(),
        ],
        17 => vec!["XACK".into(), key, group, some_id.clone()],
        18 => vec!["XPENDING".into(), key, group],
        19 => vec![
            "XPENDING".into(),
            key,
            group,
            "-".into(),
            "+".into(),
            "10".into(),
        ],
        20 => vec![
            "XCLAIM".into(),
            key,
            group,
            consumer,
            "0".into(),
            some_id.clone(),
            "JUSTID".into(),
        ],
        21 => vec![
            "XAUTOCLAIM".into(),
            key,
            group,
            consumer,
            "0".into(),
            "0".into(),
            "COUNT".into(),
            "3".into(),
        ],
        22 => vec!["XINFO".into(), "GROUPS".into(), key],
        _ => vec![
            "XREAD".into(),
            "COUNT".into(),
            "3".into(),
            "STREAMS".into(),
            key,
            some_id,
        ],
    };
    words
}

#[test]
fn differential_against_redis() {
    let Some(redis) = Redis::or_skip("streams differential_against_redis") else {
        return;
    };
    let server = Server::start(3, &["--enable-debug-command", "yes"]);
    let mut ours = server.raw();
    let mut theirs = Raw::connect(redis.port);
    for c in [&mut ours, &mut theirs] {
        c.cmd(&["CONFIG", "SET", "stream-node-max-entries", "7"]);
        c.cmd(&["SET", "str", "x"]);
    }
    let mut rng = Rng(0x5eed_57ae_a115);
    let mut next_ms = 1u64;
    for step in 0..3000 {
        let cmd = random_command(&mut rng, &mut next_ms);
        let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let want = timeless(&cmd, theirs.cmd(&args));
        let got = timeless(&cmd, ours.cmd(&args));
        assert_eq!(got, want, "step {step}: {cmd:?}");
    }
    assert_eq!(
        ours.cmd(&["DEBUG", "EMBER-CHECK"]),
        Reply::Simple("OK".into())
    );
}

#[test]
fn blocked_reads_are_served_by_xadd_on_any_shard() {
    for shards in [1, 3] {
        let server = Server::start(shards, &[]);
        let mut c = server.raw();
        let a = keys_on_shard("ba", 0, shards, 1).remove(0);
        let z = keys_on_shard("bz", shards - 1, shards, 1).remove(0);
        c.cmd(&["XADD", &a, "1-0", "f", "old"]);
        let mut waiter = server.raw();
        waiter.send_cmd(&[
            b"XREAD",
            b"BLOCK",
            b"0",
            b"STREAMS",
            a.as_bytes(),
            z.as_bytes(),
            b"$",
            b"$",
        ]);
        assert!(common::wait_until(
            std::time::Duration::from_secs(5),
            || { c.info_int("clients", "blocked_clients") == 1 }
        ));
        c.cmd(&["XADD", &z, "5-0", "f", "new"]);
        assert_eq!(
            waiter.read().expect("served"),
            arr(vec![arr(vec![
                b(&z),
                arr(vec![entry("5-0", &["f", "new"])])
            ])])
        );
        // A timeout answers nil.
        assert_eq!(
            waiter.cmd(&["XREAD", "BLOCK", "20", "STREAMS", &a, "$"]),
            Reply::Nil
        );
        // A group reader is woken with an error when its stream goes.
        c.cmd(&["XGROUP", "CREATE", &a, "g", "$"]);
        waiter.send_cmd(&[
            b"XREADGROUP",
            b"GROUP",
            b"g",
            b"c",
            b"BLOCK",
            b"0",
            b"STREAMS",
            a.as_bytes(),
            b">",
        ]);
        assert!(common::wait_until(
            std::time::Duration::from_secs(5),
            || { c.info_int("clients", "blocked_clients") == 1 }
        ));
        c.cmd(&["XADD", &a, "7-0", "f", "v"]);
        assert_eq!(
            waiter.read().expect("served"),
            arr(vec![arr(vec![b(&a), arr(vec![entry("7-0", &["f", "v"])])])])
        );
        waiter.send_cmd(&[
            b"XREADGROUP",
            b"GROUP",
            b"g",
            b"c",
            b"BLOCK",
            b"0",
            b"STREAMS",
            a.as_bytes(),
            b">",
        ]);
        assert!(common::wait_until(
            std::time::Duration::from_secs(5),
            || { c.info_int("clients", "blocked_clients") == 1 }
        ));
        c.cmd(&["DEL", &a]);
        assert_eq!(
            waiter.read().expect("woken"),
            err("UNBLOCKED the stream key no longer exists")
        );
        // Inside MULTI a BLOCK read does not block.
        c.cmd(&["MULTI"]);
        c.cmd(&["XREAD", "BLOCK", "0", "STREAMS", &a, "$"]);
        assert_eq!(c.cmd(&["EXEC"]), arr(vec![Reply::Nil]));
    }
}
