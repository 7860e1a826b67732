//! List commands, first part: pushes, pops, LLEN, LRANGE, LINDEX.

use std::collections::VecDeque;

use bytes::Bytes;

use super::args::{err, int_arg, Reply};
use super::Ctx;
use crate::resp::Frame;
use crate::store::notify::LIST;
use crate::store::{Entry, Value};

pub(super) fn as_list(entry: &Entry) -> Result<&VecDeque<Bytes>, Frame> {
    match &entry.value {
        Value::List(l) => Ok(l),
        _ => Err(err::wrongtype()),
    }
}

pub(super) fn as_list_mut(entry: &mut Entry) -> Result<&mut VecDeque<Bytes>, Frame> {
    match &mut entry.value {
        Value::List(l) => Ok(l),
        _ => Err(err::wrongtype()),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum End {
    Head,
    Tail,
}

/// LPUSH/RPUSH (create: true) and LPUSHX/RPUSHX (create: false).
fn push(ctx: &mut Ctx, argv: &[Bytes], end: End, create: bool) -> Reply {
    let key = &argv[1];
    let mut ks = ctx.ks();
    match ks.get(key) {
        Some(entry) => {
            as_list(entry)?;
        }
        None if !create => return Ok(Frame::Integer(0)),
        None => ks.set(key, Value::List(VecDeque::new()), None),
    }
    let list = as_list_mut(ks.get(key).expect("present"))?;
    for item in &argv[2..] {
        let item = Bytes::copy_from_slice(item);
        match end {
            End::Head => list.push_front(item),
            End::Tail => list.push_back(item),
        }
    }
    let len = list.len() as i64;
    ks.notify(LIST, if end == End::Head { "lpush" } else { "rpush" }, key);
    Ok(Frame::Integer(len))
}

pub fn lpush(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    push(ctx, argv, End::Head, true)
}

pub fn rpush(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    push(ctx, argv, End::Tail, true)
}

pub fn lpushx(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    push(ctx, argv, End::Head, false)
}

pub fn rpushx(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    push(ctx, argv, End::Tail, false)
}

/// LPOP/RPOP key [count]: one element as a bulk, or with a count an array.
fn pop(ctx: &mut Ctx, argv: &[Bytes], end: End) -> Reply {
    if argv.len() > 3 {
        return Err(err::syntax());
    }
    let count = match argv.get(2) {
        Some(c) => {
            let n = int_arg(c)?;
            if n < 0 {
                return Err(err::frame("ERR value is out of range, must be positive"));
            }
            Some(n as usize)
        }
        None => None,
    };
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(if count.is_some() {
            Frame::NullArray
        } else {
            Frame::Null
        });
    };
    let list = as_list_mut(entry)?;
    let take = count.unwrap_or(1).min(list.len());
    let popped: Vec<Bytes> = (0..take)
        .filter_map(|_| match end {
            End::Head => list.pop_front(),
            End::Tail => list.pop_back(),
        })
        .collect();
    let emptied = list.is_empty();
    let event = if end == End::Head { "lpop" } else { "rpop" };
    ks.after_removal(key, LIST, event, !popped.is_empty(), emptied);
    Ok(match count {
        Some(_) => Frame::Array(popped.into_iter().map(Frame::Bulk).collect()),
        None => popped.into_iter().next().map_or(Frame::Null, Frame::Bulk),
    })
}

pub fn lpop(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    pop(ctx, argv, End::Head)
}

pub fn rpop(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    pop(ctx, argv, End::Tail)
}

pub fn llen(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    Ok(Frame::Integer(match ctx.ks().read(&argv[1]) {
        Some(entry) => as_list(entry)?.len() as i64,
        None => 0,
    }))
}

pub fn lrange(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let start = int_arg(&argv[2])?;
    let stop = int_arg(&argv[3])?;
    let mut ks = ctx.ks();
    let Some(entry) = ks.read(&argv[1]) else {
        return Ok(Frame::Array(Vec::new()));
    };
    let list = as_list(entry)?;
    Ok(Frame::Array(match list_range(start, stop, list.len()) {
        Some((a, b)) => list.range(a..=b).cloned().map(Frame::Bulk).collect(),
        None => Vec::new(),
    }))
}

/// Redis's LRANGE indexes: negatives count from the end; a start before the
/// head is clamped to it, but an end before the head means an empty range
/// (unlike GETRANGE, which clamps both).
pub(super) fn list_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { len + end } else { end.min(len - 1) };
    (start <= end && start < len).then_some((start as usize, end as usize))
}

pub fn lindex(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let index = int_arg(&argv[2])?;
    let mut ks = ctx.ks();
    let Some(entry) = ks.read(&argv[1]) else {
        return Ok(Frame::Null);
    };
    let list = as_list(entry)?;
    let position = if index < 0 {
        list.len() as i64 + index
    } else {
        index
    };
    Ok(usize::try_from(position)
        .ok()
        .and_then(|p| list.get(p))
        .map_or(Frame::Null, |v| Frame::Bulk(v.clone())))
}

#[cfg(test)]
mod tests {
    use super::list_range;

    #[test]
    fn lrange_indexes_follow_redis() {
        assert_eq!(list_range(0, -1, 5), Some((0, 4)));
        assert_eq!(list_range(-3, -1, 5), Some((2, 4)));
        assert_eq!(list_range(-100, 2, 5), Some((0, 2)));
        assert_eq!(
            list_range(-100, -50, 5),
            None,
            "an end before the head is empty"
        );
        assert_eq!(list_range(2, 100, 5), Some((2, 4)));
        assert_eq!(list_range(5, 10, 5), None);
        assert_eq!(list_range(3, 1, 5), None);
        assert_eq!(list_range(0, -1, 0), None);
    }
}
