//! The calling thread's CPU clock: how much it has run, as opposed to how
//! much time has passed (the latency monitor's `off-cpu` is the difference),
//! and how long it has waited for a CPU while it could have run (a storm
//! sweep leaves the core to whoever else wants it).

/// CPU time the calling thread has used, µs (user and system). 0 where the
/// OS has no such clock.
pub fn thread_cpu_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec that lives across the call,
    // which writes only into it; the clock id is a constant the OS knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000
}

/// How long the calling thread has been runnable but waiting for a CPU,
/// µs, in all (Linux's `/proc/thread-self/schedstat`, second field): time
/// other threads and processes had its core. None where the OS does not
/// tell.
pub fn thread_run_delay_us() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().nth(1)?.parse().ok()?;
    Some(ns / 1_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn the_cpu_clock_runs_while_working_and_stops_while_sleeping() {
        let start = thread_cpu_us();
        let until = Instant::now() + Duration::from_millis(30);
        let mut x = 0u64;
        while Instant::now() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let worked = thread_cpu_us() - start;
        std::thread::sleep(Duration::from_millis(50));
        let slept = thread_cpu_us() - start - worked;
        // The loop ran for 30 ms of wall time; it had the CPU for most of it
        // unless the machine is very busy, and the sleep used next to none.
        assert!(worked >= 1_000, "spinning used {worked} µs of CPU");
        assert!(slept < 20_000, "sleeping used {slept} µs of CPU");
    }

    /// Pins the calling thread to the first CPU it may use.
    fn pin_to_one_cpu() {
        // SAFETY: `set` is a plain bit mask, zeroed and then filled by the
        // kernel (getaffinity) or by CPU_SET, and passed with its size.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0);
            let cpu = (0..libc::CPU_SETSIZE as usize)
                .find(|&c| libc::CPU_ISSET(c, &set))
                .expect("some CPU is allowed");
            libc::CPU_ZERO(&mut set);
            libc::CPU_SET(cpu, &mut set);
            assert_eq!(libc::sched_setaffinity(0, size, &set), 0);
        }
    }

    #[test]
    fn threads_sharing_a_cpu_wait_for_it() {
        if thread_run_delay_us().is_none() {
            eprintln!("no /proc/thread-self/schedstat: skipped");
            return;
        }
        // Three threads spinning on one CPU for 300 ms: each waits for
        // the other two most of the time.
        let waits: Vec<u64> = (0..3)
            .map(|_| {
                std::thread::spawn(|| {
                    pin_to_one_cpu();
                    let before = thread_run_delay_us().unwrap();
                    let until = Instant::now() + Duration::from_millis(300);
                    while Instant::now() < until {
                        std::hint::black_box(0);
                    }
                    thread_run_delay_us().unwrap() - before
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        let total: u64 = waits.iter().sum();
        // Ideally 600 ms in all; anything above 100 ms shows it is measured.
        assert!(total > 100_000, "waited {waits:?} µs");
    }
}
