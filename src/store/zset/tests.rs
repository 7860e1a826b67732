//! The sorted set against a naive model: a Vec kept sorted by (score, member).

use super::*;
use proptest::prelude::*;

fn bound(text: &str) -> ScoreBound {
    ScoreBound::parse(text.as_bytes()).unwrap()
}

fn score_range(min: &str, max: &str) -> ScoreRange {
    ScoreRange::parse(min.as_bytes(), max.as_bytes()).unwrap()
}

fn lex_range(min: &str, max: &str) -> LexRange {
    LexRange::parse(&Bytes::from(min.to_string()), &Bytes::from(max.to_string())).unwrap()
}

fn names<'a>(items: impl Iterator<Item = (&'a Bytes, f64)>) -> Vec<String> {
    items
        .map(|(m, _)| String::from_utf8(m.to_vec()).unwrap())
        .collect()
}

#[test]
fn orders_by_score_then_member_and_updates() {
    let mut z = ZSet::default();
    assert_eq!(z.insert(b"b", 2.0), None);
    assert_eq!(z.insert(b"a", 2.0), None);
    assert_eq!(z.insert(b"c", 1.0), None);
    assert_eq!(z.insert(b"c", 3.0), Some(1.0));
    assert_eq!(names(z.iter()), ["a", "b", "c"]);
    assert_eq!(z.remove(b"a"), Some(2.0));
    assert_eq!(z.remove(b"a"), None);
    assert_eq!(z.len(), 2);
    assert_eq!(z.score(b"c"), Some(3.0));
    z.list.check();
}

#[test]
fn ranks_and_by_rank_walks() {
    let mut z = ZSet::default();
    for (i, m) in ["a", "b", "c", "d"].iter().enumerate() {
        z.insert(m.as_bytes(), i as f64);
    }
    assert_eq!(z.rank(b"a", false), Some(0));
    assert_eq!(z.rank(b"a", true), Some(3));
    assert_eq!(z.rank(b"zz", false), None);
    assert_eq!(names(z.between(1, 2, false)), ["b", "c"]);
    assert_eq!(names(z.between(1, 3, true)), ["d", "c", "b"]);
    assert_eq!(
        z.pop(End::Max, 2),
        vec![(Bytes::from("d"), 3.0), (Bytes::from("c"), 2.0)]
    );
    assert_eq!(z.pop(End::Min, 9).len(), 2);
    assert!(z.is_empty());
    z.list.check();
}

#[test]
fn score_ranges_honour_exclusive_bounds() {
    let mut z = ZSet::default();
    for (i, m) in ["a", "b", "c", "d"].iter().enumerate() {
        z.insert(m.as_bytes(), i as f64);
    }
    assert_eq!(z.ranks_in(&score_range("(1", "3")), Some((2, 3)));
    assert_eq!(z.ranks_in(&score_range("1", "(3")), Some((1, 2)));
    assert_eq!(z.ranks_in(&score_range("-inf", "+inf")), Some((0, 3)));
    assert_eq!(z.ranks_in(&score_range("5", "1")), None);
    assert_eq!(z.ranks_in(&score_range("(1", "(2")), None);
    assert_eq!(z.count_in(&score_range("(0", "inf")), 3);
    assert!(ScoreBound::parse(b"abc").is_none());
    assert_eq!(bound("(2").value, 2.0);
}

#[test]
fn lex_ranges_follow_redis_syntax() {
    let mut z = ZSet::default();
    for m in ["a", "b", "c", "d"] {
        z.insert(m.as_bytes(), 0.0);
    }
    assert_eq!(z.ranks_in(&lex_range("-", "+")), Some((0, 3)));
    assert_eq!(z.ranks_in(&lex_range("[b", "(d")), Some((1, 2)));
    assert_eq!(z.ranks_in(&lex_range("(a", "[a")), None);
    assert_eq!(z.ranks_in(&lex_range("+", "-")), None);
    assert_eq!(z.ranks_in(&lex_range("[", "+")), Some((0, 3)));
    for bad in ["a", "", "-x", "+y"] {
        assert!(LexBound::parse(&Bytes::from(bad)).is_none(), "{bad}");
    }
}

#[test]
fn negative_zero_is_stored_as_zero() {
    let mut z = ZSet::default();
    z.insert(b"m", -0.0);
    assert!(z.score(b"m").unwrap().is_sign_positive());
}

#[test]
fn large_removals_shrink_the_arena() {
    // Removing 9,900 members of 10,000 rebuilds the set at once.
    let mut z = ZSet::default();
    for i in 0..10_000u32 {
        z.insert(format!("m{i}").as_bytes(), f64::from(i));
    }
    let full = z.heap_size();
    z.remove_ranks(0, 9_899);
    for i in 9_900..9_990u32 {
        z.remove(format!("m{i}").as_bytes());
    }
    z.list.check();
    assert_eq!(z.len(), 10);
    assert!(z.heap_size() < full / 10, "{} vs {full}", z.heap_size());
    assert_eq!(names(z.iter()).first().map(String::as_str), Some("m9990"));
}

/// The input, scaled down: a big set, half of it (less two) removed
/// by rank, then ZREMs until more slots are free than members are left.
/// The ZREM that crossed that line rebuilt the whole skiplist (52 ms at 1M
/// members); now each write does a bounded share of the compaction. (A
/// range removal of at least as many members as it leaves rebuilds the set
/// itself, at no more than its own cost: `large_removals_shrink_the_arena`.)
#[test]
fn a_remove_after_a_big_range_removal_does_bounded_work() {
    const N: u32 = 200_000;
    let pairs = (0..N).map(|i| (Bytes::from(format!("m{i}")), f64::from(i)));
    let mut z = ZSet::from_pairs(pairs.collect());
    let full = z.heap_size();
    z.remove_ranks(0, N as usize / 2 - 3);
    assert!(!z.compacting);
    // The budget, overrun at most by the last step's search (one unit a
    // level, 32 at most) and the two steps that end a compaction.
    let bound = TIDY_BUDGET + 1 + 1 + 32 + 2;
    for i in 1..=3 {
        let before = z.tidy_work;
        let m = format!("m{}", N - i);
        assert_eq!(z.remove(m.as_bytes()), Some(f64::from(N - i)));
        let one = z.tidy_work - before;
        assert!(one <= bound, "one ZREM did {one} units of compaction");
    }
    assert!(z.compacting);
    // Every later write does its share, and the set's memory comes back:
    // the arena's free slots and the map's old table are gone after some
    // writes (at most about 2 units of work per member left, 16 a write).
    let mut writes = 0;
    while z.compacting || z.scores.old.is_some() {
        let before = z.tidy_work;
        let m = format!("m{}", N / 2 + writes % 1000);
        z.insert(m.as_bytes(), -f64::from(writes));
        assert!(z.tidy_work - before <= bound);
        writes += 1;
        assert!(writes < N, "compaction never ended");
    }
    z.list.check();
    z.check_invariants().unwrap();
    assert_eq!(z.list.free_slots(), 0);
    assert_eq!(z.len(), N as usize / 2 - 1);
    assert!(z.scores.map.capacity() < N as usize);
    assert!(z.heap_size() < full * 3 / 5, "{} of {full}", z.heap_size());
}

/// Compaction and the map's move to a smaller table, interleaved with every
/// kind of write, keep the set's invariants and its content.
#[test]
fn writes_during_compaction_keep_the_set_whole() {
    let mut z = ZSet::default();
    let mut model = std::collections::BTreeMap::new();
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut saw_compaction, mut saw_migration) = (false, false);
    for round in 0..6 {
        for i in 0..6000u64 {
            let m = format!("m{}", next() % 8000);
            let score = (next() % 100) as f64;
            z.insert(m.as_bytes(), score);
            model.insert(m, score);
            if i % 7 == 0 {
                let m = format!("m{}", next() % 8000);
                assert_eq!(z.remove(m.as_bytes()), model.remove(&m), "round {round}");
            }
        }
        // Empty most of it by rank, each time less than half of what is
        // left (so the steps, not a rebuild, give the memory back), then
        // write a little at a time.
        let keep = 50 + round * 10;
        while z.len() > 2 * keep {
            let removed = z.remove_ranks(0, z.len() / 2 - 2);
            for (m, _) in removed {
                model.remove(std::str::from_utf8(&m).unwrap());
            }
        }
        for i in 0..3000u64 {
            let m = format!("m{}", next() % 8000);
            match i % 3 {
                0 => {
                    let score = (next() % 100) as f64;
                    z.insert(m.as_bytes(), score);
                    model.insert(m, score);
                }
                1 => assert_eq!(z.remove(m.as_bytes()), model.remove(&m)),
                _ => {
                    if let Some((m, _)) = z.pop(End::Min, 1).pop() {
                        model.remove(std::str::from_utf8(&m).unwrap());
                    }
                }
            }
            saw_compaction |= z.compacting;
            saw_migration |= z.scores.old.is_some();
            if i % 500 == 0 {
                z.list.check();
                z.check_invariants().unwrap();
            }
        }
        z.list.check();
        z.check_invariants().unwrap();
        assert_eq!(z.len(), model.len());
        for (m, s) in &model {
            assert_eq!(z.score(m.as_bytes()), Some(*s), "{m}");
        }
    }
    assert!(saw_compaction && saw_migration);
}

#[test]
fn from_pairs_builds_a_valid_list() {
    let pairs: Vec<(Bytes, f64)> = (0..500)
        .map(|i| (Bytes::from(format!("m{i:03}")), f64::from(i % 7)))
        .collect();
    let z = ZSet::from_pairs(pairs);
    z.list.check();
    assert_eq!(z.len(), 500);
    let mut expect = z.clone();
    expect.insert(b"extra", 1.0);
    expect.list.check();
    assert_eq!(expect.rank(b"extra", false), z.rank(b"m001", false));
}

/// The model: (score, member) pairs sorted as the set orders them.
#[derive(Default)]
struct Model(Vec<(f64, Vec<u8>)>);

impl Model {
    fn position(&self, member: &[u8]) -> Option<usize> {
        self.0.iter().position(|(_, m)| m == member)
    }

    fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        let old = self.position(member).map(|i| self.0.remove(i).0);
        self.0.push((score, member.to_vec()));
        self.0
            .sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
        old
    }

    fn remove(&mut self, member: &[u8]) -> Option<f64> {
        self.position(member).map(|i| self.0.remove(i).0)
    }

    fn ranks_in(&self, range: &impl RangeSpec) -> Option<(usize, usize)> {
        let admitted: Vec<usize> = (0..self.0.len())
            .filter(|&i| {
                let (s, m) = &self.0[i];
                !range.before_start(*s, m) && !range.after_end(*s, m)
            })
            .collect();
        Some((*admitted.first()?, *admitted.last()?))
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u8, i8),
    Remove(u8),
    RemoveRanks(usize, usize),
    Pop(bool, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..40, -5i8..5).prop_map(|(m, s)| Op::Insert(m, s)),
        2 => (0u8..40).prop_map(Op::Remove),
        1 => (0usize..50, 0usize..6).prop_map(|(lo, n)| Op::RemoveRanks(lo, lo + n)),
        1 => (any::<bool>(), 0usize..4).prop_map(|(max, n)| Op::Pop(max, n)),
    ]
}

fn member(m: u8) -> Vec<u8> {
    format!("m{m:02}").into_bytes()
}

/// Score bounds over the small score domain the ops use, with exclusivity.
fn score_bound() -> impl Strategy<Value = String> {
    (-6i8..6, any::<bool>()).prop_map(|(v, ex)| format!("{}{v}", if ex { "(" } else { "" }))
}

fn lex_bound() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-".to_string()),
        Just("+".to_string()),
        (0u8..42, any::<bool>())
            .prop_map(|(m, ex)| format!("{}m{m:02}", if ex { "(" } else { "[" })),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn behaves_like_a_sorted_vec(
        ops in proptest::collection::vec(op(), 1..200),
        (smin, smax) in (score_bound(), score_bound()),
        (lmin, lmax) in (lex_bound(), lex_bound()),
    ) {
        let mut z = ZSet::default();
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Insert(m, s) => {
                    let m = member(m);
                    prop_assert_eq!(z.insert(&m, f64::from(s)), model.insert(&m, f64::from(s)));
                }
                Op::Remove(m) => {
                    let m = member(m);
                    prop_assert_eq!(z.remove(&m), model.remove(&m));
                }
                Op::RemoveRanks(lo, hi) => {
                    if lo < z.len() {
                        let hi = hi.min(z.len() - 1);
                        let got = z.remove_ranks(lo, hi);
                        let want: Vec<(Bytes, f64)> = model.0.drain(lo..=hi)
                            .map(|(s, m)| (Bytes::from(m), s)).collect();
                        prop_assert_eq!(got, want);
                    }
                }
                Op::Pop(max, n) => {
                    let end = if max { End::Max } else { End::Min };
                    let got = z.pop(end, n);
                    let n = n.min(model.0.len());
                    let mut want: Vec<(Bytes, f64)> = if max {
                        model.0.drain(model.0.len() - n..)
                    } else {
                        model.0.drain(..n)
                    }.map(|(s, m)| (Bytes::from(m), s)).collect();
                    if max {
                        want.reverse();
                    }
                    prop_assert_eq!(got, want);
                }
            }
            z.list.check();
            prop_assert_eq!(z.len(), model.0.len());
        }
        // The whole order, every rank both ways, every by-rank window.
        let all: Vec<(Vec<u8>, f64)> = z.iter().map(|(m, s)| (m.to_vec(), s)).collect();
        let want: Vec<(Vec<u8>, f64)> = model.0.iter().map(|(s, m)| (m.clone(), *s)).collect();
        prop_assert_eq!(&all, &want);
        let n = model.0.len();
        for (i, (_, m)) in model.0.iter().enumerate() {
            prop_assert_eq!(z.rank(m, false), Some(i));
            prop_assert_eq!(z.rank(m, true), Some(n - 1 - i));
            prop_assert_eq!(z.score(m), Some(model.0[i].0));
        }
        for lo in 0..n {
            for hi in lo..n.min(lo + 4) {
                let fwd: Vec<Vec<u8>> = z.between(lo, hi, false).map(|(m, _)| m.to_vec()).collect();
                let want: Vec<Vec<u8>> = model.0[lo..=hi].iter().map(|(_, m)| m.clone()).collect();
                prop_assert_eq!(&fwd, &want);
                let mut rev: Vec<Vec<u8>> = z.between(lo, hi, true).map(|(m, _)| m.to_vec()).collect();
                rev.reverse();
                prop_assert_eq!(rev, want);
            }
        }
        let scores = score_range(&smin, &smax);
        prop_assert_eq!(z.ranks_in(&scores), model.ranks_in(&scores));
        // Lex ranges are defined over equal scores: check them on a copy
        // where every score is 0.
        let mut flat = ZSet::default();
        let mut flat_model = Model::default();
        for (m, _) in &all {
            flat.insert(m, 0.0);
            flat_model.insert(m, 0.0);
        }
        let lex = lex_range(&lmin, &lmax);
        prop_assert_eq!(flat.ranks_in(&lex), flat_model.ranks_in(&lex));
        prop_assert_eq!(flat.count_in(&lex), flat_model.ranks_in(&lex).map_or(0, |(a, b)| b - a + 1));
        // Rebuilding from the pairs gives the same set.
        let rebuilt = ZSet::from_pairs(all.iter().map(|(m, s)| (Bytes::from(m.clone()), *s)).collect());
        rebuilt.list.check();
        prop_assert_eq!(&rebuilt, &z);
    }
}
