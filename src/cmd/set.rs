//! Set commands, first part: SADD, SREM, SCARD, SISMEMBER, SMISMEMBER, SMEMBERS.

use bytes::Bytes;

use super::args::{err, Reply};
use super::Ctx;
use crate::resp::Frame;
use crate::store::notify::SET;
use crate::store::value::Set;
use crate::store::{Entry, Value};

fn as_set(entry: &Entry) -> Result<&Set, Frame> {
    match &entry.value {
        Value::Set(s) => Ok(s),
        _ => Err(err::wrongtype()),
    }
}

/// Reads the set at `key` (None when missing).
fn with_set<T>(ctx: &mut Ctx, key: &[u8], f: impl FnOnce(&Set) -> T) -> Result<Option<T>, Frame> {
    match ctx.ks().read(key) {
        Some(entry) => as_set(entry).map(|s| Some(f(s))),
        None => Ok(None),
    }
}

pub fn sadd(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let mut ks = ctx.ks();
    match ks.get(key) {
        Some(entry) => {
            as_set(entry)?;
        }
        None => ks.set(key, Value::Set(Box::default()), None),
    }
    let Value::Set(set) = &mut ks.get(key).expect("present").value else {
        unreachable!("checked above")
    };
    let added = argv[2..]
        .iter()
        .filter(|m| set.insert(Bytes::copy_from_slice(m)))
        .count();
    if added > 0 {
        ks.notify(SET, "sadd", key);
    }
    Ok(Frame::Integer(added as i64))
}

pub fn srem(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(Frame::Integer(0));
    };
    as_set(entry)?;
    let Value::Set(set) = &mut entry.value else {
        unreachable!("checked above")
    };
    let removed = argv[2..]
        .iter()
        .filter(|m| set.swap_remove(m.as_ref()))
        .count();
    let emptied = set.is_empty();
    ks.after_removal(key, SET, "srem", removed > 0, emptied);
    Ok(Frame::Integer(removed as i64))
}

pub fn scard(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    Ok(Frame::Integer(
        with_set(ctx, &argv[1], |s| s.len() as i64)?.unwrap_or(0),
    ))
}

pub fn sismember(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let found = with_set(ctx, &argv[1], |s| s.contains(argv[2].as_ref()))?.unwrap_or(false);
    Ok(Frame::Integer(found as i64))
}

pub fn smismember(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let members = &argv[2..];
    let found = with_set(ctx, &argv[1], |s| {
        members
            .iter()
            .map(|m| Frame::Integer(s.contains(m.as_ref()) as i64))
            .collect()
    })?;
    Ok(Frame::Array(
        found.unwrap_or_else(|| vec![Frame::Integer(0); members.len()]),
    ))
}

/// SMEMBERS: a set in RESP3, an array in RESP2.
pub fn smembers(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let members = with_set(ctx, &argv[1], |s| {
        s.iter().cloned().map(Frame::Bulk).collect()
    })?;
    Ok(Frame::Set(members.unwrap_or_default()))
}
