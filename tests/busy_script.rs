//! A script running past `busy-reply-threshold` does not freeze its own
//! shard: with `--shards 1` (every client on the script's shard) other
//! clients get BUSY, SCRIPT KILL / FUNCTION KILL stop the script, FUNCTION
//! STATS shows it, SHUTDOWN NOSAVE exits, MULTI/EXEC fail as Redis's do,
//! and every connection goes on afterwards. The texts are compared with
//! redis-server's, which runs the same sessions.

mod common;

use std::sync::Mutex;
use std::time::Duration;

use common::reference::Redis;
use common::{Raw, Reply, Server};

/// Each test keeps a core busy with a spinning script (two, with the
/// reference server): they run one at a time, so a loaded machine still
/// answers each session within the read timeouts.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

const LOOP: &str = "while true do end";
const WRITE_THEN_LOOP: &str = "redis.call('set', 'w', '1') while true do end";
const LIBRARY: &str = "#!lua name=busylib\n\
    redis.register_function('spin', function() local a = 1 while true do a = a + 1 end end)\n\
    redis.register_function('spinw', function() redis.call('set', 'fw', '1') while true do end end)";

fn error(r: &Reply) -> String {
    match r {
        Reply::Error(e) => e.clone(),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// A client of the server on `port`, with the threshold at 10 ms.
fn client(port: u16) -> Raw {
    let mut c = Raw::connect(port);
    c.set_read_timeout(Duration::from_secs(30));
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "busy-reply-threshold", "10"]),
        Reply::Simple("OK".into())
    );
    c
}

/// Sends `argv` on a new connection (without reading its reply) and waits
/// until another client gets BUSY; returns (the runner, the other client).
fn start_busy(port: u16, argv: &[&str]) -> (Raw, Raw) {
    let mut other = client(port);
    let mut runner = Raw::connect(port);
    runner.set_read_timeout(Duration::from_secs(30));
    let args: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
    let mut bytes = common::encode_cmd(&args);
    // The runner's next command waits for the script, in order.
    bytes.extend(common::encode_cmd(&[b"PING", b"after"]));
    runner.send(&bytes);
    assert!(
        common::wait_until(Duration::from_secs(5), || {
            matches!(other.cmd(&["PING"]), Reply::Error(e) if e.starts_with("BUSY"))
        }),
        "the script never turned busy"
    );
    (runner, other)
}

/// A busy EVAL: what other clients get, then SCRIPT KILL; the replies in
/// order. (SHUTDOWN's BUSY is checked in the unkillable session, on a
/// fresh redis-server: after earlier busy sessions, redis-server at times
/// left a plain SHUTDOWN unanswered.)
fn eval_session(port: u16) -> Vec<Reply> {
    let (mut runner, mut other) = start_busy(port, &["EVAL", LOOP, "0"]);
    let mut replies = Vec::new();
    for argv in [
        &["PING"][..],
        &["GET", "x"],
        &["FUNCTION", "KILL"],
        &["FUNCTION", "STATS"],
        &["EXEC"],
        &["MULTI"],
        &["INCR", "x"],
        &["EXEC"],
        &["NOSUCHCOMMAND", "a"],
        &["GET"],
    ] {
        let args: Vec<&[u8]> = argv.iter().map(|a| a.as_bytes()).collect();
        other.send_cmd(&args);
        let reply = other.read();
        replies.push(reply.unwrap_or_else(|| panic!("no reply to {argv:?} on {port}")));
    }
    // A connection made while the script runs is answered too.
    let mut late = Raw::connect(port);
    late.set_read_timeout(Duration::from_secs(30));
    replies.push(late.cmd(&["PING"]));
    replies.push(other.cmd(&["SCRIPT", "KILL"]));
    replies.push(runner.read().expect("the script's reply"));
    replies.push(runner.read().expect("the runner's next reply"));
    replies.push(other.cmd(&["PING"]));
    replies.push(late.cmd(&["PING"]));
    replies.push(other.cmd(&["SCRIPT", "KILL"]));
    replies
}

/// A busy FCALL: FUNCTION STATS shows it, SCRIPT KILL refuses it,
/// FUNCTION KILL stops it.
fn function_session(port: u16) -> Vec<Reply> {
    let mut setup = client(port);
    setup.cmd(&["FUNCTION", "LOAD", "REPLACE", LIBRARY]);
    let (mut runner, mut other) = start_busy(port, &["FCALL", "spin", "0"]);
    let mut replies = vec![other.cmd(&["PING"])];
    match other.cmd(&["FUNCTION", "STATS"]) {
        Reply::Array(items) => {
            // running_script {name spin command {FCALL spin 0} duration_ms N}
            assert_eq!(items[0], Reply::bulk("running_script"));
            match &items[1] {
                Reply::Array(running) => {
                    replies.extend(running[..4].iter().cloned());
                    assert_eq!(running[4], Reply::bulk("duration_ms"));
                    assert!(matches!(running[5], Reply::Int(ms) if ms >= 10));
                }
                other => panic!("running_script: {other:?}"),
            }
            replies.extend(items[2..].iter().cloned());
        }
        other => panic!("FUNCTION STATS: {other:?}"),
    }
    replies.push(other.cmd(&["SCRIPT", "KILL"]));
    replies.push(other.cmd(&["FUNCTION", "KILL"]));
    replies.push(runner.read().expect("the function's reply"));
    replies.push(runner.read().expect("the runner's next reply"));
    replies.push(other.cmd(&["FUNCTION", "KILL"]));
    replies
}

#[test]
fn one_shard_busy_eval_answers_busy_and_script_kill_stops_it() {
    let _one = serial();
    let server = Server::start(1, &[]);
    let replies = eval_session(server.port);
    let busy =
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
    assert_eq!(error(&replies[0]), busy);
    assert_eq!(error(&replies[1]), busy);
    assert_eq!(replies[5], Reply::Simple("OK".into()), "MULTI");
    assert_eq!(error(&replies[6]), busy, "INCR inside MULTI");
    assert_eq!(
        error(&replies[7]),
        format!("EXECABORT Transaction discarded because of: {busy}")
    );
    assert_eq!(error(&replies[10]), busy, "a connection made meanwhile");
    assert_eq!(replies[11], Reply::Simple("OK".into()), "SCRIPT KILL");
    assert!(
        error(&replies[12]).starts_with("ERR Script killed by user with SCRIPT KILL... script: "),
        "{:?}",
        replies[12]
    );
    assert_eq!(replies[13], Reply::bulk("after"), "the runner's pipeline");
    assert_eq!(replies[14], Reply::Simple("PONG".into()));
    assert_eq!(replies[15], Reply::Simple("PONG".into()));
    assert_eq!(
        error(&replies[16]),
        "NOTBUSY No scripts in execution right now."
    );
}

#[test]
fn one_shard_busy_fcall_is_stopped_by_function_kill() {
    let _one = serial();
    let server = Server::start(1, &[]);
    let replies = function_session(server.port);
    let busy =
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
    assert_eq!(error(&replies[0]), busy);
    assert_eq!(replies[1], Reply::bulk("name"));
    assert_eq!(replies[2], Reply::bulk("spin"));
    let n = replies.len();
    assert_eq!(error(&replies[n - 5]), busy, "SCRIPT KILL of a function");
    assert_eq!(replies[n - 4], Reply::Simple("OK".into()));
    assert_eq!(
        error(&replies[n - 3]),
        "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2."
    );
    assert_eq!(replies[n - 2], Reply::bulk("after"));
}

#[test]
fn busy_sessions_match_redis() {
    let _one = serial();
    let Some(redis) = Redis::or_skip("busy_sessions_match_redis") else {
        return;
    };
    for shards in [1, 2] {
        let server = Server::start(shards, &[]);
        assert_eq!(
            eval_session(server.port),
            eval_session(redis.port),
            "EVAL, {shards} shard(s)"
        );
        assert_eq!(
            function_session(server.port),
            function_session(redis.port),
            "FCALL, {shards} shard(s)"
        );
    }
}

/// A script that wrote cannot be killed (either KILL); SHUTDOWN without
/// NOSAVE is BUSY; SHUTDOWN NOSAVE exits.
fn unkillable_then_shutdown(port: u16, argv: &[&str]) -> Vec<Reply> {
    let mut setup = client(port);
    setup.cmd(&["FUNCTION", "LOAD", "REPLACE", LIBRARY]);
    let (mut runner, mut other) = start_busy(port, argv);
    let mut replies = vec![
        other.cmd(&["SCRIPT", "KILL"]),
        other.cmd(&["FUNCTION", "KILL"]),
        other.cmd(&["SHUTDOWN"]),
        other.cmd(&["SHUTDOWN", "SAVE"]),
    ];
    other.send_cmd(&[b"SHUTDOWN", b"NOSAVE"]);
    assert_eq!(other.read(), None, "SHUTDOWN NOSAVE answers nothing");
    assert_eq!(runner.read(), None, "the runner's connection closes");
    replies.push(Reply::Nil);
    replies
}

#[test]
fn a_busy_script_that_wrote_is_unkillable_and_shutdown_nosave_exits() {
    let _one = serial();
    for argv in [
        &["EVAL", WRITE_THEN_LOOP, "0"][..],
        &["FCALL", "spinw", "0"],
    ] {
        let mut server = Server::start(1, &[]);
        let replies = unkillable_then_shutdown(server.port, argv);
        assert!(
            error(&replies[0])
                .starts_with("UNKILLABLE Sorry the script already executed write commands"),
            "{replies:?}"
        );
        assert_eq!(replies[0], replies[1]);
        assert!(error(&replies[2]).starts_with("BUSY "), "{replies:?}");
        assert!(server.wait_exit().is_some(), "SHUTDOWN NOSAVE exits");
        if let Some(redis) = Redis::start::<&str>(&[]) {
            assert_eq!(
                replies,
                unkillable_then_shutdown(redis.port, argv),
                "{argv:?}"
            );
        }
    }
}

#[test]
fn transactions_and_a_busy_script_on_the_same_shard() {
    let _one = serial();
    let server = Server::start(1, &[]);
    let mut setup = client(server.port);
    setup.cmd(&["SET", "xx", "1"]);
    let mut queued = Raw::connect(server.port);
    assert_eq!(queued.cmd(&["MULTI"]), Reply::Simple("OK".into()));
    assert_eq!(queued.cmd(&["INCR", "xx"]), Reply::Simple("QUEUED".into()));
    let (mut runner, mut other) = start_busy(server.port, &["EVAL", LOOP, "0"]);
    // EXEC during the script: discarded, and the client leaves MULTI.
    let exec = error(&queued.cmd(&["EXEC"]));
    assert!(
        exec.starts_with("EXECABORT Transaction discarded because of: BUSY"),
        "{exec}"
    );
    assert_eq!(other.cmd(&["SCRIPT", "KILL"]), Reply::Simple("OK".into()));
    assert!(runner.read().is_some());
    assert_eq!(runner.read(), Some(Reply::bulk("after")));
    assert_eq!(setup.cmd(&["GET", "xx"]), Reply::bulk("1"), "nothing ran");
    assert_eq!(queued.cmd(&["PING", "asdf"]), Reply::bulk("asdf"));
    // A script inside MULTI/EXEC turns busy like any other.
    assert_eq!(queued.cmd(&["MULTI"]), Reply::Simple("OK".into()));
    assert_eq!(
        queued.cmd(&["EVAL", LOOP, "0"]),
        Reply::Simple("QUEUED".into())
    );
    queued.send_cmd(&[b"EXEC"]);
    assert!(common::wait_until(Duration::from_secs(5), || {
        matches!(other.cmd(&["PING"]), Reply::Error(e) if e.starts_with("BUSY"))
    }));
    assert_eq!(other.cmd(&["SCRIPT", "KILL"]), Reply::Simple("OK".into()));
    match queued.read() {
        Some(Reply::Array(items)) => assert!(
            matches!(&items[0], Reply::Error(e) if e.starts_with("ERR Script killed by user")),
            "{items:?}"
        ),
        other => panic!("EXEC: {other:?}"),
    }
    assert_eq!(other.cmd(&["PING"]), Reply::Simple("PONG".into()));
}
