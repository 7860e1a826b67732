//! Housekeeping threads run only when a core has nothing else to do.
//!
//! A shard thread owns its core. Next to it run threads that do work no
//! client waits for: jemalloc's purging thread (handing freed pages back to
//! the OS), the memory sampler, threads freeing large structures. Under the
//! default scheduler each gets a fair share of the core, so purging the
//! pages of an expiry storm took the shard off its core for milliseconds at
//! a time. Linux's `SCHED_IDLE` policy runs a thread only when nothing else
//! wants the core; an unprivileged process may move its threads there.
//!
//! A housekeeping thread holding an allocator lock cannot starve a shard
//! that needs the lock: once the shard blocks on it, the core is idle and
//! the housekeeping thread runs and releases it.

/// The thread names (`/proc/self/task/*/comm`) of jemalloc's purging threads.
const JEMALLOC_BACKGROUND: &str = "jemalloc_bg_thd";

/// Moves the calling thread to `SCHED_IDLE`. Returns false where the OS
/// refuses (or is not Linux); the thread then keeps its priority.
pub fn idle_current_thread() -> bool {
    set_idle(0)
}

/// Moves every jemalloc purging thread of this process to `SCHED_IDLE`;
/// returns how many. jemalloc starts them lazily, so callers repeat this.
pub fn idle_allocator_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.trim_end() == JEMALLOC_BACKGROUND)
        })
        .filter_map(|task| task.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&tid| set_idle(tid))
        .count()
}

#[cfg(target_os = "linux")]
fn set_idle(tid: i32) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` reads the `sched_param` behind the
    // pointer during the call only; `param` is a live, initialised local.
    // `tid` is a plain integer (0: the calling thread); a stale or foreign
    // id makes the call fail with ESRCH/EPERM, it touches no memory of ours.
    unsafe { libc::sched_setscheduler(tid, libc::SCHED_IDLE, &param) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn set_idle(_tid: i32) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn policy_of_current_thread() -> i32 {
        // SAFETY: takes and returns integers only.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[test]
    fn a_thread_moves_itself_to_the_idle_policy_and_others_stay() {
        let lowered = std::thread::spawn(|| (idle_current_thread(), policy_of_current_thread()))
            .join()
            .unwrap();
        assert_eq!(lowered, (true, libc::SCHED_IDLE));
        assert_ne!(policy_of_current_thread(), libc::SCHED_IDLE);
    }

    #[test]
    fn threads_of_other_names_are_left_alone() {
        idle_allocator_threads();
        assert_ne!(policy_of_current_thread(), libc::SCHED_IDLE);
    }
}
