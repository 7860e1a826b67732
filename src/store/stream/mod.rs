//! Streams: entries of field-value pairs ordered by their ID, and the
//! consumer groups reading them.
//!
//! # Layout
//!
//! The entries live in *nodes* as Redis keeps them: a `BTreeMap` of nodes
//! keyed by their first ID, each one buffer of up to
//! `stream-node-max-entries` entries and `stream-node-max-bytes` bytes
//! (Redis's radix tree of listpacks; `fields` is the node's layout), IDs
//! written as differences from the node's first. What Redis answers
//! depends on these boundaries: an approximate trim (`MAXLEN ~`, `MINID
//! ~`) removes whole nodes only, XDEL marks an entry deleted in its node,
//! and a node whose entries are all deleted goes away. Beside each node
//! ember keeps what Redis's listpack would weigh ([`Node::bytes`]), which
//! decides when a node is full. DUMP writes the nodes as Redis's
//! listpacks (`store::rdb::stream`).
//!
//! Besides the entries a stream keeps, as Redis 7.0 does: the last ID it
//! generated or was given, the largest ID ever deleted by XDEL, and how
//! many entries were ever added (the basis of a group's lag).
//!
//! - `id`: the ID type and its text forms.
//! - `fields`: a node's bytes, and the view of one entry's fields.
//! - `group`: consumer groups, their pending entries and consumers.

pub mod fields;
pub mod group;
pub mod id;

use std::collections::BTreeMap;

use bytes::Bytes;

pub use fields::Fields;
use fields::{put_entry, Entries, DELETED};
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
    /// The entries (`fields`).
    data: Vec<u8>,
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
    /// The nodes by master ID, each holding its entries' bytes (see
    /// [`Node`] and `fields`).
    nodes: BTreeMap<StreamId, Node>,
    /// Entries not deleted.
    len: usize,
    /// The largest ID the stream has had (XADD's floor for the next one).
    pub last_id: StreamId,
    /// The largest ID XDEL removed (0-0: none).
    pub max_deleted: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
    /// Consumer groups by name (Redis lists them in name order).
    pub groups: BTreeMap<Bytes, Group>,
}

impl Node {
    fn new(id: StreamId, fields_values: &[Bytes]) -> Node {
        let fields: Box<[Bytes]> = fields_values
            .iter()
            .step_by(2)
            .map(|f| Bytes::copy_from_slice(f))
            .collect();
        Node {
            live: 0,
            deleted: 0,
            last: id,
            bytes: master_entry_bytes(&fields),
            fields,
            data: Vec::new(),
        }
    }

    /// Every entry, deleted ones included.
    fn all(&self, master: StreamId) -> Entries<'_> {
        Entries {
            master,
            data: &self.data,
            at: 0,
        }
    }

    /// The live entries.
    fn live(&self, master: StreamId) -> impl Iterator<Item = (StreamId, Fields<'_>)> {
        self.all(master)
            .filter(|e| !e.deleted)
            .map(|e| (e.id, e.fields))
    }

    fn push(&mut self, master: StreamId, id: StreamId, fields_values: &[Bytes]) {
        self.bytes += entry_bytes(master, id, &self.fields, fields_values);
        self.live += 1;
        self.last = id;
        put_entry(&mut self.data, master, id, fields_values);
    }

    /// Marks the live entry at `at` deleted.
    fn mark_deleted(&mut self, at: usize) {
        self.data[at] |= DELETED;
        self.live -= 1;
        self.deleted += 1;
    }
}

impl Stream {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first entry's ID, 0-0 when empty (Redis's `first_id`).
    pub fn first_id(&self) -> StreamId {
        self.first().map(|(id, _)| id).unwrap_or_default()
    }

    /// Every node holds a live entry, so the first node has the first.
    pub fn first(&self) -> Option<(StreamId, Fields<'_>)> {
        let (master, node) = self.nodes.iter().next()?;
        node.live(*master).next()
    }

    pub fn last(&self) -> Option<(StreamId, Fields<'_>)> {
        let (master, node) = self.nodes.iter().next_back()?;
        node.live(*master).last()
    }

    pub fn get(&self, id: StreamId) -> Option<Fields<'_>> {
        let (master, node) = self.nodes.range(..=id).next_back()?;
        node.live(*master)
            .take_while(|(e, _)| *e <= id)
            .find(|(e, _)| *e == id)
            .map(|(_, f)| f)
    }

    /// The entries from `start` to `end` inclusive, ascending or (`rev`)
    /// descending: the nodes that may hold them, walked in order.
    pub fn range(
        &self,
        start: StreamId,
        end: StreamId,
        rev: bool,
    ) -> Box<dyn Iterator<Item = (StreamId, Fields<'_>)> + '_> {
        if start > end {
            return Box::new(std::iter::empty());
        }
        let from = self
            .nodes
            .range(..=start)
            .next_back()
            .map_or(StreamId::MIN, |(m, _)| *m);
        let nodes = self.nodes.range(from..=end);
        if rev {
            Box::new(
                nodes
                    .rev()
                    .flat_map(|(m, n)| n.live(*m).collect::<Vec<_>>().into_iter().rev())
                    .skip_while(move |(id, _)| *id > end)
                    .take_while(move |(id, _)| *id >= start),
            )
        } else {
            Box::new(
                nodes
                    .flat_map(|(m, n)| n.live(*m))
                    .skip_while(move |(id, _)| *id < start)
                    .take_while(move |(id, _)| *id <= end),
            )
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
        let full = match self.nodes.iter_mut().next_back() {
            None => true,
            Some((_, node)) => {
                let full = node.bytes + payload >= max_bytes
                    || (limits.entries > 0 && node.live + node.deleted >= limits.entries as u64);
                if full {
                    // A full node takes no more entries: give back its slack.
                    node.data.shrink_to_fit();
                }
                full
            }
        };
        if full {
            self.nodes.insert(id, Node::new(id, &fields_values));
        }
        let (master, node) = self.nodes.iter_mut().next_back().expect("a tail node");
        node.push(*master, id, &fields_values);
        self.len += 1;
        self.last_id = id;
        self.entries_added += 1;
    }

    /// Loads an entry as a DUMP payload lists it, into the node starting
    /// at `master` (created when new). Requires: ascending IDs.
    pub fn load_entry(&mut self, master: StreamId, id: StreamId, fields_values: Vec<Bytes>) {
        self.nodes
            .entry(master)
            .or_insert_with(|| Node::new(id, &fields_values))
            .push(master, id, &fields_values);
        self.len += 1;
    }

    /// XDEL of one ID: whether it was there. A node left with no live
    /// entry goes, as in Redis.
    pub fn delete(&mut self, id: StreamId) -> bool {
        let Some((&master, node)) = self.nodes.range_mut(..=id).next_back() else {
            return false;
        };
        let Some(at) = node
            .all(master)
            .take_while(|e| e.id <= id)
            .find(|e| e.id == id && !e.deleted)
            .map(|e| e.at)
        else {
            return false;
        };
        node.mark_deleted(at);
        if node.live == 0 {
            self.nodes.remove(&master);
        }
        self.len -= 1;
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
        while let Some((&master, node)) = self.nodes.iter_mut().next() {
            let len = self.len as u64;
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
                let live = node.live;
                self.nodes.remove(&master);
                self.len -= live as usize;
                removed += live;
                continue;
            }
            if spec.approx {
                break;
            }
            let mut marks = Vec::new();
            let mut left = len;
            for e in node.all(master).filter(|e| !e.deleted) {
                let stop = match spec.rule {
                    Trim::MaxLen(max) => left <= max,
                    Trim::MinId(min) => e.id >= min,
                };
                if stop {
                    break;
                }
                marks.push(e.at);
                left -= 1;
            }
            for at in &marks {
                node.mark_deleted(*at);
            }
            self.len -= marks.len();
            removed += marks.len() as u64;
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

    /// Rough heap footprint (MEMORY USAGE, lazy free): the nodes' bytes,
    /// their bookkeeping, and the groups.
    pub fn heap_size(&self) -> usize {
        let nodes: usize = self
            .nodes
            .values()
            .map(|n| n.data.capacity() + n.fields.iter().map(|f| f.len() + 32).sum::<usize>() + 160)
            .sum();
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, g)| name.len() + 64 + g.heap_size())
            .sum();
        nodes + groups + 64
    }

    /// Checks the bookkeeping against the nodes' bytes (DEBUG EMBER-CHECK).
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut prev: Option<StreamId> = None;
        let mut total = 0usize;
        for (master, node) in &self.nodes {
            let (mut live, mut deleted) = (0u64, 0u64);
            let mut entries = node.all(*master);
            for e in entries.by_ref() {
                if e.id < *master || prev.is_some_and(|p| p >= e.id) {
                    return Err(format!("entry {} out of order in node {master}", e.id));
                }
                prev = Some(e.id);
                if e.deleted {
                    deleted += 1;
                } else {
                    live += 1;
                }
            }
            if entries.at != node.data.len() {
                return Err(format!("node {master} has bytes past its last entry"));
            }
            if live != node.live || deleted != node.deleted || live == 0 {
                return Err(format!(
                    "node {master} counts {}+{} entries, holds {live}+{deleted}",
                    node.live, node.deleted
                ));
            }
            total += live as usize;
        }
        if total != self.len {
            return Err(format!("length {} but {total} live entries", self.len));
        }
        if prev.is_some_and(|p| p > self.last_id) {
            return Err(format!("an entry above the last ID {}", self.last_id));
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
