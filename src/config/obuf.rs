//! `client-output-buffer-limit`: per client class, how much unsent reply
//! a client may hold before it is closed (the shard loop's
//! `check_output_limit` reads the limits).
//!
//! The value is `<class> <hard> <soft> <soft seconds>`, one or more groups;
//! a group changes only its class, so a config file may give one class a
//! line and a flag all of them in one value.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::kind::{parse_memory, Custom, Value};
use super::live::Live;

/// The client classes, in the order Redis prints them (its
/// CLIENT_TYPE_NORMAL, _SLAVE, _PUBSUB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObufClass {
    Normal = 0,
    Replica = 1,
    PubSub = 2,
}

/// One class's limit: a client whose unsent replies hold `hard` bytes or
/// more, or `soft` bytes or more for longer than `soft_seconds`, is
/// closed. 0 turns a limit off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObufLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_seconds: u64,
}

/// One class's limit as the shards read it.
#[derive(Default)]
pub(super) struct ObufAtomics {
    hard: AtomicU64,
    soft: AtomicU64,
    soft_seconds: AtomicU64,
}

impl ObufAtomics {
    pub(super) fn load(&self) -> ObufLimit {
        ObufLimit {
            hard: self.hard.load(Relaxed),
            soft: self.soft.load(Relaxed),
            soft_seconds: self.soft_seconds.load(Relaxed),
        }
    }

    fn store(&self, limit: ObufLimit) {
        self.hard.store(limit.hard, Relaxed);
        self.soft.store(limit.soft, Relaxed);
        self.soft_seconds.store(limit.soft_seconds, Relaxed);
    }
}

/// The row's functions. The default is Redis 7.0's.
pub(super) static CLIENT_OUTPUT_BUFFER_LIMIT: Custom = Custom {
    default: "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60",
    parse: |live, text| parse(&read_all(live), text).map(Value::Obuf),
    read: |live| Value::Obuf(read_all(live)),
    store: |live, value| {
        if let Value::Obuf(limits) = value {
            for (slot, limit) in live.v.obuf.iter().zip(limits) {
                slot.store(limit);
            }
        }
    },
};

fn read_all(live: &Live) -> [ObufLimit; 3] {
    [0, 1, 2].map(|class| live.v.obuf[class].load())
}

/// The limits as CONFIG GET prints them (Redis says `slave`).
pub fn format(limits: &[ObufLimit; 3]) -> String {
    ["normal", "slave", "pubsub"]
        .iter()
        .zip(limits)
        .map(|(class, l)| format!("{class} {} {} {}", l.hard, l.soft, l.soft_seconds))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `current` with the groups of `text` applied, all or nothing, with Redis
/// 7.0's checks and errors: every number is a memory value (so `60` and
/// `1k` seconds both parse, as in Redis); the classes are normal, replica
/// (or slave) and pubsub; an empty value changes nothing.
pub fn parse(current: &[ObufLimit; 3], text: &str) -> Result<[ObufLimit; 3], String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if !words.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut next = *current;
    for group in words.chunks(4) {
        let class = match group[0].to_ascii_lowercase().as_str() {
            "normal" => ObufClass::Normal,
            "replica" | "slave" => ObufClass::Replica,
            "pubsub" => ObufClass::PubSub,
            _ => {
                return Err("Invalid client class specified in buffer limit configuration.".into())
            }
        };
        let mut n = [0u64; 3];
        for (slot, word) in n.iter_mut().zip(&group[1..]) {
            // Redis reads them with memtoull, whose result must fit a long long.
            *slot = parse_memory(word)
                .filter(|&x| x <= i64::MAX as u64)
                .ok_or_else(|| {
                    "Error in hard, soft or soft_seconds setting in buffer limit configuration."
                        .to_string()
                })?;
        }
        next[class as usize] = ObufLimit {
            hard: n[0],
            soft: n[1],
            soft_seconds: n[2],
        };
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_change_only_their_class() {
        let zero = [ObufLimit::default(); 3];
        let set = parse(&zero, "pubsub 1k 2kb 3 Replica 4g 5 6").unwrap();
        assert_eq!(
            format(&set),
            "normal 0 0 0 slave 4000000000 5 6 pubsub 1000 2048 3"
        );
        assert_eq!(parse(&set, "").unwrap(), set);
    }

    #[test]
    fn errors_are_redis_texts_and_change_nothing() {
        let zero = [ObufLimit::default(); 3];
        let wrong = "Wrong number of arguments in buffer limit configuration.";
        let class = "Invalid client class specified in buffer limit configuration.";
        let number = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        for (text, want) in [
            ("normal 1mb", wrong),
            ("normal 1 2 3 pubsub", wrong),
            ("foo 1 2 3", class),
            ("master 1 2 3", class),
            ("normal x 0 0", number),
            ("normal -1 0 0", number),
            ("normal 1 2 -1", number),
            ("normal 9223372036854775808 0 0", number),
            // All or nothing: the good first group is not kept either.
            ("normal 1 1 1 pubsub 1 2 x", number),
        ] {
            assert_eq!(parse(&zero, text).unwrap_err(), want, "{text}");
        }
    }
}
