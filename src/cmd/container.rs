//! Commands over the elements of any container: random picks
//! (SRANDMEMBER, HRANDFIELD, ZRANDMEMBER) and cursor walks (SSCAN, HSCAN,
//! ZSCAN), through one positional view of sets, hashes and sorted sets.
//!
//! # Positions
//!
//! A set's or a hash's elements have the positions of its `IndexSet` or
//! `IndexMap`; a sorted set's are its ranks by (score, member).
//!
//! # Random picks
//!
//! A positive count asks for distinct elements (all of them when the count
//! is at least the size), a negative one for `|count|` elements that may
//! repeat, and 0 for none.
//!
//! # Cursor walks
//!
//! A compact container (see [`crate::store::encoding`]) is answered whole
//! in one call with cursor 0, as Redis answers its intsets and listpacks.
//! A larger one is walked from its top position down, COUNT positions a
//! call; the cursor is how many positions are left to visit (0: done). How
//! changes between calls behave:
//!
//! - Sets and hashes: an insert appends at the top, which was visited
//!   already; a removal moves the top element into the hole (swap remove) or
//!   shifts the elements above it down by one (small hashes keep their
//!   order), so an unvisited element never moves into the visited part. An
//!   element present for the whole walk is returned at least once (maybe
//!   twice), as Redis promises.
//! - Sorted sets: removals behave the same, but a member added with a score
//!   below the cursor's rank pushes an unvisited member above the cursor,
//!   which is then missed, and a member whose score changes can cross the
//!   cursor. So ZSCAN returns every member when nothing changes below the
//!   cursor (new members scoring above it, as in time-ordered queues, are
//!   fine); Redis's dict cursor has no such gap.

use std::ops::Range;

use bytes::Bytes;
use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::args::{err, int_arg, Reply};
use super::keys::{scan_cursor, scan_options, scan_reply};
use super::Ctx;
use crate::resp::Frame;
use crate::store::encoding::sort_as_intset;
use crate::store::value::{Hash, Set};
use crate::store::zset::ZSet;
use crate::store::{Keyspace, Value};
use crate::util::glob::glob_match;
use crate::util::num::format_double;

/// What comes with an element: nothing for a set member, the value of a
/// hash field, the score of a sorted-set member.
pub enum Companion {
    None,
    Value(Bytes),
    Score(f64),
}

/// A container found in a value, and whether it is in its compact encoding
/// (which decides the order and the one-call answers Redis gives).
pub struct Found<'a, T> {
    items: &'a T,
    compact: bool,
}

impl<T> std::ops::Deref for Found<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.items
    }
}

/// A container seen as elements at positions `0..size`.
pub trait Elements: Sized {
    /// The container stored in `value`, if it holds this kind.
    fn of(value: &Value) -> Option<Found<'_, Self>>;

    fn size(&self) -> usize;

    /// The element at position `i`. Requires: `i < size`.
    fn element(&self, i: usize) -> (Bytes, Companion);

    /// The elements at `range`, ascending or, with `down`, from the top.
    fn elements(&self, range: Range<usize>, down: bool) -> Vec<(Bytes, Companion)> {
        if down {
            range.rev().map(|i| self.element(i)).collect()
        } else {
            range.map(|i| self.element(i)).collect()
        }
    }

    /// The elements at `positions`, in that order (random picks).
    /// Requires: every position below `size`.
    fn picks(&self, positions: &[usize]) -> Vec<(Bytes, Companion)> {
        positions.iter().map(|&i| self.element(i)).collect()
    }

    /// Every element, in the order Redis lists the compact encoding:
    /// by position (a listpack's order), unless overridden.
    fn compact_listing(&self) -> Vec<(Bytes, Companion)> {
        self.elements(0..self.size(), false)
    }

    /// Every element, in the order Redis answers a random pick that asks
    /// for all of them (positions ascending, unless overridden).
    fn whole(container: &Found<Self>) -> Vec<(Bytes, Companion)> {
        if container.compact {
            container.compact_listing()
        } else {
            container.elements(0..container.size(), false)
        }
    }
}

impl Elements for Set {
    fn of(value: &Value) -> Option<Found<'_, Set>> {
        match value {
            Value::Set(s) => Some(Found {
                items: s,
                compact: s.is_compact(),
            }),
            _ => None,
        }
    }

    fn size(&self) -> usize {
        self.len()
    }

    fn element(&self, i: usize) -> (Bytes, Companion) {
        (self[i].clone(), Companion::None)
    }

    /// An intset is sorted by value.
    fn compact_listing(&self) -> Vec<(Bytes, Companion)> {
        let mut members: Vec<Bytes> = self.iter().cloned().collect();
        sort_as_intset(&mut members);
        members.into_iter().map(|m| (m, Companion::None)).collect()
    }
}

impl Elements for Hash {
    fn of(value: &Value) -> Option<Found<'_, Hash>> {
        match value {
            Value::Hash(h) => Some(Found {
                items: h,
                compact: h.is_compact(),
            }),
            _ => None,
        }
    }

    fn size(&self) -> usize {
        self.len()
    }

    fn element(&self, i: usize) -> (Bytes, Companion) {
        let (field, value) = self.get_index(i).expect("position below size");
        pair(field, value)
    }

    /// A listpack finds position `i` by walking the `i` pairs before it, so
    /// a pick each through `element` costs O(picks x fields): 1M picks of a
    /// 500-field hash took 1.1 s (Redis: 0.1-0.2 s). Its pairs (at most
    /// `hash-max-listpack-entries`) are gathered once instead, O(picks +
    /// fields) as Redis's `lpRandomPairs`; a table reaches any position in
    /// O(1).
    fn picks(&self, positions: &[usize]) -> Vec<(Bytes, Companion)> {
        if !self.is_compact() {
            return positions.iter().map(|&i| self.element(i)).collect();
        }
        let pairs: Vec<(&[u8], &[u8])> = self.iter().collect();
        // A pair picked again shares the bytes copied the first time (a
        // count past the size repeats each pair many times).
        let mut copied: Vec<Option<(Bytes, Bytes)>> = vec![None; pairs.len()];
        positions
            .iter()
            .map(|&i| {
                let (field, value) = copied[i].get_or_insert_with(|| {
                    let (field, value) = pairs[i];
                    (Bytes::copy_from_slice(field), Bytes::copy_from_slice(value))
                });
                (field.clone(), Companion::Value(value.clone()))
            })
            .collect()
    }

    /// One walk of a listpack (HSCAN answers one whole) rather than one
    /// per position.
    fn elements(&self, range: Range<usize>, down: bool) -> Vec<(Bytes, Companion)> {
        if !self.is_compact() {
            return if down {
                range.rev().map(|i| self.element(i)).collect()
            } else {
                range.map(|i| self.element(i)).collect()
            };
        }
        let mut listed: Vec<_> = self
            .iter()
            .skip(range.start)
            .take(range.len())
            .map(|(field, value)| pair(field, value))
            .collect();
        if down {
            listed.reverse();
        }
        listed
    }
}

/// A hash field and its value, as a pick answers them.
fn pair(field: &[u8], value: &[u8]) -> (Bytes, Companion) {
    (
        Bytes::copy_from_slice(field),
        Companion::Value(Bytes::copy_from_slice(value)),
    )
}

impl Elements for ZSet {
    fn of(value: &Value) -> Option<Found<'_, ZSet>> {
        match value {
            Value::ZSet(z) => Some(Found {
                items: z,
                compact: z.is_compact(),
            }),
            _ => None,
        }
    }

    fn size(&self) -> usize {
        self.len()
    }

    fn element(&self, i: usize) -> (Bytes, Companion) {
        let (member, score) = self.between(i, i, false).next().expect("rank below size");
        (member.clone(), Companion::Score(score))
    }

    /// Redis answers a whole sorted set from the highest rank down.
    fn whole(container: &Found<ZSet>) -> Vec<(Bytes, Companion)> {
        container.elements(0..container.size(), true)
    }

    /// One walk of the ordered index rather than a lookup per rank.
    fn elements(&self, range: Range<usize>, down: bool) -> Vec<(Bytes, Companion)> {
        if range.is_empty() {
            return Vec::new();
        }
        self.between(range.start, range.end - 1, down)
            .map(|(member, score)| (member.clone(), Companion::Score(score)))
            .collect()
    }
}

/// The container of kind `T` at `key`: None when missing, WRONGTYPE when
/// the key holds something else.
fn lookup<'k, T: Elements>(
    ks: &'k mut Keyspace,
    key: &[u8],
) -> Result<Option<Found<'k, T>>, Frame> {
    match ks.read(key) {
        None => Ok(None),
        Some(entry) => T::of(&entry.value).map(Some).ok_or_else(err::wrongtype),
    }
}

// ---- Random picks ----

pub fn srandmember(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    random_pick::<Set>(ctx, argv, None)
}

pub fn hrandfield(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    random_pick::<Hash>(ctx, argv, Some("WITHVALUES"))
}

pub fn zrandmember(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    random_pick::<ZSet>(ctx, argv, Some("WITHSCORES"))
}

/// `key [count [flag]]`: one element (or nil) without a count, else an
/// array of picks, paired with their companions when `flag` is given.
fn random_pick<T: Elements>(ctx: &mut Ctx, argv: &[Bytes], flag: Option<&str>) -> Reply {
    let counted = match (argv.len(), flag) {
        (2, _) => None,
        (_, Some(flag)) => Some(parse_count_and_flag(&argv[2..], flag)?),
        (3, None) => Some((parse_count(&argv[2], false)?, false)),
        (_, None) => return Err(err::syntax()),
    };
    // Redis streams a repeating pick of any size into the client's output
    // buffer until memory runs out; ember builds the reply first, so one
    // command could take the whole server down. It refuses instead, once
    // the arguments passed Redis's own checks.
    if let Some((Pick::Repeating(n), _)) = counted {
        if n > MAX_REPEATED_PICKS {
            return Err(err::frame(&format!(
                "ERR value is out of range, a negative count picks at most {MAX_REPEATED_PICKS} elements"
            )));
        }
    }
    let (mut ks, rng) = keyspace_and_rng(ctx);
    let container = lookup::<T>(&mut ks, &argv[1])?;
    let Some((pick, paired)) = counted else {
        return Ok(container.map_or(Frame::Null, |c| {
            Frame::Bulk(c.element(below(c.size(), rng)).0)
        }));
    };
    let Some(container) = container else {
        return Ok(Frame::Array(Vec::new()));
    };
    let size = container.size();
    let elements = match pick {
        Pick::Distinct(n) if n >= size => T::whole(&container),
        pick => container.picks(&positions(size, pick, rng)),
    };
    let picks = elements
        .into_iter()
        .map(|(name, companion)| {
            let companion = match companion {
                Companion::None => Frame::Null,
                Companion::Value(v) => Frame::Bulk(v),
                Companion::Score(s) => Frame::Double(s),
            };
            (Frame::Bulk(name), companion)
        })
        .collect();
    Ok(random_reply(picks, paired))
}

/// How many elements a count argument asks for, and whether they may repeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    Distinct(usize),
    Repeating(usize),
}

/// The most elements one repeating pick (a negative count) may answer with.
pub const MAX_REPEATED_PICKS: usize = 1_000_000;

/// Parses a count the way Redis does: an integer within ±`i64::MAX`; when
/// every pick is answered as two items (`paired`: WITHVALUES, WITHSCORES),
/// within ±`i64::MAX / 2`, so the reply's length cannot overflow.
pub fn parse_count(arg: &[u8], paired: bool) -> Result<Pick, Frame> {
    let count = int_arg(arg)?;
    if count == i64::MIN {
        return Err(err::frame(
            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
        ));
    }
    if paired && count.unsigned_abs() > (i64::MAX / 2) as u64 {
        return Err(err::frame("ERR value is out of range"));
    }
    Ok(if count >= 0 {
        Pick::Distinct(count as usize)
    } else {
        Pick::Repeating(count.unsigned_abs() as usize)
    })
}

/// Parses `count [flag]` after a key (`flag` is WITHVALUES or WITHSCORES):
/// the pick and whether the flag was given. Errors come in Redis's order:
/// the count, then any other word, then a count too large for pairs.
pub fn parse_count_and_flag(rest: &[Bytes], flag: &str) -> Result<(Pick, bool), Frame> {
    parse_count(&rest[0], false)?;
    let paired = match rest.get(1) {
        None => false,
        Some(word) if rest.len() == 2 && word.eq_ignore_ascii_case(flag.as_bytes()) => true,
        Some(_) => return Err(err::syntax()),
    };
    Ok((parse_count(&rest[0], paired)?, paired))
}

/// The positions (in `0..len`) that `pick` selects. Distinct picks smaller
/// than the container come in random order; asking for at least all of
/// them gives every position in order, as Redis returns the whole container.
pub fn positions(len: usize, pick: Pick, rng: &mut impl RngCore) -> Vec<usize> {
    match pick {
        Pick::Distinct(n) if n >= len => (0..len).collect(),
        Pick::Distinct(n) => distinct(len, n, rng),
        Pick::Repeating(_) if len == 0 => Vec::new(),
        Pick::Repeating(n) => {
            // Grown as it fills, not sized up front: the count comes from the client.
            let mut picked = Vec::new();
            for _ in 0..n {
                picked.push(below(len, rng));
            }
            picked
        }
    }
}

/// `n` distinct positions of `0..len` by Floyd's sampling: O(n) time and
/// memory however large the container. Requires: `n <= len`.
fn distinct(len: usize, n: usize, rng: &mut impl RngCore) -> Vec<usize> {
    let mut chosen = indexmap::IndexSet::with_capacity(n);
    for top in len - n..len {
        let candidate = below(top + 1, rng);
        if !chosen.insert(candidate) {
            chosen.insert(top);
        }
    }
    let mut picked: Vec<usize> = chosen.into_iter().collect();
    // Floyd's order favours high positions late; shuffle for a fair order.
    for i in (1..picked.len()).rev() {
        picked.swap(i, below(i + 1, rng));
    }
    picked
}

/// A uniform position in `0..len` (the modulo bias is below 2^-40 for any
/// container that fits in memory). Requires: `len > 0`.
pub fn below(len: usize, rng: &mut impl RngCore) -> usize {
    (rng.next_u64() % len as u64) as usize
}

/// The keyspace of the command's database and the shard's random source.
pub fn keyspace_and_rng<'a>(ctx: &'a mut Ctx) -> (Keyspace<'a>, &'a mut Xoshiro256PlusPlus) {
    let (db, now) = (ctx.db, ctx.now_ms());
    let shard = &mut *ctx.shard;
    (shard.store.keyspace(db, now), shard.sweep.rng())
}

/// Each picked element as one item, or with WITHVALUES/WITHSCORES as a
/// pair (nested in RESP3, flat in RESP2).
fn random_reply(picks: Vec<(Frame, Frame)>, paired: bool) -> Frame {
    if paired {
        Frame::Pairs(picks)
    } else {
        Frame::Array(picks.into_iter().map(|(item, _)| item).collect())
    }
}

// ---- Cursor walks ----

pub fn sscan(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    cursor_walk::<Set>(ctx, argv)
}

pub fn hscan(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    cursor_walk::<Hash>(ctx, argv)
}

pub fn zscan(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    cursor_walk::<ZSet>(ctx, argv)
}

/// `key cursor [MATCH pattern] [COUNT count]`, checked in Redis's order:
/// the cursor, then the key (a missing one answers an empty walk before the
/// options are read), then the options.
fn cursor_walk<T: Elements>(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let cursor = scan_cursor(&argv[2])?;
    let mut ks = ctx.ks();
    let Some(container) = lookup::<T>(&mut ks, &argv[1])? else {
        return Ok(scan_reply(0, Vec::new()));
    };
    let opts = scan_options(&argv[3..], false)?;
    let compact = container.compact;
    let (range, next) = walk_step(container.size(), compact, cursor, opts.count);
    let elements = if compact {
        container.compact_listing()
    } else {
        container.elements(range, true)
    };
    let mut flat = Vec::new();
    for (name, companion) in elements {
        if opts
            .pattern
            .as_ref()
            .is_some_and(|p| !glob_match(p, &name, false))
        {
            continue;
        }
        flat.push(name);
        match companion {
            Companion::None => {}
            Companion::Value(v) => flat.push(v),
            Companion::Score(s) => flat.push(Bytes::from(format_double(s))),
        }
    }
    Ok(scan_reply(next, flat))
}

/// The positions one walk step visits and the cursor after it (see the
/// module doc): everything at once for a compact container, else up to
/// `count` positions below `cursor` (0: from the top).
fn walk_step(size: usize, compact: bool, cursor: u64, count: usize) -> (Range<usize>, u64) {
    if compact {
        return (0..size, 0);
    }
    let top = match cursor {
        0 => size,
        c => usize::try_from(c).unwrap_or(usize::MAX).min(size),
    };
    let bottom = top.saturating_sub(count);
    (bottom..top, bottom as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn walk_steps_go_down_from_the_top_and_end_at_zero() {
        assert_eq!(walk_step(25, false, 0, 10), (15..25, 15));
        assert_eq!(walk_step(25, false, 15, 10), (5..15, 5));
        assert_eq!(walk_step(25, false, 5, 10), (0..5, 0));
        // A container that shrank since: the cursor is clamped to its size.
        assert_eq!(walk_step(3, false, 15, 10), (0..3, 0));
        assert_eq!(walk_step(300, true, 77, 10), (0..300, 0));
    }

    #[test]
    fn count_then_word_then_pair_range() {
        let words = |w: &[&'static str]| {
            w.iter()
                .map(|s| Bytes::from_static(s.as_bytes()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            parse_count_and_flag(&words(&["x", "foo"]), "WITHVALUES"),
            Err(err::not_integer())
        );
        assert_eq!(
            parse_count_and_flag(&words(&["1", "foo"]), "WITHVALUES"),
            Err(err::syntax())
        );
        assert_eq!(
            parse_count_and_flag(&words(&["1", "withvalues", "x"]), "WITHVALUES"),
            Err(err::syntax())
        );
        assert_eq!(
            parse_count_and_flag(&words(&["-2", "WithValues"]), "WITHVALUES"),
            Ok((Pick::Repeating(2), true))
        );
        assert_eq!(
            parse_count_and_flag(&words(&["5"]), "WITHSCORES"),
            Ok((Pick::Distinct(5), false))
        );
    }

    #[test]
    fn counts_follow_redis_rules() {
        assert_eq!(parse_count(b"3", false), Ok(Pick::Distinct(3)));
        assert_eq!(parse_count(b"-3", true), Ok(Pick::Repeating(3)));
        assert_eq!(parse_count(b"0", false), Ok(Pick::Distinct(0)));
        assert_eq!(parse_count(b"x", false), Err(err::not_integer()));
        assert!(parse_count(b"-9223372036854775808", false).is_err());
        assert!(parse_count(b"-9223372036854775807", false).is_ok());
        assert!(parse_count(b"-4611686018427387903", true).is_ok());
        assert!(parse_count(b"4611686018427387903", true).is_ok());
        for too_far in ["-4611686018427387904", "4611686018427387904"] {
            assert_eq!(
                parse_count(too_far.as_bytes(), true),
                Err(err::frame("ERR value is out of range"))
            );
        }
        assert!(parse_count(b"4611686018427387904", false).is_ok());
    }

    #[test]
    fn distinct_picks_never_repeat_and_cover_small_containers() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for (len, n) in [(10, 3), (10, 9), (1000, 999), (5, 5), (5, 50), (0, 4)] {
            let picked = positions(len, Pick::Distinct(n), &mut rng);
            assert_eq!(picked.len(), n.min(len));
            let unique: std::collections::HashSet<_> = picked.iter().collect();
            assert_eq!(unique.len(), picked.len());
            assert!(picked.iter().all(|&p| p < len));
        }
        assert_eq!(positions(3, Pick::Distinct(7), &mut rng), vec![0, 1, 2]);
    }

    #[test]
    fn repeating_picks_have_the_asked_length_and_reach_every_position() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let picked = positions(4, Pick::Repeating(400), &mut rng);
        assert_eq!(picked.len(), 400);
        for p in 0..4 {
            assert!(picked.contains(&p), "position {p} never picked");
        }
        assert!(positions(0, Pick::Repeating(5), &mut rng).is_empty());
    }

    #[test]
    fn distinct_picks_are_spread_over_the_container() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut hits = [0u32; 10];
        for _ in 0..2000 {
            for p in positions(10, Pick::Distinct(2), &mut rng) {
                hits[p] += 1;
            }
        }
        // 400 expected per position.
        assert!(hits.iter().all(|&h| (300..500).contains(&h)), "{hits:?}");
    }
}
