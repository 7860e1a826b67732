//! Hash commands, first part: field reads and writes, counters, listings.

use bytes::Bytes;

use super::args::{err, Reply};
use super::Ctx;
use crate::resp::Frame;
use crate::store::hash::ListpackLimits;
use crate::store::notify::HASH;
use crate::store::value::Hash;
use crate::store::{Entry, Keyspace, Value};
use crate::util::longdouble::LongDouble;
use crate::util::num::{format_i64, parse_i64};

pub(super) fn as_hash(entry: &Entry) -> Result<&Hash, Frame> {
    match &entry.value {
        Value::Hash(h) => Ok(h),
        _ => Err(err::wrongtype()),
    }
}

/// The hash at `key` for writing, created empty when missing.
fn hash_for_write<'k>(ks: &'k mut Keyspace, key: &[u8]) -> Result<&'k mut Hash, Frame> {
    if ks.get(key).is_none() {
        ks.set(key, Value::Hash(Hash::default()), None);
    }
    match &mut ks.get(key).expect("present").value {
        Value::Hash(h) => Ok(h),
        _ => Err(err::wrongtype()),
    }
}

/// Reads a field of the hash at `key` (None when key or field is missing).
fn with_hash<T>(ctx: &mut Ctx, key: &[u8], f: impl FnOnce(&Hash) -> T) -> Result<Option<T>, Frame> {
    match ctx.ks().read(key) {
        Some(entry) => as_hash(entry).map(|h| Some(f(h))),
        None => Ok(None),
    }
}

/// The current `hash-max-listpack-*` limits, for a write.
fn limits(ctx: &Ctx) -> ListpackLimits {
    ctx.shard.shared.config.hash_listpack()
}

/// HSET and HMSET: field/value pairs.
fn set_fields(ctx: &mut Ctx, argv: &[Bytes]) -> Result<i64, Frame> {
    if !argv.len().is_multiple_of(2) {
        return Err(err::wrong_arity(
            &String::from_utf8_lossy(&argv[0]).to_ascii_lowercase(),
        ));
    }
    let key = &argv[1];
    let limits = limits(ctx);
    let mut ks = ctx.ks();
    let hash = hash_for_write(&mut ks, key)?;
    let mut added = 0;
    for pair in argv[2..].chunks_exact(2) {
        added += hash.insert(&pair[0], &pair[1], limits) as i64;
    }
    ks.notify(HASH, "hset", key);
    Ok(added)
}

pub fn hset(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    set_fields(ctx, argv).map(Frame::Integer)
}

pub fn hmset(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    set_fields(ctx, argv).map(|_| Frame::OK)
}

pub fn hsetnx(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let (key, field, value) = (&argv[1], &argv[2], &argv[3]);
    let limits = limits(ctx);
    let mut ks = ctx.ks();
    if let Some(entry) = ks.get(key) {
        if as_hash(entry)?.contains_key(field) {
            return Ok(Frame::Integer(0));
        }
    }
    hash_for_write(&mut ks, key)?.insert(field, value, limits);
    ks.notify(HASH, "hset", key);
    Ok(Frame::Integer(1))
}

pub fn hget(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let value = with_hash(ctx, &argv[1], |h| {
        h.get(&argv[2]).map(Bytes::copy_from_slice)
    })?;
    Ok(value.flatten().map_or(Frame::Null, Frame::Bulk))
}

pub fn hmget(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let fields = &argv[2..];
    let values = with_hash(ctx, &argv[1], |h| {
        fields
            .iter()
            .map(|f| h.get(f).map_or(Frame::Null, Frame::bulk))
            .collect()
    })?;
    Ok(Frame::Array(
        values.unwrap_or_else(|| vec![Frame::Null; fields.len()]),
    ))
}

pub fn hdel(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(Frame::Integer(0));
    };
    as_hash(entry)?;
    let Value::Hash(hash) = &mut entry.value else {
        unreachable!("checked above")
    };
    // Small hashes keep insertion order across deletes, as Redis's listpack
    // encoding does; a field's deadline goes with it.
    let removed = argv[2..].iter().filter(|f| hash.remove(f)).count();
    let emptied = hash.is_empty();
    ks.after_removal(key, HASH, "hdel", removed > 0, emptied);
    Ok(Frame::Integer(removed as i64))
}

pub fn hlen(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    Ok(Frame::Integer(
        with_hash(ctx, &argv[1], |h| h.len() as i64)?.unwrap_or(0),
    ))
}

pub fn hexists(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let found = with_hash(ctx, &argv[1], |h| h.contains_key(&argv[2]))?.unwrap_or(false);
    Ok(Frame::Integer(found as i64))
}

pub fn hstrlen(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let len = with_hash(ctx, &argv[1], |h| h.get(&argv[2]).map_or(0, |v| v.len()))?;
    Ok(Frame::Integer(len.unwrap_or(0) as i64))
}

pub fn hkeys(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let keys = with_hash(ctx, &argv[1], |h| {
        h.iter().map(|(k, _)| Frame::bulk(k)).collect()
    })?;
    Ok(Frame::Array(keys.unwrap_or_default()))
}

pub fn hvals(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let values = with_hash(ctx, &argv[1], |h| {
        h.iter().map(|(_, v)| Frame::bulk(v)).collect()
    })?;
    Ok(Frame::Array(values.unwrap_or_default()))
}

/// HGETALL: a map in RESP3, a flat field/value array in RESP2.
pub fn hgetall(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let pairs = with_hash(ctx, &argv[1], |h| {
        h.iter()
            .map(|(k, v)| (Frame::bulk(k), Frame::bulk(v)))
            .collect()
    })?;
    Ok(Frame::Map(pairs.unwrap_or_default()))
}

pub fn hincrby(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let delta = super::args::int_arg(&argv[3])?;
    let key = &argv[1];
    let limits = limits(ctx);
    let mut ks = ctx.ks();
    let hash = hash_for_write(&mut ks, key)?;
    let current = match hash.get(&argv[2]) {
        Some(v) => parse_i64(v).ok_or_else(|| err::frame("ERR hash value is not an integer"))?,
        None => 0,
    };
    let next = current
        .checked_add(delta)
        .ok_or_else(|| err::frame(err::OVERFLOW))?;
    let mut text = Vec::with_capacity(20);
    format_i64(next, &mut text);
    // An increment keeps the field's deadline (Redis 7.4).
    hash.insert_keep_ttl(&argv[2], &text, limits);
    ks.notify(HASH, "hincrby", key);
    Ok(Frame::Integer(next))
}

/// In `long double`, as Redis (see `util::longdouble`).
pub fn hincrbyfloat(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let delta = LongDouble::parse(&argv[3]).ok_or_else(|| err::frame(err::NOT_FLOAT))?;
    if !delta.is_finite() {
        // Checked before the key is created, so a failed call leaves nothing behind.
        return Err(err::frame("ERR value is NaN or Infinity"));
    }
    let key = &argv[1];
    let limits = limits(ctx);
    let mut ks = ctx.ks();
    let hash = hash_for_write(&mut ks, key)?;
    let current = match hash.get(&argv[2]) {
        Some(v) => {
            LongDouble::parse(v).ok_or_else(|| err::frame("ERR hash value is not a float"))?
        }
        None => LongDouble::ZERO,
    };
    let next = (current + delta).to_human();
    let text = Bytes::from(next.ok_or_else(|| err::frame(err::NAN_OR_INFINITY))?);
    hash.insert_keep_ttl(&argv[2], &text, limits);
    ks.notify(HASH, "hincrbyfloat", key);
    Ok(Frame::Bulk(text))
}
