//! Client-side caching (CLIENT TRACKING): what every shard must know about
//! the tracking clients, wherever they are connected.
//!
//! ```text
//!  client C (home shard A) reads k          k's shard B
//!  GET k ---------------------------------> runs GET; remembers C under k
//!                                            (store::tracking, B's table)
//!  client D writes k ---------------------> k changes: C's id moves to B's
//!                                            invalidation list
//!                                            B's loop looks C up here: its
//!                                            home, REDIRECT target, NOLOOP
//!  C's connection (or its target's) <------ Msg::Invalidate through the
//!  formats it by its own protocol            inboxes, as Pub/Sub deliveries go
//! ```
//!
//! The per-key part (who read what) lives on each key's shard; this
//! registry holds the per-client part (one entry per tracking client,
//! written only by that client's own CLIENT TRACKING) and the BCAST
//! prefixes, plus a directory of every connection so that REDIRECT can
//! find its target. Reads never come here: a shard learns that a command's
//! keys are to be remembered from the command's own message (`ReplyTo`),
//! so while nobody tracks, nothing on the read path costs more than a
//! field test.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::RwLock;

use bytes::Bytes;
use dashmap::DashMap;
use indexmap::IndexSet;

use crate::pubsub::Subscriber;

/// What a key's shard needs to know about a tracking client.
#[derive(Clone, Debug, PartialEq)]
pub struct Client {
    /// The client's own connection.
    pub home: Subscriber,
    /// REDIRECT: the connection that receives its invalidations, with the
    /// id it was given by.
    pub redirect: Option<(u64, Subscriber)>,
    pub bcast: bool,
    pub noloop: bool,
}

/// An invalidation on its way to a connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalidation {
    pub to: Subscriber,
    pub what: Payload,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// These keys changed; None: everything did (FLUSHALL, FLUSHDB).
    /// `redirected_from`: `to` receives them for that client (REDIRECT),
    /// which is told if `to` is gone.
    Keys {
        keys: Option<Vec<Bytes>>,
        redirected_from: Option<(Subscriber, u64)>,
    },
    /// The REDIRECT target `id` of the receiving client has gone.
    RedirectBroken { id: u64 },
}

#[derive(Default)]
pub struct Registry {
    clients: DashMap<u64, Client>,
    /// Clients with tracking on (INFO `tracking_clients`).
    count: AtomicUsize,
    /// BCAST prefixes and the clients registered for each.
    prefixes: RwLock<BTreeMap<Bytes, Vec<u64>>>,
    /// Clients in BCAST mode: while 0 no shard lists its changes.
    bcast: AtomicUsize,
    /// Every connection, by id (REDIRECT's target must exist).
    directory: DashMap<u64, Subscriber>,
    /// Keys and reader ids in the shards' tables, summed (each shard adds
    /// what its table gained or lost since it last said).
    pub keys: AtomicUsize,
    pub items: AtomicUsize,
}

impl Registry {
    pub fn connected(&self, id: u64, at: Subscriber) {
        self.directory.insert(id, at);
    }

    pub fn disconnected(&self, id: u64) {
        self.directory.remove(&id);
    }

    /// Where client `id` is connected, if it is.
    pub fn find(&self, id: u64) -> Option<Subscriber> {
        self.directory.get(&id).map(|s| *s)
    }

    /// Turns tracking on (or changes its options) for `id`; `prefixes`
    /// are added to those it broadcasts for.
    pub fn enable(&self, id: u64, client: Client, prefixes: &[Bytes]) {
        let bcast = client.bcast;
        if self.clients.insert(id, client).is_none() {
            self.count.fetch_add(1, Relaxed);
            if bcast {
                self.bcast.fetch_add(1, Relaxed);
            }
        }
        if !prefixes.is_empty() {
            let mut table = self.prefixes.write().unwrap_or_else(|e| e.into_inner());
            for p in prefixes {
                let ids = table.entry(p.clone()).or_default();
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
    }

    /// Turns tracking off for `id`, leaving the `prefixes` it broadcast for.
    pub fn disable(&self, id: u64, prefixes: &[Bytes]) {
        let Some((_, client)) = self.clients.remove(&id) else {
            return;
        };
        self.count.fetch_sub(1, Relaxed);
        if client.bcast {
            self.bcast.fetch_sub(1, Relaxed);
        }
        if !prefixes.is_empty() {
            let mut table = self.prefixes.write().unwrap_or_else(|e| e.into_inner());
            for p in prefixes {
                if let Some(ids) = table.get_mut(p) {
                    ids.retain(|c| *c != id);
                    if ids.is_empty() {
                        table.remove(p);
                    }
                }
            }
        }
    }

    pub fn client(&self, id: u64) -> Option<Client> {
        self.clients.get(&id).map(|c| c.clone())
    }

    /// Every tracking client (a flush tells them all).
    pub fn all(&self) -> Vec<Client> {
        self.clients.iter().map(|c| c.value().clone()).collect()
    }

    pub fn tracking_clients(&self) -> usize {
        self.count.load(Relaxed)
    }

    /// Whether some client broadcasts (one relaxed load).
    pub fn broadcasting(&self) -> bool {
        self.bcast.load(Relaxed) > 0
    }

    pub fn prefix_count(&self) -> usize {
        self.prefixes
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// The changed `keys` grouped for their broadcasters: for each prefix
    /// a key starts with, each client registered for it (but the one that
    /// changed the key, when that client asked NOLOOP) gets the key, one
    /// message per client and prefix, as Redis sends them.
    pub fn broadcasts(&self, keys: &[(Bytes, Option<u64>)]) -> Vec<(u64, Vec<Bytes>)> {
        let table = self.prefixes.read().unwrap_or_else(|e| e.into_inner());
        // A key changed twice in a pass is sent once (Redis keeps a set).
        let mut out: BTreeMap<(Bytes, u64), IndexSet<Bytes>> = BTreeMap::new();
        for (prefix, ids) in table.iter() {
            for (key, by) in keys.iter().filter(|(k, _)| k.starts_with(prefix)) {
                for &id in ids {
                    if *by == Some(id) && self.clients.get(&id).is_some_and(|c| c.noloop) {
                        continue;
                    }
                    out.entry((prefix.clone(), id))
                        .or_default()
                        .insert(key.clone());
                }
            }
        }
        out.into_iter()
            .map(|((_, id), keys)| (id, keys.into_iter().collect()))
            .collect()
    }
}

/// Redis's check of new BCAST prefixes: none may be a prefix of another,
/// among those the client has (`existing`) and among the new ones.
pub fn prefix_collision(existing: &[Bytes], new: &[Bytes]) -> Option<String> {
    let overlap = |a: &[u8], b: &[u8]| a.starts_with(b) || b.starts_with(a);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    for (i, p) in new.iter().enumerate() {
        if let Some(e) = existing.iter().find(|e| overlap(p, e)) {
            return Some(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not overlap.",
                text(p),
                text(e)
            ));
        }
        if let Some(o) = new[i + 1..].iter().find(|o| overlap(p, o)) {
            return Some(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must not overlap.",
                text(p),
                text(o)
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(token: usize) -> Subscriber {
        Subscriber {
            shard: 0,
            token,
            conn_id: token as u64,
        }
    }

    fn client(id: usize, bcast: bool, noloop: bool) -> Client {
        Client {
            home: sub(id),
            redirect: None,
            bcast,
            noloop,
        }
    }

    #[test]
    fn broadcasts_group_by_prefix_and_skip_own_changes_under_noloop() {
        let r = Registry::default();
        let b = |s: &'static str| Bytes::from_static(s.as_bytes());
        r.enable(1, client(1, true, false), &[b("a:"), b("b:")]);
        r.enable(2, client(2, true, true), &[b("")]);
        assert!(r.broadcasting());
        assert_eq!((r.tracking_clients(), r.prefix_count()), (2, 3));
        let out = r.broadcasts(&[(b("a:1"), None), (b("b:1"), Some(1)), (b("c:1"), Some(2))]);
        assert_eq!(
            out,
            vec![
                (2, vec![b("a:1"), b("b:1")]),
                (1, vec![b("a:1")]),
                (1, vec![b("b:1")]),
            ]
        );
        r.disable(1, &[b("a:"), b("b:")]);
        r.disable(2, &[b("")]);
        assert!(!r.broadcasting());
        assert_eq!((r.tracking_clients(), r.prefix_count()), (0, 0));
    }

    #[test]
    fn prefixes_must_not_overlap() {
        let b = |s: &'static str| Bytes::from_static(s.as_bytes());
        assert!(prefix_collision(&[], &[b("FOO"), b("BAR")]).is_none());
        let e = prefix_collision(&[], &[b("FOOBAR"), b("FOO")]).unwrap();
        assert!(e.starts_with("ERR Prefix 'FOOBAR' overlaps with another provided prefix 'FOO'"));
        let e = prefix_collision(&[b("FOO")], &[b("FO")]).unwrap();
        assert!(e.starts_with("ERR Prefix 'FO' overlaps with an existing prefix 'FOO'"));
    }
}
