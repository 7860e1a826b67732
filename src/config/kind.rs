//! The types a parameter can have, each with its parser (Redis 7.0's
//! acceptance rules and error texts, the reason CONFIG SET prints after
//! `CONFIG SET failed (possibly related to argument '...') - `), its
//! printer (what CONFIG GET answers) and where its value lives in
//! [`Live`].
//!
//! A value goes through three steps, so that CONFIG SET of several
//! parameters can check them all before changing any: [`Kind::parse`]
//! turns text into a [`Value`] (the current values may be consulted, never
//! changed), [`Kind::store`] puts it into [`Live`], [`Kind::read`] takes it
//! back out (to print it, or to tell whether a new value changes anything).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};

use super::live::Live;
use super::obuf::ObufLimit;

/// A parameter's type, with its default and bounds, and the slot of
/// [`Live`] that holds its value.
pub enum Kind {
    /// `yes` or `no`.
    Bool {
        default: bool,
        slot: fn(&Live) -> &AtomicBool,
    },
    /// A decimal integer in `min..=max` (Redis's strict `string2ll`: no
    /// `+`, no leading zeros, no spaces). `fit` maps an accepted number to
    /// the value kept (`hz` is clamped to 1..500 as Redis does).
    Int {
        default: u64,
        min: i64,
        max: i64,
        fit: Option<fn(u64) -> u64>,
        slot: fn(&Live) -> &AtomicU64,
    },
    /// A size in bytes, plain or with a unit (`k` = 1000, `kb` = 1024, `m`,
    /// `mb`, `g`, `gb`), in `min..=max`; CONFIG GET prints plain bytes.
    Memory {
        default: u64,
        min: u64,
        max: u64,
        slot: fn(&Live) -> &AtomicU64,
    },
    /// One of `options` (any case), kept as its index.
    Enum {
        default: &'static str,
        options: &'static [&'static str],
        slot: fn(&Live) -> &AtomicU8,
    },
    /// A value with a syntax of its own (`bind`, `notify-keyspace-events`,
    /// `client-output-buffer-limit`).
    Custom(&'static Custom),
    /// Accepted for the tools that read or write it, but ember keeps
    /// nothing of it yet: `check` validates a new value as Redis would (and
    /// refuses what ember cannot do), CONFIG GET always answers `answer`.
    Fixed {
        answer: &'static str,
        check: fn(&str) -> Result<(), String>,
    },
}

/// The functions behind a [`Kind::Custom`] parameter.
pub struct Custom {
    /// As a config file would write it; parsed with `parse` at start-up.
    pub default: &'static str,
    /// Text to value; may read the current values (a
    /// `client-output-buffer-limit` line changes only the classes it names).
    pub parse: fn(&Live, &str) -> Result<Value, String>,
    pub read: fn(&Live) -> Value,
    pub store: fn(&Live, Value),
}

/// A parsed value, checked and ready to store.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    /// [`Kind::Int`] and [`Kind::Memory`].
    Int(u64),
    /// [`Kind::Enum`]: the index of the option.
    Choice(u8),
    Text(String),
    Obuf([ObufLimit; 3]),
    /// [`Kind::Fixed`]: nothing to keep.
    Nothing,
}

impl Kind {
    /// Parses `text` as this type, with Redis's error text on failure.
    pub fn parse(&self, live: &Live, text: &str) -> Result<Value, String> {
        match self {
            Kind::Bool { .. } => parse_bool(text).map(Value::Bool),
            Kind::Int { min, max, fit, .. } => {
                let n = parse_int(text, *min, *max)? as u64;
                Ok(Value::Int(fit.map_or(n, |fit| fit(n))))
            }
            Kind::Memory { min, max, .. } => parse_memory_in(text, *min, *max).map(Value::Int),
            Kind::Enum { options, .. } => one_of(text, options).map(|i| Value::Choice(i as u8)),
            Kind::Custom(custom) => (custom.parse)(live, text),
            Kind::Fixed { check, .. } => check(text).map(|()| Value::Nothing),
        }
    }

    /// The default, as a value to store. Requires: the default parses (a
    /// unit test checks every row's).
    pub fn default_value(&self, live: &Live) -> Value {
        match self {
            Kind::Bool { default, .. } => Value::Bool(*default),
            Kind::Int { default, fit, .. } => Value::Int(fit.map_or(*default, |fit| fit(*default))),
            Kind::Memory { default, .. } => Value::Int(*default),
            Kind::Enum {
                default, options, ..
            } => Value::Choice(options.iter().position(|o| o == default).unwrap_or(0) as u8),
            Kind::Custom(custom) => (custom.parse)(live, custom.default)
                .unwrap_or_else(|e| panic!("default {:?}: {e}", custom.default)),
            Kind::Fixed { .. } => Value::Nothing,
        }
    }

    /// The value in `live`.
    pub fn read(&self, live: &Live) -> Value {
        match self {
            Kind::Bool { slot, .. } => Value::Bool(slot(live).load(Relaxed)),
            Kind::Int { slot, .. } | Kind::Memory { slot, .. } => {
                Value::Int(slot(live).load(Relaxed))
            }
            Kind::Enum { slot, .. } => Value::Choice(slot(live).load(Relaxed)),
            Kind::Custom(custom) => (custom.read)(live),
            Kind::Fixed { .. } => Value::Nothing,
        }
    }

    /// Puts `value` (parsed by this kind) into `live`. The request path
    /// reads the slots with relaxed loads: each parameter is read on its
    /// own, so no ordering between them is needed.
    pub fn store(&self, live: &Live, value: Value) {
        match (self, value) {
            (Kind::Bool { slot, .. }, Value::Bool(on)) => slot(live).store(on, Relaxed),
            (Kind::Int { slot, .. } | Kind::Memory { slot, .. }, Value::Int(n)) => {
                slot(live).store(n, Relaxed)
            }
            (Kind::Enum { slot, .. }, Value::Choice(i)) => slot(live).store(i, Relaxed),
            (Kind::Custom(custom), value) => (custom.store)(live, value),
            (Kind::Fixed { .. }, _) => {}
            (_, value) => debug_assert!(false, "a value of another kind: {value:?}"),
        }
    }

    /// `value` as CONFIG GET prints it.
    pub fn show(&self, value: &Value) -> String {
        match (self, value) {
            (Kind::Enum { options, .. }, Value::Choice(i)) => {
                options.get(*i as usize).copied().unwrap_or("").to_string()
            }
            (Kind::Fixed { answer, .. }, _) => answer.to_string(),
            // A slot holds a negative value as its two's complement.
            (Kind::Int { min, .. }, Value::Int(n)) if *min < 0 => (*n as i64).to_string(),
            (_, Value::Bool(on)) => yes_no(*on).to_string(),
            (_, Value::Int(n)) => n.to_string(),
            (_, Value::Text(text)) => text.clone(),
            (_, Value::Obuf(limits)) => super::obuf::format(limits),
            (_, Value::Choice(_) | Value::Nothing) => String::new(),
        }
    }

    /// The default as a config file would write it (for `--help` and docs).
    pub fn default_text(&self) -> String {
        match self {
            Kind::Bool { default, .. } => yes_no(*default).to_string(),
            Kind::Int { default, min, .. } if *min < 0 => (*default as i64).to_string(),
            Kind::Int { default, .. } => default.to_string(),
            Kind::Memory { default, .. } => format_memory(*default),
            Kind::Enum { default, .. } => default.to_string(),
            Kind::Custom(custom) => custom.default.to_string(),
            Kind::Fixed { answer, .. } => answer.to_string(),
        }
    }

    /// What the value looks like, for `--help`.
    pub fn shape(&self) -> String {
        match self {
            Kind::Bool { .. } => "yes|no".into(),
            Kind::Int { min, max, .. } => format!("{min}..{}", short_bound(*max)),
            Kind::Memory { .. } => "bytes|kb|mb|gb".into(),
            Kind::Enum { options, .. } => options.join("|"),
            Kind::Custom(_) | Kind::Fixed { .. } => "value".into(),
        }
    }
}

/// A bound as `--help` prints it: the C limits by name.
fn short_bound(n: i64) -> String {
    match n {
        i64::MAX => "LLONG_MAX".into(),
        n if n == i64::from(i32::MAX) => "INT_MAX".into(),
        n if n == i64::from(u32::MAX) => "UINT_MAX".into(),
        n => n.to_string(),
    }
}

fn yes_no(on: bool) -> &'static str {
    if on {
        "yes"
    } else {
        "no"
    }
}

/// Redis's booleans: `yes` or `no`, any case.
pub fn parse_bool(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

/// An integer in `min..=max`, as Redis's numeric configs take it.
pub fn parse_int(text: &str, min: i64, max: i64) -> Result<i64, String> {
    let n = crate::util::num::parse_i64(text.as_bytes())
        .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
    if n < min || n > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(n)
}

/// The index of `text` among `options` (any case), or Redis's enum error.
pub fn one_of(text: &str, options: &[&str]) -> Result<usize, String> {
    options
        .iter()
        .position(|o| o.eq_ignore_ascii_case(text))
        .ok_or_else(|| {
            format!(
                "argument(s) must be one of the following: {}",
                options.join(", ")
            )
        })
}

/// Redis's memory sizes: plain bytes, or k/kb/m/mb/g/gb (k = 1000, kb = 1024).
pub fn parse_memory(text: &str) -> Option<u64> {
    let (digits, mul) = memory_shape(text)?;
    digits.parse::<u64>().ok()?.checked_mul(mul)
}

/// The digits and unit multiplier of a memory size, if it is one (however
/// large the number).
fn memory_shape(text: &str) -> Option<(&str, u64)> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let mul = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1_000,
        "kb" => 1024,
        "m" => 1_000_000,
        "mb" => 1024 * 1024,
        "g" => 1_000_000_000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    (!digits.is_empty()).then_some((digits, mul))
}

/// A memory size in `min..=max`, with Redis's errors: a well-formed size
/// too large for 64 bits is out of range, not malformed.
pub fn parse_memory_in(text: &str, min: u64, max: u64) -> Result<u64, String> {
    match parse_memory(text) {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        None if memory_shape(text).is_none() => Err("argument must be a memory value".into()),
        _ => Err(format!(
            "argument must be between {min} and {max} inclusive"
        )),
    }
}

/// A size with the largest binary unit that divides it (`512mb`).
pub fn format_memory(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "gb"), (1 << 20, "mb"), (1 << 10, "kb")];
    match UNITS
        .iter()
        .find(|(size, _)| n > 0 && n.is_multiple_of(*size))
    {
        Some((size, unit)) => format!("{}{unit}", n / size),
        None => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_are_yes_or_no_in_any_case() {
        assert_eq!(parse_bool("yes"), Ok(true));
        assert_eq!(parse_bool("NO"), Ok(false));
        for bad in ["", "1", "true", "maybe", " yes"] {
            assert_eq!(
                parse_bool(bad).unwrap_err(),
                "argument must be 'yes' or 'no'"
            );
        }
    }

    #[test]
    fn integers_are_strict_and_bounded() {
        assert_eq!(parse_int("10", 0, 100), Ok(10));
        assert_eq!(parse_int("-5", -10, 0), Ok(-5));
        let unparsed = "argument couldn't be parsed into an integer";
        // As Redis's string2ll: no sign, no leading zeros, no spaces, no units.
        for bad in [
            "",
            "+5",
            "05",
            " 5",
            "5 ",
            "1k",
            "-0",
            "99999999999999999999",
        ] {
            assert_eq!(parse_int(bad, 0, 100).unwrap_err(), unparsed, "{bad:?}");
        }
        assert_eq!(
            parse_int("101", 1, 100).unwrap_err(),
            "argument must be between 1 and 100 inclusive"
        );
        assert_eq!(
            parse_int("0", 1, 100).unwrap_err(),
            "argument must be between 1 and 100 inclusive"
        );
    }

    #[test]
    fn memory_units_follow_redis() {
        assert_eq!(parse_memory("1mb"), Some(1024 * 1024));
        assert_eq!(parse_memory("1m"), Some(1_000_000));
        assert_eq!(parse_memory("512MB"), Some(512 * 1024 * 1024));
        assert_eq!(parse_memory("2k"), Some(2000));
        assert_eq!(parse_memory("2Kb"), Some(2048));
        assert_eq!(parse_memory("3g"), Some(3_000_000_000));
        assert_eq!(parse_memory("1gb"), Some(1 << 30));
        assert_eq!(parse_memory("12"), Some(12));
        assert_eq!(parse_memory("12b"), Some(12));
        for bad in ["x", "", "mb", "-1", "1.5mb", " 1", "1tb"] {
            assert_eq!(parse_memory(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn memory_bounds_tell_malformed_from_too_large() {
        let range = "argument must be between 1048576 and 9223372036854775807 inclusive";
        let max = i64::MAX as u64;
        assert_eq!(parse_memory_in("2mb", 1 << 20, max), Ok(2 << 20));
        assert_eq!(parse_memory_in("1000", 1 << 20, max).unwrap_err(), range);
        assert_eq!(
            parse_memory_in("9223372036854775808", 1 << 20, max).unwrap_err(),
            range
        );
        assert_eq!(
            parse_memory_in("99999999999999999999", 1 << 20, max).unwrap_err(),
            range
        );
        assert_eq!(
            parse_memory_in("1.5mb", 1 << 20, max).unwrap_err(),
            "argument must be a memory value"
        );
    }

    #[test]
    fn enums_take_any_case_and_list_their_options() {
        let options = ["no", "yes", "local"];
        assert_eq!(one_of("LOCAL", &options), Ok(2));
        assert_eq!(
            one_of("maybe", &options).unwrap_err(),
            "argument(s) must be one of the following: no, yes, local"
        );
    }

    #[test]
    fn sizes_print_with_the_largest_unit_that_divides_them() {
        assert_eq!(format_memory(512 << 20), "512mb");
        assert_eq!(format_memory(1 << 30), "1gb");
        assert_eq!(format_memory(64), "64");
        assert_eq!(format_memory(0), "0");
        assert_eq!(format_memory(3 << 10), "3kb");
    }
}
