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
use crate::exec::wait::{Request, StreamRead, Wait, Want};
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
            if !n.is_multiple_of(2) {
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

/// The handler: every stream on this shard. What finds nothing answers
/// the null array: inside MULTI Redis never blocks, and outside it a
/// BLOCK read that finds nothing goes to [`dispatch`]'s wait.
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
    Ok(reply(served).unwrap_or(Frame::NullArray))
}

/// The command for one stream of `argv` (its options, then STREAMS `key`
/// `id`): what each owner runs when the streams are on several shards.
fn one_stream(argv: &[Bytes], n: usize, i: usize) -> Vec<Bytes> {
    let at = argv.len() - 2 * n;
    let mut one = argv[..at].to_vec();
    one.push(argv[at + i].clone());
    one.push(argv[at + n + i].clone());
    one
}

/// What one owner answers for one stream: its `[key, entries]` pair, an
/// error, or when it had nothing and its ID was `$`, the stream's last ID
/// (the wait that may follow reads above it).
fn one_stream_op(db: usize, argv: Vec<Bytes>) -> Op {
    Op::store(db, move |ctx| {
        let reply = crate::cmd::propagate::call(ctx, xread, &argv).unwrap_or_else(|e| e);
        Out::Frame(match reply {
            Frame::NullArray if argv[argv.len() - 1].as_ref() == b"$" => {
                let key = &argv[argv.len() - 2];
                let last = match ctx.ks().read(key) {
                    Some(entry) => as_stream(entry).map_or(StreamId::MIN, |s| s.last_id),
                    None => StreamId::MIN,
                };
                Frame::Bulk(last.to_bytes())
            }
            other => other,
        })
    })
}

/// Streams on several shards: each owner serves its stream; the first
/// error in argument order answers, else the served streams in argument
/// order; with BLOCK and nothing served, the client waits.
pub fn xread_across(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let req = match parse(argv) {
        Ok(req) => req,
        Err(e) => return Action::Reply(e),
    };
    let nshards = shard.shared.nshards;
    let db = session.db;
    let n = req.keys.len();
    let ops = (0..n)
        .map(|i| {
            let owner = shard_of(&req.keys[i], nshards);
            (owner, one_stream_op(db, one_stream(argv, n, i)))
        })
        .collect();
    let blocks = req.block.is_some() && shard.current_tx.is_none();
    let now = shard.now_ms;
    Action::Job(Job::new(ops, move |outs| {
        let mut served = Vec::new();
        let mut last_ids = Vec::with_capacity(n);
        for out in outs {
            match out.frame() {
                e @ (Frame::Error(_) | Frame::ErrorBytes(_)) => return Action::Reply(e),
                Frame::KeyedMap(pairs) => served.extend(pairs),
                Frame::Bulk(id) => last_ids.push(StreamId::parse(&id, 0)),
                _ => last_ids.push(None),
            }
        }
        if let Some(frame) = reply(served) {
            return Action::Reply(frame);
        }
        if !blocks {
            return Action::Reply(Frame::NullArray);
        }
        let mut dollars = last_ids.into_iter();
        let mut resolved = Vec::with_capacity(n);
        for (key, id) in req.keys.iter().zip(&req.ids) {
            let last = dollars.next().flatten();
            resolved.push((key.clone(), start_of(&req, id, last)));
        }
        wait(&req, resolved, db, now)
    }))
}

/// Where a wait reads a stream from: above `$`'s last ID, above an explicit
/// ID, or the group's new entries (None).
fn start_of(req: &ReadReq, id: &[u8], last: Option<StreamId>) -> Option<StreamId> {
    match id {
        b"$" => Some(last.unwrap_or(StreamId::MIN)),
        b">" if req.group.is_some() => None,
        _ => Some(StreamId::parse(id, 0).unwrap_or(StreamId::MIN)),
    }
}

/// The client waits on its streams (`shard::blocking`).
fn wait(req: &ReadReq, after: Vec<(Bytes, Option<StreamId>)>, db: usize, now: u64) -> Action {
    let ms = req.block.unwrap_or(0);
    let read = StreamRead {
        after,
        count: req.count,
        group: req.group.clone(),
        noack: req.noack,
    };
    Action::Block(Box::new(Wait::Start(Request {
        keys: req.keys.clone(),
        want: Want::XRead(Box::new(read)),
        db,
        deadline_ms: (ms > 0).then(|| now.saturating_add(ms)),
    })))
}

/// XREAD and XREADGROUP outside a transaction with every stream here: the
/// read runs at once, and with BLOCK, when it served nothing, the client
/// waits. Streams elsewhere are read by [`xread_across`]'s ops, which
/// start the wait too. None when the table's route should run the command
/// (no BLOCK).
pub fn dispatch(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Option<Action> {
    let req = parse(argv).ok()?;
    req.block?;
    let nshards = shard.shared.nshards;
    let here = req.keys.iter().all(|k| shard_of(k, nshards) == shard.id);
    if !here || !shard.locks.is_idle() {
        return Some(xread_across(shard, session, argv));
    }
    let db = session.db;
    let mut ctx = Ctx::new(shard, db);
    match crate::cmd::propagate::call(&mut ctx, xread, argv) {
        Ok(Frame::NullArray) => {}
        Ok(frame) | Err(frame) => return Some(Action::Reply(frame)),
    }
    let mut resolved = Vec::with_capacity(req.keys.len());
    for (key, id) in req.keys.iter().zip(&req.ids) {
        let last = match ctx.ks().read(key) {
            Some(entry) => as_stream(entry).ok().map(|s| s.last_id),
            None => None,
        };
        resolved.push((key.clone(), start_of(&req, id, last)));
    }
    let now = ctx.now_ms();
    Some(wait(&req, resolved, db, now))
}

/// What a blocked XREADGROUP gets when its stream is deleted or replaced.
pub const STREAM_GONE: &str = "UNBLOCKED the stream key no longer exists";
/// ... and when its group is destroyed.
pub const GROUP_GONE: &str =
    "NOGROUP the consumer group this client was blocked on no longer exists";

/// Serves a blocked read from `key`, which got a write: its reply, None to
/// keep waiting, or the error of a group read whose stream or group went.
pub fn serve_blocked(
    ctx: &mut Ctx,
    read: &StreamRead,
    key: &Bytes,
) -> Result<Option<Frame>, Frame> {
    let Some((_, after)) = read.after.iter().find(|(k, _)| k == key) else {
        return Ok(None);
    };
    if let Some((group, _)) = &read.group {
        let mut ks = ctx.ks();
        let Some(Ok(s)) = ks.read(key).map(|e| as_stream(e)) else {
            return Err(err::frame(STREAM_GONE));
        };
        if !s.groups.contains_key(group) {
            return Err(err::frame(GROUP_GONE));
        }
    }
    let req = ReadReq {
        count: read.count,
        block: None,
        group: read.group.clone(),
        noack: read.noack,
        keys: Vec::new(),
        ids: Vec::new(),
    };
    let from = match after {
        Some(id) => From::After(*id),
        None => From::New,
    };
    Ok(serve(ctx, &req, key, from).map(|pair| Frame::KeyedMap(vec![pair])))
}
