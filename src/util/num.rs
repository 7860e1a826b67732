//! Number parsing and formatting with Redis's exact acceptance rules.
//!
//! Redis is strict about what it accepts as a number (`"007"`, `" 1"` and
//! `"+1"` are not integers) and clients rely on that, so these functions do
//! not use Rust's more lenient `str::parse` rules directly.

use std::fmt::Write as _;

/// Longest accepted integer text: Redis's `LONG_STR_SIZE` (21) minus one.
const MAX_I64_LEN: usize = 20;

/// Redis's strict `string2ll`: optional '-', no '+', no spaces, no leading zeros.
///
/// `"0"` is accepted but `"-0"` is not (Redis requires a non-zero first digit
/// after the sign), and anything of 21 or more bytes is rejected up front.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > MAX_I64_LEN {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    // Accumulate as unsigned so i64::MIN's magnitude fits.
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        if v > i64::MAX as u64 + 1 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else {
        i64::try_from(v).ok()
    }
}

/// Redis's `string2ld`/`strtold` rules for INCRBYFLOAT and scores: no spaces,
/// no NaN; accepts "inf", "-inf", "+inf", exponents.
///
/// Like `strtod` it accepts a leading `+`, `"1."`, `".5"` and `"infinity"` in
/// any case. Values that overflow to infinity or underflow to zero (from
/// non-zero digits) are rejected, as Redis rejects `ERANGE` results.
/// Hexadecimal floats (`0x1p3`), which `strtod` accepts, are not supported.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    // Rust's parser is a superset of strtod's decimal syntax except for the
    // explicit checks below; it already rejects spaces and trailing garbage.
    let text = std::str::from_utf8(s).ok()?;
    let v: f64 = text.parse().ok()?;
    if v.is_nan() {
        return None;
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let is_inf_literal =
        unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity");
    if v.is_infinite() && !is_inf_literal {
        return None; // overflow: strtod reports ERANGE with HUGE_VAL
    }
    if v == 0.0 {
        let mantissa = unsigned.split(['e', 'E']).next().unwrap_or("");
        if mantissa.bytes().any(|c| matches!(c, b'1'..=b'9')) {
            return None; // underflow: strtod reports ERANGE with zero
        }
    }
    Some(v)
}

/// The bare `strtod` check Redis applies to score range bounds
/// (`zslParseRange`): all text must be consumed and the value must not be
/// NaN, nothing more. So unlike [`parse_f64`] it accepts leading whitespace,
/// the empty string (0), and overflow to infinity or underflow to zero.
pub fn parse_range_f64(s: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(s).ok()?;
    // strtod skips what C's isspace matches.
    let text = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    if text.is_empty() {
        // No conversion: strtod leaves the end pointer at the (empty) end.
        return Some(0.0);
    }
    let v: f64 = text.parse().ok()?;
    (!v.is_nan()).then_some(v)
}

/// Formats as Redis 7.0 replies a double (`addReplyDouble`): C's `%.17g`.
///
/// Seventeen significant digits, correctly rounded, trailing zeros dropped;
/// plain notation for decimal exponents in `-4..17`, otherwise `d.ddde±XX`
/// with at least two exponent digits. So `3.0` is `"3"`, `0.1` is
/// `"0.10000000000000001"` (Redis 7.2 moved to the shortest round-trip
/// digits; 7.0's clients and its test suite see these), `1e21` is
/// `"1e+21"`, `1e-7` is `"1e-07"`.
pub fn format_double(v: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_double(v, &mut out);
    // write_double only emits ASCII.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends [`format_double`]'s text to `out` without allocating; the encoder
/// uses this on the reply path.
pub fn write_double(v: f64, out: &mut Vec<u8>) {
    if v.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    // `{:.16e}` gives 17 significant digits, correctly rounded as glibc's
    // printf rounds them, as `[-]d.dddde[-]X`.
    let mut buf = StackBuf::new();
    // Cannot fail: the longest f64 `{:.16e}` form is well under the buffer size.
    let _ = write!(buf, "{v:.16e}");
    let text = buf.as_bytes();
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let e_pos = text.iter().position(|&c| c == b'e').unwrap_or(text.len());
    let (mantissa, exp_text) = (&text[..e_pos], &text[(e_pos + 1).min(text.len())..]);
    let exp = std::str::from_utf8(exp_text)
        .ok()
        .and_then(|e| e.parse::<i32>().ok())
        .unwrap_or(0);
    let mut digits = [0u8; 20];
    let mut nd = 0;
    for &c in mantissa {
        if c.is_ascii_digit() && nd < digits.len() {
            digits[nd] = c;
            nd += 1;
        }
    }
    // %g drops trailing zeros (keeping one digit).
    while nd > 1 && digits[nd - 1] == b'0' {
        nd -= 1;
    }
    let digits = &digits[..nd];

    if negative {
        out.push(b'-');
    }
    if !(-4..17).contains(&exp) {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let abs = exp.unsigned_abs();
        if abs < 10 {
            out.push(b'0');
        }
        format_i64(i64::from(abs), out);
    } else if exp < 0 {
        out.extend_from_slice(b"0.");
        for _ in 0..(-exp - 1) {
            out.push(b'0');
        }
        out.extend_from_slice(digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.extend_from_slice(digits);
            for _ in digits.len()..int_len {
                out.push(b'0');
            }
        } else {
            out.extend_from_slice(&digits[..int_len]);
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..]);
        }
    }
}

/// The decimal digits of `v`, written at the end of `buf` (20 digits hold
/// any u64): the one digit writer behind every integer the server prints.
#[inline]
pub fn decimal_digits(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut pos = buf.len();
    loop {
        pos -= 1;
        buf[pos] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[pos..]
}

/// Appends the decimal text of `v` to `out` with no allocation (hot path:
/// every RESP length prefix and integer reply goes through here).
pub fn format_i64(v: i64, out: &mut Vec<u8>) {
    if v < 0 {
        out.push(b'-');
    }
    format_u64(v.unsigned_abs(), out);
}

/// Appends the decimal text of `v` (used for lengths, which are `usize`).
pub fn format_u64(v: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(decimal_digits(v, &mut [0u8; 20]));
}

/// A fixed-size `fmt::Write` sink so float formatting needs no heap.
struct StackBuf {
    buf: [u8; 40],
    len: usize,
}

impl StackBuf {
    fn new() -> Self {
        StackBuf {
            buf: [0; 40],
            len: 0,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parse_i64_follows_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-0"), None);
        assert_eq!(parse_i64(b"1"), Some(1));
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"+1"), None);
        assert_eq!(parse_i64(b"01"), None);
        assert_eq!(parse_i64(b"007"), None);
        assert_eq!(parse_i64(b" 1"), None);
        assert_eq!(parse_i64(b"1 "), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b"1a"), None);
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-9223372036854775809"), None);
        assert_eq!(parse_i64(b"99999999999999999999"), None);
        assert_eq!(parse_i64(b"100000000000000000000"), None);
    }

    #[test]
    fn parse_f64_follows_strtod_rules() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"-1.5"), Some(-1.5));
        assert_eq!(parse_f64(b"+1.5"), Some(1.5));
        assert_eq!(parse_f64(b"1."), Some(1.0));
        assert_eq!(parse_f64(b".5"), Some(0.5));
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
        assert_eq!(parse_f64(b"1E-3"), Some(0.001));
        assert_eq!(parse_f64(b"inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"-INF"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"0"), Some(0.0));
        assert_eq!(parse_f64(b"0e-500"), Some(0.0));
        assert_eq!(parse_f64(b"4.9e-324"), Some(4.9e-324));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b"NaN"), None);
        assert_eq!(parse_f64(b""), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"1 "), None);
        assert_eq!(parse_f64(b"1e"), None);
        assert_eq!(parse_f64(b"."), None);
        assert_eq!(parse_f64(b"1e400"), None);
        assert_eq!(parse_f64(b"1e-400"), None);
        assert_eq!(parse_f64(b"abc"), None);
    }

    #[test]
    fn parse_range_f64_is_as_lenient_as_bare_strtod() {
        assert_eq!(parse_range_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_range_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_range_f64(b""), Some(0.0));
        assert_eq!(parse_range_f64(b" \t2"), Some(2.0));
        assert_eq!(parse_range_f64(b"1e400"), Some(f64::INFINITY));
        assert_eq!(parse_range_f64(b"1e-400"), Some(0.0));
        assert_eq!(parse_range_f64(b"2 "), None);
        assert_eq!(parse_range_f64(b"nan"), None);
        assert_eq!(parse_range_f64(b"abc"), None);
        assert_eq!(parse_range_f64(b"-"), None);
    }

    #[test]
    fn format_double_examples() {
        assert_eq!(format_double(3.0), "3");
        assert_eq!(format_double(-3.0), "-3");
        assert_eq!(format_double(0.0), "0");
        assert_eq!(format_double(-0.0), "-0");
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(0.1), "0.10000000000000001");
        assert_eq!(format_double(1.1 + 2.2), "3.3000000000000003");
        assert_eq!(format_double(1e21), "1e+21");
        assert_eq!(format_double(1e16), "10000000000000000");
        assert_eq!(format_double(1e17), "1e+17");
        assert_eq!(format_double(1.25e17), "1.25e+17");
        assert_eq!(format_double(1e-7), "9.9999999999999995e-08");
        assert_eq!(format_double(0.0001), "0.0001");
        assert_eq!(format_double(0.00012), "0.00012");
        assert_eq!(format_double(1.5e-5), "1.5e-05");
        assert_eq!(format_double(1e100), "1e+100");
        assert_eq!(format_double(5e-324), "4.9406564584124654e-324");
        assert_eq!(format_double(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(format_double(f64::INFINITY), "inf");
        assert_eq!(format_double(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_double(f64::NAN), "nan");
        assert_eq!(format_double(123456.789), "123456.789");
    }

    #[test]
    fn format_i64_examples() {
        for v in [0, 1, -1, 9, 10, -10, 12345, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            format_i64(v, &mut out);
            assert_eq!(out, v.to_string().as_bytes());
        }
        let mut out = Vec::new();
        format_u64(u64::MAX, &mut out);
        assert_eq!(out, u64::MAX.to_string().as_bytes());
    }

    proptest! {
        #[test]
        fn i64_round_trip(v: i64) {
            let mut out = Vec::new();
            format_i64(v, &mut out);
            prop_assert_eq!(out.clone(), v.to_string().into_bytes());
            prop_assert_eq!(parse_i64(&out), Some(v));
        }

        #[test]
        fn double_round_trip(bits: u64) {
            let v = f64::from_bits(bits);
            prop_assume!(v.is_finite());
            let text = format_double(v);
            let back: f64 = text.parse().unwrap();
            prop_assert_eq!(back.to_bits(), v.to_bits());
            // Replies must also be accepted back as scores (ZADD of a ZSCORE).
            prop_assert_eq!(parse_f64(text.as_bytes()).map(f64::to_bits), Some(v.to_bits()));
        }
    }
}
