//! The call state of the script running on this thread, for the VM's
//! permanent `redis.call`, `redis.pcall` and `redis.acl_check_cmd`.
//!
//! Why not mlua's `Lua::scope`: a scope creates its functions for one run
//! and tears them down after, and in Lua 5.1 every mlua call that may raise
//! allocates a C closure to run protected. For a short script (INCR and
//! EXPIRE of a rate limiter) the three scoped functions and their table
//! slots cost about 40% of the run. The VM instead creates its functions
//! once, and each run lends them its state through [`lend`].

use std::cell::{Cell, RefCell};

use super::api::Call;

thread_local! {
    /// The `RefCell<Call>` lent by the [`lend`] running on this thread, or
    /// null outside any.
    static CURRENT: Cell<*const ()> = const { Cell::new(std::ptr::null()) };
}

/// Puts the previous pointer back when the lending ends, unwinding
/// included.
struct Restore(*const ());

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// Runs `f` with `state` lent to [`with`] on this thread.
pub fn lend<R>(state: &RefCell<Call<'_, '_>>, f: impl FnOnce() -> R) -> R {
    let previous = CURRENT.with(|c| c.replace(state as *const RefCell<Call> as *const ()));
    let _restore = Restore(previous);
    f()
}

/// `f` with the state lent by the [`lend`] running on this thread; None
/// outside any.
pub fn with<R>(f: impl for<'s, 'c, 'a> FnOnce(&'s RefCell<Call<'c, 'a>>) -> R) -> Option<R> {
    let pointer = CURRENT.with(|c| c.get());
    if pointer.is_null() {
        return None;
    }
    // SAFETY: a non-null CURRENT was set by `lend` on this thread from a
    // `&RefCell<Call>` that is borrowed for the whole of `lend`'s `f`, and
    // `Restore` puts the previous value back before `lend` returns or
    // unwinds; `with` runs inside that `f` (the pointer is thread-local, so
    // no other thread sees it), so the RefCell is alive and only shared
    // references to it exist (`lend` holds one; the RefCell itself guards
    // mutation). The lifetimes `'c` and `'a` of the Call are not the real
    // ones, but `f` is generic over every lifetime and its result `R`
    // cannot name them, so nothing borrowed through the Call outlives this
    // call, and `f` can store into the Call only what it took from it.
    let state: &RefCell<Call<'_, '_>> = unsafe { &*(pointer as *const RefCell<Call<'_, '_>>) };
    Some(f(state))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::{lend, with};
    use crate::cmd::scripting::api::Call;
    use crate::cmd::{Ctx, ShardData};

    fn shard() -> ShardData {
        let shared = std::sync::Arc::new(crate::exec::Shared::new(Default::default()));
        ShardData::new(0, shared, 1, 1_000_000)
    }

    fn call<'c, 'a>(ctx: &'c mut Ctx<'a>, read_only: bool) -> Call<'c, 'a> {
        Call::new(ctx, read_only, false, None, None)
    }

    #[test]
    fn the_state_is_reachable_only_while_it_is_lent() {
        assert!(with(|_| ()).is_none());
        let mut shard = shard();
        let mut ctx = Ctx::new(&mut shard, 3);
        let state = RefCell::new(call(&mut ctx, true));
        let seen = lend(&state, || {
            with(|s| (s.borrow().read_only, s.borrow().ctx.db))
        });
        assert_eq!(seen, Some((true, 3)));
        assert!(with(|_| ()).is_none());
        // A write through the lent state lands in the caller's Call.
        lend(&state, || with(|s| s.borrow().wrote.set(true)));
        assert!(state.borrow().wrote.get());
    }

    #[test]
    fn a_nested_lending_gives_the_outer_state_back() {
        let (mut one, mut two) = (shard(), shard());
        let (mut ctx1, mut ctx2) = (Ctx::new(&mut one, 1), Ctx::new(&mut two, 2));
        let outer = RefCell::new(call(&mut ctx1, false));
        let inner = RefCell::new(call(&mut ctx2, false));
        let dbs = lend(&outer, || {
            let inside = lend(&inner, || with(|s| s.borrow().ctx.db));
            (inside, with(|s| s.borrow().ctx.db))
        });
        assert_eq!(dbs, (Some(2), Some(1)));
    }

    #[test]
    fn a_panic_inside_ends_the_lending() {
        let mut shard = shard();
        let mut ctx = Ctx::new(&mut shard, 0);
        let state = RefCell::new(call(&mut ctx, false));
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lend(&state, || panic!("inside the script"))
        }));
        assert!(caught.is_err());
        assert!(with(|_| ()).is_none());
    }
}
