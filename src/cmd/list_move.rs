//! List commands that pop from one key and push to another or pick among
//! keys: LMOVE, RPOPLPUSH, LMPOP, with their cross-shard jobs.
//!
//! When the keys live on several shards the command runs as steps:
//! LMOVE checks both keys' types (a destination of another type must refuse
//! the move before anything is popped, as in Redis), pops on the source's
//! shard, then pushes on the destination's. LMPOP asks the keys' shards in
//! argument order until one pops something. The blocking commands reuse
//! [`move_job`], [`parse_mpop`] and [`mpop_job`].

use bytes::Bytes;

use super::args::{err, Reply};
use super::list::{list_exists, move_element, pop_elements, push_elements, End};
use super::{shard_of, Ctx, Session, ShardData};
use crate::exec::{Action, Job, Op, Out};
use crate::resp::Frame;
use crate::util::num::parse_i64;

/// The ends a move pops from and pushes to: RPOPLPUSH's are fixed, LMOVE
/// names them in its `wherefrom whereto` words.
fn ends_of(argv: &[Bytes]) -> Result<(End, End), Frame> {
    if argv[0].eq_ignore_ascii_case(b"rpoplpush") {
        return Ok((End::Tail, End::Head));
    }
    let from = End::parse(&argv[3]).ok_or_else(err::syntax)?;
    let to = End::parse(&argv[4]).ok_or_else(err::syntax)?;
    Ok((from, to))
}

/// LMOVE source destination LEFT|RIGHT LEFT|RIGHT, and RPOPLPUSH source
/// destination, with both keys on this shard.
pub fn lmove(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let (from, to) = ends_of(argv)?;
    let moved = move_element(ctx, &argv[1], &argv[2], from, to)?;
    Ok(moved.map_or(Frame::Null, Frame::Bulk))
}

/// LMOVE / RPOPLPUSH with the two keys on different shards.
pub fn lmove_across(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    match ends_of(argv) {
        Ok((from, to)) => move_job(
            shard.shared.nshards,
            session.db,
            argv[1].clone(),
            argv[2].clone(),
            from,
            to,
        ),
        Err(e) => Action::Reply(e),
    }
}

/// An op on `shard` that runs `f` in database `db`; its error is the answer too.
fn op_on(
    shard: usize,
    db: usize,
    f: impl FnOnce(&mut Ctx) -> Reply + Send + 'static,
) -> (usize, Op) {
    let op = move |ctx: &mut Ctx| Out::Frame(f(ctx).unwrap_or_else(|e| e));
    (shard, Op::store(db, op))
}

/// The single answer of a one-op step.
fn only_answer(mut outs: Vec<Out>) -> Frame {
    outs.pop().map_or(Frame::Null, Out::frame)
}

/// An op answering whether `key` holds a list: 1 yes, 0 missing, or WRONGTYPE.
fn list_state(shard: usize, db: usize, key: Bytes) -> (usize, Op) {
    op_on(shard, db, move |ctx| {
        list_exists(ctx, &key).map(|found| Frame::Integer(found as i64))
    })
}

/// Moves one element from `src` (on one shard) to `dst` (on another) and
/// answers it, in three steps: both types checked, pop, push. If the
/// destination changed type between the check and the push (possible until
/// key locks make the job atomic) the element goes back where it came from
/// and the reply is WRONGTYPE.
pub(crate) fn move_job(
    nshards: usize,
    db: usize,
    src: Bytes,
    dst: Bytes,
    from: End,
    to: End,
) -> Action {
    let (src_shard, dst_shard) = (shard_of(&src, nshards), shard_of(&dst, nshards));
    let checks = vec![
        list_state(src_shard, db, src.clone()),
        list_state(dst_shard, db, dst.clone()),
    ];
    Action::Job(
        Job::new(checks, move |outs| {
            let mut states = outs.into_iter().map(Out::frame);
            let (src_state, dst_state) = (states.next(), states.next());
            // Redis's order: a missing source answers nil whatever the
            // destination holds; then the source's type, then the destination's.
            match src_state {
                Some(Frame::Integer(1)) => {}
                Some(Frame::Integer(_)) => return Action::Reply(Frame::Null),
                other => return Action::Reply(other.unwrap_or(Frame::Null)),
            }
            if let Some(e @ Frame::Error(_)) = dst_state {
                return Action::Reply(e);
            }
            let popped = src.clone();
            let pop = op_on(src_shard, db, move |ctx| {
                let popped = pop_elements(ctx, &popped, from, 1)?;
                Ok(popped
                    .and_then(|p| p.into_iter().next())
                    .map_or(Frame::Null, Frame::Bulk))
            });
            Action::Job(Job::new(vec![pop], move |outs| match only_answer(outs) {
                Frame::Bulk(value) => {
                    push_step(db, (src, src_shard), (dst, dst_shard), value, (from, to))
                }
                other => Action::Reply(other),
            }))
        })
        .ordered(),
    )
}

/// The last step of [`move_job`]: push `value` on the destination's shard,
/// or put it back on the source when the destination is no longer a list.
fn push_step(
    db: usize,
    (src, src_shard): (Bytes, usize),
    (dst, dst_shard): (Bytes, usize),
    value: Bytes,
    (from, to): (End, End),
) -> Action {
    let pushed = value.clone();
    let push = op_on(dst_shard, db, move |ctx| {
        push_elements(ctx, &dst, to, [pushed], true).map(|len| Frame::Integer(len as i64))
    });
    Action::Job(Job::new(vec![push], move |outs| match only_answer(outs) {
        e @ Frame::Error(_) => {
            let restore = op_on(src_shard, db, move |ctx| {
                push_elements(ctx, &src, from, [value], true).map(|_| Frame::OK)
            });
            Action::Job(Job::new(vec![restore], move |_| Action::Reply(e)))
        }
        _ => Action::Reply(Frame::Bulk(value)),
    }))
}

/// What LMPOP (and BLMPOP) asks for.
#[derive(Debug, PartialEq)]
pub(crate) struct MpopArgs {
    /// Positions of the keys in argv.
    pub keys: std::ops::Range<usize>,
    pub end: End,
    pub count: usize,
}

/// Reads `numkeys key... LEFT|RIGHT [COUNT count]` where numkeys is at
/// `numkeys_at` (1 for LMPOP, 2 for BLMPOP), with Redis's errors: a bad or
/// non-positive numkeys or count names itself, anything else is a syntax error.
pub(crate) fn parse_mpop(argv: &[Bytes], numkeys_at: usize) -> Result<MpopArgs, Frame> {
    let positive = |arg: &[u8], error: &str| {
        parse_i64(arg)
            .filter(|&n| n > 0)
            .map(|n| n as u64)
            .ok_or_else(|| err::frame(error))
    };
    let numkeys = positive(&argv[numkeys_at], "ERR numkeys should be greater than 0")?;
    let first = numkeys_at + 1;
    let end_at = usize::try_from(numkeys)
        .ok()
        .and_then(|n| first.checked_add(n))
        .filter(|&at| at < argv.len())
        .ok_or_else(err::syntax)?;
    let end = End::parse(&argv[end_at]).ok_or_else(err::syntax)?;
    let count = match &argv[end_at + 1..] {
        [] => 1,
        [word, n] if word.eq_ignore_ascii_case(b"count") => {
            positive(n, "ERR count should be greater than 0")? as usize
        }
        _ => return Err(err::syntax()),
    };
    Ok(MpopArgs {
        keys: first..end_at,
        end,
        count,
    })
}

/// Pops up to `count` elements from `end` of the first of `keys` that holds
/// a list, in order; a missing key is passed over, a key of another type
/// answers WRONGTYPE. None when every key is missing.
pub(crate) fn pop_first(
    ctx: &mut Ctx,
    keys: &[Bytes],
    end: End,
    count: usize,
) -> Result<Option<(Bytes, Vec<Bytes>)>, Frame> {
    for key in keys {
        if let Some(popped) = pop_elements(ctx, key, end, count)? {
            return Ok(Some((key.clone(), popped)));
        }
    }
    Ok(None)
}

/// LMPOP's reply: `[key, [elements]]`, or a null array when nothing popped.
fn mpop_reply(popped: Result<Option<(Bytes, Vec<Bytes>)>, Frame>) -> Frame {
    match popped {
        Ok(Some((key, items))) => Frame::Array(vec![
            Frame::Bulk(key),
            Frame::Array(items.into_iter().map(Frame::Bulk).collect()),
        ]),
        Ok(None) => Frame::NullArray,
        Err(e) => e,
    }
}

/// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count], keys on this shard.
pub fn lmpop(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let args = parse_mpop(argv, 1)?;
    Ok(mpop_reply(pop_first(
        ctx,
        &argv[args.keys],
        args.end,
        args.count,
    )))
}

/// LMPOP with keys on several shards.
pub fn lmpop_across(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    match parse_mpop(argv, 1) {
        Ok(args) => mpop_job(
            shard.shared.nshards,
            session.db,
            &argv[args.keys],
            args.end,
            args.count,
        ),
        Err(e) => Action::Reply(e),
    }
}

/// Splits `keys` into runs of consecutive keys owned by one shard.
pub(crate) fn runs_by_shard(nshards: usize, keys: &[Bytes]) -> Vec<(usize, Vec<Bytes>)> {
    let mut runs: Vec<(usize, Vec<Bytes>)> = Vec::new();
    for key in keys {
        let owner = shard_of(key, nshards);
        match runs.last_mut() {
            Some((shard, run)) if *shard == owner => run.push(key.clone()),
            _ => runs.push((owner, vec![key.clone()])),
        }
    }
    runs
}

/// LMPOP over keys of several shards: each run of keys on one shard is
/// tried in one op, in argument order, until one pops or errs.
pub(crate) fn mpop_job(
    nshards: usize,
    db: usize,
    keys: &[Bytes],
    end: End,
    count: usize,
) -> Action {
    let mut runs = runs_by_shard(nshards, keys);
    runs.reverse(); // popped from the back in argument order
    next_run(runs, db, end, count)
}

fn next_run(mut runs: Vec<(usize, Vec<Bytes>)>, db: usize, end: End, count: usize) -> Action {
    let Some((shard, keys)) = runs.pop() else {
        return Action::Reply(Frame::NullArray);
    };
    let attempt = op_on(shard, db, move |ctx| {
        Ok(mpop_reply(pop_first(ctx, &keys, end, count)))
    });
    Action::Job(
        Job::new(vec![attempt], move |outs| match only_answer(outs) {
            Frame::NullArray => next_run(runs, db, end, count),
            reply => Action::Reply(reply),
        })
        .ordered(),
    )
}

/// LMPOP's keys (COMMAND GETKEYS, routing): numkeys at 1.
pub fn lmpop_keys(argv: &[Bytes]) -> Vec<usize> {
    super::table::numkeys_positions(argv, &[], 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_argv as argv;

    #[test]
    fn parse_mpop_follows_redis() {
        let ok = |words: &[&str]| parse_mpop(&argv(words), 1);
        assert_eq!(
            ok(&["lmpop", "2", "a", "b", "right", "COUNT", "3"]),
            Ok(MpopArgs {
                keys: 2..4,
                end: End::Tail,
                count: 3
            })
        );
        assert_eq!(
            ok(&["lmpop", "1", "a", "LEFT"]),
            Ok(MpopArgs {
                keys: 2..3,
                end: End::Head,
                count: 1
            })
        );
        let numkeys = Err(err::frame("ERR numkeys should be greater than 0"));
        assert_eq!(ok(&["lmpop", "0", "a", "left"]), numkeys);
        assert_eq!(ok(&["lmpop", "x", "a", "left"]), numkeys);
        assert_eq!(ok(&["lmpop", "2", "a", "left"]), Err(err::syntax()));
        assert_eq!(
            ok(&["lmpop", "9223372036854775807", "a", "left"]),
            Err(err::syntax())
        );
        assert_eq!(ok(&["lmpop", "1", "a", "up"]), Err(err::syntax()));
        let count = Err(err::frame("ERR count should be greater than 0"));
        assert_eq!(ok(&["lmpop", "1", "a", "left", "count", "0"]), count);
        assert_eq!(ok(&["lmpop", "1", "a", "left", "count", "x"]), count);
        assert_eq!(
            ok(&["lmpop", "1", "a", "left", "count"]),
            Err(err::syntax())
        );
        assert_eq!(
            ok(&["lmpop", "1", "a", "left", "count", "1", "count", "1"]),
            Err(err::syntax())
        );
        let blocking = parse_mpop(&argv(&["blmpop", "0", "1", "a", "left"]), 2);
        assert_eq!(blocking.map(|a| a.keys), Ok(3..4));
    }

    #[test]
    fn runs_group_neighbours_on_one_shard_only() {
        // With one shard everything is one run.
        let keys = argv(&["a", "b", "a"]);
        assert_eq!(runs_by_shard(1, &keys), vec![(0, keys.clone())]);
        // `{t}x` and `{t}y` share a shard; `{u}` may not.
        let keys = argv(&["{t}x", "{t}y", "{u}z", "{t}x"]);
        let runs = runs_by_shard(16, &keys);
        let owners: Vec<usize> = runs.iter().map(|(s, _)| *s).collect();
        let t = shard_of(b"{t}x", 16);
        let u = shard_of(b"{u}z", 16);
        assert_ne!(t, u, "the test needs two shards");
        assert_eq!(owners, vec![t, u, t]);
        assert_eq!(runs[0].1.len(), 2);
    }
}
