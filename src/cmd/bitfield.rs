//! BITFIELD and BITFIELD_RO: integers of 1 to 64 bits (unsigned up to 63)
//! at any bit offset of a string, read, written or incremented with
//! Redis's overflow rules (WRAP, SAT, FAIL). All the subcommands are parsed
//! before the key is touched, so a bad one leaves the string as it was; a
//! write grows the string once, to the farthest bit any write reaches.

use bytes::Bytes;

use super::args::{err, int_arg, Keyword, Reply};
use super::bitmap::{bit_at, bit_offset, edit, with_grown};
use super::strings::as_str;
use super::Ctx;
use crate::resp::Frame;
use crate::store::notify::STRING;

const BAD_TYPE: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

/// What happens when a SET or INCRBY leaves the type's range.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Overflow {
    /// Modulo 2^bits (two's complement for signed types).
    Wrap,
    /// Clamp to the type's minimum or maximum.
    Sat,
    /// Write nothing and answer nil.
    Fail,
}

/// An integer type such as `i16` or `u8`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Kind {
    pub signed: bool,
    pub bits: u32,
}

impl Kind {
    /// `i1`..`i64` or `u1`..`u63` (the prefix is case-sensitive, as in Redis).
    pub fn parse(arg: &[u8]) -> Result<Kind, Frame> {
        let bad = || err::frame(BAD_TYPE);
        let signed = match arg.first() {
            Some(b'i') => true,
            Some(b'u') => false,
            _ => return Err(bad()),
        };
        let bits = int_arg(&arg[1..]).map_err(|_| bad())?;
        let max = if signed { 64 } else { 63 };
        if !(1..=max).contains(&bits) {
            return Err(bad());
        }
        Ok(Kind {
            signed,
            bits: bits as u32,
        })
    }

    fn min(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }

    fn max(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }

    /// `v` reduced modulo 2^bits into the type's range.
    fn wrap(self, v: i128) -> i128 {
        let low = v.rem_euclid(1i128 << self.bits);
        if self.signed && low > self.max() {
            low - (1i128 << self.bits)
        } else {
            low
        }
    }

    /// `v` brought into range by `rule`; None when it is out of range and
    /// the rule is FAIL.
    pub fn fit(self, v: i128, rule: Overflow) -> Option<i64> {
        if (self.min()..=self.max()).contains(&v) {
            return Some(v as i64);
        }
        match rule {
            Overflow::Wrap => Some(self.wrap(v) as i64),
            Overflow::Sat => Some(v.clamp(self.min(), self.max()) as i64),
            Overflow::Fail => None,
        }
    }

    /// The field at bit `offset` of `s` (zeros past its end).
    pub fn get(self, s: &[u8], offset: u64) -> i64 {
        let raw = (0..u64::from(self.bits))
            .fold(0u64, |acc, i| (acc << 1) | u64::from(bit_at(s, offset + i)));
        if self.signed && self.bits < 64 && raw >> (self.bits - 1) & 1 == 1 {
            // Sign-extend.
            (raw | (u64::MAX << self.bits)) as i64
        } else {
            raw as i64
        }
    }

    /// Writes `v`'s low `bits` bits at bit `offset` of `s` (long enough).
    pub fn set(self, s: &mut [u8], offset: u64, v: i64) {
        for i in 0..u64::from(self.bits) {
            let bit = (v as u64 >> (u64::from(self.bits) - 1 - i)) & 1;
            let at = offset + i;
            let (byte, mask) = ((at >> 3) as usize, 0x80u8 >> (at & 7));
            if bit == 1 {
                s[byte] |= mask;
            } else {
                s[byte] &= !mask;
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Action {
    Get,
    Set(i64),
    IncrBy(i64),
}

#[derive(Clone, Copy, Debug)]
struct FieldOp {
    action: Action,
    kind: Kind,
    offset: u64,
    overflow: Overflow,
}

/// Parses the subcommands after the key, in Redis's order of checks.
fn parse(words: &[Bytes], max_bulk: usize) -> Result<Vec<FieldOp>, Frame> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut i = 0;
    while i < words.len() {
        let w = Keyword::new(&words[i]);
        let rest = words.len() - i - 1;
        let with_value = if w.is("GET") && rest >= 2 {
            false
        } else if (w.is("SET") || w.is("INCRBY")) && rest >= 3 {
            true
        } else if w.is("OVERFLOW") && rest >= 1 {
            let rule = Keyword::new(&words[i + 1]);
            overflow = if rule.is("WRAP") {
                Overflow::Wrap
            } else if rule.is("SAT") {
                Overflow::Sat
            } else if rule.is("FAIL") {
                Overflow::Fail
            } else {
                return Err(err::frame("ERR Invalid OVERFLOW type specified"));
            };
            i += 2;
            continue;
        } else {
            return Err(err::syntax());
        };
        let kind = Kind::parse(&words[i + 1])?;
        let offset = bit_offset(&words[i + 2], Some(kind.bits), max_bulk)?;
        let action = if !with_value {
            Action::Get
        } else if w.is("SET") {
            Action::Set(int_arg(&words[i + 3])?)
        } else {
            Action::IncrBy(int_arg(&words[i + 3])?)
        };
        ops.push(FieldOp {
            action,
            kind,
            offset,
            overflow,
        });
        i += if with_value { 4 } else { 3 };
    }
    Ok(ops)
}

fn generic(ctx: &mut Ctx, argv: &[Bytes], read_only: bool) -> Reply {
    let key = &argv[1];
    let ops = parse(&argv[2..], ctx.shard.shared.config.max_bulk_len())?;
    // The farthest bit a write reaches, if any op writes.
    let reach = ops
        .iter()
        .filter(|op| !matches!(op.action, Action::Get))
        .map(|op| op.offset + u64::from(op.kind.bits))
        .max();
    let mut ks = ctx.ks();
    let Some(reach) = reach else {
        let s = match ks.read(key) {
            Some(entry) => as_str(entry)?.to_bytes(),
            None => Bytes::new(),
        };
        let replies = ops
            .iter()
            .map(|op| Frame::Integer(op.kind.get(&s, op.offset)))
            .collect();
        return Ok(Frame::Array(replies));
    };
    if read_only {
        return Err(err::frame(
            "ERR BITFIELD_RO only supports the GET subcommand",
        ));
    }
    // As in Redis, a write that leaves the bits as they were changes
    // nothing (no event, nothing to propagate) unless the string grew.
    let len = reach.div_ceil(8) as usize;
    let (replies, changed) = with_grown(&mut ks, key, len, |stored, grew| {
        let mut changed = grew;
        let replies = edit(stored, |s| {
            ops.iter()
                .map(|op| {
                    let old = op.kind.get(s, op.offset);
                    let (next, reply) = match op.action {
                        Action::Get => return Frame::Integer(old),
                        Action::Set(v) => {
                            // A negative value for an unsigned type is read as
                            // Redis reads it: a 64-bit unsigned number.
                            let v = if op.kind.signed {
                                i128::from(v)
                            } else {
                                i128::from(v as u64)
                            };
                            let next = op.kind.fit(v, op.overflow);
                            (next, Frame::Integer(old))
                        }
                        Action::IncrBy(by) => {
                            let next = op.kind.fit(i128::from(old) + i128::from(by), op.overflow);
                            (next, next.map_or(Frame::Null, Frame::Integer))
                        }
                    };
                    match next {
                        Some(v) => {
                            op.kind.set(s, op.offset, v);
                            changed |= v != old;
                            reply
                        }
                        None => Frame::Null,
                    }
                })
                .collect()
        });
        (replies, changed)
    })?;
    if changed {
        ks.notify(STRING, "setbit", key);
    }
    Ok(Frame::Array(replies))
}

pub fn bitfield(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    generic(ctx, argv, false)
}

pub fn bitfield_ro(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    generic(ctx, argv, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Kind {
        Kind::parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn types_parse_as_redis() {
        assert_eq!(
            kind("i64"),
            Kind {
                signed: true,
                bits: 64
            }
        );
        assert_eq!(
            kind("u63"),
            Kind {
                signed: false,
                bits: 63
            }
        );
        for bad in ["u64", "i65", "i0", "I8", "x8", "i", ""] {
            assert!(Kind::parse(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn fields_round_trip_at_any_offset() {
        let mut s = vec![0u8; 20];
        for (k, v) in [
            ("i5", -7),
            ("u7", 100),
            ("i64", i64::MIN),
            ("u1", 1),
            ("i8", -1),
        ] {
            for offset in [0, 3, 9, 50] {
                kind(k).set(&mut s, offset, v);
                assert_eq!(kind(k).get(&s, offset), v, "{k} at {offset}");
            }
        }
        assert_eq!(kind("u8").get(b"\xff", 4), 0xf0);
    }

    #[test]
    fn overflow_rules() {
        let u8k = kind("u8");
        assert_eq!(u8k.fit(256, Overflow::Wrap), Some(0));
        assert_eq!(u8k.fit(-1, Overflow::Wrap), Some(255));
        assert_eq!(u8k.fit(300, Overflow::Sat), Some(255));
        assert_eq!(u8k.fit(-5, Overflow::Sat), Some(0));
        assert_eq!(u8k.fit(256, Overflow::Fail), None);
        let i8k = kind("i8");
        assert_eq!(i8k.fit(128, Overflow::Wrap), Some(-128));
        assert_eq!(i8k.fit(-129, Overflow::Wrap), Some(127));
        assert_eq!(i8k.fit(1000, Overflow::Sat), Some(127));
        let i64k = kind("i64");
        assert_eq!(
            i64k.fit(i128::from(i64::MAX) + 1, Overflow::Wrap),
            Some(i64::MIN)
        );
        assert_eq!(
            i64k.fit(i128::from(i64::MIN) - 1, Overflow::Sat),
            Some(i64::MIN)
        );
    }
}
