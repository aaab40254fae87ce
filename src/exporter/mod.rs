//! The exporter: what takes the metrics out of the process. With feature `http`, `GET /metrics`, the text exposition of a
//! [`Metrics`](crate::metrics::Metrics), and `GET /status`, the live status page (one row per
//! server with its state, `action`, reason, time in state, tools and connect history;
//! server-rendered HTML, no assets from the network), `GET /status.json`, the page's facts as
//! one JSON object ([`status_json`]), and `GET /events`, each readiness change as Server-Sent
//! Events (the stream of [`Metrics::state_changes`](crate::metrics::Metrics::state_changes)).
//!
//! One set of paths everywhere, and two ways to serve them:
//!
//! - [`router`]: `/metrics`, `/status`, `/status.json` and `/events` as an axum `Router` to merge into your own application;
//!   `/` and every other path stay yours.
//! - [`serve`]: the standalone server on an address ([`DEFAULT_LISTEN`], `127.0.0.1:9464`, unless
//!   told otherwise), what `mcp-readiness serve` and `demo` run: the same router, `GET /`
//!   redirecting to `/status` (`307`), 404 elsewhere, with a header-read timeout, an idle timeout
//!   and a connection cap.
//!
//! With feature `hub`, [`probe_router`] adds `GET /probe?target=URL` (see
//! [`probe`](crate::probe)), and [`serve_with_probe`] serves it beside the rest.
//!
//! [`status_page`] renders the page itself.
//!
//! With feature `hub`, [`push`] sends a short run's record to a Prometheus Pushgateway (the
//! Pushgateway client; its metric names are `metrics::names::RUN_*`).
//!
//! - `routes.rs`: the paths and their handlers; `standalone_server.rs`: [`serve`] and the running
//!   [`MetricsServer`]; `accept_loop.rs`: the timeouts and the connection cap;
//!   `scrape_cache.rs`: concurrent scrapes share one render (and its gzip); `status_html.rs`: the
//!   page; `status_json.rs`: `/status.json`; `events_route.rs`: `/events`;
//!   `probe_route.rs`: `/probe`; `push.rs`: the Pushgateway client.

#[cfg(feature = "http")]
mod accept_loop;
#[cfg(feature = "http")]
mod events_route;
#[cfg(all(feature = "http", feature = "hub"))]
mod probe_route;
#[cfg(feature = "hub")]
mod push;
#[cfg(feature = "http")]
mod routes;
#[cfg(feature = "http")]
mod scrape_cache;
#[cfg(feature = "http")]
mod standalone_server;
#[cfg(feature = "http")]
mod status_html;
#[cfg(feature = "http")]
mod status_json;

#[cfg(feature = "http")]
pub use events_route::EVENTS_PATH;
#[cfg(all(feature = "http", feature = "hub"))]
pub use probe_route::{PROBE_PATH, SCRAPE_TIMEOUT_HEADER, probe_router};
#[cfg(feature = "hub")]
pub use push::{PushError, PushTarget, push, run_record_text};
#[cfg(feature = "http")]
pub use routes::{CONTENT_TYPE, DEFAULT_LISTEN, METRICS_PATH, STATUS_PATH, router};
#[cfg(all(feature = "http", feature = "hub"))]
pub use standalone_server::serve_with_probe;
#[cfg(feature = "http")]
pub use standalone_server::{MetricsServer, ServeError, serve};
#[cfg(feature = "http")]
pub use status_html::{STATUS_REFRESH_SECONDS, status_page};
#[cfg(feature = "http")]
pub use status_json::{STATUS_JSON_PATH, status_json};
