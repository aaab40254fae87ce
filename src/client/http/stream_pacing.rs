//! Re-opened event streams, paced: [`StreamPacer`] decides how long a streamable-HTTP connection
//! waits before it opens an event stream (`GET`, or the resumption of a response stream) again.
//!
//! Why: rmcp re-opens a stream that ended in an error at once, and its retry count starts over
//! after every successful re-open, so a server (or a proxy) that cuts each stream right after its
//! headers gets about a thousand requests a second, for as long as the connection lives, while the
//! server reads `ready`. The MCP spec's SSE `retry` field says how long a client must wait.
//!
//! The rules, for every open after a connection's first:
//!
//! - a stream that ended less than [`QUICK_END`] after it opened counts as ending at once; each
//!   one in a row doubles the wait, from [`FIRST_BACKOFF`] up to [`MAX_BACKOFF`], with jitter (a
//!   random point in the upper half), so a fleet does not re-open in step; a stream that lived
//!   longer resets the count;
//! - the wait is never shorter than the last `retry` the server sent (bounded by
//!   [`MAX_RETRY_AFTER`](crate::client::connector::MAX_RETRY_AFTER)), on every re-open, not only the
//!   first one after it was sent;
//! - time already spent since the stream ended (rmcp's own wait) counts toward it;
//! - every re-open is reported (`mcp_readiness_stream_reopens_total`), so a storm shows on a
//!   dashboard whatever the pacing.

use crate::util::MutexExt as _;
use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use rmcp::transport::streamable_http_client::SseError;
use sse_stream::Sse;
use tokio::time::Instant;

use crate::client::connector::MAX_RETRY_AFTER;

/// A stream that ends sooner than this after it opened ended "at once".
pub(crate) const QUICK_END: Duration = Duration::from_secs(1);
/// The wait after the first stream in a row that ended at once.
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait between re-opens of streams that keep ending at once.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(30);

type SseStream = BoxStream<'static, Result<Sse, SseError>>;

/// Paces the event-stream opens of one connection (see the module docs). Cheap to clone; clones
/// share the pace.
#[derive(Clone)]
pub(crate) struct StreamPacer {
    pace: Arc<Mutex<Pace>>,
    reopened: Arc<dyn Fn() + Send + Sync>,
}

/// What the pacer knows of the connection's streams.
#[derive(Debug, Default)]
struct Pace {
    /// Streams opened (or tried) so far.
    opens: u64,
    /// When the last stream opened, and when it ended (`None` while it is open).
    opened_at: Option<Instant>,
    ended_at: Option<Instant>,
    /// Streams in a row that ended at once.
    quick_ends: u32,
    /// The last `retry` the server sent, bounded.
    server_retry: Option<Duration>,
}

impl std::fmt::Debug for StreamPacer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamPacer")
            .field("pace", &*self.lock())
            .finish()
    }
}

impl StreamPacer {
    /// A pacer that calls `reopened` for every open after the first.
    pub(crate) fn new(reopened: impl Fn() + Send + Sync + 'static) -> Self {
        StreamPacer {
            pace: Arc::default(),
            reopened: Arc::new(reopened),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pace> {
        self.pace.lock_unpoisoned()
    }

    /// How long to wait before opening a stream now (zero for the first); counts a re-open.
    pub(crate) fn before_open(&self) -> Duration {
        let now = Instant::now();
        let wait = {
            let mut pace = self.lock();
            pace.opens = pace.opens.saturating_add(1);
            if pace.opens == 1 {
                return Duration::ZERO;
            }
            let quick = matches!(
                (pace.opened_at, pace.ended_at),
                (Some(opened), Some(ended)) if ended.saturating_duration_since(opened) < QUICK_END
            );
            pace.quick_ends = if quick {
                pace.quick_ends.saturating_add(1)
            } else {
                0
            };
            let backoff = match pace.quick_ends {
                0 => Duration::ZERO,
                n => jitter(
                    FIRST_BACKOFF
                        .saturating_mul(2u32.saturating_pow(n - 1))
                        .min(MAX_BACKOFF),
                ),
            };
            let wait = backoff.max(pace.server_retry.unwrap_or_default());
            let since_end = pace
                .ended_at
                .map_or(Duration::ZERO, |ended| now.saturating_duration_since(ended));
            wait.saturating_sub(since_end)
        };
        (self.reopened)();
        wait
    }

    /// A stream opened now.
    pub(crate) fn opened(&self) {
        let mut pace = self.lock();
        pace.opened_at = Some(Instant::now());
        pace.ended_at = None;
    }

    /// An open failed (the request was refused or never answered): a stream that ended at once.
    pub(crate) fn open_failed(&self) {
        let now = Instant::now();
        let mut pace = self.lock();
        pace.opened_at = Some(now);
        pace.ended_at = Some(now);
    }

    /// `stream`, watched: a `retry` it carries is remembered, and its end (or its drop, which is
    /// how rmcp lets go of a failed stream) is the time the next wait counts from.
    pub(crate) fn watch(&self, stream: SseStream) -> SseStream {
        let ended = Ended(self.clone());
        let pacer = self.clone();
        stream
            .map(move |item| {
                let _ended = &ended;
                if let Ok(Sse {
                    retry: Some(ms), ..
                }) = &item
                {
                    pacer.lock().server_retry =
                        Some(Duration::from_millis(*ms).min(MAX_RETRY_AFTER));
                }
                item
            })
            .boxed()
    }
}

/// Marks the watched stream's end when the stream is dropped.
struct Ended(StreamPacer);

impl Drop for Ended {
    fn drop(&mut self) {
        let mut pace = self.0.lock();
        if pace.ended_at.is_none() {
            pace.ended_at = Some(Instant::now());
        }
    }
}

/// A random duration in the upper half of `wait` (`wait / 2 ..= wait`).
fn jitter(wait: Duration) -> Duration {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    let fraction = (hasher.finish() % 1_000) as u32;
    wait / 2 + (wait / 2) * fraction / 1_000
}

#[cfg(test)]
mod tests {
    use crate::client::http::stream_pacing::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn pacer() -> (StreamPacer, Arc<AtomicUsize>) {
        let reopens = Arc::new(AtomicUsize::new(0));
        let counted = reopens.clone();
        let pacer = StreamPacer::new(move || {
            counted.fetch_add(1, Ordering::Relaxed);
        });
        (pacer, reopens)
    }

    /// Opens a stream through `pacer`, lets it live `life`, ends it, and returns the wait the
    /// next open asks for.
    async fn one_stream(pacer: &StreamPacer, life: Duration, retry: Option<u64>) -> Duration {
        pacer.opened();
        let events = retry.map(|ms| {
            Ok(Sse {
                retry: Some(ms),
                ..Sse::default()
            })
        });
        let mut stream = pacer.watch(futures::stream::iter(events).boxed());
        while stream.next().await.is_some() {}
        tokio::time::sleep(life).await;
        drop(stream);
        pacer.before_open()
    }

    #[tokio::test(start_paused = true)]
    async fn streams_that_end_at_once_wait_longer_each_time_up_to_the_cap_with_jitter() {
        let (pacer, reopens) = pacer();
        assert_eq!(pacer.before_open(), Duration::ZERO, "the first open");
        let mut waits = Vec::new();
        for _ in 0..9 {
            waits.push(one_stream(&pacer, Duration::ZERO, None).await);
        }
        for (n, wait) in waits.iter().enumerate() {
            let full = FIRST_BACKOFF
                .saturating_mul(2u32.pow(n as u32))
                .min(MAX_BACKOFF);
            assert!(
                *wait >= full / 2 && *wait <= full,
                "re-open {n}: {wait:?} not in the upper half of {full:?}"
            );
        }
        assert_eq!(reopens.load(Ordering::Relaxed), 9);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_that_lived_resets_the_backoff() {
        let (pacer, _) = pacer();
        pacer.before_open();
        for _ in 0..4 {
            one_stream(&pacer, Duration::ZERO, None).await;
        }
        let after_a_long_life = one_stream(&pacer, QUICK_END, None).await;
        assert_eq!(after_a_long_life, Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn the_servers_retry_is_honoured_on_every_reopen_and_time_already_waited_counts() {
        let (pacer, _) = pacer();
        pacer.before_open();
        // A stream that lived 5 s and said `retry: 3000`: wait 3 s.
        assert_eq!(
            one_stream(&pacer, Duration::from_secs(5), Some(3_000)).await,
            Duration::from_secs(3)
        );
        // The next one says nothing: the last `retry` still holds.
        assert_eq!(
            one_stream(&pacer, Duration::from_secs(5), None).await,
            Duration::from_secs(3)
        );
        // Time since the end (rmcp's own wait) counts toward it.
        pacer.opened();
        let stream = pacer.watch(futures::stream::empty().boxed());
        drop(stream);
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(pacer.before_open(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn an_open_that_fails_counts_as_a_stream_that_ended_at_once() {
        let (pacer, _) = pacer();
        pacer.before_open();
        pacer.open_failed();
        let wait = pacer.before_open();
        assert!(
            wait >= FIRST_BACKOFF / 2 && wait <= FIRST_BACKOFF,
            "{wait:?}"
        );
    }
}
