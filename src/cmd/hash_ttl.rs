//! Hash field expiry, Redis 7.4's HEXPIRE family: HEXPIRE, HPEXPIRE,
//! HEXPIREAT, HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST.
//!
//! The deadlines live in the hash (`store::hash`). Every lookup drops the
//! fields whose deadline passed (`hexpired`, then `del` when the hash
//! empties), and the per-shard sweep reclaims those nobody reads
//! (`store::db`), so these commands never see an expired field.

use bytes::Bytes;

use super::args::{err, int_arg, Reply};
use super::expire::{deadline_from, Conditions, ExpireUnit};
use super::Ctx;
use crate::resp::Frame;
use crate::store::notify::HASH;
use crate::store::value::Hash;
use crate::store::{Entry, Keyspace, Value};
use crate::util::num::parse_i64;

/// The latest field deadline Redis accepts, Unix ms (`EB_EXPIRE_TIME_MAX >> 2`:
/// 48 bits, two kept for later use).
const MAX_FIELD_DEADLINE_MS: i64 = ((1 << 48) - 1) >> 2;

/// Per-field answers (Redis's `SetExRes`, `GetExpireTimeRes`, `SetPersistRes`).
const NO_FIELD: i64 = -2;
const NO_TTL: i64 = -1;
const CONDITION_NOT_MET: i64 = 0;
const DONE: i64 = 1;
const DELETED: i64 = 2;

/// The setters' error for a bad field count; the readers and HPERSIST word it
/// differently.
const BAD_COUNT_SETTER: &str = "ERR Parameter `numFields` should be greater than 0";
const BAD_COUNT_READER: &str = "ERR Number of fields must be a positive integer";

/// The hash at `key` for a change; None when missing.
fn hash_mut<'k>(ks: &'k mut Keyspace, key: &[u8]) -> Result<Option<&'k mut Hash>, Frame> {
    match ks.get(key) {
        None => Ok(None),
        Some(Entry {
            value: Value::Hash(hash),
            ..
        }) => Ok(Some(hash)),
        Some(_) => Err(err::wrongtype()),
    }
}

/// The fields of the `FIELDS numfields field ...` block whose keyword is at
/// `at`, checked in Redis's order. `bad_count` is the command's error for a
/// count that is not a positive integer.
fn fields_block<'a>(argv: &'a [Bytes], at: usize, bad_count: &str) -> Result<&'a [Bytes], Frame> {
    if !argv
        .get(at)
        .is_some_and(|w| w.eq_ignore_ascii_case(b"FIELDS"))
    {
        return Err(err::frame(
            "ERR Mandatory argument FIELDS is missing or not at the right position",
        ));
    }
    let count = argv
        .get(at + 1)
        .and_then(|c| parse_i64(c))
        .filter(|&n| n > 0)
        .ok_or_else(|| err::frame(bad_count))?;
    let fields = argv.get(at + 2..).unwrap_or_default();
    if count as u64 != fields.len() as u64 {
        return Err(err::frame(
            "ERR The `numfields` parameter must match the number of arguments",
        ));
    }
    Ok(fields)
}

/// HEXPIRE's time argument as an absolute deadline, Unix ms (relative units
/// count from `now_ms`), with Redis 7.4's errors.
fn field_deadline(arg: &[u8], unit: ExpireUnit, now_ms: u64, command: &str) -> Result<i64, Frame> {
    let amount = int_arg(arg)?;
    if amount < 0 {
        return Err(err::frame("ERR invalid expire time, must be >= 0"));
    }
    deadline_from(amount, unit, now_ms)
        .filter(|&at| at <= MAX_FIELD_DEADLINE_MS)
        .ok_or_else(|| Frame::Error(format!("ERR invalid expire time in '{command}' command")))
}

/// One field of HEXPIRE: its answer, after setting its deadline or deleting
/// it when the deadline is not in the future.
fn expire_field(hash: &mut Hash, field: &[u8], at: i64, cond: Conditions, now_ms: u64) -> i64 {
    if !hash.contains_key(field) {
        return NO_FIELD;
    }
    if !cond.allow(hash.deadline(field), at) {
        return CONDITION_NOT_MET;
    }
    if at <= now_ms as i64 {
        hash.remove(field);
        return DELETED;
    }
    hash.set_deadline(field, at as u64);
    DONE
}

fn codes(codes: impl IntoIterator<Item = i64>) -> Frame {
    Frame::Array(codes.into_iter().map(Frame::Integer).collect())
}

fn expire_generic(ctx: &mut Ctx, argv: &[Bytes], unit: ExpireUnit) -> Reply {
    let key = &argv[1];
    let now = ctx.now_ms();
    let command = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
    let mut ks = ctx.ks();
    // Redis looks the key up first: WRONGTYPE wins over argument errors.
    let hash = hash_mut(&mut ks, key)?;
    let at = field_deadline(&argv[2], unit, now, &command)?;
    let cond = Conditions::from_word(&argv[3]);
    let fields_at = if cond.is_some() { 4 } else { 3 };
    let fields = fields_block(argv, fields_at, BAD_COUNT_SETTER)?;
    let Some(hash) = hash else {
        return Ok(codes(fields.iter().map(|_| NO_FIELD)));
    };
    let cond = cond.unwrap_or_default();
    let answers: Vec<i64> = fields
        .iter()
        .map(|f| expire_field(hash, f, at, cond, now))
        .collect();
    let emptied = hash.is_empty();
    let deleted = answers.iter().filter(|&&a| a == DELETED).count();
    if deleted > 0 {
        // Fields given a past deadline count as expired, with an `hdel` event.
        ks.count_expired_fields(deleted);
        ks.after_removal(key, HASH, "hdel", true, emptied);
    } else if answers.contains(&DONE) {
        ks.notify(HASH, "hexpire", key);
    }
    ks.file_field_deadlines(key);
    Ok(codes(answers))
}

pub fn hexpire(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    expire_generic(ctx, argv, ExpireUnit::RelSeconds)
}

pub fn hpexpire(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    expire_generic(ctx, argv, ExpireUnit::RelMillis)
}

pub fn hexpireat(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    expire_generic(ctx, argv, ExpireUnit::AbsSeconds)
}

pub fn hpexpireat(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    expire_generic(ctx, argv, ExpireUnit::AbsMillis)
}

/// HTTL and friends: per field -2 (no field or key), -1 (no deadline), else
/// `report(deadline, now)`.
fn deadlines(ctx: &mut Ctx, argv: &[Bytes], report: fn(u64, u64) -> i64) -> Reply {
    let now = ctx.now_ms();
    let mut ks = ctx.ks();
    let hash = match ks.read(&argv[1]) {
        None => None,
        Some(entry) => Some(super::hash::as_hash(entry)?),
    };
    let fields = fields_block(argv, 2, BAD_COUNT_READER)?;
    Ok(codes(fields.iter().map(|f| match hash {
        Some(h) if h.contains_key(f.as_ref()) => h.deadline(f).map_or(NO_TTL, |at| report(at, now)),
        _ => NO_FIELD,
    })))
}

/// Remaining seconds, rounded up as Redis 7.4 does for fields.
pub fn httl(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    deadlines(ctx, argv, |at, now| (at - now).div_ceil(1000) as i64)
}

pub fn hpttl(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    deadlines(ctx, argv, |at, now| (at - now) as i64)
}

/// The deadline in Unix seconds, rounded up.
pub fn hexpiretime(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    deadlines(ctx, argv, |at, _| at.div_ceil(1000) as i64)
}

pub fn hpexpiretime(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    deadlines(ctx, argv, |at, _| at as i64)
}

/// HPERSIST: per field -2 (no field or key), -1 (no deadline), 1 (removed).
pub fn hpersist(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let mut ks = ctx.ks();
    let hash = hash_mut(&mut ks, key)?;
    let fields = fields_block(argv, 2, BAD_COUNT_READER)?;
    let Some(hash) = hash else {
        return Ok(codes(fields.iter().map(|_| NO_FIELD)));
    };
    let answers: Vec<i64> = fields
        .iter()
        .map(|f| match (hash.contains_key(f.as_ref()), hash.persist(f)) {
            (false, _) => NO_FIELD,
            (true, false) => NO_TTL,
            (true, true) => DONE,
        })
        .collect();
    if answers.contains(&DONE) {
        ks.notify(HASH, "hpersist", key);
    }
    Ok(codes(answers))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_argv as argv;

    fn error(r: Result<impl std::fmt::Debug, Frame>) -> String {
        match r {
            Err(Frame::Error(e)) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn fields_block_checks_keyword_count_and_length() {
        let ok = argv(&["httl", "k", "fields", "2", "a", "b"]);
        assert_eq!(fields_block(&ok, 2, BAD_COUNT_READER).unwrap().len(), 2);
        assert_eq!(
            error(fields_block(
                &argv(&["httl", "k", "FIELD", "1", "a"]),
                2,
                "x"
            )),
            "ERR Mandatory argument FIELDS is missing or not at the right position"
        );
        for count in ["0", "-1", "abc", "+1"] {
            let a = argv(&["httl", "k", "FIELDS", count, "a"]);
            assert_eq!(
                error(fields_block(&a, 2, BAD_COUNT_READER)),
                BAD_COUNT_READER
            );
        }
        let long = argv(&["httl", "k", "FIELDS", "99999999999999999", "a"]);
        assert_eq!(
            error(fields_block(&long, 2, BAD_COUNT_READER)),
            "ERR The `numfields` parameter must match the number of arguments"
        );
    }

    #[test]
    fn deadlines_are_bounded_like_redis() {
        let now = 1_000;
        let at = |arg: &str, unit| field_deadline(arg.as_bytes(), unit, now, "hexpire");
        assert_eq!(at("5", ExpireUnit::RelSeconds).unwrap(), 6_000);
        assert_eq!(at("5", ExpireUnit::AbsMillis).unwrap(), 5);
        assert_eq!(
            error(at("-1", ExpireUnit::RelMillis)),
            "ERR invalid expire time, must be >= 0"
        );
        let max = MAX_FIELD_DEADLINE_MS;
        assert_eq!(
            at(&max.to_string(), ExpireUnit::AbsMillis).unwrap(),
            max,
            "the largest deadline itself is accepted"
        );
        for (arg, unit) in [
            ((max + 1).to_string(), ExpireUnit::AbsMillis),
            ((max - 999).to_string(), ExpireUnit::RelMillis),
            ((max / 1000 + 1).to_string(), ExpireUnit::AbsSeconds),
            (i64::MAX.to_string(), ExpireUnit::RelSeconds),
        ] {
            assert_eq!(
                error(at(&arg, unit)),
                "ERR invalid expire time in 'hexpire' command",
                "{arg}"
            );
        }
    }

    #[test]
    fn expire_field_answers() {
        let mut h: Hash = [("a", "1"), ("b", "2")]
            .iter()
            .map(|(f, v)| {
                (
                    Bytes::from_static(f.as_bytes()),
                    Bytes::from_static(v.as_bytes()),
                )
            })
            .collect();
        let always = Conditions::default();
        let gt = Conditions::from_word(b"gt").unwrap();
        assert_eq!(expire_field(&mut h, b"zz", 500, always, 100), NO_FIELD);
        assert_eq!(expire_field(&mut h, b"a", 500, gt, 100), CONDITION_NOT_MET);
        assert_eq!(expire_field(&mut h, b"a", 500, always, 100), DONE);
        assert_eq!(expire_field(&mut h, b"a", 600, gt, 100), DONE);
        assert_eq!(h.deadline(b"a"), Some(600));
        assert_eq!(expire_field(&mut h, b"b", 100, always, 100), DELETED);
        assert!(!h.contains_key(&b"b"[..]));
    }
}
