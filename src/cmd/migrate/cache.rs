//! MIGRATE's connections kept for the next MIGRATE to the same target, as
//! Redis keeps them: at most [`MAX_KEPT`] a shard, each closed once unused
//! for [`KEEP`] (the shard's cron, [`close_idle`]); INFO's
//! `migrate_cached_sockets` counts them over every shard.
//!
//! A shard's MIGRATE runs on its own thread (the exchange holds it), so
//! each shard thread keeps its own connections: no lock, and one target's
//! connection is never used by two MIGRATEs at once.

use std::cell::RefCell;
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Redis's MIGRATE_SOCKET_CACHE_TTL.
const KEEP: Duration = Duration::from_secs(10);
/// Redis's MIGRATE_SOCKET_CACHE_ITEMS.
const MAX_KEPT: usize = 64;

/// A kept connection.
pub struct Cached {
    addr: String,
    pub stream: TcpStream,
    /// The database it has selected.
    pub db: Option<i64>,
    used: Instant,
}

thread_local! {
    static KEPT: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

/// Every shard's kept connections together (INFO).
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// INFO stats `migrate_cached_sockets`.
pub fn cached_sockets() -> usize {
    COUNT.load(Relaxed)
}

/// The connection kept for `addr` on this thread, taken out of the cache
/// while it is used.
pub fn take(addr: &str) -> Option<Cached> {
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        let at = kept.iter().position(|c| c.addr == addr)?;
        COUNT.fetch_sub(1, Relaxed);
        Some(kept.swap_remove(at))
    })
}

/// Keeps `stream` (to `addr`, with `db` selected) for the next MIGRATE;
/// with [`MAX_KEPT`] kept already, the least recently used one goes.
pub fn keep(addr: &str, stream: TcpStream, db: i64) {
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.len() >= MAX_KEPT {
            if let Some(oldest) = (0..kept.len()).min_by_key(|&i| kept[i].used) {
                kept.swap_remove(oldest);
                COUNT.fetch_sub(1, Relaxed);
            }
        }
        kept.push(Cached {
            addr: addr.to_string(),
            stream,
            db: Some(db),
            used: Instant::now(),
        });
        COUNT.fetch_add(1, Relaxed);
    });
}

/// From the shard's cron: closes this thread's connections unused for
/// [`KEEP`].
pub fn close_idle() {
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        let before = kept.len();
        kept.retain(|c| c.used.elapsed() < KEEP);
        COUNT.fetch_sub(before - kept.len(), Relaxed);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_connection_is_taken_once_and_counted() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let stream = TcpStream::connect(&addr).unwrap();
        let before = cached_sockets();
        keep(&addr, stream, 3);
        assert_eq!(cached_sockets(), before + 1);
        let taken = take(&addr).expect("kept");
        assert_eq!(taken.db, Some(3));
        assert!(take(&addr).is_none());
        assert_eq!(cached_sockets(), before);
        close_idle();
    }
}
