//! XREAD and XREADGROUP: their arguments, and serving one stream of the
//! request (its entries after an ID, or for a group its new entries or a
//! consumer's pending ones).
//!
//! With every stream on this shard the request runs as one handler call:
//! every key is checked first (type, group, ID), as Redis does, then each
//! stream served in argument order. With streams on several shards each
//! owner serves its streams in one op and the replies are put back in
//! argument order.

use bytes::Bytes;

use super::{as_stream, as_stream_mut, entry_frame, invalid_id, parse_strict_id};
use crate::cmd::args::{err, int_arg, Reply};
use crate::cmd::{shard_of, Ctx, Session, ShardData};
use crate::exec::{Action, Job, Op, Out};
use crate::resp::Frame;
use crate::store::notify::STREAM;
use crate::store::stream::StreamId;

/// An XREAD or XREADGROUP request.
#[derive(Clone)]
pub struct ReadReq {
    /// 0: no limit.
    pub count: usize,
    /// BLOCK's timeout in ms, when given.
    pub block: Option<u64>,
    /// GROUP's group and consumer.
    pub group: Option<(Bytes, Bytes)>,
    pub noack: bool,
    pub keys: Vec<Bytes>,
    pub ids: Vec<Bytes>,
}

/// Where reading a stream starts, once its ID argument is resolved.
#[derive(Clone, Copy)]
enum From {
    /// Entries above this ID.
    After(StreamId),
    /// XREADGROUP `>`: the group's new entries.
    New,
    /// XREADGROUP with an ID: the consumer's pending entries above it.
    History(StreamId),
}

/// Whether `name` is XREAD or XREADGROUP (Redis flags them blocking).
pub fn is_stream_read(name: &str) -> bool {
    name == "xread" || name == "xreadgroup"
}

/// The positions of XREAD's and XREADGROUP's keys: the first half of what
/// follows STREAMS.
pub fn keys(argv: &[Bytes]) -> Vec<usize> {
    let Some(at) = argv
        .iter()
        .skip(1)
        .position(|a| a.eq_ignore_ascii_case(b"streams"))
    else {
        return Vec::new();
    };
    let first = at + 2;
    let n = (argv.len() - first) / 2;
    (first..first + n).collect()
}

/// Reads the options, in Redis's order of checks.
pub fn parse(argv: &[Bytes]) -> Result<ReadReq, Frame> {
    let group_cmd = argv[0].eq_ignore_ascii_case(b"xreadgroup");
    let mut req = ReadReq {
        count: 0,
        block: None,
        group: None,
        noack: false,
        keys: Vec::new(),
        ids: Vec::new(),
    };
    let mut streams_at = None;
    let mut i = 1;
    while i < argv.len() {
        let more = argv.len() - i - 1;
        let o = &argv[i];
        if o.eq_ignore_ascii_case(b"block") && more > 0 {
            i += 1;
            let ms = int_arg(&argv[i])
                .map_err(|_| err::frame("ERR timeout is not an integer or out of range"))?;
            if ms < 0 {
                return Err(err::frame("ERR timeout is negative"));
            }
            req.block = Some(ms as u64);
        } else if o.eq_ignore_ascii_case(b"count") && more > 0 {
            i += 1;
            req.count = int_arg(&argv[i])?.max(0) as usize;
        } else if o.eq_ignore_ascii_case(b"streams") && more > 0 {
            let n = argv.len() - (i + 1);
            if n % 2 != 0 {
                let (name, symbol) = if group_cmd {
                    ("xreadgroup", '>')
                } else {
                    ("xread", '$')
                };
                return Err(Frame::Error(format!("ERR Unbalanced '{name}' list of streams: for each stream key an ID or '{symbol}' must be specified.")));
            }
            streams_at = Some(i + 1);
            break;
        } else if o.eq_ignore_ascii_case(b"group") && more >= 2 {
            if !group_cmd {
                return Err(err::frame("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."));
            }
            req.group = Some((argv[i + 1].clone(), argv[i + 2].clone()));
            i += 2;
        } else if o.eq_ignore_ascii_case(b"noack") {
            if !group_cmd {
                return Err(err::frame("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."));
            }
            req.noack = true;
        } else {
            return Err(err::syntax());
        }
        i += 1;
    }
    let Some(at) = streams_at else {
        return Err(err::syntax());
    };
    if group_cmd && req.group.is_none() {
        return Err(err::frame("ERR Missing GROUP option for XREADGROUP"));
    }
    let n = (argv.len() - at) / 2;
    req.keys = argv[at..at + n].to_vec();
    req.ids = argv[at + n..].to_vec();
    Ok(req)
}

/// Checks one stream of the request: its type, its group, its ID.
fn resolve(ctx: &mut Ctx, req: &ReadReq, key: &Bytes, id: &[u8]) -> Result<From, Frame> {
    let mut ks = ctx.ks();
    let entry = ks.read(key);
    let stream = match entry {
        Some(e) => Some(as_stream(e)?),
        None => None,
    };
    if let Some((group, _)) = &req.group {
        if stream.is_none_or(|s| !s.groups.contains_key(group)) {
            return Err(Frame::Error(format!(
                "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                String::from_utf8_lossy(key),
                String::from_utf8_lossy(group)
            )));
        }
    }
    match id {
        b"$" => {
            if req.group.is_some() {
                return Err(err::frame(
                    "ERR The $ ID is meaningful only for XREAD. Use > instead.",
                ));
            }
            Ok(From::After(stream.map_or(StreamId::MIN, |s| s.last_id)))
        }
        b">" => {
            if req.group.is_none() {
                return Err(err::frame("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."));
            }
            Ok(From::New)
        }
        _ => {
            let id = parse_strict_id(id, 0).map_err(|_| invalid_id())?;
            Ok(if req.group.is_some() {
                From::History(id)
            } else {
                From::After(id)
            })
        }
    }
}

/// Serves one stream: its `[key, entries]` pair, None when there is
/// nothing to answer for it.
fn serve(ctx: &mut Ctx, req: &ReadReq, key: &Bytes, from: From) -> Option<(Frame, Frame)> {
    let now = ctx.now_ms();
    let limit = if req.count == 0 {
        usize::MAX
    } else {
        req.count
    };
    let mut ks = ctx.ks();
    let s = as_stream_mut(ks.read(key)?).ok()?;
    let entries = match (from, &req.group) {
        (From::After(after), _) => {
            let (top, _) = s.last()?;
            if top <= after {
                return None;
            }
            let start = after.next()?;
            s.range(start, StreamId::MAX, false)
                .take(limit)
                .map(|(id, fv)| entry_frame(id, fv))
                .collect()
        }
        (From::New, Some((gname, cname))) => {
            let group = s.groups.get(gname)?;
            let (top, _) = s.last()?;
            if top <= group.last_id {
                return None;
            }
            let start = group.last_id.next()?;
            let picked: Vec<(StreamId, Frame)> = s
                .range(start, StreamId::MAX, false)
                .take(limit)
                .map(|(id, fv)| (id, entry_frame(id, fv)))
                .collect();
            let mut group = s.groups.remove(gname)?;
            let created = group.consumer(cname, now).1;
            if let Some(c) = group.consumers.get_mut(cname) {
                c.seen_time = now;
            }
            for (id, _) in &picked {
                s.advance_group(&mut group, *id);
                if !req.noack {
                    group.deliver(*id, cname, now, false);
                    if let Some(p) = group.pel.get_mut(id) {
                        p.delivery_count = 1;
                    }
                }
            }
            s.groups.insert(gname.clone(), group);
            if created {
                ks.notify(STREAM, "xgroup-createconsumer", key);
            }
            mark_dirty(&mut ks);
            picked.into_iter().map(|(_, f)| f).collect()
        }
        (From::History(after), Some((gname, cname))) => {
            let group = s.groups.get_mut(gname)?;
            let created = group.consumer(cname, now).1;
            let c = group.consumers.get_mut(cname)?;
            c.seen_time = now;
            let ids: Vec<StreamId> = match after.next() {
                Some(start) => c.pel.range(start..).take(limit).copied().collect(),
                None => Vec::new(),
            };
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                match s.get(id) {
                    Some(fv) => {
                        out.push(entry_frame(id, fv));
                        if let Some(p) = s.groups.get_mut(gname)?.pel.get_mut(&id) {
                            p.delivery_time = now;
                            p.delivery_count += 1;
                        }
                    }
                    None => out.push(Frame::Array(vec![
                        Frame::Bulk(id.to_bytes()),
                        Frame::NullArray,
                    ])),
                }
            }
            if created {
                ks.notify(STREAM, "xgroup-createconsumer", key);
            }
            mark_dirty(&mut ks);
            out
        }
        _ => return None,
    };
    Some((Frame::Bulk(key.clone()), Frame::Array(entries)))
}

/// A change without a keyspace event (a group's read position, its PEL):
/// Redis counts it in `server.dirty`, so it is propagated.
fn mark_dirty(ks: &mut crate::store::Keyspace<'_>) {
    ks.dirtied();
}

/// The reply from the served streams; None when nothing was served.
fn reply(served: Vec<(Frame, Frame)>) -> Option<Frame> {
    (!served.is_empty()).then_some(Frame::KeyedMap(served))
}

/// What a read that found nothing answers: without BLOCK (or inside
/// MULTI, where Redis never blocks) the null array.
fn nothing(req: &ReadReq) -> Reply {
    match req.block {
        None => Ok(Frame::NullArray),
        Some(_) => Err(err::frame(
            "ERR ember does not block on streams yet (XREAD/XREADGROUP BLOCK)",
        )),
    }
}

/// The handler: every stream on this shard.
pub fn xread(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let req = parse(argv)?;
    let mut froms = Vec::with_capacity(req.keys.len());
    for (key, id) in req.keys.iter().zip(&req.ids) {
        froms.push(resolve(ctx, &req, key, id)?);
    }
    let served: Vec<_> = req
        .keys
        .iter()
        .zip(froms)
        .filter_map(|(key, from)| serve(ctx, &req, key, from))
        .collect();
    match reply(served) {
        Some(frame) => Ok(frame),
        None => nothing(&req),
    }
}

/// Streams on several shards: each owner checks and serves its streams;
/// the first error in argument order answers, else the served streams in
/// argument order.
pub fn xread_across(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let req = match parse(argv) {
        Ok(req) => req,
        Err(e) => return Action::Reply(e),
    };
    let n = shard.shared.nshards;
    let db = session.db;
    let ops = req
        .keys
        .iter()
        .zip(&req.ids)
        .map(|(key, id)| {
            let (req2, key2, id) = (req.clone(), key.clone(), id.clone());
            let op = Op::store(db, move |ctx| {
                let from = match resolve(ctx, &req2, &key2, &id) {
                    Ok(from) => from,
                    Err(e) => return Out::Frame(e),
                };
                Out::Frame(match serve(ctx, &req2, &key2, from) {
                    Some((k, v)) => Frame::Array(vec![k, v]),
                    None => Frame::Null,
                })
            });
            (shard_of(key, n), op)
        })
        .collect();
    Action::Job(Job::new(ops, move |outs| {
        let mut served = Vec::new();
        for out in outs {
            match out.frame() {
                e @ Frame::Error(_) => return Action::Reply(e),
                Frame::Array(mut kv) if kv.len() == 2 => {
                    let v = kv.pop().expect("two");
                    let k = kv.pop().expect("two");
                    served.push((k, v));
                }
                _ => {}
            }
        }
        Action::Reply(match reply(served) {
            Some(frame) => frame,
            None => nothing(&req).unwrap_or_else(|e| e),
        })
    }))
}
