//! Clients blocked in BLPOP and friends: who waits on which key, in what
//! order, until when, and the messages shards exchange about them.
//!
//! # The two sides
//!
//! A blocked client involves the shard holding its connection (its *home*)
//! and the shards owning its keys. Each owner keeps a [`Registry`]: per
//! (db, key) a FIFO of waiters. The home keeps a [`Blocked`] record per
//! blocked connection in [`Clients`], with its deadline; a blocked client is
//! only a pending reply slot there (the connection's barrier holds its later
//! commands back), so it never stalls a shard.
//!
//! # Keys on one shard: served by the owner
//!
//! When every key lives on one shard, the waiter carries what to do
//! ([`Task::Serve`]). Registration happens in the same step as the attempt
//! (on the owner), so no write slips in between. After a write signals one of
//! its keys ready (`store::ready`), the owner walks the key's FIFO and runs
//! the pop for each waiter in arrival order while the key holds data of the
//! waiter's type, sending each reply home ([`BlockMsg::Served`]).
//!
//! # Keys on several shards: woken, then the home retries
//!
//! A client must never pop on two shards at once. So when its keys span
//! shards it is registered on each as notify-only ([`Task::Notify`]): a
//! ready key sends [`BlockMsg::Ready`] home, and the home runs the immediate
//! attempt again as a job (one shard after another, stopping at the first
//! that answers). The first success wins and cancels the registrations.
//! Registrations are sent before the first attempt, and messages between
//! two shards arrive in order, so a write after an attempt passed a shard
//! always wakes the client again.
//!
//! Fairness: waiters of a key are served in arrival order. A multi-shard
//! waiter is woken in its turn and the waiters behind it leave it what it
//! takes (one element, or its COUNT), so they do not overtake it; but its
//! retry comes from its own shard a moment later, and any client's plain
//! pop in between may take the element, in which case it keeps waiting.
//! Since only as many are woken as the key holds elements, a waiter woken
//! for nothing (served elsewhere, timed out) hands its turn on: cancelling
//! a waiter signals its keys again. Clients whose keys share a shard (a
//! `{hash tag}`) pop on that shard at once and never see this.
//!
//! # Shown as blocked once every shard has it
//!
//! In Redis the attempt and the blocking are one step, so a write that comes
//! after a client shows as blocked (INFO `blocked_clients`, CLIENT LIST's
//! `b`, what CLIENT UNBLOCK acts on) finds it waiting: a key of another type
//! leaves it blocked instead of failing its attempt. Here they are separate
//! messages, so the home shows the client only once each shard of its keys
//! has taken it and found nothing: a single-shard waiter when its owner
//! answers [`BlockMsg::Waiting`], a multi-shard one when its first attempt
//! misses (the attempt reaches each shard after the registration sent
//! before it, so a miss means every shard has it).
//!
//! # Ending a wait
//!
//! The home keeps the deadlines (checked from the loop, ~1 ms resolution).
//! On timeout or `CLIENT UNBLOCK` it cancels: a local waiter is removed at
//! once; a remote single-shard waiter is asked to cancel and the home waits
//! for the answer, because the owner may already have popped for it. As
//! messages from one shard to another arrive in order, a [`BlockMsg::Served`]
//! sent before the cancel was seen arrives first and wins: no popped element
//! is ever dropped. A multi-shard waiter's retry in flight is let finish the
//! same way. A client that disconnects is forgotten (its waiters cancelled).

use std::collections::{BTreeSet, HashMap, VecDeque};

use ahash::RandomState;
use bytes::Bytes;

use crate::exec::wait::{Request, Wait, Waiter, WaiterId};
use crate::exec::{Action, Job};
use crate::resp::Frame;
use crate::store::ready::ReadyKeys;

/// One key's waiters in arrival order. A waiter that leaves is dropped
/// from its keys' queues lazily: at once when it is at the front (serving
/// takes waiters from the front), otherwise when it reaches the front or
/// when the dead outnumber the living (one pass then). Removing it in place
/// scanned the queue, and serving N clients blocked on one key cost O(N²).
#[derive(Default)]
struct KeyQueue {
    ids: VecDeque<WaiterId>,
    /// Entries of `ids` still waiting.
    live: usize,
}

/// The waiters of one shard's keys.
#[derive(Default)]
pub struct Registry {
    /// Per (db, key), its waiters in arrival order (and some that left).
    queues: HashMap<(usize, Bytes), KeyQueue, RandomState>,
    waiters: HashMap<WaiterId, Waiter, RandomState>,
}

impl Registry {
    /// Queues `waiter` on each of its keys, watching the keys that had none.
    /// A key named twice (`BLPOP k k 0`) queues it once: its entries for a
    /// key go in one after another, so the last one is its own.
    pub fn add(&mut self, waiter: Waiter, ready: &mut ReadyKeys) {
        for key in &waiter.keys {
            let queue = self.queues.entry((waiter.db, key.clone())).or_default();
            if queue.live == 0 {
                ready.watch(waiter.db, key);
            }
            if queue.ids.back() != Some(&waiter.id) {
                queue.ids.push_back(waiter.id);
                queue.live += 1;
            }
        }
        self.waiters.insert(waiter.id, waiter);
    }

    /// Removes a waiter from every queue it is in; None if it was not waiting.
    pub fn remove(&mut self, id: WaiterId, ready: &mut ReadyKeys) -> Option<Waiter> {
        let waiter = self.waiters.remove(&id)?;
        let mut seen = std::collections::HashSet::with_capacity_and_hasher(
            if waiter.keys.len() > 1 {
                waiter.keys.len()
            } else {
                0
            },
            RandomState::new(),
        );
        for key in &waiter.keys {
            if waiter.keys.len() > 1 && !seen.insert(key) {
                continue;
            }
            let slot = (waiter.db, key.clone());
            let Some(queue) = self.queues.get_mut(&slot) else {
                continue;
            };
            queue.live -= 1;
            if queue.live == 0 {
                self.queues.remove(&slot);
                ready.unwatch(waiter.db, key);
                continue;
            }
            let waiting = |w: &WaiterId| self.waiters.contains_key(w);
            while queue.ids.front().is_some_and(|w| !waiting(w)) {
                queue.ids.pop_front();
            }
            if queue.ids.len() > 2 * queue.live + 16 {
                queue.ids.retain(waiting);
            }
        }
        Some(waiter)
    }

    /// The waiters of a key, first come first (some may have left: look
    /// each up with [`get`](Self::get)).
    pub fn queue(&self, db: usize, key: &Bytes) -> impl Iterator<Item = WaiterId> + '_ {
        self.queues
            .get(&(db, key.clone()))
            .into_iter()
            .flat_map(|q| q.ids.iter().copied())
    }

    pub fn get(&self, id: WaiterId) -> Option<&Waiter> {
        self.waiters.get(&id)
    }

    pub fn is_empty(&self) -> bool {
        self.waiters.is_empty()
    }
}

/// How a blocked client is being served.
pub enum Mode {
    /// Every key on `shard`, which pops for it.
    One { shard: usize },
    /// Keys on several shards: this shard retries `req` when woken.
    Many {
        req: Request,
        /// An attempt job is running.
        in_flight: bool,
        /// A wake-up came while it ran: try again if it misses.
        again: bool,
    },
}

/// A blocked connection, on its home shard.
pub struct Blocked {
    pub id: WaiterId,
    pub token: usize,
    pub deadline_ms: Option<u64>,
    /// Shards holding a registration.
    pub shards: Vec<usize>,
    pub mode: Mode,
    /// Shown as blocked (INFO, CLIENT LIST, CLIENT UNBLOCK): every shard of
    /// its keys has it and found nothing.
    pub shown: bool,
    /// The reply decided by a timeout or `CLIENT UNBLOCK`, given once the
    /// owner confirms the cancel or the attempt in flight misses.
    pub ending: Option<Frame>,
}

/// The blocked connections of one shard, with their deadlines.
#[derive(Default)]
pub struct Clients {
    by_conn: HashMap<u64, Blocked, RandomState>,
    /// (deadline, connection id), earliest first.
    deadlines: BTreeSet<(u64, u64)>,
}

impl Clients {
    pub fn insert(&mut self, blocked: Blocked) {
        if let Some(at) = blocked.deadline_ms {
            self.deadlines.insert((at, blocked.id.conn_id));
        }
        self.by_conn.insert(blocked.id.conn_id, blocked);
    }

    /// The record of connection `conn_id` for blocking command `id`.
    pub fn get_mut(&mut self, id: WaiterId) -> Option<&mut Blocked> {
        self.by_conn.get_mut(&id.conn_id).filter(|b| b.id == id)
    }

    /// The record of connection `conn_id`, whatever command it blocks in.
    pub fn of_conn(&mut self, conn_id: u64) -> Option<&mut Blocked> {
        self.by_conn.get_mut(&conn_id)
    }

    /// Whether connection `conn_id` waits in a blocking command, shown as
    /// blocked yet or not.
    pub fn contains(&self, conn_id: u64) -> bool {
        self.by_conn.contains_key(&conn_id)
    }

    pub fn remove(&mut self, conn_id: u64) -> Option<Blocked> {
        self.drop_deadline(conn_id);
        self.by_conn.remove(&conn_id)
    }

    /// Drops the deadline of a connection whose wait is ending anyway.
    pub fn drop_deadline(&mut self, conn_id: u64) {
        if let Some(at) = self
            .by_conn
            .get_mut(&conn_id)
            .and_then(|b| b.deadline_ms.take())
        {
            self.deadlines.remove(&(at, conn_id));
        }
    }

    /// The earliest deadline, Unix ms.
    pub fn next_deadline(&self) -> Option<u64> {
        self.deadlines.first().map(|(at, _)| *at)
    }

    /// Connections whose deadline has passed (is before `now_ms`, as Redis
    /// compares), earliest first; their deadlines are dropped.
    pub fn take_due(&mut self, now_ms: u64) -> Vec<u64> {
        let mut due = Vec::new();
        while let Some(&(at, conn_id)) = self.deadlines.first() {
            if at >= now_ms {
                break;
            }
            self.drop_deadline(conn_id);
            due.push(conn_id);
        }
        due
    }

    pub fn len(&self) -> usize {
        self.by_conn.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_conn.is_empty()
    }
}

/// A shard's blocking state: the waiters on its keys and its blocked clients.
#[derive(Default)]
pub struct Blocking {
    pub registry: Registry,
    pub clients: Clients,
    /// Waited keys a transaction held when they were due to be served, in
    /// the order they were put aside.
    pub deferred: indexmap::IndexSet<(usize, Bytes), RandomState>,
}

/// Turns an attempt job's final reply into `Wait::Attempted`, so the job's
/// end comes back to the blocking machinery instead of answering the client.
pub fn settle(action: Action) -> Action {
    match action {
        Action::Job(Job {
            ops,
            then,
            ordered,
            lock,
        }) => Action::Job(Job {
            ops,
            then: Box::new(move |outs| settle(then(outs))),
            ordered,
            lock,
        }),
        Action::Reply(frame) => Action::Block(Box::new(Wait::Attempted(frame))),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::wait::{Kind, Task};

    fn waiter(conn_id: u64, keys: &[&'static str]) -> Waiter {
        Waiter {
            id: WaiterId { conn_id, seq: 0 },
            home: 0,
            token: 0,
            db: 0,
            keys: keys
                .iter()
                .map(|k| Bytes::from_static(k.as_bytes()))
                .collect(),
            task: Task::Notify {
                kind: Kind::List,
                takes: 1,
            },
        }
    }

    /// The waiters still waiting on `key`, in order.
    fn ids(registry: &Registry, key: &'static str) -> Vec<u64> {
        registry
            .queue(0, &Bytes::from_static(key.as_bytes()))
            .filter(|w| registry.get(*w).is_some())
            .map(|w| w.conn_id)
            .collect()
    }

    #[test]
    fn queues_keep_arrival_order_and_watch_their_keys() {
        let (mut registry, mut ready) = (Registry::default(), ReadyKeys::default());
        registry.add(waiter(1, &["a", "b"]), &mut ready);
        registry.add(waiter(2, &["b"]), &mut ready);
        registry.add(waiter(3, &["a"]), &mut ready);
        assert_eq!(ids(&registry, "a"), vec![1, 3]);
        assert_eq!(ids(&registry, "b"), vec![1, 2]);
        ready.signal(0, b"b");
        assert!(ready.has_ready(), "a waited key is watched");
        let gone = registry.remove(WaiterId { conn_id: 1, seq: 0 }, &mut ready);
        assert!(gone.is_some());
        assert_eq!(ids(&registry, "a"), vec![3]);
        assert_eq!(ids(&registry, "b"), vec![2]);
        assert!(registry
            .remove(WaiterId { conn_id: 1, seq: 0 }, &mut ready)
            .is_none());
        registry.remove(WaiterId { conn_id: 2, seq: 0 }, &mut ready);
        registry.remove(WaiterId { conn_id: 3, seq: 0 }, &mut ready);
        assert!(registry.is_empty());
        assert!(ready.is_empty(), "keys nobody waits on are unwatched");
    }

    #[test]
    fn waiters_leaving_from_anywhere_keep_the_queue_short_and_in_order() {
        let (mut registry, mut ready) = (Registry::default(), ReadyKeys::default());
        let id = |conn_id| WaiterId { conn_id, seq: 0 };
        registry.add(waiter(1, &["k", "k", "k"]), &mut ready);
        for n in 2..=1000 {
            registry.add(waiter(n, &["k"]), &mut ready);
        }
        assert_eq!(ids(&registry, "k"), (1..=1000).collect::<Vec<_>>());
        // From the middle: left in place, skipped, and swept once the dead
        // outnumber the living.
        for n in (2..=1000).filter(|n| n % 3 != 0) {
            registry.remove(id(n), &mut ready);
        }
        let queued = registry.queue(0, &Bytes::from_static(b"k")).count();
        assert!(queued <= 2 * 334 + 16, "{queued} entries for 334 waiters");
        let left: Vec<u64> = std::iter::once(1).chain((3..=999).step_by(3)).collect();
        assert_eq!(ids(&registry, "k"), left);
        // From the front: popped at once, with the dead behind them.
        registry.remove(id(1), &mut ready);
        assert_eq!(
            registry.queue(0, &Bytes::from_static(b"k")).next(),
            Some(id(3))
        );
        for n in left.iter().skip(1) {
            registry.remove(id(*n), &mut ready);
        }
        assert!(registry.is_empty());
        assert!(
            ready.is_empty(),
            "the key is unwatched with its last waiter"
        );
    }

    #[test]
    fn deadlines_come_due_in_order() {
        let mut clients = Clients::default();
        for (conn_id, deadline_ms) in [(1, Some(300)), (2, None), (3, Some(100))] {
            clients.insert(Blocked {
                id: WaiterId { conn_id, seq: 7 },
                token: 0,
                deadline_ms,
                shards: vec![0],
                mode: Mode::One { shard: 0 },
                shown: true,
                ending: None,
            });
        }
        assert_eq!(clients.next_deadline(), Some(100));
        assert_eq!(clients.take_due(100), Vec::<u64>::new());
        assert_eq!(clients.take_due(301), vec![3, 1]);
        assert_eq!(clients.next_deadline(), None);
        assert!(clients.get_mut(WaiterId { conn_id: 2, seq: 8 }).is_none());
        assert!(clients.remove(2).is_some());
        assert_eq!(clients.len(), 2, "a due client stays until answered");
    }
}
