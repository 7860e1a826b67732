//! MIGRATE: keys moved (or copied) to another server that speaks RESP, as
//! Redis 7.0 moves them.
//!
//! 1. The arguments are checked in Redis's order (options, then the
//!    timeout and the database as integers).
//! 2. Each key's shard serializes it as DUMP does, with its deadline
//!    (one op per shard holding some of the keys). None found: `NOKEY`.
//! 3. On the client's shard: one connection to the target (`timeout` ms to
//!    connect, and for each write and read), AUTH / AUTH2 if given,
//!    SELECT, then a RESTORE (with the time to live left, REPLACE if
//!    given) per key, pipelined; every reply is read.
//! 4. Unless COPY, each key the target took is deleted on its shard (a
//!    DEL: its event, its record for the AOF and replicas), if it still
//!    holds what was sent: a key written meanwhile stays.
//!
//! Step 3 blocks the client's shard for the exchange, as Redis's MIGRATE
//! blocks its whole server; the other shards go on serving. The timeout
//! bounds the connect, each write and each read; a host name is resolved
//! before (by the system's resolver, as Redis resolves it). The connection
//! is kept for the next MIGRATE to the same target from the same shard
//! (`cache`: closed after 10 s unused, as Redis's).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use bytes::Bytes;

use super::args::err;
use super::{shard_of, Ctx, Session, ShardData};
use crate::exec::{Action, Job, Op, Out};
use crate::resp::Frame;
use crate::store::rdb;

mod cache;
pub use cache::{cached_sockets, close_idle};

/// The key positions (Redis's getkeys rule for MIGRATE, whose key specs
/// are incomplete: ACL and COMMAND GETKEYS read it, `meta::keys`): `key`,
/// or with KEYS (where `key` must be empty) every argument after it. AUTH
/// and AUTH2 are stepped over, so a password spelled `keys` is not the
/// option. The command runs where its client is, so no routing needs it.
pub fn keys(argv: &[Bytes]) -> Vec<usize> {
    let mut j = 6;
    while j < argv.len() {
        match argv[j].to_ascii_lowercase().as_slice() {
            b"keys" if argv[3].is_empty() => return (j + 1..argv.len()).collect(),
            b"keys" => return Vec::new(),
            b"auth" => j += 2,
            b"auth2" => j += 3,
            _ => j += 1,
        }
    }
    if argv.len() > 3 {
        vec![3]
    } else {
        Vec::new()
    }
}

/// What MIGRATE was asked to do.
struct Request {
    addr: String,
    db: i64,
    timeout: Duration,
    copy: bool,
    replace: bool,
    /// AUTH's arguments (a password, or a user and a password).
    auth: Option<Vec<Bytes>>,
    keys: Vec<Bytes>,
}

fn parse(argv: &[Bytes]) -> Result<Request, Frame> {
    let (mut copy, mut replace, mut auth) = (false, false, None);
    let mut keys = vec![argv[3].clone()];
    let mut j = 6;
    while j < argv.len() {
        let more = argv.len() - j - 1;
        match argv[j].to_ascii_lowercase().as_slice() {
            b"copy" => copy = true,
            b"replace" => replace = true,
            b"auth" if more >= 1 => {
                auth = Some(vec![argv[j + 1].clone()]);
                j += 1;
            }
            b"auth2" if more >= 2 => {
                auth = Some(vec![argv[j + 1].clone(), argv[j + 2].clone()]);
                j += 2;
            }
            b"keys" => {
                if !argv[3].is_empty() {
                    return Err(err::frame(
                        "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
                    ));
                }
                keys = argv[j + 1..].to_vec();
                break;
            }
            _ => return Err(err::syntax()),
        }
        j += 1;
    }
    let timeout = super::args::int_arg(&argv[5])?;
    let db = super::args::int_arg(&argv[4])?;
    let timeout_ms = if timeout <= 0 { 1000 } else { timeout as u64 };
    Ok(Request {
        addr: format!(
            "{}:{}",
            String::from_utf8_lossy(&argv[1]),
            String::from_utf8_lossy(&argv[2])
        ),
        db,
        timeout: Duration::from_millis(timeout_ms),
        copy,
        replace,
        auth,
        keys,
    })
}

/// A key as serialized on its shard: name, DUMP payload, deadline.
type Dumped = (Bytes, Bytes, Option<u64>);

pub fn migrate(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let request = match parse(argv) {
        Ok(r) => r,
        Err(e) => return Action::Reply(e),
    };
    let (n, db) = (shard.shared.nshards, session.db);
    let mut by_shard: Vec<Vec<Bytes>> = vec![Vec::new(); n];
    for key in &request.keys {
        by_shard[shard_of(key, n)].push(key.clone());
    }
    let ops = by_shard
        .into_iter()
        .enumerate()
        .filter(|(_, keys)| !keys.is_empty())
        .map(|(s, keys)| {
            (
                s,
                Op::store(db, move |ctx| Out::Frame(dump_keys(ctx, &keys))),
            )
        })
        .collect();
    Action::Job(Job::new(ops, move |outs| {
        let dumped: Vec<Dumped> = outs.into_iter().flat_map(|o| undump(o.frame())).collect();
        if dumped.is_empty() {
            return Action::Reply(Frame::Simple("NOKEY"));
        }
        let (moved, error) = match send(&request, &dumped) {
            Ok(result) => result,
            Err(io_error) => return Action::Reply(err::frame(io_error)),
        };
        let reply = match error {
            Some(text) => Frame::Error(format!("ERR Target instance replied with error: {text}")),
            None => Frame::OK,
        };
        if request.copy || moved.is_empty() {
            return Action::Reply(reply);
        }
        let mut by_shard: Vec<Vec<Dumped>> = vec![Vec::new(); n];
        for key in moved {
            by_shard[shard_of(&key.0, n)].push(key);
        }
        let deletes = by_shard
            .into_iter()
            .enumerate()
            .filter(|(_, keys)| !keys.is_empty())
            .map(|(s, keys)| (s, Op::store(db, move |ctx| delete_unchanged(ctx, keys))))
            .collect();
        Action::Job(Job::new(deletes, move |_| Action::Reply(reply)))
    }))
}

/// Step 2 on a key's shard: `[key, payload, deadline or -1]` for each key
/// that exists.
fn dump_keys(ctx: &mut Ctx, keys: &[Bytes]) -> Frame {
    let mut items = Vec::new();
    for key in keys {
        if let Some((value, deadline)) = super::keys::read_entry(ctx, key) {
            items.push(Frame::Bulk(key.clone()));
            items.push(Frame::Bulk(Bytes::from(rdb::dump(&value))));
            items.push(Frame::Integer(deadline.map_or(-1, |d| d as i64)));
        }
    }
    Frame::Array(items)
}

fn undump(frame: Frame) -> Vec<Dumped> {
    let Frame::Array(items) = frame else {
        return Vec::new();
    };
    items
        .chunks_exact(3)
        .filter_map(|c| match c {
            [Frame::Bulk(key), Frame::Bulk(payload), Frame::Integer(deadline)] => {
                Some((key.clone(), payload.clone(), u64::try_from(*deadline).ok()))
            }
            _ => None,
        })
        .collect()
}

/// Step 4 on a key's shard: DEL each key that still holds what was sent.
fn delete_unchanged(ctx: &mut Ctx, keys: Vec<Dumped>) -> Out {
    for (key, payload, _) in keys {
        let same = super::keys::read_entry(ctx, &key)
            .is_some_and(|(value, _)| rdb::dump(&value) == payload.as_ref());
        if same {
            let argv = [Bytes::from_static(b"DEL"), key];
            let _ = super::propagate::call(ctx, super::keys::del, &argv);
        }
    }
    Out::Count(0)
}

/// Why an exchange failed: Redis's IOERR text, and whether it was a
/// timeout (a cached connection that failed otherwise is tried again on
/// a fresh one, as Redis tries once more).
struct Failure {
    text: &'static str,
    timed_out: bool,
}

const CONNECT: &str = "IOERR error or timeout connecting to the client";
const WRITE: &str = "IOERR error or timeout writing to target instance";
const READ: &str = "IOERR error or timeout reading to target instance";

fn io_failure(text: &'static str) -> impl Fn(std::io::Error) -> Failure {
    move |e| Failure {
        text,
        timed_out: matches!(
            e.kind(),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
        ),
    }
}

/// Step 3, on a connection kept from an earlier MIGRATE to the same
/// target if there is one. Ok: the keys it restored and its first error
/// reply, if any; Err: Redis's IOERR text.
#[allow(clippy::type_complexity)]
fn send(request: &Request, keys: &[Dumped]) -> Result<(Vec<Dumped>, Option<String>), &'static str> {
    let cached = cache::take(&request.addr);
    let reused = cached.is_some();
    match exchange(request, keys, cached) {
        Err(failure) if reused && !failure.timed_out => exchange(request, keys, None),
        done => done,
    }
    .map_err(|failure| failure.text)
}

#[allow(clippy::type_complexity)]
fn exchange(
    request: &Request,
    keys: &[Dumped],
    cached: Option<cache::Cached>,
) -> Result<(Vec<Dumped>, Option<String>), Failure> {
    let (stream, selected) = match cached {
        Some(c) => (c.stream, c.db),
        None => (connect(request)?, None),
    };
    stream
        .set_read_timeout(Some(request.timeout))
        .and_then(|_| stream.set_write_timeout(Some(request.timeout)))
        .map_err(io_failure(CONNECT))?;
    let mut out = Vec::new();
    let mut preamble = 0;
    if let Some(auth) = &request.auth {
        let mut argv = vec![Bytes::from_static(b"AUTH")];
        argv.extend(auth.iter().cloned());
        crate::exec::feed::write_command(&mut out, &argv);
        preamble += 1;
    }
    // As Redis: SELECT only when the connection is not there already.
    if selected != Some(request.db) {
        crate::exec::feed::write_command(
            &mut out,
            &[
                Bytes::from_static(b"SELECT"),
                Bytes::from(request.db.to_string()),
            ],
        );
        preamble += 1;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut sent = Vec::with_capacity(keys.len());
    for key in keys {
        let (key, payload, deadline) = key;
        // As Redis: a key whose deadline passed since it was read is not
        // sent; one due now goes with the least TTL, 1 ms.
        if deadline.is_some_and(|d| d < now) {
            continue;
        }
        sent.push((key.clone(), payload.clone(), *deadline));
        let ttl = deadline.map_or(0, |d| d.saturating_sub(now).max(1));
        let mut argv = vec![
            Bytes::from_static(b"RESTORE"),
            key.clone(),
            Bytes::from(ttl.to_string()),
            payload.clone(),
        ];
        if request.replace {
            argv.push(Bytes::from_static(b"REPLACE"));
        }
        crate::exec::feed::write_command(&mut out, &argv);
    }
    let mut writer = &stream;
    writer.write_all(&out).map_err(io_failure(WRITE))?;
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    let mut next_reply = |line: &mut String| -> Result<Option<String>, Failure> {
        line.clear();
        match reader.read_line(line) {
            Ok(n) if n > 0 => {}
            Ok(_) => {
                return Err(Failure {
                    text: READ,
                    timed_out: false,
                })
            }
            Err(e) => return Err(io_failure(READ)(e)),
        }
        let text = line.trim_end_matches(['\r', '\n']);
        Ok(text.strip_prefix('-').map(str::to_string))
    };
    for _ in 0..preamble {
        if let Some(e) = next_reply(&mut line)? {
            // AUTH or SELECT refused: nothing was restored, and the
            // connection is not kept.
            return Ok((Vec::new(), Some(e)));
        }
    }
    let mut error = None;
    let mut moved = Vec::new();
    for key in sent {
        match next_reply(&mut line)? {
            Some(e) => {
                error.get_or_insert(e);
            }
            None => moved.push(key),
        }
    }
    drop(reader);
    cache::keep(&request.addr, stream, request.db);
    Ok((moved, error))
}

/// A new connection to the target, `timeout` to connect.
fn connect(request: &Request) -> Result<TcpStream, Failure> {
    let refused = Failure {
        text: CONNECT,
        timed_out: false,
    };
    let addr = request
        .addr
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or(refused)?;
    // Redis connects without blocking and learns of a refusal only when
    // it writes: only a connection that timed out is a connect error.
    let stream = TcpStream::connect_timeout(&addr, request.timeout).map_err(|e| {
        let timed_out = matches!(
            e.kind(),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
        );
        Failure {
            text: if timed_out { CONNECT } else { WRITE },
            timed_out,
        }
    })?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_argv as argv;

    #[test]
    fn keys_are_the_key_or_what_follows_keys() {
        let one = argv(&["MIGRATE", "h", "1", "k", "0", "10"]);
        assert_eq!(keys(&one), [3]);
        let many = argv(&["MIGRATE", "h", "1", "", "0", "10", "COPY", "KEYS", "a", "b"]);
        assert_eq!(keys(&many), [8, 9]);
        // A password spelled "keys" is AUTH's, not the option.
        let auth = argv(&[
            "MIGRATE", "h", "1", "", "0", "10", "AUTH", "keys", "KEYS", "a",
        ]);
        assert_eq!(keys(&auth), [9]);
        let auth2 = argv(&[
            "MIGRATE", "h", "1", "", "0", "10", "AUTH2", "u", "keys", "KEYS", "a",
        ]);
        assert_eq!(keys(&auth2), [10]);
    }

    #[test]
    fn options_are_checked_as_redis_checks_them() {
        let text = |words: &[&str]| match parse(&argv(words)) {
            Ok(_) => "ok".to_string(),
            Err(Frame::Error(e)) => e,
            Err(other) => format!("{other:?}"),
        };
        assert_eq!(
            text(&["MIGRATE", "h", "1", "k", "0", "10", "COPY", "REPLACE"]),
            "ok"
        );
        assert_eq!(
            text(&["MIGRATE", "h", "1", "k", "0", "10", "nope"]),
            "ERR syntax error"
        );
        assert_eq!(
            text(&["MIGRATE", "h", "1", "k", "0", "10", "AUTH"]),
            "ERR syntax error"
        );
        assert_eq!(
            text(&["MIGRATE", "h", "1", "k", "0", "10", "KEYS", "a"]),
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
        );
        assert_eq!(
            text(&["MIGRATE", "h", "1", "k", "x", "10"]),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            text(&["MIGRATE", "h", "1", "k", "0", "x"]),
            "ERR value is not an integer or out of range"
        );
    }
}
