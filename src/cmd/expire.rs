//! TTL commands: EXPIRE family with NX/XX/GT/LT, TTL/PTTL, EXPIRETIME, PERSIST.
//! Semantics as in `docs/EXPIRY.md` (Redis 7).

use bytes::Bytes;

use super::args::{err, int_arg, Reply};
use super::Ctx;
use crate::resp::Frame;
use crate::store::notify::GENERIC;

/// How an expire argument is expressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpireUnit {
    RelSeconds,
    RelMillis,
    AbsSeconds,
    AbsMillis,
}

/// Absolute deadline in ms for `amount` of `unit` at `now_ms`; None on overflow.
pub fn deadline_from(amount: i64, unit: ExpireUnit, now_ms: u64) -> Option<i64> {
    let ms = match unit {
        ExpireUnit::RelSeconds | ExpireUnit::AbsSeconds => amount.checked_mul(1000)?,
        ExpireUnit::RelMillis | ExpireUnit::AbsMillis => amount,
    };
    match unit {
        ExpireUnit::RelSeconds | ExpireUnit::RelMillis => ms.checked_add(now_ms as i64),
        _ => Some(ms),
    }
}

/// EXPIRE's NX/XX/GT/LT conditions (HEXPIRE's too, one at a time).
#[derive(Default, Clone, Copy)]
pub(super) struct Conditions {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

impl Conditions {
    fn parse(words: &[Bytes]) -> Result<Conditions, Frame> {
        let mut c = Conditions::default();
        for w in words {
            let one = Conditions::from_word(w).ok_or_else(|| {
                Frame::Error(format!(
                    "ERR Unsupported option {}",
                    String::from_utf8_lossy(w)
                ))
            })?;
            c.nx |= one.nx;
            c.xx |= one.xx;
            c.gt |= one.gt;
            c.lt |= one.lt;
        }
        if c.nx && (c.xx || c.gt || c.lt) {
            return Err(err::frame(
                "ERR NX and XX, GT or LT options at the same time are not compatible",
            ));
        }
        if c.gt && c.lt {
            return Err(err::frame(
                "ERR GT and LT options at the same time are not compatible",
            ));
        }
        Ok(c)
    }

    /// The single condition `word` names (HEXPIRE's optional argument),
    /// case-insensitively; None for any other word.
    pub(super) fn from_word(word: &[u8]) -> Option<Conditions> {
        let mut c = Conditions::default();
        match word.to_ascii_uppercase().as_slice() {
            b"NX" => c.nx = true,
            b"XX" => c.xx = true,
            b"GT" => c.gt = true,
            b"LT" => c.lt = true,
            _ => return None,
        }
        Some(c)
    }

    /// Whether a key (or hash field) whose deadline is `current` (None = no
    /// TTL) may get `new`.
    pub(super) fn allow(&self, current: Option<u64>, new: i64) -> bool {
        match current {
            Some(cur) => {
                !(self.nx || (self.gt && new <= cur as i64) || (self.lt && new >= cur as i64))
            }
            // No TTL counts as infinite: GT can never win, LT always does.
            None => !self.xx && !self.gt,
        }
    }
}

fn expire_generic(ctx: &mut Ctx, argv: &[Bytes], unit: ExpireUnit) -> Reply {
    // Redis checks the options before the number.
    let conditions = Conditions::parse(&argv[3..])?;
    let amount = int_arg(&argv[2])?;
    let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
    let now = ctx.now_ms();
    let at = deadline_from(amount, unit, now)
        .ok_or_else(|| Frame::Error(format!("ERR invalid expire time in '{name}' command")))?;
    let key = &argv[1];
    let loading = ctx.shard.shared.aof.is_loading();
    let mut ks = ctx.ks();
    let Some((_, deadline)) = ks.peek_with_ttl(key) else {
        return Ok(Frame::Integer(0));
    };
    if !conditions.allow(deadline, at) {
        return Ok(Frame::Integer(0));
    }
    // While the AOF replays, a past deadline is kept as logged (Redis's
    // `checkAlreadyExpired` is false while loading): the commands after
    // it in the file meet the key as it was then, and it expires after.
    if at <= now as i64 && !loading {
        // A deadline already past deletes the key at once (a `del`, not an
        // expiry, though Redis frees it as `lazyfree-lazy-expire` says).
        if let Some(old) = ks.remove(key) {
            crate::store::lazyfree::free_value_if(crate::store::lazyfree::expire(), old.value);
        }
        ks.notify(GENERIC, "del", key);
    } else {
        ks.set_expire(key, Some(at as u64));
        ks.notify(GENERIC, "expire", key);
    }
    Ok(Frame::Integer(1))
}

pub fn expire(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    expire_generic(ctx, argv, ExpireUnit::RelSeconds)
}

pub fn pexpire(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    expire_generic(ctx, argv, ExpireUnit::RelMillis)
}

pub fn expireat(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    expire_generic(ctx, argv, ExpireUnit::AbsSeconds)
}

pub fn pexpireat(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    expire_generic(ctx, argv, ExpireUnit::AbsMillis)
}

/// -2 for a missing key, -1 for no TTL, else `f(deadline)`.
fn ttl_generic(ctx: &mut Ctx, key: &[u8], f: impl Fn(u64, u64) -> i64) -> Reply {
    let now = ctx.now_ms();
    Ok(Frame::Integer(match ctx.ks().peek_with_ttl(key) {
        None => -2,
        Some((_, deadline)) => deadline.map_or(-1, |at| f(at, now)),
    }))
}

pub fn ttl(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    ttl_generic(ctx, &argv[1], |at, now| {
        ((at.saturating_sub(now) + 500) / 1000) as i64
    })
}

pub fn pttl(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    ttl_generic(ctx, &argv[1], |at, now| at.saturating_sub(now) as i64)
}

pub fn expiretime(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    // Rounded like TTL, as Redis does: (ms + 500) / 1000.
    ttl_generic(ctx, &argv[1], |at, _| {
        (at.saturating_add(500) / 1000) as i64
    })
}

pub fn pexpiretime(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    ttl_generic(ctx, &argv[1], |at, _| at as i64)
}

pub fn persist(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut ks = ctx.ks();
    let had_ttl = ks.expire_at(&argv[1]).is_some();
    if had_ttl {
        ks.set_expire(&argv[1], None);
        ks.notify(GENERIC, "persist", &argv[1]);
    }
    Ok(Frame::Integer(had_ttl as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conds(words: &[&str]) -> Result<Conditions, Frame> {
        let words: Vec<Bytes> = words
            .iter()
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        Conditions::parse(&words)
    }

    #[test]
    fn condition_rules_match_redis() {
        let gt = conds(&["gt"]).unwrap();
        assert!(!gt.allow(None, 10), "GT on a key without TTL fails");
        assert!(gt.allow(Some(5), 10));
        assert!(!gt.allow(Some(10), 10));
        let lt = conds(&["LT"]).unwrap();
        assert!(lt.allow(None, 10), "LT on a key without TTL succeeds");
        assert!(!lt.allow(Some(5), 10));
        assert!(conds(&["NX"]).unwrap().allow(None, 1));
        assert!(!conds(&["NX"]).unwrap().allow(Some(1), 1));
        assert!(!conds(&["XX"]).unwrap().allow(None, 1));
        assert!(conds(&["XX", "GT"]).is_ok());
    }

    #[test]
    fn condition_errors_are_redis_text() {
        let text = |r: Result<Conditions, Frame>| match r {
            Err(Frame::Error(e)) => e,
            _ => String::new(),
        };
        assert_eq!(
            text(conds(&["NX", "XX"])),
            "ERR NX and XX, GT or LT options at the same time are not compatible"
        );
        assert_eq!(
            text(conds(&["GT", "LT"])),
            "ERR GT and LT options at the same time are not compatible"
        );
        assert_eq!(text(conds(&["foo"])), "ERR Unsupported option foo");
    }

    #[test]
    fn deadlines_overflow_to_none() {
        assert_eq!(
            deadline_from(10, ExpireUnit::RelSeconds, 1_000),
            Some(11_000)
        );
        assert_eq!(
            deadline_from(i64::MAX / 10, ExpireUnit::RelSeconds, 0),
            None
        );
        assert_eq!(deadline_from(i64::MAX, ExpireUnit::RelMillis, 5), None);
        assert_eq!(deadline_from(7, ExpireUnit::AbsMillis, 5), Some(7));
    }
}
