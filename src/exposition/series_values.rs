//! The values behind each series: a few atomics per series, shared by the handles that update
//! them and the family that exposes them. Far smaller than a `prometheus` metric object (which
//! carries its own descriptor and label copies). A scrape reads each as a [`Reading`].

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus::proto::MetricType;

use crate::ready_path::{Padded, SHARDS, ShardedCells, shard};

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

/// A counter of events, sharded per thread (see [`SHARDS`]). It may also count the observations
/// of one histogram ([`IntCounter::counts`]): one atomic add then serves both series.
#[derive(Debug, Clone, Default)]
pub(crate) struct IntCounter(Arc<IntCounterCells>);

#[derive(Debug, Default)]
struct IntCounterCells {
    shards: [Padded<CounterShard>; SHARDS],
}

/// One shard of an [`IntCounter`]: its count, and (used in the first shard only, where it fits in
/// the cache line's padding, so a counter is no bigger for it) the histogram whose own
/// observations the counter also counts.
#[derive(Debug, Default)]
struct CounterShard {
    count: AtomicU64,
    counted: OnceLock<Histogram>,
}

impl IntCounterCells {
    fn counted(&self) -> &OnceLock<Histogram> {
        &self.shards[0].0.counted
    }
}

impl IntCounter {
    #[inline]
    pub(crate) fn inc(&self) {
        self.0.shards[shard()]
            .0
            .count
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `n` at once (a count kept elsewhere, e.g. a probe's history of attempts).
    #[cfg_attr(not(feature = "hub"), allow(dead_code))]
    pub(crate) fn inc_by(&self, n: u64) {
        self.0.shards[shard()]
            .0
            .count
            .fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        let own: u64 = self
            .0
            .shards
            .iter()
            .map(|cell| cell.0.count.load(Ordering::Relaxed))
            .sum();
        own + self.0.counted().get().map_or(0, Histogram::own_count)
    }

    /// Whether this counter counts `histogram`'s own observations (linking them if it counts
    /// none yet): then [`Histogram::observe`] counts one here too, and an observation that is not
    /// an event of this counter goes to [`Histogram::uncounted`]. Both values only grow, so the
    /// sum never goes down.
    #[inline]
    pub(crate) fn counts(&self, histogram: &Histogram) -> bool {
        Arc::ptr_eq(
            &self.0.counted().get_or_init(|| histogram.clone()).0,
            &histogram.0,
        )
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
    /// The bounds in whole nanoseconds: an observation is a [`Duration`], compared as an integer.
    bounds_nanos: Box<[u64]>,
    /// Per shard: the sum (in nanoseconds), then one count per bound, then the `+Inf` bucket (not
    /// cumulative); each shard on cache lines of its own, all in one allocation. The sum sits next
    /// to the first buckets, so the usual observation (a wait of zero) touches one line.
    cells: ShardedCells,
    /// Observations a counter that counts this histogram's must not count (see
    /// [`IntCounter::counts`]); merged into every reading.
    uncounted: OnceLock<Histogram>,
}

/// A histogram of durations with fixed bucket bounds (in seconds, as exposed).
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

/// Nanoseconds in a second.
const NANOS_PER_SECOND: f64 = 1e9;

impl Histogram {
    pub(crate) fn new(bounds: Arc<[f64]>) -> Histogram {
        // The sum (0.0 is all-zero bits), the buckets and `+Inf`.
        let cells = ShardedCells::new(BUCKETS + bounds.len() + 1);
        // `as` saturates (an infinite bound is `u64::MAX`) and maps NaN to 0.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let bounds_nanos = bounds
            .iter()
            .map(|bound| (bound * NANOS_PER_SECOND).round() as u64)
            .collect();
        Histogram(Arc::new(HistogramCells {
            bounds,
            bounds_nanos,
            cells,
            uncounted: OnceLock::new(),
        }))
    }

    /// Where observations go that a counter counting this histogram's (see
    /// [`IntCounter::counts`]) must not count: read together with this one.
    pub(crate) fn uncounted(&self) -> &Histogram {
        self.0
            .uncounted
            .get_or_init(|| Histogram::new(self.0.bounds.clone()))
    }

    /// The observations made on this histogram itself (not on [`Histogram::uncounted`]).
    fn own_count(&self) -> u64 {
        self.0
            .cells
            .shards()
            .flat_map(|shard| shard.iter().skip(BUCKETS))
            .map(|cell| cell.load(Ordering::Relaxed))
            .sum()
    }

    /// Counts `d` in the first bucket whose bound is at least `d` (`le` is inclusive). Two atomic
    /// adds: the bucket and the sum, kept in whole nanoseconds (exact, and no compare-and-swap
    /// loop as an `f64` sum needs).
    #[inline]
    pub(crate) fn observe(&self, d: Duration) {
        self.observe_nanos(crate::util::nanos(d));
    }

    /// [`Histogram::observe`] for a duration in nanoseconds.
    #[inline]
    pub(crate) fn observe_nanos(&self, nanos: u64) {
        let cells = &*self.0;
        // A linear scan, like `prometheus`: most waits are zero (cache hits) and land in the
        // first bucket.
        let index = cells
            .bounds_nanos
            .iter()
            .position(|bound| nanos <= *bound)
            .unwrap_or(cells.bounds_nanos.len());
        let mine = shard();
        if let Some(bucket) = cells.cells.cell(mine, BUCKETS + index) {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(sum) = cells.cells.cell(mine, SUM) {
            sum.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// The count is the `+Inf` bucket, so the two always agree; the sum of an observation in
    /// flight may show one scrape later.
    pub(crate) fn snapshot(&self) -> HistogramSnapshot {
        let mut cumulative = vec![0u64; self.0.bounds.len() + 1];
        let mut sum = self.add_own(&mut cumulative);
        if let Some(uncounted) = self.0.uncounted.get() {
            sum += uncounted.add_own(&mut cumulative);
        }
        let mut total = 0;
        for count in &mut cumulative {
            total += *count;
            *count = total;
        }
        #[allow(clippy::cast_precision_loss)]
        let sum = sum as f64 / NANOS_PER_SECOND;
        HistogramSnapshot { cumulative, sum }
    }

    /// Adds this histogram's own bucket counts (not cumulative) to `counts`; returns its sum in
    /// nanoseconds.
    fn add_own(&self, counts: &mut [u64]) -> u64 {
        // Per bucket (and `+Inf`) across shards, one pass over each shard's lines.
        let mut sum = 0u64;
        for shard in self.0.cells.shards() {
            for (i, cell) in shard.iter().enumerate() {
                let value = cell.load(Ordering::Relaxed);
                match i.checked_sub(BUCKETS) {
                    Some(bucket) => {
                        if let Some(count) = counts.get_mut(bucket) {
                            *count += value;
                        }
                    }
                    None => sum = sum.saturating_add(value),
                }
            }
        }
        sum
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
        h.observe(Duration::from_millis(500));
        h.observe(Duration::from_millis(750));
        h.observe(Duration::from_secs(7));
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
                        h.observe(Duration::from_millis(500));
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
    fn a_counter_that_counts_a_histogram_counts_its_observations_but_not_the_uncounted_ones() {
        let (h, c, other) = (
            Histogram::new(Arc::from([1.0])),
            IntCounter::default(),
            Histogram::new(Arc::from([1.0])),
        );
        assert!(c.counts(&h));
        assert!(c.counts(&h), "linked once, for good");
        assert!(!c.counts(&other), "one histogram per counter");
        h.observe(Duration::from_millis(500));
        h.uncounted().observe(Duration::from_secs(2));
        c.inc();
        assert_eq!(c.get(), 2, "one counted observation and one own event");
        let s = h.snapshot();
        assert_eq!((s.cumulative.as_slice(), s.sum), ([1, 2].as_slice(), 2.5));
    }

    #[test]
    fn a_counter_is_one_cache_line_per_shard_link_included() {
        assert_eq!(size_of::<IntCounterCells>(), SHARDS * 64);
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
