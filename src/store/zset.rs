//! Sorted set: members ordered by (score, member), as Redis orders them,
//! plus the score and lex ranges commands select with.
//!
//! A hash map gives O(1) score lookup by member; an order-statistic skiplist
//! ([`skiplist`]) gives O(log n) insert, remove, rank and by-rank access
//! (the roles of Redis's dict and skiplist). Ranks here are 0-based.

pub mod skiplist;

use std::collections::HashMap;
use std::fmt;

use ahash::RandomState;
use bytes::Bytes;

pub use skiplist::RangeSpec;
use skiplist::SkipList;

/// One end of a score range: `(5` is exclusive, `5` inclusive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreBound {
    pub value: f64,
    pub exclusive: bool,
}

impl ScoreBound {
    /// Parses Redis's range syntax (`-inf`, `+inf`, `(1.5`, `2`) with the
    /// leniency of the `strtod` call Redis makes (see `parse_range_f64`).
    pub fn parse(text: &[u8]) -> Option<ScoreBound> {
        let (exclusive, number) = match text.split_first() {
            Some((b'(', rest)) => (true, rest),
            _ => (false, text),
        };
        let value = crate::util::num::parse_range_f64(number)?;
        Some(ScoreBound { value, exclusive })
    }

    fn admits_above(&self, score: f64) -> bool {
        if self.exclusive {
            score > self.value
        } else {
            score >= self.value
        }
    }

    fn admits_below(&self, score: f64) -> bool {
        if self.exclusive {
            score < self.value
        } else {
            score <= self.value
        }
    }
}

/// Scores between two bounds (ZRANGEBYSCORE, ZCOUNT, ...).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    pub min: ScoreBound,
    pub max: ScoreBound,
}

impl ScoreRange {
    /// Parses `min` and `max`; None if either is not a valid bound.
    pub fn parse(min: &[u8], max: &[u8]) -> Option<ScoreRange> {
        Some(ScoreRange {
            min: ScoreBound::parse(min)?,
            max: ScoreBound::parse(max)?,
        })
    }
}

impl RangeSpec for ScoreRange {
    fn before_start(&self, score: f64, _member: &[u8]) -> bool {
        !self.min.admits_above(score)
    }

    fn after_end(&self, score: f64, _member: &[u8]) -> bool {
        !self.max.admits_below(score)
    }
}

/// One end of a lex range: `-`, `+`, `[member` (inclusive), `(member`.
#[derive(Clone, Debug, PartialEq)]
pub enum LexBound {
    /// `-`: before every member.
    Min,
    /// `+`: after every member.
    Max,
    Inclusive(Bytes),
    Exclusive(Bytes),
}

impl LexBound {
    pub fn parse(text: &Bytes) -> Option<LexBound> {
        match text.first()? {
            b'-' if text.len() == 1 => Some(LexBound::Min),
            b'+' if text.len() == 1 => Some(LexBound::Max),
            b'[' => Some(LexBound::Inclusive(text.slice(1..))),
            b'(' => Some(LexBound::Exclusive(text.slice(1..))),
            _ => None,
        }
    }
}

/// Members between two lex bounds (ZRANGEBYLEX, ZLEXCOUNT, ...). Redis
/// defines these only for sets whose scores are all equal.
#[derive(Clone, Debug, PartialEq)]
pub struct LexRange {
    pub min: LexBound,
    pub max: LexBound,
}

impl LexRange {
    pub fn parse(min: &Bytes, max: &Bytes) -> Option<LexRange> {
        Some(LexRange {
            min: LexBound::parse(min)?,
            max: LexBound::parse(max)?,
        })
    }
}

impl RangeSpec for LexRange {
    fn before_start(&self, _score: f64, member: &[u8]) -> bool {
        match &self.min {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(m) => member < m.as_ref(),
            LexBound::Exclusive(m) => member <= m.as_ref(),
        }
    }

    fn after_end(&self, _score: f64, member: &[u8]) -> bool {
        match &self.max {
            LexBound::Min => true,
            LexBound::Max => false,
            LexBound::Inclusive(m) => member > m.as_ref(),
            LexBound::Exclusive(m) => member >= m.as_ref(),
        }
    }
}

/// Which end of the order to pop from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Min,
    Max,
}

#[derive(Clone, Default)]
pub struct ZSet {
    scores: HashMap<Bytes, f64, RandomState>,
    list: SkipList,
    /// Bytes of all members (shared by the map and the list).
    member_bytes: usize,
}

impl ZSet {
    /// A set of `pairs`, which must not repeat a member. Sorts, then builds
    /// the list in one pass.
    pub fn from_pairs(mut pairs: Vec<(Bytes, f64)>) -> ZSet {
        for (_, score) in pairs.iter_mut() {
            *score = normalize(*score);
        }
        pairs.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        let mut scores = HashMap::with_capacity_and_hasher(pairs.len(), RandomState::new());
        let mut member_bytes = 0;
        for (member, score) in &pairs {
            member_bytes += member.len();
            scores.insert(member.clone(), *score);
        }
        ZSet {
            scores,
            list: SkipList::from_sorted(pairs),
            member_bytes,
        }
    }

    pub fn len(&self) -> usize {
        self.scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }

    /// Sets `member`'s score. Returns the previous score, if any.
    /// Requires: `score` is not NaN.
    pub fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        let score = normalize(score);
        match self.scores.get_mut(member) {
            Some(old) => {
                let previous = *old;
                if previous != score {
                    *old = score;
                    self.list.update_score(previous, member, score);
                }
                Some(previous)
            }
            None => {
                let key = Bytes::copy_from_slice(member);
                self.member_bytes += key.len();
                self.scores.insert(key.clone(), score);
                self.list.insert(score, key);
                None
            }
        }
    }

    /// Removes `member`, returning its score.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let score = self.scores.remove(member)?;
        self.list.remove(score, member);
        self.member_bytes -= member.len();
        self.compact_if_sparse();
        Some(score)
    }

    /// `member`'s 0-based rank, counted from the lowest score or, with
    /// `rev`, from the highest.
    pub fn rank(&self, member: &[u8], rev: bool) -> Option<usize> {
        let score = self.score(member)?;
        let rank = self.list.rank(score, member)? - 1;
        Some(if rev { self.len() - 1 - rank } else { rank })
    }

    /// The 0-based ranks of the first and last members `range` admits.
    pub fn ranks_in(&self, range: &impl RangeSpec) -> Option<(usize, usize)> {
        let first = self.list.first_in_range(range)?;
        let last = self.list.last_in_range(range)?;
        (first <= last).then(|| (first - 1, last - 1))
    }

    /// How many members `range` admits.
    pub fn count_in(&self, range: &impl RangeSpec) -> usize {
        self.ranks_in(range)
            .map_or(0, |(first, last)| last - first + 1)
    }

    /// Members of 0-based ranks `lo..=hi`, ascending, or descending from
    /// `hi` with `rev`. Requires: `lo <= hi < len`.
    pub fn between(&self, lo: usize, hi: usize, rev: bool) -> impl Iterator<Item = (&Bytes, f64)> {
        let start = if rev { hi } else { lo };
        self.list.iter_from(start + 1, rev).take(hi - lo + 1)
    }

    /// Every member, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (&Bytes, f64)> {
        self.list.iter()
    }

    /// Checks that the score map and the ordered list hold the same members
    /// with the same scores, in order. For the fuzz harness (`DEBUG
    /// EMBER-CHECK`) and tests; O(n).
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut listed = 0;
        let mut prev: Option<(&Bytes, f64)> = None;
        for (member, score) in self.list.iter() {
            listed += 1;
            if self.scores.get(member) != Some(&score) {
                return Err(format!(
                    "member {member:?} listed with {score}, mapped to {:?}",
                    self.scores.get(member)
                ));
            }
            if let Some((pm, ps)) = prev {
                if ps.total_cmp(&score).then_with(|| pm.cmp(member)).is_ge() {
                    return Err(format!("{pm:?} ({ps}) listed before {member:?} ({score})"));
                }
            }
            prev = Some((member, score));
        }
        if listed != self.scores.len() {
            return Err(format!(
                "{listed} members listed, {} mapped",
                self.scores.len()
            ));
        }
        Ok(())
    }

    /// Removes the members of 0-based ranks `lo..=hi` (ascending order).
    pub fn remove_ranks(&mut self, lo: usize, hi: usize) -> Vec<(Bytes, f64)> {
        let removed = self.list.remove_rank_range(lo + 1, hi + 1);
        for (member, _) in &removed {
            self.scores.remove(member);
            self.member_bytes -= member.len();
        }
        self.compact_if_sparse();
        removed
    }

    /// Removes up to `count` members from one end, lowest first for `Min`,
    /// highest first for `Max` (ZPOPMIN / ZPOPMAX order).
    pub fn pop(&mut self, end: End, count: usize) -> Vec<(Bytes, f64)> {
        let count = count.min(self.len());
        if count == 0 {
            return Vec::new();
        }
        match end {
            End::Min => self.remove_ranks(0, count - 1),
            End::Max => {
                let mut popped = self.remove_ranks(self.len() - count, self.len() - 1);
                popped.reverse();
                popped
            }
        }
    }

    /// Rebuilds the list and shrinks the map when most of the arena is
    /// unused, so a set that shrank gives its memory back (amortized O(1)
    /// per removal).
    fn compact_if_sparse(&mut self) {
        if self.list.mostly_free() {
            let pairs: Vec<(Bytes, f64)> = self.list.iter().map(|(m, s)| (m.clone(), s)).collect();
            self.list = SkipList::from_sorted(pairs);
            self.scores.shrink_to_fit();
        }
    }

    /// Heap footprint in bytes: the map's table, the list's arena and the
    /// members (each stored once, shared by both).
    pub fn heap_size(&self) -> usize {
        let map_slot = std::mem::size_of::<(Bytes, f64)>() + 1;
        self.scores.capacity() * map_slot + self.list.heap_size() + self.member_bytes
    }
}

/// Scores are stored without the sign of zero: Redis keeps small sets in a
/// listpack, which writes -0 back as 0, so `ZADD z -0 m` then `ZSCORE`
/// answers `0` there.
fn normalize(score: f64) -> f64 {
    score + 0.0
}

/// Equal when they hold the same members with the same scores, whatever
/// the shape of their lists.
impl PartialEq for ZSet {
    fn eq(&self, other: &Self) -> bool {
        self.scores == other.scores
    }
}

impl fmt::Debug for ZSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests;
