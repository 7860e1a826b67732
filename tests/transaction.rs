//! MULTI / EXEC / DISCARD on one shard's keys. Replies checked against
//! redis-server 7.0.

mod common;

use common::{keys_on_shard, Raw, Reply, Server};

fn err(s: &str) -> Reply {
    Reply::Error(s.into())
}

fn queued() -> Reply {
    Reply::Simple("QUEUED".into())
}

#[test]
fn page_view_pattern_on_keys_of_every_shard() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    for shard in 0..2 {
        let key = &keys_on_shard("pageviews.user:", shard, 2, 1)[0];
        assert_eq!(c.cmd(&["MULTI"]), Reply::Simple("OK".into()));
        assert_eq!(c.cmd(&["RPUSH", key, "http://example.com/a"]), queued());
        assert_eq!(c.cmd(&["EXPIRE", key, "60"]), queued());
        assert_eq!(
            c.cmd(&["EXEC"]),
            Reply::Array(vec![Reply::Int(1), Reply::Int(1)])
        );
        assert!(
            matches!(c.cmd(&["TTL", key]), Reply::Int(t) if t > 55),
            "TTL set on {key}"
        );
        assert_eq!(c.cmd(&["LLEN", key]), Reply::Int(1));
    }
}

#[test]
fn queue_errors_abort_and_runtime_errors_do_not_roll_back() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(c.cmd(&["EXEC"]), err("ERR EXEC without MULTI"));
    assert_eq!(c.cmd(&["DISCARD"]), err("ERR DISCARD without MULTI"));
    c.cmd(&["MULTI"]);
    assert_eq!(c.cmd(&["MULTI"]), err("ERR MULTI calls can not be nested"));
    assert_eq!(c.cmd(&["SET", "a", "1"]), queued());
    assert_eq!(
        c.cmd(&["FOO"]),
        err("ERR unknown command 'FOO', with args beginning with: ")
    );
    assert_eq!(
        c.cmd(&["GET"]),
        err("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(
        c.cmd(&["EXEC"]),
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(c.cmd(&["GET", "a"]), Reply::Nil, "nothing ran");
    c.cmd(&["MULTI"]);
    c.cmd(&["SET", "s", "v"]);
    c.cmd(&["LPUSH", "s", "x"]);
    c.cmd(&["GET", "s"]);
    assert_eq!(
        c.cmd(&["EXEC"]),
        Reply::Array(vec![
            Reply::Simple("OK".into()),
            err("WRONGTYPE Operation against a key holding the wrong kind of value"),
            Reply::bulk("v"),
        ])
    );
    c.cmd(&["MULTI"]);
    c.cmd(&["SET", "d", "1"]);
    assert_eq!(c.cmd(&["DISCARD"]), Reply::Simple("OK".into()));
    assert_eq!(c.cmd(&["GET", "d"]), Reply::Nil);
    c.cmd(&["MULTI"]);
    assert_eq!(c.cmd(&["EXEC"]), Reply::Array(vec![]));
}

#[test]
fn keys_of_several_shards_run_as_one_transaction() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let a = &keys_on_shard("x", 0, 2, 1)[0];
    let b = &keys_on_shard("x", 1, 2, 1)[0];
    c.cmd(&["MULTI"]);
    c.cmd(&["SET", a, "1"]);
    c.cmd(&["INCR", b]);
    c.cmd(&["PING"]);
    c.cmd(&["MGET", a, b]);
    assert_eq!(
        c.cmd(&["EXEC"]),
        Reply::Array(vec![
            Reply::Simple("OK".into()),
            Reply::Int(1),
            Reply::Simple("PONG".into()),
            Reply::Array(vec![Reply::bulk("1"), Reply::bulk("1")]),
        ])
    );
    assert_eq!(c.cmd(&["EXISTS", a, b]), Reply::Int(2));
}

/// Transfers between two counters never show a partial state to readers.
#[test]
fn transactions_are_isolated() {
    let server = Server::start(2, &[]);
    let port = server.port;
    let writers: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Raw::connect(port);
                for _ in 0..200 {
                    c.cmd(&["MULTI"]);
                    c.cmd(&["INCRBY", "{acct}a", "7"]);
                    c.cmd(&["DECRBY", "{acct}b", "7"]);
                    assert!(matches!(c.cmd(&["EXEC"]), Reply::Array(v) if v.len() == 2));
                }
            })
        })
        .collect();
    let mut reader = Raw::connect(port);
    for _ in 0..300 {
        reader.cmd(&["MULTI"]);
        reader.cmd(&["GET", "{acct}a"]);
        reader.cmd(&["GET", "{acct}b"]);
        let Reply::Array(values) = reader.cmd(&["EXEC"]) else {
            panic!("EXEC failed")
        };
        let num = |r: &Reply| match r {
            Reply::Bulk(b) => String::from_utf8_lossy(b).parse::<i64>().unwrap(),
            _ => 0,
        };
        assert_eq!(
            num(&values[0]) + num(&values[1]),
            0,
            "a reader saw half a transfer"
        );
    }
    for w in writers {
        w.join().unwrap();
    }
    assert_eq!(reader.cmd(&["GET", "{acct}a"]), Reply::bulk("5600"));
}

/// CLIENT LIST shows a client inside MULTI with flag `x` and its queued count.
#[test]
fn client_list_shows_open_transactions() {
    let server = Server::start(2, &[]);
    let mut a = server.raw();
    let id = a.int(&["CLIENT", "ID"]);
    a.cmd(&["MULTI"]);
    a.cmd(&["SET", "k", "v"]);
    a.cmd(&["GET", "k"]);
    let mut b = server.raw();
    let list = b.cmd(&["CLIENT", "LIST", "ID", &id.to_string()]).text();
    assert!(
        list.contains(" flags=x ") && list.contains(" multi=2 "),
        "{list}"
    );
    a.cmd(&["DISCARD"]);
    let list = b.cmd(&["CLIENT", "LIST", "ID", &id.to_string()]).text();
    assert!(
        list.contains(" flags=N ") && list.contains(" multi=-1 "),
        "{list}"
    );
}

/// Runs of commands for one other shard travel as one hop; the replies
/// still come back one per command, in order.
#[test]
fn runs_of_commands_per_shard_keep_their_replies_in_order() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let keys: Vec<String> = (0..3)
        .map(|s| keys_on_shard("run", s, 3, 1)[0].clone())
        .collect();
    c.cmd(&["MULTI"]);
    let mut expected = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        c.cmd(&["SET", k, &i.to_string()]);
        c.cmd(&["INCR", k]);
        c.cmd(&["LPUSH", k, "x"]);
        c.cmd(&["GET", k]);
        expected.extend([
            Reply::Simple("OK".into()),
            Reply::Int(i as i64 + 1),
            err("WRONGTYPE Operation against a key holding the wrong kind of value"),
            Reply::bulk(&(i + 1).to_string()),
        ]);
    }
    c.cmd(&["PING"]);
    expected.push(Reply::Simple("PONG".into()));
    assert_eq!(c.cmd(&["EXEC"]), Reply::Array(expected));
}

#[test]
fn unwatch_inside_multi_is_queued_and_the_watch_still_counts() {
    // As Redis 7.0: UNWATCH after MULTI is a queued command, so the WATCH
    // taken before MULTI still aborts EXEC when the key changed.
    for shards in [1, 2] {
        let server = Server::start(shards, &[]);
        let mut a = server.raw();
        let mut b = server.raw();
        a.cmd(&["SET", "a", "1"]);
        assert_eq!(a.cmd(&["WATCH", "a"]), Reply::Simple("OK".into()));
        b.cmd(&["SET", "a", "other"]);
        a.cmd(&["MULTI"]);
        assert_eq!(a.cmd(&["UNWATCH"]), queued());
        assert_eq!(a.cmd(&["SET", "a", "2"]), queued());
        assert_eq!(a.cmd(&["EXEC"]), Reply::Nil, "aborted ({shards} shards)");
        assert_eq!(a.cmd(&["GET", "a"]), Reply::bulk("other"));
        // Unwatched: the queued UNWATCH has a reply slot of its own.
        a.cmd(&["MULTI"]);
        a.cmd(&["UNWATCH"]);
        a.cmd(&["SET", "a", "3"]);
        let ok = Reply::Simple("OK".into());
        assert_eq!(a.cmd(&["EXEC"]), Reply::Array(vec![ok.clone(), ok]));
    }
}

#[test]
fn exec_with_arguments_discards_the_transaction() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let abort = err(
        "EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command",
    );
    c.cmd(&["MULTI"]);
    assert_eq!(c.cmd(&["SET", "a", "1"]), queued());
    assert_eq!(c.cmd(&["EXEC", "x"]), abort);
    assert_eq!(c.cmd(&["GET", "a"]), Reply::Nil, "not queued: out of MULTI");
    assert_eq!(c.cmd(&["EXEC"]), err("ERR EXEC without MULTI"));
    assert_eq!(c.cmd(&["EXEC", "x"]), abort, "the same outside MULTI");
    assert_eq!(c.cmd(&["PING"]), Reply::Simple("PONG".into()));
}
