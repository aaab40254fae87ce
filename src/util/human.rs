//! Durations and retry times as every message of the supervised connections writes them:
//! [`Human`] (`1s 500ms`) and [`NextAttempt`] (`next attempt at 05:01:00 UTC, after a wait of 4s`).

use std::fmt;
use std::time::{Duration, SystemTime};

/// Formats a duration for humans, to the millisecond.
pub(crate) struct Human(pub(crate) Duration);

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = Duration::from_millis(self.0.as_millis() as u64);
        write!(f, "{}", humantime::format_duration(d))
    }
}

/// A retry due a wait from now, in words that stay true after they are written: a reason stays
/// on the status page, in `/status.json` and in `Hub::servers()` until the retry, so "next
/// attempt in 4s" would read 4s for as long as it is shown. The time is of the day, in UTC (with
/// the date when the wait is a day or longer): `next attempt at 05:01:00 UTC, after a wait of 4s`.
pub(crate) struct NextAttempt(pub(crate) Duration);

impl NextAttempt {
    /// The time of day the wait ends, `05:01:00 UTC`; `None` past what the clock can hold.
    pub(crate) fn at(&self) -> Option<String> {
        let at = SystemTime::now().checked_add(self.0)?;
        let rfc3339 = humantime::format_rfc3339_seconds(at).to_string();
        let (date, time) = rfc3339.trim_end_matches('Z').split_once('T')?;
        Some(if self.0 >= Duration::from_secs(86_400) {
            format!("{date} {time} UTC")
        } else {
            format!("{time} UTC")
        })
    }
}

impl fmt::Display for NextAttempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at() {
            Some(at) => write!(f, "next attempt at {at}, after a wait of {}", Human(self.0)),
            None => write!(f, "next attempt after a wait of {}", Human(self.0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_next_attempt_names_its_time_of_day_and_the_wait() {
        let text = NextAttempt(Duration::from_secs(4)).to_string();
        let (at, wait) = text
            .strip_prefix("next attempt at ")
            .and_then(|rest| rest.split_once(" UTC, "))
            .unwrap_or_else(|| panic!("{text}"));
        // HH:MM:SS, no date for a short wait.
        assert_eq!(at.len(), 8, "{text}");
        assert_eq!(at.matches(':').count(), 2, "{text}");
        assert_eq!(wait, "after a wait of 4s");
    }

    #[test]
    fn a_long_wait_names_the_date_and_an_endless_one_only_the_wait() {
        let text = NextAttempt(Duration::from_secs(2 * 86_400)).to_string();
        assert!(text.starts_with("next attempt at 2"), "{text}");
        assert!(
            text.contains('-') && text.ends_with("UTC, after a wait of 2days"),
            "{text}"
        );
        let text = NextAttempt(Duration::from_secs(u64::MAX)).to_string();
        assert!(text.starts_with("next attempt after a wait of "), "{text}");
    }
}
