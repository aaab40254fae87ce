//! A cap on the distinct values of one label, so a caller that invents names cannot explode
//! Prometheus: the first `limit` distinct values are kept, every later one is counted as `other`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use super::names::OTHER;

/// Admits up to `limit` distinct label values; later ones map to [`OTHER`].
#[derive(Debug)]
pub(crate) struct LabelCap {
    limit: usize,
    admitted: Mutex<HashSet<Arc<str>>>,
}

impl LabelCap {
    pub(crate) fn new(limit: usize) -> LabelCap {
        LabelCap {
            limit,
            admitted: Mutex::new(HashSet::new()),
        }
    }

    /// The label value to use for `value`: itself while the cap has room or when it was admitted
    /// before, [`OTHER`] after. An admitted value stays admitted for the life of the recorder.
    pub(crate) fn admit(&self, value: &str) -> Arc<str> {
        let mut admitted = self
            .admitted
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(known) = admitted.get(value) {
            return known.clone();
        }
        if admitted.len() >= self.limit {
            return Arc::from(OTHER);
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
        let cap = LabelCap::new(2);
        assert_eq!(&*cap.admit("a"), "a");
        assert_eq!(&*cap.admit("b"), "b");
        assert_eq!(&*cap.admit("c"), "other");
        assert_eq!(&*cap.admit("a"), "a");
        assert_eq!(&*cap.admit("c"), "other");
    }

    #[test]
    fn a_zero_limit_counts_everything_as_other() {
        let cap = LabelCap::new(0);
        assert_eq!(&*cap.admit("a"), "other");
    }
}
