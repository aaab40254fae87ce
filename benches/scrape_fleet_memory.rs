//! Peak memory of 20 concurrent scrapes of a 10,000-server fleet (what `serve` holds for it), and
//! how big the body is gzipped: `cargo bench --bench scrape_fleet_memory` (a program, not a criterion bench). Linux only
//! (reads `VmHWM` from `/proc/self/status`).
//!
//! Runs, in one process and in this order (the peak only grows): the fleet alone; 20 concurrent
//! scrapes through the `/metrics` endpoint (half of them accepting gzip), which share one render;
//! then 20 renders at once, which is what 20 scrapes cost before they shared one.

mod support;

use support::fleet;

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const SERVERS: usize = 10_000;
/// Under `cargo test --benches` (no `--bench` argument) a quick pass over a small fleet checks that
/// the program runs; `cargo bench` measures the whole fleet.
const SERVERS_QUICK: usize = 100;
const SCRAPES: usize = 20;

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// One GET of `/metrics`; the body's length and whether it came gzipped. Reads into a small
/// buffer and keeps only the head, so the scraper side holds nothing of the body.
async fn scrape(addr: String, gzip: bool) -> (usize, bool) {
    let mut stream = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let extra = if gzip {
        "Accept-Encoding: gzip\r\n"
    } else {
        ""
    };
    let request = format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n{extra}\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut buf = vec![0u8; 64 * 1024];
    let mut head = Vec::new();
    let mut total = 0;
    loop {
        let n = stream.read(&mut buf).await.expect("read");
        if n == 0 {
            break;
        }
        if head.len() < 4096 {
            head.extend_from_slice(&buf[..n.min(4096)]);
        }
        total += n;
    }
    let at = head.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0);
    let text = String::from_utf8_lossy(&head[..at]).to_ascii_lowercase();
    (total - at - 4, text.contains("content-encoding: gzip"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if status_kib("VmHWM:") == 0 {
        eprintln!("no /proc/self/status here: this program measures memory on Linux only");
        return;
    }
    let servers = if std::env::args().any(|arg| arg == "--bench") {
        SERVERS
    } else {
        SERVERS_QUICK
    };
    let metrics = fleet::exporter_fleet_of(servers);
    let text_len = metrics.render().len();
    let held = status_kib("VmHWM:");
    println!(
        "{servers} servers: one render {:.1} MiB; peak RSS holding the fleet (and one render) {:.1} MiB",
        text_len as f64 / 1048576.0,
        mib(held)
    );

    let server = mcp_readiness::exporter::serve(metrics.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .expect("serve");
    let addr = server.local_addr().to_string();
    let began = tokio::time::Instant::now();
    let scrapes: Vec<_> = (0..SCRAPES)
        .map(|i| tokio::spawn(scrape(addr.clone(), i % 2 == 0)))
        .collect();
    let mut sizes = Vec::new();
    for s in scrapes {
        sizes.push(s.await.expect("scrape task"));
    }
    let took = began.elapsed();
    let shared = status_kib("VmHWM:");
    let gzip = sizes.iter().find(|(_, z)| *z).map_or(0, |(n, _)| *n);
    let text = sizes.iter().find(|(_, z)| !*z).map_or(0, |(n, _)| *n);
    println!(
        "{SCRAPES} concurrent scrapes (shared render, half gzip): peak RSS {:.1} MiB, all answered in {:.0} ms; body {:.1} MiB text, {:.2} MiB gzip ({:.1} %)",
        mib(shared),
        took.as_secs_f64() * 1000.0,
        text as f64 / 1048576.0,
        gzip as f64 / 1048576.0,
        gzip as f64 * 100.0 / text.max(1) as f64
    );
    server.shutdown().await.expect("shutdown");
    tokio::time::sleep(Duration::from_millis(100)).await;

    // Before: each scrape rendered on its own.
    let renders: Vec<_> = (0..SCRAPES)
        .map(|_| {
            let metrics = metrics.clone();
            tokio::task::spawn_blocking(move || metrics.render().len())
        })
        .collect();
    for r in renders {
        std::hint::black_box(r.await.expect("render"));
    }
    println!(
        "{SCRAPES} renders at once (each scrape on its own, as before): peak RSS {:.1} MiB",
        mib(status_kib("VmHWM:"))
    );
}
