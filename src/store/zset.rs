//! Sorted set: members ordered by (score, member), as Redis orders them.
//!
//! A hash map gives O(1) score lookup by member; an ordered set of
//! (score, member) gives O(log n) insert, remove and range walks (the roles
//! of Redis's dict and skiplist).

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;

use ahash::RandomState;
use bytes::Bytes;

/// A score with a total order. Requires: never NaN (callers reject NaN).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.partial_cmp(&other.0).unwrap_or(Ordering::Equal)
    }
}

/// One end of a score range: `(5` is exclusive, `5` inclusive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreBound {
    pub value: f64,
    pub exclusive: bool,
}

impl ScoreBound {
    /// Parses Redis's range syntax (`-inf`, `+inf`, `(1.5`, `2`).
    pub fn parse(text: &[u8]) -> Option<ScoreBound> {
        let (exclusive, number) = match text.split_first() {
            Some((b'(', rest)) => (true, rest),
            _ => (false, text),
        };
        let value = crate::util::num::parse_f64(number)?;
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

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZSet {
    scores: HashMap<Bytes, f64, RandomState>,
    ordered: BTreeSet<(Score, Bytes)>,
}

impl ZSet {
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
        match self.scores.get_mut(member) {
            Some(old) => {
                let previous = *old;
                if previous != score {
                    let key = Bytes::copy_from_slice(member);
                    self.ordered.remove(&(Score(previous), key.clone()));
                    self.ordered.insert((Score(score), key));
                    *old = score;
                }
                Some(previous)
            }
            None => {
                let key = Bytes::copy_from_slice(member);
                self.scores.insert(key.clone(), score);
                self.ordered.insert((Score(score), key));
                None
            }
        }
    }

    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove_entry(member) {
            Some((key, score)) => {
                self.ordered.remove(&(Score(score), key));
                true
            }
            None => false,
        }
    }

    /// Members with scores in `[min, max]` in order, skipping `offset` and
    /// returning at most `limit` (None: all).
    pub fn range_by_score(
        &self,
        min: ScoreBound,
        max: ScoreBound,
        offset: usize,
        limit: Option<usize>,
    ) -> Vec<(Bytes, f64)> {
        if min.value > max.value {
            return Vec::new();
        }
        let start = (Score(min.value), Bytes::new());
        self.ordered
            .range((Bound::Included(start), Bound::Unbounded))
            .skip_while(|(s, _)| !min.admits_above(s.0))
            .take_while(|(s, _)| max.admits_below(s.0))
            .skip(offset)
            .take(limit.unwrap_or(usize::MAX))
            .map(|(s, m)| (m.clone(), s.0))
            .collect()
    }

    /// Members of 0-based ranks `lo..=hi`, ascending, or descending from
    /// `hi` with `rev`. Requires: `lo <= hi < len`.
    pub fn between(&self, lo: usize, hi: usize, rev: bool) -> impl Iterator<Item = (&Bytes, f64)> {
        let ascending = self.ordered.iter().skip(lo).take(hi - lo + 1);
        let ranks: Box<dyn Iterator<Item = &(Score, Bytes)>> = if rev {
            Box::new(ascending.rev())
        } else {
            Box::new(ascending)
        };
        ranks.map(|(s, m)| (m, s.0))
    }

    /// Every member, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (&Bytes, f64)> {
        self.ordered.iter().map(|(s, m)| (m, s.0))
    }

    /// Rough heap footprint in bytes.
    pub fn heap_size(&self) -> usize {
        self.scores.keys().map(|k| k.len() * 2 + 64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(text: &str) -> ScoreBound {
        ScoreBound::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn orders_by_score_then_member_and_updates() {
        let mut z = ZSet::default();
        assert_eq!(z.insert(b"b", 2.0), None);
        assert_eq!(z.insert(b"a", 2.0), None);
        assert_eq!(z.insert(b"c", 1.0), None);
        assert_eq!(z.insert(b"c", 3.0), Some(1.0));
        let all = z.range_by_score(bound("-inf"), bound("+inf"), 0, None);
        let names: Vec<&[u8]> = all.iter().map(|(m, _)| m.as_ref()).collect();
        assert_eq!(names, vec![&b"a"[..], b"b", b"c"]);
        assert!(z.remove(b"a"));
        assert!(!z.remove(b"a"));
        assert_eq!(z.len(), 2);
        assert_eq!(z.score(b"c"), Some(3.0));
    }

    #[test]
    fn ranges_honour_exclusive_bounds_and_limits() {
        let mut z = ZSet::default();
        for (i, m) in ["a", "b", "c", "d"].iter().enumerate() {
            z.insert(m.as_bytes(), i as f64);
        }
        let names = |v: Vec<(Bytes, f64)>| v.into_iter().map(|(m, _)| m).collect::<Vec<_>>();
        assert_eq!(
            names(z.range_by_score(bound("(1"), bound("3"), 0, None)),
            vec!["c", "d"]
        );
        assert_eq!(
            names(z.range_by_score(bound("1"), bound("(3"), 0, None)),
            vec!["b", "c"]
        );
        assert_eq!(
            names(z.range_by_score(bound("0"), bound("10"), 1, Some(2))),
            vec!["b", "c"]
        );
        assert!(z.range_by_score(bound("5"), bound("1"), 0, None).is_empty());
        assert!(ScoreBound::parse(b"abc").is_none());
    }
}
