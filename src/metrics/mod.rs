//! Prometheus metrics: every metric of DESIGN.md's table, recorded by [`Metrics`] over a
//! `prometheus::Registry`. The `exporter` module (feature `http`) serves them on `/metrics`,
//! beside the status page.
//!
//! - [`names`]: the metric and label names and the histogram buckets (a contract; never change).
//! - [`Metrics`]: the recorder, set up with [`MetricsBuilder`]. The supervisor's events
//!   ([`EventSink`](crate::state::EventSink)) drive the one-hot server state and the connect series;
//!   [`Metrics::render`] writes the text exposition.
//! - [`Metrics::state_changes`]: the readiness changes as a stream for subscribers in the process
//!   ([`StateChanges`]; the exporter's `GET /events` serves the same stream over HTTP).
//! - The handles, the one way to record a resolution, a call or an operation: [`Metrics::server`]
//!   gives a server's [`ServerMetrics`] (resolutions, wait budget) and [`ServerMetrics::tool`] a
//!   tool's [`ToolMetrics`] (calls, absent tools, operations). They are resolved once, so
//!   recording on the hot path is an atomic add with no label hashing; the layer keeps them per
//!   tool.
//! - `push` (feature `hub`): a run's record to a Prometheus Pushgateway, now in the `exporter`
//!   module (`exporter::push`) and still named here.
//! - Feature `otel-metrics`: the same metrics through the OpenTelemetry metrics API, on the
//!   `Meter` given to `MetricsBuilder::meter` (`metrics::otel_names` says what each instrument is called),
//!   exported over OTLP by `telemetry::init_metrics` (with `otlp-grpc` or `otlp-http`).
//!
//! # Cardinality
//!
//! The `tool` label is capped ([`MetricsBuilder::tool_cap`], default 256 distinct values
//! process-wide); later tool names are counted as `tool="other"`. Servers that were never
//! configured (named only by callers) are capped the same way
//! ([`MetricsBuilder::unconfigured_server_cap`]). A removed server's series go away.
//!
//! # One storage, one text encoder
//!
//! Each family keeps one storage of its series, keyed by their exact label values, and two
//! outputs read it: a text encoder writes the exposition text of `/metrics` (the only text
//! encoder of this crate), and a collector builds `prometheus::proto::MetricFamily` messages for
//! a service's own `prometheus::Registry` (the crate's private `exposition` module holds the
//! storage and both outputs). Which one [`Metrics::render`] uses is decided once, by who made the
//! registry, never by inspecting it:
//!
//! - the recorder's own ([`Metrics::new`]): the registry only reserves this crate's names;
//!   `render` writes our families from storage and the registry's other collectors (yours) with
//!   `prometheus::TextEncoder`, merged by name;
//! - yours ([`MetricsBuilder::registry`]): every family is a collector in it, so it gathers them
//!   all with its prefix and common labels; `render` writes what it gathers with `TextEncoder`.
//!
//! # Why not `prometheus::MetricVec`
//!
//! `MetricVec` finds a series by an FNV hash of its label values written back to back, so
//! `{server="a",tool="bc"}` and `{server="ab",tool="c"}` are one series (and any two label sets
//! whose 64-bit hashes collide are too); server and tool names come from configuration and from
//! callers, so here series are keyed by the values themselves and distinct label sets are always
//! distinct series. Its children also each carry a descriptor and label copies, and gathering
//! builds and sorts a message per series (about 100 ms for a 1,000-server fleet): here a series
//! is a few atomics behind handles resolved once, with its label text escaped once, and the
//! values are escaped per the exposition format.

mod builder;
mod clock;
mod domain_families;
mod events;
pub mod names;
#[cfg(feature = "otel-metrics")]
mod otel_connection;
#[cfg(feature = "otel-metrics")]
mod otel_instruments;
#[cfg(feature = "otel-metrics")]
pub mod otel_names;
pub(crate) mod recorder;
mod server_handle;
mod state_changes;
mod status_board;
mod tool_handle;

pub use builder::{
    DEFAULT_SCRAPE_MAX_AGE, DEFAULT_TOOL_CAP, DEFAULT_UNCONFIGURED_SERVER_CAP, MetricsBuilder,
    MetricsError,
};
pub use clock::{Clock, ManualClock, SystemClock};
#[cfg(feature = "hub")]
pub(crate) use domain_families::Families;
pub(crate) use recorder::Metrics;
pub use server_handle::ServerMetrics;
pub use state_changes::{CHANGE_BUFFER, CHANGE_HISTORY, ChangeEvent, StateChange, StateChanges};
#[cfg(all(test, feature = "http"))]
pub(crate) use status_board::ConnectRecord;
#[cfg(feature = "http")]
pub(crate) use status_board::ServerRow;
pub use tool_handle::ToolMetrics;
