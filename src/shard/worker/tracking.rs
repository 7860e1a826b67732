//! Client-side caching in the loop: turning this shard's changed tracked
//! keys into invalidation messages for the readers' connections, wherever
//! they are, and writing the messages that arrive here as each receiving
//! connection's protocol wants them.
//!
//! ```text
//!  key's shard                      reader's (or REDIRECT target's) shard
//!  -----------                      -------------------------------------
//!  table.invalidated / broadcast    Msg::Invalidate
//!   -> registry: home, redirect  -->  RESP3: > invalidate [keys]
//!      NOLOOP, BCAST prefixes         RESP2 target subscribed to anything:
//!                                       message __redis__:invalidate [keys]
//!                                     target gone: back to the reader as
//!                                       tracking-redir-broken <id>
//! ```
//!
//! A key's readers are told once: the key leaves the table with its first
//! change. `tracking-table-max-keys` bounds the keys of every shard's
//! table together: a shard over the shared count forgets keys of its own,
//! telling their readers, until the count is back at the limit.

use std::sync::atomic::Ordering::Relaxed;

use bytes::Bytes;

use super::Worker;
use crate::exec::Msg;
use crate::resp::{Frame, Protocol};
use crate::tracking::{Invalidation, Payload};

/// Keys one check forgets at most over `tracking-table-max-keys` (the
/// rest go at the next command or tick), so a lowered limit cannot stall
/// the shard.
const EVICT_MAX_PER_CHECK: usize = 10_000;

impl Worker {
    /// Routes what this shard's changes mean to tracking clients.
    pub(super) fn route_invalidations(&mut self) {
        self.limit_tracked_keys();
        self.route_pending();
    }

    /// Routes the changes listed so far.
    fn route_pending(&mut self) {
        let table = &mut self.data.store.stats.notify.tracking;
        if !table.has_news() {
            return;
        }
        let mut invalidated = std::mem::take(&mut table.evicted);
        invalidated.append(&mut table.invalidated);
        let broadcast = std::mem::take(&mut table.broadcast);
        let flushed = std::mem::take(&mut table.flushed);
        self.sync_tracked_counts();
        let registry = &self.data.shared.tracking;
        let mut out: Vec<Invalidation> = Vec::new();
        // A flush runs on every shard; one of them tells every client.
        if flushed && self.data.id == 0 {
            for client in registry.all() {
                out.push(addressed(&client, None));
            }
        }
        for change in invalidated {
            for id in change.readers {
                let Some(client) = registry.client(id) else {
                    continue; // tracking off since: Redis skips it too
                };
                if client.bcast || (client.noloop && change.by == Some(id)) {
                    continue;
                }
                out.push(addressed(&client, Some(vec![change.key.clone()])));
            }
        }
        if !broadcast.is_empty() {
            for (id, keys) in registry.broadcasts(&broadcast) {
                if let Some(client) = registry.client(id).filter(|c| c.bcast) {
                    out.push(addressed(&client, Some(keys)));
                }
            }
        }
        for inv in out {
            self.send_invalidation(inv);
        }
    }

    /// Tells the readers of keys evicted by a command's admission, before
    /// its reply goes out (the command's own changes wait for
    /// `route_invalidations`, after it).
    pub(super) fn route_evicted(&mut self) {
        let table = &mut self.data.store.stats.notify.tracking;
        if table.evicted.is_empty() {
            return;
        }
        let invalidated = std::mem::take(&mut table.evicted);
        let (others, broadcast, flushed) = (
            std::mem::take(&mut table.invalidated),
            std::mem::take(&mut table.broadcast),
            std::mem::take(&mut table.flushed),
        );
        table.invalidated = invalidated;
        self.route_pending();
        let table = &mut self.data.store.stats.notify.tracking;
        table.invalidated = others;
        table.broadcast = broadcast;
        table.flushed = flushed;
    }

    /// Before a command, while some client tracks and the server is over
    /// `maxmemory`: if other shards owe evictions, the command waits until
    /// they made them (one round trip), so that the invalidations of the
    /// keys they evict come before its reply, as in Redis, where eviction
    /// runs before the command. True: `argv` waits (it runs from
    /// `resume_input`).
    pub(super) fn wait_for_evictions(
        &mut self,
        token: usize,
        argv: &mut Option<Vec<Bytes>>,
    ) -> bool {
        if self.data.shared.tracking.tracking_clients() == 0
            || crate::config::EVICTION.maxmemory() == 0
        {
            return false;
        }
        let Some(spec) = argv.as_ref().and_then(|a| crate::cmd::lookup(&a[0])) else {
            return false;
        };
        self.data.evict_before_command(false);
        self.route_evicted();
        let owing = self.data.others_owing();
        if owing.is_empty() {
            return false;
        }
        let ops = owing
            .into_iter()
            .map(|s| {
                let op = crate::exec::Op::keyless(|ctx| {
                    ctx.shard.evict_before_command(false);
                    crate::exec::Out::Count(0)
                });
                (s, op)
            })
            .collect();
        // A slot that answers nothing holds the connection's later
        // commands until the evictions are made.
        let job = crate::exec::Job::new(ops, |_| {
            crate::exec::Action::Reply(Frame::Sequence(Vec::new()))
        })
        .ordered();
        let started = crate::util::stamp::Stamp::now();
        let to = self.open_slot(token, spec, started, true, Vec::new());
        if let Some(conn) = self.conns.get_mut(token) {
            conn.evict_wait = argv.take();
        }
        self.launch(to, job);
        true
    }

    fn send_invalidation(&mut self, inv: Invalidation) {
        if inv.to.shard == self.data.id {
            self.invalidate(inv);
        } else {
            self.outbox[inv.to.shard].push(Msg::Invalidate(inv));
        }
    }

    /// Adds what this shard's table gained or lost since it last said to
    /// the shared figures (INFO, `tracking-table-max-keys`).
    fn sync_tracked_counts(&mut self) {
        let table = &self.data.store.stats.notify.tracking;
        let (keys, items) = (table.len(), table.items());
        let registry = &self.data.shared.tracking;
        let (old_keys, old_items) = std::mem::replace(&mut self.tracked_said, (keys, items));
        if keys != old_keys {
            registry
                .keys
                .fetch_add(keys.wrapping_sub(old_keys), Relaxed);
        }
        if items != old_items {
            registry
                .items
                .fetch_add(items.wrapping_sub(old_items), Relaxed);
        }
    }

    /// Forgets keys of this shard while every shard's tables together hold
    /// more than `tracking-table-max-keys` (0: no limit), as Redis's
    /// trackingLimitUsedSlots does before each command.
    pub(super) fn limit_tracked_keys(&mut self) {
        self.sync_tracked_counts();
        let max = self.data.shared.config.tracking_table_max_keys() as usize;
        if max == 0 || self.data.store.stats.notify.tracking.is_empty() {
            return;
        }
        let registry = &self.data.shared.tracking;
        let table = &mut self.data.store.stats.notify.tracking;
        let mut evicted = 0;
        while evicted < EVICT_MAX_PER_CHECK
            && !table.is_empty()
            && registry
                .keys
                .fetch_update(Relaxed, Relaxed, |n| (n > max).then(|| n - 1))
                .is_ok()
        {
            table.evict_one();
            evicted += 1;
        }
        if evicted > 0 {
            // The shared count already went down by what was forgotten.
            self.tracked_said.0 -= evicted;
            let items = table.items();
            let old = std::mem::replace(&mut self.tracked_said.1, items);
            registry.items.fetch_sub(old - items, Relaxed);
        }
    }

    /// An invalidation for one of this shard's connections.
    pub(super) fn invalidate(&mut self, inv: Invalidation) {
        let conn = self
            .conns
            .get_mut(inv.to.token)
            .filter(|c| c.session.id == inv.to.conn_id);
        match inv.what {
            Payload::Keys {
                keys,
                redirected_from,
            } => {
                let Some(conn) = conn else {
                    // The REDIRECT target has gone: its client learns it.
                    if let Some((from, id)) = redirected_from {
                        self.send_invalidation(Invalidation {
                            to: from,
                            what: Payload::RedirectBroken { id },
                        });
                    }
                    return;
                };
                let s = &conn.session;
                let keys = match keys {
                    Some(keys) => Frame::Array(keys.into_iter().map(Frame::Bulk).collect()),
                    None => Frame::Null,
                };
                let frame = if s.proto == Protocol::Resp3 {
                    if redirected_from.is_none() && s.tracking.is_none() {
                        return;
                    }
                    Frame::Push(vec![Frame::bulk("invalidate"), keys])
                } else if redirected_from.is_some() && s.subscriptions() > 0 {
                    // RESP2 has no pushes: a redirected client subscribed
                    // to anything gets them as Pub/Sub messages.
                    Frame::Push(vec![
                        Frame::bulk("message"),
                        Frame::Bulk(Bytes::from_static(b"__redis__:invalidate")),
                        keys,
                    ])
                } else {
                    return;
                };
                let token = inv.to.token;
                self.deliver(token, inv.to.conn_id, frame);
            }
            Payload::RedirectBroken { id } => {
                let Some(conn) = conn else { return };
                let s = &mut conn.session;
                let Some(t) = s.tracking.as_mut().filter(|t| t.redirect == id) else {
                    return;
                };
                t.broken = true;
                if s.proto == Protocol::Resp3 {
                    let frame = Frame::Push(vec![
                        Frame::bulk("tracking-redir-broken"),
                        Frame::Integer(id as i64),
                    ]);
                    let token = inv.to.token;
                    self.deliver(token, inv.to.conn_id, frame);
                }
            }
        }
    }
}

/// The message telling `client` that `keys` changed, addressed to its
/// REDIRECT target when it has one.
fn addressed(client: &crate::tracking::Client, keys: Option<Vec<Bytes>>) -> Invalidation {
    match client.redirect {
        Some((id, target)) => Invalidation {
            to: target,
            what: Payload::Keys {
                keys,
                redirected_from: Some((client.home, id)),
            },
        },
        None => Invalidation {
            to: client.home,
            what: Payload::Keys {
                keys,
                redirected_from: None,
            },
        },
    }
}
