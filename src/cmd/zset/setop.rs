//! ZUNION, ZINTER, ZDIFF, ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE and
//! ZINTERCARD, after Redis's `zunionInterDiffGenericCommand`.
//!
//! Plain sets count as inputs whose members all score 1. The computation
//! ([`evaluate`]) reads borrowed inputs, so it serves both paths: the local
//! one borrows them from this shard's keyspace, the cross-shard one from
//! copies gathered from the keys' shards. A STORE result is then written on
//! the destination's shard.

use std::collections::HashMap;

use ahash::RandomState;
use bytes::Bytes;

use super::super::args::{err, int_arg, Reply};
use super::super::{shard_of, Ctx, Session, ShardData};
use super::{members_reply, store_result};
use crate::exec::{Action, Job, Need, Op, Out};
use crate::resp::Frame;
use crate::store::value::Set;
use crate::store::zset::ZSet;
use crate::store::Value;
use crate::util::num::parse_f64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum SetOp {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    /// Redis's `zunionInterAggregate`: a sum of +inf and -inf counts as 0,
    /// and MIN/MAX keep the target when the value is NaN.
    fn apply(self, target: &mut f64, value: f64) {
        match self {
            Aggregate::Sum => {
                *target += value;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            Aggregate::Min => {
                if value < *target {
                    *target = value;
                }
            }
            Aggregate::Max => {
                if value > *target {
                    *target = value;
                }
            }
        }
    }
}

/// Which command of the family, from its name.
#[derive(Clone, Copy)]
struct Form {
    op: SetOp,
    /// The STORE forms: destination at 1, numkeys at 2.
    store: bool,
    /// ZINTERCARD: count only, LIMIT allowed.
    card_only: bool,
}

impl Form {
    fn of(name: &[u8]) -> Form {
        let name = name.to_ascii_lowercase();
        let op = if name.starts_with(b"zunion") {
            SetOp::Union
        } else if name.starts_with(b"zinter") {
            SetOp::Inter
        } else {
            SetOp::Diff
        };
        Form {
            op,
            store: name.ends_with(b"store"),
            card_only: name == b"zintercard",
        }
    }

    fn numkeys_at(self) -> usize {
        if self.store {
            2
        } else {
            1
        }
    }

    /// The event a non-empty STORE result fires.
    fn event(self) -> &'static str {
        match self.op {
            SetOp::Union => "zunionstore",
            SetOp::Inter => "zinterstore",
            SetOp::Diff => "zdiffstore",
        }
    }
}

/// The options after the keys.
struct Options {
    weights: Vec<f64>,
    aggregate: Aggregate,
    with_scores: bool,
    /// ZINTERCARD's LIMIT; 0: none.
    limit: usize,
}

/// The number of input keys, checked as Redis does before anything else.
fn parse_numkeys(argv: &[Bytes], form: Form) -> Result<usize, Frame> {
    let at = form.numkeys_at();
    let n = int_arg(&argv[at])?;
    if n < 1 {
        return Err(Frame::Error(format!(
            "ERR at least 1 input key is needed for '{}' command",
            String::from_utf8_lossy(&argv[0]).to_ascii_lowercase()
        )));
    }
    if n as u64 > (argv.len() - at - 1) as u64 {
        return Err(err::syntax());
    }
    Ok(n as usize)
}

/// The options following `n` keys. Redis reads them only once every input
/// has passed its type check.
fn parse_options(argv: &[Bytes], form: Form, n: usize) -> Result<Options, Frame> {
    let mut opts = Options {
        weights: vec![1.0; n],
        aggregate: Aggregate::Sum,
        with_scores: false,
        limit: 0,
    };
    let scored = form.op != SetOp::Diff && !form.card_only;
    let mut j = form.numkeys_at() + 1 + n;
    while j < argv.len() {
        let word = argv[j].as_ref();
        let left = argv.len() - j;
        if scored && left > n && word.eq_ignore_ascii_case(b"WEIGHTS") {
            for (w, arg) in opts.weights.iter_mut().zip(&argv[j + 1..]) {
                *w = parse_f64(arg).ok_or_else(|| err::frame("ERR weight value is not a float"))?;
            }
            j += 1 + n;
        } else if scored && left >= 2 && word.eq_ignore_ascii_case(b"AGGREGATE") {
            opts.aggregate = match argv[j + 1].to_ascii_uppercase().as_slice() {
                b"SUM" => Aggregate::Sum,
                b"MIN" => Aggregate::Min,
                b"MAX" => Aggregate::Max,
                _ => return Err(err::syntax()),
            };
            j += 2;
        } else if !form.store && !form.card_only && word.eq_ignore_ascii_case(b"WITHSCORES") {
            opts.with_scores = true;
            j += 1;
        } else if form.card_only && left >= 2 && word.eq_ignore_ascii_case(b"LIMIT") {
            let limit = int_arg(&argv[j + 1])
                .ok()
                .and_then(|l| usize::try_from(l).ok())
                .ok_or_else(|| err::frame("ERR LIMIT can't be negative"))?;
            opts.limit = limit;
            j += 2;
        } else {
            return Err(err::syntax());
        }
    }
    Ok(opts)
}

/// One input: a sorted set or a plain set (every member scoring 1).
/// A missing key is an empty input.
#[derive(Clone, Copy)]
enum Input<'a> {
    Missing,
    Sorted(&'a ZSet),
    Plain(&'a Set),
}

impl<'a> Input<'a> {
    /// Views a stored value; WRONGTYPE unless it is a set of either kind.
    fn of(value: Option<&'a Value>) -> Result<Input<'a>, Frame> {
        match value {
            None => Ok(Input::Missing),
            Some(Value::ZSet(z)) => Ok(Input::Sorted(z)),
            Some(Value::Set(s)) => Ok(Input::Plain(s)),
            Some(_) => Err(err::wrongtype()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Input::Missing => 0,
            Input::Sorted(z) => z.len(),
            Input::Plain(s) => s.len(),
        }
    }

    fn score(&self, member: &[u8]) -> Option<f64> {
        match self {
            Input::Missing => None,
            Input::Sorted(z) => z.score(member),
            Input::Plain(s) => s.contains(member).then_some(1.0),
        }
    }

    fn members(&self) -> Box<dyn Iterator<Item = (&'a Bytes, f64)> + 'a> {
        match *self {
            Input::Missing => Box::new(std::iter::empty()),
            Input::Sorted(z) => Box::new(z.iter()),
            Input::Plain(s) => Box::new(s.iter().map(|m| (m, 1.0))),
        }
    }
}

/// A weighted score; NaN (0 times infinity) counts as 0, as in Redis.
fn weighted(score: f64, weight: f64) -> f64 {
    let w = score * weight;
    if w.is_nan() {
        0.0
    } else {
        w
    }
}

/// The members of every input with their aggregated weighted scores.
/// Inputs are visited smallest first, as Redis sums them.
fn union(inputs: &[(Input, f64)], aggregate: Aggregate) -> Vec<(Bytes, f64)> {
    let mut acc: HashMap<&Bytes, f64, RandomState> = HashMap::default();
    for (input, weight) in inputs {
        for (member, score) in input.members() {
            let score = weighted(score, *weight);
            acc.entry(member)
                .and_modify(|t| aggregate.apply(t, score))
                .or_insert(score);
        }
    }
    acc.into_iter().map(|(m, s)| (m.clone(), s)).collect()
}

/// The members of the smallest input found in all the others, stopping
/// after `limit` (0: none). Redis weighs the other inputs' scores without
/// the NaN rule, so only the aggregate sees their NaN.
fn intersection(inputs: &[(Input, f64)], aggregate: Aggregate, limit: usize) -> Vec<(Bytes, f64)> {
    let Some(((smallest, weight), others)) = inputs.split_first() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    'members: for (member, score) in smallest.members() {
        let mut total = weighted(score, *weight);
        for (input, weight) in others {
            match input.score(member) {
                Some(s) => aggregate.apply(&mut total, s * weight),
                None => continue 'members,
            }
        }
        found.push((member.clone(), total));
        if found.len() == limit {
            break;
        }
    }
    found
}

/// The members of the first input in none of the others, with its scores.
fn difference(inputs: &[Input]) -> Vec<(Bytes, f64)> {
    let Some((first, others)) = inputs.split_first() else {
        return Vec::new();
    };
    first
        .members()
        .filter(|(m, _)| others.iter().all(|o| o.score(m).is_none()))
        .map(|(m, s)| (m.clone(), s))
        .collect()
}

/// What a command of the family comes to: a reply, or a set to store.
enum Outcome {
    Reply(Frame),
    Store(ZSet),
}

/// Parses the options and computes the result over `inputs` (in key
/// order). Shared by the local and the cross-shard paths.
fn evaluate(argv: &[Bytes], form: Form, inputs: &[Input]) -> Result<Outcome, Frame> {
    let opts = parse_options(argv, form, inputs.len())?;
    let mut weighted_inputs: Vec<(Input, f64)> = inputs
        .iter()
        .copied()
        .zip(opts.weights.iter().copied())
        .collect();
    let members = match form.op {
        SetOp::Diff => difference(inputs),
        SetOp::Union | SetOp::Inter => {
            // Smallest first, stable among equals (Redis sorts by size).
            weighted_inputs.sort_by_key(|(input, _)| input.len());
            if form.op == SetOp::Union {
                union(&weighted_inputs, opts.aggregate)
            } else {
                intersection(&weighted_inputs, opts.aggregate, opts.limit)
            }
        }
    };
    if form.card_only {
        return Ok(Outcome::Reply(Frame::Integer(members.len() as i64)));
    }
    let result = ZSet::from_pairs(members);
    if form.store {
        return Ok(Outcome::Store(result));
    }
    let ordered = result.iter().map(|(m, s)| (m.clone(), s)).collect();
    Ok(Outcome::Reply(members_reply(ordered, opts.with_scores)))
}

/// The input keys' positions.
fn key_range(form: Form, n: usize) -> std::ops::Range<usize> {
    let first = form.numkeys_at() + 1;
    first..first + n
}

/// Any command of the family with every key on this shard.
pub fn zsetop(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let form = Form::of(&argv[0]);
    let n = parse_numkeys(argv, form)?;
    let keys = &argv[key_range(form, n)];
    let mut ks = ctx.ks();
    // First pass: lazy expiry and type checks (STORE forms look keys up for
    // writing, the others for reading, as Redis does).
    for key in keys {
        let entry = if form.store {
            ks.get(key)
        } else {
            ks.read(key)
        };
        Input::of(entry.map(|e| &e.value))?;
    }
    let db = &*ks.db();
    let inputs = keys
        .iter()
        .map(|k| Input::of(db.peek(k).map(|e| &e.value)))
        .collect::<Result<Vec<Input>, Frame>>()?;
    match evaluate(argv, form, &inputs)? {
        Outcome::Reply(frame) => Ok(frame),
        Outcome::Store(result) => Ok(store_result(&mut ks, &argv[1], result, form.event())),
    }
}

/// The family with keys on several shards: copy each input from its
/// shard, compute here, and write a STORE result on the destination's shard.
pub fn zsetop_job(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let form = Form::of(&argv[0]);
    let n = match parse_numkeys(argv, form) {
        Ok(n) => n,
        Err(e) => return Action::Reply(e),
    };
    let nshards = shard.shared.nshards;
    let db = session.db;
    let reads = argv[key_range(form, n)]
        .iter()
        .map(|key| {
            (
                shard_of(key, nshards),
                copy_input_op(db, key.clone(), form.store),
            )
        })
        .collect();
    let argv = argv.to_vec();
    Action::Job(
        Job::new(reads, move |outs| {
            let mut values = Vec::with_capacity(outs.len());
            for out in outs {
                match out {
                    Out::Entry(entry) => values.push(entry.map(|(v, _)| v)),
                    other => return Action::Reply(other.frame()),
                }
            }
            let inputs = values
                .iter()
                .map(|v| Input::of(v.as_ref()))
                .collect::<Result<Vec<Input>, Frame>>();
            let outcome = inputs.and_then(|inputs| evaluate(&argv, form, &inputs));
            match outcome {
                Err(e) | Ok(Outcome::Reply(e)) => Action::Reply(e),
                Ok(Outcome::Store(result)) => {
                    let dst = argv[1].clone();
                    Action::Job(Job::single(shard_of(&dst, nshards), db, move |ctx| {
                        Out::Frame(store_result(&mut ctx.ks(), &dst, result, form.event()))
                    }))
                }
            }
        })
        .ordered(),
    )
}

/// Copies the set or sorted set at `key` (None when missing); WRONGTYPE for
/// other values.
fn copy_input_op(db: usize, key: Bytes, write: bool) -> Op {
    Op::Store(
        db,
        Need::Whole,
        Box::new(move |ctx: &mut Ctx| {
            let mut ks = ctx.ks();
            let entry = if write { ks.get(&key) } else { ks.read(&key) };
            match entry.map(|e| &e.value) {
                value @ (None | Some(Value::ZSet(_)) | Some(Value::Set(_))) => {
                    Out::Entry(value.map(|v| (v.clone(), None)))
                }
                Some(_) => Out::Frame(err::wrongtype()),
            }
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zset(pairs: &[(&str, f64)]) -> ZSet {
        ZSet::from_pairs(
            pairs
                .iter()
                .map(|(m, s)| (Bytes::from(m.to_string()), *s))
                .collect(),
        )
    }

    #[test]
    fn aggregates_follow_redis_nan_rules() {
        let mut t = f64::INFINITY;
        Aggregate::Sum.apply(&mut t, f64::NEG_INFINITY);
        assert_eq!(t, 0.0);
        let mut t = 5.0;
        Aggregate::Min.apply(&mut t, f64::NAN);
        Aggregate::Max.apply(&mut t, f64::NAN);
        assert_eq!(t, 5.0);
        assert_eq!(weighted(f64::INFINITY, 0.0), 0.0);
    }

    #[test]
    fn set_algebra_over_sorted_and_plain_inputs() {
        let a = zset(&[("x", 1.0), ("y", 2.0), ("z", 3.0)]);
        let b: Set = ["y", "z", "w"].iter().map(|m| Bytes::from(*m)).collect();
        let inputs = [(Input::Sorted(&a), 2.0), (Input::Plain(&b), 1.0)];
        let mut u = union(&inputs, Aggregate::Sum);
        u.sort_by(|p, q| p.0.cmp(&q.0));
        let names: Vec<(&[u8], f64)> = u.iter().map(|(m, s)| (m.as_ref(), *s)).collect();
        assert_eq!(
            names,
            [(&b"w"[..], 1.0), (b"x", 2.0), (b"y", 5.0), (b"z", 7.0)]
        );
        let i = intersection(&inputs, Aggregate::Max, 0);
        assert_eq!(i.len(), 2);
        assert_eq!(intersection(&inputs, Aggregate::Max, 1).len(), 1);
        let d = difference(&[Input::Sorted(&a), Input::Plain(&b), Input::Missing]);
        assert_eq!(d, vec![(Bytes::from("x"), 1.0)]);
        assert!(difference(&[Input::Missing, Input::Sorted(&a)]).is_empty());
    }
}
