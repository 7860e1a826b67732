//! Longest common subsequence, exactly as Redis 7's `LCS` command computes
//! it: the same DP table, the same tie-breaking on the way back, and the
//! same match ranges, so `LCS ... IDX` output is byte-identical.

/// Result of LCS: the common subsequence and matched ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lcs {
    pub sequence: Vec<u8>,
    /// Matching ranges, latest first as Redis lists them: ((a_start, a_end), (b_start, b_end)), inclusive.
    pub matches: Vec<((usize, usize), (usize, usize))>,
}

impl Lcs {
    /// Length of the common subsequence (`LCS ... LEN`).
    pub fn len(&self) -> usize {
        self.sequence.len()
    }

    /// True when the strings share no byte.
    pub fn is_empty(&self) -> bool {
        self.sequence.is_empty()
    }
}

/// Computes the LCS of `a` and `b` with Redis's algorithm.
///
/// Uses an `(a.len()+1) * (b.len()+1)` table of `u32` like Redis, so memory
/// is quadratic; callers should bound the input sizes. Walking back from the
/// end, equal bytes are taken; otherwise `i` moves when `LCS(i-1,j)` is
/// strictly larger, else `j` moves. A range is emitted when the contiguous
/// run breaks or reaches the start of either string, which is why ranges
/// come out last-first. Callers apply `MINMATCHLEN` themselves
/// (`a_end - a_start + 1` is the match length).
pub fn lcs(a: &[u8], b: &[u8]) -> Lcs {
    let (alen, blen) = (a.len(), b.len());
    let width = blen + 1;
    let mut table = vec![0u32; (alen + 1) * width];
    for i in 1..=alen {
        for j in 1..=blen {
            table[i * width + j] = if a[i - 1] == b[j - 1] {
                table[(i - 1) * width + j - 1] + 1
            } else {
                table[(i - 1) * width + j].max(table[i * width + j - 1])
            };
        }
    }
    let total = table[alen * width + blen] as usize;
    let mut sequence = vec![0u8; total];
    let mut matches = Vec::new();
    let mut idx = total;

    // Current contiguous run being extended backwards, if any.
    let mut range: Option<((usize, usize), (usize, usize))> = None;
    let (mut i, mut j) = (alen, blen);
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            sequence[idx - 1] = a[i - 1];
            range = Some(match range {
                None => ((i - 1, i - 1), (j - 1, j - 1)),
                // After a match both indexes dropped by one, so the next
                // match is always adjacent to the current run.
                Some(((_, ae), (_, be))) => ((i - 1, ae), (j - 1, be)),
            });
            if i - 1 == 0 || j - 1 == 0 {
                emit = true;
            }
            idx -= 1;
            i -= 1;
            j -= 1;
        } else {
            if table[(i - 1) * width + j] > table[i * width + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = range.is_some();
        }
        if emit {
            if let Some(r) = range.take() {
                matches.push(r);
            }
        }
    }
    Lcs { sequence, matches }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_doc_example() {
        let r = lcs(b"ohmytext", b"mynewtext");
        assert_eq!(r.sequence, b"mytext");
        assert_eq!(r.len(), 6);
        assert_eq!(r.matches, vec![((4, 7), (5, 8)), ((2, 3), (0, 1))]);
    }

    #[test]
    fn empty_and_disjoint() {
        assert_eq!(
            lcs(b"", b"abc"),
            Lcs {
                sequence: vec![],
                matches: vec![]
            }
        );
        assert_eq!(
            lcs(b"abc", b""),
            Lcs {
                sequence: vec![],
                matches: vec![]
            }
        );
        assert_eq!(
            lcs(b"abc", b"xyz"),
            Lcs {
                sequence: vec![],
                matches: vec![]
            }
        );
    }

    #[test]
    fn identical() {
        let r = lcs(b"hello", b"hello");
        assert_eq!(r.sequence, b"hello");
        assert_eq!(r.matches, vec![((0, 4), (0, 4))]);
    }

    /// Cases checked against redis-server 7.0.15 (`LCS a b IDX WITHMATCHLEN`).
    #[test]
    fn matches_redis_server() {
        for (a, b, seq, matches) in REDIS_CASES {
            let r = lcs(a.as_bytes(), b.as_bytes());
            assert_eq!(r.sequence, seq.as_bytes(), "{a} {b}");
            assert_eq!(&r.matches, matches, "{a} {b}");
        }
    }

    #[allow(clippy::type_complexity)]
    const REDIS_CASES: &[(&str, &str, &str, &[((usize, usize), (usize, usize))])] = &[
        ("da", "a", "a", &[((1, 1), (0, 0))]),
        (
            "abaaddaba",
            "daabadab",
            "aaadab",
            &[
                ((5, 7), (5, 7)),
                ((3, 3), (4, 4)),
                ((2, 2), (2, 2)),
                ((0, 0), (1, 1)),
            ],
        ),
        (
            "abbaabaa",
            "abaaaabbb",
            "abaaaa",
            &[((6, 7), (4, 5)), ((2, 4), (1, 3)), ((0, 0), (0, 0))],
        ),
        (
            "wzzyyyxzw",
            "wzxxw",
            "wzxw",
            &[
                ((8, 8), (4, 4)),
                ((6, 6), (2, 2)),
                ((2, 2), (1, 1)),
                ((0, 0), (0, 0)),
            ],
        ),
        (
            "babbacaccbbc",
            "cbcba",
            "cbc",
            &[((10, 11), (1, 2)), ((8, 8), (0, 0))],
        ),
        ("baab", "bbbbabbaab", "baab", &[((0, 3), (6, 9))]),
        ("baa", "bbaabb", "baa", &[((0, 2), (1, 3))]),
        ("dc", "dcdbbabbbba", "dc", &[((0, 1), (0, 1))]),
        (
            "yzzxywzzy",
            "xwwwwwxwwxy",
            "xwy",
            &[((8, 8), (10, 10)), ((5, 5), (1, 1)), ((3, 3), (0, 0))],
        ),
        ("baa", "aaaaa", "aa", &[((1, 2), (3, 4))]),
        ("aabdbcccd", "a", "a", &[((1, 1), (0, 0))]),
        (
            "wwzxyxz",
            "zwyxyzyxzxz",
            "zxyxz",
            &[
                ((5, 6), (9, 10)),
                ((4, 4), (6, 6)),
                ((3, 3), (3, 3)),
                ((2, 2), (0, 0)),
            ],
        ),
        (
            "cb",
            "cbbbdbbd",
            "cb",
            &[((1, 1), (6, 6)), ((0, 0), (0, 0))],
        ),
        (
            "aacdcbcdcca",
            "abd",
            "abd",
            &[((7, 7), (2, 2)), ((5, 5), (1, 1)), ((1, 1), (0, 0))],
        ),
        (
            "abcca",
            "cbcacab",
            "bcca",
            &[((3, 4), (4, 5)), ((1, 2), (1, 2))],
        ),
        (
            "abcbacb",
            "bcacaaa",
            "bcac",
            &[((4, 5), (2, 3)), ((1, 2), (0, 1))],
        ),
        (
            "ba",
            "bbaaaaaab",
            "ba",
            &[((1, 1), (7, 7)), ((0, 0), (1, 1))],
        ),
        ("aba", "cacb", "ab", &[((1, 1), (3, 3)), ((0, 0), (1, 1))]),
        (
            "dbacddbb",
            "adbabbbd",
            "dbabb",
            &[((6, 7), (5, 6)), ((0, 2), (1, 3))],
        ),
        ("abbaaaab", "", "", &[]),
        (
            "baabbabb",
            "babababa",
            "bababb",
            &[
                ((7, 7), (6, 6)),
                ((4, 6), (2, 4)),
                ((2, 2), (1, 1)),
                ((0, 0), (0, 0)),
            ],
        ),
        (
            "zxywxyz",
            "xyzyzywyxwwy",
            "xywxy",
            &[
                ((5, 5), (11, 11)),
                ((4, 4), (8, 8)),
                ((2, 3), (5, 6)),
                ((1, 1), (0, 0)),
            ],
        ),
        ("cb", "bbbabbac", "b", &[((1, 1), (5, 5))]),
        ("", "ddadc", "", &[]),
        (
            "aabaacca",
            "bcbdcdbdcaca",
            "bcca",
            &[((6, 7), (10, 11)), ((5, 5), (8, 8)), ((2, 2), (0, 0))],
        ),
        ("abacab", "c", "c", &[((3, 3), (0, 0))]),
        ("b", "b", "b", &[((0, 0), (0, 0))]),
        ("bbaaa", "a", "a", &[((4, 4), (0, 0))]),
        ("", "bc", "", &[]),
        ("bcdbccac", "", "", &[]),
        ("", "abababbbbaa", "", &[]),
        ("bdc", "", "", &[]),
        ("", "c", "", &[]),
        (
            "baadcb",
            "cadbbcdaccc",
            "adb",
            &[((5, 5), (4, 4)), ((2, 3), (1, 2))],
        ),
        ("acb", "bacda", "ac", &[((0, 1), (1, 2))]),
        ("yyxx", "xywx", "xx", &[((3, 3), (3, 3)), ((2, 2), (0, 0))]),
        ("", "zyxy", "", &[]),
        ("zwyzyxwyxyxx", "", "", &[]),
        (
            "babbcacacc",
            "abbabaccca",
            "abbaacc",
            &[
                ((8, 9), (7, 8)),
                ((7, 7), (5, 5)),
                ((5, 5), (3, 3)),
                ((1, 3), (0, 2)),
            ],
        ),
        (
            "bbabaaabbba",
            "baaaabb",
            "baaaabb",
            &[((8, 9), (5, 6)), ((4, 6), (2, 4)), ((1, 2), (0, 1))],
        ),
    ];
}
