//! How much memory the metrics of a 1,000-server, 20-tool fleet hold, and how long one scrape
//! takes: `cargo bench --bench metrics_fleet_memory` (a program, not a criterion bench). Reads `VmRSS` from
//! `/proc/self/status` (Linux).

mod support;

use support::fleet;

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// This thread's CPU time (user + system) in clock ticks (usually 10 ms).
fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn main() {
    let Some(start) = rss_kib() else {
        eprintln!("no /proc/self/status here: this program measures memory on Linux only");
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
        // CPU time per scrape over several scrapes (wall time suffers on a shared machine).
        // Under `cargo test --benches` (no `--bench` argument) one round checks the program runs.
        let rounds = if std::env::args().any(|arg| arg == "--bench") {
            20
        } else {
            1
        };
        let ticks_before = cpu_ticks().unwrap_or(0);
        for _ in 0..rounds {
            std::hint::black_box(metrics.render());
        }
        let ticks = cpu_ticks().unwrap_or(0).saturating_sub(ticks_before);
        let cpu_ms = ticks as f64 * 10.0 / rounds as f64;
        println!(
            "{name}: {} servers x {} tools: holds {:.1} MiB (RSS {:.1} -> {:.1} MiB), after one scrape RSS {:.1} MiB; scrape {} lines, {:.1} KiB, first {:.1} ms wall, then {:.1} ms CPU each (mean of {rounds})",
            fleet::SERVERS,
            fleet::TOOLS,
            mib(held.saturating_sub(before)),
            mib(before),
            mib(held),
            mib(after_scrape),
            text.lines().count(),
            text.len() as f64 / 1024.0,
            took.as_secs_f64() * 1000.0,
            cpu_ms,
        );
        drop(text);
        drop(metrics);
    }
}
