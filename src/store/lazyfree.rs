//! Values freed off the shard threads, as Redis's `lazyfree.c` does.
//!
//! Freeing a container frees every element: a sorted set of 1M members took
//! a shard 41 ms to drop inside UNLINK, while Redis answers at once and lets
//! a background thread free it. Here one long-lived thread per process (not
//! one per call: a thread's start costs more than most frees) takes what a
//! shard hands it over a channel and drops it.
//!
//! The thread is started by `shard::start` before the shard threads pin
//! themselves to their cores, so it is not pinned (a thread inherits its
//! creator's affinity), and it runs at the lowest priority, like the other
//! housekeeping threads (`util::priority`): next to a busy shard it takes
//! little of the core, next to an idle one it frees at full speed.
//!
//! What goes off-thread follows Redis 7.0: a value whose free effort
//! ([`Value::free_effort`]) is over [`LAZYFREE_THRESHOLD`], when the
//! command asks for it (UNLINK, FLUSHALL ASYNC) or a `lazyfree-lazy-*`
//! parameter does. `lazyfree_pending_objects` and `lazyfreed_objects`
//! (INFO memory) count those values as Redis counts them: one per value,
//! one per key of a flushed database. Internal buffers sent here (a hash
//! index's old table after a resize) count in neither.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::OnceLock;

use crossbeam_channel::Sender;

use crate::store::Value;

/// Redis's `LAZYFREE_THRESHOLD`: a value whose free effort is above this is
/// worth handing to the thread; smaller ones cost less to free than to send.
pub const LAZYFREE_THRESHOLD: usize = 64;

/// Values (or keys of flushed databases) handed over and not yet freed.
static PENDING: AtomicUsize = AtomicUsize::new(0);
/// Values freed by the thread since start (or CONFIG RESETSTAT).
static FREED: AtomicU64 = AtomicU64::new(0);

/// Something to drop on the thread, and how many objects it counts for.
struct Job {
    garbage: Box<dyn Send>,
    objects: usize,
}

/// The channel to the thread, which starts on first use.
fn sender() -> &'static Sender<Job> {
    static SENDER: OnceLock<Sender<Job>> = OnceLock::new();
    SENDER.get_or_init(|| {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let spawned = std::thread::Builder::new()
            .name("ember-lazyfree".into())
            .spawn(move || {
                crate::util::priority::lower_current_thread();
                crate::util::memory::register_thread();
                for job in rx {
                    drop(job.garbage);
                    let _ = crate::util::memory::publish_thread();
                    PENDING.fetch_sub(job.objects, Relaxed);
                    FREED.fetch_add(job.objects as u64, Relaxed);
                }
            });
        // Without the thread the receiver is gone, and `send` fails:
        // callers then free in place.
        if let Err(e) = spawned {
            log::warn!("could not start the lazy-free thread: {e}");
        }
        tx
    })
}

/// Starts the thread now (see the module's note on affinity).
pub fn start() {
    let _ = sender();
}

/// Hands `garbage` to the thread, counted as `objects` pending until freed.
fn send(garbage: Box<dyn Send>, objects: usize) {
    PENDING.fetch_add(objects, Relaxed);
    if let Err(failed) = sender().send(Job { garbage, objects }) {
        drop(failed.into_inner());
        PENDING.fetch_sub(objects, Relaxed);
    }
}

/// Frees `garbage` on the thread, counted in neither figure (large internal
/// buffers, see `free_buffer`).
pub fn free_quietly<T: Send + 'static>(garbage: T) {
    send(Box::new(garbage), 0);
}

/// Frees a flushed database's keys on the thread, counted one per key
/// (Redis's `emptyDbAsync`).
pub fn free_keys<T: Send + 'static>(garbage: T, keys: usize) {
    send(Box::new(garbage), keys);
}

/// Frees `value` on the thread when that is worth it (Redis's
/// `freeObjAsync`), else here. Returns whether it went to the thread.
pub fn free_value(value: Value) -> bool {
    if value.frees_slowly() {
        send(Box::new(value), 1);
        true
    } else {
        drop(value);
        false
    }
}

/// Frees `value` on the thread when `lazy` and worth it, else here.
pub fn free_value_if(lazy: bool, value: Value) {
    if lazy {
        free_value(value);
    }
}

/// Frees a large structure on the lazy-free thread so the shard keeps
/// serving , counted in no INFO figure.
pub fn drop_off_thread<T: Send + 'static>(value: T) {
    free_quietly(value);
}

/// Buffers of at least this many bytes are freed by [`free_buffer`] off the
/// calling thread: jemalloc hands allocations of 8 MiB and more straight back
/// to the OS when freed, which held a shard for milliseconds.
pub const OFF_THREAD_FREE_BYTES: usize = 4 << 20;

/// Frees `buffer`, on a helper thread when it is large (see
/// [`OFF_THREAD_FREE_BYTES`]); shard threads free big buffers through this.
pub fn free_buffer<T: Send + 'static>(buffer: Vec<T>) {
    if buffer.capacity() * std::mem::size_of::<T>() >= OFF_THREAD_FREE_BYTES {
        drop_off_thread(buffer);
    }
}

// The `lazyfree-lazy-*` switches, as config keeps them (process-wide:
// they are read where a value is freed, with no `Shared` at hand).

/// `lazyfree-lazy-user-del`: DEL frees as UNLINK does.
pub fn user_del() -> bool {
    crate::config::LAZYFREE.user_del.load(Relaxed)
}

/// `lazyfree-lazy-server-del`: values a write replaces (SET, RENAME onto a key, ...).
pub fn server_del() -> bool {
    crate::config::LAZYFREE.server_del.load(Relaxed)
}

/// `lazyfree-lazy-expire`: values of expired keys.
pub fn expire() -> bool {
    crate::config::LAZYFREE.expire.load(Relaxed)
}

/// Whether evicted values go to the thread (`lazyfree-lazy-eviction`).
pub fn eviction() -> bool {
    crate::config::LAZYFREE.eviction.load(Relaxed)
}

/// `lazyfree-lazy-user-flush`: FLUSHALL / FLUSHDB without SYNC or ASYNC.
pub fn user_flush() -> bool {
    crate::config::LAZYFREE.user_flush.load(Relaxed)
}

/// INFO memory's `lazyfree_pending_objects`.
pub fn pending_objects() -> usize {
    PENDING.load(Relaxed)
}

/// INFO memory's `lazyfreed_objects`.
pub fn freed_objects() -> u64 {
    FREED.load(Relaxed)
}

/// CONFIG RESETSTAT (Redis's `lazyfreeResetStats`).
pub fn reset_stats() {
    FREED.store(0, Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::thread::ThreadId;
    use std::time::{Duration, Instant};

    /// What dropped a witness: the thread's name and id.
    type Seen = Arc<Mutex<Option<(Option<String>, ThreadId)>>>;

    /// Records the thread that drops it.
    struct Witness(Seen);

    impl Drop for Witness {
        fn drop(&mut self) {
            let me = std::thread::current();
            *self.0.lock().unwrap() = Some((me.name().map(str::to_string), me.id()));
        }
    }

    fn eventually(mut f: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !f() {
            assert!(Instant::now() < deadline, "not within 10 s");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Hands a witness over as `keys` objects; returns who dropped it.
    fn freed_by(keys: usize) -> (Option<String>, ThreadId) {
        let seen: Seen = Arc::default();
        // Other tests in this process free values too: look for at least
        // this test's own count.
        let before = freed_objects();
        free_keys(Witness(seen.clone()), keys);
        eventually(|| seen.lock().unwrap().is_some());
        eventually(|| freed_objects() >= before + keys as u64);
        let who = seen.lock().unwrap().clone().unwrap();
        who
    }

    #[test]
    fn one_long_lived_thread_frees_what_it_is_given_and_counts_it() {
        let (name, first) = freed_by(3);
        assert_eq!(name.as_deref(), Some("ember-lazyfree"));
        assert_ne!(first, std::thread::current().id());
        // The same thread again, not one per call.
        let (_, second) = freed_by(5);
        assert_eq!(first, second);
    }

    #[test]
    fn small_values_are_freed_in_place_and_big_ones_on_the_thread() {
        use crate::store::value::Set;
        use bytes::Bytes;
        let members = |n: usize| -> Set { (0..n).map(|i| Bytes::from(format!("m{i}"))).collect() };
        assert!(!free_value(Value::string(Bytes::from_static(b"v"))));
        assert!(!free_value(Value::Set(Box::new(members(64).into()))));
        assert!(free_value(Value::Set(Box::new(members(1000).into()))));
        let list = (0..65).map(|i| Bytes::from(format!("e{i}"))).collect();
        assert!(free_value(Value::List(list)));
        // Strings are one allocation, but one of megabytes costs the
        // allocator a trip to the OS (see `free_buffer`).
        assert!(free_value(Value::string(Bytes::from(vec![0u8; 8 << 20]))));
    }
}
