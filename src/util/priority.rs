//! Housekeeping threads yield their core to the shards.
//!
//! A shard thread owns its core. Next to it run threads that do work no
//! client waits for: jemalloc's purging thread (handing freed pages back to
//! the OS), the memory sampler, threads freeing large structures. Under the
//! default scheduler each gets a fair share of the core, so purging the
//! pages of an expiry storm took the shard off its core for milliseconds at
//! a time. These threads run at the lowest priority (nice 19), which any
//! process may give its own threads: next to a busy shard they get about
//! 1.5% of the core.
//!
//! Not `SCHED_IDLE`, which runs a thread only when nothing else wants the
//! core: these threads take allocator locks, and one parked while holding a
//! lock stalls the shard that needs it for as long as the core's other work
//! (network softirqs, kernel threads) keeps it busy. Storm runs with
//! `SCHED_IDLE` showed just that: slower reclaim, and client stalls of
//! 10-40 ms while no sweep slice was longer than half a millisecond. At
//! nice 19 a lock holder still gets its slice and lets go.

/// The thread names (`/proc/self/task/*/comm`) of jemalloc's purging threads.
const JEMALLOC_BACKGROUND: &str = "jemalloc_bg_thd";

/// The nice value housekeeping threads run at.
const LOWEST: i32 = 19;

/// Gives the calling thread the lowest priority. Returns false where the
/// OS refuses (or is not Linux); the thread then keeps its priority.
pub fn lower_current_thread() -> bool {
    set_lowest(0)
}

/// Gives every jemalloc purging thread of this process the lowest
/// priority; returns how many. jemalloc starts them lazily, so callers
/// repeat this.
pub fn lower_allocator_threads() -> usize {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.trim_end() == JEMALLOC_BACKGROUND)
        })
        .filter_map(|task| task.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&tid| set_lowest(tid))
        .count()
}

/// On Linux, `PRIO_PROCESS` with a thread id sets that thread's nice value
/// (0: the calling thread).
#[cfg(target_os = "linux")]
fn set_lowest(tid: u32) -> bool {
    // SAFETY: `setpriority` takes integers only and touches no memory of
    // ours; a stale or foreign id makes it fail with ESRCH or EPERM.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, LOWEST) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn set_lowest(_tid: u32) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn nice_of_current_thread() -> i32 {
        // SAFETY: takes and returns integers only.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
    }

    #[test]
    fn a_thread_lowers_itself_and_no_other() {
        let before = nice_of_current_thread();
        let lowered = std::thread::spawn(|| (lower_current_thread(), nice_of_current_thread()))
            .join()
            .unwrap();
        assert_eq!(lowered, (true, LOWEST));
        assert_eq!(nice_of_current_thread(), before);
    }

    #[test]
    fn threads_of_other_names_are_left_alone() {
        let before = nice_of_current_thread();
        lower_allocator_threads();
        assert_eq!(nice_of_current_thread(), before);
    }
}
