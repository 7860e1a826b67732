//! Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP (BITFIELD is in
//! `bitfield`). A bitmap is a string (`Value::Str`): bit 0 is the most
//! significant bit of byte 0, and a string grows with zero bytes when a write
//! reaches past its end, as in Redis. An integer written by SET or INCR is
//! stored as its decimal text, so its bits are those of the text.
//!
//! Writes edit the stored buffer in place (`strings::writable`), so SETBIT on
//! a large string costs O(1), not a copy; counting and searching go a 64-bit
//! word at a time.

use bytes::Bytes;

use super::args::{err, int_arg, Keyword, Reply};
use super::strings::as_str;
use super::{shard_of, Ctx, Session, ShardData};
use crate::exec::{Action, Job, Op, Out};
use crate::resp::Frame;
use crate::store::notify::{GENERIC, STRING};
use crate::store::{Keyspace, Str, StrForm, Value};

const BAD_OFFSET: &str = "ERR bit offset is not an integer or out of range";
const BAD_BIT: &str = "ERR bit is not an integer or out of range";

/// Parses a bit offset as Redis does: a non-negative integer whose byte lies
/// below `proto-max-bulk-len` (2^32 bits by default). With `width` set (a
/// BITFIELD type), `#n` means the n-th field of that width.
pub fn bit_offset(arg: &[u8], width: Option<u32>, max_bulk: usize) -> Result<u64, Frame> {
    let bad = || err::frame(BAD_OFFSET);
    let (text, scale) = match (arg.first(), width) {
        (Some(b'#'), Some(w)) => (&arg[1..], i64::from(w)),
        _ => (arg, 1),
    };
    let n = int_arg(text)
        .map_err(|_| bad())?
        .checked_mul(scale)
        .ok_or_else(bad)?;
    if n < 0 || (n >> 3) as u64 >= max_bulk as u64 {
        return Err(bad());
    }
    Ok(n as u64)
}

/// Runs `f` on the string at `key` made at least `len` bytes long (zero
/// bytes added, the key created when missing), with whether it was created
/// or grew; WRONGTYPE for another type. A key already there costs one
/// lookup, since every bit command comes here.
pub fn with_grown<T>(
    ks: &mut Keyspace<'_>,
    key: &[u8],
    len: usize,
    f: impl FnOnce(&mut Str, bool) -> T,
) -> Result<T, Frame> {
    if let Some(entry) = ks.get(key) {
        let Value::Str(stored) = &mut entry.value else {
            return Err(err::wrongtype());
        };
        let grew = stored.len() < len;
        if grew {
            stored.edit(len, |buf| buf.resize(len, 0));
            stored.set_form(StrForm::Raw);
        }
        return Ok(f(stored, grew));
    }
    ks.set_keep_ttl(
        key,
        Value::str_of(Bytes::from(vec![0u8; len]), StrForm::Raw),
    );
    match ks.get(key).map(|entry| &mut entry.value) {
        Some(Value::Str(stored)) => Ok(f(stored, true)),
        _ => unreachable!("just stored"),
    }
}

/// Runs `f` on the stored buffer of a string (already long enough) without
/// copying it when nothing else holds it.
pub fn edit<T>(stored: &mut Str, f: impl FnOnce(&mut [u8]) -> T) -> T {
    let len = stored.len();
    stored.edit(len, |buf| f(buf))
}

fn max_bulk(ctx: &Ctx) -> usize {
    ctx.shard.shared.config.max_bulk_len()
}

/// The bit at `offset` (0 past the end).
pub fn bit_at(s: &[u8], offset: u64) -> u8 {
    s.get((offset >> 3) as usize)
        .map_or(0, |b| (b >> (7 - (offset & 7))) & 1)
}

pub fn setbit(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let offset = bit_offset(&argv[2], None, max_bulk(ctx))?;
    let on = match int_arg(&argv[3]) {
        Ok(v @ (0 | 1)) => v as u8,
        _ => return Err(err::frame(BAD_BIT)),
    };
    let mut ks = ctx.ks();
    let byte = (offset >> 3) as usize;
    let (old, changed) = with_grown(&mut ks, key, byte + 1, |stored, grew| {
        let old = bit_at(stored, offset);
        // Rewriting the bit it holds changes nothing (unless the string grew).
        if old != on {
            let mask = 1u8 << (7 - (offset & 7));
            edit(stored, |buf| buf[byte] = (buf[byte] & !mask) | (on * mask));
        }
        (old, grew || old != on)
    })?;
    if changed {
        ks.notify(STRING, "setbit", key);
    }
    Ok(Frame::Integer(i64::from(old)))
}

pub fn getbit(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let offset = bit_offset(&argv[2], None, max_bulk(ctx))?;
    let bit = match ctx.ks().read(&argv[1]) {
        Some(entry) => bit_at(as_str(entry)?, offset),
        None => 0,
    };
    Ok(Frame::Integer(i64::from(bit)))
}

/// Set bits in `bytes`, a 64-bit word at a time.
pub fn popcount(bytes: &[u8]) -> u64 {
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let mut n: u64 = words
        .map(|w| u64::from(u64::from_ne_bytes(w.try_into().expect("8 bytes")).count_ones()))
        .sum();
    n += tail.iter().map(|b| u64::from(b.count_ones())).sum::<u64>();
    n
}

/// Set bits among bits `first..=last` of `s` (both inside it).
fn count_bits(s: &[u8], first: u64, last: u64) -> u64 {
    let (a, b) = ((first >> 3) as usize, (last >> 3) as usize);
    let mut n = popcount(&s[a..=b]);
    // Take off the bits of the edge bytes that lie outside the range.
    let before = !(0xffu8 >> (first & 7));
    let after = if last & 7 == 7 {
        0
    } else {
        0xffu8 >> ((last & 7) + 1)
    };
    n -= u64::from((s[a] & before).count_ones());
    n -= u64::from((s[b] & after).count_ones());
    n
}

/// Redis's range over a `len`-unit string: negative indexes count from the
/// end, then both clamp into the string; None when nothing is left.
fn clamp(start: i64, end: i64, len: i64) -> Option<(u64, u64)> {
    let fix = |i: i64| if i < 0 { (len + i).max(0) } else { i };
    let (start, end) = (fix(start), fix(end).min(len - 1));
    (start <= end).then_some((start as u64, end as u64))
}

/// Whether a range's unit word says BIT (else BYTE; anything else errs).
fn unit_is_bit(word: &[u8]) -> Result<bool, Frame> {
    let w = Keyword::new(word);
    if w.is("BIT") {
        Ok(true)
    } else if w.is("BYTE") {
        Ok(false)
    } else {
        Err(err::syntax())
    }
}

pub fn bitcount(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    // Redis looks the key up first: a missing key counts 0 whatever follows.
    let s = match ctx.ks().read(&argv[1]) {
        Some(entry) => as_str(entry)?.to_bytes(),
        None => return Ok(Frame::Integer(0)),
    };
    let len = s.len() as i64;
    let range = match argv.len() {
        2 => clamp(0, -1, len).map(|(a, b)| (a * 8, b * 8 + 7)),
        4 | 5 => {
            let (start, end) = (int_arg(&argv[2])?, int_arg(&argv[3])?);
            if start < 0 && end < 0 && start > end {
                return Ok(Frame::Integer(0));
            }
            if argv.len() == 5 && unit_is_bit(&argv[4])? {
                clamp(start, end, len * 8)
            } else {
                clamp(start, end, len).map(|(a, b)| (a * 8, b * 8 + 7))
            }
        }
        _ => return Err(err::syntax()),
    };
    let n = range.map_or(0, |(a, b)| count_bits(&s, a, b));
    Ok(Frame::Integer(n as i64))
}

/// The first bit equal to `bit` among bits `first..=last` of `s` (inside
/// it): bit by bit up to a byte boundary, then whole bytes a word at a time
/// (skipping words of all the other bit), then the tail bit by bit.
pub fn find_bit(s: &[u8], bit: u8, first: u64, last: u64) -> Option<u64> {
    let mut i = first;
    while i <= last && i & 7 != 0 {
        if bit_at(s, i) == bit {
            return Some(i);
        }
        i += 1;
    }
    let skip = if bit == 1 { 0u8 } else { 0xff };
    let whole = if i + 7 <= last { (last + 1 - i) / 8 } else { 0 };
    let start = (i >> 3) as usize;
    let bytes = &s[start..start + whole as usize];
    // Skip 64-byte blocks made only of the other bit: a fold of a fixed
    // length, which the compiler turns into vector operations.
    let (blocks, _) = bytes.as_chunks::<64>();
    let at = 64
        * blocks
            .iter()
            .position(|block| block.iter().fold(0u8, |acc, &b| acc | (b ^ skip)) != 0)
            .unwrap_or(blocks.len());
    if let Some(k) = bytes[at..].iter().position(|&b| b != skip) {
        let b = bytes[at + k];
        let b = if bit == 1 { b } else { !b };
        return Some(((start + at + k) as u64) * 8 + u64::from(b.leading_zeros()));
    }
    i += whole * 8;
    (i..=last).find(|&j| bit_at(s, j) == bit)
}

pub fn bitpos(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let bit = match int_arg(&argv[2])? {
        v @ (0 | 1) => v as u8,
        _ => return Err(err::frame("ERR The bit argument must be 1 or 0.")),
    };
    // A missing key is an endless run of zeros.
    let s = match ctx.ks().read(&argv[1]) {
        Some(entry) => as_str(entry)?.clone(),
        None => return Ok(Frame::Integer(if bit == 1 { -1 } else { 0 })),
    };
    let len = s.len() as i64;
    let (range, end_given) = match argv.len() {
        3 => (clamp(0, -1, len).map(|(a, b)| (a * 8, b * 8 + 7)), false),
        4..=6 => {
            let start = int_arg(&argv[3])?;
            let is_bit = argv.len() == 6 && unit_is_bit(&argv[5])?;
            let end = match argv.get(4) {
                Some(e) => Some(int_arg(e)?),
                None => None,
            };
            let range = if is_bit {
                clamp(start, end.unwrap_or(len * 8 - 1), len * 8)
            } else {
                clamp(start, end.unwrap_or(len - 1), len).map(|(a, b)| (a * 8, b * 8 + 7))
            };
            (range, end.is_some())
        }
        _ => return Err(err::syntax()),
    };
    let Some((first, last)) = range else {
        return Ok(Frame::Integer(-1));
    };
    Ok(Frame::Integer(match find_bit(&s, bit, first, last) {
        Some(pos) => pos as i64,
        // No clear bit: without an explicit end the string continues with
        // zeros, so the first one is just past it.
        None if bit == 0 && !end_given => len * 8,
        None => -1,
    }))
}

/// A BITOP operation.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// Parses BITOP's operation and checks NOT's single source.
fn parse_op(argv: &[Bytes]) -> Result<BitOp, Frame> {
    let w = Keyword::new(&argv[1]);
    let op = [
        ("AND", BitOp::And),
        ("OR", BitOp::Or),
        ("XOR", BitOp::Xor),
        ("NOT", BitOp::Not),
    ]
    .into_iter()
    .find(|(name, _)| w.is(name))
    .map(|(_, op)| op)
    .ok_or_else(err::syntax)?;
    if op == BitOp::Not && argv.len() != 4 {
        return Err(err::frame(
            "ERR BITOP NOT must be called with a single source key.",
        ));
    }
    Ok(op)
}

/// The result of `op` over `sources` (a missing key is an empty string);
/// shorter strings count as padded with zero bytes to the longest.
pub fn compute(op: BitOp, sources: &[&[u8]]) -> Vec<u8> {
    let len = sources.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![0u8; len];
    let Some((head, rest)) = sources.split_first() else {
        return out;
    };
    out[..head.len()].copy_from_slice(head);
    match op {
        BitOp::Not => out.iter_mut().for_each(|b| *b = !*b),
        BitOp::And => {
            for src in rest {
                out.iter_mut()
                    .enumerate()
                    .for_each(|(i, b)| *b &= src.get(i).copied().unwrap_or(0));
            }
        }
        BitOp::Or | BitOp::Xor => {
            for src in rest {
                let apply = |b: &mut u8, x: &u8| match op {
                    BitOp::Or => *b |= x,
                    _ => *b ^= x,
                };
                out.iter_mut()
                    .zip(src.iter())
                    .for_each(|(b, x)| apply(b, x));
            }
        }
    }
    out
}

/// Stores BITOP's result at `dst` (its TTL cleared) or, when empty, deletes
/// it; replies the result's length.
fn store_result(ks: &mut Keyspace<'_>, dst: &[u8], result: Vec<u8>) -> Frame {
    let len = result.len() as i64;
    if result.is_empty() {
        if ks.remove(dst).is_some() {
            ks.notify(GENERIC, "del", dst);
        }
    } else {
        ks.set(dst, Value::str_of(Bytes::from(result), StrForm::Raw), None);
        ks.notify(STRING, "set", dst);
    }
    Frame::Integer(len)
}

/// The string at `key` for BITOP (None when missing), or WRONGTYPE.
fn source(ks: &mut Keyspace<'_>, key: &[u8]) -> Result<Option<Bytes>, Frame> {
    match ks.read(key) {
        Some(entry) => Ok(Some(as_str(entry)?.to_bytes())),
        None => Ok(None),
    }
}

fn finish(ks: &mut Keyspace<'_>, op: BitOp, dst: &[u8], sources: &[Option<Bytes>]) -> Frame {
    let slices: Vec<&[u8]> = sources
        .iter()
        .map(|s| s.as_deref().unwrap_or(&[]))
        .collect();
    store_result(ks, dst, compute(op, &slices))
}

pub fn bitop(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let op = parse_op(argv)?;
    let mut ks = ctx.ks();
    let sources = argv[3..]
        .iter()
        .map(|key| source(&mut ks, key))
        .collect::<Result<Vec<_>, Frame>>()?;
    Ok(finish(&mut ks, op, &argv[2], &sources))
}

/// BITOP with its keys on several shards (run under their key locks): each
/// source's owner sends its string (a shared buffer, not a copy), then the
/// destination's owner computes and stores the result.
pub fn bitop_across(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let op = match parse_op(argv) {
        Ok(op) => op,
        Err(e) => return Action::Reply(e),
    };
    let (n, db) = (shard.shared.nshards, session.db);
    let reads = argv[3..]
        .iter()
        .map(|key| {
            let owner = shard_of(key, n);
            let key = key.clone();
            let read = Op::store(db, move |ctx| match source(&mut ctx.ks(), &key) {
                Ok(s) => Out::Entry(s.map(|s| (Value::str_of(s, StrForm::Raw), None))),
                Err(e) => Out::Frame(e),
            });
            (owner, read)
        })
        .collect();
    let dst = argv[2].clone();
    Action::Job(
        Job::new(reads, move |outs| {
            let mut sources = Vec::with_capacity(outs.len());
            for out in outs {
                match out {
                    Out::Entry(Some((Value::Str(s), _))) => sources.push(Some(s.into_bytes())),
                    Out::Entry(_) => sources.push(None),
                    other => return Action::Reply(other.frame()),
                }
            }
            Action::Job(Job::single(shard_of(&dst, n), db, move |ctx| {
                Out::Frame(finish(&mut ctx.ks(), op, &dst, &sources))
            }))
        })
        .ordered(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit `i` of `s`, one at a time: the model the fast paths must match.
    fn bits(s: &[u8]) -> Vec<u8> {
        (0..s.len() as u64 * 8).map(|i| bit_at(s, i)).collect()
    }

    fn sample(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Mostly runs of 0x00 and 0xff so searches skip whole words.
                match x % 5 {
                    0 => x as u8,
                    1 | 2 => 0,
                    _ => 0xff,
                }
            })
            .collect()
    }

    #[test]
    fn count_and_find_match_bit_by_bit() {
        for seed in 1..40u64 {
            let s = sample((seed % 37) as usize + 1, seed);
            let model = bits(&s);
            let nbits = model.len() as u64;
            for first in (0..nbits).step_by(3) {
                for last in (first..nbits).step_by(5) {
                    let range = &model[first as usize..=last as usize];
                    let ones = range.iter().filter(|&&b| b == 1).count() as u64;
                    assert_eq!(count_bits(&s, first, last), ones);
                    for bit in [0, 1] {
                        let want = range
                            .iter()
                            .position(|&b| b == bit)
                            .map(|p| p as u64 + first);
                        assert_eq!(find_bit(&s, bit, first, last), want, "{s:?} {first} {last}");
                    }
                }
            }
        }
    }

    #[test]
    fn find_skips_whole_blocks_of_the_other_bit() {
        for (fill, bit) in [(0u8, 1u8), (0xff, 0)] {
            for len in [63usize, 64, 65, 200, 300] {
                for target in [0, 7, 511, 512, 520, len * 8 - 1] {
                    if target >= len * 8 {
                        continue;
                    }
                    let mut s = vec![fill; len];
                    s[target / 8] ^= 0x80 >> (target % 8);
                    let last = len as u64 * 8 - 1;
                    for first in [0u64, 3, 8, 100] {
                        let want = (target as u64 >= first).then_some(target as u64);
                        assert_eq!(
                            find_bit(&s, bit, first, last),
                            want,
                            "{len} {target} {first}"
                        );
                    }
                    assert_eq!(count_bits(&s, 0, last), popcount(&s));
                }
            }
        }
    }

    #[test]
    fn popcount_counts_words_and_tail() {
        assert_eq!(popcount(b""), 0);
        assert_eq!(popcount(&[0xff; 17]), 136);
        assert_eq!(popcount(b"foobar"), 26);
    }

    #[test]
    fn ops_pad_shorter_strings_with_zeros() {
        assert_eq!(compute(BitOp::And, &[b"\xff\xff", b"\x0f"]), b"\x0f\x00");
        assert_eq!(compute(BitOp::Or, &[b"\x01", b"\x10\x02"]), b"\x11\x02");
        assert_eq!(compute(BitOp::Xor, &[b"\xff", b"\x0f\x01"]), b"\xf0\x01");
        assert_eq!(compute(BitOp::Not, &[b"\x0f"]), b"\xf0");
        assert_eq!(compute(BitOp::And, &[b"", b""]), b"");
    }

    #[test]
    fn offsets_follow_redis_limits() {
        let max = 512 * 1024 * 1024;
        assert_eq!(bit_offset(b"4294967295", None, max), Ok(4294967295));
        assert!(bit_offset(b"4294967296", None, max).is_err());
        assert!(bit_offset(b"-1", None, max).is_err());
        assert!(bit_offset(b"#2", None, max).is_err());
        assert_eq!(bit_offset(b"#2", Some(8), max), Ok(16));
        assert!(bit_offset(b"#-1", Some(8), max).is_err());
        assert!(bit_offset(b"#9223372036854775807", Some(8), max).is_err());
    }

    #[test]
    fn ranges_clamp_as_redis() {
        assert_eq!(clamp(0, -1, 6), Some((0, 5)));
        assert_eq!(clamp(-2, 100, 6), Some((4, 5)));
        assert_eq!(clamp(-100, -200, 6), Some((0, 0)));
        assert_eq!(clamp(3, 2, 6), None);
        assert_eq!(clamp(0, -1, 0), None);
    }
}
