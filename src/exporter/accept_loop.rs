//! The accept loop behind [`serve`](super::serve): HTTP/1 with a header-read timeout, an idle
//! timeout and a connection cap, so clients that connect and never finish a request (or stop
//! reading the answer) are shed instead of holding sockets and file descriptors forever.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;

/// How long a client may take to send a request's headers, and how long an idle keep-alive
/// connection waits for its next request.
pub(crate) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a connection may move no byte in either direction (a client that stops reading
/// the answer) before it is closed.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// The most connections served at once, whatever the file-descriptor limit allows.
const MAX_CONNECTIONS: usize = 256;

/// How long in-flight requests may take to finish once a shutdown is asked for.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The connection cap: [`MAX_CONNECTIONS`], or a quarter of the open-file limit when that is
/// lower (at least 4), so idle clients can never take the descriptors child servers need.
pub(crate) fn connection_cap() -> usize {
    let soft_limit = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|limits| {
            limits
                .lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|v| v.parse::<usize>().ok())
        });
    match soft_limit {
        Some(limit) => (limit / 4).clamp(4, MAX_CONNECTIONS),
        None => MAX_CONNECTIONS,
    }
}

/// Serves `app` on `listener` until `stop` changes (or its sender is dropped).
pub(crate) async fn run(
    listener: TcpListener,
    app: Router,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let app = ending_streams_at(app, stop.clone());
    let permits = Arc::new(Semaphore::new(connection_cap()));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // At the cap, further clients wait in the kernel's backlog (holding no descriptor of
        // ours) until a connection ends or times out.
        let permit = tokio::select! {
            _ = stop.changed() => break,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let (stream, _peer) = tokio::select! {
            _ = stop.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // EMFILE and friends: keep serving the connections we have, try again soon.
                    tracing::warn!(%error, "/metrics: could not accept a connection; retrying in 100 ms");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let app = app.clone();
        let stop = stop.clone();
        connections.spawn(async move {
            serve_connection(stream, app, stop).await;
            drop(permit);
        });
        // Reap finished connection tasks so the set does not grow.
        while connections.try_join_next().is_some() {}
    }
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.abort_all();
    Ok(())
}

/// `app` whose event streams (`text/event-stream`: `/events`) end when `stop` says so. A stream
/// never ends by itself, and a graceful shutdown waits for the answers in flight: with a client
/// on `/events`, every stop took the whole [`SHUTDOWN_GRACE`]. Ended, the client sees the end of
/// its stream and reconnects (with `Last-Event-ID`) to whatever serves next.
fn ending_streams_at(app: Router, stop: watch::Receiver<bool>) -> Router {
    use axum::body::Body;
    use axum::response::Response;
    use futures::StreamExt as _;
    app.layer(axum::middleware::map_response(move |response: Response| {
        let mut stop = stop.clone();
        async move {
            let streaming = response
                .headers()
                .get(axum::http::header::CONTENT_TYPE)
                .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
            if !streaming {
                return response;
            }
            let (parts, body) = response.into_parts();
            let stopped = async move {
                let _ = stop.wait_for(|stopped| *stopped).await;
            };
            let body = body.into_data_stream().take_until(stopped);
            Response::from_parts(parts, Body::from_stream(body))
        }
    }))
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    app: Router,
    mut stop: watch::Receiver<bool>,
) {
    let started = Instant::now();
    let activity = Arc::new(AtomicU64::new(0));
    let io = TokioIo::new(Activity {
        inner: stream,
        started,
        last: activity.clone(),
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    let conn = builder.serve_connection(io, TowerToHyperService::new(app));
    tokio::pin!(conn);
    let idle = async {
        loop {
            let last = started + Duration::from_millis(activity.load(Ordering::Relaxed));
            let deadline = last + IDLE_TIMEOUT;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    };
    tokio::pin!(idle);
    tokio::select! {
        _ = conn.as_mut() => return,
        () = &mut idle => return,
        _ = stop.changed() => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, conn).await;
}

/// A stream that notes when a byte last moved, for the idle timeout.
struct Activity<S> {
    inner: S,
    started: Instant,
    last: Arc<AtomicU64>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Activity<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(poll, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.touch();
        }
        poll
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Activity<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.written(|inner| inner.poll_write(cx, buf))
    }

    // Vectored writes pass through: hyper then queues a large body (a shared render) instead of
    // copying it into its write buffer once per connection.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.written(|inner| inner.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

impl<S> Activity<S> {
    fn touch(&self) {
        let elapsed = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(elapsed, Ordering::Relaxed);
    }

    /// Writes with `write` to the inner stream, and notes the activity when a byte was written.
    fn written(
        self: Pin<&mut Self>,
        write: impl FnOnce(Pin<&mut S>) -> Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>>
    where
        S: Unpin,
    {
        let this = self.get_mut();
        let poll = write(Pin::new(&mut this.inner));
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            this.touch();
        }
        poll
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_is_a_quarter_of_the_open_file_limit_at_most_256() {
        let cap = connection_cap();
        assert!((4..=MAX_CONNECTIONS).contains(&cap), "{cap}");
    }
}
