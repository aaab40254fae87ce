//! Prometheus metrics: every metric of DESIGN.md's table, recorded by [`Metrics`] over a
//! `prometheus::Registry` and served on `/metrics`.
//!
//! - [`names`]: the metric and label names and the histogram buckets (a contract; never change).
//! - [`Metrics`]: the recorder. The layer records resolutions, calls and operation durations; the
//!   supervisor's events ([`EventSink`](crate::state::EventSink)) drive the one-hot server state and the
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
//! # One storage, one text encoder
//!
//! Each family (`family.rs`) keeps one storage of its series, keyed by their exact label values,
//! and two outputs read it: `text.rs` writes the exposition text of `/metrics` (the only text
//! encoder of this crate), and `collector.rs` builds `prometheus::proto::MetricFamily` messages
//! for a service's own `prometheus::Registry`. Which one [`Metrics::render`] uses is decided once,
//! by who made the registry, never by inspecting it:
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
mod cap;
mod clock;
mod collector;
mod events;
mod families;
mod family;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod listener;
pub mod names;
#[cfg(feature = "hub")]
mod push;
mod recorder;
mod render;
#[cfg(feature = "http")]
mod scrape;
mod server;
mod status;
mod status_page;
mod text;
mod tool;
mod value;

pub use builder::{
    DEFAULT_SCRAPE_MAX_AGE, DEFAULT_TOOL_CAP, DEFAULT_UNCONFIGURED_SERVER_CAP, MetricsBuilder,
    MetricsError,
};
pub use clock::{Clock, ManualClock, SystemClock};
#[cfg(feature = "http")]
pub use http::{
    CONTENT_TYPE, DEFAULT_LISTEN, METRICS_PATH, MetricsServer, STATUS_PATH, ServeError, app,
    router, serve,
};
#[cfg(feature = "hub")]
pub use push::{
    PushError, PushTarget, RUN_RAN_STEPS, RUN_SERVERS, RUN_STEPS, RUN_TIMESTAMP_SECONDS, push,
    run_record_text,
};
pub use recorder::Metrics;
pub use server::ServerMetrics;
pub use status_page::STATUS_REFRESH_SECONDS;
pub use tool::ToolMetrics;
