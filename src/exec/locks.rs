//! Key locks for work that spans shards (docs/DESIGN.md): a transaction takes
//! exclusive locks on its keys shard by shard, in ascending shard order, runs,
//! then releases them. Work that meets a locked key waits in the shard's
//! queue behind the lock, in arrival order.
//!
//! The rules that make this safe:
//! - No deadlock: a transaction waits only while acquiring, and it acquires
//!   in ascending shard order, so a cycle of waits cannot form.
//! - No starvation: the queue is first come, first served; nothing passes a
//!   waiting item whose keys it shares, so a waiting transaction is granted
//!   once the holders ahead of it finish.
//! - A client's own commands keep their order: nothing passes a waiting item
//!   from the same client.
//! - Single-shard work pays one `is_idle()` check while no lock is held.
//!
//! Cost: every check is linear in the keys of the work being checked, never
//! in the keys of the work it is checked against. A need is a hash set, and
//! the queue keeps a count of the keys and clients waiting in it
//! ([`Pending`]), so `EXISTS k1 ... k100000` over several shards, or a
//! pipeline of thousands of commands queued behind one lock, costs each
//! command its own keys' worth of hash probes (it used to be a scan of every
//! waiting key per key: quadratic, seconds of a frozen shard).
//!
//! The table is generic over the waiting item so it can be tested alone;
//! the shard loop parks its ops here.

use std::collections::{HashMap, HashSet, VecDeque};

use bytes::Bytes;

/// A transaction's id, unique across shards.
pub type TxId = u64;

/// Who sent a piece of work: (connection's shard, connection id). A client's
/// waiting work keeps its order.
pub type Origin = (usize, u64);

/// A key in one database.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockKey {
    pub db: usize,
    pub key: Bytes,
}

/// The distinct keys a piece of work touches on one shard.
pub type KeySet = HashSet<LockKey, ahash::RandomState>;

/// What a piece of work touches on one shard.
#[derive(Clone, Debug, PartialEq)]
pub enum Need {
    /// No key (client table, INFO figures): never waits.
    Nothing,
    Keys(KeySet),
    /// Any key of the shard (FLUSHALL, KEYS, SCAN, or work that does not
    /// say what it touches).
    Whole,
}

impl Need {
    pub fn keys(db: usize, keys: impl IntoIterator<Item = Bytes>) -> Need {
        Need::Keys(keys.into_iter().map(|key| LockKey { db, key }).collect())
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: Need) {
        match (&mut *self, other) {
            (Need::Whole, _) | (_, Need::Nothing) => {}
            (_, Need::Whole) => *self = Need::Whole,
            (Need::Nothing, keys) => *self = keys,
            (Need::Keys(mine), Need::Keys(more)) => mine.extend(more),
        }
    }

    /// Adds one key of database `db`.
    pub fn add_key(&mut self, db: usize, key: Bytes) {
        match self {
            Need::Whole => {}
            Need::Nothing => *self = Need::keys(db, [key]),
            Need::Keys(mine) => {
                mine.insert(LockKey { db, key });
            }
        }
    }
}

/// What the queue holds, counted so that "does this work have to stay behind
/// something waiting?" costs the work's own keys, not the queue's.
#[derive(Default)]
struct Pending {
    /// Waiting items per key they name.
    keys: HashMap<LockKey, usize, ahash::RandomState>,
    /// Waiting items that need the whole shard.
    whole: usize,
    /// Waiting items per client.
    origins: HashMap<Origin, usize, ahash::RandomState>,
    /// Waiting items in all (each needs something: work that needs nothing
    /// never waits).
    items: usize,
}

impl Pending {
    fn add(&mut self, need: &Need, origin: Origin) {
        self.items += 1;
        *self.origins.entry(origin).or_default() += 1;
        match need {
            Need::Nothing => {}
            Need::Whole => self.whole += 1,
            Need::Keys(keys) => {
                for k in keys {
                    *self.keys.entry(k.clone()).or_default() += 1;
                }
            }
        }
    }

    /// Whether work on `need` from `origin` must stay behind a counted item:
    /// one from the same client, or one touching a common key.
    fn blocks(&self, need: &Need, origin: Origin) -> bool {
        self.touches(need) || (*need != Need::Nothing && self.origins.contains_key(&origin))
    }

    /// Whether a counted item touches a key of `need`.
    fn touches(&self, need: &Need) -> bool {
        match need {
            Need::Nothing => false,
            _ if self.items == 0 => false,
            _ if self.whole > 0 => true,
            Need::Whole => true,
            Need::Keys(keys) => keys.iter().any(|k| self.keys.contains_key(k)),
        }
    }
}

struct Waiting<T> {
    need: Need,
    origin: Origin,
    /// Some: a transaction's lock request, granted when it leaves the queue.
    grant_to: Option<TxId>,
    item: T,
}

/// One shard's locks and the work waiting for them.
pub struct Locks<T> {
    /// Key to the transaction holding it.
    held: HashMap<LockKey, TxId, ahash::RandomState>,
    /// A transaction holding every key of the shard.
    whole: Option<TxId>,
    /// What each transaction holds here, to release it.
    holders: HashMap<TxId, Vec<LockKey>>,
    queue: VecDeque<Waiting<T>>,
    /// The keys and clients of `queue`, counted.
    pending: Pending,
}

impl<T> Default for Locks<T> {
    fn default() -> Self {
        Locks {
            held: HashMap::default(),
            whole: None,
            holders: HashMap::new(),
            queue: VecDeque::new(),
            pending: Pending::default(),
        }
    }
}

impl<T> Locks<T> {
    /// Nothing held and nothing waiting: work may run without looking further.
    pub fn is_idle(&self) -> bool {
        self.holders.is_empty() && self.queue.is_empty()
    }

    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    pub fn held_by(&self, tx: TxId) -> bool {
        self.holders.contains_key(&tx)
    }

    /// The transaction holding `key` here, or holding the whole shard.
    pub fn holder(&self, key: &LockKey) -> Option<TxId> {
        self.whole.or_else(|| self.held.get(key).copied())
    }

    /// Whether work on `need` outside any transaction would have to wait:
    /// a transaction holds one of its keys, or work on them is queued
    /// (blocked clients are served only once their keys are free).
    pub fn is_locked(&self, need: &Need) -> bool {
        !self.is_idle() && (self.blocked_by_held(need, None) || self.pending.touches(need))
    }

    /// Whether `need` collides with a lock held by a transaction other than `tx`.
    fn blocked_by_held(&self, need: &Need, tx: Option<TxId>) -> bool {
        let foreign = |holder: &TxId| Some(*holder) != tx;
        if self.whole.as_ref().is_some_and(foreign) && *need != Need::Nothing {
            return true;
        }
        match need {
            Need::Nothing => false,
            Need::Whole => self.holders.keys().any(foreign),
            Need::Keys(keys) => keys.iter().any(|k| self.held.get(k).is_some_and(foreign)),
        }
    }

    fn grant(&mut self, tx: TxId, need: Need) {
        let mine = self.holders.entry(tx).or_default();
        match need {
            Need::Nothing => {}
            Need::Whole => self.whole = Some(tx),
            Need::Keys(keys) => {
                for k in keys {
                    if self.held.insert(k.clone(), tx).is_none() {
                        mine.push(k);
                    }
                }
            }
        }
    }

    fn park(&mut self, need: Need, origin: Origin, grant_to: Option<TxId>, item: T) {
        self.pending.add(&need, origin);
        self.queue.push_back(Waiting {
            need,
            origin,
            grant_to,
            item,
        });
    }

    /// Work outside any transaction: hands `item` back if it may run now,
    /// otherwise keeps it until a release lets it through.
    pub fn admit(&mut self, need: Need, origin: Origin, item: T) -> Option<T> {
        if self.is_idle()
            || !(self.blocked_by_held(&need, None) || self.pending.blocks(&need, origin))
        {
            return Some(item);
        }
        self.park(need, origin, None, item);
        None
    }

    /// A transaction asks for `need` and waits its turn: hands `item` back if
    /// granted now, otherwise keeps it until a release grants it.
    pub fn acquire(&mut self, tx: TxId, need: Need, origin: Origin, item: T) -> Option<T> {
        if self.try_acquire(tx, &need, origin) {
            return Some(item);
        }
        self.park(need, origin, Some(tx), item);
        None
    }

    /// Grants `need` to `tx` only if nothing holds or waits for those keys.
    pub fn try_acquire(&mut self, tx: TxId, need: &Need, origin: Origin) -> bool {
        if self.blocked_by_held(need, Some(tx)) || self.pending.blocks(need, origin) {
            return false;
        }
        self.grant(tx, need.clone());
        true
    }

    /// Ends `tx` on this shard: frees its locks, forgets its waiting requests
    /// (its client left), and returns the items that may now proceed, in
    /// arrival order; lock requests among them are granted. One pass over the
    /// queue, counting what stays as it goes, so an item is checked only
    /// against what stays ahead of it.
    pub fn release(&mut self, tx: TxId) -> Vec<T> {
        if let Some(keys) = self.holders.remove(&tx) {
            for k in keys {
                self.held.remove(&k);
            }
        }
        if self.whole == Some(tx) {
            self.whole = None;
        }
        let mut ready = Vec::new();
        let mut still: VecDeque<Waiting<T>> = VecDeque::new();
        let mut ahead = Pending::default();
        for w in std::mem::take(&mut self.queue) {
            if w.grant_to == Some(tx) {
                continue;
            }
            if ahead.blocks(&w.need, w.origin) || self.blocked_by_held(&w.need, w.grant_to) {
                ahead.add(&w.need, w.origin);
                still.push_back(w);
                continue;
            }
            if let Some(tx) = w.grant_to {
                self.grant(tx, w.need);
            }
            ready.push(w.item);
        }
        self.queue = still;
        self.pending = ahead;
        ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(names: &[&'static str]) -> Need {
        Need::keys(0, names.iter().map(|n| Bytes::from_static(n.as_bytes())))
    }

    const A: Origin = (0, 1);
    const B: Origin = (0, 2);
    const C: Origin = (1, 3);

    #[test]
    fn idle_table_admits_everything() {
        let mut l: Locks<u32> = Locks::default();
        assert!(l.is_idle());
        assert_eq!(l.admit(keys(&["x"]), A, 1), Some(1));
        assert_eq!(l.admit(Need::Whole, A, 2), Some(2));
    }

    #[test]
    fn locked_keys_hold_work_until_release() {
        let mut l: Locks<u32> = Locks::default();
        assert!(l.try_acquire(7, &keys(&["x", "y"]), C));
        assert_eq!(l.admit(keys(&["z"]), A, 1), Some(1), "other keys pass");
        assert_eq!(l.admit(keys(&["y"]), A, 2), None);
        assert_eq!(l.admit(keys(&["z"]), A, 3), None, "behind the same client");
        assert_eq!(l.admit(keys(&["z"]), B, 4), None, "behind a waiting z");
        assert_eq!(l.admit(keys(&["w"]), (5, 5), 7), Some(7));
        assert_eq!(l.admit(Need::Whole, B, 5), None);
        assert_eq!(l.admit(Need::Nothing, B, 6), Some(6));
        assert_eq!(l.release(7), vec![2, 3, 4, 5]);
        assert!(l.is_idle());
    }

    #[test]
    fn holder_names_the_transaction_holding_a_key() {
        let mut l: Locks<u32> = Locks::default();
        let key = |name: &'static str| LockKey {
            db: 0,
            key: Bytes::from_static(name.as_bytes()),
        };
        assert_eq!(l.holder(&key("x")), None);
        assert!(l.try_acquire(7, &keys(&["x"]), C));
        assert_eq!(l.holder(&key("x")), Some(7));
        assert_eq!(l.holder(&key("y")), None);
        l.release(7);
        assert!(l.try_acquire(8, &Need::Whole, C));
        assert_eq!(l.holder(&key("y")), Some(8), "the whole shard");
    }

    #[test]
    fn is_locked_sees_held_and_queued_keys() {
        let mut l: Locks<u32> = Locks::default();
        assert!(!l.is_locked(&keys(&["x"])));
        assert!(l.try_acquire(7, &keys(&["x"]), C));
        assert!(l.is_locked(&keys(&["x"])));
        assert!(!l.is_locked(&keys(&["y"])));
        assert_eq!(l.admit(keys(&["x", "y"]), A, 1), None);
        assert!(l.is_locked(&keys(&["y"])), "work on y waits in the queue");
        assert_eq!(l.release(7), vec![1]);
        assert!(!l.is_locked(&keys(&["x"])));
    }

    #[test]
    fn waiting_transactions_are_granted_in_order() {
        let mut l: Locks<&str> = Locks::default();
        assert_eq!(l.acquire(1, keys(&["x"]), A, "t1"), Some("t1"));
        assert_eq!(l.acquire(2, keys(&["x", "y"]), B, "t2"), None);
        // t3 wants y, which t2 waits for: it queues behind t2 (no starvation).
        assert!(!l.try_acquire(3, &keys(&["y"]), C));
        assert_eq!(l.acquire(3, keys(&["y"]), C, "t3"), None);
        assert_eq!(l.admit(keys(&["x"]), (2, 9), "read"), None);
        assert_eq!(l.release(1), vec!["t2"]);
        assert!(l.held_by(2));
        assert_eq!(l.release(2), vec!["t3", "read"]);
        assert_eq!(l.release(3), Vec::<&str>::new());
        assert!(l.is_idle());
    }

    #[test]
    fn a_transaction_passes_its_own_locks() {
        let mut l: Locks<u32> = Locks::default();
        assert!(l.try_acquire(1, &keys(&["x"]), A));
        assert!(l.try_acquire(1, &keys(&["x", "y"]), A));
        assert!(!l.try_acquire(2, &keys(&["y"]), B));
        assert_eq!(l.release(1), Vec::<u32>::new());
        assert!(l.try_acquire(2, &keys(&["y"]), B));
    }

    #[test]
    fn whole_shard_locks_exclude_everything_but_nothing() {
        let mut l: Locks<u32> = Locks::default();
        assert!(l.try_acquire(1, &keys(&["x"]), A));
        assert_eq!(l.acquire(2, Need::Whole, B, 10), None);
        assert_eq!(l.admit(keys(&["q"]), C, 11), None, "behind the whole lock");
        assert_eq!(l.release(1), vec![10]);
        assert_eq!(l.admit(keys(&["r"]), (3, 4), 12), None);
        assert_eq!(l.release(2), vec![11, 12]);
    }

    #[test]
    fn released_transaction_drops_its_waiting_requests() {
        let mut l: Locks<u32> = Locks::default();
        assert!(l.try_acquire(1, &keys(&["x"]), A));
        assert_eq!(l.acquire(2, keys(&["x"]), B, 20), None);
        // Client of tx 2 left: its release cancels the request.
        assert_eq!(l.release(2), Vec::<u32>::new());
        assert_eq!(l.waiting(), 0);
        assert_eq!(l.release(1), Vec::<u32>::new());
        assert!(l.is_idle());
    }

    #[test]
    fn needs_merge() {
        let mut n = Need::Nothing;
        n.merge(keys(&["a"]));
        n.merge(keys(&["a", "b"]));
        assert_eq!(n, keys(&["a", "b"]));
        n.merge(Need::Whole);
        assert_eq!(n, Need::Whole);
    }
}
