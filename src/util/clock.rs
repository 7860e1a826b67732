//! The calling thread's CPU clock: how much it has run, as opposed to how
//! much time has passed (the latency monitor's `off-cpu` is the difference).

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
}
