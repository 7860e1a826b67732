//! Keyspace notifications: the buffer of events a shard produced, which
//! its loop publishes on `__keyspace@<db>__:<key>` and
//! `__keyevent@<db>__:<event>`, filtered by the event classes of
//! `notify-keyspace-events` (their bits are declared in `config::events`).

use bytes::Bytes;

/// The event classes are `notify-keyspace-events`'s, so config declares
/// their bits; the notifier tests them.
pub use crate::config::events::{
    parse_flags, EVICTED, EXPIRED, GENERIC, HASH, KEYEVENT, KEYSPACE, KEY_MISS, LIST, MODULE, NEW,
    SET, STREAM, STRING, ZSET,
};

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
    /// Keys tracking clients read (client-side caching): every event is a
    /// change their readers must hear of.
    pub tracking: super::tracking::Table,
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
        self.signal(class, event, db, key, true);
    }

    /// A change made by expiry (lazy or active): signalled like any other,
    /// but no command's doing, so `dirty` stays (its propagation is the
    /// store's own DEL or HDEL, `store::propagate`).
    pub fn notify_expired(&mut self, class: u32, event: &'static str, db: usize, key: &[u8]) {
        self.signal(class, event, db, key, false);
    }

    fn signal(&mut self, class: u32, event: &'static str, db: usize, key: &[u8], by_command: bool) {
        self.ready.signal(db, key);
        if !self.watches.is_empty() {
            self.watches.touch(db, key, event);
        }
        if self.tracking.active() {
            self.tracking.touch(key, by_command, class == EVICTED);
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
