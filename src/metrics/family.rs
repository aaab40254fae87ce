//! One metric family keyed by its exact label values.
//!
//! `prometheus::MetricVec` keys its children by an FNV hash of the label values written back to
//! back, so `{server="a",tool="bc"}` and `{server="ab",tool="c"}` share one child (and any two
//! values whose 64-bit hashes collide do too). Server and tool names come from configuration and
//! from callers, so this family keys children by the label values themselves: distinct label sets
//! are always distinct series. Children are ordinary `prometheus` metrics, created once and then
//! updated through handles without touching the map.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, RwLock};

use prometheus::core::{Atomic, Collector, Desc, GenericCounter, GenericGauge, Metric, Opts};
use prometheus::proto::{MetricFamily, MetricType};
use prometheus::{Histogram, HistogramOpts};

/// A metric type a [`Family`] can hold: built with its label values as constant labels.
pub(crate) trait Child: Metric + Clone + Send + Sync + 'static {
    /// The options the family was declared with.
    type Opts: Clone + Send + Sync + 'static;
    /// The exposition type.
    const KIND: MetricType;
    /// Builds one child carrying `labels`.
    fn build(opts: &Self::Opts, labels: HashMap<String, String>) -> prometheus::Result<Self>;
}

impl<P: Atomic + 'static> Child for GenericCounter<P> {
    type Opts = Opts;
    const KIND: MetricType = MetricType::COUNTER;
    fn build(opts: &Opts, labels: HashMap<String, String>) -> prometheus::Result<Self> {
        GenericCounter::with_opts(opts.clone().const_labels(labels))
    }
}

impl<P: Atomic + 'static> Child for GenericGauge<P> {
    type Opts = Opts;
    const KIND: MetricType = MetricType::GAUGE;
    fn build(opts: &Opts, labels: HashMap<String, String>) -> prometheus::Result<Self> {
        GenericGauge::with_opts(opts.clone().const_labels(labels))
    }
}

impl Child for Histogram {
    type Opts = HistogramOpts;
    const KIND: MetricType = MetricType::HISTOGRAM;
    fn build(opts: &HistogramOpts, labels: HashMap<String, String>) -> prometheus::Result<Self> {
        Histogram::with_opts(opts.clone().const_labels(labels))
    }
}

type Key = Box<[Box<str>]>;

/// A metric family whose children are keyed by their exact label values.
pub(crate) struct Family<M: Child> {
    name: &'static str,
    desc: Desc,
    labels: &'static [&'static str],
    server_label: Option<usize>,
    opts: M::Opts,
    /// Returned when a child cannot be built (never with valid static names, which `new` checks):
    /// it counts, but is not exported.
    detached: M,
    children: RwLock<HashMap<Key, M>>,
}

impl<M: Child> fmt::Debug for Family<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Family")
            .field("name", &self.desc.fq_name)
            .field("labels", &self.labels)
            .field("series", &self.len())
            .finish()
    }
}

impl<M: Child> Family<M> {
    /// A family of `name` with `labels`, built from `opts` (whose name and help it takes).
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
        // Building one child checks the name and every label name once, so later builds cannot fail.
        let probe: HashMap<String, String> = labels
            .iter()
            .map(|l| ((*l).to_owned(), String::new()))
            .collect();
        let detached = M::build(&opts, probe)?;
        Ok(Family {
            name,
            desc,
            labels,
            server_label: labels.iter().position(|l| *l == super::names::LABEL_SERVER),
            opts,
            detached,
            children: RwLock::new(HashMap::new()),
        })
    }

    /// The child for `values` (in the order of the family's label names), created on first use.
    pub(crate) fn get_or_create(&self, values: &[&str]) -> M {
        // Not the hot path: handles keep their children, so this runs once per label set.
        let key = key(values);
        if let Some(child) = read(&self.children).get(&key) {
            return child.clone();
        }
        let mut children = write(&self.children);
        if let Some(child) = children.get(&key) {
            return child.clone();
        }
        let child = self.build(values);
        children.insert(key, child.clone());
        child
    }

    /// A child for `values` that is not exported (for handles of removed servers).
    pub(crate) fn detached(&self, values: &[&str]) -> M {
        self.build(values)
    }

    fn build(&self, values: &[&str]) -> M {
        let labels = self
            .labels
            .iter()
            .zip(values)
            .map(|(l, v)| ((*l).to_owned(), (*v).to_owned()))
            .collect();
        M::build(&self.opts, labels).unwrap_or_else(|_| self.detached.clone())
    }

    /// Runs `f` while no scrape can read the family, so several children can change together (the
    /// one-hot state gauges). `f` must not create children of this family.
    pub(crate) fn exclusive<R>(&self, f: impl FnOnce() -> R) -> R {
        let _guard = write(&self.children);
        f()
    }

    /// Removes every series whose `server` label is `server`; returns how many went away.
    pub(crate) fn remove_server(&self, server: &str) -> usize {
        let Some(index) = self.server_label else {
            return 0;
        };
        let mut children = write(&self.children);
        let before = children.len();
        children.retain(|key, _| &*key[index] != server);
        before - children.len()
    }

    /// How many series the family exports.
    pub(crate) fn len(&self) -> usize {
        read(&self.children).len()
    }

    /// The metric name.
    pub(crate) fn static_name(&self) -> &'static str {
        self.name
    }
}

fn key(values: &[&str]) -> Key {
    values.iter().map(|v| Box::<str>::from(*v)).collect()
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // A panic while holding the lock cannot leave a map of metrics inconsistent: keep going.
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A shared [`Family`] as a `prometheus` collector (the registry takes collectors by value).
pub(crate) struct Registered<M: Child>(pub(crate) Arc<Family<M>>);

impl<M: Child> Collector for Registered<M> {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.0.desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let children = read(&self.0.children);
        let mut family = MetricFamily::default();
        family.set_name(self.0.desc.fq_name.clone());
        family.set_help(self.0.desc.help.clone());
        family.set_field_type(M::KIND);
        family.set_metric(children.values().map(Metric::metric).collect());
        vec![family]
    }
}

#[cfg(test)]
mod tests {
    use prometheus::IntCounter;

    use super::*;

    fn calls() -> Family<IntCounter> {
        Family::new(
            "t_total",
            "test",
            &["server", "tool"],
            Opts::new("t_total", "test"),
        )
        .unwrap()
    }

    #[test]
    fn label_sets_that_concatenate_alike_are_distinct_series() {
        let family = calls();
        family.get_or_create(&["a", "bc"]).inc();
        family.get_or_create(&["ab", "c"]).inc_by(2);
        assert_eq!(family.len(), 2);
        assert_eq!(family.get_or_create(&["a", "bc"]).get(), 1);
        assert_eq!(family.get_or_create(&["ab", "c"]).get(), 2);
    }

    #[test]
    fn the_same_label_values_return_the_same_child() {
        let family = calls();
        family.get_or_create(&["s", "t"]).inc();
        family.get_or_create(&["s", "t"]).inc();
        assert_eq!(family.len(), 1);
        assert_eq!(family.get_or_create(&["s", "t"]).get(), 2);
    }

    #[test]
    fn removing_a_server_removes_only_its_series() {
        let family = calls();
        family.get_or_create(&["gone", "x"]);
        family.get_or_create(&["gone", "y"]);
        family.get_or_create(&["kept", "x"]);
        assert_eq!(family.remove_server("gone"), 2);
        assert_eq!(family.len(), 1);
        let collected = Registered(Arc::new(family)).collect();
        let labels = collected[0].get_metric()[0].get_label();
        assert_eq!(labels[0].value(), "kept");
    }

    #[test]
    fn a_detached_child_counts_but_is_not_exported() {
        let family = calls();
        let child = family.detached(&["s", "t"]);
        child.inc();
        assert_eq!(child.get(), 1);
        assert_eq!(family.len(), 0);
    }
}
