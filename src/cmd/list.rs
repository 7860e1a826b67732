//! List commands: pushes, pops, LLEN, LRANGE, LINDEX, and the push / pop /
//! move primitives that LMOVE, LMPOP and the blocking pops build on.

use std::collections::VecDeque;

use bytes::Bytes;

use super::args::{err, int_arg, positive_count, Reply};
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

pub use crate::store::list::End;

impl End {
    /// LEFT or RIGHT (any case), as LMOVE and LMPOP name an end.
    pub(crate) fn parse(word: &[u8]) -> Option<End> {
        if word.eq_ignore_ascii_case(b"left") {
            Some(End::Head)
        } else if word.eq_ignore_ascii_case(b"right") {
            Some(End::Tail)
        } else {
            None
        }
    }

    fn push_event(self) -> &'static str {
        match self {
            End::Head => "lpush",
            End::Tail => "rpush",
        }
    }

    fn pop_event(self) -> &'static str {
        match self {
            End::Head => "lpop",
            End::Tail => "rpop",
        }
    }
}

/// Removes one element from `end` of `list`.
fn take_from(list: &mut VecDeque<Bytes>, end: End) -> Option<Bytes> {
    match end {
        End::Head => list.pop_front(),
        End::Tail => list.pop_back(),
    }
}

/// Whether `key` holds a list: false when it is missing, WRONGTYPE when it
/// holds another type. A write lookup: it counts no hit or miss.
pub(crate) fn list_exists(ctx: &mut Ctx, key: &[u8]) -> Result<bool, Frame> {
    match ctx.ks().get(key) {
        Some(entry) => as_list(entry).map(|_| true),
        None => Ok(false),
    }
}

/// Pushes `items` one by one at `end` of the list at `key`, keeping its TTL,
/// and fires `lpush`/`rpush`. A missing key is created when `create` is set
/// (the pushes) and left alone otherwise (the X forms). Returns the list's
/// new length, 0 when nothing was pushed for a missing key.
pub(crate) fn push_elements(
    ctx: &mut Ctx,
    key: &[u8],
    end: End,
    items: impl IntoIterator<Item = Bytes>,
    create: bool,
) -> Result<usize, Frame> {
    let mut ks = ctx.ks();
    match ks.get(key) {
        Some(entry) => {
            as_list(entry)?;
        }
        None if !create => return Ok(0),
        None => ks.set(key, Value::List(VecDeque::new()), None),
    }
    let list = as_list_mut(ks.get(key).expect("present"))?;
    for item in items {
        match end {
            End::Head => list.push_front(item),
            End::Tail => list.push_back(item),
        }
    }
    let len = list.len();
    ks.notify(LIST, end.push_event(), key);
    Ok(len)
}

/// Pops up to `count` elements from `end` of the list at `key`, in pop
/// order. None when the key is missing. Fires `lpop`/`rpop` when something
/// was popped, and removes the emptied list with a `del` event.
pub(crate) fn pop_elements(
    ctx: &mut Ctx,
    key: &[u8],
    end: End,
    count: usize,
) -> Result<Option<Vec<Bytes>>, Frame> {
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(None);
    };
    let list = as_list_mut(entry)?;
    let take = count.min(list.len());
    let popped: Vec<Bytes> = (0..take).filter_map(|_| take_from(list, end)).collect();
    let emptied = list.is_empty();
    ks.after_removal(key, LIST, end.pop_event(), !popped.is_empty(), emptied);
    Ok(Some(popped))
}

/// LMOVE on the shard that owns both keys: pops from `from` of `src` and
/// pushes at `to` of `dst`. None when `src` is missing. As in Redis, a
/// destination of another type is refused before anything moves, the push
/// happens before the source is checked for emptiness (so `src == dst`
/// rotates a one-element list in place, TTL kept), and the events come as
/// push, pop, then `del` of an emptied source.
pub(crate) fn move_element(
    ctx: &mut Ctx,
    src: &[u8],
    dst: &[u8],
    from: End,
    to: End,
) -> Result<Option<Bytes>, Frame> {
    if !list_exists(ctx, src)? {
        return Ok(None);
    }
    list_exists(ctx, dst)?;
    let value = {
        let mut ks = ctx.ks();
        let list = as_list_mut(ks.get(src).expect("checked above"))?;
        take_from(list, from).expect("stored lists are never empty")
    };
    push_elements(ctx, dst, to, [value.clone()], true)?;
    let mut ks = ctx.ks();
    let emptied = ks
        .get(src)
        .is_some_and(|e| as_list(e).is_ok_and(|l| l.is_empty()));
    ks.after_removal(src, LIST, from.pop_event(), true, emptied);
    Ok(Some(value))
}

/// LPUSH/RPUSH (create: true) and LPUSHX/RPUSHX (create: false).
fn push(ctx: &mut Ctx, argv: &[Bytes], end: End, create: bool) -> Reply {
    // Copied so the list does not pin the whole request buffer.
    let items = argv[2..].iter().map(|item| Bytes::copy_from_slice(item));
    let len = push_elements(ctx, &argv[1], end, items, create)?;
    Ok(Frame::Integer(len as i64))
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
        let name = if end == End::Head { "lpop" } else { "rpop" };
        return Err(err::wrong_arity(name));
    }
    let count = argv.get(2).map(|c| positive_count(c)).transpose()?;
    let popped = pop_elements(ctx, &argv[1], end, count.unwrap_or(1))?;
    Ok(match (popped, count) {
        (None, Some(_)) => Frame::NullArray,
        (None, None) => Frame::Null,
        (Some(popped), Some(_)) => Frame::Array(popped.into_iter().map(Frame::Bulk).collect()),
        (Some(popped), None) => popped.into_iter().next().map_or(Frame::Null, Frame::Bulk),
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
