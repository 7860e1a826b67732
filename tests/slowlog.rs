//! SLOWLOG GET / LEN / RESET / HELP with `slowlog-log-slower-than` and
//! `slowlog-max-len`: what is logged (and what not), how arguments are cut
//! and redacted, one order and one id sequence for every shard's commands,
//! and the replies and errors compared with redis-server 7.0.15.

mod common;

use common::reference::Redis;
use common::{err, int, keys_on_shard, ok, Raw, Reply, Server};

/// The argv of each entry of SLOWLOG GET `count`, newest first.
fn logged(raw: &mut Raw, count: &str) -> Vec<Vec<String>> {
    raw.cmd(&["SLOWLOG", "GET", count])
        .items()
        .iter()
        .map(|e| e.items()[3].items().iter().map(Reply::text).collect())
        .collect()
}

fn words(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_string).collect()
}

#[test]
fn defaults_and_threshold() {
    let server = Server::start(2, &["--enable-debug-command", "local"]);
    let mut raw = server.raw();
    let get = |raw: &mut Raw, name: &str| raw.cmd(&["CONFIG", "GET", name]).items()[1].text();
    assert_eq!(get(&mut raw, "slowlog-log-slower-than"), "10000");
    assert_eq!(get(&mut raw, "slowlog-max-len"), "128");
    assert_eq!(raw.cmd(&["SLOWLOG", "LEN"]), int(0));
    // Fast commands stay out at the default threshold; a 20 ms one is in.
    raw.cmd(&["SET", "k", "v"]);
    assert_eq!(raw.cmd(&["SLOWLOG", "LEN"]), int(0));
    assert_eq!(raw.cmd(&["CLIENT", "SETNAME", "sleeper"]), ok());
    assert_eq!(raw.cmd(&["DEBUG", "SLEEP", "0.02"]), ok());
    let entries = raw.cmd(&["SLOWLOG", "GET"]).items();
    assert_eq!(entries.len(), 1);
    let e = entries[0].items();
    assert_eq!(e.len(), 6);
    assert!(e[2].int() >= 20_000, "{e:?}");
    assert_eq!(
        e[3].items().iter().map(Reply::text).collect::<Vec<_>>(),
        words("DEBUG SLEEP 0.02")
    );
    assert!(e[4].text().starts_with("127.0.0.1:"), "{e:?}");
    assert_eq!(e[5].text(), "sleeper");
    let now_s = (common::unix_ms() / 1000) as i64;
    assert!((now_s - 5..=now_s).contains(&e[1].int()), "{e:?}");

    // -1 turns it off, 0 logs everything.
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]),
        ok()
    );
    assert_eq!(raw.cmd(&["DEBUG", "SLEEP", "0.02"]), ok());
    assert_eq!(raw.cmd(&["SLOWLOG", "LEN"]), int(1));
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]),
        ok()
    );
    assert_eq!(raw.cmd(&["PING"]), Reply::Simple("PONG".into()));
    assert_eq!(logged(&mut raw, "1"), [words("PING")]);
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "-2"]),
        err("ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be between -1 and 9223372036854775807 inclusive")
    );
}

#[test]
fn max_len_keeps_the_newest_and_ids_increase_across_shards() {
    let server = Server::start(
        3,
        &["--slowlog-log-slower-than", "0", "--slowlog-max-len", "10"],
    );
    let mut raw = server.raw();
    // Keys on every shard, single-key and across shards, from several
    // connections (each on whatever shard accepted it).
    let mut others: Vec<Raw> = (0..3).map(|_| server.raw()).collect();
    for i in 0..30 {
        let key = keys_on_shard("k", i % 3, 3, 1).remove(0);
        others[i % 3].cmd(&["SET", &key, &i.to_string()]);
    }
    assert_eq!(raw.cmd(&["SLOWLOG", "LEN"]), int(10));
    let entries = raw.cmd(&["SLOWLOG", "GET", "-1"]).items();
    assert_eq!(entries.len(), 10);
    let ids: Vec<i64> = entries.iter().map(|e| e.items()[0].int()).collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1] + 1), "{ids:?}");
    // The newest is SLOWLOG LEN, then the last SET (sent from the third
    // connection).
    assert_eq!(entries[0].items()[3].items()[1].text(), "LEN");
    assert_eq!(entries[1].items()[3].items()[2].text(), "29");
    assert_eq!(logged(&mut raw, "5").len(), 5);
    assert_eq!(logged(&mut raw, "0").len(), 0);

    // A command over several shards is one entry, as sent.
    let keys: Vec<String> = (0..3)
        .map(|s| keys_on_shard("m", s, 3, 1).remove(0))
        .collect();
    let mut mset = vec!["MSET"];
    for k in &keys {
        mset.extend([k.as_str(), "v"]);
    }
    assert_eq!(raw.cmd(&mset), ok());
    assert_eq!(raw.cmd(&["RENAME", &keys[0], &keys[1]]), ok());
    let got = logged(&mut raw, "2");
    assert_eq!(got[0], words(&format!("RENAME {} {}", keys[0], keys[1])));
    assert_eq!(
        got[1],
        mset.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    );

    // RESET empties it; ids go on.
    let last = raw.cmd(&["SLOWLOG", "GET", "1"]).items()[0].items()[0].int();
    assert_eq!(raw.cmd(&["SLOWLOG", "RESET"]), ok());
    let after = raw.cmd(&["SLOWLOG", "GET"]).items();
    assert_eq!(
        after.len(),
        1,
        "SLOWLOG RESET itself is logged after it ran"
    );
    assert!(after[0].items()[0].int() > last);
}

#[test]
fn exec_is_not_logged_its_commands_and_a_served_blocked_client_are() {
    let server = Server::start(1, &["--slowlog-log-slower-than", "0"]);
    let mut raw = server.raw();
    let mut waiter = server.raw();
    waiter.send_cmd(&[b"BLPOP", b"l", b"0"]);
    assert!(common::wait_until(
        std::time::Duration::from_secs(5),
        || { raw.info_int("clients", "blocked_clients") == 1 }
    ));
    assert_eq!(raw.cmd(&["MULTI"]), ok());
    raw.cmd(&["LPUSH", "l", "foo"]);
    raw.cmd(&["SLOWLOG", "RESET"]);
    assert_eq!(raw.cmd(&["EXEC"]).items().len(), 2);
    assert_eq!(waiter.read().unwrap().items().len(), 2);
    // The served BLPOP comes after EXEC's commands, logged as sent (not as
    // the LPOP it is propagated as); EXEC itself is not logged.
    let got = logged(&mut raw, "-1");
    assert_eq!(got[1], words("SLOWLOG RESET"), "{got:?}");
    assert_eq!(got[0], words("BLPOP l 0"), "{got:?}");
    assert_eq!(got.len(), 2, "{got:?}");
}

#[test]
fn arguments_are_cut_and_secrets_redacted() {
    let server = Server::start(2, &["--slowlog-log-slower-than", "0"]);
    let mut raw = server.raw();
    let mut sadd = vec!["SADD".to_string(), "set".to_string()];
    sadd.extend((3..=33).map(|i| i.to_string()));
    let sadd_ref: Vec<&str> = sadd.iter().map(String::as_str).collect();
    raw.cmd(&sadd_ref);
    let got = logged(&mut raw, "1").remove(0);
    assert_eq!(got.len(), 32);
    assert_eq!(got[30], "31");
    assert_eq!(got[31], "... (2 more arguments)");

    let long = "A".repeat(129);
    raw.cmd(&["SADD", "set", "foo", &long]);
    assert_eq!(
        logged(&mut raw, "1")[0][3],
        format!("{}... (1 more bytes)", "A".repeat(128))
    );

    raw.cmd(&["AUTH", "secret"]);
    raw.cmd(&["HELLO", "2", "AUTH", "default", "secret", "SETNAME", "n"]);
    raw.cmd(&["ACL", "SETUSER", "u", "on", ">pw"]);
    raw.cmd(&["CONFIG", "SET", "requirepass", "pw"]);
    let got = logged(&mut raw, "4");
    assert_eq!(got[0], words("CONFIG SET requirepass (redacted)"));
    assert_eq!(
        got[1],
        words("ACL SETUSER (redacted) (redacted) (redacted)")
    );
    assert_eq!(
        got[2],
        words("HELLO 2 AUTH (redacted) (redacted) SETNAME n")
    );
    assert_eq!(got[3], words("AUTH (redacted)"));
}

/// The same commands against both servers: the same entries (but for ids,
/// times, durations and ports) and the same replies and errors.
#[test]
fn replies_match_redis() {
    let Some(redis) = Redis::or_skip("slowlog_replies_match_redis") else {
        return;
    };
    let server = Server::start(2, &[]);
    let mut outs = Vec::new();
    for port in [server.port, redis.port] {
        let mut raw = Raw::connect(port);
        let mut out = Vec::new();
        out.push(raw.cmd(&[
            "CONFIG",
            "SET",
            "slowlog-log-slower-than",
            "0",
            "slowlog-max-len",
            "3",
        ]));
        out.push(raw.cmd(&["SLOWLOG", "RESET"]));
        for cmd in [
            &["SET", "key", "test"][..],
            &["SADD", "set", "a", "b", "c"],
            &["INCR", "num"],
            &["LPUSH", "list", "a"],
        ] {
            out.push(raw.cmd(cmd));
        }
        out.push(raw.cmd(&["SLOWLOG", "LEN"]));
        for count in ["0", "1", "-1", "3", "100"] {
            out.push(int(raw.cmd(&["SLOWLOG", "GET", count]).items().len() as i64));
        }
        out.push(Reply::Array(
            logged(&mut raw, "2")
                .into_iter()
                .flatten()
                .map(|s| Reply::bulk(&s))
                .collect(),
        ));
        for cmd in [
            &["SLOWLOG", "GET", "-2"][..],
            &["SLOWLOG", "GET", "x"],
            &["SLOWLOG", "GET", "1", "2"],
            &["SLOWLOG", "LEN", "1"],
            &["SLOWLOG", "RESET", "1"],
            &["SLOWLOG", "HELP", "1"],
            &["SLOWLOG", "foo"],
            &["SLOWLOG"],
            &["SLOWLOG", "HELP"],
            &["CONFIG", "SET", "slowlog-max-len", "-1"],
        ] {
            out.push(raw.cmd(cmd));
        }
        outs.push(out);
    }
    assert_eq!(outs[0], outs[1]);
}
