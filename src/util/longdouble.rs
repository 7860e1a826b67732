//! INCRBYFLOAT and HINCRBYFLOAT arithmetic in C's `long double`.
//!
//! Redis parses both operands with `strtold`, adds them as `long double`
//! and prints the sum with `%.17Lf`. On x86-64 that type is the 80-bit x87
//! format, 64 bits of mantissa, so `0.1 + 0.2` prints as `0.3` where an
//! `f64` sum prints `0.30000000000000004`, and `1e308 + 1e308` is a
//! 309-digit number rather than an overflow. The stored value is what later
//! commands read, so it must be the same text. Rust has no such type, and
//! emulating one (parsing, rounding, exact decimal printing) would be far
//! more code than the C library's own routines, which are what Redis calls;
//! `longdouble.c` (built by `build.rs`) wraps them. Where `long double` is
//! another format (quad precision on aarch64 Linux), ember gives what Redis
//! gives on that machine.

use std::os::raw::{c_char, c_int, c_long, c_longlong};

/// A `long double`, as opaque bytes (`LD_BYTES` in `longdouble.c`).
#[derive(Clone, Copy)]
pub struct LongDouble([u8; 16]);

extern "C" {
    fn ember_ld_parse(text: *const c_char, len: usize, out: *mut u8) -> c_int;
    fn ember_ld_add(a: *const u8, b: *const u8, out: *mut u8);
    fn ember_ld_is_finite(v: *const u8) -> c_int;
    fn ember_ld_format(v: *const u8, out: *mut c_char, cap: usize) -> c_long;
    fn ember_ld_seconds_to_ms(v: *const u8) -> c_longlong;
}

/// Room for any finite value's text (`LD_CHARS` in `longdouble.c`).
const TEXT_CAP: usize = 5 * 1024;

impl LongDouble {
    /// Zero: all bits clear in every `long double` format (x87, IEEE quad
    /// and double alike).
    pub const ZERO: LongDouble = LongDouble([0; 16]);

    /// Parses as Redis's `string2ld`: the whole text, no leading space, no
    /// NaN, no overflow or underflow to zero. Accepts what `strtold` does
    /// besides: `inf`, `infinity`, hexadecimal floats (`0x1p3`).
    pub fn parse(text: &[u8]) -> Option<LongDouble> {
        // strtold would stop at a NUL and call the text before it whole;
        // Redis refuses it, as what was parsed is not all of the value.
        if text.contains(&0) {
            return None;
        }
        let mut out = [0u8; 16];
        // SAFETY: `text` is valid for `text.len()` bytes, which the C side
        // copies (at most 5 KiB, refusing longer) into its own buffer
        // before terminating it; `out` is 16 writable bytes, the most it
        // stores (its static assertion checks `sizeof(long double)`).
        let parsed = unsafe { ember_ld_parse(text.as_ptr().cast(), text.len(), out.as_mut_ptr()) };
        (parsed == 1).then_some(LongDouble(out))
    }

    /// Neither NaN nor infinite.
    pub fn is_finite(&self) -> bool {
        // SAFETY: 16 readable bytes holding a value the C side stored.
        unsafe { ember_ld_is_finite(self.0.as_ptr()) == 1 }
    }

    /// This many seconds in whole milliseconds, rounded up, as Redis 7.0
    /// reads a blocking command's timeout (in `long double`, so
    /// 9223372036854775 s is 9223372036854775000 ms, which an `f64` rounds
    /// past `i64::MAX`). None where Redis's conversion comes out negative:
    /// a negative value, or one whose milliseconds do not fit an `i64`.
    pub fn seconds_to_ms(&self) -> Option<u64> {
        // SAFETY: 16 readable bytes holding a value the C side stored.
        let ms = unsafe { ember_ld_seconds_to_ms(self.0.as_ptr()) };
        u64::try_from(ms).ok()
    }

    /// Redis's text for a finite value (`ld2string`, `LD_STR_HUMAN`):
    /// `%.17Lf` with trailing zeros trimmed. None for NaN and infinities.
    pub fn to_human(&self) -> Option<String> {
        if !self.is_finite() {
            return None;
        }
        let mut text = [0u8; TEXT_CAP];
        // SAFETY: the value is 16 readable bytes the C side stored; `text`
        // has `TEXT_CAP` writable bytes and the C side writes at most `cap`
        // of them, returning how many (or -1, having written none).
        let len = unsafe { ember_ld_format(self.0.as_ptr(), text.as_mut_ptr().cast(), text.len()) };
        let written = text.get(..usize::try_from(len).ok()?)?;
        // printf's %f writes ASCII only.
        String::from_utf8(written.to_vec()).ok()
    }
}

/// The sum, rounded as `long double` addition rounds.
impl std::ops::Add for LongDouble {
    type Output = LongDouble;

    fn add(self, other: LongDouble) -> LongDouble {
        let mut out = [0u8; 16];
        // SAFETY: both inputs are 16 readable bytes holding a value the C
        // side stored, `out` 16 writable bytes; nothing is kept.
        unsafe { ember_ld_add(self.0.as_ptr(), other.0.as_ptr(), out.as_mut_ptr()) };
        LongDouble(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(a: &str, b: &str) -> Option<String> {
        let a = LongDouble::parse(a.as_bytes())?;
        let b = LongDouble::parse(b.as_bytes())?;
        (a + b).to_human()
    }

    #[test]
    fn zero_is_zero() {
        assert_eq!(LongDouble::ZERO.to_human().as_deref(), Some("0"));
        let five = LongDouble::parse(b"5").unwrap();
        assert_eq!((LongDouble::ZERO + five).to_human().as_deref(), Some("5"));
    }

    #[test]
    fn parsing_follows_string2ld() {
        for ok in [
            "1",
            "-1.5",
            "+.5",
            "1.",
            "1e3",
            "inf",
            "-Infinity",
            "0x10",
            "0",
        ] {
            assert!(LongDouble::parse(ok.as_bytes()).is_some(), "{ok}");
        }
        for bad in [
            "", " 1", "1 ", "abc", "nan", "1e99999", "1e-99999", "1x", "1\x002", "\0",
        ] {
            assert!(LongDouble::parse(bad.as_bytes()).is_none(), "{bad:?}");
        }
        assert!(
            LongDouble::parse(&vec![b'1'; 5 * 1024]).is_none(),
            "too long"
        );
        assert!(!LongDouble::parse(b"inf").unwrap().is_finite());
        assert_eq!(LongDouble::parse(b"-inf").unwrap().to_human(), None);
    }

    #[test]
    fn text_is_fixed_point_with_zeros_trimmed() {
        assert_eq!(sum("1", "2").as_deref(), Some("3"));
        assert_eq!(sum("-1.6", "1.6").as_deref(), Some("0"));
        assert_eq!(sum("-0", "0").as_deref(), Some("0"));
        assert_eq!(sum("0", "-0").as_deref(), Some("0"), "no -0");
        assert_eq!(sum("1e20", "0").as_deref(), Some("100000000000000000000"));
        assert_eq!(sum("0x10", "0").as_deref(), Some("16"));
        assert_eq!(
            sum("1e-20", "0").as_deref(),
            Some("0"),
            "17 decimals at most"
        );
        assert_eq!(sum("1.5", "-1").as_deref(), Some("0.5"));
    }

    /// The texts redis-server 7.0 printed on x86-64 for these sums.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sums_print_as_redis_prints_them_on_x86_64() {
        assert_eq!(sum("0.1", "0.2").as_deref(), Some("0.3"));
        assert_eq!(sum("1.1", "2.2").as_deref(), Some("3.3"));
        assert_eq!(sum("0.1", "0.7").as_deref(), Some("0.8"));
        assert_eq!(
            sum("1000", "3.0e-2").as_deref(),
            Some("1000.03000000000000003")
        );
        assert_eq!(
            sum("0", "1.23456789012345678").as_deref(),
            Some("1.23456789012345678")
        );
        let big = sum("1e308", "1e308").expect("no overflow in 80 bits");
        assert_eq!(big.len(), 309);
        assert!(big.starts_with("19999999999999999999337"), "{big}");
    }

    proptest::proptest! {
        #[test]
        fn text_reads_back_as_the_value(v in -1e15f64..1e15) {
            let parsed = LongDouble::parse(v.to_string().as_bytes()).unwrap();
            let text = parsed.to_human().unwrap();
            proptest::prop_assert!(!text.contains('e'), "{}", text);
            let back: f64 = text.parse().unwrap();
            // Digits past the 17th decimal are rounded away, as by %.17Lf.
            proptest::prop_assert!((back - v).abs() <= 1e-17, "{} -> {}", v, text);
        }
    }
}
