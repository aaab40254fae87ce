//! The cost of recording with the OpenTelemetry meter attached (feature `otel-metrics`): each
//! handle call through the Prometheus recorder alone, and through a recorder whose meter belongs
//! to an SDK provider with a periodic reader (its exporter drops each export), in the same run.
//! Then the ratios, measured in interleaved rounds.
//!
//! `cargo bench -p mcp-readiness --bench otel_metrics --features otel-metrics`

// Benchmarks measure wall-clock time on purpose; library code never does (clippy.toml).
#![allow(clippy::disallowed_types)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use mcp_readiness::State;
use mcp_readiness::resolve::{Scope, Verdict};
use mcp_readiness::state::CallOutcome;
use mcp_readiness::{
    Metrics,
    metrics::{ServerMetrics, ToolMetrics},
};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};

struct DropExporter;

impl PushMetricExporter for DropExporter {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        black_box(metrics);
        Ok(())
    }
    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }
    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
    fn temporality(&self) -> Temporality {
        Temporality::Cumulative
    }
}

/// One recorder's handles: a server and one of its tools.
struct Handles {
    server: ServerMetrics,
    tool: ToolMetrics,
}

fn handles(metrics: &Metrics) -> Handles {
    let server = metrics.server("files");
    let tool = server.tool("read_file");
    Handles { server, tool }
}

const BUDGET: Duration = Duration::from_secs(20);

fn connecting() -> Verdict {
    Verdict {
        state: State::Connecting,
        waited: Duration::from_millis(250),
        timed_out: false,
        scope: Scope::Server,
        reason: None,
    }
}

/// Records once through the handles.
type Record = fn(&Handles, &Verdict);

/// What each row records once.
const ROWS: [(&str, Record); 3] = [
    ("observe_call", |h, _| h.tool.observe_call(CallOutcome::Ok)),
    ("observe_operation", |h, _| {
        h.tool
            .observe_operation("tools/call", None, Duration::from_millis(40))
    }),
    ("observe_resolution", |h, v| {
        h.server.observe_resolution(v, BUDGET)
    }),
];

fn time(handles: &Handles, verdict: &Verdict, row: Record, iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        row(black_box(handles), black_box(verdict));
    }
    start.elapsed()
}

/// `row` on two threads at once, the same series: ns per record per thread.
fn time_two_threads(handles: &Handles, verdict: &Verdict, row: Record, iters: u64) -> f64 {
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| time(handles, verdict, row, iters));
        }
    });
    start.elapsed().as_nanos() as f64 / iters as f64
}

/// A fleet on `metrics`: 1,000 servers announced and ready, each with 20 tools called once
/// through the handles (as `benches/support/fleet.rs` builds it for the render benchmark).
fn fleet(metrics: &Metrics) {
    use mcp_readiness::state::{ConnectResult, ConnectionEvent, EventSink};
    for i in 0..1_000 {
        let name = format!("server-{i:04}");
        let server: std::sync::Arc<str> = name.as_str().into();
        metrics.on_event(&ConnectionEvent::ServerAdded {
            server: server.clone(),
            state: State::Connecting,
        });
        metrics.on_event(&ConnectionEvent::ConnectAttempt {
            server: server.clone(),
            result: ConnectResult::Ok,
            duration: Duration::from_millis(300),
        });
        metrics.on_event(&ConnectionEvent::StateChanged {
            server: server.clone(),
            from: State::Connecting,
            to: State::Ready,
            reason: None,
        });
        metrics.on_event(&ConnectionEvent::ToolsChanged { server, count: 20 });
        let handle = metrics.server(&name);
        handle.set_wait_budget(BUDGET);
        for j in 0..20 {
            let tool = handle.tool(&format!("tool_{j:02}"));
            handle.observe_resolution(&Verdict::READY, BUDGET);
            tool.observe_call(CallOutcome::Ok);
            tool.observe_operation("tools/call", None, Duration::from_millis(40));
        }
    }
}

/// One collection and export of the fleet (the SDK's callbacks read every series), beside one
/// render of `/metrics` of the same recorder: medians in ms.
fn print_fleet_collection(rounds: usize) {
    let provider = SdkMeterProvider::builder()
        .with_reader(
            PeriodicReader::builder(DropExporter)
                .with_interval(Duration::from_secs(3600))
                .build(),
        )
        // As `telemetry::init_metrics` sets it: the SDK's default of 2,000 series per
        // instrument is fewer than this fleet has.
        .with_view(|_: &opentelemetry_sdk::metrics::Instrument| {
            opentelemetry_sdk::metrics::Stream::builder()
                .with_cardinality_limit(100_000)
                .build()
                .ok()
        })
        .build();
    let metrics = Metrics::builder()
        .meter(provider.meter("mcp-readiness"))
        .build()
        .expect("a fresh registry");
    fleet(&metrics);
    let ms = |f: &dyn Fn()| {
        let start = Instant::now();
        f();
        start.elapsed().as_secs_f64() * 1e3
    };
    let (mut collect, mut render) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        collect.push(ms(&|| provider.force_flush().expect("a flush")));
        render.push(ms(&|| {
            black_box(metrics.render());
        }));
    }
    println!(
        "  1,000 servers x 20 tools: one OTLP collection {:.1} ms, one /metrics render {:.1} ms",
        median(collect),
        median(render)
    );
    let _ = provider.shutdown();
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let provider = SdkMeterProvider::builder()
        .with_reader(
            PeriodicReader::builder(DropExporter)
                .with_interval(Duration::from_secs(3600))
                .build(),
        )
        .build();
    let prometheus = Metrics::new();
    let with_otel = Metrics::builder()
        .meter(provider.meter("mcp-readiness"))
        .build()
        .expect("a fresh registry");
    let recorders = [
        ("prometheus", handles(&prometheus)),
        ("prometheus+otel", handles(&with_otel)),
    ];
    let verdict = connecting();

    let mut criterion = Criterion::default().configure_from_args();
    for (row_name, row) in ROWS {
        let mut group = criterion.benchmark_group(format!("otel_metrics/{row_name}"));
        for (recorder, handles) in &recorders {
            group.bench_function(*recorder, |b| {
                b.iter_custom(|iters| time(handles, &verdict, row, iters))
            });
        }
        group.finish();
    }
    criterion.final_summary();

    let args: Vec<String> = std::env::args().collect();
    let bench_mode =
        args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list");
    let (rounds, iters) = if bench_mode { (41, 200_000) } else { (1, 10) };
    let what = if bench_mode {
        ""
    } else {
        " (test mode: checks that the summary runs; the figures mean nothing)"
    };
    println!("\notel_metrics: medians of {rounds} interleaved rounds of {iters} records{what}");
    println!(
        "  {:<20} {:>16} {:>20} {:>8}",
        "row", "prometheus ns", "prometheus+otel ns", "ratio"
    );
    for (row_name, row) in ROWS {
        let (mut alone, mut both, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            let a = time(&recorders[0].1, &verdict, row, iters).as_nanos() as f64 / iters as f64;
            let b = time(&recorders[1].1, &verdict, row, iters).as_nanos() as f64 / iters as f64;
            alone.push(a);
            both.push(b);
            ratios.push(b / a);
        }
        println!(
            "  {:<20} {:>16.1} {:>20.1} {:>7.2}x",
            row_name,
            median(alone),
            median(both),
            median(ratios)
        );
    }
    // The SDK keeps each histogram series behind a mutex: two threads recording into one series
    // take turns.
    let (mut alone, mut both, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let operation = ROWS[1].1;
    for _ in 0..rounds.min(11) {
        let a = time_two_threads(&recorders[0].1, &verdict, operation, iters);
        let b = time_two_threads(&recorders[1].1, &verdict, operation, iters);
        alone.push(a);
        both.push(b);
        ratios.push(b / a);
    }
    println!(
        "  {:<20} {:>16.1} {:>20.1} {:>7.2}x",
        "observe_operation 2t",
        median(alone),
        median(both),
        median(ratios)
    );
    print_fleet_collection(if bench_mode { 11 } else { 1 });
    let _ = provider.shutdown();
}
