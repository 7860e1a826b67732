//! Connection commands: PING, ECHO, QUIT, HELLO, AUTH, SELECT, RESET, CLIENT
//! (CLIENT UNBLOCK included: it ends a BLPOP-style wait on the client's shard).

use bytes::Bytes;

use super::args::err;
use super::keys::help_reply;
use super::{Session, ShardData};
use crate::exec::{Action, ClientType, ClientsOp, Job, KillFilter, Op, Out};
use crate::resp::{Frame, Protocol};

pub fn ping(_: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    if session.in_subscriber_mode() && argv.len() <= 2 {
        // RESP2 subscribers get PING's answer in the shape of a message.
        let payload = argv.get(1).cloned().unwrap_or_default();
        return Frame::Array(vec![Frame::bulk("pong"), Frame::Bulk(payload)]).into();
    }
    match argv.len() {
        1 => Frame::Simple("PONG").into(),
        2 => Frame::Bulk(argv[1].clone()).into(),
        _ => err::wrong_arity("ping").into(),
    }
}

pub fn echo(_: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    Frame::Bulk(argv[1].clone()).into()
}

pub fn quit(_: &mut ShardData, _: &mut Session, _: &[Bytes]) -> Action {
    Action::Close(Frame::OK)
}

/// AUTH password (the default user's) or AUTH user password.
pub fn auth(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    if argv.len() > 3 {
        return err::syntax().into();
    }
    let (user, password) = if argv.len() == 3 {
        (&argv[1][..], &argv[2])
    } else {
        // As Redis: the one-argument form is an error while the default
        // user needs no password.
        if shard.shared.acl.default_nopass() {
            return err::frame("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?").into();
        }
        (&b"default"[..], &argv[1])
    };
    match super::acl::login(shard, session, user, password, &argv[0]) {
        Ok(()) => Frame::OK.into(),
        Err(e) => e.into(),
    }
}

pub fn select(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let db = match super::args::int32_arg(&argv[1]) {
        Ok(db) => db,
        Err(e) => return e.into(),
    };
    if db < 0 || db as usize >= shard.store.dbs.len() {
        return err::frame(err::DB_RANGE).into();
    }
    session.db = db as usize;
    Frame::OK.into()
}

pub fn reset(shard: &mut ShardData, session: &mut Session, _: &[Bytes]) -> Action {
    super::pubsub::forget(&shard.shared.pubsub, session);
    super::tracking::disable(shard, session);
    super::monitor::stop(shard, session);
    session.multi = None;
    let unwatch = super::transaction::unwatch_ops(session, shard.shared.nshards);
    session.channels.clear();
    session.patterns.clear();
    session.shard_channels.clear();
    session.db = 0;
    session.proto = Protocol::Resp2;
    session.name = None;
    session.no_evict = false;
    // Back to the default user, logged in only if it needs no password,
    // as a new connection (Redis's clientSetDefaultAuth).
    session.auth = Default::default();
    if unwatch.is_empty() {
        return Frame::Simple("RESET").into();
    }
    Action::Job(crate::exec::Job::new(unwatch, |_| {
        Action::Reply(Frame::Simple("RESET"))
    }))
}

/// The map HELLO answers with.
fn hello_map(session: &Session) -> Frame {
    Frame::Map(vec![
        (Frame::bulk("server"), Frame::bulk("redis")),
        (Frame::bulk("version"), Frame::bulk("7.0.15")),
        (
            Frame::bulk("proto"),
            Frame::Integer(if session.proto == Protocol::Resp3 {
                3
            } else {
                2
            }),
        ),
        (Frame::bulk("id"), Frame::Integer(session.id as i64)),
        (Frame::bulk("mode"), Frame::bulk("standalone")),
        (Frame::bulk("role"), Frame::bulk("master")),
        (Frame::bulk("modules"), Frame::Array(Vec::new())),
    ])
}

pub fn hello(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let mut proto = session.proto;
    let mut i = 1;
    if let Some(ver) = argv.get(1) {
        match crate::util::num::parse_i64(ver) {
            Some(2) => proto = Protocol::Resp2,
            Some(3) => proto = Protocol::Resp3,
            Some(_) => return err::frame("NOPROTO unsupported protocol version").into(),
            None => {
                return err::frame("ERR Protocol version is not an integer or out of range").into()
            }
        }
        i = 2;
    }
    let mut name = None;
    let mut auth = None;
    while i < argv.len() {
        let opt = &argv[i];
        if opt.eq_ignore_ascii_case(b"AUTH") && i + 2 < argv.len() {
            auth = Some((&argv[i + 1], &argv[i + 2]));
            i += 3;
        } else if opt.eq_ignore_ascii_case(b"SETNAME") && i + 1 < argv.len() {
            match valid_name(&argv[i + 1]) {
                Ok(n) => name = Some(n),
                Err(e) => return e.into(),
            }
            i += 2;
        } else {
            return Frame::Error(format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(opt)
            ))
            .into();
        }
    }
    // As Redis, the credentials are checked once every option parsed.
    match auth {
        Some((user, password)) => {
            if let Err(e) = super::acl::login(shard, session, user, password, &argv[0]) {
                return e.into();
            }
        }
        None if !super::acl::logged_in(shard, session) => {
            return err::frame("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time").into();
        }
        None => {}
    }
    session.proto = proto;
    if let Some(n) = name {
        session.name = n;
    }
    hello_map(session).into()
}

/// Client names: no spaces, newlines or special characters; empty clears.
fn valid_name(name: &[u8]) -> Result<Option<String>, Frame> {
    if name.iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
        return Err(err::frame(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    Ok((!name.is_empty()).then(|| String::from_utf8_lossy(name).into_owned()))
}

/// 7.0.15's text, word for word.
const CLIENT_HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "HELP",
    "    Prints this help.",
];

/// CLIENT's subcommands; LIST and KILL visit every shard's clients.
pub fn client(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let sub = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    let arity = |n: usize| argv.len() == n;
    let wrong = || err::wrong_arity(&format!("client|{sub}"));
    match sub.as_str() {
        "help" if arity(2) => help_reply(CLIENT_HELP).into(),
        "id" if arity(2) => Frame::Integer(session.id as i64).into(),
        "getname" if arity(2) => session
            .name
            .as_ref()
            .map_or(Frame::Null, Frame::bulk)
            .into(),
        "setname" if arity(3) => match valid_name(&argv[2]) {
            Ok(name) => {
                session.name = name;
                Frame::OK.into()
            }
            Err(e) => e.into(),
        },
        "info" if arity(2) => list_job(shard, Some(vec![session.id]), None),
        "list" => match client_list_filter(&argv[2..]) {
            Ok((ids, kind)) => list_job(shard, ids, kind),
            Err(e) => e.into(),
        },
        "kill" if argv.len() >= 3 => client_kill(shard, session, argv),
        "unblock" if argv.len() == 3 || argv.len() == 4 => client_unblock(shard, argv),
        "unblock" | "pause" if argv.len() > 4 => Frame::Error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(&argv[1])
        ))
        .into(),
        "no-evict" if arity(3) => match argv[2].to_ascii_lowercase().as_slice() {
            b"on" | b"off" => {
                session.no_evict = argv[2].eq_ignore_ascii_case(b"on");
                Frame::OK.into()
            }
            _ => err::syntax().into(),
        },
        "reply" if arity(3) => client_reply(session, &argv[2]),
        "pause" if argv.len() == 3 || argv.len() == 4 => super::pause::client_pause(shard, argv),
        "unpause" if arity(2) => super::pause::client_unpause(shard),
        "tracking" if argv.len() >= 3 => super::tracking::client_tracking(shard, session, argv),
        "caching" if arity(3) => super::tracking::client_caching(session, argv),
        "getredir" if arity(2) => super::tracking::client_getredir(session),
        "trackinginfo" if arity(2) => super::tracking::client_trackinginfo(session),
        "help" | "id" | "getname" | "setname" | "info" | "kill" | "no-evict" | "unblock"
        | "tracking" | "caching" | "getredir" | "trackinginfo" | "reply" | "unpause" => {
            wrong().into()
        }
        "pause" if argv.len() < 3 => wrong().into(),
        _ => err::unknown_subcommand(&argv[1], "client").into(),
    }
}

/// CLIENT REPLY ON|OFF|SKIP: OFF and SKIP answer nothing (pushes still
/// go out); SKIP while OFF changes nothing, as in Redis.
fn client_reply(session: &mut Session, mode: &[u8]) -> Action {
    use super::ReplyMode;
    match mode.to_ascii_lowercase().as_slice() {
        b"on" => {
            session.reply = ReplyMode::On;
            Frame::OK.into()
        }
        b"off" => {
            session.reply = ReplyMode::Off;
            Frame::Sequence(Vec::new()).into()
        }
        b"skip" => {
            if session.reply != ReplyMode::Off {
                session.reply = ReplyMode::SkipNext;
            }
            Frame::Sequence(Vec::new()).into()
        }
        _ => err::syntax().into(),
    }
}

/// CLIENT LIST's filters: `ID id...` or `TYPE type`.
fn client_list_filter(rest: &[Bytes]) -> Result<(Option<Vec<u64>>, Option<ClientType>), Frame> {
    match rest.split_first() {
        None => Ok((None, None)),
        Some((word, kind)) if word.eq_ignore_ascii_case(b"TYPE") && kind.len() == 1 => {
            match ClientType::parse(&kind[0]) {
                Some(k) => Ok((None, Some(k))),
                None => Err(unknown_client_type(&kind[0])),
            }
        }
        Some((word, ids)) if word.eq_ignore_ascii_case(b"ID") && !ids.is_empty() => ids
            .iter()
            .map(|b| {
                crate::util::num::parse_i64(b)
                    .filter(|n| *n > 0)
                    .map(|n| n as u64)
                    .ok_or_else(|| err::frame("ERR Invalid client ID"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|ids| (Some(ids), None)),
        _ => Err(err::syntax()),
    }
}

/// Gathers CLIENT LIST lines from every shard, in client id order.
fn list_job(shard: &ShardData, ids: Option<Vec<u64>>, kind: Option<ClientType>) -> Action {
    let n = shard.shared.nshards;
    let ops = (0..n)
        .map(|s| {
            let ids = ids.clone();
            (s, Op::Clients(ClientsOp::List { ids, kind }))
        })
        .collect();
    Action::Job(Job::new(ops, |outs| {
        let mut lines: Vec<(u64, String)> = outs
            .into_iter()
            .flat_map(|out| {
                if let Out::Lines(l) = out {
                    l
                } else {
                    Vec::new()
                }
            })
            .map(|line| {
                (
                    line[3..]
                        .split(' ')
                        .next()
                        .and_then(|id| id.parse().ok())
                        .unwrap_or(0),
                    line,
                )
            })
            .collect();
        lines.sort_by_key(|(id, _)| *id);
        let text: String = lines.into_iter().map(|(_, l)| l + "\n").collect();
        Action::Reply(Frame::Verbatim(Bytes::from(text)))
    }))
}

/// Kills the replicas a CLIENT KILL filter names (TYPE replica, or one's
/// ID or address, nothing else contradicting); returns how many.
fn kill_replicas(shard: &ShardData, filter: &KillFilter) -> i64 {
    let named =
        filter.kind == Some(ClientType::Replica) || filter.id.is_some() || filter.addr.is_some();
    if !named || filter.kind.is_some_and(|k| k != ClientType::Replica) || filter.laddr.is_some() {
        return 0;
    }
    let mut killed = 0;
    for r in shard.shared.repl.list() {
        let addr = format!("{}:{}", r.ip, r.port);
        if filter.id.is_none_or(|id| id == r.id)
            && filter.addr.as_ref().is_none_or(|a| *a == addr)
            && filter.skip_id != Some(r.id)
            && !r.kill.load(std::sync::atomic::Ordering::Relaxed)
        {
            r.kill();
            killed += 1;
        }
    }
    killed
}

fn unknown_client_type(word: &[u8]) -> Frame {
    Frame::Error(format!(
        "ERR Unknown client type '{}'",
        String::from_utf8_lossy(word)
    ))
}

fn client_kill(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    // Old form: CLIENT KILL ip:port, answers OK or an error.
    if argv.len() == 3 {
        let filter = KillFilter {
            addr: Some(String::from_utf8_lossy(&argv[2]).into_owned()),
            asker: session.id,
            ..KillFilter::default()
        };
        return kill_job(shard, filter, true);
    }
    let mut filter = KillFilter {
        skip_id: Some(session.id),
        asker: session.id,
        ..KillFilter::default()
    };
    let mut pairs = argv[2..].chunks(2);
    for pair in pairs.by_ref() {
        let [key, value] = pair else {
            return err::syntax().into();
        };
        let value_text = String::from_utf8_lossy(value).into_owned();
        match key.to_ascii_lowercase().as_slice() {
            b"id" => match crate::util::num::parse_i64(value) {
                Some(id) if id > 0 => filter.id = Some(id as u64),
                _ => return err::frame("ERR client-id should be greater than 0").into(),
            },
            b"addr" => filter.addr = Some(value_text),
            b"laddr" => filter.laddr = Some(value_text),
            b"type" => match ClientType::parse(value) {
                Some(kind) => filter.kind = Some(kind),
                None => return unknown_client_type(value).into(),
            },
            b"user" if shard.shared.acl.get(&value_text).is_some() => {
                filter.user = Some(value_text)
            }
            b"user" => return Frame::Error(format!("ERR No such user '{value_text}'")).into(),
            b"skipme" => match value_text.to_ascii_lowercase().as_str() {
                "yes" => filter.skip_id = Some(session.id),
                "no" => filter.skip_id = None,
                _ => return err::syntax().into(),
            },
            _ => return err::syntax().into(),
        }
    }
    kill_job(shard, filter, false)
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: asks every shard, as the client may
/// live on any; answers 1 if it was blocked.
fn client_unblock(shard: &ShardData, argv: &[Bytes]) -> Action {
    let Some(id) = crate::util::num::parse_i64(&argv[2]) else {
        return err::not_integer().into();
    };
    let error = match argv.get(3) {
        None => false,
        Some(r) if r.eq_ignore_ascii_case(b"timeout") => false,
        Some(r) if r.eq_ignore_ascii_case(b"error") => true,
        Some(_) => {
            return err::frame("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR").into()
        }
    };
    if id <= 0 {
        return Frame::Integer(0).into();
    }
    let id = id as u64;
    let ops = (0..shard.shared.nshards)
        .map(|s| (s, Op::Clients(ClientsOp::Unblock { id, error })))
        .collect();
    Action::Job(Job::new(ops, |outs| {
        Action::Reply(Frame::Integer(outs.iter().map(Out::count).sum()))
    }))
}

fn kill_job(shard: &ShardData, filter: KillFilter, old_form: bool) -> Action {
    let n = shard.shared.nshards;
    // Replicas are served by threads of their own, outside the shards'
    // connections: those the filter names go here.
    let replicas = kill_replicas(shard, &filter);
    let ops = (0..n)
        .map(|s| (s, Op::Clients(ClientsOp::Kill(filter.clone()))))
        .collect();
    Action::Job(Job::new(ops, move |outs| {
        let killed: i64 = outs.iter().map(Out::count).sum::<i64>() + replicas;
        Action::Reply(match (old_form, killed) {
            (true, 0) => err::frame("ERR No such client"),
            (true, _) => Frame::OK,
            (false, n) => Frame::Integer(n),
        })
    }))
}
