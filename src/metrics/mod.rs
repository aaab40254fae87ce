//! Prometheus metrics: every metric of DESIGN.md's table, recorded by [`Metrics`] over a
//! `prometheus::Registry` and served on `/metrics`.
//!
//! - [`names`]: the metric and label names and the histogram buckets (a contract; never change).
//! - [`Metrics`]: the recorder. The layer records resolutions, calls and operation durations; the
//!   supervisor's events ([`EventSink`](crate::EventSink)) drive the one-hot server state and the
//!   connect series. Handles ([`ServerMetrics`], [`ToolMetrics`]) are resolved once, so recording
//!   on the hot path is an atomic add with no label hashing.
//! - [`serve`] / [`app`]: `GET /metrics` (text format 0.0.4), `GET /` the live status page
//!   ([`Metrics::status_page`]), 404 elsewhere, on [`DEFAULT_LISTEN`] (`127.0.0.1:9464`) by
//!   default. [`router`] has `/metrics` and `/status`, to merge into your own axum app.
//!
//! # Cardinality
//!
//! The `tool` label is capped ([`MetricsBuilder::tool_cap`], default 256 distinct values
//! process-wide); later tool names are counted as `tool="other"`. Servers that were never
//! configured (named only by callers) are capped the same way
//! ([`MetricsBuilder::unconfigured_server_cap`]). A removed server's series go away.
//!
//! # Label values
//!
//! Series are keyed by their exact label values (not by a hash of the values written back to
//! back, as `prometheus::MetricVec` does, which would merge `{server="a",tool="bc"}` with
//! `{server="ab",tool="c"}`), and values are escaped per the exposition format.

mod cap;
mod clock;
mod events;
mod families;
mod family;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod listener;
pub mod names;
mod recorder;
mod server;
mod status;
mod status_page;
mod value;

pub use clock::{Clock, ManualClock, SystemClock};
#[cfg(feature = "http")]
pub use http::{
    CONTENT_TYPE, DEFAULT_LISTEN, METRICS_PATH, MetricsServer, STATUS_PATH, ServeError, app,
    router, serve,
};
// Defined with the shared vocabulary in `state`; re-exported here, where it labels the series.
pub use crate::state::CallOutcome;
pub use recorder::{
    DEFAULT_TOOL_CAP, DEFAULT_UNCONFIGURED_SERVER_CAP, Metrics, MetricsBuilder, MetricsError,
};
pub use server::{ServerMetrics, ToolMetrics};
pub use status_page::STATUS_REFRESH_SECONDS;
