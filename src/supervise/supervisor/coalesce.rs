//! [`Coalesce`]: many requests for the same work while it runs become one more run, so a server
//! that floods `notifications/tools/list_changed` costs one tool-list refresh at a time, not one
//! task (and one `tools/list` request) per notification.

use std::sync::atomic::{AtomicU8, Ordering};

/// No run in progress.
const IDLE: u8 = 0;
/// A run in progress, nothing asked since it started.
const RUNNING: u8 = 1;
/// A run in progress, and at least one request arrived since it started: run once more.
const DIRTY: u8 = 2;

/// A three-state latch: idle, running, running with a request pending.
#[derive(Debug, Default)]
pub(crate) struct Coalesce {
    state: AtomicU8,
}

impl Coalesce {
    /// Asks for a run. `true`: the caller must start one (and call [`Coalesce::again`] after
    /// each run); `false`: a run in progress will run once more.
    pub(crate) fn request(&self) -> bool {
        let previous = self.step(|state| match state {
            // idle -> running: this caller starts the run.
            IDLE => Some(RUNNING),
            // running -> dirty: the current run repeats once when it ends.
            RUNNING => Some(DIRTY),
            // dirty stays dirty: one repeat covers any number of requests.
            _ => None,
        });
        previous == IDLE
    }

    /// Called by the runner after each run: `true` to run again (a request arrived meanwhile).
    pub(crate) fn again(&self) -> bool {
        let previous = self.step(|state| match state {
            // dirty -> running: run once more for the requests that arrived during this run.
            DIRTY => Some(RUNNING),
            // running -> idle: nothing arrived; the next request starts a new run.
            _ => Some(IDLE),
        });
        previous == DIRTY
    }

    /// Moves the state as `next` says (`None`: it stays); the state before.
    fn step(&self, next: impl FnMut(u8) -> Option<u8>) -> u8 {
        self.state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, next)
            .unwrap_or_else(|unchanged| unchanged)
    }

    /// Back to idle without a run (the runner could not be started).
    pub(crate) fn reset(&self) {
        self.state.store(IDLE, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_during_a_run_become_exactly_one_more_run() {
        let latch = Coalesce::default();
        assert!(latch.request(), "the first request starts a run");
        for _ in 0..1000 {
            assert!(!latch.request(), "requests during the run start nothing");
        }
        assert!(latch.again(), "they ask for one more run");
        assert!(!latch.again(), "and only one");
        assert!(latch.request(), "after it, a request starts a run again");
    }

    #[test]
    fn a_reset_latch_starts_a_run_on_the_next_request() {
        let latch = Coalesce::default();
        assert!(latch.request());
        latch.reset();
        assert!(latch.request());
    }
}
