//! The busy pass: how a script that runs past `busy-reply-threshold` lets
//! its own shard's loop answer the shard's clients, as Redis's
//! `processEventsWhileBlocked` does.
//!
//! The script holds the shard's data (`&mut ShardData`) for its whole run,
//! so the loop cannot run a pass of its own. Before it runs work that may
//! run a script, the loop lends its network side (connections, listeners,
//! poll) to this thread; the script's count hook, once past the threshold,
//! calls [`pass`], and the loop's registered function does one bounded,
//! non-blocking pass over what it lent: it reads what clients sent and
//! answers it by `cmd::busy`'s rules (BUSY for most, SCRIPT KILL, FUNCTION
//! KILL, FUNCTION STATS, SHUTDOWN NOSAVE, MULTI), never touching the store.
//! Messages from other shards stay in the inbox until the script is over:
//! running them inside it would break its atomicity.
//!
//! The function is registered once (`install`) because `exec` is below the
//! loops: the layer that calls it (the script's hook in `cmd`) knows only
//! this module.

use std::sync::OnceLock;

use super::Shared;

static PASS: OnceLock<fn(&Shared)> = OnceLock::new();

/// Registers the loop's busy pass (the shard layer does, at start).
pub fn install(pass: fn(&Shared)) {
    let _ = PASS.set(pass);
}

/// One busy pass over this thread's lent connections (nothing when the
/// loop lent none, as for a script a test runs without a loop).
pub fn pass(shared: &Shared) {
    if let Some(pass) = PASS.get() {
        pass(shared);
    }
}
