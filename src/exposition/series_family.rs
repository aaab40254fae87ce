//! One metric family: the one storage of its series, keyed by their exact label values.
//!
//! `prometheus::MetricVec` keys its children by an FNV hash of the label values written back to
//! back, so `{server="a",tool="bc"}` and `{server="ab",tool="c"}` share one child (and any two
//! values whose 64-bit hashes collide do too). Server and tool names come from configuration and
//! from callers, so this family keys children by the label values themselves: distinct label sets
//! are always distinct series. Children are a few atomics (`series_values.rs`), created once and
//! then updated through handles without touching the map.
//!
//! Both outputs read this storage: the text of `/metrics` (`text_encoder.rs`) and the
//! `prometheus` messages a registry gathers (`proto_collector.rs`).

use crate::util::RwLockExt as _;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::RwLock;

use prometheus::core::Desc;

use super::series_values::Child;
use super::text_encoder as text;

/// Label values in the order of the sorted label names: the order series are exposed in.
pub(crate) type Key = Box<[Box<str>]>;

pub(crate) struct Entry<M> {
    pub(crate) child: M,
    /// `name="escaped value",...` in label-name order, escaped once (for the text output).
    pub(crate) labels: Box<str>,
}

/// A metric family whose children are keyed by their exact label values.
pub(crate) struct Family<M: Child> {
    pub(crate) name: &'static str,
    pub(crate) desc: Desc,
    labels: &'static [&'static str],
    /// Positions of `labels` sorted by name (exposition order).
    order: Vec<usize>,
    opts: M::Opts,
    /// The histogram bucket bounds (empty for other types).
    pub(crate) bounds: Vec<f64>,
    /// The bucket bounds as the text format writes them.
    pub(crate) les: Vec<Box<str>>,
    children: RwLock<BTreeMap<Key, Entry<M>>>,
}

impl<M: Child> fmt::Debug for Family<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Family")
            .field("name", &self.name)
            .field("labels", &self.labels)
            .field("series", &self.len())
            .finish()
    }
}

impl<M: Child> Family<M> {
    /// A family of `name` with `labels` and HELP `help`; children are made from `opts`. Fails if
    /// a name is not valid in the exposition format.
    pub(crate) fn new(
        name: &'static str,
        help: &str,
        labels: &'static [&'static str],
        opts: M::Opts,
    ) -> prometheus::Result<Family<M>> {
        let desc = Desc::new(
            name.to_owned(),
            help.to_owned(),
            labels.iter().map(|l| (*l).to_owned()).collect(),
            HashMap::new(),
        )?;
        let mut order: Vec<usize> = (0..labels.len()).collect();
        order.sort_by_key(|&i| labels[i]);
        let bounds = M::bounds(&opts);
        let les = bounds
            .iter()
            .map(|&bound| {
                let mut le = String::new();
                text::number(&mut le, bound);
                le.into_boxed_str()
            })
            .collect();
        Ok(Family {
            name,
            desc,
            labels,
            order,
            bounds,
            les,
            opts,
            children: RwLock::new(BTreeMap::new()),
        })
    }

    fn key(&self, values: &[&str]) -> Key {
        self.order
            .iter()
            .map(|&i| Box::<str>::from(values.get(i).copied().unwrap_or("")))
            .collect()
    }

    /// The child for `values` (in the order of the family's label names), created on first use.
    pub(crate) fn get_or_create(&self, values: &[&str]) -> M {
        // Not the hot path: handles keep their children, so this runs once per label set.
        let key = self.key(values);
        if let Some(entry) = self.children.read_unpoisoned().get(&key) {
            return entry.child.clone();
        }
        let mut children = self.children.write_unpoisoned();
        if let Some(entry) = children.get(&key) {
            return entry.child.clone();
        }
        let child = M::create(&self.opts);
        let labels = text::label_set(self.label_names().zip(key.iter().map(|v| &**v)));
        children.insert(
            key,
            Entry {
                child: child.clone(),
                labels,
            },
        );
        child
    }

    /// A child that is not exported (for handles of removed servers).
    pub(crate) fn detached(&self) -> M {
        M::create(&self.opts)
    }

    /// Runs `f` while no scrape can read the family, so several children can change together (the
    /// one-hot state gauges). `f` must not create children of this family.
    pub(crate) fn exclusive<R>(&self, f: impl FnOnce() -> R) -> R {
        let _guard = self.children.write_unpoisoned();
        f()
    }

    /// Removes every series whose label `label` is `value`; returns how many went away (none
    /// when the family has no such label).
    pub(crate) fn remove_where(&self, label: &str, value: &str) -> usize {
        let Some(index) = self.label_names().position(|name| name == label) else {
            return 0;
        };
        let mut children = self.children.write_unpoisoned();
        let before = children.len();
        children.retain(|key, _| &*key[index] != value);
        before - children.len()
    }

    /// How many series the family exports.
    pub(crate) fn len(&self) -> usize {
        self.children.read_unpoisoned().len()
    }

    /// The label names in exposition order (sorted), matching the values of a [`Key`].
    pub(crate) fn label_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.order.iter().map(|&i| self.labels[i])
    }

    /// The series in exposition order, for one output to read while no series is added or removed.
    pub(crate) fn series(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<Key, Entry<M>>> {
        self.children.read_unpoisoned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exposition::series_values::IntCounter;
    use crate::exposition::text_encoder::Encode;

    fn calls() -> Family<IntCounter> {
        Family::new("t_total", "test", &["tool", "server"], ()).unwrap()
    }

    #[test]
    fn label_sets_that_concatenate_alike_are_distinct_series() {
        let family = calls();
        family.get_or_create(&["bc", "a"]).inc();
        family.get_or_create(&["c", "ab"]).inc();
        family.get_or_create(&["c", "ab"]).inc();
        assert_eq!(family.len(), 2);
        assert_eq!(family.get_or_create(&["bc", "a"]).get(), 1);
        assert_eq!(family.get_or_create(&["c", "ab"]).get(), 2);
    }

    #[test]
    fn the_same_label_values_return_the_same_child() {
        let family = calls();
        family.get_or_create(&["t", "s"]).inc();
        family.get_or_create(&["t", "s"]).inc();
        assert_eq!(family.len(), 1);
        assert_eq!(family.get_or_create(&["t", "s"]).get(), 2);
    }

    #[test]
    fn removing_a_server_removes_only_its_series() {
        let family = calls();
        family.get_or_create(&["x", "gone"]);
        family.get_or_create(&["y", "gone"]);
        family.get_or_create(&["x", "kept"]);
        assert_eq!(family.remove_where("server", "gone"), 2);
        let mut out = String::new();
        family.encode(&mut out);
        assert_eq!(
            out,
            "# HELP t_total test\n# TYPE t_total counter\nt_total{server=\"kept\",tool=\"x\"} 0\n"
        );
    }

    #[test]
    fn a_detached_child_counts_but_is_not_exported() {
        let family = calls();
        let child = family.detached();
        child.inc();
        assert_eq!(child.get(), 1);
        assert_eq!(family.len(), 0);
    }
}
