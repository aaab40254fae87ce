//! The standalone exporter: [`serve`] binds an address and serves [`router`](super::router)
//! there, with `/` sending browsers to the status page and 404 elsewhere, behind the accept
//! loop's timeouts and connection cap; [`MetricsServer`] is the running server.

use std::fmt;
use std::io;
use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::metrics::Metrics;

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

/// Serves the exporter on `addr` (use [`DEFAULT_LISTEN`](super::DEFAULT_LISTEN) for the default,
/// port 0 for any free port) on the current tokio runtime: [`router`](super::router)'s
/// `GET /metrics` and `GET /status`, `GET /` redirecting to `/status` (`307`, with a line of text
/// naming both paths for clients that do not follow redirects), 404 elsewhere.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_readiness::exporter;
/// use mcp_readiness::Metrics;
///
/// let server = exporter::serve(Metrics::new(), exporter::DEFAULT_LISTEN).await?;
/// tracing::info!("metrics on http://{}/metrics", server.local_addr());
/// server.shutdown().await?;
/// # Ok(()) }
/// ```
pub async fn serve(metrics: Metrics, addr: SocketAddr) -> Result<MetricsServer, ServeError> {
    serve_app(super::routes::standalone(metrics), addr).await
}

/// [`serve`], with `GET /probe` answered by `prober` (see [`probe`](crate::probe)); a
/// [`Prober::disabled`](crate::probe::Prober::disabled) answers it `404`, and
/// [`Prober::reconfigure`](crate::probe::Prober::reconfigure) turns it on or off while the server
/// runs. Probes share the connection cap with `/metrics` but never hold more than
/// `2 × max_in_flight` connections (the rest are answered `503` at once), so a storm of probes
/// does not keep `/metrics` waiting.
#[cfg(feature = "hub")]
pub async fn serve_with_probe(
    metrics: Metrics,
    prober: crate::probe::Prober,
    addr: SocketAddr,
) -> Result<MetricsServer, ServeError> {
    let app = super::probe_router(prober).merge(super::routes::standalone(metrics));
    serve_app(app, addr).await
}

async fn serve_app(app: axum::Router, addr: SocketAddr) -> Result<MetricsServer, ServeError> {
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
        // Header-read and idle timeouts and a connection cap: see `accept_loop.rs`.
        let (halt, halted) = tokio::sync::watch::channel(false);
        let run = super::accept_loop::run(listener, app, halted);
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
