//! The rows of the layer benchmarks; `benches/layer.rs` runs them under a plain
//! `tracing_subscriber::Registry`, `benches/layer_otel.rs` under a `Registry` +
//! `tracing-opentelemetry` exporting through a batching processor.
//!
//! - `bare`: the inner `service_fn` alone (`ToolCall` in, `CallToolResult` out);
//! - `bare_http` / `trace_layer`: an http `service_fn` alone and inside tower-http's `TraceLayer`
//!   (what tracing an HTTP call costs users today; compare the difference);
//! - `span`: only the span the minimum opens (same fields, entered once) around the bare service:
//!   how far any row that opens a span can scale on this machine;
//! - `minimum`: a hand-written minimum: one span with the same fields + one pre-resolved histogram
//!   observation around the bare service;
//! - `readiness`: `ReadinessLayer` (with metrics) around the bare service, ready cache hit.
//!
//! Each row runs on 1 and on 2 long-lived threads (see `threads.rs`), the same number of calls per
//! thread; compare time per call: equal time on 2 threads means twice the calls per second.
//!
//! The subscriber is the process-wide default, as in a service that called `telemetry::init` (or
//! `tracing_subscriber::...::init()`): spans then hold no reference-counted dispatcher, which a
//! scoped default (`with_default`) would add to every row.

// Benchmarks measure wall-clock time on purpose; library code never does (clippy.toml).
#![allow(clippy::disallowed_types)]

use std::convert::Infallible;
use std::time::{Duration, Instant};

use criterion::Criterion;
use futures::future::{Ready, ready};
use mcp_readiness::layer::{ReadinessService, execute_tool_span};
use mcp_readiness::{ToolCall, ToolName};
use tower::Layer;
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::trace::{Trace, TraceLayer};

use super::bare::{Bare, bare, call_once, readiness_service};
use super::rounds::{Measured, Rounds, bench_criterion, index};
use super::threads::Workers;

type BareHttp = tower::util::ServiceFn<
    fn(http::Request<String>) -> Ready<Result<http::Response<String>, Infallible>>,
>;

fn bare_http() -> BareHttp {
    fn answer(
        _request: http::Request<String>,
    ) -> Ready<Result<http::Response<String>, Infallible>> {
        ready(Ok(http::Response::new(String::new())))
    }
    tower::service_fn(
        answer as fn(http::Request<String>) -> Ready<Result<http::Response<String>, Infallible>>,
    )
}

/// What one worker thread owns for its row.
enum Row {
    Bare(Bare),
    BareHttp(BareHttp),
    TraceLayer(Trace<BareHttp, SharedClassifier<ServerErrorsAsFailures>>),
    Span(Bare),
    Minimum(Bare, prometheus::Histogram),
    Readiness(ReadinessService<Bare>),
}

impl Row {
    fn name(&self) -> &'static str {
        match self {
            Row::Bare(_) => "bare",
            Row::BareHttp(_) => "bare_http",
            Row::TraceLayer(_) => "trace_layer",
            Row::Span(_) => "span",
            Row::Minimum(..) => "minimum",
            Row::Readiness(_) => "readiness",
        }
    }
}

/// Runs `iters` calls of the row on this thread; returns the elapsed time.
fn run((row, tool): &mut (Row, ToolName), iters: u64) -> Duration {
    let start = Instant::now();
    match row {
        Row::Bare(service) => {
            for _ in 0..iters {
                call_once(service, ToolCall::new(tool.clone()));
            }
        }
        Row::BareHttp(service) => {
            for _ in 0..iters {
                call_once(service, http::Request::new(String::new()));
            }
        }
        Row::TraceLayer(service) => {
            for _ in 0..iters {
                call_once(service, http::Request::new(String::new()));
            }
        }
        Row::Span(service) => {
            for _ in 0..iters {
                let span = execute_tool_span(tool);
                let _entered = span.enter();
                call_once(service, ToolCall::new(tool.clone()));
            }
        }
        Row::Minimum(service, histogram) => {
            for _ in 0..iters {
                let span = execute_tool_span(tool);
                let _entered = span.enter();
                let began = tokio::time::Instant::now();
                call_once(service, ToolCall::new(tool.clone()));
                histogram.observe(began.elapsed().as_secs_f64());
            }
        }
        Row::Readiness(service) => {
            for _ in 0..iters {
                call_once(service, ToolCall::new(tool.clone()));
            }
        }
    }
    start.elapsed()
}

/// Benchmarks every row on 1 and 2 threads, in the group `layer/{subscriber}`; then, unless
/// criterion runs in test or list mode, prints the ratios of the goals, measured in
/// interleaved rounds (see [`print_ratios`]).
pub fn bench_rows(c: &mut Criterion, subscriber: &str) {
    let tool = ToolName::parse("mcp__files__read_file");
    let histogram =
        prometheus::Histogram::with_opts(prometheus::HistogramOpts::new("minimum", "minimum"))
            .expect("a valid histogram");
    let readiness = readiness_service(&tool, true);
    let makers: [fn(&ReadinessService<Bare>, &prometheus::Histogram) -> Row; 6] = [
        |_, _| Row::Bare(bare()),
        |_, _| Row::BareHttp(bare_http()),
        |_, _| Row::TraceLayer(TraceLayer::new_for_http().layer(bare_http())),
        |_, _| Row::Span(bare()),
        |_, histogram| Row::Minimum(bare(), histogram.clone()),
        |readiness, _| Row::Readiness(readiness.clone()),
    ];
    let rows: Vec<Measured> = makers
        .into_iter()
        .map(|make| {
            let on = |threads| {
                let (readiness, histogram, tool) =
                    (readiness.clone(), histogram.clone(), tool.clone());
                Workers::start(
                    threads,
                    // Each thread owns its service and its name, as each caller would: a shared
                    // `Arc` would make every row pay for reference counts bouncing between cores.
                    move || (make(&readiness, &histogram), ToolName::parse(tool.as_str())),
                    run,
                )
            };
            Measured {
                name: make(&readiness, &histogram).name(),
                one: on(1),
                two: on(2),
            }
        })
        .collect();

    bench_criterion(c, &format!("layer/{subscriber}"), &rows);
    print_ratios(subscriber, &rows);
}

/// Prints what the goals compare, measured in interleaved rounds (see [`Rounds`]): the overhead
/// ratios are computed within each round and the median over rounds is printed; the scaling
/// column compares the median times.
fn print_ratios(subscriber: &str, rows: &[Measured]) {
    let measured = Rounds::measure(rows);
    measured.print_table(&format!("layer/{subscriber}"), rows);
    let (bare, bare_http, trace, minimum, readiness) = (
        index(rows, "bare"),
        index(rows, "bare_http"),
        index(rows, "trace_layer"),
        index(rows, "minimum"),
        index(rows, "readiness"),
    );
    let added = |row, base, round| measured.added(row, base, round);
    let vs_trace = measured.per_round(&|r| added(readiness, bare, r) / added(trace, bare_http, r));
    let vs_minimum = measured.per_round(&|r| added(readiness, bare, r) / added(minimum, bare, r));
    println!("  readiness adds {vs_trace:.2}x what TraceLayer adds (goal: at most 1x)");
    println!("  readiness adds {vs_minimum:.2}x what the minimum adds (goal: at most 1.5x)");
}
