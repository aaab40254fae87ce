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
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use futures::FutureExt;
use futures::future::{Ready, ready};
use mcp_readiness::layer::{ReadinessLayer, ReadinessService, execute_tool_span};
use mcp_readiness::{Metrics, Snapshot, StaticInventory, ToolCall, ToolName};
use rmcp::model::CallToolResult;
use tower::{Layer, Service};
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::trace::{Trace, TraceLayer};

use super::threads::Workers;

type Bare = tower::util::ServiceFn<fn(ToolCall) -> Ready<Result<CallToolResult, Infallible>>>;

fn bare() -> Bare {
    fn answer(_call: ToolCall) -> Ready<Result<CallToolResult, Infallible>> {
        ready(Ok(CallToolResult::success(Vec::new())))
    }
    tower::service_fn(answer as fn(ToolCall) -> Ready<Result<CallToolResult, Infallible>>)
}

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

/// One call through `service`, driven to completion without a runtime (everything is ready).
fn call_once<S, R>(service: &mut S, request: R)
where
    S: Service<R>,
{
    let future = service.call(request);
    black_box(future.now_or_never());
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

/// The readiness layer, with metrics, over the bare service; `tool` is a ready cache hit.
fn readiness_service(tool: &ToolName) -> ReadinessService<Bare> {
    let inventory = StaticInventory::new(Snapshot::default().with_ready_tool(tool.as_str()));
    let layer = ReadinessLayer::builder(inventory)
        .metrics(Metrics::new())
        .build();
    let cache = layer.cache().clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    runtime.block_on(cache.resolve(tool));
    assert!(cache.lookup(tool).is_some_and(|v| v.is_ready()));
    layer.layer(bare())
}

/// Benchmarks every row on 1 and 2 threads, in the group `layer/{subscriber}`; then, unless
/// criterion runs in test or list mode, prints the ratios of the goals, measured in
/// interleaved rounds (see [`print_ratios`]).
pub fn bench_rows(c: &mut Criterion, subscriber: &str) {
    let tool = ToolName::parse("mcp__files__read_file");
    let histogram =
        prometheus::Histogram::with_opts(prometheus::HistogramOpts::new("minimum", "minimum"))
            .expect("a valid histogram");
    let readiness = readiness_service(&tool);
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

    let mut group = c.benchmark_group(format!("layer/{subscriber}"));
    group
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    for row in &rows {
        for (threads, workers) in [(1, &row.one), (2, &row.two)] {
            group.bench_function(format!("{}/{threads}t", row.name), |b| {
                b.iter_custom(|iters| workers.run(iters))
            });
        }
    }
    group.finish();

    let args: Vec<String> = std::env::args().collect();
    let bench_mode = args.iter().any(|a| a == "--bench")
        && !args
            .iter()
            .any(|a| a == "--test" || a == "--list" || a == "--profile-time");
    // In test mode (`cargo test --benches`) one short round checks that the summary works.
    let (rounds, calls) = if bench_mode { (41, 20_000) } else { (1, 10) };
    print_ratios(subscriber, &rows, rounds, calls);
}

/// One row's long-lived workers, on 1 and on 2 threads.
struct Measured {
    name: &'static str,
    one: Workers,
    two: Workers,
}

/// Prints what the goals compare, measured in `rounds` interleaved rounds of `calls` calls per
/// thread: each round runs every row on 1 and 2 threads back to back. The overhead ratios are
/// computed within each round and the median over rounds is printed; the scaling column compares
/// the median times. Rows measured seconds apart (as
/// criterion measures them) see a shared virtual machine at different speeds; rows measured
/// within milliseconds of each other see it at the same speed.
fn print_ratios(subscriber: &str, rows: &[Measured], rounds: usize, calls: u64) {
    // ns per call per thread: [row][threads - 1][round]
    let mut ns = vec![[Vec::new(), Vec::new()]; rows.len()];
    for _ in 0..rounds {
        for (row, times) in rows.iter().zip(&mut ns) {
            for (workers, times) in [&row.one, &row.two].into_iter().zip(times.iter_mut()) {
                times.push(workers.run(calls).as_nanos() as f64 / calls as f64);
            }
        }
    }
    let index = |name: &str| rows.iter().position(|r| r.name == name).expect("a row");
    let (bare, bare_http, trace, minimum, readiness) = (
        index("bare"),
        index("bare_http"),
        index("trace_layer"),
        index("minimum"),
        index("readiness"),
    );
    let per_round = |f: &dyn Fn(usize) -> f64| median((0..rounds).map(f).collect());
    let added = |row: usize, base: usize, round: usize| ns[row][0][round] - ns[base][0][round];

    let what = if rounds == 1 {
        " (test mode: checks that the summary runs; the figures mean nothing)"
    } else {
        ""
    };
    println!(
        "\nlayer/{subscriber}: medians of {rounds} interleaved rounds, {calls} calls per thread{what}"
    );
    println!(
        "  {:<12} {:>12} {:>12} {:>22}",
        "row", "1t ns/call", "2t ns/call", "2t/1t calls per second"
    );
    for (row, times) in rows.iter().zip(&ns) {
        let (one, two) = (median(times[0].clone()), median(times[1].clone()));
        // 2 threads make 2 calls per `two` ns; 1 thread makes 1 per `one` ns.
        println!(
            "  {:<12} {:>12.1} {:>12.1} {:>21.2}x",
            row.name,
            one,
            two,
            2.0 * one / two
        );
    }
    let vs_trace = per_round(&|r| added(readiness, bare, r) / added(trace, bare_http, r));
    let vs_minimum = per_round(&|r| added(readiness, bare, r) / added(minimum, bare, r));
    println!("  readiness adds {vs_trace:.2}x what TraceLayer adds (goal: at most 1x)");
    println!("  readiness adds {vs_minimum:.2}x what the minimum adds (goal: at most 1.5x)");
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
