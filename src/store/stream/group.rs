//! Consumer groups: where a group has read to, the entries it delivered
//! and not yet acknowledged (its pending entries list, PEL), and its
//! consumers, each with its own share of the PEL.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use super::StreamId;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Group {
    /// The last ID delivered to the group with `>`.
    pub last_id: StreamId,
    /// How many entries the group has read, as Redis 7.0 counts it for the
    /// lag; None when it cannot be known (Redis's -1).
    pub entries_read: Option<u64>,
    /// Delivered, not acknowledged.
    pub pel: BTreeMap<StreamId, Pending>,
    /// By name (Redis lists them in name order).
    pub consumers: BTreeMap<Bytes, Consumer>,
}

/// One entry of a group's PEL.
#[derive(Clone, Debug, PartialEq)]
pub struct Pending {
    pub consumer: Bytes,
    /// Unix ms of the last delivery.
    pub delivery_time: u64,
    pub delivery_count: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Consumer {
    /// Unix ms the consumer was last seen (read, claimed, created).
    pub seen_time: u64,
    /// The IDs of the group's PEL owned by this consumer.
    pub pel: BTreeSet<StreamId>,
}

impl Group {
    pub fn new(last_id: StreamId, entries_read: Option<u64>) -> Group {
        Group {
            last_id,
            entries_read,
            ..Group::default()
        }
    }

    /// The consumer `name`, created (seen now) when missing; whether it
    /// was created.
    pub fn consumer(&mut self, name: &Bytes, now_ms: u64) -> (&mut Consumer, bool) {
        let created = !self.consumers.contains_key(name);
        let c = self
            .consumers
            .entry(name.clone())
            .or_insert_with(|| Consumer {
                seen_time: now_ms,
                pel: BTreeSet::new(),
            });
        (c, created)
    }

    /// Records a delivery of `id` to `consumer` (which must exist): a new
    /// PEL entry, or one that changes hands and counts one more delivery
    /// when `count` says so.
    pub fn deliver(&mut self, id: StreamId, consumer: &Bytes, now_ms: u64, count: bool) {
        if let Some(p) = self.pel.get_mut(&id) {
            if p.consumer != consumer {
                if let Some(old) = self.consumers.get_mut(&p.consumer) {
                    old.pel.remove(&id);
                }
                p.consumer = consumer.clone();
            }
            p.delivery_time = now_ms;
            if count {
                p.delivery_count += 1;
            }
        } else {
            self.pel.insert(
                id,
                Pending {
                    consumer: consumer.clone(),
                    delivery_time: now_ms,
                    delivery_count: 1,
                },
            );
        }
        if let Some(c) = self.consumers.get_mut(consumer) {
            c.pel.insert(id);
        }
    }

    /// XACK of one ID: whether it was pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(p) = self.pel.remove(&id) else {
            return false;
        };
        if let Some(c) = self.consumers.get_mut(&p.consumer) {
            c.pel.remove(&id);
        }
        true
    }

    /// Removes a consumer and its pending entries; how many it had, None
    /// when there was no such consumer.
    pub fn remove_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let c = self.consumers.remove(name)?;
        for id in &c.pel {
            self.pel.remove(id);
        }
        Some(c.pel.len())
    }

    pub fn heap_size(&self) -> usize {
        let consumers: usize = self
            .consumers
            .iter()
            .map(|(n, c)| n.len() + 48 + c.pel.len() * 24)
            .sum();
        self.pel.len() * 64 + consumers
    }
}
