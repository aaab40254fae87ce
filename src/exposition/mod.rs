//! The exposition engine behind `Metrics`: the storage of metric
//! families and its two outputs. It knows no metric of this crate by name (the families of
//! DESIGN.md's table are declared in `metrics/domain_families.rs`) and nothing of HTTP (the
//! exporter serves what it writes).
//!
//! - `series_values.rs`: the value of one series (counters, gauges, histograms: a few atomics).
//! - `series_family.rs`: one family's storage of its series, keyed by their exact label values.
//! - `text_encoder.rs`: a family as exposition text (the only text encoder of this crate).
//! - `proto_collector.rs`: a family as `prometheus` messages, for a service's own registry.
//! - `render_merge.rs`: the text of a whole registry: our families and its other collectors,
//!   merged by name.
//! - `label_cap.rs`: a cap on the distinct values of one label.

mod label_cap;
mod proto_collector;
mod render_merge;
mod series_family;
mod series_values;
mod text_encoder;

pub(crate) use label_cap::LabelCap;
pub(crate) use proto_collector::{Owner, collector_for};
pub(crate) use render_merge::render_merged;
pub(crate) use series_family::Family;
pub(crate) use series_values::{Child, Counter, Gauge, Histogram, IntCounter, IntGauge};
pub(crate) use text_encoder::Encode;
