//! The second output of a family's storage: `prometheus` messages, so that a service's own
//! `prometheus::Registry` gathers every family of this crate (with its prefix and common labels,
//! and encoded by whatever encoder the service uses).
//!
//! This is not a second text encoder: it builds `MetricFamily` messages from the same storage and
//! [`Reading`]s the text output uses, and the text of such a registry is written by
//! `prometheus::TextEncoder`.

use std::sync::Arc;

use prometheus::core::{Collector, Desc};
use prometheus::proto::{self, LabelPair, MetricFamily};

use super::series_family::Family;
use super::series_values::{Child, Reading};

/// A shared [`Family`] as a `prometheus` collector (a registry takes collectors by value).
pub(crate) struct FamilyCollector<M: Child>(pub(crate) Arc<Family<M>>);

impl<M: Child> Collector for FamilyCollector<M> {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.0.desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let family = &*self.0;
        let names: Vec<&'static str> = family.label_names().collect();
        let series = family.series();
        let mut message = MetricFamily::default();
        message.set_name(family.desc.fq_name.clone());
        message.set_help(family.desc.help.clone());
        message.set_field_type(M::KIND);
        message.set_metric(
            series
                .iter()
                .map(|(key, entry)| {
                    let labels = names
                        .iter()
                        .zip(key.iter())
                        .map(|(name, value)| {
                            let mut pair = LabelPair::default();
                            pair.set_name((*name).to_owned());
                            pair.set_value(value.to_string());
                            pair
                        })
                        .collect();
                    metric(M::KIND, &family.bounds, entry.child.read(), labels)
                })
                .collect(),
        );
        vec![message]
    }
}

/// One series as a `prometheus` message.
fn metric(
    kind: proto::MetricType,
    bounds: &[f64],
    reading: Reading,
    labels: Vec<LabelPair>,
) -> proto::Metric {
    let mut metric = proto::Metric::from_label(labels);
    match reading {
        Reading::Value(value) if kind == proto::MetricType::COUNTER => {
            let mut counter = proto::Counter::default();
            counter.set_value(value);
            metric.set_counter(counter);
        }
        Reading::Value(value) => {
            let mut gauge = proto::Gauge::default();
            gauge.set_value(value);
            metric.set_gauge(gauge);
        }
        Reading::Histogram(snapshot) => {
            let mut histogram = proto::Histogram::default();
            histogram.set_sample_count(snapshot.count());
            histogram.set_sample_sum(snapshot.sum);
            histogram.set_bucket(
                bounds
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
            metric.set_histogram(histogram);
        }
    }
    metric
}

/// A family's name held in a registry this crate made itself (`Metrics::new`): a collector of
/// that name cannot be registered beside it, but it yields nothing when gathered, because the
/// render writes the family from its storage (see [`render_merged`](super::render_merged)).
pub(crate) struct Reserved(pub(crate) Desc);

impl Collector for Reserved {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.0]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        Vec::new()
    }
}

/// Whose registry the families are registered in: fixed when the recorder is built, and what
/// decides how a render writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The recorder made the registry (`Metrics::new`): the families' names are reserved in it,
    /// and the render writes the families from their storage.
    Recorder,
    /// The service passed its own (`MetricsBuilder::registry`): every family is a collector in
    /// it, and the render encodes what the registry gathers.
    Service,
}

/// A shared family as the collector a registry of `owner` holds: its reserved name in the
/// recorder's own registry, the family itself in a service's.
pub(crate) fn collector_for<M: Child>(family: &Arc<Family<M>>, owner: Owner) -> Box<dyn Collector> {
    match owner {
        Owner::Recorder => Box::new(Reserved(family.desc.clone())),
        Owner::Service => Box::new(FamilyCollector(family.clone())),
    }
}
