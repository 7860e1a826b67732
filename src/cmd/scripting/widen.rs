//! Scripts that touch keys they did not declare, on shards they do not
//! hold, on a server of several shards.
//!
//! Redis outside cluster mode lets a script reach any key, declared or
//! not. A script here runs on the shard of its declared keys (or, declared
//! on several shards, holding those whole), so a command on a key of
//! another shard cannot simply run: that shard serves other clients
//! meanwhile, and waiting on it from inside the script could deadlock
//! against a script running there. So the server learns each script's
//! reach (`exec::scripts::ScriptReach`, by sha; a function by name):
//!
//! - A script's first run holds every shard (`Reach::Probe`), so whatever
//!   it touches, it runs atomically; it notes whether it left the shards of
//!   its declared keys. If not, the script is narrow: from then on it runs
//!   on its declared keys' shards only, at full speed. If so, it is wide:
//!   every run holds every shard, as a script that declares no key does.
//! - A narrow script whose later run reaches further (its keys depend on
//!   its data): if it has written nothing yet, the run is abandoned (its
//!   reads changed nothing a client can see) and dispatched again over
//!   every shard, which runs it from the start; a run may be abandoned only
//!   where its dispatcher can start it again ([`restartable`]). If it
//!   already wrote, it fails with Redis Cluster's refusal, its earlier
//!   writes kept (as any script error keeps them in Redis). Either way it
//!   is wide from then on.
//! - A step of MULTI/EXEC never starts over and never probes: a script
//!   there that reaches further gets the refusal.
//!
//! The cost: one lookup per script call, one run over every shard per
//! script (after start-up or SCRIPT FLUSH), and every shard for each run
//! of a wide script.

use std::cell::Cell;

use crate::exec::Op;
use crate::resp::Frame;

/// The reply of a run abandoned to run again wide; never sent to a client
/// (the dispatcher that made the run restartable replaces it).
pub(super) const RESTART: &str = "ERR ember: the script runs again over every shard";

thread_local! {
    static RESTARTABLE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a script command's dispatch) where a run that reaches off
/// its shards before writing may be abandoned: the caller must then look
/// at the reply with [`must_restart`] and dispatch the command again.
pub fn restartable<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            RESTARTABLE.with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(RESTARTABLE.with(|r| r.replace(true)));
    f()
}

/// `op` (a script command's work on its owner shard) run [`restartable`].
pub fn restartable_op(op: Op) -> Op {
    match op {
        Op::Script(db, need, f) => {
            Op::Script(db, need, Box::new(move |ctx| restartable(|| f(ctx))))
        }
        Op::Store(db, need, f) => Op::Store(db, need, Box::new(move |ctx| restartable(|| f(ctx)))),
        other => other,
    }
}

/// Whether a run on this thread may be abandoned now (inside
/// [`restartable`]).
pub fn may_restart() -> bool {
    RESTARTABLE.with(|r| r.get())
}

/// The reply of an abandoned run.
pub fn restart_reply() -> Frame {
    Frame::error(RESTART)
}

/// Whether `reply` says the run was abandoned, to be dispatched again.
pub fn must_restart(reply: &Frame) -> bool {
    matches!(reply, Frame::Error(text) if text == RESTART)
}

/// `reply` as a client may see it: an abandoned run that cannot start
/// again gets Redis Cluster's refusal.
pub fn or_refusal(reply: Frame) -> Frame {
    if must_restart(&reply) {
        return Frame::error("ERR Script attempted to access a non local key in a cluster node");
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_restartable_dispatch_may_abandon_a_run() {
        assert!(!may_restart());
        assert!(restartable(may_restart));
        assert!(!may_restart());
        assert!(must_restart(&restart_reply()));
        assert!(!must_restart(&Frame::error("ERR other")));
    }
}
