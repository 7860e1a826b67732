//! `notify-keyspace-events`: the letters of its value, the bits the shards
//! test (`store::notify` delivers the events), and the normal form CONFIG
//! GET prints.

use std::sync::atomic::Ordering::Relaxed;

use super::kind::{Custom, Value};

pub const KEYSPACE: u32 = 1 << 0;
pub const KEYEVENT: u32 = 1 << 1;
pub const GENERIC: u32 = 1 << 2;
pub const STRING: u32 = 1 << 3;
pub const LIST: u32 = 1 << 4;
pub const SET: u32 = 1 << 5;
pub const HASH: u32 = 1 << 6;
pub const ZSET: u32 = 1 << 7;
pub const EXPIRED: u32 = 1 << 8;
pub const EVICTED: u32 = 1 << 9;
pub const STREAM: u32 = 1 << 10;
pub const KEY_MISS: u32 = 1 << 11;
pub const MODULE: u32 = 1 << 12;
pub const NEW: u32 = 1 << 13;

/// Flags from a `notify-keyspace-events` text (already validated).
pub fn parse_flags(text: &str) -> u32 {
    text.chars()
        .map(|c| match c {
            'K' => KEYSPACE,
            'E' => KEYEVENT,
            'g' => GENERIC,
            '$' => STRING,
            'l' => LIST,
            's' => SET,
            'h' => HASH,
            'z' => ZSET,
            'x' => EXPIRED,
            'e' => EVICTED,
            't' => STREAM,
            'm' => KEY_MISS,
            'd' => MODULE,
            'n' => NEW,
            'A' => GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM,
            _ => 0,
        })
        .fold(0, |a, b| a | b)
}

/// The row's functions: the normalized text for CONFIG GET, its bits for
/// the shards.
pub(super) static NOTIFY_KEYSPACE_EVENTS: Custom = Custom {
    default: "",
    parse: |_, text| normalize(text).map(Value::Text),
    read: |live| {
        Value::Text(
            live.v
                .notify_text
                .read()
                .map_or_else(|_| String::new(), |t| t.clone()),
        )
    },
    store: |live, value| {
        if let Value::Text(text) = value {
            live.v.notify_flags.store(parse_flags(&text), Relaxed);
            if let Ok(mut slot) = live.v.notify_text.write() {
                *slot = text;
            }
        }
    },
};

/// Event classes, in Redis's canonical order (`m` excepted: Redis prints
/// it after `K` and `E`).
const EVENT_CLASSES: &str = "g$lshzxetdn";
/// What `A` stands for (Redis 7.0's NOTIFY_ALL).
const ALL_CLASSES: &str = "g$lshzxetd";

/// Normalizes flags the way Redis 7.0 prints them back: `A` when every
/// class of it is on (else the classes one by one), then `K`, `E` and `m`.
/// Classes without `K` or `E` are kept, as Redis does, though nothing is
/// delivered then. One deviation: Redis drops `n` from the text after `A`
/// while still honouring it; the flags are read back from this text here,
/// so `n` is kept.
pub fn normalize(text: &str) -> Result<String, String> {
    let invalid = || "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".to_string();
    let mut classes = std::collections::BTreeSet::new();
    let (mut keyspace, mut keyevent, mut key_miss) = (false, false, false);
    for c in text.chars() {
        match c {
            'A' => classes.extend(ALL_CLASSES.chars()),
            'K' => keyspace = true,
            'E' => keyevent = true,
            'm' => key_miss = true,
            c if EVENT_CLASSES.contains(c) => {
                classes.insert(c);
            }
            _ => return Err(invalid()),
        }
    }
    let all = ALL_CLASSES.chars().all(|c| classes.contains(&c));
    let mut out = String::new();
    if all {
        out.push('A');
    }
    for c in EVENT_CLASSES.chars() {
        if classes.contains(&c) && !(all && ALL_CLASSES.contains(c)) {
            out.push(c);
        }
    }
    for (on, letter) in [(keyspace, 'K'), (keyevent, 'E'), (key_miss, 'm')] {
        if on {
            out.push(letter);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_normalize_like_redis() {
        assert_eq!(normalize("Ex").unwrap(), "xE");
        assert_eq!(normalize("KEA").unwrap(), "AKE");
        assert_eq!(normalize("").unwrap(), "");
        assert_eq!(normalize("x").unwrap(), "x");
        assert_eq!(normalize("KEAm").unwrap(), "AKEm");
        assert_eq!(normalize("g$lshzxetd").unwrap(), "A");
        assert_eq!(normalize("Kgn").unwrap(), "gnK");
        assert_eq!(
            normalize("Q").unwrap_err(),
            "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
        );
    }

    #[test]
    fn the_normal_form_keeps_every_bit() {
        for text in ["KEA", "Kgn", "xE", "AKEm", "Ed$"] {
            assert_eq!(parse_flags(&normalize(text).unwrap()), parse_flags(text));
        }
        assert_eq!(parse_flags("AKE") & STRING, STRING);
        assert_eq!(parse_flags(""), 0);
    }
}
