//! This shard's part of client eviction (`maxmemory-clients`): keeping
//! its clients' figures published and closing its largest clients when
//! it owes. How the total is summed over shards and who evicts whom is
//! `exec::client_evict`.

use super::clients::{client_line, client_memory};
use super::Worker;
use crate::exec::client_evict::{self, Counted, Share, Turn};
use crate::exec::{ClientsOp, Msg, Op};
use crate::net::Conn;

/// How a client counts (Redis's `clientEvictionAllowed` and the client
/// types it sums): a replica's master link not at all, nor a client
/// already being closed for its output limit; `CLIENT NO-EVICT on` in
/// the total only.
fn counted(conn: &Conn) -> Counted {
    if conn.session.master || conn.close_asap || conn.handoff.is_some() {
        Counted::No
    } else if conn.session.no_evict {
        Counted::Protected
    } else {
        Counted::Evictable
    }
}

/// Works `conn`'s memory out again and publishes what changed (the
/// shard's `clients_mem` for INFO, and the shared figures); true if it
/// counts for more than before.
pub(super) fn reaccount(data: &mut crate::exec::ShardData, conn: &mut Conn) -> bool {
    let mem = client_memory(conn);
    data.clients_mem = (data.clients_mem + mem as u64)
        .saturating_sub(std::mem::replace(&mut conn.accounted_mem, mem) as u64);
    let new = Share {
        mem,
        counted: counted(conn),
    };
    let old = std::mem::replace(&mut conn.share, new);
    client_evict::publish(data.id, old, new);
    new.counted != Counted::No && (new.mem > old.mem || new.counted != old.counted)
}

impl Worker {
    /// After a client's memory may have changed (a read, a command, a
    /// push, a reply): publishes it and, if the clients are
    /// over the limit now, evicts. The client itself may be gone afterwards.
    pub(super) fn account_client(&mut self, token: usize) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        if reaccount(&mut self.data, conn) && client_evict::over(self.data.shared.nshards) {
            self.evict_clients();
        }
    }

    /// Every client again (the cron: buffers trimmed, anything missed).
    pub(super) fn account_all_clients(&mut self) {
        let tokens: Vec<usize> = self.conns.iter().map(|(t, _)| t).collect();
        for token in tokens {
            if let Some(conn) = self.conns.get_mut(token) {
                reaccount(&mut self.data, conn);
            }
        }
        if client_evict::over(self.data.shared.nshards) {
            self.evict_clients();
        }
    }

    /// Plans the excess over the limit, if any, wakes the shards that owe
    /// a part of it, and pays this shard's part (`exec::client_evict`).
    /// Also what CONFIG SET asks of every shard (`ClientsOp::EvictClients`).
    pub(super) fn evict_clients(&mut self) {
        let Some(turn) = Turn::take(self.data.id, self.data.shared.nshards) else {
            return;
        };
        for shard in turn.plan() {
            self.outbox[shard].push(Msg::Post(Op::Clients(ClientsOp::EvictClients)));
        }
        if turn.owed() == 0 {
            return;
        }
        let mut victims: Vec<(usize, usize)> = self
            .conns
            .iter()
            .filter(|(_, c)| c.share.counted == Counted::Evictable)
            .map(|(t, c)| (c.share.mem, t))
            .collect();
        // Largest first; among equals the newest, as the last to come.
        victims.sort_unstable_by(|a, b| b.cmp(a));
        let mut victims = victims.into_iter();
        let (mut freed, mut clients) = (0u64, 0u64);
        let done = loop {
            if turn.settled(freed) {
                break false;
            }
            let Some((mem, token)) = victims.next() else {
                break true;
            };
            self.evict_client(token);
            freed += mem as u64;
            clients += 1;
        };
        turn.paid(freed, clients, done);
    }

    /// Disconnects one client for `maxmemory-clients`. The one whose
    /// command is running now is closed once it is over, at the end of
    /// the pass (its share is given up at once).
    fn evict_client(&mut self, token: usize) {
        let Some(conn) = self.conns.get_mut(token) else {
            return;
        };
        log::info!("Evicting client: {}", client_line(conn, self.data.now_ms));
        if self.executing == Some(token) {
            conn.close_asap = true;
            conn.closing = true;
            reaccount(&mut self.data, conn);
            self.dirty.push(token);
        } else {
            self.close(token);
        }
    }
}
