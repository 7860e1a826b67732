//! Pub/Sub: the channel and pattern registry shared by every shard thread.
//!
//! Subscribers are (shard, connection) pairs. PUBLISH, on whatever shard it
//! arrives, looks its receivers up here and hands each message to the
//! receiver's shard, which writes it to the connection. Keyspace
//! notifications use the same path.

use bytes::Bytes;
use dashmap::DashMap;

use crate::resp::Frame;
use crate::util::glob::glob_match;

/// A subscribed connection: the shard that owns it and its slot there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Subscriber {
    pub shard: usize,
    pub token: usize,
    pub conn_id: u64,
}

/// A message on its way to one subscriber.
pub struct Delivery {
    pub to: Subscriber,
    pub frame: Frame,
}

#[derive(Default)]
pub struct Registry {
    channels: DashMap<Bytes, Vec<Subscriber>>,
    patterns: DashMap<Bytes, Vec<Subscriber>>,
    /// Redis 7's shard channels (SSUBSCRIBE, SPUBLISH): a namespace of
    /// their own; without a cluster every channel is on this server.
    shard_channels: DashMap<Bytes, Vec<Subscriber>>,
}

/// Requires: `sub` is not yet subscribed to `name` (the connection's own
/// set of names says so first, in O(1), where a scan of the channel's
/// subscribers made N clients subscribing to one channel cost O(N²)).
fn add(map: &DashMap<Bytes, Vec<Subscriber>>, name: Bytes, sub: Subscriber) {
    let mut subs = map.entry(name).or_default();
    debug_assert!(!subs.contains(&sub), "subscribed twice");
    subs.push(sub);
}

fn remove(map: &DashMap<Bytes, Vec<Subscriber>>, name: &[u8], sub: Subscriber) {
    let now_empty = match map.get_mut(name) {
        Some(mut subs) => {
            subs.retain(|s| *s != sub);
            subs.is_empty()
        }
        None => false,
    };
    if now_empty {
        map.remove_if(name, |_, subs| subs.is_empty());
    }
}

impl Registry {
    pub fn subscribe(&self, channel: Bytes, sub: Subscriber) {
        add(&self.channels, channel, sub);
    }

    pub fn unsubscribe(&self, channel: &[u8], sub: Subscriber) {
        remove(&self.channels, channel, sub);
    }

    pub fn psubscribe(&self, pattern: Bytes, sub: Subscriber) {
        add(&self.patterns, pattern, sub);
    }

    pub fn punsubscribe(&self, pattern: &[u8], sub: Subscriber) {
        remove(&self.patterns, pattern, sub);
    }

    /// Whether anyone listens at all (keyspace events skip work when not).
    pub fn ssubscribe(&self, channel: Bytes, sub: Subscriber) {
        add(&self.shard_channels, channel, sub);
    }

    pub fn sunsubscribe(&self, channel: &[u8], sub: Subscriber) {
        remove(&self.shard_channels, channel, sub);
    }

    /// SPUBLISH: `smessage` to the shard channel's subscribers.
    pub fn spublish(&self, channel: &Bytes, message: &Bytes, out: &mut Vec<Delivery>) -> usize {
        let Some(subs) = self.shard_channels.get(channel.as_ref()) else {
            return 0;
        };
        for &to in subs.iter() {
            let frame = Frame::Push(vec![
                Frame::Bulk(Bytes::from_static(b"smessage")),
                Frame::Bulk(channel.clone()),
                Frame::Bulk(message.clone()),
            ]);
            out.push(Delivery { to, frame });
        }
        subs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.channels.is_empty() && self.patterns.is_empty() && self.shard_channels.is_empty()
    }

    /// Builds the deliveries of `message` on `channel`; returns how many
    /// subscribers receive it (PUBLISH's reply).
    pub fn publish(&self, channel: &Bytes, message: &Bytes, out: &mut Vec<Delivery>) -> usize {
        let before = out.len();
        if let Some(subs) = self.channels.get(channel.as_ref()) {
            for &to in subs.iter() {
                let frame = Frame::Push(vec![
                    Frame::Bulk(Bytes::from_static(b"message")),
                    Frame::Bulk(channel.clone()),
                    Frame::Bulk(message.clone()),
                ]);
                out.push(Delivery { to, frame });
            }
        }
        for entry in self.patterns.iter() {
            if !glob_match(entry.key(), channel, false) {
                continue;
            }
            for &to in entry.value().iter() {
                let frame = Frame::Push(vec![
                    Frame::Bulk(Bytes::from_static(b"pmessage")),
                    Frame::Bulk(entry.key().clone()),
                    Frame::Bulk(channel.clone()),
                    Frame::Bulk(message.clone()),
                ]);
                out.push(Delivery { to, frame });
            }
        }
        out.len() - before
    }

    /// Active channels (with at least one subscriber) matching `pattern`.
    pub fn channels(&self, pattern: Option<&[u8]>) -> Vec<Bytes> {
        self.channels
            .iter()
            .filter(|e| !e.value().is_empty())
            .filter(|e| pattern.is_none_or(|p| glob_match(p, e.key(), false)))
            .map(|e| e.key().clone())
            .collect()
    }

    pub fn numsub(&self, channel: &[u8]) -> usize {
        self.channels.get(channel).map_or(0, |s| s.len())
    }

    /// Channels with at least one subscriber (INFO `pubsub_channels`).
    pub fn channel_count(&self) -> usize {
        live_count(&self.channels)
    }

    /// Shard channels with at least one subscriber (INFO
    /// `pubsubshard_channels`).
    pub fn shard_channel_count(&self) -> usize {
        live_count(&self.shard_channels)
    }

    /// Number of patterns subscribed to (by anyone), as Redis counts NUMPAT.
    pub fn numpat(&self) -> usize {
        live_count(&self.patterns)
    }
}

/// Entries of `map` with at least one subscriber (an emptied entry may
/// stay until it is reused).
fn live_count<T>(map: &DashMap<Bytes, Vec<T>>) -> usize {
    map.iter().filter(|e| !e.value().is_empty()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(shard: usize, token: usize) -> Subscriber {
        Subscriber {
            shard,
            token,
            conn_id: token as u64,
        }
    }

    #[test]
    fn channels_and_patterns_receive() {
        let r = Registry::default();
        r.subscribe(Bytes::from_static(b"news"), sub(0, 1));
        r.subscribe(Bytes::from_static(b"news"), sub(1, 2));
        r.psubscribe(Bytes::from_static(b"n*"), sub(1, 3));
        let mut out = Vec::new();
        let n = r.publish(
            &Bytes::from_static(b"news"),
            &Bytes::from_static(b"hi"),
            &mut out,
        );
        assert_eq!(n, 3);
        assert_eq!(out.len(), 3);
        assert_eq!(r.numsub(b"news"), 2);
        assert_eq!(r.numpat(), 1);
        r.unsubscribe(b"news", sub(0, 1));
        r.unsubscribe(b"news", sub(1, 2));
        assert_eq!(r.numsub(b"news"), 0);
        assert!(r.channels(None).is_empty());
        r.punsubscribe(b"n*", sub(1, 3));
        assert!(r.is_empty());
    }
}
