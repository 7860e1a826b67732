//! Sorted-set commands (the delayed-job queue's ZADD / ZRANGEBYSCORE / ZREM,
//! plus ZSCORE and ZCARD). The remaining ones come with the data-types work.

use bytes::Bytes;

use super::args::{err, int_arg, Reply};
use super::Ctx;
use crate::resp::Frame;
use crate::store::notify::ZSET;
use crate::store::zset::{ScoreBound, ZSet};
use crate::store::{Entry, Value};
use crate::util::num::parse_f64;

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

pub fn zadd(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut flags = AddFlags::default();
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
    if flags.nx && flags.xx {
        return Err(err::frame(
            "ERR XX and NX options at the same time are not compatible",
        ));
    }
    // At most one of GT, LT and NX.
    if [flags.gt, flags.lt, flags.nx]
        .iter()
        .filter(|f| **f)
        .count()
        > 1
    {
        return Err(err::frame(
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if flags.incr && pairs.len() > 2 {
        return Err(err::frame(
            "ERR INCR option supports a single increment-element pair",
        ));
    }
    // Every score is checked before anything changes, as Redis does.
    let scores = pairs
        .chunks_exact(2)
        .map(|p| parse_f64(&p[0]).ok_or_else(|| err::frame(err::NOT_FLOAT)))
        .collect::<Result<Vec<f64>, Frame>>()?;
    let key = &argv[1];
    let mut ks = ctx.ks();
    if let Some(entry) = ks.get(key) {
        as_zset(entry)?;
    } else if flags.xx {
        return Ok(if flags.incr {
            Frame::Null
        } else {
            Frame::Integer(0)
        });
    } else {
        ks.set(key, Value::ZSet(Box::default()), None);
    }
    let zset = as_zset_mut(ks.get(key).expect("present"))?;
    let (mut added, mut changed) = (0, 0);
    let mut incr_result = None;
    for (pair, &given) in pairs.chunks_exact(2).zip(&scores) {
        let member = &pair[1];
        let current = zset.score(member);
        if (flags.nx && current.is_some()) || (flags.xx && current.is_none()) {
            continue;
        }
        let score = match (flags.incr, current) {
            (true, Some(old)) => old + given,
            _ => given,
        };
        if score.is_nan() {
            return Err(err::frame("ERR resulting score is not a number (NaN)"));
        }
        if let Some(old) = current {
            if (flags.gt && score <= old) || (flags.lt && score >= old) {
                continue;
            }
        }
        match zset.insert(member, score) {
            None => added += 1,
            Some(old) if old != score => changed += 1,
            Some(_) => {}
        }
        incr_result = Some(score);
    }
    let emptied = zset.is_empty();
    if emptied {
        // NX/XX skipped everything on a key created just now.
        ks.remove(key);
    } else if added + changed > 0 {
        ks.notify(ZSET, if flags.incr { "zincr" } else { "zadd" }, key);
    }
    if flags.incr {
        return Ok(incr_result.map_or(Frame::Null, Frame::Double));
    }
    Ok(Frame::Integer(if flags.ch {
        added + changed
    } else {
        added
    }))
}

pub fn zrem(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(Frame::Integer(0));
    };
    let zset = as_zset_mut(entry)?;
    let removed = argv[2..].iter().filter(|m| zset.remove(m)).count();
    let emptied = zset.is_empty();
    ks.after_removal(key, ZSET, "zrem", removed > 0, emptied);
    Ok(Frame::Integer(removed as i64))
}

pub fn zscore(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    Ok(match ctx.ks().read(&argv[1]) {
        Some(entry) => as_zset(entry)?
            .score(&argv[2])
            .map_or(Frame::Null, Frame::Double),
        None => Frame::Null,
    })
}

pub fn zcard(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    Ok(Frame::Integer(match ctx.ks().read(&argv[1]) {
        Some(entry) => as_zset(entry)?.len() as i64,
        None => 0,
    }))
}

pub fn zrangebyscore(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let bad_range = || err::frame("ERR min or max is not a float");
    let min = ScoreBound::parse(&argv[2]).ok_or_else(bad_range)?;
    let max = ScoreBound::parse(&argv[3]).ok_or_else(bad_range)?;
    let (mut with_scores, mut offset, mut limit) = (false, 0usize, None);
    let mut i = 4;
    while i < argv.len() {
        let word = argv[i].to_ascii_uppercase();
        if word == b"WITHSCORES" {
            with_scores = true;
            i += 1;
        } else if word == b"LIMIT" && i + 2 < argv.len() {
            let (o, c) = (int_arg(&argv[i + 1])?, int_arg(&argv[i + 2])?);
            if o < 0 {
                return Ok(Frame::Array(Vec::new()));
            }
            offset = o as usize;
            limit = (c >= 0).then_some(c as usize);
            i += 3;
        } else {
            return Err(err::syntax());
        }
    }
    let mut ks = ctx.ks();
    let Some(entry) = ks.read(&argv[1]) else {
        return Ok(Frame::Array(Vec::new()));
    };
    let found = as_zset(entry)?.range_by_score(min, max, offset, limit);
    Ok(if with_scores {
        Frame::Pairs(
            found
                .into_iter()
                .map(|(m, s)| (Frame::Bulk(m), Frame::Double(s)))
                .collect(),
        )
    } else {
        Frame::Array(found.into_iter().map(|(m, _)| Frame::Bulk(m)).collect())
    })
}
