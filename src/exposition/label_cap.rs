//! A cap on the distinct values of one label, so a caller that invents names cannot explode
//! Prometheus: the first `limit` distinct values are kept, every later one is counted as one
//! overflow value (`other` for this crate's labels).

use crate::util::MutexExt as _;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// Admits up to `limit` distinct label values; later ones map to the overflow value.
#[derive(Debug)]
pub(crate) struct LabelCap {
    limit: usize,
    overflow: &'static str,
    admitted: Mutex<HashSet<Arc<str>>>,
}

impl LabelCap {
    /// A cap of `limit` distinct values; values beyond it become `overflow`.
    pub(crate) fn new(limit: usize, overflow: &'static str) -> LabelCap {
        LabelCap {
            limit,
            overflow,
            admitted: Mutex::new(HashSet::new()),
        }
    }

    /// The label value to use for `value`: itself while the cap has room or when it was admitted
    /// before, the overflow value after. An admitted value stays admitted for the life of the recorder.
    pub(crate) fn admit(&self, value: &str) -> Arc<str> {
        let mut admitted = self.admitted.lock_unpoisoned();
        if let Some(known) = admitted.get(value) {
            return known.clone();
        }
        if admitted.len() >= self.limit {
            return Arc::from(self.overflow);
        }
        let value: Arc<str> = Arc::from(value);
        admitted.insert(value.clone());
        value
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_beyond_the_limit_become_other_and_admitted_ones_stay() {
        let cap = LabelCap::new(2, "other");
        assert_eq!(&*cap.admit("a"), "a");
        assert_eq!(&*cap.admit("b"), "b");
        assert_eq!(&*cap.admit("c"), "other");
        assert_eq!(&*cap.admit("a"), "a");
        assert_eq!(&*cap.admit("c"), "other");
    }

    #[test]
    fn a_zero_limit_counts_everything_as_other() {
        let cap = LabelCap::new(0, "other");
        assert_eq!(&*cap.admit("a"), "other");
    }
}
