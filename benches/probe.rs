//! `/probe`: probes per second against a ready rmcp server over streamable HTTP on loopback (one
//! at a time, and 16 at once), and the memory one in-flight probe holds (64 probes held open
//! against a server that accepts and never answers; heap bytes counted by this bench's
//! allocator).
//!
//! `cargo bench -p mcp-readiness --bench probe`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_readiness::probe::{ProbeConfig, ProbeRequest, Prober};

/// Resident memory of this process (`VmRSS`), in bytes (Linux; 0 elsewhere).
fn rss_bytes() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<usize>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

/// The probe fixture (`lookup`, `summarize`) over streamable HTTP, the one the library's tests
/// probe; returns its URL.
async fn ready_server() -> String {
    let service = mcp_readiness_fixtures::mcp::http_service(mcp_readiness_fixtures::mcp::PROBE);
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

/// A server that accepts, reads and never answers; returns its URL and how many it accepted.
async fn silent_server() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut sink = vec![0u8; 4096];
                while let Ok(n) = tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
            });
        }
    });
    (format!("http://{addr}/mcp"), accepted)
}

fn prober(max_in_flight: usize) -> Prober {
    let mut config = ProbeConfig::allowing(vec!["http://127.0.0.1:*/mcp".parse().unwrap()]);
    config.max_in_flight = max_in_flight;
    config.default_module.timeout = Duration::from_secs(60);
    Prober::new(config).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Resident bytes one in-flight probe holds: `n` probes connected to a silent server, against
/// the process before they started (after one probe warmed every lazy global).
fn memory_per_in_flight_probe(n: usize) -> usize {
    let rt = runtime();
    rt.block_on(async {
        let (url, accepted) = silent_server().await;
        let prober = prober(n);
        let request = ProbeRequest {
            target: url,
            ..Default::default()
        };
        // Warm every lazy global (TLS roots, the HTTP client's statics) with one probe first.
        let warm = {
            let prober = prober.clone();
            let request = request.clone();
            tokio::spawn(async move { prober.probe(&request).await })
        };
        while accepted.load(Ordering::SeqCst) < 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        warm.abort();
        let _ = warm.await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let before = rss_bytes();
        let probes: Vec<_> = (0..n)
            .map(|_| {
                let prober = prober.clone();
                let request = request.clone();
                tokio::spawn(async move { prober.probe(&request).await })
            })
            .collect();
        while accepted.load(Ordering::SeqCst) < n + 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Let every request be written and every task settle into waiting for an answer.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let during = rss_bytes();
        for probe in &probes {
            probe.abort();
        }
        for probe in probes {
            let _ = probe.await;
        }
        during.saturating_sub(before) / n
    })
}

fn probes(c: &mut Criterion) {
    let per_probe = memory_per_in_flight_probe(128);
    eprintln!(
        "probe: {per_probe} resident bytes ({:.1} KiB) per in-flight probe (128 in flight)",
        per_probe as f64 / 1024.0
    );

    let rt = runtime();
    let url = rt.block_on(ready_server());
    let prober = prober(64);
    let request = ProbeRequest {
        target: url,
        server: Some("bench".into()),
        ..Default::default()
    };
    // The answer is what Prometheus would get: check it once.
    let answer = rt.block_on(prober.probe(&request)).unwrap();
    assert!(answer.outcome.success(), "{:?}", answer.outcome);

    let mut group = c.benchmark_group("probe");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(1));
    group.bench_function("ready_loopback_one_at_a_time", |b| {
        b.to_async(&rt).iter(|| async {
            let answer = prober.probe(&request).await.unwrap();
            assert!(answer.outcome.success());
        })
    });
    group.throughput(Throughput::Elements(16));
    group.bench_function("ready_loopback_16_at_once", |b| {
        b.to_async(&rt).iter(|| async {
            let all = (0..16).map(|_| prober.probe(&request));
            for answer in futures::future::join_all(all).await {
                assert!(answer.unwrap().outcome.success());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, probes);
criterion_main!(benches);
