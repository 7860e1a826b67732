//! Streams: entries of field-value pairs ordered by their ID, and the
//! consumer groups reading them.
//!
//! # Layout
//!
//! The entries are a `BTreeMap` keyed by [`StreamId`]. Redis keeps them in
//! a radix tree of listpack *nodes* of up to `stream-node-max-entries`
//! entries and `stream-node-max-bytes` bytes; ember keeps the node
//! boundaries beside the map ([`Node`]: its first ID, counts and the size
//! Redis's listpack would have) without the listpacks themselves, because
//! what Redis answers depends on them: an approximate trim (`MAXLEN ~`,
//! `MINID ~`) removes whole nodes only, and a node whose entries are all
//! deleted goes away. DUMP writes the nodes as Redis's listpacks
//! (`store::rdb::stream`).
//!
//! Besides the entries a stream keeps, as Redis 7.0 does: the last ID it
//! generated or was given, the largest ID ever deleted by XDEL, and how
//! many entries were ever added (the basis of a group's lag).
//!
//! - `id`: the ID type and its text forms.
//! - `group`: consumer groups, their pending entries and consumers.

pub mod fields;
pub mod group;
pub mod id;

use std::collections::BTreeMap;

use bytes::Bytes;

pub use fields::Fields;
use fields::Packed;
pub use group::{Consumer, Group, Pending};
pub use id::StreamId;

/// The largest node Redis lets a stream listpack grow to
/// (`STREAM_LISTPACK_MAX_SIZE`, 1 GiB); also the limit when
/// `stream-node-max-bytes` is 0.
const NODE_MAX_BYTES_CAP: usize = 1 << 30;

/// When XADD starts a new node (`stream-node-max-*`, read from CONFIG by
/// the caller).
pub use crate::config::StreamNodeLimits as NodeLimits;

/// One node's bookkeeping: the node starts at its key in
/// [`Stream::nodes`] (its *master ID*, the first ID ever added to it) and
/// holds the entries up to the next node's key.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Entries not deleted.
    pub live: u64,
    /// Entries marked deleted (XDEL, or an exact trim inside the node).
    pub deleted: u64,
    /// The last ID ever added to the node, deleted or not: MINID trims a
    /// whole node when it is below the threshold.
    pub last: StreamId,
    /// About the bytes Redis's listpack for this node takes (its check for
    /// a full node).
    pub bytes: usize,
    /// The fields of the node's first entry: later entries with the same
    /// fields are stored more compactly, in Redis and in the estimate.
    pub fields: Box<[Bytes]>,
}

/// How a trim decides what goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trim {
    /// Keep at most this many entries.
    MaxLen(u64),
    /// Remove the entries below this ID.
    MinId(StreamId),
}

/// A trim request: the rule, `~` (whole nodes only) and the LIMIT on how
/// many entries it may remove (0: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrimSpec {
    pub rule: Trim,
    pub approx: bool,
    pub limit: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stream {
    /// Each entry's fields and values, alternating, packed.
    entries: BTreeMap<StreamId, Packed>,
    /// The nodes by master ID (see [`Node`]).
    nodes: BTreeMap<StreamId, Node>,
    /// The largest ID the stream has had (XADD's floor for the next one).
    pub last_id: StreamId,
    /// The largest ID XDEL removed (0-0: none).
    pub max_deleted: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
    /// Consumer groups by name (Redis lists them in name order).
    pub groups: BTreeMap<Bytes, Group>,
}

impl Stream {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first entry's ID, 0-0 when empty (Redis's `first_id`).
    pub fn first_id(&self) -> StreamId {
        self.entries.keys().next().copied().unwrap_or_default()
    }

    pub fn first(&self) -> Option<(StreamId, Fields<'_>)> {
        self.entries
            .iter()
            .next()
            .map(|(id, fv)| (*id, fv.fields()))
    }

    pub fn last(&self) -> Option<(StreamId, Fields<'_>)> {
        self.entries
            .iter()
            .next_back()
            .map(|(id, fv)| (*id, fv.fields()))
    }

    pub fn get(&self, id: StreamId) -> Option<Fields<'_>> {
        self.entries.get(&id).map(Packed::fields)
    }

    /// The entries from `start` to `end` inclusive, ascending or (`rev`)
    /// descending.
    pub fn range(
        &self,
        start: StreamId,
        end: StreamId,
        rev: bool,
    ) -> Box<dyn Iterator<Item = (StreamId, Fields<'_>)> + '_> {
        if start > end {
            return Box::new(std::iter::empty());
        }
        let it = self
            .entries
            .range(start..=end)
            .map(|(id, fv)| (*id, fv.fields()));
        if rev {
            Box::new(it.rev())
        } else {
            Box::new(it)
        }
    }

    pub fn nodes(&self) -> impl Iterator<Item = (&StreamId, &Node)> {
        self.nodes.iter()
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Appends an entry whose ID is above [`Stream::last_id`]. Requires:
    /// `id > last_id` (or the stream never had one) and an even, non-empty
    /// `fields_values`.
    pub fn append(&mut self, id: StreamId, fields_values: Vec<Bytes>, limits: NodeLimits) {
        let payload: usize = fields_values.iter().map(|b| b.len()).sum();
        let max_bytes = match limits.bytes {
            0 => NODE_MAX_BYTES_CAP,
            b => b.min(NODE_MAX_BYTES_CAP),
        };
        let full = match self.nodes.iter().next_back() {
            None => true,
            Some((_, node)) => {
                node.bytes + payload >= max_bytes
                    || (limits.entries > 0 && node.live + node.deleted >= limits.entries as u64)
            }
        };
        if full {
            let fields: Box<[Bytes]> = fields_values
                .iter()
                .step_by(2)
                .map(|f| Bytes::copy_from_slice(f))
                .collect();
            let bytes = master_entry_bytes(&fields);
            self.nodes.insert(
                id,
                Node {
                    live: 0,
                    deleted: 0,
                    last: id,
                    bytes,
                    fields,
                },
            );
        }
        let (master, node) = self.nodes.iter_mut().next_back().expect("a tail node");
        node.bytes += entry_bytes(*master, id, &node.fields, &fields_values);
        node.live += 1;
        node.last = id;
        self.entries.insert(id, Packed::new(&fields_values));
        self.last_id = id;
        self.entries_added += 1;
    }

    /// Loads an entry as a DUMP payload lists it, into the node starting
    /// at `master` (created when new). Requires: ascending IDs.
    pub fn load_entry(&mut self, master: StreamId, id: StreamId, fields_values: Vec<Bytes>) {
        let node = self.nodes.entry(master).or_insert_with(|| {
            let fields: Box<[Bytes]> = fields_values.iter().step_by(2).cloned().collect();
            Node {
                live: 0,
                deleted: 0,
                last: id,
                bytes: master_entry_bytes(&fields),
                fields,
            }
        });
        node.bytes += entry_bytes(master, id, &node.fields, &fields_values);
        node.live += 1;
        node.last = id;
        self.entries.insert(id, Packed::new(&fields_values));
    }

    fn node_of(&mut self, id: StreamId) -> Option<(StreamId, &mut Node)> {
        self.nodes
            .range_mut(..=id)
            .next_back()
            .map(|(master, node)| (*master, node))
    }

    /// XDEL of one ID: whether it was there. A node left with no live
    /// entry goes, as in Redis.
    pub fn delete(&mut self, id: StreamId) -> bool {
        if self.entries.remove(&id).is_none() {
            return false;
        }
        if let Some((master, node)) = self.node_of(id) {
            node.live -= 1;
            node.deleted += 1;
            if node.live == 0 {
                self.nodes.remove(&master);
            }
        }
        if id > self.max_deleted {
            self.max_deleted = id;
        }
        true
    }

    /// Trims as Redis's `streamTrim` does; returns how many entries went.
    ///
    /// 1. Walk the nodes from the oldest. Stop once the rule holds (MAXLEN:
    ///    the length is at most the maximum).
    /// 2. With a LIMIT, stop before a node that would take the removed
    ///    count past it.
    /// 3. A node that can go whole (MAXLEN: what stays without it is still
    ///    enough; MINID: its last ID is below the threshold) goes.
    /// 4. Otherwise an approximate trim stops; an exact one deletes the
    ///    node's entries one by one until the rule holds, and stops.
    pub fn trim(&mut self, spec: TrimSpec) -> u64 {
        let mut removed = 0u64;
        while let Some((&master, node)) = self.nodes.iter().next() {
            let len = self.entries.len() as u64;
            if let Trim::MaxLen(max) = spec.rule {
                if len <= max {
                    break;
                }
            }
            if spec.limit > 0 && removed + node.live > spec.limit {
                break;
            }
            let whole = match spec.rule {
                Trim::MaxLen(max) => len - node.live >= max,
                Trim::MinId(min) => node.last < min,
            };
            if whole {
                let end = self.nodes.range(master..).nth(1).map(|(k, _)| *k);
                let live = node.live;
                self.nodes.remove(&master);
                match end {
                    Some(end) => {
                        let rest = self.entries.split_off(&end);
                        self.entries = rest;
                    }
                    None => self.entries.clear(),
                }
                removed += live;
                continue;
            }
            if spec.approx {
                break;
            }
            let mut gone = 0;
            while let Some((&id, _)) = self.entries.iter().next() {
                let stop = match spec.rule {
                    Trim::MaxLen(max) => self.entries.len() as u64 <= max,
                    Trim::MinId(min) => id >= min,
                };
                if stop {
                    break;
                }
                self.entries.remove(&id);
                gone += 1;
            }
            if let Some(node) = self.nodes.get_mut(&master) {
                node.live -= gone;
                node.deleted += gone;
            }
            removed += gone;
            break;
        }
        removed
    }

    /// Redis's `streamEstimateDistanceFromFirstEverEntry`: the logical
    /// position (entries added up to and including it) of `id`, when it
    /// can be known.
    pub fn entries_read_at(&self, id: StreamId) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.is_empty() && id <= self.last_id {
            return Some(self.entries_added);
        }
        match id.cmp(&self.last_id) {
            std::cmp::Ordering::Equal => return Some(self.entries_added),
            std::cmp::Ordering::Greater => return None,
            std::cmp::Ordering::Less => {}
        }
        let first = self.first_id();
        if self.max_deleted == StreamId::MIN || self.max_deleted < first {
            let before = self.entries_added - self.len() as u64;
            match id.cmp(&first) {
                std::cmp::Ordering::Less => return Some(before),
                std::cmp::Ordering::Equal => return Some(before + 1),
                std::cmp::Ordering::Greater => {}
            }
        }
        None
    }

    /// Redis's `streamRangeHasTombstones`: whether an XDEL made a hole at
    /// or after `start` among the entries still there.
    pub fn has_tombstones_from(&self, start: StreamId) -> bool {
        if self.is_empty() || self.max_deleted == StreamId::MIN {
            return false;
        }
        if self.first_id() > self.max_deleted {
            return false;
        }
        start <= self.max_deleted
    }

    /// A group's lag as XINFO reports it, None when it cannot be known.
    pub fn lag(&self, group: &Group) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if let Some(read) = group.entries_read {
            if !self.has_tombstones_from(group.last_id) {
                return Some(self.entries_added.saturating_sub(read));
            }
        }
        self.entries_read_at(group.last_id)
            .map(|read| self.entries_added.saturating_sub(read))
    }

    /// After a group was handed `id` (XREADGROUP `>`): moves its last ID
    /// and read counter as Redis does.
    pub fn advance_group(&self, group: &mut Group, id: StreamId) {
        if id <= group.last_id {
            return;
        }
        match group.entries_read {
            Some(read) if !self.has_tombstones_from(id) => group.entries_read = Some(read + 1),
            _ if self.entries_added > 0 => group.entries_read = self.entries_read_at(id),
            _ => {}
        }
        group.last_id = id;
    }

    /// Rough heap footprint (MEMORY USAGE, lazy free).
    pub fn heap_size(&self) -> usize {
        // Each entry: its packed items (allocated in 16-byte classes) and
        // its share of the B-tree's nodes (a 32-byte slot in nodes that
        // appends leave about half full), as measured by used_memory.
        let packed: usize = self
            .entries
            .values()
            .map(|p| p.heap_size().div_ceil(16) * 16 + 80)
            .sum();
        let entries: usize = packed + self.nodes.len() * 96;
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, g)| name.len() + 64 + g.heap_size())
            .sum();
        entries + groups + 64
    }

    /// Checks the bookkeeping against the entries (DEBUG EMBER-CHECK).
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut masters: Vec<StreamId> = self.nodes.keys().copied().collect();
        masters.push(StreamId::MAX);
        for pair in masters.windows(2) {
            let node = &self.nodes[&pair[0]];
            let live = self.entries.range(pair[0]..pair[1]).count() as u64;
            if live != node.live || live == 0 {
                return Err(format!(
                    "node {} counts {} live entries, holds {live}",
                    pair[0], node.live
                ));
            }
        }
        let counted: u64 = self.nodes.values().map(|n| n.live).sum();
        if counted != self.entries.len() as u64 {
            return Err("entries outside every node".into());
        }
        if let Some((id, _)) = self.last() {
            if id > self.last_id {
                return Err(format!("entry {id} above the last ID {}", self.last_id));
            }
        }
        Ok(())
    }
}

/// The bytes of a listpack integer or string entry holding `s`, with its
/// back length: Redis's listpack sizes (`store::rdb::listpack`).
fn lp_entry(s: &[u8]) -> usize {
    crate::store::rdb::listpack::Writer::entry_size(s)
}

fn lp_int(v: i64) -> usize {
    let mut text = Vec::with_capacity(20);
    crate::util::num::format_i64(v, &mut text);
    lp_entry(&text)
}

/// A new node's listpack: its header and end byte, and the master entry
/// (count, deleted, the number of fields, the fields, a 0 terminator).
fn master_entry_bytes(fields: &[Bytes]) -> usize {
    7 + lp_int(1)
        + lp_int(0)
        + lp_int(fields.len() as i64)
        + fields.iter().map(|f| lp_entry(f)).sum::<usize>()
        + lp_int(0)
}

/// What appending an entry adds to its node's listpack: flags, the ID as a
/// difference from the master ID, the fields unless they are the master's,
/// the values, and the entry's element count.
fn entry_bytes(master: StreamId, id: StreamId, master_fields: &[Bytes], fv: &[Bytes]) -> usize {
    let same = fv.len() / 2 == master_fields.len()
        && fv.iter().step_by(2).zip(master_fields).all(|(a, b)| a == b);
    let ms = id.ms.wrapping_sub(master.ms) as i64;
    let seq = id.seq.wrapping_sub(master.seq) as i64;
    let mut n = lp_int(0) + lp_int(ms) + lp_int(seq);
    let elements = if same {
        n += fv
            .iter()
            .skip(1)
            .step_by(2)
            .map(|v| lp_entry(v))
            .sum::<usize>();
        3 + fv.len() / 2
    } else {
        n += lp_int((fv.len() / 2) as i64) + fv.iter().map(|x| lp_entry(x)).sum::<usize>();
        4 + fv.len()
    };
    n + lp_int(elements as i64)
}

#[cfg(test)]
mod tests;
