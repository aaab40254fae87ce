//! Small internal building blocks: copy-on-write maps, per-thread shards, the call clock, form
//! decoding, durations as messages write them (`human.rs`) and the open-file limit
//! (`fd_limit.rs`, re-exported as `supervise::raise_open_file_limit`).

mod echo;
#[cfg(feature = "hub")]
mod fd_limit;
mod form;
#[cfg(feature = "hub")]
mod human;
mod lock;

pub(crate) use echo::{echo, escape_controls};
#[cfg(feature = "hub")]
pub(crate) use fd_limit::out_of_descriptors;
#[cfg(feature = "hub")]
pub use fd_limit::{OpenFileLimit, raise_open_file_limit};
#[allow(unused_imports)] // see form_decode
pub(crate) use form::form_decode;
#[cfg(feature = "hub")]
pub(crate) use human::{Human, NextAttempt};
pub(crate) use lock::{MutexExt, RwLockExt};

use std::time::Duration;
use tokio::time::Instant;

/// About 30 years: how far "never" is when a configured duration does not fit in an instant
/// (tokio's own `sleep` uses the same horizon).
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `d` in whole nanoseconds, saturating at `u64::MAX` (about 584 years).
#[inline]
pub(crate) fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `start + after`, saturating at about 30 years from `start` instead of panicking when a
/// configured duration (`u64::MAX` seconds) does not fit.
pub(crate) fn later(start: Instant, after: Duration) -> Instant {
    start
        .checked_add(after)
        .or_else(|| start.checked_add(FAR_FUTURE))
        .unwrap_or(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_duration_too_long_for_an_instant_saturates_instead_of_panicking() {
        let now = Instant::now();
        assert_eq!(later(now, Duration::MAX), now + FAR_FUTURE);
        assert_eq!(later(now, Duration::from_secs(u64::MAX)), now + FAR_FUTURE);
        assert_eq!(
            later(now, Duration::from_secs(3)),
            now + Duration::from_secs(3)
        );
    }
}
