//! Glob matching with Redis's exact `stringmatchlen` semantics (KEYS, SCAN
//! MATCH, PSUBSCRIBE, ...), but without its exponential recursion.
//!
//! Redis recurses once per `*`; we use the classic greedy-star backtracking
//! loop instead, which is O(pattern * text) in the worst case. Every
//! non-star pattern element consumes exactly one text byte and how the
//! pattern splits into elements does not depend on the text, so remembering
//! only the last `*` is enough to find a match whenever one exists.
//!
//! Quirks kept on purpose because they are observable:
//! - the empty text matches only the empty pattern (`"*"` does not match
//!   `""`: Redis's main loop never runs for an empty string);
//! - bracket ranges compare bytes as C `char` (signed), so ranges touching
//!   bytes >= 0x80 behave as in Redis on x86/ARM Linux builds with signed char;
//! - an unterminated `[` set extends to the end of the pattern, `[` alone
//!   never matches, `[^` alone matches any byte;
//! - Redis 7 gives up (no match) at the 1001st nested `*`; see [`MAX_NESTING`].

/// Redis 7.0.9+ stops recursing past this depth and reports "no match"; a
/// pattern with more non-trailing `*` groups than this never matches.
pub const MAX_NESTING: usize = 1000;

/// Pattern byte at `i`, or 0 past the end: Redis reads the sds NUL terminator
/// there and several of its checks depend on seeing that 0.
#[inline]
fn at(p: &[u8], i: usize) -> u8 {
    p.get(i).copied().unwrap_or(0)
}

#[inline]
fn lower(c: u8) -> u8 {
    c.to_ascii_lowercase()
}

/// C `char` (signed) value of a byte, for range comparisons.
#[inline]
fn signed(c: u8) -> i32 {
    i32::from(c as i8)
}

/// Matches the single non-star element starting at `p` against byte `c`.
/// Returns whether it matched and where the next element starts.
fn match_one(pattern: &[u8], mut p: usize, c: u8, nocase: bool) -> (bool, usize) {
    let len = pattern.len();
    match pattern[p] {
        b'?' => (true, p + 1),
        b'[' => {
            p += 1;
            let negate = at(pattern, p) == b'^';
            if negate {
                p += 1;
            }
            let mut matched = false;
            loop {
                let rem = len.saturating_sub(p);
                let pc = at(pattern, p);
                if pc == b'\\' && rem >= 2 {
                    p += 1;
                    if pattern[p] == c {
                        matched = true;
                    }
                } else if pc == b']' {
                    break;
                } else if rem == 0 {
                    // Unterminated set: the set ends with the pattern.
                    p -= 1;
                    break;
                } else if rem >= 3 && pattern[p + 1] == b'-' {
                    let (mut start, mut end, mut ch) = (pattern[p], pattern[p + 2], c);
                    if nocase {
                        start = lower(start);
                        end = lower(end);
                        ch = lower(ch);
                    }
                    let (mut lo, mut hi) = (signed(start), signed(end));
                    if lo > hi {
                        std::mem::swap(&mut lo, &mut hi);
                    }
                    p += 2;
                    if (lo..=hi).contains(&signed(ch)) {
                        matched = true;
                    }
                } else if (!nocase && pc == c) || (nocase && lower(pc) == lower(c)) {
                    matched = true;
                }
                p += 1;
            }
            (matched != negate, p + 1)
        }
        b => {
            let (lit, next) = if b == b'\\' && len - p >= 2 {
                (pattern[p + 1], p + 2)
            } else {
                (b, p + 1)
            };
            let ok = if nocase {
                lower(lit) == lower(c)
            } else {
                lit == c
            };
            (ok, next)
        }
    }
}

/// Redis's `stringmatchlen`: `*`, `?`, `[abc]`, `[^a-c]`, `\x` escapes.
pub fn glob_match(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    if text.is_empty() {
        return pattern.is_empty();
    }
    let (mut p, mut t) = (0usize, 0usize);
    // Backtrack point: pattern index after the last star group, the text
    // index that star group will try next, and how many star groups had been
    // entered up to it (Redis's recursion depth there).
    let mut star: Option<(usize, usize, usize)> = None;
    let mut star_groups = 0usize;
    loop {
        if t == text.len() {
            // Text consumed: only trailing stars may remain.
            while at(pattern, p) == b'*' {
                p += 1;
            }
            if p == pattern.len() {
                return true;
            }
        } else if p < pattern.len() {
            if pattern[p] == b'*' {
                while at(pattern, p) == b'*' {
                    p += 1;
                }
                if p == pattern.len() {
                    return true;
                }
                star_groups += 1;
                if star_groups > MAX_NESTING {
                    return false;
                }
                star = Some((p, t, star_groups));
                continue;
            }
            let (ok, next) = match_one(pattern, p, text[t], nocase);
            if ok {
                p = next;
                t += 1;
                continue;
            }
        }
        // Mismatch: let the last star swallow one more byte and retry.
        match star {
            Some((sp, st, groups)) if st + 1 < text.len() => {
                star = Some((sp, st + 1, groups));
                p = sp;
                t = st + 1;
                star_groups = groups;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn m(p: &str, t: &str) -> bool {
        glob_match(p.as_bytes(), t.as_bytes(), false)
    }

    #[test]
    fn basics() {
        assert!(m("*", "anything"));
        assert!(m("h?llo", "hello"));
        assert!(m("h?llo", "hallo"));
        assert!(!m("h?llo", "hllo"));
        assert!(m("h*llo", "hllo"));
        assert!(m("h*llo", "heeeello"));
        assert!(m("h[ae]llo", "hello"));
        assert!(m("h[ae]llo", "hallo"));
        assert!(!m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo"));
        assert!(!m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo"));
        assert!(!m("h[a-b]llo", "hcllo"));
        assert!(m("h[b-a]llo", "hallo"), "reversed ranges are swapped");
        assert!(m("h\\*llo", "h*llo"));
        assert!(!m("h\\*llo", "hello"));
        assert!(m("user:*:name", "user:42:name"));
        assert!(!m("user:*:name", "user:42:age"));
        assert!(m("a*b*c", "aXXbYYc"));
        assert!(!m("a*b*c", "aXXbYY"));
        assert!(m("*a", "aaa"));
        assert!(m("a*", "a"));
        assert!(m("a**", "a"));
        assert!(!m("a", "ab"));
        assert!(!m("ab", "a"));
        assert!(m("", ""));
        assert!(!m("", "a"));
    }

    #[test]
    fn redis_quirks() {
        // Empty text matches only an empty pattern (KEYS ** skips the "" key).
        assert!(!m("*", ""));
        assert!(!m("**", ""));
        // Trailing backslash is a literal backslash.
        assert!(m("a\\", "a\\"));
        // Escapes inside sets.
        assert!(m("[\\]]", "]"));
        assert!(m("[\\-]", "-"));
        // Unterminated sets run to the end of the pattern.
        assert!(m("[abc", "b"));
        assert!(!m("[abc", "d"));
        assert!(!m("[", "["));
        assert!(m("[^", "x"));
        assert!(!m("a[", "a"));
        // `[a-]`: the range end is the closing bracket itself, so the set is
        // unterminated and spans a..=']'.
        assert!(m("[a-]", "]"));
        assert!(m("[a-]", "a"));
        assert!(!m("[a-]", "-"));
        // `]` right after `[` closes an empty set.
        assert!(!m("[]a]", "a"));
        assert!(!m("[]a]", "]"));
        assert!(!m("[]a]x", "]x"));
        // A star inside a set is literal.
        assert!(m("[*]", "*"));
        assert!(!m("[*]", "x"));
    }

    #[test]
    fn nocase() {
        assert!(glob_match(b"HeLLo", b"hello", true));
        assert!(glob_match(b"h[A-Z]llo", b"hello", true));
        assert!(glob_match(b"h[e]llo", b"hEllo", true));
        assert!(!glob_match(b"h[e]llo", b"hEllo", false));
        // Escapes inside a set compare exactly even with nocase.
        assert!(!glob_match(b"[\\E]", b"e", true));
    }

    #[test]
    fn high_bytes_use_signed_char_ranges() {
        // As C char, 0x80 is -128 and 'a' is 97, so [\x80-a] spans -128..=97.
        assert!(glob_match(b"[\x80-a]", b"A", false));
        assert!(glob_match(b"[\x80-a]", b"\xff", false));
        assert!(!glob_match(b"[\x80-a]", b"z", false));
        assert!(!glob_match(b"[a-\xff]", b"b", false));
    }

    #[test]
    fn many_stars_are_fast() {
        let pattern = "a*".repeat(50) + "b";
        let text = "a".repeat(5000);
        let start = std::time::Instant::now();
        assert!(!m(&pattern, &text));
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
        assert!(m(&pattern, &(text + "b")));
    }

    #[test]
    fn nesting_limit() {
        let ok = "*a".repeat(MAX_NESTING) + "*";
        let text = "a".repeat(MAX_NESTING + 5);
        assert!(m(&ok, &text));
        let too_deep = "*a".repeat(MAX_NESTING + 1);
        assert!(!m(&too_deep, &text));
    }

    /// Straightforward recursive reference (no nesting limit), exponential
    /// but fine for the tiny inputs proptest generates.
    fn reference(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
        fn rec(pattern: &[u8], p: usize, text: &[u8], t: usize, nocase: bool) -> bool {
            if p == pattern.len() {
                return t == text.len();
            }
            if pattern[p] == b'*' {
                return (t..=text.len()).any(|i| rec(pattern, p + 1, text, i, nocase));
            }
            if t == text.len() {
                return false;
            }
            let (ok, next) = match_one(pattern, p, text[t], nocase);
            ok && rec(pattern, next, text, t + 1, nocase)
        }
        if text.is_empty() {
            return pattern.is_empty();
        }
        rec(pattern, 0, text, 0, nocase)
    }

    proptest! {
        #[test]
        fn agrees_with_reference(
            pattern in proptest::collection::vec(prop::sample::select(b"ab*?[]^-\\A".to_vec()), 0..10),
            text in proptest::collection::vec(prop::sample::select(b"ab]-^\\*A".to_vec()), 0..10),
            nocase: bool,
        ) {
            prop_assert_eq!(glob_match(&pattern, &text, nocase), reference(&pattern, &text, nocase));
        }
    }
}
