//! String commands: GET/SET and friends, counters, ranges.

use bytes::Bytes;

use super::args::{err, Args, Keyword, Reply};
use super::expire::{deadline_from, ExpireUnit};
use super::Ctx;
use crate::resp::Frame;
use crate::store::notify::{GENERIC, STRING};
use crate::store::{Entry, Str, StrForm, Value};
use crate::util::longdouble::LongDouble;
use crate::util::num::parse_i64;

/// The string stored at `entry`, or WRONGTYPE.
pub fn as_str(entry: &Entry) -> Result<&Str, Frame> {
    match &entry.value {
        Value::Str(s) => Ok(s),
        _ => Err(err::wrongtype()),
    }
}

/// Values up to this size are copied into replies (see [`reply_bytes`]).
const COPY_REPLY_MAX: usize = 4096;

/// A stored string handed to a reply. The first clone of a `Bytes` that
/// owns a plain buffer gives it a shared header (32 bytes) that stays with
/// the stored value for good, so every key ever read would grow; a small
/// value is copied into the reply instead (an inline one always is).
fn reply_bytes(stored: &Str) -> Bytes {
    if stored.len() <= COPY_REPLY_MAX {
        Bytes::copy_from_slice(stored)
    } else {
        stored.to_bytes()
    }
}

/// Reads a string key: Ok(None) when missing, WRONGTYPE for other types.
fn read_str(ctx: &mut Ctx, key: &[u8]) -> Result<Option<Bytes>, Frame> {
    match ctx.ks().read(key) {
        Some(entry) => as_str(entry).map(|s| Some(reply_bytes(s))),
        None => Ok(None),
    }
}

fn bulk_or_null(v: Option<Bytes>) -> Frame {
    v.map_or(Frame::Null, Frame::Bulk)
}

fn max_bulk(ctx: &Ctx) -> usize {
    ctx.shard.shared.config.max_bulk_len()
}

pub fn get(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    read_str(ctx, &argv[1]).map(bulk_or_null)
}

/// The TTL a SET-like command leaves on its key.
#[derive(Clone, Copy, PartialEq, Debug)]
enum TtlChange {
    Clear,
    Keep,
    At(u64),
}

/// SET's and GETEX's options as Redis 7.0 parses them: an option may repeat
/// (the last expire wins) but never conflict; numbers are read afterwards.
#[derive(Default)]
struct ExtOptions<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    persist: bool,
    expire: Option<(ExpireUnit, &'a Bytes)>,
}

fn expire_unit(word: &[u8]) -> Option<ExpireUnit> {
    [
        ("EX", ExpireUnit::RelSeconds),
        ("PX", ExpireUnit::RelMillis),
        ("EXAT", ExpireUnit::AbsSeconds),
        ("PXAT", ExpireUnit::AbsMillis),
    ]
    .into_iter()
    .find(|(name, _)| word.eq_ignore_ascii_case(name.as_bytes()))
    .map(|(_, unit)| unit)
}

/// Parses `words` (the arguments after the value for SET, after the key for
/// GETEX); `is_set` allows NX/XX/GET/KEEPTTL, else PERSIST.
fn parse_ext_options(words: &[Bytes], is_set: bool) -> Result<ExtOptions<'_>, Frame> {
    let mut o = ExtOptions::default();
    let mut i = 0;
    while i < words.len() {
        let w = Keyword::new(&words[i]);
        let next = words.get(i + 1);
        let unit = expire_unit(w.as_bytes());
        if is_set && w.is("NX") && !o.xx {
            o.nx = true;
        } else if is_set && w.is("XX") && !o.nx {
            o.xx = true;
        } else if is_set && w.is("GET") {
            o.get = true;
        } else if is_set && w.is("KEEPTTL") && o.expire.is_none() {
            o.keepttl = true;
        } else if !is_set && w.is("PERSIST") && o.expire.is_none() {
            o.persist = true;
        } else if let (Some(unit), Some(amount)) = (unit, next) {
            let same_or_none = o.expire.is_none_or(|(u, _)| u == unit);
            if o.keepttl || o.persist || !same_or_none {
                return Err(err::syntax());
            }
            o.expire = Some((unit, amount));
            i += 1;
        } else {
            return Err(err::syntax());
        }
        i += 1;
    }
    Ok(o)
}

pub fn set(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let (key, value) = (&argv[1], &argv[2]);
    let opts = parse_ext_options(&argv[3..], true)?;
    let get = opts.get;
    let ttl = match opts.expire {
        Some((unit, amount)) => {
            let amount = super::args::int_arg(amount)?;
            TtlChange::At(positive_deadline(amount, unit, ctx.now_ms(), "set")?)
        }
        None if opts.keepttl => TtlChange::Keep,
        None => TtlChange::Clear,
    };
    let mut ks = ctx.ks();
    // Only GET, NX and XX look at what is there; a plain SET goes straight
    // to the store (one lookup, not two).
    let old = if get || opts.nx || opts.xx {
        let old = match ks.peek(key) {
            Some(entry) if get => Some(as_str(entry)?.to_bytes()),
            Some(_) => Some(Bytes::new()),
            None => None,
        };
        let exists = old.is_some();
        if (opts.nx && exists) || (opts.xx && !exists) {
            return Ok(if get { bulk_or_null(old) } else { Frame::Null });
        }
        old
    } else {
        None
    };
    let stored = Value::copy_of(value);
    match ttl {
        TtlChange::Clear => ks.set(key, stored, None),
        TtlChange::Keep => ks.set_keep_ttl(key, stored),
        // A deadline already past (EXAT/PXAT) stores the key already expired,
        // as Redis 7.0 does: it counts in DBSIZE until an access or the sweep
        // removes it as an expiry.
        TtlChange::At(at) => ks.set(key, stored, Some(at)),
    }
    ks.notify(STRING, "set", key);
    if matches!(ttl, TtlChange::At(_)) {
        ks.notify(GENERIC, "expire", key);
    }
    Ok(if get { bulk_or_null(old) } else { Frame::OK })
}

/// Converts a SET/SETEX/GETEX expire argument, which must be positive, to a
/// deadline; Redis's error names the command.
fn positive_deadline(amount: i64, unit: ExpireUnit, now_ms: u64, cmd: &str) -> Result<u64, Frame> {
    let invalid = || Frame::Error(format!("ERR invalid expire time in '{cmd}' command"));
    if amount <= 0 {
        return Err(invalid());
    }
    match deadline_from(amount, unit, now_ms) {
        Some(at) if at > 0 => Ok(at as u64),
        _ => Err(invalid()),
    }
}

pub fn setnx(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut ks = ctx.ks();
    if ks.exists(&argv[1]) {
        return Ok(Frame::Integer(0));
    }
    ks.set(&argv[1], Value::copy_of(&argv[2]), None);
    ks.notify(STRING, "set", &argv[1]);
    Ok(Frame::Integer(1))
}

fn setex_generic(ctx: &mut Ctx, argv: &[Bytes], unit: ExpireUnit, cmd: &str) -> Reply {
    let amount = super::args::int_arg(&argv[2])?;
    let at = positive_deadline(amount, unit, ctx.now_ms(), cmd)?;
    let mut ks = ctx.ks();
    ks.set(&argv[1], Value::copy_of(&argv[3]), Some(at));
    ks.notify(STRING, "set", &argv[1]);
    ks.notify(GENERIC, "expire", &argv[1]);
    Ok(Frame::OK)
}

pub fn setex(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    setex_generic(ctx, argv, ExpireUnit::RelSeconds, "setex")
}

pub fn psetex(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    setex_generic(ctx, argv, ExpireUnit::RelMillis, "psetex")
}

pub fn getset(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let old = read_str(ctx, &argv[1])?;
    let mut ks = ctx.ks();
    ks.set(&argv[1], Value::copy_of(&argv[2]), None);
    ks.notify(STRING, "set", &argv[1]);
    Ok(bulk_or_null(old))
}

pub fn getdel(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let old = read_str(ctx, &argv[1])?;
    if old.is_some() {
        if let Some(old) = ctx.ks().remove(&argv[1]) {
            crate::store::lazyfree::free_value_if(crate::store::lazyfree::server_del(), old.value);
        }
        ctx.notify(GENERIC, "del", &argv[1]);
    }
    Ok(bulk_or_null(old))
}

pub fn getex(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let opts = parse_ext_options(&argv[2..], false)?;
    // Redis reads the key before the expire number: a missing key answers
    // nil whatever the number says.
    let Some(value) = read_str(ctx, key)? else {
        return Ok(Frame::Null);
    };
    let now = ctx.now_ms();
    match opts.expire {
        Some((unit, amount)) => {
            let amount = super::args::int_arg(amount)?;
            let at = positive_deadline(amount, unit, now, "getex")?;
            if at <= now {
                // A deadline already past deletes the key (a `del`, not an
                // expiry, though Redis frees it as `lazyfree-lazy-expire` says).
                if let Some(old) = ctx.ks().remove(key) {
                    crate::store::lazyfree::free_value_if(
                        crate::store::lazyfree::expire(),
                        old.value,
                    );
                }
                ctx.notify(GENERIC, "del", key);
            } else {
                ctx.ks().set_expire(key, Some(at));
                ctx.notify(GENERIC, "expire", key);
            }
        }
        None if opts.persist && ctx.ks().expire_at(key).is_some() => {
            ctx.ks().set_expire(key, None);
            ctx.notify(GENERIC, "persist", key);
        }
        None => {}
    }
    Ok(Frame::Bulk(value))
}

pub fn mget(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut ks = ctx.ks();
    let values = argv[1..]
        .iter()
        .map(|key| match ks.read(key).map(|e| &e.value) {
            Some(Value::Str(s)) => Frame::Bulk(reply_bytes(s)),
            _ => Frame::Null,
        })
        .collect();
    Ok(Frame::Array(values))
}

pub fn mset(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    if argv.len().is_multiple_of(2) {
        return Err(err::wrong_arity(
            std::str::from_utf8(&argv[0]).unwrap_or("mset"),
        ));
    }
    let mut ks = ctx.ks();
    for pair in argv[1..].chunks_exact(2) {
        ks.set(&pair[0], Value::copy_of(&pair[1]), None);
        ks.notify(STRING, "set", &pair[0]);
    }
    Ok(Frame::OK)
}

pub fn msetnx(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    if argv.len().is_multiple_of(2) {
        return Err(err::wrong_arity("msetnx"));
    }
    let mut ks = ctx.ks();
    if argv[1..].chunks_exact(2).any(|pair| ks.exists(&pair[0])) {
        return Ok(Frame::Integer(0));
    }
    for pair in argv[1..].chunks_exact(2) {
        ks.set(&pair[0], Value::copy_of(&pair[1]), None);
        ks.notify(STRING, "set", &pair[0]);
    }
    Ok(Frame::Integer(1))
}

/// Adds `delta` to the integer at `key` (0 if missing), keeping its TTL.
fn incr_by(ctx: &mut Ctx, key: &[u8], delta: i64) -> Reply {
    let mut ks = ctx.ks();
    let current = match ks.get(key) {
        Some(entry) => {
            let s = as_str(entry)?;
            parse_i64(s).ok_or_else(err::not_integer)?
        }
        None => 0,
    };
    let next = current
        .checked_add(delta)
        .ok_or_else(|| err::frame(err::OVERFLOW))?;
    let mut buf = Vec::with_capacity(20);
    crate::util::num::format_i64(next, &mut buf);
    ks.set_keep_ttl(key, Value::string(Bytes::from(buf)));
    ks.notify(STRING, "incrby", key);
    Ok(Frame::Integer(next))
}

pub fn incr(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    incr_by(ctx, &argv[1], 1)
}

pub fn decr(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    incr_by(ctx, &argv[1], -1)
}

pub fn incrby(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let delta = super::args::int_arg(&argv[2])?;
    incr_by(ctx, &argv[1], delta)
}

pub fn decrby(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let delta = super::args::int_arg(&argv[2])?;
    if delta == i64::MIN {
        return Err(err::frame("ERR decrement would overflow"));
    }
    incr_by(ctx, &argv[1], -delta)
}

/// In `long double`, as Redis (see `util::longdouble`); errors in Redis's
/// order: the key's type, its value, then the increment.
pub fn incrbyfloat(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let not_float = || err::frame(err::NOT_FLOAT);
    let key = &argv[1];
    let mut ks = ctx.ks();
    let current = match ks.get(key) {
        Some(entry) => LongDouble::parse(as_str(entry)?).ok_or_else(not_float)?,
        None => LongDouble::ZERO,
    };
    let delta = LongDouble::parse(&argv[2]).ok_or_else(not_float)?;
    let next = (current + delta).to_human();
    let text = Bytes::from(next.ok_or_else(|| err::frame(err::NAN_OR_INFINITY))?);
    ks.set_keep_ttl(key, Value::str_of(text.clone(), StrForm::Text));
    ks.notify(STRING, "incrbyfloat", key);
    Ok(Frame::Bulk(text))
}

pub fn append(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let limit = max_bulk(ctx);
    let mut ks = ctx.ks();
    let len = match ks.get(&argv[1]) {
        Some(entry) => {
            let old_len = as_str(entry)?.len();
            if old_len + argv[2].len() > limit {
                return Err(err::frame(err::TOO_BIG));
            }
            let Value::Str(stored) = &mut entry.value else {
                unreachable!("checked by as_str");
            };
            let len = stored.edit(old_len + argv[2].len(), |buf| {
                buf.extend_from_slice(&argv[2]);
                buf.len()
            });
            // Redis makes a string it appends to a `raw` one.
            stored.set_form(StrForm::Raw);
            len
        }
        None => {
            ks.set_keep_ttl(&argv[1], Value::copy_of(&argv[2]));
            argv[2].len()
        }
    };
    ks.notify(STRING, "append", &argv[1]);
    Ok(Frame::Integer(len as i64))
}

pub fn strlen(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    Ok(Frame::Integer(
        read_str(ctx, &argv[1])?.map_or(0, |s| s.len() as i64),
    ))
}

/// Resolves Redis's GETRANGE indexes to a byte range of a `len`-byte string.
pub fn clamp_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    if (start < 0 && end < 0 && start > end) || len == 0 {
        return None;
    }
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 {
        (len + end).max(0)
    } else {
        end.min(len - 1)
    };
    (start <= end).then_some((start as usize, end as usize))
}

pub fn getrange(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let start = super::args::int_arg(&argv[2])?;
    let end = super::args::int_arg(&argv[3])?;
    let value = read_str(ctx, &argv[1])?.unwrap_or_default();
    Ok(match clamp_range(start, end, value.len()) {
        Some((a, b)) => Frame::Bulk(value.slice(a..=b)),
        None => Frame::Bulk(Bytes::new()),
    })
}

pub fn setrange(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let offset = super::args::int_arg(&argv[2])?;
    if offset < 0 {
        return Err(err::frame("ERR offset is out of range"));
    }
    let offset = offset as usize;
    let patch = &argv[3];
    let limit = max_bulk(ctx);
    let mut ks = ctx.ks();
    let old_len = match ks.get(&argv[1]) {
        Some(entry) => Some(as_str(entry)?.len()),
        None => None,
    };
    if patch.is_empty() {
        return Ok(Frame::Integer(old_len.unwrap_or(0) as i64));
    }
    if offset.saturating_add(patch.len()) > limit {
        return Err(err::frame(err::TOO_BIG));
    }
    let end = offset + patch.len();
    let write = |buf: &mut Vec<u8>| {
        if buf.len() < end {
            buf.resize(end, 0);
        }
        buf[offset..end].copy_from_slice(patch);
        buf.len()
    };
    let len = match ks.get(&argv[1]) {
        Some(entry) => {
            let Value::Str(stored) = &mut entry.value else {
                unreachable!("checked by as_str");
            };
            let len = stored.edit(end.max(stored.len()), write);
            stored.set_form(StrForm::Raw);
            len
        }
        None => {
            let mut buf = Vec::with_capacity(end);
            let len = write(&mut buf);
            ks.set_keep_ttl(&argv[1], Value::str_of(Bytes::from(buf), StrForm::Raw));
            len
        }
    };
    ks.notify(STRING, "setrange", &argv[1]);
    Ok(Frame::Integer(len as i64))
}

/// LCS over two values already fetched (they may come from different shards).
/// `argv` is the whole command; keys are argv[1] and argv[2]. The DP table
/// (4 bytes a cell, quadratic in the strings' lengths) may take at most
/// `table_max` bytes, `proto-max-bulk-len` as in Redis: two 8 MiB strings
/// would ask for 256 TiB.
pub fn lcs_reply(a: Option<&Value>, b: Option<&Value>, argv: &[Bytes], table_max: usize) -> Reply {
    let string = |v: Option<&Value>| match v {
        None => Ok(Bytes::new()),
        Some(Value::Str(s)) => Ok(s.to_bytes()),
        Some(_) => Err(err::frame(
            "ERR The specified keys must contain string values",
        )),
    };
    // Redis checks the types before the options.
    let (a, b) = (string(a)?, string(b)?);
    let mut args = Args::new(&argv[2..]);
    let (mut want_len, mut want_idx, mut with_len, mut min_len) = (false, false, false, 0i64);
    while !args.is_empty() {
        let word = args.next_keyword()?;
        if word.is("LEN") {
            want_len = true;
        } else if word.is("IDX") {
            want_idx = true;
        } else if word.is("WITHMATCHLEN") {
            with_len = true;
        } else if word.is("MINMATCHLEN") && !args.is_empty() {
            min_len = args.next_i64()?.max(0);
        } else {
            return Err(err::syntax());
        }
    }
    if want_len && want_idx {
        return Err(err::frame(
            "ERR If you want both the length and indexes, please just use IDX.",
        ));
    }
    if a.len() >= u32::MAX as usize - 1 || b.len() >= u32::MAX as usize - 1 {
        return Err(err::frame("ERR String too long for LCS"));
    }
    let cells = (a.len() as u128 + 1) * (b.len() as u128 + 1);
    if cells * 4 > table_max as u128 {
        return Err(err::frame(
            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
        ));
    }
    let found = crate::util::lcs::lcs(&a, &b);
    if want_len {
        return Ok(Frame::Integer(found.sequence.len() as i64));
    }
    if !want_idx {
        return Ok(Frame::Bulk(Bytes::from(found.sequence)));
    }
    let range = |(s, e): (usize, usize)| {
        Frame::Array(vec![Frame::Integer(s as i64), Frame::Integer(e as i64)])
    };
    let matches = found
        .matches
        .iter()
        .filter(|((s, e), _)| (e - s + 1) as i64 >= min_len)
        .map(|&(ra, rb)| {
            let mut item = vec![range(ra), range(rb)];
            if with_len {
                item.push(Frame::Integer((ra.1 - ra.0 + 1) as i64));
            }
            Frame::Array(item)
        })
        .collect();
    Ok(Frame::Map(vec![
        (Frame::bulk("matches"), Frame::Array(matches)),
        (
            Frame::bulk("len"),
            Frame::Integer(found.sequence.len() as i64),
        ),
    ]))
}

pub fn lcs(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut ks = ctx.ks();
    let a = ks.read(&argv[1]).map(|e| e.value.clone());
    let b = ks.read(&argv[2]).map(|e| e.value.clone());
    lcs_reply(a.as_ref(), b.as_ref(), argv, max_bulk(ctx))
}

#[cfg(test)]
mod tests {
    use super::clamp_range;

    #[test]
    fn getrange_indexes_follow_redis() {
        assert_eq!(clamp_range(0, 3, 10), Some((0, 3)));
        assert_eq!(clamp_range(-3, -1, 10), Some((7, 9)));
        assert_eq!(clamp_range(0, -1, 10), Some((0, 9)));
        assert_eq!(clamp_range(10, 100, 10), None);
        assert_eq!(clamp_range(5, 100, 10), Some((5, 9)));
        assert_eq!(clamp_range(-1, -5, 10), None);
        assert_eq!(clamp_range(-100, 2, 10), Some((0, 2)));
        assert_eq!(clamp_range(0, 0, 0), None);
    }
}
