//! The `/metrics` endpoint: `GET /metrics` in the text format 0.0.4 (gzipped when accepted;
//! concurrent scrapes share one render), `GET /` (and `/status`) the
//! live status page, 404 elsewhere.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::recorder::Metrics;
use super::scrape::{ScrapeCache, accepts_gzip};

/// Where the endpoint listens unless told otherwise: loopback only, the port OpenTelemetry's
/// Prometheus exporter uses.
pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9464));

/// The path of the exposition.
pub const METRICS_PATH: &str = "/metrics";

/// The `Content-Type` of the text exposition format 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The path of the status page in [`router`] (the standalone [`app`] also serves it on `/`).
pub const STATUS_PATH: &str = "/status";

/// A router with `GET /metrics` and `GET /status` (the live status page), to merge into your own
/// axum application (it leaves `/` to you):
///
/// ```
/// use axum::{Router, routing::get};
/// use mcp_readiness::metrics::{self, Metrics};
///
/// let metrics = Metrics::new();
/// let app: Router = Router::new()
///     .route("/healthz", get(|| async { "ok" }))
///     .merge(metrics::router(metrics));
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
}

/// The standalone application: `/metrics`, the status page on `/` and `/status`, 404 elsewhere.
pub fn app(metrics: Metrics) -> Router {
    routes()
        .route("/", get(status))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found: try / or /metrics\n") })
        .with_state(AppState::new(metrics))
}

async fn status(State(metrics): State<Metrics>) -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        Html(metrics.status_page()),
    )
        .into_response()
}

/// `GET /metrics`: the shared render (see `scrape.rs`), gzipped when the scraper accepts it. The
/// text format 0.0.4 is the only one served: a scraper that asks for OpenMetrics
/// (`Accept: application/openmetrics-text`) gets it too, with its own `Content-Type`, which
/// Prometheus and every OpenMetrics parser accept as the fallback.
async fn scrape(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let gzip = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(accepts_gzip);
    let max_age = state.metrics.inner.scrape_max_age;
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

/// Why the endpoint could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address could not be bound.
    #[error(
        "could not listen on {addr} ({source}): choose another address (e.g. --listen 127.0.0.1:0) or stop the process using it"
    )]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's answer.
        #[source]
        source: io::Error,
    },
    /// The server failed while running.
    #[error("the /metrics server on {addr} failed ({source}); restart it")]
    Serve {
        /// The address it listened on.
        addr: SocketAddr,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
}

/// A running `/metrics` endpoint. [`MetricsServer::shutdown`] stops it gracefully (requests in
/// flight finish); dropping the handle stops it too.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl fmt::Debug for MetricsServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsServer")
            .field("addr", &self.addr)
            .finish()
    }
}

/// Serves [`app`] on `addr` (use [`DEFAULT_LISTEN`] for the default, port 0 for any free port)
/// on the current tokio runtime.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_readiness::metrics::{self, Metrics};
///
/// let server = metrics::serve(Metrics::new(), metrics::DEFAULT_LISTEN).await?;
/// tracing::info!("metrics on http://{}/metrics", server.local_addr());
/// server.shutdown().await?;
/// # Ok(()) }
/// ```
pub async fn serve(metrics: Metrics, addr: SocketAddr) -> Result<MetricsServer, ServeError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    if !bound.ip().is_loopback() {
        tracing::warn!(
            target: "mcp_readiness::metrics",
            "/metrics listens on {bound}, which other machines can reach: it shows server names, \
             states and reasons to anyone who can connect; listen on 127.0.0.1 unless a firewall \
             or a proxy limits who can"
        );
    }
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        // Header-read and idle timeouts and a connection cap: see `listener.rs`.
        let (halt, halted) = tokio::sync::watch::channel(false);
        let run = super::listener::run(listener, app(metrics), halted);
        tokio::pin!(run);
        tokio::select! {
            result = &mut run => result,
            // Either an explicit shutdown or the handle being dropped.
            _ = stopped => {
                let _ = halt.send(true);
                run.await
            }
        }
    });
    Ok(MetricsServer {
        addr: bound,
        stop: Some(stop),
        task: Some(task),
    })
}

impl MetricsServer {
    /// The address actually bound (the real port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting connections, lets requests in flight finish, and waits for the server.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(task) = self.task.take() else {
            return Ok(());
        };
        match task.await {
            Ok(result) => result.map_err(|source| ServeError::Serve {
                addr: self.addr,
                source,
            }),
            Err(join) => Err(ServeError::Serve {
                addr: self.addr,
                source: io::Error::other(join.to_string()),
            }),
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
