//! [`Deadline`]: until when a ready entry admits calls, on the clock it was written on.
//!
//! The ready path reads one of two clocks (see `call_clock.rs`): the counter clock while tokio's
//! clock runs in real time, tokio's clock while it is paused. Which one a deadline is on is
//! decided once, when the entry is written, and kept in the deadline itself, so a reader needs
//! one atomic load and one read of the right clock. Nothing outside this file knows there are
//! two clocks: the cache makes deadlines from tokio instants ([`Deadline::at`]) and asks them
//! whether they admit a call now ([`Deadline::admit`]).

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::time::Instant;

use super::call_clock::{CallStart, counter, tokio_clock_runs};
use crate::util::nanos;

/// The bit of a deadline's word that says it is on tokio's clock; without it, it is on the
/// counter clock.
const ON_TOKIO_CLOCK: u64 = 1 << 63;

/// Where a cache's deadlines count from: one reading of each clock, taken when the cache is made.
/// Taking it calibrates the counter clock (once per process), so no call pays for that.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin {
    tokio: Instant,
    counter: u64,
}

impl Origin {
    /// Now, on both clocks.
    pub(crate) fn now() -> Origin {
        Origin {
            tokio: Instant::now(),
            // The first read calibrates the counter clock: here, not on a call.
            counter: counter().raw(),
        }
    }

    /// `at` as nanoseconds after this origin, on tokio's clock.
    #[inline]
    fn tokio_nanos(&self, at: Instant) -> u64 {
        nanos(at.saturating_duration_since(self.tokio))
    }
}

/// Until when a ready entry admits calls: nanoseconds after an [`Origin`], on the counter clock
/// when it was written while tokio's clock ran in real time, on tokio's clock when it was written
/// while tokio's clock was paused (so paused-time tests and `simulate` step to each lifetime's
/// edge exactly). One word, so a slot keeps it in an [`AtomicDeadline`].
///
/// A deadline admits a call strictly before it: at the deadline itself it has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deadline(u64);

impl Deadline {
    /// A deadline that has always passed: it admits nothing (an empty slot's).
    pub(crate) const PASSED: Deadline = Deadline(0);

    /// `expires`, an instant on tokio's clock, as a deadline after `origin`: on tokio's clock if
    /// it is paused now, else on the counter clock (now on the counter plus what is left until
    /// `expires`). Saturates, never passed at once, for a lifetime too long for the word.
    /// Costs about 200 ns (telling a paused clock from a running one): called when an entry is
    /// written, not on a call.
    pub(crate) fn at(expires: Instant, origin: &Origin) -> Deadline {
        // Below the flag, and never 0 (passed).
        let bounded = |nanos: u64| nanos.clamp(1, ON_TOKIO_CLOCK - 1);
        if tokio_clock_runs() {
            let left = nanos(expires.saturating_duration_since(Instant::now()));
            let clock = counter();
            Deadline(bounded(
                clock
                    .delta_as_nanos(origin.counter, clock.raw())
                    .saturating_add(left),
            ))
        } else {
            Deadline(bounded(origin.tokio_nanos(expires)) | ON_TOKIO_CLOCK)
        }
    }

    /// If the deadline has not passed, now, as the start of the call it admits, on the clock the
    /// deadline is on. One read of that clock; never waits, allocates or locks.
    #[inline]
    pub(crate) fn admit(self, origin: &Origin) -> Option<CallStart> {
        if self.0 & ON_TOKIO_CLOCK == 0 {
            let clock = counter();
            let raw = clock.raw();
            (clock.delta_as_nanos(origin.counter, raw) < self.0).then_some(CallStart::Counter(raw))
        } else {
            let now = Instant::now();
            (origin.tokio_nanos(now) < self.0 & !ON_TOKIO_CLOCK).then_some(CallStart::Tokio(now))
        }
    }
}

/// A [`Deadline`] in one atomic word, [`Deadline::PASSED`] by default: lock-free and
/// allocation-free. A store releases and a load acquires, so a reader that sees a deadline also
/// sees what the writer stored before it (the slot's generation).
#[derive(Debug, Default)]
pub(crate) struct AtomicDeadline(AtomicU64);

impl AtomicDeadline {
    /// The deadline stored last.
    #[inline]
    pub(crate) fn load(&self) -> Deadline {
        Deadline(self.0.load(Ordering::Acquire))
    }

    /// Replaces the deadline.
    pub(crate) fn store(&self, deadline: Deadline) {
        self.0.store(deadline.0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::util::later;

    /// A deadline `after` from now, and the origin it counts from.
    fn deadline_in(after: Duration) -> (Deadline, Origin) {
        let origin = Origin::now();
        (Deadline::at(later(Instant::now(), after), &origin), origin)
    }

    #[tokio::test(start_paused = true)]
    async fn on_a_paused_clock_a_deadline_admits_until_1_ns_before_it_and_not_at_it() {
        let (deadline, origin) = deadline_in(Duration::from_secs(60));
        assert!(
            matches!(deadline.admit(&origin), Some(CallStart::Tokio(now)) if now == Instant::now())
        );
        tokio::time::advance(Duration::from_nanos(59_999_999_999)).await;
        assert!(deadline.admit(&origin).is_some(), "1 ns before its instant");
        tokio::time::advance(Duration::from_nanos(1)).await;
        assert!(deadline.admit(&origin).is_none(), "passed exactly at it");
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert!(deadline.admit(&origin).is_none(), "and stays passed");
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_written_later_than_its_origin_counts_from_the_origin() {
        let origin = Origin::now();
        tokio::time::advance(Duration::from_secs(10)).await;
        let deadline = Deadline::at(Instant::now() + Duration::from_secs(5), &origin);
        tokio::time::advance(Duration::from_nanos(4_999_999_999)).await;
        assert!(
            deadline.admit(&origin).is_some(),
            "1 ns before 15 s after the origin"
        );
        tokio::time::advance(Duration::from_nanos(1)).await;
        assert!(
            deadline.admit(&origin).is_none(),
            "passed at 15 s after the origin"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_calls_a_paused_deadline_admits_are_timed_in_virtual_time() {
        let (deadline, origin) = deadline_in(Duration::from_secs(60));
        let start = deadline.admit(&origin).expect("fresh");
        tokio::time::advance(Duration::from_millis(1500)).await;
        assert_eq!(start.elapsed_nanos(), 1_500_000_000);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lifetime_too_long_for_the_word_saturates_instead_of_passing_at_once() {
        let (deadline, origin) = deadline_in(Duration::MAX);
        tokio::time::advance(Duration::from_secs(86_400 * 365)).await;
        assert!(deadline.admit(&origin).is_some(), "a year later");
    }

    #[tokio::test]
    async fn on_a_running_clock_a_deadline_is_on_the_counter_clock_and_passes_with_it() {
        // Real time, without waiting: a deadline a minute away admits on the counter clock; one
        // with nothing left has passed at its first read (the counter never reads below the
        // reading it was written with).
        let (deadline, origin) = deadline_in(Duration::from_secs(60));
        assert!(matches!(
            deadline.admit(&origin),
            Some(CallStart::Counter(_))
        ));
        let (deadline, origin) = deadline_in(Duration::ZERO);
        assert!(deadline.admit(&origin).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn the_passed_deadline_admits_nothing_on_either_clock() {
        let origin = Origin::now();
        assert!(Deadline::PASSED.admit(&origin).is_none());
        tokio::time::resume();
        assert!(Deadline::PASSED.admit(&origin).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn an_atomic_deadline_starts_passed_and_keeps_what_was_stored() {
        let cell = AtomicDeadline::default();
        assert_eq!(cell.load(), Deadline::PASSED);
        let (deadline, _) = deadline_in(Duration::from_secs(5));
        cell.store(deadline);
        assert_eq!(cell.load(), deadline);
        cell.store(Deadline::PASSED);
        assert_eq!(cell.load(), Deadline::PASSED);
    }
}
