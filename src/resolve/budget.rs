use std::time::Duration;

/// How long a resolution may wait for a `connecting` server, and how often it looks again.
///
/// Defaults: 20 s wait, 2 s poll (the seed's measured starting point: 5 s misses a connector that
/// needs four polls, 60 s recovers one more slow connector at a high price).
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::Budget;
///
/// let budget = Budget::try_new(Duration::from_secs(15), Duration::from_secs(1)).unwrap();
/// assert_eq!(budget.wait(), Duration::from_secs(15));
///
/// let err = Budget::try_new(Duration::from_secs(1), Duration::from_secs(2)).unwrap_err();
/// assert_eq!(err.to_string(), "poll interval 2s is longer than the wait budget 1s: use a poll no longer than the budget");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    wait: Duration,
    poll: Duration,
}

/// Why a [`Budget`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BudgetError {
    /// A zero poll interval would spin.
    #[error("poll interval must be greater than zero (wait budget {}): use e.g. 2s", humantime::format_duration(*.wait))]
    ZeroPoll {
        /// The wait budget that came with it.
        wait: Duration,
    },
    /// A poll shorter than [`Budget::MIN_POLL`] only costs CPU: a change wakes a waiting
    /// resolution at once, whatever the poll.
    #[error("poll interval {} is shorter than 1ms: a waiting resolution wakes at once on a change, so a shorter poll only costs CPU; use e.g. 500ms", humantime::format_duration(*.poll))]
    PollTooShort {
        /// The poll interval.
        poll: Duration,
    },
    /// A poll longer than the wait would never poll.
    #[error("poll interval {} is longer than the wait budget {}: use a poll no longer than the budget", humantime::format_duration(*.poll), humantime::format_duration(*.wait))]
    PollLongerThanWait {
        /// The wait budget.
        wait: Duration,
        /// The poll interval.
        poll: Duration,
    },
}

impl Budget {
    /// The default wait budget: 20 s.
    pub const DEFAULT_WAIT: Duration = Duration::from_secs(20);
    /// The default poll interval: 2 s.
    pub const DEFAULT_POLL: Duration = Duration::from_secs(2);

    /// The shortest poll interval: 1 ms (tokio's timer does not wake sooner, and a change wakes a
    /// waiting resolution at once anyway).
    pub const MIN_POLL: Duration = Duration::from_millis(1);

    /// A budget of `wait` polled every `poll`. Refuses a zero poll, a poll shorter than
    /// [`Budget::MIN_POLL`], and a poll longer than the wait (so a zero wait is refused too).
    pub fn try_new(wait: Duration, poll: Duration) -> Result<Budget, BudgetError> {
        if poll.is_zero() {
            return Err(BudgetError::ZeroPoll { wait });
        }
        if poll < Self::MIN_POLL {
            return Err(BudgetError::PollTooShort { poll });
        }
        if poll > wait {
            return Err(BudgetError::PollLongerThanWait { wait, poll });
        }
        Ok(Budget { wait, poll })
    }

    /// How long a resolution may wait in all.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// How often a waiting resolution looks again.
    pub fn poll(&self) -> Duration {
        self.poll
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            wait: Self::DEFAULT_WAIT,
            poll: Self::DEFAULT_POLL,
        }
    }
}
