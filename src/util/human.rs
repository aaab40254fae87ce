//! [`Human`]: a duration as every message of the supervised connections writes it (`1s 500ms`).

use std::fmt;
use std::time::Duration;

/// Formats a duration for humans, to the millisecond.
pub(crate) struct Human(pub(crate) Duration);

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = Duration::from_millis(self.0.as_millis() as u64);
        write!(f, "{}", humantime::format_duration(d))
    }
}
