//! Where `mcp_readiness_server_state_changed_timestamp_seconds` reads the time: the system clock
//! in production, a [`ManualClock`] in tests so the exposition text is deterministic (the way
//! metrics-exporter-prometheus injects a mock clock).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A source of wall-clock time, as a duration since the Unix epoch.
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// Now, since 1970-01-01T00:00:00Z.
    fn unix_now(&self) -> Duration;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn unix_now(&self) -> Duration {
        // A clock set before 1970 reports the epoch rather than failing.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
    }
}

/// A clock that moves only when told to. Clones share one time.
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::metrics::{Clock, ManualClock};
///
/// let clock = ManualClock::new(Duration::from_secs(1_700_000_000));
/// clock.advance(Duration::from_millis(1500));
/// assert_eq!(clock.unix_now(), Duration::from_millis(1_700_000_001_500));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    nanos: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock reading `now` (since the Unix epoch).
    pub fn new(now: Duration) -> ManualClock {
        let clock = ManualClock::default();
        clock.set(now);
        clock
    }

    /// Sets the time (saturating at about the year 2554).
    pub fn set(&self, now: Duration) {
        let nanos = crate::util::nanos(now);
        self.nanos.store(nanos, Ordering::Relaxed);
    }

    /// Moves the time forward by `by`.
    pub fn advance(&self, by: Duration) {
        let by = crate::util::nanos(by);
        let _ = self
            .nanos
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_add(by))
            });
    }
}

impl Clock for ManualClock {
    fn unix_now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}
