//! Commands whose keys span shards: divided per shard and gathered, or carried
//! out as a sequence of steps. Not atomic across shards yet: another client can
//! observe the state between two steps (the transactions work adds key locks).

use bytes::Bytes;

use super::args::{err, Reply};
use super::keys::{self, copy_options, put_entry, scan_cursor, scan_options, scan_reply};
use super::table::{Handler, Merge};
use super::{handler_op, shard_of, strings, Ctx, Session, ShardData};
use crate::exec::{Action, Job, LockPlan, Need, Op, Out};
use crate::resp::Frame;

/// Groups key positions by owning shard, in first-seen order.
fn group_by_shard(
    nshards: usize,
    argv: &[Bytes],
    positions: impl Iterator<Item = usize>,
) -> Vec<(usize, Vec<usize>)> {
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for p in positions {
        let s = shard_of(&argv[p], nshards);
        match groups.iter_mut().find(|(g, _)| *g == s) {
            Some((_, v)) => v.push(p),
            None => groups.push((s, vec![p])),
        }
    }
    groups
}

/// The command again with only the given arguments (and `width` following each).
fn sub_argv(argv: &[Bytes], positions: &[usize], width: usize) -> Vec<Bytes> {
    let mut sub = Vec::with_capacity(1 + positions.len() * width);
    sub.push(argv[0].clone());
    for &p in positions {
        sub.extend_from_slice(&argv[p..p + width]);
    }
    sub
}

/// `handler` run on the shard owning the arguments at `positions` (each
/// followed by `width - 1` values), those arguments being its keys.
fn sub_op(db: usize, handler: Handler, argv: &[Bytes], positions: &[usize], width: usize) -> Op {
    let sub = sub_argv(argv, positions, width);
    let keys = (1..sub.len()).step_by(width);
    handler_op(db, handler, sub, keys)
}

pub fn split_sum(nshards: usize, db: usize, handler: Handler, argv: &[Bytes]) -> Action {
    let groups = group_by_shard(nshards, argv, 1..argv.len());
    let ops = groups
        .iter()
        .map(|(s, ps)| (*s, sub_op(db, handler, argv, ps, 1)))
        .collect();
    Action::Job(Job::new(ops, |outs| Action::Reply(merge(Merge::Sum, outs))))
}

pub fn split_gather(nshards: usize, db: usize, handler: Handler, argv: &[Bytes]) -> Action {
    let groups = group_by_shard(nshards, argv, 1..argv.len());
    let ops = groups
        .iter()
        .map(|(s, ps)| (*s, sub_op(db, handler, argv, ps, 1)))
        .collect();
    let total = argv.len() - 1;
    Action::Job(Job::new(ops, move |outs| {
        let mut values = vec![Frame::Null; total];
        for ((_, positions), out) in groups.iter().zip(outs) {
            match out.frame() {
                Frame::Array(items) => {
                    for (p, v) in positions.iter().zip(items) {
                        values[p - 1] = v;
                    }
                }
                other => return Action::Reply(other),
            }
        }
        Action::Reply(Frame::Array(values))
    }))
}

pub fn split_pairs(
    nshards: usize,
    db: usize,
    handler: Handler,
    name: &str,
    argv: &[Bytes],
) -> Action {
    if argv.len().is_multiple_of(2) {
        return Action::Reply(err::wrong_arity(name));
    }
    let groups = group_by_shard(nshards, argv, (1..argv.len()).step_by(2));
    let ops = groups
        .iter()
        .map(|(s, ps)| (*s, sub_op(db, handler, argv, ps, 2)))
        .collect();
    Action::Job(Job::new(ops, |outs| Action::Reply(merge(Merge::Ok, outs))))
}

/// Combines per-shard replies; the first error wins.
pub fn merge(merge: Merge, outs: Vec<Out>) -> Frame {
    let frames: Vec<Frame> = outs.into_iter().map(Out::frame).collect();
    if let Some(e) = frames.iter().find(|f| f.is_error()) {
        return e.clone();
    }
    match merge {
        Merge::Sum => Frame::Integer(
            frames
                .iter()
                .map(|f| if let Frame::Integer(n) = f { *n } else { 0 })
                .sum(),
        ),
        Merge::Ok => Frame::OK,
        Merge::Concat => Frame::Array(
            frames
                .into_iter()
                .flat_map(|f| {
                    if let Frame::Array(items) = f {
                        items
                    } else {
                        Vec::new()
                    }
                })
                .collect(),
        ),
    }
}

/// MSETNX across shards: check every shard, then write every shard.
pub fn msetnx(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    if argv.len().is_multiple_of(2) {
        return Action::Reply(err::wrong_arity("msetnx"));
    }
    let n = shard.shared.nshards;
    let db = session.db;
    let groups = group_by_shard(n, argv, (1..argv.len()).step_by(2));
    let exists_ops = groups
        .iter()
        .map(|(s, ps)| (*s, sub_op(db, keys::exists, argv, ps, 1)))
        .collect();
    let sets: Vec<(usize, Op)> = groups
        .iter()
        .map(|(s, ps)| (*s, sub_op(db, strings::mset, argv, ps, 2)))
        .collect();
    Action::Job(
        Job::new(exists_ops, move |outs| {
            if outs.iter().any(|o| o.count() > 0) {
                return Action::Reply(Frame::Integer(0));
            }
            Action::Job(Job::new(sets, |_| Action::Reply(Frame::Integer(1))))
        })
        .ordered(),
    )
}

/// RENAME / RENAMENX with the two keys on different shards.
pub fn rename(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let n = shard.shared.nshards;
    let db = session.db;
    let nx = argv[0].eq_ignore_ascii_case(b"renamenx");
    let (src, dst) = (argv[1].clone(), argv[2].clone());
    let (from, to) = (shard_of(&src, n), shard_of(&dst, n));
    let check = vec![
        (from, exists_op(db, src.clone())),
        (to, exists_op(db, dst.clone())),
    ];
    Action::Job(
        Job::new(check, move |outs| {
            if outs[0].count() == 0 {
                return Action::Reply(err::frame(err::NO_SUCH_KEY));
            }
            if nx && outs[1].count() > 0 {
                return Action::Reply(Frame::Integer(0));
            }
            let take_src = src.clone();
            let take = vec![(
                from,
                Op::store(db, move |ctx| Out::Entry(keys::take_entry(ctx, &take_src))),
            )];
            Action::Job(Job::new(take, move |mut outs| {
                let Some(Out::Entry(Some((value, ttl)))) = outs.pop() else {
                    return Action::Reply(err::frame(err::NO_SUCH_KEY));
                };
                let put = Op::store(db, move |ctx| {
                    let placed = put_entry(
                        &mut ctx.ks(),
                        &dst,
                        value.clone(),
                        ttl,
                        !nx,
                        Some("rename_to"),
                    );
                    if !placed {
                        // RENAMENX lost a race for the destination: restore the source.
                        return Out::Entry(Some((value, ttl)));
                    }
                    Out::Entry(None)
                });
                Action::Job(Job::new(vec![(to, put)], move |mut outs| {
                    match outs.pop() {
                        Some(Out::Entry(Some((value, ttl)))) => {
                            let restore = Op::store(db, move |ctx| {
                                put_entry(&mut ctx.ks(), &src, value, ttl, false, None);
                                Out::Count(0)
                            });
                            Action::Job(Job::new(vec![(from, restore)], |_| {
                                Action::Reply(Frame::Integer(0))
                            }))
                        }
                        _ => Action::Reply(if nx { Frame::Integer(1) } else { Frame::OK }),
                    }
                }))
            }))
        })
        .ordered(),
    )
}

fn exists_op(db: usize, key: Bytes) -> Op {
    Op::store(db, move |ctx| Out::Count(ctx.ks().exists(&key) as i64))
}

/// COPY with the two keys on different shards.
pub fn copy(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let opts = match copy_options(argv, shard.store.dbs.len()) {
        Ok(o) => o,
        Err(e) => return Action::Reply(e),
    };
    let n = shard.shared.nshards;
    let (db, dst_db) = (session.db, opts.db.unwrap_or(session.db));
    let (src, dst) = (argv[1].clone(), argv[2].clone());
    let (from, to) = (shard_of(&src, n), shard_of(&dst, n));
    // Locked as it is written: the destination in its own database (with
    // DB, not the session's), or a command there could slip in between.
    let mut plan = LockPlan::new();
    plan.entry(from)
        .or_insert(Need::Nothing)
        .add_key(db, src.clone());
    plan.entry(to)
        .or_insert(Need::Nothing)
        .add_key(dst_db, dst.clone());
    let read = Op::store(db, move |ctx| Out::Entry(keys::read_entry(ctx, &src)));
    let replace = opts.replace;
    Action::Job(
        Job::new(vec![(from, read)], move |mut outs| {
            let Some(Out::Entry(Some((value, ttl)))) = outs.pop() else {
                return Action::Reply(Frame::Integer(0));
            };
            Action::Job(Job::single(to, dst_db, move |ctx| {
                Out::Count(
                    put_entry(&mut ctx.ks(), &dst, value, ttl, replace, Some("copy_to")) as i64,
                )
            }))
        })
        .ordered()
        .locked(plan),
    )
}

/// LCS with the two keys on different shards: fetch both, compare here.
pub fn lcs(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let n = shard.shared.nshards;
    let db = session.db;
    let reads = argv[1..3]
        .iter()
        .map(|key| {
            let key = key.clone();
            (
                shard_of(&key, n),
                Op::store(db, move |ctx| {
                    Out::Entry(ctx.ks().read(&key).map(|e| (e.value.clone(), None)))
                }),
            )
        })
        .collect();
    let argv = argv.to_vec();
    let table_max = shard.shared.config.max_bulk_len();
    Action::Job(Job::new(reads, move |outs| {
        let mut values = outs.into_iter().map(|o| match o {
            Out::Entry(e) => e.map(|(v, _)| v),
            _ => None,
        });
        let (a, b) = (values.next().flatten(), values.next().flatten());
        Action::from(strings::lcs_reply(a.as_ref(), b.as_ref(), &argv, table_max))
    }))
}

/// RANDOMKEY: one candidate from each shard, then a random pick among them.
pub fn randomkey(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let n = shard.shared.nshards;
    let ops = (0..n)
        .map(|s| {
            let (db, argv) = (session.db, argv.to_vec());
            let op =
                move |ctx: &mut Ctx| Out::Frame(keys::randomkey(ctx, &argv).unwrap_or_else(|e| e));
            (s, Op::store(db, op))
        })
        .collect();
    let seed = shard.now_ms ^ session.id;
    Action::Job(Job::new(ops, move |outs| {
        let candidates = outs
            .into_iter()
            .filter_map(|o| match o.frame() {
                Frame::Bulk(k) => Some(k),
                _ => None,
            })
            .collect();
        let mut rng =
            <rand_xoshiro::Xoshiro256PlusPlus as rand_core::SeedableRng>::seed_from_u64(seed);
        Action::Reply(keys::pick_random(candidates, &mut rng))
    }))
}

/// Bits of a SCAN cursor that name the shard; the rest is the position within it.
const SHARD_BITS: u32 = 10;

/// SCAN: the cursor names a shard and a position in its dict; each call
/// scans one shard and moves to the next when it is done.
pub fn scan(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let cursor = match scan_cursor(&argv[1]) {
        Ok(c) => c,
        Err(e) => return Action::Reply(e),
    };
    let opts = match scan_options(&argv[2..], true) {
        Ok(o) => o,
        Err(e) => return Action::Reply(e),
    };
    let n = shard.shared.nshards;
    let target = (cursor & ((1 << SHARD_BITS) - 1)) as usize;
    let position = cursor >> SHARD_BITS;
    if target >= n {
        return Action::Reply(scan_reply(0, Vec::new()));
    }
    let from = position.checked_sub(1).map(|p| p as usize);
    scan_shard(n, session.db, target, from, opts)
}

/// One SCAN step on shard `target`. A shard that finishes without a key
/// hands over to the next one in the same call, so an empty database answers
/// cursor 0 at once, as Redis does.
fn scan_shard(
    n: usize,
    db: usize,
    target: usize,
    from: Option<usize>,
    opts: keys::ScanOptions,
) -> Action {
    let step_opts = opts.clone();
    let op = Op::store(db, move |ctx| {
        let (keys, next) = keys::scan_step(ctx, from, &step_opts);
        let next_cursor = match next {
            Some(pos) => ((pos as u64 + 1) << SHARD_BITS) | target as u64,
            None if target + 1 < n => (target + 1) as u64,
            None => 0,
        };
        Out::Frame(scan_reply(next_cursor, keys))
    });
    Action::Job(Job::new(vec![(target, op)], move |mut outs| {
        let frame = outs.pop().map_or(Frame::Null, Out::frame);
        let shard_done_empty = matches!(
            &frame,
            Frame::Array(parts) if matches!(&parts[1], Frame::Array(keys) if keys.is_empty())
                && matches!(&parts[0], Frame::Bulk(c) if c.as_ref() == (target + 1).to_string().as_bytes())
        );
        if shard_done_empty && target + 1 < n {
            return scan_shard(n, db, target + 1, None, opts);
        }
        Action::Reply(frame)
    }))
}

/// Runs a store handler on the shard owning `key` (DEBUG OBJECT and the like).
pub fn on_owner(
    shard: &ShardData,
    db: usize,
    key: &Bytes,
    f: fn(&mut Ctx, &[u8]) -> Reply,
) -> Action {
    let owner = shard_of(key, shard.shared.nshards);
    let key = key.clone();
    Action::Job(Job::single(owner, db, move |ctx| {
        Out::Frame(f(ctx, &key).unwrap_or_else(|e| e))
    }))
}
