//! One metric family keyed by its exact label values, with its own text encoder.
//!
//! `prometheus::MetricVec` keys its children by an FNV hash of the label values written back to
//! back, so `{server="a",tool="bc"}` and `{server="ab",tool="c"}` share one child (and any two
//! values whose 64-bit hashes collide do too). Server and tool names come from configuration and
//! from callers, so this family keys children by the label values themselves: distinct label sets
//! are always distinct series. Children are a few atomics ([`super::value`]), created once and then
//! updated through handles without touching the map.
//!
//! The family is registered in the `prometheus::Registry` as a collector (so anyone gathering the
//! registry sees it), but rendering a large fleet through `Registry::gather` + `TextEncoder`
//! builds a message per series, sorts them and formats each line from scratch (about 100 ms for
//! 1,000 servers). Each child here keeps its label text escaped once at creation, children are
//! kept in exposition order, and [`Family::encode`] writes the text directly: the same bytes
//! `TextEncoder` writes (a unit test compares them).

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write as _};
use std::sync::{Arc, RwLock};

use prometheus::core::{Collector, Desc};
use prometheus::proto::{self, LabelPair, MetricFamily, MetricType};

use super::value::{Counter, Gauge, Histogram, IntCounter, IntGauge};

/// A series value a [`Family`] can hold.
pub(crate) trait Child: Clone + Send + Sync + 'static {
    /// What every child of the family is made from (the bucket bounds of a histogram).
    type Opts: Send + Sync + 'static;
    /// The exposition type.
    const KIND: MetricType;
    /// A new, zeroed child.
    fn create(opts: &Self::Opts) -> Self;
    /// Writes this child's sample lines; `labels` is the escaped `name="value",...` text and
    /// `les` the formatted bucket bounds of [`Child::bounds`].
    fn encode(&self, name: &str, labels: &str, les: &[Box<str>], out: &mut String);
    /// The child as a `prometheus` message carrying `labels`, for `Registry::gather`.
    fn proto(&self, labels: Vec<LabelPair>) -> proto::Metric;
    /// The histogram bucket bounds (none for other types).
    fn bounds(_opts: &Self::Opts) -> Vec<f64> {
        Vec::new()
    }
}

macro_rules! scalar_child {
    ($type:ty, $kind:expr, $set:ident, $proto:ident) => {
        impl Child for $type {
            type Opts = ();
            const KIND: MetricType = $kind;
            fn create(_opts: &()) -> Self {
                <$type>::default()
            }
            fn encode(&self, name: &str, labels: &str, _les: &[Box<str>], out: &mut String) {
                sample(out, name, "", labels, None, self.get() as f64);
            }
            fn proto(&self, labels: Vec<LabelPair>) -> proto::Metric {
                let mut value = proto::$proto::default();
                value.set_value(self.get() as f64);
                let mut metric = proto::Metric::from_label(labels);
                metric.$set(value);
                metric
            }
        }
    };
}

scalar_child!(Counter, MetricType::COUNTER, set_counter, Counter);
scalar_child!(IntCounter, MetricType::COUNTER, set_counter, Counter);
scalar_child!(Gauge, MetricType::GAUGE, set_gauge, Gauge);
scalar_child!(IntGauge, MetricType::GAUGE, set_gauge, Gauge);

impl Child for Histogram {
    type Opts = Arc<[f64]>;
    const KIND: MetricType = MetricType::HISTOGRAM;
    fn create(bounds: &Arc<[f64]>) -> Self {
        Histogram::new(bounds.clone())
    }
    fn bounds(bounds: &Arc<[f64]>) -> Vec<f64> {
        bounds.to_vec()
    }
    fn encode(&self, name: &str, labels: &str, les: &[Box<str>], out: &mut String) {
        let snapshot = self.snapshot();
        for (i, (bound, count)) in self.bounds().iter().zip(&snapshot.cumulative).enumerate() {
            let le = Some(Le::new(les.get(i).map(|text| &**text), *bound));
            sample(out, name, "_bucket", labels, le, *count as f64);
        }
        let count = snapshot.count() as f64;
        sample(out, name, "_bucket", labels, Some(Le::Text("+Inf")), count);
        sample(out, name, "_sum", labels, None, snapshot.sum);
        sample(out, name, "_count", labels, None, count);
    }
    fn proto(&self, labels: Vec<LabelPair>) -> proto::Metric {
        let snapshot = self.snapshot();
        let mut histogram = proto::Histogram::default();
        histogram.set_sample_count(snapshot.count());
        histogram.set_sample_sum(snapshot.sum);
        histogram.set_bucket(
            self.bounds()
                .iter()
                .zip(&snapshot.cumulative)
                .map(|(bound, count)| {
                    let mut bucket = proto::Bucket::default();
                    bucket.set_upper_bound(*bound);
                    bucket.set_cumulative_count(*count);
                    bucket
                })
                .collect(),
        );
        let mut metric = proto::Metric::from_label(labels);
        metric.set_histogram(histogram);
        metric
    }
}

/// A bucket bound: formatted once per family, or (should the buckets differ) now.
#[derive(Clone, Copy)]
enum Le<'a> {
    Text(&'a str),
    Number(f64),
}

impl<'a> Le<'a> {
    fn new(cached: Option<&'a str>, bound: f64) -> Le<'a> {
        match cached {
            Some(text) => Le::Text(text),
            None => Le::Number(bound),
        }
    }
}

/// One sample line: `name[suffix]{labels[,le="bound"]} value`.
fn sample(
    out: &mut String,
    name: &str,
    suffix: &str,
    labels: &str,
    le: Option<Le<'_>>,
    value: f64,
) {
    out.push_str(name);
    out.push_str(suffix);
    if !labels.is_empty() || le.is_some() {
        out.push('{');
        out.push_str(labels);
        if let Some(le) = le {
            if !labels.is_empty() {
                out.push(',');
            }
            out.push_str("le=\"");
            match le {
                Le::Text(text) => out.push_str(text),
                Le::Number(bound) => number(out, bound),
            }
            out.push('"');
        }
        out.push('}');
    }
    out.push(' ');
    number(out, value);
    out.push('\n');
}

/// A number as the text format spells it (`+Inf`, `-Inf`, `NaN`, else Rust's shortest form, as
/// `TextEncoder` writes it).
fn number(out: &mut String, value: f64) {
    if value.is_infinite() {
        out.push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
    } else if value.fract() == 0.0
        && value.abs() < 9.0e15
        && !(value == 0.0 && value.is_sign_negative())
    {
        // Most samples are whole numbers (counts, bucket counts, states): integer formatting is
        // several times faster and prints the same digits.
        let _ = write!(out, "{}", value as i64);
    } else {
        // Writing into a String cannot fail.
        let _ = write!(out, "{value}");
    }
}

/// Escapes a label value: backslash, double quote and line feed.
fn escape_label_value(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            // Other control characters (terminal escapes, NUL, CR) are shown as text, e.g.
            // `\u{1b}`, so a scrape read on a terminal cannot be used to drive it.
            c if c.is_control() => {
                for e in c.escape_default() {
                    if e == '\\' {
                        out.push_str("\\\\");
                    } else {
                        out.push(e);
                    }
                }
            }
            c => out.push(c),
        }
    }
}

/// Escapes a HELP text: backslash and line feed.
fn escape_help(out: &mut String, help: &str) {
    for c in help.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Label values in the order of the sorted label names: the order series are exposed in.
type Key = Box<[Box<str>]>;

struct Entry<M> {
    child: M,
    /// `name="escaped value",...` in label-name order, written once.
    labels: Box<str>,
}

/// A metric family whose children are keyed by their exact label values.
pub(crate) struct Family<M: Child> {
    name: &'static str,
    desc: Desc,
    labels: &'static [&'static str],
    /// Positions of `labels` sorted by name (exposition order).
    order: Vec<usize>,
    /// Where the `server` label sits in a [`Key`].
    server_in_key: Option<usize>,
    opts: M::Opts,
    /// The bucket bounds as the text format writes them (histograms only).
    les: Vec<Box<str>>,
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
        let server_in_key = order
            .iter()
            .position(|&i| labels[i] == super::names::LABEL_SERVER);
        let les = M::bounds(&opts)
            .into_iter()
            .map(|bound| {
                let mut text = String::new();
                number(&mut text, bound);
                text.into_boxed_str()
            })
            .collect();
        Ok(Family {
            name,
            desc,
            labels,
            order,
            server_in_key,
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
        if let Some(entry) = read(&self.children).get(&key) {
            return entry.child.clone();
        }
        let mut children = write(&self.children);
        if let Some(entry) = children.get(&key) {
            return entry.child.clone();
        }
        let child = M::create(&self.opts);
        let mut labels = String::new();
        for (n, &i) in self.order.iter().enumerate() {
            if n > 0 {
                labels.push(',');
            }
            labels.push_str(self.labels[i]);
            labels.push_str("=\"");
            escape_label_value(&mut labels, values.get(i).copied().unwrap_or(""));
            labels.push('"');
        }
        children.insert(
            key,
            Entry {
                child: child.clone(),
                labels: labels.into(),
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
        let _guard = write(&self.children);
        f()
    }

    /// Removes every series whose `server` label is `server`; returns how many went away.
    pub(crate) fn remove_server(&self, server: &str) -> usize {
        let Some(index) = self.server_in_key else {
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

/// A family that can write itself in the text format.
pub(crate) trait Encode: Send + Sync {
    /// The metric name.
    fn name(&self) -> &'static str;
    /// Appends `# HELP`, `# TYPE` and every sample line; nothing when the family has no series.
    fn encode(&self, out: &mut String);
}

impl<M: Child> Encode for Family<M> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn encode(&self, out: &mut String) {
        let children = read(&self.children);
        if children.is_empty() {
            return;
        }
        out.push_str("# HELP ");
        out.push_str(self.name);
        out.push(' ');
        escape_help(out, &self.desc.help);
        out.push_str("\n# TYPE ");
        out.push_str(self.name);
        out.push_str(match M::KIND {
            MetricType::COUNTER => " counter\n",
            MetricType::GAUGE => " gauge\n",
            MetricType::HISTOGRAM => " histogram\n",
            MetricType::SUMMARY => " summary\n",
            MetricType::UNTYPED => " untyped\n",
        });
        for entry in children.values() {
            entry.child.encode(self.name, &entry.labels, &self.les, out);
        }
    }
}

thread_local! {
    /// Set while [`Metrics::render`](super::Metrics::render) gathers the *other* collectors of
    /// the registry: the families encode themselves, so their collectors stay silent then.
    static ENCODING_DIRECTLY: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a `Registry::gather`) with this crate's collectors silent on this thread.
pub(crate) fn without_our_collectors<R>(f: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            ENCODING_DIRECTLY.with(|flag| flag.set(false));
        }
    }
    ENCODING_DIRECTLY.with(|flag| flag.set(true));
    let _reset = Reset;
    f()
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // A panic while holding the lock cannot leave a map of metrics inconsistent: keep going.
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A shared [`Family`] as a `prometheus` collector, for anyone who gathers the registry
/// themselves (the registry takes collectors by value).
pub(crate) struct Registered<M: Child>(pub(crate) Arc<Family<M>>);

impl<M: Child> Collector for Registered<M> {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.0.desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        if ENCODING_DIRECTLY.with(Cell::get) {
            return Vec::new();
        }
        let children = read(&self.0.children);
        let mut family = MetricFamily::default();
        family.set_name(self.0.desc.fq_name.clone());
        family.set_help(self.0.desc.help.clone());
        family.set_field_type(M::KIND);
        family.set_metric(
            children
                .iter()
                .map(|(key, entry)| {
                    let labels = self
                        .0
                        .order
                        .iter()
                        .zip(key.iter())
                        .map(|(&i, value)| {
                            let mut pair = LabelPair::default();
                            pair.set_name(self.0.labels[i].to_owned());
                            pair.set_value(value.to_string());
                            pair
                        })
                        .collect();
                    entry.child.proto(labels)
                })
                .collect(),
        );
        vec![family]
    }
}

#[cfg(test)]
mod tests {
    use prometheus::{Encoder, Registry, TextEncoder};

    use super::*;

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
        assert_eq!(family.remove_server("gone"), 2);
        let mut text = String::new();
        family.encode(&mut text);
        assert_eq!(
            text,
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

    #[test]
    fn the_direct_encoding_is_byte_for_byte_what_the_text_encoder_writes() {
        let counters = Arc::new(calls());
        let histograms: Arc<Family<Histogram>> = Arc::new(
            Family::new(
                "h_seconds",
                "a \\ help\nwith a newline",
                &["server", "state"],
                Arc::from([0.005, 0.5, 1.0, 120.0]),
            )
            .unwrap(),
        );
        let gauges: Arc<Family<Gauge>> =
            Arc::new(Family::new("g", "gauge", &["server"], ()).unwrap());
        for (tool, server) in [("a\"b", "s\\1"), ("new\nline", "é🚀"), ("", "z"), ("x", "")] {
            counters.get_or_create(&[tool, server]).inc();
            counters.get_or_create(&[tool, server]).inc();
            let _ = gauges.get_or_create(&[server]);
            let h = histograms.get_or_create(&[server, "ready"]);
            h.observe(0.25);
            h.observe(1_700_000_000.125);
        }
        let values = [
            -0.0,
            0.0,
            -3.0,
            1e300,
            8.9e15,
            9.1e15,
            -1.5,
            1_700_000_063.25,
            f64::NAN,
        ];
        for (i, v) in values.into_iter().enumerate() {
            gauges.get_or_create(&[&format!("g{i}")]).set(v);
        }
        let registry = Registry::new();
        registry
            .register(Box::new(Registered(gauges.clone())))
            .unwrap();
        registry
            .register(Box::new(Registered(counters.clone())))
            .unwrap();
        registry
            .register(Box::new(Registered(histograms.clone())))
            .unwrap();
        let mut reference = Vec::new();
        TextEncoder::new()
            .encode(&registry.gather(), &mut reference)
            .unwrap();

        let mut direct = String::new();
        gauges.encode(&mut direct);
        histograms.encode(&mut direct);
        counters.encode(&mut direct);
        assert_eq!(direct, String::from_utf8(reference).unwrap());
    }
}
