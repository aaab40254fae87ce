//! The metrics recorder: one `/metrics` scrape of a 1,000-server fleet (aim: under 20 ms), and the
//! hot-path cost of recording through pre-resolved handles against `prometheus`'s own
//! `with_label_values` in the same run.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_readiness::resolve::Verdict;
use mcp_readiness::state::CallOutcome;
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts};

mod support;

use support::fleet;

fn render(c: &mut Criterion) {
    let mut group = c.benchmark_group("render");
    group.sample_size(20);
    let exporter = fleet::exporter_fleet();
    let layer = fleet::layer_fleet();
    eprintln!(
        "exporter fleet: {} lines, {} bytes; layer fleet: {} lines, {} bytes",
        exporter.render().lines().count(),
        exporter.render().len(),
        layer.render().lines().count(),
        layer.render().len()
    );
    group.bench_function("exporter_fleet_1000_servers_20_tools", |b| {
        b.iter(|| black_box(exporter.render()))
    });
    group.bench_function("layer_fleet_1000_servers_20_tools_called", |b| {
        b.iter(|| black_box(layer.render()))
    });
    group.finish();
}

fn hot_path(c: &mut Criterion) {
    let metrics = fleet::exporter_fleet();
    let server = metrics.server("server-0500");
    let tool = server.tool("read_file");
    let budget = Duration::from_secs(20);

    // The baseline: the same families as plain prometheus vectors, one label lookup per record.
    let calls = IntCounterVec::new(
        Opts::new("bench_tool_calls_total", "baseline"),
        &["server", "tool", "outcome"],
    )
    .unwrap();
    let waits = HistogramVec::new(
        HistogramOpts::new("bench_resolve_wait_seconds", "baseline")
            .buckets(mcp_readiness::metrics::names::WAIT_BUCKETS.to_vec()),
        &["server", "state"],
    )
    .unwrap();
    for i in 0..fleet::SERVERS {
        calls.with_label_values(&[fleet::server_name(i).as_str(), "read_file", "ok"]);
        waits.with_label_values(&[fleet::server_name(i).as_str(), "ready"]);
    }

    let mut group = c.benchmark_group("observe_call");
    group.bench_function("tool_handle", |b| {
        b.iter(|| black_box(&tool).observe_call(black_box(CallOutcome::Ok)))
    });
    group.bench_function("server_handle", |b| {
        b.iter(|| {
            black_box(&server)
                .tool(black_box("read_file"))
                .observe_call(CallOutcome::Ok)
        })
    });
    group.bench_function("by_name", |b| {
        b.iter(|| {
            metrics
                .server(black_box("server-0500"))
                .tool(black_box("read_file"))
                .observe_call(CallOutcome::Ok)
        })
    });
    group.bench_function("prometheus_with_label_values", |b| {
        b.iter(|| {
            calls
                .with_label_values(&[
                    black_box("server-0500"),
                    black_box("read_file"),
                    CallOutcome::Ok.as_str(),
                ])
                .inc()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("observe_resolution");
    let ready = Verdict::READY;
    group.bench_function("server_handle", |b| {
        b.iter(|| black_box(&server).observe_resolution(black_box(&ready), budget))
    });
    group.bench_function("by_name", |b| {
        b.iter(|| {
            metrics
                .server(black_box("server-0500"))
                .observe_resolution(black_box(&ready), budget)
        })
    });
    group.bench_function("prometheus_with_label_values", |b| {
        b.iter(|| {
            waits
                .with_label_values(&[black_box("server-0500"), ready.state.as_str()])
                .observe(black_box(ready.waited).as_secs_f64())
        })
    });
    group.finish();
}

criterion_group!(benches, render, hot_path);
criterion_main!(benches);
