//! Who kept whom off the CPU: run-queue wait of the server's serving threads
//! and of loadgen's own load threads.
//!
//! A latency spike has three possible authors: the server (a long slice of
//! work), the load generator (it sent late, and open-loop latency counts
//! from the intended send time), or the machine (a kernel thread, another
//! process or the hypervisor took a core). Linux keeps, per thread, the time
//! it spent runnable but waiting for a CPU (`/proc/<pid>/task/<tid>/schedstat`,
//! second field, ns). Sampled beside INFO every 100 ms, it says for each
//! window how long the server's serving threads and loadgen's load threads
//! were kept waiting: a window whose spike matches such a wait was the
//! machine's doing, not the server's.
//!
//! Beside them, the machine's own share: the CPU time of the kernel threads
//! that take a core for milliseconds at a time (DAMON's `kdamond`, which
//! scans memory every few hundred ms on some virtual machines, `kswapd`,
//! `kcompactd`, `khugepaged`, `ksoftirqd`), plus the hypervisor's steal
//! time, from `/proc/stat`.
//!
//! The server's figure needs the server on this machine (a loopback address
//! and a `process_id` in INFO that names a live process); elsewhere it is
//! absent, never zero.

use std::net::SocketAddr;
use std::path::Path;

/// The serving threads of a server process: the main thread (Redis serves
/// clients there) and ember's shard threads. Housekeeping threads (jemalloc
/// purging, lazy-free, ember's nice-19 helpers) are left out: they wait for
/// the CPU by design whenever the serving threads are busy.
pub fn is_serving_thread(pid: u32, tid: u32, name: &str) -> bool {
    tid == pid || name.starts_with("ember-shard")
}

/// Kernel threads whose runs are long enough to show as latency.
const NOISY_KERNEL_THREADS: &[&str] =
    &["kdamond", "kswapd", "kcompactd", "khugepaged", "ksoftirqd"];

/// The pids of the [`NOISY_KERNEL_THREADS`] (children of `kthreadd`, pid 2).
pub fn noisy_kernel_threads() -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|p| p.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // "pid (comm) state ppid ...": comm may hold spaces, so split after ')'.
            let Some((head, tail)) = stat.rsplit_once(')') else {
                return false;
            };
            let comm = head.split_once('(').map_or("", |(_, c)| c);
            let ppid = tail.split_whitespace().nth(1);
            ppid == Some("2") && NOISY_KERNEL_THREADS.iter().any(|k| comm.starts_with(k))
        })
        .collect()
}

/// CPU time (µs) the threads `pids` have used, from their schedstat.
fn cpu_us_of(pids: &[u32]) -> Option<u64> {
    let mut total_ns = 0u64;
    for pid in pids {
        let line = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
        total_ns += line.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total_ns / 1000)
}

/// The hypervisor's steal time over all CPUs, µs (`/proc/stat`, 8th
/// field of the `cpu` line, in USER_HZ = 100ths of a second).
fn steal_us() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: u64 = stat
        .lines()
        .next()?
        .split_whitespace()
        .nth(8)?
        .parse()
        .ok()?;
    Some(ticks * 10_000)
}

/// loadgen's threads that send and read the traffic (`client::run`).
pub fn is_load_thread(name: &str) -> bool {
    name.starts_with("loadgen-")
}

/// Gives the calling thread the lowest priority (nice 19); false where the
/// OS refuses. For the thread that samples INFO and these figures every
/// 100 ms beside the load threads on their core: at normal priority each
/// sample preempted a load thread and delayed the replies in flight (a
/// 3 s trace of the storm's steady traffic, `perf record -e
/// sched:sched_switch -C 0`: 61 runs of 0.23 ms on average); at nice 19 it
/// runs in their idle moments, a few ms late at worst.
pub fn lower_current_thread() -> bool {
    // SAFETY: setpriority takes integers only and touches no memory of
    // ours; `PRIO_PROCESS` with id 0 names the calling thread on Linux.
    // Tested by `a_thread_lowers_itself_and_no_other`.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) == 0 }
}

/// The run-queue wait (ns) in one `schedstat` line: "cpu_ns wait_ns slices".
pub fn parse_schedstat(line: &str) -> Option<u64> {
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Total run-queue wait, µs, of the threads of `pid` that `keep(tid, name)`
/// selects; None where `/proc` has no such process or no schedstat.
pub fn wait_us(pid: u32, keep: impl Fn(u32, &str) -> bool) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total_ns = 0u64;
    let mut seen = false;
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let dir = task.path();
        let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if !keep(tid, name.trim_end()) {
            continue;
        }
        // A thread that ended between the listing and this read is skipped.
        if let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .as_deref()
            .and_then(parse_schedstat)
        {
            total_ns += ns;
            seen = true;
        }
    }
    seen.then_some(total_ns / 1000)
}

/// The local process behind `addr`: the `process_id` INFO gave, when the
/// address is a loopback one and that process exists here.
pub fn local_server_pid(addr: SocketAddr, process_id: Option<u32>) -> Option<u32> {
    let pid = process_id.filter(|_| addr.ip().is_loopback())?;
    Path::new(&format!("/proc/{pid}/task"))
        .is_dir()
        .then_some(pid)
}

/// The command name of `pid` (for the report: which process was measured).
pub fn process_name(pid: u32) -> Option<String> {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(name.trim_end().to_string())
}

/// Reads the figures at one moment.
#[derive(Clone, Debug)]
pub struct Probe {
    /// The server's process, when it runs here.
    pub server_pid: Option<u32>,
    /// [`noisy_kernel_threads`], found once.
    pub kernel_pids: Vec<u32>,
}

/// Cumulative figures at one moment, µs (absent: not measurable).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WaitSample {
    /// ms relative to the storm instant.
    pub t_ms: i64,
    /// Run-queue wait of the server's serving threads.
    pub server_us: Option<u64>,
    /// Run-queue wait of loadgen's load threads.
    pub client_us: Option<u64>,
    /// CPU time of the noisy kernel threads plus steal time.
    pub machine_us: Option<u64>,
}

impl Probe {
    pub fn new(server_pid: Option<u32>) -> Probe {
        Probe {
            server_pid,
            kernel_pids: noisy_kernel_threads(),
        }
    }

    pub fn sample(&self, t_ms: i64) -> WaitSample {
        let machine = cpu_us_of(&self.kernel_pids)
            .zip(steal_us())
            .map(|(k, s)| k + s);
        WaitSample {
            t_ms,
            server_us: self
                .server_pid
                .and_then(|pid| wait_us(pid, |tid, name| is_serving_thread(pid, tid, name))),
            client_us: wait_us(std::process::id(), |_, name| is_load_thread(name)),
            machine_us: machine,
        }
    }
}

impl WaitSample {
    /// What accrued from `earlier` to `self` (t_ms: that of `self`).
    fn since(&self, earlier: &WaitSample) -> WaitSample {
        let d = |a: Option<u64>, b: Option<u64>| Some(a?.saturating_sub(b?));
        WaitSample {
            t_ms: self.t_ms,
            server_us: d(self.server_us, earlier.server_us),
            client_us: d(self.client_us, earlier.client_us),
            machine_us: d(self.machine_us, earlier.machine_us),
        }
    }

    /// Adds another stretch's figures (unknown if either is).
    fn add(&mut self, other: &WaitSample) {
        let sum = |a: Option<u64>, b: Option<u64>| Some(a? + b?);
        self.server_us = sum(self.server_us, other.server_us);
        self.client_us = sum(self.client_us, other.client_us);
        self.machine_us = sum(self.machine_us, other.machine_us);
    }
}

/// What accrued in each window: for each pair of consecutive samples, the
/// difference, filed under the window that holds the pair's midpoint (its
/// `t_ms` is the window's start). Windows are `window_ms` long and start at
/// multiples of it (relative to the instant, like the samples).
pub fn per_window(samples: &[WaitSample], window_ms: i64) -> Vec<WaitSample> {
    let mut out: Vec<WaitSample> = Vec::new();
    for pair in samples.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let window = ((a.t_ms + b.t_ms) / 2).div_euclid(window_ms) * window_ms;
        let delta = WaitSample {
            t_ms: window,
            ..b.since(a)
        };
        match out.last_mut() {
            // Two pairs in one window (polls came early): added up.
            Some(last) if last.t_ms == window => last.add(&delta),
            _ => out.push(delta),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn schedstat_lines_and_thread_roles() {
        assert_eq!(parse_schedstat("2731018 103474 1\n"), Some(103474));
        assert_eq!(parse_schedstat("2731018"), None);
        assert_eq!(parse_schedstat(""), None);
        assert!(is_serving_thread(7, 7, "redis-server"));
        assert!(is_serving_thread(7, 9, "ember-shard-3"));
        assert!(!is_serving_thread(7, 9, "jemalloc_bg_thd"));
        assert!(!is_serving_thread(7, 9, "ember-memstats"));
        assert!(is_load_thread("loadgen-0"));
        assert!(!is_load_thread("loadgen"));
    }

    #[test]
    fn kernel_threads_are_found_and_machine_time_is_read() {
        // In a PID namespace of its own (a container) the kernel's threads
        // are not visible.
        if process_name(2).as_deref() != Some("kthreadd") {
            eprintln!("no kthreadd here: skipped");
            return;
        }
        let pids = noisy_kernel_threads();
        // Every Linux has ksoftirqd/0.
        assert!(!pids.is_empty());
        for pid in &pids {
            let name = process_name(*pid).unwrap();
            assert!(
                NOISY_KERNEL_THREADS.iter().any(|k| name.starts_with(k)),
                "{name}"
            );
        }
        let first = Probe::new(None).sample(0);
        assert!(first.machine_us.is_some());
        assert_eq!(first.server_us, None);
    }

    #[test]
    fn the_server_pid_is_used_for_local_addresses_only() {
        let me = Some(std::process::id());
        let local: SocketAddr = "127.0.0.1:6379".parse().unwrap();
        let remote: SocketAddr = "10.1.2.3:6379".parse().unwrap();
        assert_eq!(local_server_pid(local, me), me);
        assert_eq!(local_server_pid(remote, me), None);
        assert_eq!(
            local_server_pid(local, Some(u32::MAX)),
            None,
            "no such process"
        );
        assert_eq!(local_server_pid(local, None), None);
    }

    #[test]
    fn waits_are_filed_under_the_window_of_their_midpoint() {
        let s = |t_ms, server: Option<u64>, client| WaitSample {
            t_ms,
            server_us: server,
            client_us: Some(client),
            machine_us: Some(client * 2),
        };
        let samples = [
            s(-202, Some(0), 0),
            s(-101, Some(10), 5),
            s(-1, Some(7_010), 5),
            s(30, Some(7_020), 9),
            // A second pair in window 0 (polls came early): added up, and
            // a server figure missing from either makes it unknown.
            s(99, None, 10),
        ];
        let at = |t_ms, server, client, machine| WaitSample {
            t_ms,
            server_us: server,
            client_us: Some(client),
            machine_us: Some(machine),
        };
        assert_eq!(
            per_window(&samples, 100),
            vec![
                at(-200, Some(10), 5, 10),
                at(-100, Some(7_000), 0, 0),
                at(0, None, 5, 10),
            ]
        );
        assert!(per_window(&samples[..1], 100).is_empty());
    }

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
        assert_eq!(lowered, (true, 19));
        assert_eq!(nice_of_current_thread(), before);
    }

    /// Pins the calling thread to one CPU.
    fn pin_to(cpu: usize) {
        // SAFETY: the set is a plain bit mask initialised by CPU_ZERO and
        // passed by pointer with its size; the call only reads it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_ZERO(&mut set);
            libc::CPU_SET(cpu, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
                0
            );
        }
    }

    /// The first CPU this process may run on.
    fn first_allowed_cpu() -> usize {
        // SAFETY: as in `pin_to`; sched_getaffinity writes at most the size given.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            (0..libc::CPU_SETSIZE as usize)
                .find(|&c| libc::CPU_ISSET(c, &set))
                .expect("some CPU is allowed")
        }
    }

    #[test]
    fn threads_sharing_one_cpu_wait_for_it() {
        let me = std::process::id();
        if wait_us(me, |_, _| true).is_none() {
            eprintln!("no /proc/<pid>/task/*/schedstat here: skipped");
            return;
        }
        let cpu = first_allowed_cpu();
        // At most 15 bytes: the kernel keeps no more of a thread name.
        let name = "loadgen-wait";
        let before = wait_us(me, |_, n| n == name).unwrap_or(0);
        // Three threads spinning on one CPU for 300 ms: at any moment two
        // of them are runnable and waiting.
        let spinners: Vec<_> = (0..3)
            .map(|_| {
                std::thread::Builder::new()
                    .name(name.into())
                    .spawn(move || {
                        pin_to(cpu);
                        let until = Instant::now() + Duration::from_millis(300);
                        let mut x = 0u64;
                        while Instant::now() < until {
                            x = std::hint::black_box(x.wrapping_add(1));
                        }
                        // Still alive, so its schedstat can be read.
                        std::thread::sleep(Duration::from_millis(200));
                        x
                    })
                    .unwrap()
            })
            .collect();
        std::thread::sleep(Duration::from_millis(350));
        let waited = wait_us(me, |_, n| n == name).unwrap() - before;
        for s in spinners {
            s.join().unwrap();
        }
        // Ideally 600 ms; anything above 100 ms shows the mechanism works.
        assert!(waited > 100_000, "threads on one CPU waited {waited} µs");
    }
}
