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

type Map = HashMap<Bytes, f64, RandomState>;

/// Units of compaction work (`SkipList::compact`, `Scores::migrate_slots`)
/// every write to a sorted set may do, besides one per [`PER_REMOVED`]
/// members it removed. A write does O(log n) work already; this adds a few
/// microseconds at most.
const TIDY_BUDGET: usize = 16;

/// A write that removed many members (ZREMRANGEBYRANK, ZPOPMIN with a
/// count) may also spend a unit per this many of them: enough that big
/// removals pay for much of their own compaction, few enough not to slow
/// them much (a unit per member made ZREMRANGEBYRANK of 500k members of a
/// 1M set 2.3 times as slow, 170 ms against 75 ms: its nodes left were all
/// at the arena's end, each to be moved). One that removed at least as
/// many as are left rebuilds the set instead (see [`ZSet::tidy`]).
const PER_REMOVED: usize = 4;

/// Member to score, a map that shrinks a step at a time: once it is less
/// than a quarter full, a map sized for what is left takes over, and the
/// members still in the old one move across as the skiplist's arena slots
/// are visited in order (`cursor`), a few per write, as Redis rehashes its
/// dicts. Every member still in `old` has its node at slot `cursor` or
/// above: members are added to `map`, a member is moved before its score
/// changes, and a node moved down the arena has its member moved with it.
#[derive(Clone, Default)]
struct Scores {
    map: Map,
    old: Option<Map>,
    cursor: usize,
}

impl Scores {
    fn len(&self) -> usize {
        self.map.len() + self.old.as_ref().map_or(0, Map::len)
    }

    fn get(&self, member: &[u8]) -> Option<f64> {
        self.map
            .get(member)
            .or_else(|| self.old.as_ref()?.get(member))
            .copied()
    }

    /// The score of `member`, moved to the new map first if still in the old.
    fn get_mut(&mut self, member: &[u8]) -> Option<&mut f64> {
        self.migrate(member);
        self.map.get_mut(member)
    }

    fn remove(&mut self, member: &[u8]) -> Option<f64> {
        self.map
            .remove(member)
            .or_else(|| self.old.as_mut()?.remove(member))
    }

    /// Moves `member` to the new map if it is in the old one.
    fn migrate(&mut self, member: &[u8]) {
        if let Some(old) = &mut self.old {
            if let Some((member, score)) = old.remove_entry(member) {
                self.map.insert(member, score);
            }
        }
    }

    /// Starts moving to a smaller map when this one is mostly empty.
    fn shrink_if_sparse(&mut self) {
        let capacity = self.map.capacity();
        if self.old.is_none() && capacity > 1024 && self.map.len() * 4 < capacity {
            let smaller = Map::with_capacity_and_hasher(self.map.len() * 2, RandomState::new());
            self.old = Some(std::mem::replace(&mut self.map, smaller));
            self.cursor = 0;
        }
    }

    /// Moves the members of the next arena slots to the new map, up to
    /// `budget` slots; once past the last slot the old map is empty and
    /// freed. Returns the units spent.
    fn migrate_slots(&mut self, list: &SkipList, budget: usize) -> usize {
        if self.old.is_none() {
            return 0;
        }
        let mut spent = 0;
        while spent < budget && self.cursor < list.slots() {
            if let Some(member) = list.member_in_slot(self.cursor) {
                self.migrate(member);
            }
            self.cursor += 1;
            spent += 1;
        }
        if self.cursor >= list.slots() {
            let old = self.old.take().expect("checked above");
            debug_assert!(old.is_empty());
            // Freeing a big table hands its pages back to the OS at once.
            let bytes = old.capacity() * std::mem::size_of::<(Bytes, f64)>();
            if bytes >= crate::store::lazyfree::OFF_THREAD_FREE_BYTES {
                crate::store::lazyfree::drop_off_thread(old);
            }
            spent += 1;
        }
        spent
    }

    fn capacity(&self) -> usize {
        self.map.capacity() + self.old.as_ref().map_or(0, Map::capacity)
    }
}

#[derive(Clone, Default)]
pub struct ZSet {
    scores: Scores,
    list: SkipList,
    /// Bytes of all members (shared by the map and the list).
    member_bytes: usize,
    /// Arena slots are being given back (see [`ZSet::tidy`]).
    compacting: bool,
    /// Units of compaction work done so far (tests check each write's share).
    #[cfg(test)]
    tidy_work: usize,
}

impl ZSet {
    /// A set of `pairs`, which must not repeat a member. Sorts, then builds
    /// the list in one pass.
    pub fn from_pairs(mut pairs: Vec<(Bytes, f64)>) -> ZSet {
        for (_, score) in pairs.iter_mut() {
            *score = normalize(*score);
        }
        pairs.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        let mut scores = Map::with_capacity_and_hasher(pairs.len(), RandomState::new());
        let mut member_bytes = 0;
        for (member, score) in &pairs {
            member_bytes += member.len();
            scores.insert(member.clone(), *score);
        }
        ZSet {
            scores: Scores {
                map: scores,
                ..Scores::default()
            },
            list: SkipList::from_sorted(pairs),
            member_bytes,
            compacting: false,
            #[cfg(test)]
            tidy_work: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member)
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
                self.tidy(0);
                Some(previous)
            }
            None => {
                let key = Bytes::copy_from_slice(member);
                self.member_bytes += key.len();
                self.scores.map.insert(key.clone(), score);
                self.list.insert(score, key);
                self.tidy(0);
                None
            }
        }
    }

    /// Removes `member`, returning its score.
    pub fn remove(&mut self, member: &[u8]) -> Option<f64> {
        let score = self.scores.remove(member)?;
        self.list.remove(score, member);
        self.member_bytes -= member.len();
        self.tidy(1);
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
            if self.scores.get(member) != Some(score) {
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
        self.tidy(removed.len());
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

    /// Gives memory back after removals, a bounded step per write, so a set
    /// that shrank follows its size without any one command paying for the
    /// whole set (the rebuild this replaced took 52 ms inside the one ZREM
    /// that found 500k free slots next to 500k members). Once more than
    /// half the arena is free, each write moves nodes out of its end
    /// ([`SkipList::compact`]) until no slot is free; once the map is less
    /// than a quarter full, each write moves members to a smaller one
    /// ([`Scores::migrate_slots`]). A write may spend [`TIDY_BUDGET`] units
    /// plus one per [`PER_REMOVED`] members it `removed`, so a set that is
    /// written to goes on shrinking; one never written again keeps its
    /// slack, as a Redis dict keeps its table until it is next touched.
    fn tidy(&mut self, removed: usize) {
        if removed >= self.len() && self.list.mostly_free() {
            // This write removed at least as many members as are left, so
            // building the set afresh costs it no more than its own work,
            // and less than moving the nodes one by one.
            let pairs: Vec<(Bytes, f64)> = self.list.iter().map(|(m, s)| (m.clone(), s)).collect();
            #[cfg(test)]
            let work = self.tidy_work + pairs.len();
            let old = std::mem::replace(self, ZSet::from_pairs(pairs));
            #[cfg(test)]
            {
                self.tidy_work = work;
            }
            crate::store::lazyfree::drop_off_thread(old);
            return;
        }
        let mut spent = 0;
        let budget = TIDY_BUDGET + removed / PER_REMOVED;
        if self.list.free_slots() > 0 && (self.compacting || self.list.mostly_free()) {
            self.compacting = true;
            let scores = &mut self.scores;
            spent += self
                .list
                .compact(budget, |member, _| scores.migrate(member));
            self.compacting = self.list.free_slots() > 0;
        }
        self.scores.shrink_if_sparse();
        spent += self
            .scores
            .migrate_slots(&self.list, budget.saturating_sub(spent));
        #[cfg(test)]
        {
            self.tidy_work += spent;
        }
        let _ = spent;
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
        self.len() == other.len() && self.iter().all(|(m, s)| other.score(m) == Some(s))
    }
}

impl fmt::Debug for ZSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests;
