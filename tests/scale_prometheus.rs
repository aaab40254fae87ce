//! Scrapes at scale: concurrent scrapes share one render, a scraper that accepts gzip gets it
//! gzipped (a real Prometheus among them, watched through a recording proxy), and a scraper that
//! asks for OpenMetrics gets the text format 0.0.4 with its own `Content-Type`.

mod common;

use std::io::Read as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::Scratch;
use common::oncall::{Prometheus, system_tool};
use mcp_readiness::metrics::{self, CONTENT_TYPE, Metrics};
use mcp_readiness::{ConnectionEvent, EventSink, State};
use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;

/// A recorder of `servers` ready servers with 20 tools each and their wait budgets.
fn fleet(servers: usize) -> Metrics {
    let metrics = Metrics::new();
    for i in 0..servers {
        let server = format!("server-{i:05}");
        metrics.on_event(&ConnectionEvent::ServerAdded {
            server: server.as_str().into(),
            state: State::Ready,
        });
        metrics.on_event(&ConnectionEvent::ToolsChanged {
            server: server.as_str().into(),
            count: 20,
        });
        metrics.set_wait_budget(&server, Duration::from_secs(20));
    }
    metrics
}

/// One raw HTTP/1.0 GET with extra header lines; the head and the raw body bytes.
async fn get(addr: &str, headers: &str) -> (String, Vec<u8>) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n{headers}\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut raw))
        .await
        .expect("the scrape answers within 30 s")
        .unwrap();
    let at = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let head = String::from_utf8_lossy(&raw[..at]).to_ascii_lowercase();
    (head, raw[at + 4..].to_vec())
}

fn gunzip(body: &[u8]) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(body)
        .read_to_string(&mut text)
        .expect("a gzip body");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_that_accepts_gzip_gets_the_same_text_gzipped_to_under_a_tenth() {
    let server = metrics::serve(fleet(1_000), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr().to_string();
    let (plain_head, plain) = get(&addr, "").await;
    assert!(plain_head.contains(" 200"), "{plain_head}");
    assert!(!plain_head.contains("content-encoding"), "{plain_head}");
    assert!(plain_head.contains("vary: accept-encoding"), "{plain_head}");
    let (head, zipped) = get(&addr, "Accept-Encoding: gzip, deflate\r\n").await;
    assert!(head.contains("content-encoding: gzip"), "{head}");
    assert!(
        head.contains(&format!(
            "content-type: {}",
            CONTENT_TYPE.to_ascii_lowercase()
        )),
        "{head}"
    );
    let text = String::from_utf8(plain).unwrap();
    assert_eq!(gunzip(&zipped), text);
    let ratio = zipped.len() as f64 / text.len() as f64;
    eprintln!(
        "1,000 servers: text {} bytes, gzip {} bytes ({:.1} %)",
        text.len(),
        zipped.len(),
        ratio * 100.0
    );
    assert!(ratio < 0.10, "gzip is {:.1} % of the text", ratio * 100.0);
    let (refused, _) = get(&addr, "Accept-Encoding: gzip;q=0, br\r\n").await;
    assert!(!refused.contains("content-encoding"), "{refused}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_that_asks_for_openmetrics_gets_text_0_0_4_with_its_content_type() {
    let server = metrics::serve(fleet(3), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr().to_string();
    for accept in [
        "application/openmetrics-text; version=1.0.0",
        "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    ] {
        let (head, body) = get(&addr, &format!("Accept: {accept}\r\n")).await;
        assert!(head.contains(" 200"), "{accept}: {head}");
        assert!(
            head.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
            "{accept}: {head}"
        );
        let body = String::from_utf8(body).unwrap();
        assert!(!body.contains("# EOF"), "text 0.0.4 has no EOF marker");
        assert!(
            body.contains("mcp_readiness_server_state{server=\"server-00002\",state=\"ready\"} 1")
        );
    }
    server.shutdown().await.unwrap();
}

/// A collector that counts how often the registry is gathered: once per render.
struct GatherCount(Arc<AtomicUsize>, Vec<Desc>);

impl Collector for GatherCount {
    fn desc(&self) -> Vec<&Desc> {
        self.1.iter().collect()
    }
    fn collect(&self) -> Vec<MetricFamily> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Vec::new()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_scrapes_share_one_render() {
    let metrics = fleet(5_000);
    let renders = Arc::new(AtomicUsize::new(0));
    metrics
        .registry()
        .register(Box::new(GatherCount(renders.clone(), Vec::new())))
        .unwrap();
    let server = metrics::serve(metrics, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr().to_string();
    let scrapes: Vec<_> = (0..20)
        .map(|i| {
            let addr = addr.clone();
            tokio::spawn(async move {
                let gzip = if i % 2 == 0 {
                    "Accept-Encoding: gzip\r\n"
                } else {
                    ""
                };
                get(&addr, gzip).await
            })
        })
        .collect();
    let mut texts = Vec::new();
    for scrape in scrapes {
        let (head, body) = scrape.await.unwrap();
        texts.push(if head.contains("content-encoding: gzip") {
            gunzip(&body)
        } else {
            String::from_utf8(body).unwrap()
        });
    }
    let renders = renders.load(Ordering::SeqCst);
    eprintln!("20 concurrent scrapes of 5,000 servers: {renders} render(s)");
    // The scrapes connect over a few milliseconds; a render of 5,000 servers takes longer, so
    // nearly all of them join the first (never 20 renders, as before).
    assert!(renders <= 3, "{renders} renders for 20 concurrent scrapes");
    assert!(texts.iter().all(|t| t == &texts[0] && t.len() > 1_000_000));
    server.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------------

/// Relays `from` to `to`, keeping the head of the first chunk in `seen`.
async fn relay(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    seen: Arc<std::sync::Mutex<Vec<String>>>,
) {
    let mut buf = vec![0; 64 * 1024];
    let mut first = true;
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 || to.write_all(&buf[..n]).await.is_err() {
            break;
        }
        if first {
            first = false;
            let text = String::from_utf8_lossy(&buf[..n.min(2048)]);
            let head = text.split("\r\n\r\n").next().unwrap_or("").to_owned();
            seen.lock().unwrap().push(head.to_ascii_lowercase());
        }
    }
    let _ = to.shutdown().await;
}

/// A TCP proxy on loopback in front of `upstream` that keeps the head of every request and
/// answer it relays, to see what a real scraper asked for and got.
async fn recording_proxy(upstream: String) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let heads: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                continue;
            };
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            tokio::spawn(relay(client_read, server_write, seen.clone()));
            tokio::spawn(relay(server_read, client_write, seen.clone()));
        }
    });
    (addr, heads)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_prometheus_scrapes_the_gzipped_exposition_and_stores_every_series() {
    let Some(binary) = system_tool("prometheus", "prometheus") else {
        return;
    };
    let scratch = Scratch::new("scale-prometheus");
    let servers = 200;
    let server = metrics::serve(fleet(servers), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let (proxy, heads) = recording_proxy(server.local_addr().to_string()).await;
    let rules = vec![common::oncall::repo().join("alerts/rules.yml")];
    let prometheus = Prometheus::start(&binary, &scratch, &[("scale", vec![proxy])], &rules).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stored = prometheus
            .query("count(mcp_readiness_server_state{job=\"scale\",state=\"ready\"} == 1)")
            .await
            .unwrap_or_default();
        let fleet_view = prometheus
            .query("count(server:mcp_readiness_server_state:worst)")
            .await
            .unwrap_or_default();
        let count = |v: &[serde_json::Value]| v.first().map(|s| s["value"][1].clone());
        if count(&stored) == Some(serde_json::json!(servers.to_string()))
            && count(&fleet_view).is_some()
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus did not store the fleet: {stored:?} {fleet_view:?}\n{}",
            prometheus.log()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let heads = heads.lock().unwrap().clone();
    let asked = heads
        .iter()
        .find(|h| h.starts_with("get /metrics"))
        .expect("Prometheus's request");
    assert!(asked.contains("accept-encoding: gzip"), "{asked}");
    let answered = heads
        .iter()
        .find(|h| h.starts_with("http/1.1 200"))
        .expect("the answer");
    assert!(answered.contains("content-encoding: gzip"), "{answered}");
    server.shutdown().await.unwrap();
}
