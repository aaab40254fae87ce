//! The clock the ready path times calls and checks freshness with.
//!
//! A call's duration needs two clock reads, and the ready path checks its cache entry's expiry
//! with the first. Through tokio (`clock_gettime`) the pair costs more than the rest of the ready
//! path together on the machines measured (`docs/benchmarks.md`), so the ready path reads the
//! CPU's time-stamp counter through [`quanta`] instead: a third of the cost on one machine
//! measured, a thirteenth on another. It is calibrated once per process against the OS clock,
//! and falls back to the OS clock where the counter is not stable.
//!
//! Tokio's clock stays the truth whenever it is paused (`#[tokio::test(start_paused = true)]`,
//! `mcp-readiness simulate`): a ready entry's [`Deadline`](super::Deadline) checks, when it is
//! made, whether tokio's clock is running in real time ([`tokio_clock_runs`]). An entry written
//! while it is paused keeps its expiry on tokio's clock, and the calls it admits are timed on
//! tokio's clock, so paused-time tests step to each TTL edge and see virtual durations exactly.
//! (An entry written before a test pauses the clock expires in real time: pause before the first
//! call.)

use std::sync::OnceLock;

use tokio::time::Instant;

/// The process's counter clock, calibrated on first use (between half a millisecond and 200 ms
/// of spinning, once per process; a cache reads it when it is built, through its deadlines'
/// [`Origin`](super::Origin), so no call pays for it).
#[inline]
pub(super) fn counter() -> &'static quanta::Clock {
    static COUNTER: OnceLock<quanta::Clock> = OnceLock::new();
    COUNTER.get_or_init(quanta::Clock::new)
}

/// When a call started, on the clock that times it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CallStart {
    /// A raw reading of the [`counter`] clock (a ready hit while tokio's clock runs).
    Counter(u64),
    /// Tokio's clock (the slow path, and every call while tokio's clock is paused).
    Tokio(Instant),
}

impl CallStart {
    /// Now, on tokio's clock.
    pub(crate) fn tokio_now() -> CallStart {
        CallStart::Tokio(Instant::now())
    }

    /// How long ago the call started, on the clock it started on, in nanoseconds (saturating at
    /// about 584 years).
    #[inline]
    pub(crate) fn elapsed_nanos(self) -> u64 {
        match self {
            CallStart::Counter(start) => {
                let clock = counter();
                clock.delta_as_nanos(start, clock.raw())
            }
            CallStart::Tokio(start) => crate::util::nanos(start.elapsed()),
        }
    }
}

/// Whether tokio's clock is running in real time here, rather than paused (or too coarse to tell,
/// which is treated as paused: tokio's clock is then used, which is always right, only slower).
///
/// While tokio's clock is paused it moves only when the runtime advances it, never between two
/// reads in one synchronous stretch of code; a running clock moves while the counter does. Costs
/// about 200 ns of spinning; called when a ready entry is written, not per call.
pub(super) fn tokio_clock_runs() -> bool {
    /// How long the counter must move for a running tokio clock to show it.
    const SPIN_NANOS: u64 = 200;
    /// An upper bound on the spin, for a counter that does not move.
    const MAX_SPINS: u32 = 100_000;
    let clock = counter();
    let before = Instant::now();
    let start = clock.raw();
    for _ in 0..MAX_SPINS {
        if clock.delta_as_nanos(start, clock.raw()) >= SPIN_NANOS {
            break;
        }
        std::hint::spin_loop();
    }
    Instant::now() > before
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_paused_tokio_clock_is_seen_as_paused_and_calls_are_timed_on_it() {
        assert!(!tokio_clock_runs());
        let start = CallStart::tokio_now();
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert_eq!(start.elapsed_nanos(), 1_500_000_000);
        // Advancing does not make the clock run.
        assert!(!tokio_clock_runs());
    }

    #[tokio::test]
    async fn a_running_tokio_clock_is_seen_as_running_and_the_counter_agrees_with_it() {
        assert!(tokio_clock_runs());
        // Spin (no sleep) for 2 ms of tokio's clock; the counter measures the same stretch, read
        // between two reads of tokio's clock (so a preemption between the reads is bracketed).
        let tokio_start = Instant::now();
        let counter_start = CallStart::Counter(counter().raw());
        while tokio_start.elapsed() < Duration::from_millis(2) {
            std::hint::spin_loop();
        }
        let before = tokio_start.elapsed();
        let by_counter = Duration::from_nanos(counter_start.elapsed_nanos());
        let after = tokio_start.elapsed();
        assert!(
            by_counter >= before.mul_f64(0.9) && by_counter <= after.mul_f64(1.1),
            "the counter measured {by_counter:?}, tokio's clock {before:?} to {after:?}"
        );
    }

    #[test]
    fn outside_a_runtime_the_clock_runs() {
        assert!(tokio_clock_runs());
    }

    #[tokio::test(start_paused = true)]
    async fn resuming_a_paused_clock_makes_it_run_again() {
        assert!(!tokio_clock_runs());
        tokio::time::resume();
        assert!(tokio_clock_runs());
    }
}
