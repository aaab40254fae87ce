//! The probes' connection attempts, counted per probed server so that
//! `mcp_readiness_connects_total` on a `/probe` answer is a counter like the supervised one: the
//! shipped rules take a failed connect in the last hour as the evidence `MCPServerAbsent` needs,
//! and a counter that read 1 on every probe would stop being evidence after an hour.
//!
//! Bounded: at most [`MAX_KEYS`] probed (module, target, server) triples are remembered; one more
//! forgets them all (a counter reset, which `increase()` understands), so a scrape storm over
//! many targets cannot grow the process.

use crate::util::MutexExt as _;
use std::collections::HashMap;
use std::sync::Mutex;

use crate::state::ConnectResult;

/// The most (module, target, server) triples counted.
pub(crate) const MAX_KEYS: usize = 4096;

/// Connection attempts by result, per probed server.
#[derive(Debug, Default)]
pub(crate) struct ConnectHistory {
    counts: Mutex<HashMap<Box<str>, [u64; ConnectResult::ALL.len()]>>,
}

impl ConnectHistory {
    /// Counts one attempt of `key` ending in `result`; returns the counts of `key` after it.
    pub(crate) fn record(
        &self,
        key: &str,
        result: ConnectResult,
    ) -> [u64; ConnectResult::ALL.len()] {
        let mut counts = self.counts.lock_unpoisoned();
        if !counts.contains_key(key) && counts.len() >= MAX_KEYS {
            counts.clear();
        }
        let entry = counts.entry(Box::from(key)).or_default();
        if let Some(i) = ConnectResult::ALL.iter().position(|r| *r == result) {
            entry[i] = entry[i].saturating_add(1);
        }
        *entry
    }

    /// How many triples are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.counts.lock_unpoisoned().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_add_up_per_key_and_result() {
        let history = ConnectHistory::default();
        history.record("a", ConnectResult::Refused);
        let counts = history.record("a", ConnectResult::Refused);
        let refused = ConnectResult::ALL
            .iter()
            .position(|r| *r == ConnectResult::Refused)
            .unwrap();
        assert_eq!(counts[refused], 2);
        assert_eq!(
            history.record("b", ConnectResult::Ok).iter().sum::<u64>(),
            1
        );
    }

    #[test]
    fn one_key_beyond_the_bound_forgets_them_all() {
        let history = ConnectHistory::default();
        for i in 0..MAX_KEYS {
            history.record(&i.to_string(), ConnectResult::Ok);
        }
        assert_eq!(history.len(), MAX_KEYS);
        history.record("0", ConnectResult::Ok);
        assert_eq!(history.len(), MAX_KEYS, "a known key adds nothing");
        history.record("new", ConnectResult::Ok);
        assert_eq!(history.len(), 1);
    }
}
