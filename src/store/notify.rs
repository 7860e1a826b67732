//! Keyspace notifications: the event classes of `notify-keyspace-events`
//! and the buffer of events a shard produced, which its loop publishes on
//! `__keyspace@<db>__:<key>` and `__keyevent@<db>__:<event>`.

use bytes::Bytes;

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

/// Flags from the `notify-keyspace-events` string (already validated).
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

/// One event: `event` happened to `key` in database `db`.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyEvent {
    pub db: usize,
    pub event: &'static str,
    pub key: Bytes,
}

/// The events of one shard not yet published.
#[derive(Default, Clone)]
pub struct Notifier {
    pub flags: u32,
    pub events: Vec<KeyEvent>,
    /// Keys blocked clients wait on: every event signals them (see `ready`).
    pub ready: super::ready::ReadyKeys,
    /// WATCHed keys: every event is a change their watchers must see.
    pub watches: super::watch::Watches,
    /// Changes made by commands: every event except expiry's (Redis's
    /// `server.dirty`). A write whose call moved it is propagated
    /// (`cmd::propagate`); one that changed nothing (SET NX on an existing
    /// key, DEL of a missing one) is not.
    pub dirty: u64,
}

impl Notifier {
    /// Whether events of `class` are wanted at all.
    pub fn wants(&self, class: u32) -> bool {
        self.flags & class != 0 && self.flags & (KEYSPACE | KEYEVENT) != 0
    }

    /// A change made by a command.
    pub fn notify(&mut self, class: u32, event: &'static str, db: usize, key: &[u8]) {
        self.dirty = self.dirty.wrapping_add(1);
        self.signal(class, event, db, key);
    }

    /// A change made by expiry (lazy or active): signalled like any other,
    /// but no command's doing, so `dirty` stays (its propagation is the
    /// store's own DEL or HDEL, `store::propagate`).
    pub fn notify_expired(&mut self, class: u32, event: &'static str, db: usize, key: &[u8]) {
        self.signal(class, event, db, key);
    }

    fn signal(&mut self, class: u32, event: &'static str, db: usize, key: &[u8]) {
        self.ready.signal(db, key);
        if !self.watches.is_empty() {
            self.watches.touch(db, key, event);
        }
        if self.wants(class) {
            self.events.push(KeyEvent {
                db,
                event,
                key: Bytes::copy_from_slice(key),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_filtering() {
        let n = Notifier {
            flags: parse_flags("xE"),
            ..Notifier::default()
        };
        assert!(n.wants(EXPIRED));
        assert!(!n.wants(GENERIC));
        assert!(
            !Notifier {
                flags: parse_flags("x"),
                ..Notifier::default()
            }
            .wants(EXPIRED),
            "needs K or E"
        );
        assert_eq!(parse_flags("AKE") & STRING, STRING);
    }
}
