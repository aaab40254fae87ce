//! The values behind each series: a few atomics per series, shared by the handles that update
//! them and the family that exposes them. Far smaller than a `prometheus` metric object (which
//! carries its own descriptor and label copies). A scrape reads each as a [`Reading`].

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use prometheus::proto::MetricType;

use crate::util::{Padded, SHARDS, ShardedCells, shard};

/// Adds `v` to the `f64` stored as bits in `cell`.
#[inline]
fn add_f64(cell: &AtomicU64, v: f64) {
    // The closure always returns `Some`, so this cannot fail.
    let _ = cell.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
        Some((f64::from_bits(bits) + v).to_bits())
    });
}

/// A counter of seconds (or any non-negative amount).
#[derive(Debug, Clone, Default)]
pub(crate) struct Counter(Arc<AtomicU64>);

impl Counter {
    /// Adds `v`; a negative or NaN `v` is ignored (a counter never goes down).
    pub(crate) fn inc_by(&self, v: f64) {
        if v > 0.0 {
            add_f64(&self.0, v);
        }
    }

    pub(crate) fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
}

/// A counter of events, sharded per thread (see [`SHARDS`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct IntCounter(Arc<[Padded<AtomicU64>; SHARDS]>);

impl IntCounter {
    #[inline]
    pub(crate) fn inc(&self) {
        self.0[shard()].0.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0
            .iter()
            .map(|cell| cell.0.load(Ordering::Relaxed))
            .sum()
    }
}

/// A gauge of any value.
#[derive(Debug, Clone, Default)]
pub(crate) struct Gauge(Arc<AtomicU64>);

impl Gauge {
    pub(crate) fn set(&self, v: f64) {
        self.0.store(v.to_bits(), Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
}

/// A gauge of whole numbers.
#[derive(Debug, Clone, Default)]
pub(crate) struct IntGauge(Arc<AtomicI64>);

impl IntGauge {
    pub(crate) fn set(&self, v: i64) {
        self.0.store(v, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
struct HistogramCells {
    bounds: Arc<[f64]>,
    /// Per shard: the sum (as `f64` bits), then one count per bound, then the `+Inf` bucket (not
    /// cumulative); each shard on cache lines of its own, all in one allocation. The sum sits next
    /// to the first buckets, so the usual observation (a wait of zero) touches one line.
    cells: ShardedCells,
}

/// A histogram with fixed bucket bounds.
#[derive(Debug, Clone)]
pub(crate) struct Histogram(Arc<HistogramCells>);

/// What a scrape reads from a histogram: cumulative bucket counts (the last is `+Inf`, which is
/// also the count) and the sum.
pub(crate) struct HistogramSnapshot {
    pub(crate) cumulative: Vec<u64>,
    pub(crate) sum: f64,
}

impl HistogramSnapshot {
    pub(crate) fn count(&self) -> u64 {
        self.cumulative.last().copied().unwrap_or(0)
    }
}

/// Where the sum sits in a shard's cells; bucket `i` is at `BUCKETS + i`.
const SUM: usize = 0;
const BUCKETS: usize = 1;

impl Histogram {
    pub(crate) fn new(bounds: Arc<[f64]>) -> Histogram {
        // The sum (0.0 is all-zero bits), the buckets and `+Inf`.
        let cells = ShardedCells::new(BUCKETS + bounds.len() + 1);
        Histogram(Arc::new(HistogramCells { bounds, cells }))
    }

    /// Counts `v` in the first bucket whose bound is at least `v` (`le` is inclusive).
    #[inline]
    pub(crate) fn observe(&self, v: f64) {
        let cells = &*self.0;
        // A linear scan, like `prometheus`: most waits are zero (cache hits) and land in the
        // first bucket; NaN lands in `+Inf`.
        let index = cells
            .bounds
            .iter()
            .position(|bound| v <= *bound)
            .unwrap_or(cells.bounds.len());
        let mine = shard();
        if let Some(bucket) = cells.cells.cell(mine, BUCKETS + index) {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(sum) = cells.cells.cell(mine, SUM) {
            add_f64(sum, v);
        }
    }

    /// The count is the `+Inf` bucket, so the two always agree; the sum of an observation in
    /// flight may show one scrape later.
    pub(crate) fn snapshot(&self) -> HistogramSnapshot {
        // Per bucket (and `+Inf`) across shards, one pass over each shard's lines.
        let mut cumulative = vec![0u64; self.0.bounds.len() + 1];
        let mut sum = 0.0;
        for shard in self.0.cells.shards() {
            for (i, cell) in shard.iter().enumerate() {
                let value = cell.load(Ordering::Relaxed);
                match i.checked_sub(BUCKETS) {
                    Some(bucket) => {
                        if let Some(count) = cumulative.get_mut(bucket) {
                            *count += value;
                        }
                    }
                    None => sum += f64::from_bits(value),
                }
            }
        }
        let mut total = 0;
        for count in &mut cumulative {
            total += *count;
            *count = total;
        }
        HistogramSnapshot { cumulative, sum }
    }
}

/// What a scrape reads from one series: the input of both outputs of a family (the text of
/// `/metrics` and the `prometheus` message of `Registry::gather`).
pub(crate) enum Reading {
    /// A counter or gauge value.
    Value(f64),
    /// A histogram's cumulative buckets and sum.
    Histogram(HistogramSnapshot),
}

/// A series value a [`Family`](super::series_family::Family) can hold.
pub(crate) trait Child: Clone + Send + Sync + 'static {
    /// What every child of the family is made from (the bucket bounds of a histogram).
    type Opts: Send + Sync + 'static;
    /// The exposition type.
    const KIND: MetricType;
    /// A new, zeroed child.
    fn create(opts: &Self::Opts) -> Self;
    /// The value now.
    fn read(&self) -> Reading;
    /// The histogram bucket bounds (none for other types).
    fn bounds(_opts: &Self::Opts) -> Vec<f64> {
        Vec::new()
    }
}

macro_rules! scalar_child {
    ($type:ty, $kind:expr) => {
        impl Child for $type {
            type Opts = ();
            const KIND: MetricType = $kind;
            fn create(_opts: &()) -> Self {
                <$type>::default()
            }
            fn read(&self) -> Reading {
                Reading::Value(self.get() as f64)
            }
        }
    };
}

scalar_child!(Counter, MetricType::COUNTER);
scalar_child!(IntCounter, MetricType::COUNTER);
scalar_child!(Gauge, MetricType::GAUGE);
scalar_child!(IntGauge, MetricType::GAUGE);

impl Child for Histogram {
    type Opts = Arc<[f64]>;
    const KIND: MetricType = MetricType::HISTOGRAM;
    fn create(bounds: &Arc<[f64]>) -> Self {
        Histogram::new(bounds.clone())
    }
    fn read(&self) -> Reading {
        Reading::Histogram(self.snapshot())
    }
    fn bounds(bounds: &Arc<[f64]>) -> Vec<f64> {
        bounds.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_on_a_bound_counts_in_that_bucket_and_above() {
        let h = Histogram::new(Arc::from([0.5, 1.0]));
        h.observe(0.5);
        h.observe(0.75);
        h.observe(7.0);
        let s = h.snapshot();
        assert_eq!(s.cumulative, [1, 2, 3]);
        assert_eq!(s.count(), 3);
        assert_eq!(s.sum, 8.25);
    }

    #[test]
    fn observations_from_many_threads_all_count() {
        let h = Histogram::new(Arc::from([1.0]));
        let c = IntCounter::default();
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    for _ in 0..1000 {
                        h.observe(0.5);
                        c.inc();
                    }
                });
            }
        });
        let s = h.snapshot();
        assert_eq!((s.count(), s.cumulative[0], s.sum), (8000, 8000, 4000.0));
        assert_eq!(c.get(), 8000);
    }

    #[test]
    fn counters_never_go_down() {
        let c = Counter::default();
        c.inc_by(1.5);
        c.inc_by(-3.0);
        c.inc_by(f64::NAN);
        assert_eq!(c.get(), 1.5);
    }
}
