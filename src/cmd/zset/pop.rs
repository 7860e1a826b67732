//! ZPOPMIN, ZPOPMAX and ZMPOP, and the pop primitive the blocking forms
//! (BZPOPMIN, BZPOPMAX, BZMPOP) share.

use bytes::Bytes;

use super::super::args::{err, int_arg, positive_count, Reply};
use super::super::{shard_of, Ctx, Session, ShardData};
use super::as_zset_mut;
use crate::exec::{Action, Job, Need, Op, Out};
use crate::resp::Frame;
use crate::store::notify::ZSET;
use crate::store::zset::End;
use crate::store::Value;

/// Pops up to `count` members from `key`'s `end` (lowest first for Min,
/// highest first for Max), firing `zpopmin`/`zpopmax` and, when the set
/// empties, `del`. None when the key is missing; count 0 pops nothing and
/// fires nothing.
pub(crate) fn pop_members(
    ctx: &mut Ctx,
    key: &[u8],
    end: End,
    count: usize,
) -> Result<Option<Vec<(Bytes, f64)>>, Frame> {
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(None);
    };
    let zset = as_zset_mut(entry)?;
    let popped = zset.pop(end, count);
    let emptied = zset.is_empty();
    let event = match end {
        End::Min => "zpopmin",
        End::Max => "zpopmax",
    };
    ks.after_removal(key, ZSET, event, !popped.is_empty(), emptied);
    Ok(Some(popped))
}

/// [member, score] pairs nested in both protocols (ZMPOP's reply).
fn nested_pairs(popped: Vec<(Bytes, f64)>) -> Frame {
    Frame::Array(
        popped
            .into_iter()
            .map(|(m, s)| Frame::Array(vec![Frame::Bulk(m), Frame::Double(s)]))
            .collect(),
    )
}

pub fn zpopmin(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    zpop(ctx, argv, End::Min)
}

pub fn zpopmax(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    zpop(ctx, argv, End::Max)
}

/// ZPOPMIN/ZPOPMAX key [count]. Without a count the reply is one flat
/// [member, score]; with one, pairs (nested in RESP3).
fn zpop(ctx: &mut Ctx, argv: &[Bytes], end: End) -> Reply {
    if argv.len() > 3 {
        return Err(err::syntax());
    }
    let count = argv.get(2).map(|c| positive_count(c)).transpose()?;
    let popped = pop_members(ctx, &argv[1], end, count.unwrap_or(1))?.unwrap_or_default();
    Ok(match count {
        Some(_) => super::members_reply(popped, true),
        None => Frame::Array(
            popped
                .into_iter()
                .flat_map(|(m, s)| [Frame::Bulk(m), Frame::Double(s)])
                .collect(),
        ),
    })
}

/// ZMPOP's (and BZMPOP's) keys and options.
pub(crate) struct MpopArgs {
    pub keys: Vec<Bytes>,
    pub end: End,
    pub count: usize,
}

/// `numkeys key [key ...] MIN|MAX [COUNT count]` with numkeys at
/// `numkeys_at` (1 for ZMPOP, 2 for BZMPOP), checked as Redis does.
pub(crate) fn parse_mpop(argv: &[Bytes], numkeys_at: usize) -> Result<MpopArgs, Frame> {
    let positive = |b: &[u8], what: &str| {
        int_arg(b)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| err::frame(&format!("ERR {what} should be greater than 0")))
    };
    let numkeys = positive(&argv[numkeys_at], "numkeys")? as u64;
    let first = numkeys_at + 1;
    let where_at = (first as u64).saturating_add(numkeys);
    if where_at >= argv.len() as u64 {
        return Err(err::syntax());
    }
    let where_at = where_at as usize;
    let end = match argv[where_at].to_ascii_uppercase().as_slice() {
        b"MIN" => End::Min,
        b"MAX" => End::Max,
        _ => return Err(err::syntax()),
    };
    let mut count = None;
    let mut j = where_at + 1;
    while j < argv.len() {
        if count.is_none() && argv[j].eq_ignore_ascii_case(b"COUNT") && j + 1 < argv.len() {
            count = Some(positive(&argv[j + 1], "count")? as usize);
            j += 2;
        } else {
            return Err(err::syntax());
        }
    }
    Ok(MpopArgs {
        keys: argv[first..where_at].to_vec(),
        end,
        count: count.unwrap_or(1),
    })
}

/// ZMPOP's reply: `[key, [[member, score], ...]]`.
pub(crate) fn mpop_reply(key: Bytes, popped: Vec<(Bytes, f64)>) -> Frame {
    Frame::Array(vec![Frame::Bulk(key), nested_pairs(popped)])
}

/// ZMPOP with every key on this shard: pops from the first key that exists.
pub fn zmpop(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let args = parse_mpop(argv, 1)?;
    for key in args.keys {
        if let Some(popped) = pop_members(ctx, &key, args.end, args.count)? {
            return Ok(mpop_reply(key, popped));
        }
    }
    Ok(Frame::NullArray)
}

/// What a key holds, for ZMPOP's choice of key.
fn presence(ctx: &mut Ctx, key: &[u8]) -> i64 {
    match ctx.ks().get(key).map(|e| &e.value) {
        None => 0,
        Some(Value::ZSet(_)) => 1,
        Some(_) => 2,
    }
}

/// ZMPOP with keys on several shards: ask every key's shard what it holds,
/// then pop on the shard of the first key that exists.
pub fn zmpop_job(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    match parse_mpop(argv, 1) {
        Ok(args) => mpop_step(shard.shared.nshards, session.db, args),
        Err(e) => Action::Reply(e),
    }
}

fn mpop_step(nshards: usize, db: usize, args: MpopArgs) -> Action {
    let checks = args
        .keys
        .iter()
        .map(|key| {
            let owner = shard_of(key, nshards);
            let key = key.clone();
            let op = Op::Store(
                db,
                Need::Whole,
                Box::new(move |ctx: &mut Ctx| Out::Count(presence(ctx, &key))),
            );
            (owner, op)
        })
        .collect();
    Action::Job(
        Job::new(checks, move |outs| {
            let Some(first) = outs.iter().position(|o| o.count() != 0) else {
                return Action::Reply(Frame::NullArray);
            };
            if outs[first].count() == 2 {
                return Action::Reply(err::wrongtype());
            }
            let key = args.keys[first].clone();
            let (end, count) = (args.end, args.count);
            let pop_key = key.clone();
            let pop = Op::Store(
                db,
                Need::Whole,
                Box::new(
                    move |ctx: &mut Ctx| match pop_members(ctx, &pop_key, end, count) {
                        Ok(Some(popped)) => Out::Frame(mpop_reply(pop_key, popped)),
                        Ok(None) => Out::Frame(Frame::NullArray),
                        Err(e) => Out::Frame(e),
                    },
                ),
            );
            Action::Job(Job::new(
                vec![(shard_of(&key, nshards), pop)],
                move |mut outs| match outs.pop().map(Out::frame) {
                    // The key went away between the two steps: look again.
                    Some(Frame::NullArray) => mpop_step(nshards, db, args),
                    Some(reply) => Action::Reply(reply),
                    None => Action::Reply(Frame::NullArray),
                },
            ))
        })
        .ordered(),
    )
}
