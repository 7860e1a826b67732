//! DEBUG DIGEST and DEBUG POPULATE, the two DEBUG subcommands Redis's
//! test suite builds and checks its datasets with.
//!
//! DIGEST: one value that changes with any key, value or deadline
//! of the dataset and with nothing else (Redis's test suite compares it
//! before and after a save and load, a restart, a replication).
//!
//! It is not Redis's SHA-1 mix, only its shape: 40 hex digits, all zeros
//! for an empty dataset, the same for the same data whatever the
//! encodings or the order keys and set members are kept in (each key's
//! digest is XORed in; unordered containers XOR their members' hashes,
//! ordered ones chain them).

use ahash::RandomState;
use bytes::Bytes;

use super::{Session, ShardData};
use crate::exec::{Action, Job, Op, Out};
use crate::resp::Frame;
use crate::store::Value;

/// Three fixed-seed hashers: 192 bits, of which the digest shows 160.
fn hashers() -> [RandomState; 3] {
    [
        RandomState::with_seeds(1, 2, 3, 4),
        RandomState::with_seeds(5, 6, 7, 8),
        RandomState::with_seeds(9, 10, 11, 12),
    ]
}

type Sum = [u64; 3];

fn hash_of(h: &[RandomState; 3], parts: &[&[u8]]) -> Sum {
    let mut out = [0u64; 3];
    for (o, s) in out.iter_mut().zip(h) {
        *o = s.hash_one(parts);
    }
    out
}

fn xor(a: &mut Sum, b: Sum) {
    for (x, y) in a.iter_mut().zip(b) {
        *x ^= y;
    }
}

/// The digest of one value, independent of its encoding.
fn value_digest(h: &[RandomState; 3], value: &Value) -> Sum {
    let mut sum = [0u64; 3];
    match value {
        Value::Str(s) => xor(&mut sum, hash_of(h, &[b"s", s])),
        Value::List(list) => {
            for e in list {
                let chained = format!("{:x}{:x}{:x}", sum[0], sum[1], sum[2]);
                sum = hash_of(h, &[b"l", chained.as_bytes(), e]);
            }
        }
        Value::Set(set) => {
            for m in set.iter() {
                xor(&mut sum, hash_of(h, &[b"e", m]));
            }
        }
        Value::ZSet(zset) => {
            for (m, score) in zset.iter() {
                xor(
                    &mut sum,
                    hash_of(h, &[b"z", m, &score.to_bits().to_le_bytes()]),
                );
            }
        }
        Value::Hash(hash) => {
            for (f, v) in hash {
                let at = hash.deadline(f).unwrap_or(0).to_le_bytes();
                xor(&mut sum, hash_of(h, &[b"h", f, v, &at]));
            }
        }
        // A stream's entries, groups and IDs are all in its serialized
        // form, which depends on nothing but its content.
        Value::Stream(_) => {
            let body = crate::store::rdb::dump(value);
            xor(&mut sum, hash_of(h, &[b"x", &body]));
        }
    }
    sum
}

/// This shard's part: every live key of every database.
fn shard_digest(data: &ShardData) -> Sum {
    let h = hashers();
    let now = data.now_ms;
    let mut sum = [0u64; 3];
    for (db, table) in data.store.dbs.iter().enumerate() {
        for (key, entry, deadline) in table.iter() {
            if !crate::store::snapshot::is_live(&entry.value, deadline, now) {
                continue;
            }
            let v = value_digest(&h, &entry.value);
            let mut packed = Vec::with_capacity(24);
            for x in v {
                packed.extend_from_slice(&x.to_le_bytes());
            }
            let at = deadline.unwrap_or(0).to_le_bytes();
            let dbn = (db as u64).to_le_bytes();
            xor(&mut sum, hash_of(&h, &[&dbn, key, &packed, &at]));
        }
    }
    sum
}

/// DEBUG DIGEST.
pub fn debug_digest(shard: &mut ShardData, _: &mut Session) -> Action {
    let n = shard.shared.nshards;
    let ops = (0..n)
        .map(|s| {
            let op = |ctx: &mut super::Ctx| {
                let sum = shard_digest(ctx.shard);
                Out::Lines(sum.iter().map(|x| format!("{x:016x}")).collect())
            };
            (s, Op::keyless(op))
        })
        .collect();
    Action::Job(Job::new(ops, |outs| {
        let mut sum = [0u64; 3];
        for out in outs {
            if let Out::Lines(lines) = out {
                for (x, line) in sum.iter_mut().zip(lines) {
                    *x ^= u64::from_str_radix(&line, 16).unwrap_or(0);
                }
            }
        }
        let text = format!("{:016x}{:016x}{:016x}", sum[0], sum[1], sum[2]);
        Action::Reply(Frame::Bulk(Bytes::from(text[..40].to_string())))
    }))
}

/// DEBUG POPULATE <count> [<prefix> [<size>]]: keys `prefix:0` ..
/// `prefix:count-1` (prefix `key`) set to `value:N` (cut or padded with
/// zero bytes to `size` when given), where they do not exist yet; every
/// shard makes its own keys.
pub fn debug_populate(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let Some(count) = crate::util::num::parse_i64(&argv[2]).filter(|&n| n >= 0) else {
        return super::args::err::frame("ERR value is out of range, must be positive").into();
    };
    let prefix = argv
        .get(3)
        .cloned()
        .unwrap_or_else(|| Bytes::from_static(b"key"));
    let size = match argv.get(4).map(|s| crate::util::num::parse_i64(s)) {
        None => None,
        Some(Some(n)) if n >= 0 => Some(n as usize),
        Some(_) => {
            return super::args::err::frame("ERR value is out of range, must be positive").into()
        }
    };
    let n = shard.shared.nshards;
    let db = session.db;
    let ops = (0..n)
        .map(|s| {
            let prefix = prefix.clone();
            let op = move |ctx: &mut super::Ctx| {
                let mut ks = ctx.shard.store.keyspace(db, ctx.shard.now_ms);
                for j in 0..count as u64 {
                    let mut key = prefix.to_vec();
                    key.extend_from_slice(format!(":{j}").as_bytes());
                    if super::shard_of(&key, n) != s || ks.exists(&key) {
                        continue;
                    }
                    let mut value = format!("value:{j}").into_bytes();
                    if let Some(size) = size {
                        value.resize(size, 0);
                    }
                    ks.set(&key, Value::string(Bytes::from(value)), None);
                }
                Out::Count(0)
            };
            (s, Op::store(db, op))
        })
        .collect();
    Action::Job(Job::new(ops, |_| Action::Reply(Frame::OK)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_digests_alike_in_any_order_and_a_list_does_not() {
        let h = hashers();
        let list = |items: &[&str]| {
            Value::List(items.iter().map(|s| Bytes::from(s.to_string())).collect())
        };
        assert_ne!(
            value_digest(&h, &list(&["a", "b"])),
            value_digest(&h, &list(&["b", "a"]))
        );
        assert_eq!(value_digest(&h, &list(&[])), [0; 3]);
    }
}
