//! MONITOR's clients, shared by every shard: each shard sends the lines
//! of the commands it runs to every monitor, wherever it is connected
//! (through the inboxes, as Pub/Sub messages go). While nobody monitors,
//! a command pays one relaxed load.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::RwLock;

use crate::pubsub::Subscriber;

#[derive(Default)]
pub struct Monitors {
    clients: RwLock<Vec<Subscriber>>,
    count: AtomicUsize,
}

impl Monitors {
    /// Whether anyone monitors (one relaxed load).
    pub fn active(&self) -> bool {
        self.count.load(Relaxed) > 0
    }

    pub fn add(&self, who: Subscriber) {
        let mut clients = self.clients.write().unwrap_or_else(|e| e.into_inner());
        if !clients.contains(&who) {
            clients.push(who);
            self.count.store(clients.len(), Relaxed);
        }
    }

    pub fn remove(&self, who: Subscriber) {
        let mut clients = self.clients.write().unwrap_or_else(|e| e.into_inner());
        clients.retain(|c| *c != who);
        self.count.store(clients.len(), Relaxed);
    }

    pub fn all(&self) -> Vec<Subscriber> {
        self.clients
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
