//! Stream commands: XADD, XTRIM, XDEL, XLEN, XRANGE, XREVRANGE, XSETID
//! here; XREAD and XREADGROUP in `read`, XINFO in `info`, the consumer
//! group commands in `group`. The stream itself is `store::stream`.
//!
//! Replies and error texts are Redis 7.0.15's. Writes that Redis rewrites
//! for replicas and the AOF are recorded in the rewritten form here, where
//! the outcome is known: XADD with a generated ID as `XADD key <the ID>`,
//! and an approximate trim (`~`) as the exact trim that gives the same
//! stream (`MAXLEN = <length left>`, `MINID = <first ID left>`).

pub mod group;
pub mod info;
pub mod read;

use bytes::Bytes;

use super::args::{err, int_arg, Reply};
use super::Ctx;
use crate::resp::Frame;
use crate::store::notify::STREAM;
use crate::store::stream::{Fields, NodeLimits, Stream, StreamId, Trim, TrimSpec};
use crate::store::{Entry, Value};

pub const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

pub fn invalid_id() -> Frame {
    err::frame(INVALID_ID)
}

pub(crate) fn as_stream(entry: &Entry) -> Result<&Stream, Frame> {
    match &entry.value {
        Value::Stream(s) => Ok(s),
        _ => Err(err::wrongtype()),
    }
}

pub(crate) fn as_stream_mut(entry: &mut Entry) -> Result<&mut Stream, Frame> {
    match &mut entry.value {
        Value::Stream(s) => Ok(s),
        _ => Err(err::wrongtype()),
    }
}

/// An ID where `-` and `+` are allowed (the smallest and largest).
pub fn parse_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, Frame> {
    match arg {
        b"-" => Ok(StreamId::MIN),
        b"+" => Ok(StreamId::MAX),
        _ => parse_strict_id(arg, missing_seq),
    }
}

/// An explicit ID (`ms` or `ms-seq`), Redis's "strict" form.
pub fn parse_strict_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, Frame> {
    if arg.len() > 127 {
        return Err(invalid_id());
    }
    StreamId::parse(arg, missing_seq).ok_or_else(invalid_id)
}

/// An entry as replies list it: `[id, [field, value, ...]]`.
pub fn entry_frame(id: StreamId, fv: Fields<'_>) -> Frame {
    Frame::Array(vec![
        Frame::Bulk(id.to_bytes()),
        Frame::Array(
            fv.iter()
                .map(|b| Frame::Bulk(Bytes::copy_from_slice(b)))
                .collect(),
        ),
    ])
}

fn node_limits(ctx: &Ctx) -> NodeLimits {
    ctx.shard.shared.config.stream_node_limits()
}

/// What XADD and XTRIM read of their options.
#[derive(Default)]
struct AddArgs {
    trim: Option<TrimSpec>,
    /// Where the trim's threshold is, for the rewrite.
    trim_at: usize,
    nomkstream: bool,
    /// The ID's position and what it said: an explicit ID, and whether its
    /// sequence was given (`ms-*` leaves it to the stream).
    id_at: usize,
    id: Option<(StreamId, bool)>,
}

/// Redis's `streamParseAddOrTrimArgsOrReply`: the options of XADD (up to
/// the ID) or of XTRIM (all of its arguments).
fn parse_add_or_trim(ctx: &Ctx, argv: &[Bytes], xadd: bool) -> Result<AddArgs, Frame> {
    let mut a = AddArgs::default();
    let mut rule: Option<Trim> = None;
    let mut approx = false;
    let mut limit: Option<i64> = None;
    let mut i = 2;
    while i < argv.len() {
        let more = argv.len() - 1 - i;
        let opt = &argv[i];
        if xadd && opt.as_ref() == b"*" {
            break;
        } else if (opt.eq_ignore_ascii_case(b"maxlen") || opt.eq_ignore_ascii_case(b"minid"))
            && more > 0
        {
            if rule.is_some() {
                return Err(err::frame(
                    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible",
                ));
            }
            approx = false;
            let next = argv[i + 1].as_ref();
            if more >= 2 && (next == b"~" || next == b"=") {
                approx = next == b"~";
                i += 1;
            }
            let arg = &argv[i + 1];
            rule = Some(if opt.eq_ignore_ascii_case(b"maxlen") {
                let n = int_arg(arg)?;
                if n < 0 {
                    return Err(err::frame("ERR The MAXLEN argument must be >= 0."));
                }
                Trim::MaxLen(n as u64)
            } else {
                Trim::MinId(parse_strict_id(arg, 0)?)
            });
            i += 1;
            a.trim_at = i;
        } else if opt.eq_ignore_ascii_case(b"limit") && more > 0 {
            let n = int_arg(&argv[i + 1])?;
            if n < 0 {
                return Err(err::frame("ERR The LIMIT argument must be >= 0."));
            }
            limit = Some(n);
            i += 1;
        } else if xadd && opt.eq_ignore_ascii_case(b"nomkstream") {
            a.nomkstream = true;
        } else if xadd {
            let (id, seq_given) = parse_add_id(opt)?;
            a.id = Some((id, seq_given));
            break;
        } else {
            return Err(err::syntax());
        }
        i += 1;
    }
    a.id_at = i;
    if limit.is_some_and(|n| n > 0) && rule.is_none() {
        return Err(err::frame(
            "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
        ));
    }
    if !xadd && rule.is_none() {
        return Err(err::frame(
            "ERR syntax error, XTRIM must be called with a trimming strategy",
        ));
    }
    let limit = match limit {
        Some(_) if !approx => {
            return Err(err::frame(
                "ERR syntax error, LIMIT cannot be used without the special ~ option",
            ))
        }
        Some(n) => n as u64,
        None if approx => {
            let n = 100u64.saturating_mul(node_limits(ctx).entries as u64);
            if n == 0 || n > 1_000_000 {
                10_000
            } else {
                n
            }
        }
        None => 0,
    };
    a.trim = rule.map(|rule| TrimSpec {
        rule,
        approx,
        limit,
    });
    Ok(a)
}

/// XADD's ID: `ms`, `ms-seq`, or `ms-*` (the sequence left to the stream).
fn parse_add_id(arg: &[u8]) -> Result<(StreamId, bool), Frame> {
    if let Some(ms) = arg.strip_suffix(b"-*") {
        if !ms.contains(&b'-') {
            return Ok((parse_strict_id(ms, 0)?, false));
        }
    }
    if arg == b"-" || arg == b"+" {
        return Err(invalid_id());
    }
    Ok((parse_strict_id(arg, 0)?, true))
}

/// The next ID of `s` for XADD: Redis's `streamAppendItem` choice. None
/// when the given one is not above the stream's last ID.
fn next_id(s: &Stream, given: Option<(StreamId, bool)>, now_ms: u64) -> Option<StreamId> {
    let id = match given {
        Some((id, true)) => id,
        Some((id, false)) if id.ms == s.last_id.ms => {
            StreamId::new(id.ms, s.last_id.seq.checked_add(1)?)
        }
        Some((id, false)) => id,
        None if now_ms > s.last_id.ms => StreamId::new(now_ms, 0),
        None => s.last_id.next()?,
    };
    (id > s.last_id).then_some(id)
}

/// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]]
/// *|id field value [field value ...]
pub fn xadd(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let a = parse_add_or_trim(ctx, argv, true)?;
    let fields_at = a.id_at + 1;
    if argv.len() < fields_at + 2 || (argv.len() - fields_at) % 2 == 1 {
        return Err(err::wrong_arity("xadd"));
    }
    if let Some((id, true)) = a.id {
        if id == StreamId::MIN {
            return Err(err::frame(
                "ERR The ID specified in XADD must be greater than 0-0",
            ));
        }
    }
    let limits = node_limits(ctx);
    let now = ctx.now_ms();
    let key = &argv[1];
    let mut ks = ctx.ks();
    match ks.get(key) {
        Some(entry) => {
            as_stream(entry)?;
        }
        None if a.nomkstream => return Ok(Frame::Null),
        None => ks.set(key, Value::Stream(Box::default()), None),
    }
    let s = as_stream_mut(ks.get(key).expect("present"))?;
    if s.last_id == StreamId::MAX {
        return Err(err::frame(
            "ERR The stream has exhausted the last possible ID, unable to add more items",
        ));
    }
    let Some(id) = next_id(s, a.id, now) else {
        return Err(err::frame(
            "ERR The ID specified in XADD is equal or smaller than the target stream top item",
        ));
    };
    s.append(id, argv[fields_at..].to_vec(), limits);
    let trimmed = a.trim.map(|spec| (spec, s.trim(spec)));
    let len_left = s.len() as u64;
    let first_left = s.first().map_or(StreamId::MAX, |(id, _)| id);
    ks.notify(STREAM, "xadd", key);
    if let Some((_, n)) = trimmed {
        if n > 0 {
            ks.notify(STREAM, "xtrim", key);
        }
    }
    if ctx.recording() {
        let mut record = argv.to_vec();
        // The ID as generated, where `*` or `ms-*` stood.
        record[a.id_at] = id.to_bytes();
        if let Some((spec, _)) = trimmed {
            if spec.approx {
                rewrite_trim(&mut record, a.trim_at, a.id_at, spec, len_left, first_left);
            }
        }
        ctx.propagate_as(record);
    }
    Ok(Frame::Bulk(id.to_bytes()))
}

/// Redis's rewrite of an approximate trim: `~` becomes `=` and the
/// threshold what the trim left (the length, or the first ID). Unlike
/// Redis, which keeps a LIMIT and ignores it when it reads the command
/// back from its master or AOF, the record drops it (among the options,
/// before `options_end`): an exact trim with LIMIT is an error for any
/// other reader, and it limits nothing once the threshold is exact.
fn rewrite_trim(
    record: &mut Vec<Bytes>,
    at: usize,
    options_end: usize,
    spec: TrimSpec,
    len: u64,
    first: StreamId,
) {
    record[at - 1] = Bytes::from_static(b"=");
    record[at] = match spec.rule {
        Trim::MaxLen(_) => Bytes::from(len.to_string()),
        Trim::MinId(_) => first.to_bytes(),
    };
    let end = options_end.min(record.len());
    if let Some(i) = (2..end.saturating_sub(1))
        .filter(|&i| i != at)
        .find(|&i| record[i].eq_ignore_ascii_case(b"limit"))
    {
        record.drain(i..i + 2);
    }
}

/// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
pub fn xtrim(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    match ctx.ks().get(key) {
        None => return Ok(Frame::Integer(0)),
        Some(entry) => {
            as_stream(entry)?;
        }
    }
    let a = parse_add_or_trim(ctx, argv, false)?;
    let spec = a.trim.expect("XTRIM has a strategy");
    let mut ks = ctx.ks();
    let s = as_stream_mut(ks.get(key).expect("present"))?;
    let n = s.trim(spec);
    let len = s.len() as u64;
    let first = s.first().map_or(StreamId::MAX, |(id, _)| id);
    if n > 0 {
        ks.notify(STREAM, "xtrim", key);
        if spec.approx && ctx.recording() {
            let mut record = argv.to_vec();
            let end = record.len();
            rewrite_trim(&mut record, a.trim_at, end, spec, len, first);
            ctx.propagate_as(record);
        }
    }
    Ok(Frame::Integer(n as i64))
}

/// XDEL key id [id ...]
pub fn xdel(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(Frame::Integer(0));
    };
    as_stream(entry)?;
    let ids = argv[2..]
        .iter()
        .map(|a| parse_strict_id(a, 0))
        .collect::<Result<Vec<_>, _>>()?;
    let s = as_stream_mut(ks.get(key).expect("present"))?;
    let deleted = ids.into_iter().filter(|id| s.delete(*id)).count();
    if deleted > 0 {
        ks.notify(STREAM, "xdel", key);
    }
    Ok(Frame::Integer(deleted as i64))
}

/// XLEN key
pub fn xlen(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    match ctx.ks().read(&argv[1]) {
        None => Ok(Frame::Integer(0)),
        Some(entry) => Ok(Frame::Integer(as_stream(entry)?.len() as i64)),
    }
}

pub fn xrange(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    range(ctx, argv, false)
}

pub fn xrevrange(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    range(ctx, argv, true)
}

/// An interval bound: `(id` excludes it (then `-` and `+` are not taken).
fn bound(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), Frame> {
    if arg.len() > 1 && arg[0] == b'(' {
        Ok((parse_strict_id(&arg[1..], missing_seq)?, true))
    } else {
        Ok((parse_id(arg, missing_seq)?, false))
    }
}

/// XRANGE key start end [COUNT n]; XREVRANGE key end start [COUNT n].
fn range(ctx: &mut Ctx, argv: &[Bytes], rev: bool) -> Reply {
    let (start_arg, end_arg) = if rev {
        (&argv[3], &argv[2])
    } else {
        (&argv[2], &argv[3])
    };
    let (mut start, ex) = bound(start_arg, 0)?;
    if ex {
        start = start
            .next()
            .ok_or_else(|| err::frame("ERR invalid start ID for the interval"))?;
    }
    let (mut end, ex) = bound(end_arg, u64::MAX)?;
    if ex {
        end = end
            .prev()
            .ok_or_else(|| err::frame("ERR invalid end ID for the interval"))?;
    }
    let mut count: Option<usize> = None;
    let mut j = 4;
    while j < argv.len() {
        if argv[j].eq_ignore_ascii_case(b"count") && j + 1 < argv.len() {
            count = Some(int_arg(&argv[j + 1])?.max(0) as usize);
            j += 2;
        } else {
            return Err(err::syntax());
        }
    }
    let mut ks = ctx.ks();
    let Some(entry) = ks.read(&argv[1]) else {
        return Ok(Frame::Array(Vec::new()));
    };
    let s = as_stream(entry)?;
    if count == Some(0) {
        return Ok(Frame::NullArray);
    }
    Ok(Frame::Array(
        s.range(start, end, rev)
            .take(count.unwrap_or(usize::MAX))
            .map(|(id, fv)| entry_frame(id, fv))
            .collect(),
    ))
}

/// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
pub fn xsetid(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let id = parse_strict_id(&argv[2], 0)?;
    let mut added: Option<u64> = None;
    let mut max_deleted = StreamId::MIN;
    let mut i = 3;
    while i < argv.len() {
        let more = i + 1 < argv.len();
        if argv[i].eq_ignore_ascii_case(b"entriesadded") && more {
            let n = int_arg(&argv[i + 1])?;
            if n < 0 {
                return Err(err::frame("ERR entries_added must be positive"));
            }
            added = Some(n as u64);
        } else if argv[i].eq_ignore_ascii_case(b"maxdeletedid") && more {
            max_deleted = parse_strict_id(&argv[i + 1], 0)?;
            if id < max_deleted {
                return Err(err::frame("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"));
            }
        } else {
            return Err(err::syntax());
        }
        i += 2;
    }
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Err(err::frame(err::NO_SUCH_KEY));
    };
    let s = as_stream_mut(entry)?;
    if let Some((top, _)) = s.last() {
        if id < top {
            return Err(err::frame(
                "ERR The ID specified in XSETID is smaller than the target stream top item",
            ));
        }
        if added.is_some_and(|n| (s.len() as u64) > n) {
            return Err(err::frame("ERR The entries_added specified in XSETID is smaller than the target stream length"));
        }
    }
    if id < s.max_deleted {
        return Err(err::frame(
            "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id",
        ));
    }
    s.last_id = id;
    if let Some(n) = added {
        s.entries_added = n;
    }
    if max_deleted != StreamId::MIN {
        s.max_deleted = max_deleted;
    }
    ks.notify(STREAM, "xsetid", key);
    Ok(Frame::Simple("OK"))
}

/// The error code of a missing group.
pub const NO_GROUP: &str = "NOGROUP";

/// A container's subcommand (XINFO, XGROUP), lower-cased, once it is known
/// and its arity right: Redis's errors otherwise.
pub fn subcommand(argv: &[Bytes], cmd: &str) -> Result<String, Frame> {
    let sub = argv[1].to_ascii_lowercase();
    let meta = super::lookup(&argv[0]).and_then(|spec| spec.meta.subcommand(&sub));
    let Some(meta) = meta else {
        return Err(err::unknown_subcommand(&argv[1], cmd));
    };
    let n = argv.len() as i32;
    let fits = if meta.arity >= 0 {
        n == meta.arity
    } else {
        n >= -meta.arity
    };
    let sub = String::from_utf8_lossy(&sub).into_owned();
    if !fits {
        return Err(err::wrong_arity(&format!("{cmd}|{sub}")));
    }
    Ok(sub)
}
