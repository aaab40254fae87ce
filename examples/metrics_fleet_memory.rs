//! How much memory the metrics of a 1,000-server, 20-tool fleet hold, and how long one scrape
//! takes: `cargo run --release --example metrics_fleet_memory`. Reads `VmRSS` from
//! `/proc/self/status` (Linux).

#[path = "../benches/support/fleet.rs"]
mod fleet;

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn main() {
    let Some(start) = rss_kib() else {
        eprintln!("no /proc/self/status here: this example measures memory on Linux only");
        return;
    };
    for (name, build) in [
        ("exporter fleet", fleet::exporter_fleet as fn() -> _),
        ("layer fleet (every tool called once)", fleet::layer_fleet),
    ] {
        let before = rss_kib().unwrap_or(start);
        let metrics = build();
        let held = rss_kib().unwrap_or(before);
        let began = std::time::SystemTime::now();
        let text = metrics.render();
        let took = began.elapsed().unwrap_or_default();
        let after_scrape = rss_kib().unwrap_or(held);
        println!(
            "{name}: {} servers x {} tools: holds {:.1} MiB (RSS {:.1} -> {:.1} MiB), after one scrape RSS {:.1} MiB; scrape {} lines, {:.1} KiB, {:.1} ms",
            fleet::SERVERS,
            fleet::TOOLS,
            mib(held.saturating_sub(before)),
            mib(before),
            mib(held),
            mib(after_scrape),
            text.lines().count(),
            text.len() as f64 / 1024.0,
            took.as_secs_f64() * 1000.0,
        );
        drop(text);
        drop(metrics);
    }
}
