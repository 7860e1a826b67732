//! Sorted-set commands. This module holds the member commands (ZADD,
//! ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD, ZCOUNT, ZLEXCOUNT, ZRANK,
//! ZREVRANK) and what the others share; [`range`] the ZRANGE family and
//! ZREMRANGEBY*, [`pop`] ZPOPMIN/ZPOPMAX/ZMPOP and `pop::pop_members`, the
//! primitive the blocking pops call, [`setop`] ZUNION, ZINTER,
//! ZDIFF, their STORE forms and ZINTERCARD. Replies follow redis-server 7.0.

pub mod pop;
pub mod range;
pub mod setop;

use bytes::Bytes;

use super::args::{err, Reply};
use super::table::numkeys_positions;
use super::Ctx;
use crate::resp::Frame;
use crate::store::encoding::Encoded;
use crate::store::notify::{GENERIC, ZSET};
use crate::store::zset::{LexRange, ScoreRange, ZSet};
use crate::store::{Entry, Keyspace, Value};
use crate::util::num::parse_f64;

const NAN_SCORE: &str = "ERR resulting score is not a number (NaN)";
const BAD_SCORE_RANGE: &str = "ERR min or max is not a float";
const BAD_LEX_RANGE: &str = "ERR min or max not valid string range item";

fn as_zset(entry: &Entry) -> Result<&ZSet, Frame> {
    match &entry.value {
        Value::ZSet(z) => Ok(z),
        _ => Err(err::wrongtype()),
    }
}

fn as_zset_mut(entry: &mut Entry) -> Result<&mut ZSet, Frame> {
    match &mut entry.value {
        Value::ZSet(z) => Ok(z),
        _ => Err(err::wrongtype()),
    }
}

/// Reads the sorted set at `key` for a read command (None when missing).
fn with_zset<T>(ctx: &mut Ctx, key: &[u8], f: impl FnOnce(&ZSet) -> T) -> Result<Option<T>, Frame> {
    match ctx.ks().read(key) {
        Some(entry) => as_zset(entry).map(|z| Some(f(z))),
        None => Ok(None),
    }
}

fn parse_score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, Frame> {
    ScoreRange::parse(min, max).ok_or_else(|| err::frame(BAD_SCORE_RANGE))
}

fn parse_lex_range(min: &Bytes, max: &Bytes) -> Result<LexRange, Frame> {
    LexRange::parse(min, max).ok_or_else(|| err::frame(BAD_LEX_RANGE))
}

/// Members, or members and scores: a flat array in RESP2, [member, score]
/// pairs in RESP3.
fn members_reply(items: Vec<(Bytes, f64)>, with_scores: bool) -> Frame {
    if with_scores {
        Frame::Pairs(
            items
                .into_iter()
                .map(|(m, s)| (Frame::Bulk(m), Frame::Double(s)))
                .collect(),
        )
    } else {
        Frame::Array(items.into_iter().map(|(m, _)| Frame::Bulk(m)).collect())
    }
}

/// Writes a computed set to `dst` as the STORE commands do: a non-empty
/// result replaces whatever was there (its TTL dropped) and fires `event`;
/// an empty one deletes `dst`. Replies with the result's size.
pub(crate) fn store_result(
    ks: &mut Keyspace,
    dst: &[u8],
    result: impl Into<Encoded<ZSet>>,
    event: &'static str,
) -> Frame {
    let result = result.into();
    let len = result.len() as i64;
    if len > 0 {
        ks.set(dst, Value::ZSet(Box::new(result)), None);
        ks.notify(ZSET, event, dst);
    } else if let Some(old) = ks.remove(dst) {
        crate::store::lazyfree::free_value_if(crate::store::lazyfree::server_del(), old.value);
        ks.notify(GENERIC, "del", dst);
    }
    Frame::Integer(len)
}

/// Key positions of ZUNION, ZINTER, ZDIFF, ZINTERCARD and ZMPOP.
pub fn numkeys_at_1(argv: &[Bytes]) -> Vec<usize> {
    numkeys_positions(argv, &[], 1)
}

/// Key positions of ZUNIONSTORE, ZINTERSTORE and ZDIFFSTORE.
pub fn dst_and_numkeys_at_2(argv: &[Bytes]) -> Vec<usize> {
    numkeys_positions(argv, &[1], 2)
}

/// ZADD's flags.
#[derive(Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

impl AddFlags {
    /// Redis's checks of incompatible flags, in its order.
    fn check(&self, pairs: usize) -> Result<(), Frame> {
        if self.nx && self.xx {
            return Err(err::frame(
                "ERR XX and NX options at the same time are not compatible",
            ));
        }
        // At most one of GT, LT and NX.
        if [self.gt, self.lt, self.nx].iter().filter(|f| **f).count() > 1 {
            return Err(err::frame(
                "ERR GT, LT, and/or NX options at the same time are not compatible",
            ));
        }
        if self.incr && pairs > 1 {
            return Err(err::frame(
                "ERR INCR option supports a single increment-element pair",
            ));
        }
        Ok(())
    }
}

pub fn zadd(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    add_command(ctx, argv, AddFlags::default())
}

/// ZINCRBY key increment member: ZADD INCR with one pair. Redis runs it
/// through ZADD's own parsing, so a flag word where the increment goes
/// (`ZINCRBY k XX m`) leaves an odd pair: a syntax error.
pub fn zincrby(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let flags = AddFlags {
        incr: true,
        ..AddFlags::default()
    };
    add_command(ctx, argv, flags)
}

/// ZADD's flags from `argv[2]` on, then its (score, member) pairs.
fn add_command(ctx: &mut Ctx, argv: &[Bytes], mut flags: AddFlags) -> Reply {
    let mut i = 2;
    while i < argv.len() {
        match argv[i].to_ascii_uppercase().as_slice() {
            b"NX" => flags.nx = true,
            b"XX" => flags.xx = true,
            b"GT" => flags.gt = true,
            b"LT" => flags.lt = true,
            b"CH" => flags.ch = true,
            b"INCR" => flags.incr = true,
            _ => break,
        }
        i += 1;
    }
    let pairs = &argv[i..];
    if pairs.is_empty() || !pairs.len().is_multiple_of(2) {
        return Err(err::syntax());
    }
    flags.check(pairs.len() / 2)?;
    add(ctx, &argv[1], &flags, pairs)
}

/// Adds or updates the (score, member) `pairs` under `flags`. Replies as
/// ZADD does: the count added (or changed, with CH), or with INCR the new
/// score (nil when the flags skipped it).
fn add(ctx: &mut Ctx, key: &[u8], flags: &AddFlags, pairs: &[Bytes]) -> Reply {
    // Every score is checked before anything changes, as Redis does.
    let scores = pairs
        .chunks_exact(2)
        .map(|p| parse_f64(&p[0]).ok_or_else(|| err::frame(err::NOT_FLOAT)))
        .collect::<Result<Vec<f64>, Frame>>()?;
    let skipped = || {
        if flags.incr {
            Frame::Null
        } else {
            Frame::Integer(0)
        }
    };
    let mut ks = ctx.ks();
    match ks.get(key) {
        Some(entry) => {
            as_zset(entry)?;
        }
        None if flags.xx => return Ok(skipped()),
        None => ks.set(key, Value::ZSet(Box::default()), None),
    }
    let zset = as_zset_mut(ks.get(key).expect("present"))?;
    let (mut added, mut changed) = (0, 0);
    let mut result = Ok(None);
    for (pair, &given) in pairs.chunks_exact(2).zip(&scores) {
        match add_one(zset, &pair[1], given, flags) {
            Ok(Some((score, previous))) => {
                match previous {
                    None => added += 1,
                    Some(old) if old != score => changed += 1,
                    Some(_) => {}
                }
                result = Ok(Some(score));
            }
            Ok(None) => {}
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    if zset.is_empty() {
        // NX/XX skipped everything on a key created just now.
        ks.remove(key);
    } else if added + changed > 0 {
        ks.notify(ZSET, if flags.incr { "zincr" } else { "zadd" }, key);
    }
    let last = result?;
    if flags.incr {
        return Ok(last.map_or(Frame::Null, Frame::Double));
    }
    Ok(Frame::Integer(if flags.ch {
        added + changed
    } else {
        added
    }))
}

/// One member of ZADD (Redis's `zsetAdd`): None when the flags skip it,
/// otherwise its new score and the previous one.
fn add_one(
    zset: &mut ZSet,
    member: &[u8],
    given: f64,
    flags: &AddFlags,
) -> Result<Option<(f64, Option<f64>)>, Frame> {
    let current = zset.score(member);
    if (flags.nx && current.is_some()) || (flags.xx && current.is_none()) {
        return Ok(None);
    }
    let score = match (flags.incr, current) {
        (true, Some(old)) => old + given,
        _ => given,
    };
    if score.is_nan() {
        return Err(err::frame(NAN_SCORE));
    }
    if let Some(old) = current {
        if (flags.gt && score <= old) || (flags.lt && score >= old) {
            return Ok(None);
        }
    }
    Ok(Some((score, zset.insert(member, score))))
}

pub fn zrem(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(Frame::Integer(0));
    };
    let zset = as_zset_mut(entry)?;
    let removed = argv[2..]
        .iter()
        .filter(|m| zset.remove(m).is_some())
        .count();
    let emptied = zset.is_empty();
    ks.after_removal(key, ZSET, "zrem", removed > 0, emptied);
    Ok(Frame::Integer(removed as i64))
}

pub fn zscore(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let score = with_zset(ctx, &argv[1], |z| z.score(&argv[2]))?.flatten();
    Ok(score.map_or(Frame::Null, Frame::Double))
}

pub fn zmscore(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let members = &argv[2..];
    let scores = with_zset(ctx, &argv[1], |z| {
        members
            .iter()
            .map(|m| z.score(m).map_or(Frame::Null, Frame::Double))
            .collect()
    })?;
    Ok(Frame::Array(
        scores.unwrap_or_else(|| vec![Frame::Null; members.len()]),
    ))
}

pub fn zcard(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let len = with_zset(ctx, &argv[1], ZSet::len)?;
    Ok(Frame::Integer(len.unwrap_or(0) as i64))
}

/// ZCOUNT key min max. The range is checked before the key, as in Redis.
pub fn zcount(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let range = parse_score_range(&argv[2], &argv[3])?;
    let count = with_zset(ctx, &argv[1], |z| z.count_in(&range))?;
    Ok(Frame::Integer(count.unwrap_or(0) as i64))
}

/// ZLEXCOUNT key min max.
pub fn zlexcount(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let range = parse_lex_range(&argv[2], &argv[3])?;
    let count = with_zset(ctx, &argv[1], |z| z.count_in(&range))?;
    Ok(Frame::Integer(count.unwrap_or(0) as i64))
}

pub fn zrank(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    rank_reply(ctx, argv, false)
}

pub fn zrevrank(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    rank_reply(ctx, argv, true)
}

fn rank_reply(ctx: &mut Ctx, argv: &[Bytes], rev: bool) -> Reply {
    let rank = with_zset(ctx, &argv[1], |z| z.rank(&argv[2], rev))?.flatten();
    Ok(rank.map_or(Frame::Null, |r| Frame::Integer(r as i64)))
}
