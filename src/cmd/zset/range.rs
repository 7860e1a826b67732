//! The ZRANGE family (ZRANGE, ZRANGESTORE, ZREVRANGE, ZRANGEBYSCORE,
//! ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX) and ZREMRANGEBYRANK,
//! ZREMRANGEBYSCORE, ZREMRANGEBYLEX.
//!
//! Every form becomes a [`Query`]: a range by rank, score or lex, a
//! direction and a LIMIT. Selecting turns the range into an interval of
//! ascending ranks and walks it, so LIMIT offsets cost O(log n), not O(offset).

use bytes::Bytes;

use super::super::args::{err, int_arg, Reply};
use super::super::{shard_of, Ctx, Session, ShardData};
use super::{
    as_zset, as_zset_mut, members_reply, parse_lex_range, parse_score_range, store_result,
};
use crate::exec::{Action, Job, Need, Op, Out};
use crate::resp::Frame;
use crate::store::notify::ZSET;
use crate::store::zset::{LexRange, ScoreRange, ZSet};
use crate::store::Value;

/// What a range is over.
#[derive(Clone, Debug)]
enum Bounds {
    /// Indexes as given (negative counts from the end).
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rank,
    Score,
    Lex,
}

/// A parsed range command.
#[derive(Clone, Debug)]
struct Query {
    bounds: Bounds,
    rev: bool,
    offset: i64,
    /// Negative: no limit.
    limit: i64,
    with_scores: bool,
}

/// Parses a range command as Redis's `zrangeGenericCommand` does: `src` is
/// the key's position (the range follows it), `store` forbids WITHSCORES,
/// and a fixed `kind` or direction (ZRANGEBYSCORE, ZREVRANGE, ...) turns
/// the words that would choose them into syntax errors.
fn parse_query(
    argv: &[Bytes],
    src: usize,
    store: bool,
    kind: Option<Kind>,
    rev: Option<bool>,
) -> Result<Query, Frame> {
    // A kind or direction already chosen (by the command, or by a word
    // already read) makes the words choosing them syntax errors.
    let (mut kind, mut rev) = (kind, rev);
    let (mut with_scores, mut offset, mut limit) = (false, 0, -1);
    let mut j = src + 3;
    while j < argv.len() {
        let word = argv[j].as_ref();
        let left = argv.len() - j - 1;
        if !store && word.eq_ignore_ascii_case(b"WITHSCORES") {
            with_scores = true;
        } else if word.eq_ignore_ascii_case(b"LIMIT") && left >= 2 {
            offset = int_arg(&argv[j + 1])?;
            limit = int_arg(&argv[j + 2])?;
            j += 2;
        } else if rev.is_none() && word.eq_ignore_ascii_case(b"REV") {
            rev = Some(true);
        } else if kind.is_none() && word.eq_ignore_ascii_case(b"BYLEX") {
            kind = Some(Kind::Lex);
        } else if kind.is_none() && word.eq_ignore_ascii_case(b"BYSCORE") {
            kind = Some(Kind::Score);
        } else {
            return Err(err::syntax());
        }
        j += 1;
    }
    let kind = kind.unwrap_or(Kind::Rank);
    let rev = rev.unwrap_or(false);
    if limit != -1 && kind == Kind::Rank {
        return Err(err::frame(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if with_scores && kind == Kind::Lex {
        return Err(err::frame(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    // Reverse score and lex ranges are written max first.
    let (lo, hi) = if rev && kind != Kind::Rank {
        (&argv[src + 2], &argv[src + 1])
    } else {
        (&argv[src + 1], &argv[src + 2])
    };
    let bounds = match kind {
        Kind::Rank => Bounds::Rank(int_arg(lo)?, int_arg(hi)?),
        Kind::Score => Bounds::Score(parse_score_range(lo, hi)?),
        Kind::Lex => Bounds::Lex(parse_lex_range(lo, hi)?),
    };
    Ok(Query {
        bounds,
        rev,
        offset,
        limit,
        with_scores,
    })
}

/// Redis's index rules: negative counts from the end, the start clamps to
/// 0, the end to the last rank. None when nothing is left.
fn clamp_indexes(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

/// The window LIMIT leaves of the ascending ranks `first..=last`, counting
/// the offset from the end the walk starts at. None when it is empty (a
/// negative offset selects nothing, as in Redis).
fn limit_window(
    (first, last): (usize, usize),
    rev: bool,
    offset: i64,
    limit: i64,
) -> Option<(usize, usize)> {
    let available = (last - first + 1) as u64;
    let offset = u64::try_from(offset).ok()?;
    if offset >= available {
        return None;
    }
    let left = available - offset;
    let take = u64::try_from(limit).map_or(left, |l| l.min(left));
    if take == 0 {
        return None;
    }
    let (offset, take) = (offset as usize, take as usize);
    Some(if rev {
        (last + 1 - offset - take, last - offset)
    } else {
        (first + offset, first + offset + take - 1)
    })
}

/// The ascending ranks a query selects from `zset`.
fn ranks(zset: &ZSet, query: &Query) -> Option<(usize, usize)> {
    let matched = match &query.bounds {
        Bounds::Rank(start, end) => {
            let (start, end) = clamp_indexes(*start, *end, zset.len())?;
            if !query.rev {
                return Some((start, end));
            }
            let top = zset.len() - 1;
            return Some((top - end, top - start));
        }
        Bounds::Score(range) => zset.ranks_in(range)?,
        Bounds::Lex(range) => zset.ranks_in(range)?,
    };
    limit_window(matched, query.rev, query.offset, query.limit)
}

/// The members a query selects, in reply order.
fn select(zset: &ZSet, query: &Query) -> Vec<(Bytes, f64)> {
    match ranks(zset, query) {
        Some((lo, hi)) => zset
            .between(lo, hi, query.rev)
            .map(|(m, s)| (m.clone(), s))
            .collect(),
        None => Vec::new(),
    }
}

/// Runs `query` on the set at `key`: None when the key is missing.
fn select_at(ctx: &mut Ctx, key: &[u8], query: &Query) -> Result<Option<Vec<(Bytes, f64)>>, Frame> {
    match ctx.ks().read(key) {
        Some(entry) => Ok(Some(select(as_zset(entry)?, query))),
        None => Ok(None),
    }
}

fn range_reply(ctx: &mut Ctx, argv: &[Bytes], kind: Option<Kind>, rev: Option<bool>) -> Reply {
    let query = parse_query(argv, 1, false, kind, rev)?;
    let found = select_at(ctx, &argv[1], &query)?.unwrap_or_default();
    Ok(members_reply(found, query.with_scores))
}

/// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
pub fn zrange(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    range_reply(ctx, argv, None, None)
}

pub fn zrevrange(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    range_reply(ctx, argv, Some(Kind::Rank), Some(true))
}

pub fn zrangebyscore(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    range_reply(ctx, argv, Some(Kind::Score), Some(false))
}

pub fn zrevrangebyscore(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    range_reply(ctx, argv, Some(Kind::Score), Some(true))
}

pub fn zrangebylex(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    range_reply(ctx, argv, Some(Kind::Lex), Some(false))
}

pub fn zrevrangebylex(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    range_reply(ctx, argv, Some(Kind::Lex), Some(true))
}

/// ZRANGESTORE dst src min max [...] with both keys on this shard.
pub fn zrangestore(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let query = parse_query(argv, 2, true, None, None)?;
    let found = select_at(ctx, &argv[2], &query)?.unwrap_or_default();
    Ok(store_result(
        &mut ctx.ks(),
        &argv[1],
        ZSet::from_pairs(found),
        "zrangestore",
    ))
}

/// ZRANGESTORE with `dst` and `src` on different shards: select on the
/// source's shard, then store on the destination's.
pub fn zrangestore_job(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let query = match parse_query(argv, 2, true, None, None) {
        Ok(q) => q,
        Err(e) => return Action::Reply(e),
    };
    let n = shard.shared.nshards;
    let db = session.db;
    let (dst, src) = (argv[1].clone(), argv[2].clone());
    let (to, from) = (shard_of(&dst, n), shard_of(&src, n));
    compute_then_store(db, from, to, dst, "zrangestore", move |ctx| {
        select_at(ctx, &src, &query).map(|found| ZSet::from_pairs(found.unwrap_or_default()))
    })
}

/// The cross-shard form of a STORE command that reads one source: the
/// sorted set `compute` builds on shard `from` (or the reply it gives
/// instead), stored at `dst` on shard `to` with event `event`. The job is
/// ordered; the dispatcher makes it atomic under the keys' locks.
pub fn compute_then_store(
    db: usize,
    from: usize,
    to: usize,
    dst: Bytes,
    event: &'static str,
    compute: impl FnOnce(&mut Ctx) -> Result<ZSet, Frame> + Send + 'static,
) -> Action {
    let read = Op::Store(
        db,
        Need::Whole,
        Box::new(move |ctx: &mut Ctx| match compute(ctx) {
            Ok(zset) => Out::Entry(Some((Value::ZSet(Box::new(zset.into())), None))),
            Err(e) => Out::Frame(e),
        }),
    );
    Action::Job(
        Job::new(vec![(from, read)], move |mut outs| {
            let result = match outs.pop() {
                Some(Out::Entry(Some((Value::ZSet(z), _)))) => *z,
                Some(other) => return Action::Reply(other.frame()),
                None => return Action::Reply(Frame::Null),
            };
            Action::Job(Job::single(to, db, move |ctx| {
                Out::Frame(store_result(&mut ctx.ks(), &dst, result, event))
            }))
        })
        .ordered(),
    )
}

/// Removes the ascending ranks a range names from the set at `key` and
/// fires `event` (and `del` when it empties). Replies with the count.
fn remove_where(
    ctx: &mut Ctx,
    key: &[u8],
    event: &'static str,
    ranks: impl FnOnce(&ZSet) -> Option<(usize, usize)>,
) -> Reply {
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(Frame::Integer(0));
    };
    let zset = as_zset_mut(entry)?;
    let removed = match ranks(zset) {
        Some((lo, hi)) => zset.remove_ranks(lo, hi).len(),
        None => 0,
    };
    let emptied = zset.is_empty();
    ks.after_removal(key, ZSET, event, removed > 0, emptied);
    Ok(Frame::Integer(removed as i64))
}

pub fn zremrangebyrank(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let (start, end) = (int_arg(&argv[2])?, int_arg(&argv[3])?);
    remove_where(ctx, &argv[1], "zremrangebyrank", |z| {
        clamp_indexes(start, end, z.len())
    })
}

pub fn zremrangebyscore(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let range = parse_score_range(&argv[2], &argv[3])?;
    remove_where(ctx, &argv[1], "zremrangebyscore", |z| z.ranks_in(&range))
}

pub fn zremrangebylex(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let range = parse_lex_range(&argv[2], &argv[3])?;
    remove_where(ctx, &argv[1], "zremrangebylex", |z| z.ranks_in(&range))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_clamp_as_in_redis() {
        assert_eq!(clamp_indexes(0, -1, 4), Some((0, 3)));
        assert_eq!(clamp_indexes(-100, 100, 4), Some((0, 3)));
        assert_eq!(clamp_indexes(2, 1, 4), None);
        assert_eq!(clamp_indexes(-1, -2, 4), None);
        assert_eq!(clamp_indexes(4, 10, 4), None);
        assert_eq!(clamp_indexes(0, -1, 0), None);
    }

    #[test]
    fn limit_windows_count_from_the_walk_start() {
        assert_eq!(limit_window((2, 9), false, 0, -1), Some((2, 9)));
        assert_eq!(limit_window((2, 9), false, 1, 2), Some((3, 4)));
        assert_eq!(limit_window((2, 9), true, 1, 2), Some((7, 8)));
        assert_eq!(limit_window((2, 9), true, 6, 5), Some((2, 3)));
        assert_eq!(limit_window((0, 4), true, 2, 9), Some((0, 2)));
        assert_eq!(limit_window((2, 9), false, 8, 1), None);
        assert_eq!(limit_window((2, 9), false, -1, 1), None);
        assert_eq!(limit_window((2, 9), false, 0, 0), None);
    }
}
