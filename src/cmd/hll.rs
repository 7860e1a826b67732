//! HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST.
//! An HLL is a string in Redis's format (`store::hll`), so GET, SET,
//! DUMP and RESTORE carry it unchanged between ember and redis-server.
//!
//! PFCOUNT of one key caches the estimate in the value's header: like
//! Redis it then counts as a change (`server.dirty`, watchers see it) and
//! is propagated as run, though it is a read command. PFCOUNT of several
//! keys and PFMERGE with keys on several shards ([`pfcount_job`],
//! [`pfmerge_job`]) copy the source values from their owners (a
//! reference count, not the bytes) and take the registers' maximum here,
//! under the key locks dispatch takes for them; PFMERGE then writes the
//! destination on its owner.

use bytes::Bytes;

use super::args::{err, Reply};
use super::{shard_of, Ctx, Session, ShardData};
use crate::exec::{Action, Job, Op, Out};
use crate::resp::Frame;
use crate::store::hll::{self, Encoding, REGISTERS};
use crate::store::notify::STRING;
use crate::store::value::StrForm;
use crate::store::{Entry, Keyspace, Value};

/// A string that is not an HLL.
fn not_hll() -> Frame {
    Frame::error("WRONGTYPE Key is not a valid HyperLogLog string value.")
}

/// An HLL whose registers do not add up.
fn corrupt() -> Frame {
    Frame::error("INVALIDOBJ Corrupted HLL object detected")
}

/// The HLL bytes of `value`: WRONGTYPE for another type (Redis's usual
/// text) or for a string that is not an HLL (its HLL text).
fn hll_bytes(value: &Value) -> Result<(&[u8], Encoding), Frame> {
    match value {
        Value::Str(s) => hll::check(s).map(|e| (s.as_bytes(), e)).ok_or_else(not_hll),
        _ => Err(err::wrongtype()),
    }
}

/// Runs `f` on the stored HLL of `entry` as a buffer it may change (no
/// copy when nothing else holds the bytes). The value becomes `raw`, as
/// Redis unshares a string it is about to change.
/// Requires: `entry` holds a string.
fn edit<T>(entry: &mut Entry, f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    let Value::Str(stored) = &mut entry.value else {
        unreachable!("checked by hll_bytes");
    };
    let out = stored.edit(0, f);
    stored.set_form(StrForm::Raw);
    out
}

fn sparse_max(ctx: &Ctx) -> usize {
    ctx.shard.shared.config.hll_sparse_max_bytes()
}

pub fn pfadd(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let sparse_max = sparse_max(ctx);
    let key = &argv[1];
    let mut ks = ctx.ks();
    let mut updated = false;
    match ks.get(key) {
        Some(entry) => {
            hll_bytes(&entry.value)?;
        }
        None => {
            let empty = Value::str_of(Bytes::from(hll::new_sparse()), StrForm::Raw);
            ks.set(key, empty, None);
            updated = true;
        }
    }
    let entry = ks.get(key).expect("present");
    let added = edit(entry, |s| {
        let mut changed = false;
        for element in &argv[2..] {
            changed |= hll::add(s, element, sparse_max)?;
        }
        if changed || updated {
            hll::invalidate(s);
        }
        Ok(changed)
    });
    // A corrupt HLL keeps what the elements before the error changed, and
    // nothing is signalled or propagated, as in Redis.
    updated |= added.map_err(|_: hll::Corrupt| corrupt())?;
    if updated {
        ks.notify(STRING, "pfadd", key);
    }
    Ok(Frame::Integer(updated as i64))
}

pub fn pfcount(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    if argv.len() > 2 {
        let mut max = Box::new([0u8; REGISTERS]);
        let mut ks = ctx.ks();
        for key in &argv[1..] {
            if let Some(entry) = ks.read(key) {
                let (s, _) = hll_bytes(&entry.value)?;
                hll::merge_into(&mut max, s).map_err(|_| corrupt())?;
            }
        }
        return Ok(Frame::Integer(hll::count_registers(&max) as i64));
    }
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.read(key) else {
        return Ok(Frame::Integer(0));
    };
    hll_bytes(&entry.value)?;
    let (card, computed) = edit(entry, |s| match hll::cached(s) {
        Some(card) => Ok((card, false)),
        None => {
            let card = hll::count(s)?;
            hll::set_cached(s, card);
            Ok((card, true))
        }
    })
    .map_err(|_: hll::Corrupt| corrupt())?;
    if computed {
        // The cache is part of the value: a change for watchers and for
        // the feed (Redis's signalModifiedKey and dirty++), with no
        // keyspace event (class 0 is no class).
        ks.notify(0, "pfcount", key);
        if ctx.recording() {
            ctx.propagate_as(argv.to_vec());
        }
    }
    Ok(Frame::Integer(card as i64))
}

/// The registers' maximum over the HLLs at `keys` (missing keys are
/// empty) and whether any is dense, checking each in argument order.
fn gather<'v>(
    values: impl Iterator<Item = Option<&'v Value>>,
) -> Result<(Box<[u8; REGISTERS]>, bool), Frame> {
    let mut max = Box::new([0u8; REGISTERS]);
    let mut dense = false;
    for value in values.flatten() {
        let (s, encoding) = hll_bytes(value)?;
        dense |= encoding == Encoding::Dense;
        hll::merge_into(&mut max, s).map_err(|_| corrupt())?;
    }
    Ok((max, dense))
}

pub fn pfmerge(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let sparse_max = sparse_max(ctx);
    let mut ks = ctx.ks();
    for key in &argv[1..] {
        // Expires and counts the hit; checked in order below.
        ks.read(key);
    }
    let (max, dense) = {
        let db = ks.db();
        gather(argv[1..].iter().map(|k| db.peek(k).map(|e| &e.value)))?
    };
    store_merge(&mut ks, &argv[1], &max, dense, sparse_max)
}

/// Writes PFMERGE's result into `dst` (created empty when missing, made
/// dense when a source was): each register raised to `max`'s.
fn store_merge(
    ks: &mut Keyspace,
    dst: &[u8],
    max: &[u8; REGISTERS],
    dense: bool,
    sparse_max: usize,
) -> Reply {
    match ks.get(dst) {
        Some(entry) => {
            hll_bytes(&entry.value)?;
        }
        None => {
            let empty = Value::str_of(Bytes::from(hll::new_sparse()), StrForm::Raw);
            ks.set(dst, empty, None);
        }
    }
    let entry = ks.get(dst).expect("present");
    edit(entry, |s| {
        if dense {
            hll::to_dense(s)?;
        }
        for (i, &value) in max.iter().enumerate() {
            if value != 0 {
                // A corrupt destination was refused as a source.
                let _ = hll::raise(s, i, value, sparse_max);
            }
        }
        hll::invalidate(s);
        Ok(())
    })
    .map_err(|_: hll::Corrupt| corrupt())?;
    // Redis fires `pfadd` for a merge: a mass add of elements.
    ks.notify(STRING, "pfadd", dst);
    Ok(Frame::OK)
}

/// A copy of the value at `key` for a gathering step (a reference to
/// the same bytes): WRONGTYPE for a non-string, checked there so errors
/// come in argument order here.
fn read_value_op(db: usize, key: Bytes) -> Op {
    Op::store(db, move |ctx| match ctx.ks().read(&key) {
        None => Out::Entry(None),
        Some(entry) => match &entry.value {
            Value::Str(..) => Out::Entry(Some((entry.value.clone(), None))),
            _ => Out::Frame(err::wrongtype()),
        },
    })
}

/// The sources' values from their owners, in argument order.
fn gather_job(
    argv: &[Bytes],
    n: usize,
    db: usize,
    then: impl FnOnce(Box<[u8; REGISTERS]>, bool) -> Action + 'static,
) -> Job {
    let reads = argv[1..]
        .iter()
        .map(|key| (shard_of(key, n), read_value_op(db, key.clone())))
        .collect();
    Job::new(reads, move |outs| {
        let mut values = Vec::with_capacity(outs.len());
        for out in outs {
            match out {
                Out::Entry(value) => values.push(value.map(|(v, _)| v)),
                other => return Action::Reply(other.frame()),
            }
        }
        match gather(values.iter().map(Option::as_ref)) {
            Ok((max, dense)) => then(max, dense),
            Err(e) => Action::Reply(e),
        }
    })
}

/// PFCOUNT of keys on several shards.
pub fn pfcount_job(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let job = gather_job(argv, shard.shared.nshards, session.db, |max, _| {
        Action::Reply(Frame::Integer(hll::count_registers(&max) as i64))
    });
    Action::Job(job)
}

/// PFMERGE with keys on several shards: gather, then write the
/// destination on its owner.
pub fn pfmerge_job(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let (n, db) = (shard.shared.nshards, session.db);
    let dst = argv[1].clone();
    let job = gather_job(argv, n, db, move |max, dense| {
        Action::Job(Job::single(shard_of(&dst, n), db, move |ctx| {
            let sparse_max = sparse_max(ctx);
            let reply = store_merge(&mut ctx.ks(), &dst, &max, dense, sparse_max);
            Out::Frame(reply.unwrap_or_else(|e| e))
        }))
    });
    Action::Job(job.ordered())
}

pub fn pfdebug(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let (sub, key) = (&argv[1], &argv[2]);
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Err(Frame::error("ERR The specified key does not exist"));
    };
    let (_, encoding) = hll_bytes(&entry.value)?;
    let sub_lower = sub.to_ascii_lowercase();
    let (reply, converted) = edit(entry, |s| -> Result<(Frame, bool), Frame> {
        Ok(match sub_lower.as_slice() {
            b"getreg" => {
                let converted = hll::to_dense(s).map_err(|_| corrupt())?;
                let regs = &s[hll::HDR..];
                let values = (0..REGISTERS)
                    .map(|i| Frame::Integer(i64::from(hll::dense_get(regs, i))))
                    .collect();
                (Frame::Array(values), converted)
            }
            b"decode" => match encoding {
                Encoding::Sparse => (Frame::bulk(hll::decode(s)), false),
                Encoding::Dense => return Err(Frame::error("ERR HLL encoding is not sparse")),
            },
            b"encoding" => (Frame::Simple(encoding.name()), false),
            b"todense" => {
                let converted = hll::to_dense(s).map_err(|_| corrupt())?;
                (Frame::Integer(converted as i64), converted)
            }
            _ => {
                let text = format!(
                    "ERR Unknown PFDEBUG subcommand '{}'",
                    String::from_utf8_lossy(sub)
                );
                return Err(Frame::error(text));
            }
        })
    })?;
    if converted {
        // Propagated so replicas change encoding too (Redis's dirty++,
        // which signals no key).
        let notify = &mut ctx.shard.store.stats.notify;
        notify.dirty = notify.dirty.wrapping_add(1);
    }
    Ok(reply)
}

/// PFSELFTEST: Redis's self test of the representation, with its ten
/// million elements.
pub fn pfselftest(_ctx: &mut Ctx, _argv: &[Bytes]) -> Reply {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    match hll::selftest(10_000_000, seed) {
        Ok(()) => Ok(Frame::OK),
        Err(text) => Err(Frame::error(text)),
    }
}
