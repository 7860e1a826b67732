//! Cheap timestamps for timing commands.
//!
//! Every command is timed (INFO commandstats and latencystats, SLOWLOG, the
//! latency monitor), so a pipelined client costs a clock reading per
//! command. `Instant::now()` goes through the vDSO's `clock_gettime`, about
//! 30 ns on the VMs we measure on, a tenth of a pipelined SET's user time;
//! reading the CPU's time-stamp counter directly costs about 11 ns.
//!
//! The counter is used only where the kernel itself keeps time with it
//! (its clocksource is `tsc`): the kernel has then checked that the counter
//! runs at a constant rate, does not stop in idle states and agrees across
//! cores. Elsewhere (another clocksource, another architecture) a stamp is
//! an `Instant` reading in nanoseconds, as before.
//!
//! The counter's rate is measured once, against `Instant`, over
//! [`CALIBRATION`] when the first stamp is taken, or at [`calibrate`].

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the counter is compared with `Instant` to learn its rate: the
/// readings are tens of nanoseconds apart, so the rate is off by about
/// 1e-5, far below the microseconds stamps are reported in.
const CALIBRATION: Duration = Duration::from_millis(2);

/// 1.0 in the 32.32 fixed point of `Source::Counter`.
const FP32_ONE: f64 = (1u64 << 32) as f64;

/// A point in time, only comparable with other stamps of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(u64);

enum Source {
    /// Time-stamp counter ticks; microseconds per tick in 32.32 fixed
    /// point (integer arithmetic: converting a u64 to a float takes several
    /// instructions on x86-64).
    Counter { us_per_tick_fp32: u64 },
    /// Nanoseconds since `origin`.
    Monotonic { origin: Instant },
}

fn source() -> &'static Source {
    static SOURCE: OnceLock<Source> = OnceLock::new();
    SOURCE.get_or_init(|| match counter::rate_us_per_tick() {
        Some(us_per_tick) => Source::Counter {
            us_per_tick_fp32: (us_per_tick * FP32_ONE) as u64,
        },
        None => Source::Monotonic {
            origin: Instant::now(),
        },
    })
}

/// Learns the counter's rate now (it takes [`CALIBRATION`]), so that the
/// first command timed does not wait for it.
pub fn calibrate() {
    source();
}

impl Stamp {
    pub fn now() -> Stamp {
        match source() {
            Source::Counter { .. } => Stamp(counter::read()),
            Source::Monotonic { origin } => Stamp(origin.elapsed().as_nanos() as u64),
        }
    }

    /// Whole microseconds from `earlier` to `self` (0 if `earlier` is later).
    pub fn micros_since(self, earlier: Stamp) -> u64 {
        let delta = self.0.saturating_sub(earlier.0);
        match source() {
            Source::Counter { us_per_tick_fp32 } => {
                ((u128::from(delta) * u128::from(*us_per_tick_fp32)) >> 32) as u64
            }
            Source::Monotonic { .. } => delta / 1_000,
        }
    }

    /// Whole microseconds since this stamp.
    pub fn elapsed_us(self) -> u64 {
        Stamp::now().micros_since(self)
    }
}

#[cfg(target_arch = "x86_64")]
mod counter {
    use super::CALIBRATION;
    use std::time::Instant;

    pub fn read() -> u64 {
        // SAFETY: RDTSC is part of the x86-64 base instruction set, so the
        // instruction exists on every CPU this code runs on. It reads a
        // register and touches no memory. It could fault only if the kernel
        // set CR4.TSD for this process, which Linux does only on
        // prctl(PR_SET_TSC, PR_TSC_SIGSEGV), a call ember never makes.
        unsafe { core::arch::x86_64::_rdtsc() }
    }

    /// The kernel keeps time with the counter (see the module docs).
    fn kernel_trusts_it() -> bool {
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .is_ok_and(|s| s.trim() == "tsc")
    }

    /// Microseconds per tick, measured against `Instant`; None where the
    /// counter is not to be used.
    pub fn rate_us_per_tick() -> Option<f64> {
        if !kernel_trusts_it() {
            return None;
        }
        let (t0, c0) = (Instant::now(), read());
        while t0.elapsed() < CALIBRATION {
            std::hint::spin_loop();
        }
        let (c1, t1) = (read(), Instant::now());
        let ticks = c1.checked_sub(c0).filter(|&t| t > 0)?;
        Some(t1.duration_since(t0).as_nanos() as f64 / 1_000.0 / ticks as f64)
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod counter {
    pub fn read() -> u64 {
        0
    }

    pub fn rate_us_per_tick() -> Option<f64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_measure_the_time_that_passed() {
        let (instant, stamp) = (Instant::now(), Stamp::now());
        std::thread::sleep(Duration::from_millis(20));
        let (by_stamp, by_instant) = (stamp.elapsed_us(), instant.elapsed().as_micros() as u64);
        // Both clocks are read around the same sleep; a slow machine may
        // stretch the sleep, but not the gap between the two readings by
        // more than a few milliseconds.
        assert!(by_stamp >= 19_000, "20 ms sleep measured as {by_stamp} µs");
        assert!(
            by_stamp.abs_diff(by_instant) < 5_000,
            "stamp {by_stamp} µs, Instant {by_instant} µs"
        );
    }

    #[test]
    fn an_earlier_stamp_gives_zero_not_a_wrap() {
        let earlier = Stamp::now();
        std::thread::sleep(Duration::from_millis(1));
        let later = Stamp::now();
        assert!(later > earlier);
        assert_eq!(earlier.micros_since(later), 0);
        assert!(later.micros_since(earlier) >= 900);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_counter_runs_forward_at_a_plausible_rate() {
        let a = counter::read();
        let b = counter::read();
        assert!(b >= a);
        if let Some(us_per_tick) = counter::rate_us_per_tick() {
            // Between 100 MHz and 10 GHz.
            assert!(
                (1e-4..1e-2).contains(&us_per_tick),
                "{us_per_tick} µs per tick"
            );
        }
    }
}
