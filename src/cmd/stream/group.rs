//! Consumer group commands: XGROUP (CREATE, SETID, DESTROY,
//! CREATECONSUMER, DELCONSUMER, HELP), XACK, XPENDING, XCLAIM and
//! XAUTOCLAIM. The group's state is `store::stream::group`.

use bytes::Bytes;

use super::info::no_group;
use super::{as_stream, as_stream_mut, bound, entry_frame, parse_id, parse_strict_id, subcommand};
use crate::cmd::args::{err, int_arg, Reply};
use crate::cmd::keys::help_reply;
use crate::cmd::Ctx;
use crate::resp::Frame;
use crate::store::notify::STREAM;
use crate::store::stream::{Group, Pending, Stream, StreamId};
use crate::store::{Keyspace, Value};

const HELP: &[&str] = &[
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
];

fn sub_syntax(argv: &[Bytes]) -> Frame {
    Frame::Error(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try XGROUP HELP.",
        String::from_utf8_lossy(&argv[1])
    ))
}

/// `NOGROUP No such key '<key>' or consumer group '<group>'`.
fn no_key_or_group(key: &[u8], group: &[u8]) -> Frame {
    Frame::Error(format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        String::from_utf8_lossy(key),
        String::from_utf8_lossy(group)
    ))
}

pub fn xgroup(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let sub = subcommand(argv, "xgroup")?;
    if sub == "help" {
        return Ok(help_reply(HELP));
    }
    let mut mkstream = false;
    let mut entries_read: Option<u64> = None;
    if sub == "create" || sub == "setid" {
        let mut i = 5;
        while i < argv.len() {
            if sub == "create" && argv[i].eq_ignore_ascii_case(b"mkstream") {
                mkstream = true;
                i += 1;
            } else if argv[i].eq_ignore_ascii_case(b"entriesread") && i + 1 < argv.len() {
                let n = int_arg(&argv[i + 1])?;
                if n < -1 {
                    return Err(err::frame(
                        "ERR value for ENTRIESREAD must be positive or -1",
                    ));
                }
                entries_read = u64::try_from(n).ok();
                i += 2;
            } else {
                return Err(sub_syntax(argv));
            }
        }
    }
    let (key, gname) = (&argv[2], &argv[3]);
    let now = ctx.now_ms();
    let mut ks = ctx.ks();
    let exists = match ks.get(key) {
        Some(entry) => {
            as_stream(entry)?;
            true
        }
        None => false,
    };
    if !mkstream {
        if !exists {
            return Err(err::frame("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."));
        }
        let s = as_stream(ks.get(key).expect("present"))?;
        if !s.groups.contains_key(gname)
            && matches!(sub.as_str(), "setid" | "createconsumer" | "delconsumer")
        {
            return Err(no_group(gname, key));
        }
    }
    match sub.as_str() {
        "create" if argv.len() <= 8 => {
            let last = if exists {
                as_stream(ks.get(key).expect("present"))?.last_id
            } else {
                StreamId::MIN
            };
            let id = match argv[4].as_ref() {
                b"$" => last,
                a => parse_strict_id(a, 0)?,
            };
            if !exists {
                ks.set(key, Value::Stream(Box::default()), None);
            }
            let s = as_stream_mut(ks.get(key).expect("present"))?;
            if s.groups.contains_key(gname) {
                return Err(err::frame("BUSYGROUP Consumer Group name already exists"));
            }
            s.groups.insert(gname.clone(), Group::new(id, entries_read));
            ks.notify(STREAM, "xgroup-create", key);
            Ok(Frame::OK)
        }
        "setid" if argv.len() == 5 || argv.len() == 7 => {
            let s = as_stream_mut(ks.get(key).expect("present"))?;
            let id = match argv[4].as_ref() {
                b"$" => s.last_id,
                a => parse_id(a, 0)?,
            };
            let g = s.groups.get_mut(gname).expect("checked");
            g.last_id = id;
            g.entries_read = entries_read;
            ks.notify(STREAM, "xgroup-setid", key);
            Ok(Frame::OK)
        }
        "destroy" if argv.len() == 4 => {
            let s = as_stream_mut(ks.get(key).expect("present"))?;
            if s.groups.remove(gname).is_none() {
                return Ok(Frame::Integer(0));
            }
            ks.notify(STREAM, "xgroup-destroy", key);
            Ok(Frame::Integer(1))
        }
        "createconsumer" if argv.len() == 5 => {
            let s = as_stream_mut(ks.get(key).expect("present"))?;
            let g = s.groups.get_mut(gname).expect("checked");
            let created = g.consumer(&argv[4], now).1;
            if created {
                ks.notify(STREAM, "xgroup-createconsumer", key);
            }
            Ok(Frame::Integer(created as i64))
        }
        "delconsumer" if argv.len() == 5 => {
            let s = as_stream_mut(ks.get(key).expect("present"))?;
            let g = s.groups.get_mut(gname).expect("checked");
            match g.remove_consumer(&argv[4]) {
                Some(pending) => {
                    ks.notify(STREAM, "xgroup-delconsumer", key);
                    Ok(Frame::Integer(pending as i64))
                }
                None => Ok(Frame::Integer(0)),
            }
        }
        _ => Err(sub_syntax(argv)),
    }
}

/// XACK key group id [id ...]
pub fn xack(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(&argv[1]) else {
        return Ok(Frame::Integer(0));
    };
    let s = as_stream_mut(entry)?;
    let Some(g) = s.groups.get_mut(&argv[2]) else {
        return Ok(Frame::Integer(0));
    };
    let ids = argv[3..]
        .iter()
        .map(|a| parse_strict_id(a, 0))
        .collect::<Result<Vec<_>, _>>()?;
    let acked = ids.into_iter().filter(|id| g.ack(*id)).count();
    if acked > 0 {
        ks.dirtied();
    }
    Ok(Frame::Integer(acked as i64))
}

/// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
pub fn xpending(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let argc = argv.len();
    if argc != 3 && !(6..=9).contains(&argc) {
        return Err(err::syntax());
    }
    let mut range = None;
    if argc >= 6 {
        let mut at = 3;
        let mut min_idle = 0;
        if argv[3].eq_ignore_ascii_case(b"idle") {
            min_idle = int_arg(&argv[4])?;
            if argc < 8 {
                return Err(err::syntax());
            }
            at += 2;
        }
        let count = int_arg(&argv[at + 2])?.max(0) as usize;
        let (mut start, ex) = bound(&argv[at], 0)?;
        if ex {
            start = start
                .next()
                .ok_or_else(|| err::frame("ERR invalid start ID for the interval"))?;
        }
        let (mut end, ex) = bound(&argv[at + 1], u64::MAX)?;
        if ex {
            end = end
                .prev()
                .ok_or_else(|| err::frame("ERR invalid end ID for the interval"))?;
        }
        let consumer = argv.get(at + 3).cloned();
        range = Some((min_idle, start, end, count, consumer));
    }
    let now = ctx.now_ms();
    let mut ks = ctx.ks();
    let s = match ks.read(&argv[1]) {
        Some(entry) => as_stream(entry)?,
        None => return Err(no_key_or_group(&argv[1], &argv[2])),
    };
    let Some(g) = s.groups.get(&argv[2]) else {
        return Err(no_key_or_group(&argv[1], &argv[2]));
    };
    let Some((min_idle, start, end, count, consumer)) = range else {
        let (Some((first, _)), Some((last, _))) = (g.pel.iter().next(), g.pel.iter().next_back())
        else {
            return Ok(Frame::Array(vec![
                Frame::Integer(0),
                Frame::Null,
                Frame::Null,
                Frame::NullArray,
            ]));
        };
        let owners = g
            .consumers
            .iter()
            .filter(|(_, c)| !c.pel.is_empty())
            .map(|(name, c)| {
                Frame::Array(vec![
                    Frame::Bulk(name.clone()),
                    Frame::Bulk(Bytes::from(c.pel.len().to_string())),
                ])
            })
            .collect();
        return Ok(Frame::Array(vec![
            Frame::Integer(g.pel.len() as i64),
            Frame::Bulk(first.to_bytes()),
            Frame::Bulk(last.to_bytes()),
            Frame::Array(owners),
        ]));
    };
    let ids: Box<dyn Iterator<Item = StreamId>> = match &consumer {
        Some(name) => match g.consumers.get(name) {
            Some(c) => Box::new(c.pel.iter().copied()),
            None => return Ok(Frame::Array(Vec::new())),
        },
        None => Box::new(g.pel.keys().copied()),
    };
    if start > end {
        return Ok(Frame::Array(Vec::new()));
    }
    let out = ids
        .skip_while(|id| *id < start)
        .take_while(|id| *id <= end)
        .filter_map(|id| g.pel.get(&id).map(|p| (id, p)))
        .filter(|(_, p)| min_idle == 0 || (now as i64 - p.delivery_time as i64) >= min_idle)
        .take(count)
        .map(|(id, p)| {
            Frame::Array(vec![
                Frame::Bulk(id.to_bytes()),
                Frame::Bulk(p.consumer.clone()),
                Frame::Integer((now as i64 - p.delivery_time as i64).max(0)),
                Frame::Integer(p.delivery_count as i64),
            ])
        })
        .collect();
    Ok(Frame::Array(out))
}

/// Hands pending entry `id` to `consumer`, as XCLAIM and XAUTOCLAIM do.
fn claim(g: &mut Group, id: StreamId, consumer: &Bytes, at: u64, count: Option<u64>, justid: bool) {
    let Some(p) = g.pel.get_mut(&id) else {
        return;
    };
    let old = std::mem::replace(&mut p.consumer, consumer.clone());
    p.delivery_time = at;
    match count {
        Some(n) => p.delivery_count = n,
        None if !justid => p.delivery_count += 1,
        None => {}
    }
    if old != *consumer {
        if let Some(c) = g.consumers.get_mut(&old) {
            c.pel.remove(&id);
        }
    }
    if let Some(c) = g.consumers.get_mut(consumer) {
        c.pel.insert(id);
    }
}

/// The consumer that claims, looked up (seen now) or created.
fn claimer(g: &mut Group, name: &Bytes, now: u64) -> bool {
    let (c, created) = g.consumer(name, now);
    c.seen_time = now;
    created
}

fn claimed_frame(s: &Stream, id: StreamId, justid: bool) -> Frame {
    if justid {
        return Frame::Bulk(id.to_bytes());
    }
    match s.get(id) {
        Some(fv) => entry_frame(id, fv),
        None => Frame::Null,
    }
}

/// XCLAIM's and XAUTOCLAIM's first check: the key holds a stream (else
/// WRONGTYPE) that has group `gname` (else Redis's NOGROUP text).
fn require_group(ks: &mut Keyspace<'_>, key: &Bytes, gname: &Bytes) -> Result<(), Frame> {
    let has_group = match ks.read(key) {
        Some(entry) => as_stream(entry)?.groups.contains_key(gname),
        None => false,
    };
    if has_group {
        Ok(())
    } else {
        Err(no_key_or_group(key, gname))
    }
}

/// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms]
/// [TIME unix-time-ms] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
pub fn xclaim(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let (key, gname, cname) = (&argv[1], &argv[2], &argv[3]);
    let now = ctx.now_ms();
    let mut ks = ctx.ks();
    require_group(&mut ks, key, gname)?;
    let min_idle = int_arg(&argv[4])
        .map_err(|_| err::frame("ERR Invalid min-idle-time argument for XCLAIM"))?
        .max(0);
    let mut j = 5;
    let mut ids = Vec::new();
    while j < argv.len() {
        match parse_strict_id(&argv[j], 0) {
            Ok(id) => ids.push(id),
            Err(_) => break,
        }
        j += 1;
    }
    let (mut force, mut justid) = (false, false);
    let mut delivery: Option<i64> = None;
    let mut retry: Option<u64> = None;
    let mut last_id = StreamId::MIN;
    while j < argv.len() {
        let more = j + 1 < argv.len();
        let opt = &argv[j];
        let num = |at: usize, what: &str| {
            int_arg(&argv[at])
                .map_err(|_| Frame::Error(format!("ERR Invalid {what} option argument for XCLAIM")))
        };
        if opt.eq_ignore_ascii_case(b"force") {
            force = true;
        } else if opt.eq_ignore_ascii_case(b"justid") {
            justid = true;
        } else if opt.eq_ignore_ascii_case(b"idle") && more {
            j += 1;
            delivery = Some(now as i64 - num(j, "IDLE")?);
        } else if opt.eq_ignore_ascii_case(b"time") && more {
            j += 1;
            delivery = Some(num(j, "TIME")?);
        } else if opt.eq_ignore_ascii_case(b"retrycount") && more {
            j += 1;
            let n = num(j, "RETRYCOUNT")?;
            retry = (n >= 0).then_some(n as u64);
        } else if opt.eq_ignore_ascii_case(b"lastid") && more {
            j += 1;
            last_id = parse_strict_id(&argv[j], 0)?;
        } else {
            return Err(Frame::Error(format!(
                "ERR Unrecognized XCLAIM option '{}'",
                String::from_utf8_lossy(opt)
            )));
        }
        j += 1;
    }
    let at = match delivery {
        Some(t) if t >= 0 && t <= now as i64 => t as u64,
        _ => now,
    };
    let s = as_stream_mut(ks.get(key).expect("present"))?;
    let mut g = s.groups.remove(gname).expect("checked");
    let mut changed = false;
    if last_id > g.last_id {
        g.last_id = last_id;
        changed = true;
    }
    let mut out = Vec::new();
    let mut created = false;
    for id in ids {
        if s.get(id).is_none() {
            if g.ack(id) {
                changed = true;
            }
            continue;
        }
        let mut fresh = false;
        if force && !g.pel.contains_key(&id) {
            g.pel.insert(
                id,
                Pending {
                    consumer: Bytes::new(),
                    delivery_time: now,
                    delivery_count: 1,
                },
            );
            fresh = true;
        }
        let Some(p) = g.pel.get(&id) else {
            continue;
        };
        if !fresh && min_idle > 0 && (now as i64 - p.delivery_time as i64) < min_idle {
            continue;
        }
        created |= claimer(&mut g, cname, now);
        claim(&mut g, id, cname, at, retry, justid);
        out.push(claimed_frame(s, id, justid));
        changed = true;
    }
    s.groups.insert(gname.clone(), g);
    if created {
        ks.notify(STREAM, "xgroup-createconsumer", key);
    }
    if changed {
        ks.dirtied();
    }
    Ok(Frame::Array(out))
}

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
pub fn xautoclaim(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let (key, gname, cname) = (&argv[1], &argv[2], &argv[3]);
    let min_idle = int_arg(&argv[4])
        .map_err(|_| err::frame("ERR Invalid min-idle-time argument for XAUTOCLAIM"))?
        .max(0);
    let (mut start, ex) = bound(&argv[5], 0)?;
    if ex {
        start = start
            .next()
            .ok_or_else(|| err::frame("ERR invalid start ID for the interval"))?;
    }
    const ATTEMPTS_FACTOR: i64 = 10;
    let mut count: i64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < argv.len() {
        let opt = &argv[j];
        if opt.eq_ignore_ascii_case(b"count") && j + 1 < argv.len() {
            let max = i64::MAX / 16;
            count = match int_arg(&argv[j + 1]) {
                Ok(n) if (1..=max).contains(&n) => n,
                _ => return Err(err::frame("ERR COUNT must be > 0")),
            };
            j += 1;
        } else if opt.eq_ignore_ascii_case(b"justid") {
            justid = true;
        } else {
            return Err(err::syntax());
        }
        j += 1;
    }
    let now = ctx.now_ms();
    let mut ks = ctx.ks();
    require_group(&mut ks, key, gname)?;
    let s = as_stream_mut(ks.get(key).expect("present"))?;
    let mut g = s.groups.remove(gname).expect("checked");
    let mut attempts = count.saturating_mul(ATTEMPTS_FACTOR);
    let mut claimed = Vec::new();
    let mut deleted = Vec::new();
    let mut created = false;
    let mut next = StreamId::MIN;
    let mut pending = g
        .pel
        .range(start..)
        .map(|(id, _)| *id)
        .collect::<Vec<_>>()
        .into_iter();
    loop {
        if attempts == 0 || count == 0 {
            next = pending.next().unwrap_or(StreamId::MIN);
            break;
        }
        attempts -= 1;
        let Some(id) = pending.next() else {
            break;
        };
        if s.get(id).is_none() {
            g.ack(id);
            deleted.push(Frame::Bulk(id.to_bytes()));
            count -= 1;
            continue;
        }
        let idle = g
            .pel
            .get(&id)
            .map_or(0, |p| now as i64 - p.delivery_time as i64);
        if min_idle > 0 && idle < min_idle {
            continue;
        }
        created |= claimer(&mut g, cname, now);
        claim(&mut g, id, cname, now, None, justid);
        claimed.push(claimed_frame(s, id, justid));
        count -= 1;
    }
    let changed = !claimed.is_empty() || !deleted.is_empty();
    s.groups.insert(gname.clone(), g);
    if created {
        ks.notify(STREAM, "xgroup-createconsumer", key);
    }
    if changed {
        ks.dirtied();
    }
    Ok(Frame::Array(vec![
        Frame::Bulk(next.to_bytes()),
        Frame::Array(claimed),
        Frame::Array(deleted),
    ]))
}
