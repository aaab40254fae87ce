//! The exporter's routes: `GET /metrics` in the text format 0.0.4 (gzipped when accepted;
//! concurrent scrapes share one render), `GET /status` the live status page, `GET /status.json`
//! and `GET /events` (see `status_json.rs`, `events_route.rs`), in [`router`]
//! and, with `/` and 404 added, in the standalone server.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use super::events_route::EVENTS_PATH;
use super::scrape_cache::{ScrapeCache, accepts_gzip};
use super::status_json::STATUS_JSON_PATH;
use crate::metrics::Metrics;

/// Where the endpoint listens unless told otherwise: loopback only, the port OpenTelemetry's
/// Prometheus exporter uses.
pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9464));

/// The path of the exposition.
pub const METRICS_PATH: &str = "/metrics";

/// The `Content-Type` of the text exposition format 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The path of the status page, in [`router`] and in the standalone server (whose `/` redirects
/// here).
pub const STATUS_PATH: &str = "/status";

/// A router with `GET /metrics`, `GET /status` (the live status page), `GET /status.json` (its
/// facts for programs) and `GET /events` (each readiness change as Server-Sent Events), to merge
/// into your own axum application: it leaves `/` and every other path to you. [`serve`](super::serve) serves
/// this router on its own.
///
/// ```
/// use axum::{Router, routing::get};
/// use mcp_readiness::exporter;
/// use mcp_readiness::Metrics;
///
/// let metrics = Metrics::new();
/// let app: Router = Router::new()
///     .route("/healthz", get(|| async { "ok" }))
///     .merge(exporter::router(metrics));
/// ```
pub fn router(metrics: Metrics) -> Router {
    routes().with_state(AppState::new(metrics))
}

/// What the handlers share: the recorder and the render that concurrent scrapes share.
#[derive(Clone)]
struct AppState {
    metrics: Metrics,
    cache: Arc<ScrapeCache>,
}

impl AppState {
    fn new(metrics: Metrics) -> Self {
        AppState {
            metrics,
            cache: Arc::default(),
        }
    }
}

impl FromRef<AppState> for Metrics {
    fn from_ref(state: &AppState) -> Metrics {
        state.metrics.clone()
    }
}

fn routes() -> Router<AppState> {
    Router::new()
        .route(METRICS_PATH, get(scrape))
        .route(STATUS_PATH, get(status))
        .route(STATUS_JSON_PATH, get(status_json))
        .route(EVENTS_PATH, get(super::events_route::events))
}

/// The standalone server's application: [`router`], `GET /` redirecting to the status page, 404
/// elsewhere.
pub(crate) fn standalone(metrics: Metrics) -> Router {
    router(metrics).route("/", get(landing)).fallback(|| async {
        (
            StatusCode::NOT_FOUND,
            "not found: try /status, /status.json, /events or /metrics\n",
        )
    })
}

/// `GET /` of the standalone server: to the status page (`307`), with a line for clients that do
/// not follow redirects.
async fn landing() -> Response {
    (
        StatusCode::TEMPORARY_REDIRECT,
        [
            (header::LOCATION, STATUS_PATH),
            (header::CACHE_CONTROL, "no-store"),
        ],
        "the status page is at /status, the metrics at /metrics\n",
    )
        .into_response()
}

async fn status_json(State(metrics): State<Metrics>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        super::status_json(&metrics),
    )
        .into_response()
}

async fn status(State(metrics): State<Metrics>) -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        Html(super::status_page(&metrics)),
    )
        .into_response()
}

/// `GET /metrics`: the shared render (see `scrape_cache.rs`), gzipped when the scraper accepts
/// it. The text format 0.0.4 is the only one served: a scraper that asks for OpenMetrics
/// (`Accept: application/openmetrics-text`) gets it too, with its own `Content-Type`, which
/// Prometheus and every OpenMetrics parser accept as the fallback.
async fn scrape(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let gzip = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(accepts_gzip);
    let max_age = state.metrics.scrape_max_age();
    let rendered = match state.cache.get(&state.metrics, max_age).await {
        Ok(rendered) => rendered,
        Err(error) => {
            tracing::error!(%error, "rendering /metrics failed");
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "rendering metrics failed; see the exporter's log\n",
            )
                .into_response();
        }
    };
    let vary = (header::VARY, "accept-encoding");
    if !gzip {
        return (
            [(header::CONTENT_TYPE, CONTENT_TYPE), vary],
            rendered.text(),
        )
            .into_response();
    }
    // Compressing a large fleet takes milliseconds too; the first gzip scrape of a render does it.
    match tokio::task::spawn_blocking(move || rendered.gzip()).await {
        Ok(body) => (
            [
                (header::CONTENT_TYPE, CONTENT_TYPE),
                (header::CONTENT_ENCODING, "gzip"),
                vary,
            ],
            body,
        )
            .into_response(),
        Err(error) => {
            tracing::error!(%error, "compressing /metrics failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "compressing metrics failed; see the exporter's log\n",
            )
                .into_response()
        }
    }
}
