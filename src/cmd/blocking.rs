//! Blocking commands (BLPOP, BRPOP, ...): their arguments, the immediate
//! attempt, and what serving a waiter does with a key that received data.
//!
//! The table's handler for each of them is the immediate attempt alone: it
//! pops as the non-blocking command would and answers what the command
//! answers on timeout when nothing is there. That is all that runs inside
//! MULTI/EXEC, where Redis never blocks. Outside a transaction [`dispatch`]
//! makes the same attempt and, when it finds nothing, hands the client to the
//! shard's blocking machinery (`shard::blocking`), which registers it on the
//! keys' shards, serves it when a key gets data and answers on timeout.

use bytes::Bytes;

use super::args::{err, Reply};
use super::list::{move_element, pop_elements, End};
use super::list_move::{self, move_job, runs_by_shard};
use super::zset::pop::{self as zpop, pop_members};
use super::{lock_plan, shard_of, Ctx, Session, ShardData};
pub use crate::exec::wait::{Kind, Request, Want};
use crate::exec::{Action, Job, Need, Op, Out, Wait};
use crate::resp::Frame;
use crate::store::{zset, Value};

impl Want {
    /// The type of key this waiter is served from.
    pub fn kind(&self) -> Kind {
        match self {
            Want::Pop(_) | Want::Mpop { .. } | Want::Move { .. } => Kind::List,
            Want::ZPop(_) | Want::ZMpop { .. } => Kind::ZSet,
            Want::XRead(_) => Kind::Stream,
        }
    }

    /// Takes what the command takes from `key` and builds its reply. None
    /// when the key is missing; WRONGTYPE when it (or BLMOVE's destination)
    /// holds another type. What it took is recorded for the feed in the
    /// command's non-blocking form (`propagate::served`), however the
    /// waiter was served.
    pub fn take_from(&self, ctx: &mut Ctx, key: &Bytes) -> Result<Option<Frame>, Frame> {
        let reply = self.take(ctx, key)?;
        if let Some(frame) = &reply {
            if ctx.recording() {
                if let Some(record) = super::propagate::served(self, key, frame) {
                    ctx.propagate_as(record);
                }
            }
        }
        Ok(reply)
    }

    fn take(&self, ctx: &mut Ctx, key: &Bytes) -> Result<Option<Frame>, Frame> {
        let with_key = |value: Frame| Frame::Array(vec![Frame::Bulk(key.clone()), value]);
        Ok(match self {
            Want::Pop(end) => pop_elements(ctx, key, *end, 1)?
                .and_then(|popped| popped.into_iter().next())
                .map(|element| with_key(Frame::Bulk(element))),
            Want::Mpop { end, count } => pop_elements(ctx, key, *end, *count)?.map(|popped| {
                with_key(Frame::Array(popped.into_iter().map(Frame::Bulk).collect()))
            }),
            Want::Move { dst, from, to, .. } => {
                move_element(ctx, key, dst, *from, *to)?.map(Frame::Bulk)
            }
            Want::ZPop(end) => pop_members(ctx, key, *end, 1)?
                .and_then(|popped| popped.into_iter().next())
                .map(|(member, score)| {
                    Frame::Array(vec![
                        Frame::Bulk(key.clone()),
                        Frame::Bulk(member),
                        Frame::Double(score),
                    ])
                }),
            Want::ZMpop { end, count } => pop_members(ctx, key, *end, *count)?
                .map(|popped| zpop::mpop_reply(key.clone(), popped)),
            Want::XRead(read) => super::stream::read::serve_blocked(ctx, read, key)?,
        })
    }

    /// What the immediate attempt answers when every key is empty (inside
    /// MULTI): BLMOVE and BRPOPLPUSH a null bulk, the others a null array.
    pub fn nothing(&self) -> Frame {
        match self {
            Want::Move { .. } => Frame::Null,
            _ => Frame::NullArray,
        }
    }

    /// How many elements it takes at most when served.
    pub fn takes(&self) -> usize {
        match self {
            Want::Mpop { count, .. } | Want::ZMpop { count, .. } => *count,
            // Reading a stream takes nothing from it: every reader may go.
            Want::XRead(_) => 0,
            _ => 1,
        }
    }

    /// The key written besides the waited ones (BLMOVE's destination).
    fn destination(&self) -> Option<&Bytes> {
        match self {
            Want::Move { dst, .. } => Some(dst),
            _ => None,
        }
    }
}

/// What a client blocked by a timeout or `CLIENT UNBLOCK ... TIMEOUT` gets:
/// a null array for every blocking command (`*-1` in RESP2, `_` in RESP3).
pub const TIMEOUT_REPLY: Frame = Frame::NullArray;

/// Whether an attempt's reply means "nothing there yet".
pub fn is_nothing(frame: &Frame) -> bool {
    matches!(frame, Frame::Null | Frame::NullArray)
}

impl Request {
    /// Every key the command touches: the waited ones and a destination.
    fn all_keys(&self) -> impl Iterator<Item = &Bytes> {
        self.keys.iter().chain(self.want.destination())
    }

    /// The shard every key of the command lives on, if they share one.
    pub fn home_shard(&self, nshards: usize) -> Option<usize> {
        let mut shards = self.all_keys().map(|k| shard_of(k, nshards));
        let first = shards.next()?;
        shards.all(|s| s == first).then_some(first)
    }

    /// The waited keys grouped by owning shard, shards in first-seen order.
    pub fn keys_by_shard(&self, nshards: usize) -> Vec<(usize, Vec<Bytes>)> {
        let mut groups: Vec<(usize, Vec<Bytes>)> = Vec::new();
        for key in &self.keys {
            let s = shard_of(key, nshards);
            match groups.iter_mut().find(|(g, _)| *g == s) {
                Some((_, keys)) => keys.push(key.clone()),
                None => groups.push((s, vec![key.clone()])),
            }
        }
        groups
    }
}

/// Reads a blocking command's arguments. Structural errors come before the
/// timeout's, in Redis's order.
pub fn parse(argv: &[Bytes], db: usize, now_ms: u64) -> Result<Request, Frame> {
    let name = argv[0].to_ascii_lowercase();
    let last = argv.len() - 1;
    let end_at = |i: usize| End::parse(&argv[i]).ok_or_else(err::syntax);
    let (keys, want, timeout_at) = match name.as_slice() {
        b"blpop" => (&argv[1..last], Want::Pop(End::Head), last),
        b"brpop" => (&argv[1..last], Want::Pop(End::Tail), last),
        b"blmove" | b"brpoplpush" => {
            let (from, to) = if name == b"blmove" {
                (end_at(3)?, end_at(4)?)
            } else {
                (End::Tail, End::Head)
            };
            let dst = argv[2].clone();
            let rpoplpush = name == b"brpoplpush";
            (
                &argv[1..2],
                Want::Move {
                    dst,
                    from,
                    to,
                    rpoplpush,
                },
                last,
            )
        }
        b"blmpop" => {
            let args = list_move::parse_mpop(argv, 2)?;
            let want = Want::Mpop {
                end: args.end,
                count: args.count,
            };
            (&argv[args.keys], want, 1)
        }
        b"bzpopmin" => (&argv[1..last], Want::ZPop(zset::End::Min), last),
        b"bzpopmax" => (&argv[1..last], Want::ZPop(zset::End::Max), last),
        b"bzmpop" => {
            let args = zpop::parse_mpop(argv, 2)?;
            let want = Want::ZMpop {
                end: args.end,
                count: args.count,
            };
            let timeout = timeout_ms(&argv[1])?;
            return Ok(request(args.keys, want, db, now_ms, timeout));
        }
        _ => return Err(err::frame("ERR unknown blocking command")),
    };
    let timeout = timeout_ms(&argv[timeout_at])?;
    Ok(request(keys.to_vec(), want, db, now_ms, timeout))
}

fn request(keys: Vec<Bytes>, want: Want, db: usize, now_ms: u64, timeout: u64) -> Request {
    Request {
        keys,
        want,
        db,
        deadline_ms: (timeout > 0).then(|| now_ms.saturating_add(timeout)),
    }
}

/// A timeout in seconds (a double, 0 = forever) as milliseconds, rounded
/// up as Redis 7.0 does, in `long double` as Redis computes it, with its
/// errors. Values whose milliseconds do not fit a signed 64-bit integer
/// (infinity included) are "negative" there, because the conversion wraps;
/// a tiny positive value is 1 ms. One that fits but whose deadline does not
/// (9223372036854775 s) blocks for good, as in Redis 7.0.
pub fn timeout_ms(arg: &[u8]) -> Result<u64, Frame> {
    let seconds = crate::util::longdouble::LongDouble::parse(arg)
        .ok_or_else(|| err::frame("ERR timeout is not a float or out of range"))?;
    seconds
        .seconds_to_ms()
        .ok_or_else(|| err::frame("ERR timeout is negative"))
}

/// The immediate attempt: the first key that exists decides (popped from, or
/// WRONGTYPE); None when every key is missing.
pub fn attempt(ctx: &mut Ctx, keys: &[Bytes], want: &Want) -> Result<Option<Frame>, Frame> {
    for key in keys {
        if let Some(reply) = want.take_from(ctx, key)? {
            return Ok(Some(reply));
        }
    }
    Ok(None)
}

/// The table's handler for every blocking command: the immediate attempt,
/// answering the command's "nothing" reply instead of blocking.
pub fn immediate(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let req = parse(argv, ctx.db, ctx.now_ms())?;
    Ok(attempt(ctx, &req.keys, &req.want)?.unwrap_or_else(|| req.want.nothing()))
}

/// What `key` holds and how many elements, when it is a type some waiter
/// can be served from. None for a missing key or another type: nobody can
/// be served from it.
pub fn holding(ctx: &mut Ctx, key: &[u8]) -> Option<(Kind, usize)> {
    match &ctx.ks().peek(key)?.value {
        Value::List(l) => Some((Kind::List, l.len())),
        Value::ZSet(z) => Some((Kind::ZSet, z.len())),
        // Readers take nothing, so every waiter of a stream is tried.
        Value::Stream(_) => Some((Kind::Stream, usize::MAX)),
        _ => None,
    }
}

/// What a waiter gets when the key it waits on is gone or holds another
/// type: a blocked XREADGROUP an error, as Redis 7.0 answers it; the
/// others keep waiting.
pub fn gone_reply(want: &Want) -> Option<Frame> {
    match want {
        Want::XRead(read) if read.group.is_some() => {
            Some(err::frame(super::stream::read::STREAM_GONE))
        }
        _ => None,
    }
}

/// A blocking command outside a transaction. With every key on this shard
/// (and no transaction holding keys here) the attempt runs at once and only
/// a miss involves the blocking machinery, which makes the attempt on the
/// keys' shards, registering the client there in the same step so no write
/// in between is missed.
pub fn dispatch(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let req = match parse(argv, session.db, shard.now_ms) {
        Ok(req) => req,
        Err(e) => return Action::Reply(e),
    };
    if req.home_shard(shard.shared.nshards) == Some(shard.id) && shard.locks.is_idle() {
        match attempt(&mut Ctx::new(shard, session.db), &req.keys, &req.want) {
            Ok(Some(reply)) | Err(reply) => return Action::Reply(reply),
            Ok(None) => {}
        }
    }
    Action::Block(Box::new(Wait::Start(req)))
}

/// BLMPOP's and BZMPOP's keys (routing, COMMAND GETKEYS): numkeys at 2.
pub fn numkeys_at_2(argv: &[Bytes]) -> Vec<usize> {
    super::table::numkeys_positions(argv, &[], 2)
}

/// The table's split for keys on several shards, inside a transaction
/// (which holds their locks): the immediate attempt across shards.
pub fn across(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    match parse(argv, session.db, shard.now_ms) {
        Ok(req) => attempt_across(shard.shared.nshards, &req),
        Err(e) => Action::Reply(e),
    }
}

/// The immediate attempt over keys of several shards, as a job answering
/// the command's reply, or its "nothing" reply when every key was empty.
/// BLMOVE is LMOVE's job, under the locks of both keys so it is atomic.
/// The pops try each run of consecutive keys owned by one shard in one op,
/// in argument order, until one answers: one pop at most is ever made.
pub fn attempt_across(nshards: usize, req: &Request) -> Action {
    if let Want::Move { dst, from, to, .. } = &req.want {
        let src = req.keys[0].clone();
        let plan = lock_plan(req.db, nshards, req.all_keys().cloned());
        return match move_job(nshards, req.db, src, dst.clone(), *from, *to) {
            Action::Job(job) => Action::Job(job.locked(plan)),
            other => other,
        };
    }
    let mut runs = runs_by_shard(nshards, &req.keys);
    runs.reverse(); // taken from the back, in argument order
    next_run(runs, req.db, req.want.clone())
}

fn next_run(mut runs: Vec<(usize, Vec<Bytes>)>, db: usize, want: Want) -> Action {
    let Some((shard, keys)) = runs.pop() else {
        return Action::Reply(want.nothing());
    };
    let tried = want.clone();
    // The op waits behind a transaction holding these keys.
    let need = Need::keys(db, keys.iter().cloned());
    let op = Op::Store(
        db,
        need,
        Box::new(move |ctx: &mut Ctx| {
            Out::Frame(match attempt(ctx, &keys, &tried) {
                Ok(Some(reply)) | Err(reply) => reply,
                Ok(None) => tried.nothing(),
            })
        }),
    );
    Action::Job(
        Job::new(vec![(shard, op)], move |mut outs| {
            match outs.pop().map_or_else(|| want.nothing(), Out::frame) {
                reply if is_nothing(&reply) => next_run(runs, db, want),
                reply => Action::Reply(reply),
            }
        })
        .ordered(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(words: &str) -> Result<Request, Frame> {
        let argv: Vec<Bytes> = words
            .split(' ')
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        parse(&argv, 3, 1_000)
    }

    fn keys(req: &Request) -> Vec<&[u8]> {
        req.keys.iter().map(|k| k.as_ref()).collect()
    }

    #[test]
    fn requests_name_their_keys_want_and_deadline() {
        let req = parsed("BLPOP a b 0.5").unwrap();
        assert_eq!(keys(&req), vec![&b"a"[..], b"b"]);
        assert!(matches!(req.want, Want::Pop(End::Head)));
        assert_eq!((req.db, req.deadline_ms), (3, Some(1_500)));
        let req = parsed("brpoplpush src dst 0").unwrap();
        assert_eq!(
            keys(&req),
            vec![&b"src"[..]],
            "the destination is not waited on"
        );
        assert!(matches!(
            req.want,
            Want::Move {
                from: End::Tail,
                to: End::Head,
                ..
            }
        ));
        assert_eq!(req.deadline_ms, None, "0 waits forever");
        let req = parsed("BLMPOP 1 2 a b RIGHT COUNT 3").unwrap();
        assert_eq!(keys(&req), vec![&b"a"[..], b"b"]);
        assert!(matches!(
            req.want,
            Want::Mpop {
                end: End::Tail,
                count: 3
            }
        ));
        assert_eq!(req.deadline_ms, Some(2_000));
        let req = parsed("BZMPOP 0 1 z MAX").unwrap();
        assert!(matches!(
            req.want,
            Want::ZMpop {
                end: zset::End::Max,
                count: 1
            }
        ));
        assert_eq!(req.want.takes(), 1);
        assert!(matches!(
            parsed("BZPOPMIN z 0").unwrap().want,
            Want::ZPop(zset::End::Min)
        ));
    }

    #[test]
    fn argument_errors_come_before_the_timeout_error() {
        let text = |r: Result<Request, Frame>| match r {
            Err(Frame::Error(t)) => t,
            other => panic!("{other:?}"),
        };
        assert_eq!(text(parsed("BLMOVE a b UP LEFT x")), "ERR syntax error");
        assert_eq!(
            text(parsed("BLMPOP x 0 k LEFT")),
            "ERR numkeys should be greater than 0"
        );
        assert_eq!(text(parsed("BZMPOP x 1 k LEFT")), "ERR syntax error");
        assert_eq!(
            text(parsed("BLMPOP x 1 k LEFT")),
            "ERR timeout is not a float or out of range"
        );
    }

    #[test]
    fn a_move_lives_where_both_its_keys_do() {
        let one = parsed("BLMOVE {t}a {t}b LEFT LEFT 0").unwrap();
        assert!(one.home_shard(4).is_some());
        let dst = (0..)
            .map(|i| format!("b{i}"))
            .find(|k| shard_of(k.as_bytes(), 4) != shard_of(b"a", 4))
            .unwrap();
        let apart = parsed(&format!("BLMOVE a {dst} LEFT LEFT 0")).unwrap();
        assert_eq!(apart.home_shard(4), None, "the destination counts");
        assert_eq!(
            apart.keys_by_shard(4).len(),
            1,
            "registered on the source only"
        );
    }

    fn timeout(s: &str) -> Result<u64, String> {
        timeout_ms(s.as_bytes()).map_err(|e| match e {
            Frame::Error(t) => t,
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn timeouts_follow_redis_7_0() {
        assert_eq!(timeout("0"), Ok(0));
        assert_eq!(timeout("-0"), Ok(0));
        assert_eq!(timeout("1"), Ok(1000));
        assert_eq!(timeout("0.1"), Ok(100));
        assert_eq!(timeout("0.0001"), Ok(1), "rounded up to a millisecond");
        assert_eq!(timeout("1e-400"), Ok(1), "tiny but positive");
        assert_eq!(timeout("-1e-400"), Ok(0), "rounds up to zero: forever");
        assert_eq!(timeout("1e10"), Ok(10_000_000_000_000));
        let negative = Err("ERR timeout is negative".to_string());
        assert_eq!(timeout("-1"), negative);
        assert_eq!(timeout("-0.5"), negative);
        assert_eq!(timeout("inf"), negative, "wraps when converted");
        assert_eq!(timeout("1e16"), negative);
        assert_eq!(timeout("1e400"), negative);
        assert_eq!(timeout("9223372036854776"), negative);
        assert_eq!(
            timeout("9223372036854775"),
            Ok(9_223_372_036_854_775_000),
            "fits in long double arithmetic"
        );
        let not_float = Err("ERR timeout is not a float or out of range".to_string());
        assert_eq!(timeout("abc"), not_float);
        assert_eq!(timeout("nan"), not_float);
        assert_eq!(timeout(" 1"), not_float);
        assert_eq!(timeout(""), not_float);
    }
}
