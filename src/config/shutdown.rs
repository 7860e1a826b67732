//! `shutdown-on-sigint` and `shutdown-on-sigterm`: what a signal's
//! shutdown does, in SHUTDOWN's words (`save`, `nosave`, `now`, `force`;
//! `default` for none of them), read by the signal thread when the signal
//! arrives.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

use super::kind::{one_of, Custom, Value};
use super::live::Live;

/// The flags a signal's shutdown runs with, as SHUTDOWN's arguments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShutdownFlags(u8);

/// The words in the order Redis prints them; each but `default` is a bit.
const WORDS: &[&str] = &["default", "save", "nosave", "now", "force"];

impl ShutdownFlags {
    pub const SAVE: u8 = 1;
    pub const NOSAVE: u8 = 2;
    pub const NOW: u8 = 4;
    pub const FORCE: u8 = 8;

    /// Parses one or more of the words with Redis's errors: an empty value
    /// or an unknown word lists the choices, and `save` with `nosave`
    /// contradicts itself.
    pub fn parse(text: &str) -> Result<ShutdownFlags, String> {
        let mut words = text.split_whitespace().peekable();
        if words.peek().is_none() {
            return one_of(text, WORDS).map(|_| ShutdownFlags(0));
        }
        let mut bits = 0u8;
        for word in words {
            let index = one_of(word, WORDS)?;
            if index > 0 {
                bits |= 1 << (index - 1);
            }
        }
        if bits & Self::SAVE != 0 && bits & Self::NOSAVE != 0 {
            return Err("shutdown options SAVE and NOSAVE can't be used simultaneously".into());
        }
        Ok(ShutdownFlags(bits))
    }

    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// The words set, in Redis's order; `default` for none.
    pub fn words(self) -> Vec<&'static str> {
        let set: Vec<&str> = (1..WORDS.len())
            .filter(|i| self.0 & (1 << (i - 1)) != 0)
            .map(|i| WORDS[i])
            .collect();
        if set.is_empty() {
            vec!["default"]
        } else {
            set
        }
    }
}

fn parse(_: &Live, text: &str) -> Result<Value, String> {
    ShutdownFlags::parse(text).map(|f| Value::Text(f.words().join(" ")))
}

fn store(slot: &AtomicU8, value: Value) {
    if let Value::Text(text) = value {
        slot.store(ShutdownFlags::parse(&text).unwrap_or_default().0, Relaxed);
    }
}

fn read(slot: &AtomicU8) -> Value {
    Value::Text(ShutdownFlags(slot.load(Relaxed)).words().join(" "))
}

pub(super) static ON_SIGINT: Custom = Custom {
    default: "default",
    parse,
    read: |live| read(&live.v.shutdown_on_sigint),
    store: |live, value| store(&live.v.shutdown_on_sigint, value),
};

pub(super) static ON_SIGTERM: Custom = Custom {
    default: "default",
    parse,
    read: |live| read(&live.v.shutdown_on_sigterm),
    store: |live, value| store(&live.v.shutdown_on_sigterm, value),
};

impl Live {
    /// What SIGINT's shutdown does.
    pub fn shutdown_on_sigint(&self) -> ShutdownFlags {
        ShutdownFlags(self.v.shutdown_on_sigint.load(Relaxed))
    }

    /// What SIGTERM's shutdown does.
    pub fn shutdown_on_sigterm(&self) -> ShutdownFlags {
        ShutdownFlags(self.v.shutdown_on_sigterm.load(Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_and_print_in_redis_order() {
        let show = |t: &str| ShutdownFlags::parse(t).map(|f| f.words().join(" "));
        assert_eq!(show("force now nosave").unwrap(), "nosave now force");
        assert_eq!(show("default save").unwrap(), "save");
        assert_eq!(show("DEFAULT").unwrap(), "default");
        assert!(show("")
            .unwrap_err()
            .contains("must be one of the following: default, save"));
        assert!(show("now abc")
            .unwrap_err()
            .contains("must be one of the following"));
        assert_eq!(
            show("save nosave").unwrap_err(),
            "shutdown options SAVE and NOSAVE can't be used simultaneously"
        );
        let f = ShutdownFlags::parse("nosave now").unwrap();
        assert!(f.has(ShutdownFlags::NOSAVE) && f.has(ShutdownFlags::NOW));
        assert!(!f.has(ShutdownFlags::SAVE) && !f.has(ShutdownFlags::FORCE));
    }
}
