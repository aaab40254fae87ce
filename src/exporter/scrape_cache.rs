//! Scrapes at scale: concurrent scrapes of `/metrics` share one render (single flight), and a
//! scraper that accepts gzip gets the render compressed, once per render whoever asks.
//!
//! Before: every scrape rendered on its own, so 20 concurrent scrapes of a 10,000-server fleet held
//! 20 copies of a 34 MB text. Now they hold one (and its gzip, under a tenth of it).

use crate::util::MutexExt as _;
use std::io::Write as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::Bytes;
use futures::FutureExt as _;
use futures::future::{BoxFuture, Shared};
use tokio::time::Instant;

use crate::metrics::Metrics;

/// One render of the exposition, and its gzip once someone asked for it.
#[derive(Debug)]
pub(crate) struct Rendered {
    text: Bytes,
    gzip: OnceLock<Bytes>,
}

impl Rendered {
    /// The text, uncompressed.
    pub(crate) fn text(&self) -> Bytes {
        self.text.clone()
    }

    /// The text gzipped (compressed by the first caller; blocking: call off the reactor).
    pub(crate) fn gzip(&self) -> Bytes {
        self.gzip.get_or_init(|| gzip(&self.text)).clone()
    }
}

/// Fast compression: the exposition repeats its names on every line, so level 1 already shrinks
/// it to a few percent, at a fraction of the CPU of the default level.
fn gzip(text: &[u8]) -> Bytes {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(text.len() / 16),
        flate2::Compression::fast(),
    );
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(text);
    Bytes::from(encoder.finish().unwrap_or_default())
}

type Flight = Shared<BoxFuture<'static, Result<Arc<Rendered>, Arc<str>>>>;

/// The render in progress or the last one, with when it started.
#[derive(Default)]
pub(crate) struct ScrapeCache {
    slot: Mutex<Option<(Instant, Flight)>>,
}

impl std::fmt::Debug for ScrapeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ScrapeCache")
    }
}

impl ScrapeCache {
    /// The render this scrape is answered with: the one in progress, or the last one if it
    /// started at most `max_age` ago, or a new one (rendered off the reactor).
    pub(crate) async fn get(
        &self,
        metrics: &Metrics,
        max_age: Duration,
    ) -> Result<Arc<Rendered>, Arc<str>> {
        let flight = {
            let mut slot = self.slot.lock_unpoisoned();
            let now = Instant::now();
            match &*slot {
                Some((started, flight))
                    if flight.peek().is_none() || now.duration_since(*started) <= max_age =>
                {
                    flight.clone()
                }
                _ => {
                    let metrics = metrics.clone();
                    let flight = async move {
                        // Rendering a large fleet takes milliseconds of CPU: off the reactor.
                        match tokio::task::spawn_blocking(move || metrics.render()).await {
                            Ok(text) => Ok(Arc::new(Rendered {
                                text: Bytes::from(text),
                                gzip: OnceLock::new(),
                            })),
                            Err(error) => Err(Arc::<str>::from(error.to_string())),
                        }
                    }
                    .boxed()
                    .shared();
                    *slot = Some((now, flight.clone()));
                    flight
                }
            }
        };
        flight.await
    }
}

/// Whether an `Accept-Encoding` value accepts gzip (`gzip`, `x-gzip` or `*`, with a q-value
/// above zero).
pub(crate) fn accepts_gzip(accept_encoding: &str) -> bool {
    accept_encoding.split(',').any(|item| {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or("").trim();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        q > 0.0
            && (coding.eq_ignore_ascii_case("gzip")
                || coding.eq_ignore_ascii_case("x-gzip")
                || coding == "*")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_accepted_by_name_or_wildcard_unless_its_q_is_zero() {
        assert!(accepts_gzip("gzip"));
        assert!(accepts_gzip("identity, GZIP;q=0.5"));
        assert!(accepts_gzip("*"));
        assert!(accepts_gzip("x-gzip"));
        assert!(!accepts_gzip("gzip;q=0"));
        assert!(!accepts_gzip("br, deflate"));
        assert!(!accepts_gzip(""));
    }

    #[test]
    fn the_gzip_of_a_render_decompresses_to_its_text() {
        let text = "mcp_readiness_server_state{server=\"a\",state=\"ready\"} 1\n".repeat(1000);
        let rendered = Rendered {
            text: Bytes::from(text.clone()),
            gzip: OnceLock::new(),
        };
        let zipped = rendered.gzip();
        assert!(
            zipped.len() * 10 < text.len(),
            "{} of {}",
            zipped.len(),
            text.len()
        );
        let mut out = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&zipped[..]), &mut out)
            .unwrap();
        assert_eq!(out, text);
    }

    #[tokio::test(start_paused = true)]
    async fn a_finished_render_is_reused_up_to_its_max_age_and_not_after() {
        let metrics = Metrics::new();
        let cache = ScrapeCache::default();
        let age = Duration::from_millis(500);
        let first = cache.get(&metrics, age).await.unwrap();
        tokio::time::advance(Duration::from_millis(499)).await;
        let again = cache.get(&metrics, age).await.unwrap();
        assert!(Arc::ptr_eq(&first, &again), "reused just before its age");
        tokio::time::advance(Duration::from_millis(2)).await;
        let fresh = cache.get(&metrics, age).await.unwrap();
        assert!(!Arc::ptr_eq(&first, &fresh), "rendered again just after");
        let zero = cache.get(&metrics, Duration::ZERO).await.unwrap();
        tokio::time::advance(Duration::from_millis(1)).await;
        let next = cache.get(&metrics, Duration::ZERO).await.unwrap();
        assert!(
            !Arc::ptr_eq(&zero, &next),
            "age zero reuses no finished render"
        );
    }

    // The gate is held across awaits on purpose: the render must wait for every scrape.
    #[allow(clippy::await_holding_lock)]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn scrapes_that_arrive_during_a_render_share_it() {
        let metrics = Metrics::new();
        let cache = Arc::new(ScrapeCache::default());
        // Hold the render back (it waits for the recorder's gate) until every scrape has arrived.
        let gate = metrics.hold_renders();
        let scrapes: Vec<_> = (0..20)
            .map(|_| {
                let cache = cache.clone();
                let metrics = metrics.clone();
                tokio::spawn(async move { cache.get(&metrics, Duration::ZERO).await.unwrap() })
            })
            .collect();
        loop {
            // Every scrape has arrived when the slot's flight is shared by 20 waiters and itself.
            let waiters = cache
                .slot
                .lock()
                .unwrap()
                .as_ref()
                .map_or(0, |(_, flight)| flight.strong_count().unwrap_or(0));
            if waiters == 21 {
                break;
            }
            tokio::task::yield_now().await;
        }
        drop(gate);
        let mut renders = Vec::new();
        for scrape in scrapes {
            renders.push(scrape.await.unwrap());
        }
        assert!(renders.iter().all(|r| Arc::ptr_eq(r, &renders[0])));
    }
}
