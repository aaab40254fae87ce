//! The rows of the layer benchmarks; `benches/layer.rs` runs them under a plain
//! `tracing_subscriber::Registry`, `benches/layer_otel.rs` under a `Registry` +
//! `tracing-opentelemetry` exporting through a batching processor.
//!
//! - `bare`: the inner `service_fn` alone (`ToolCall` in, `CallToolResult` out);
//! - `minimum`: the hand-built minimum of the goals (`minimum.rs`) around the bare service;
//! - `contract`: the minimum with the layer's span contract written by hand (`contract.rs`): every
//!   field of the layer's span, `traceparent` into `_meta`, the span entered twice;
//! - `readiness`: `ReadinessLayer` (with metrics) around the bare service, ready cache hit, built
//!   as a service builds it (`bare.rs`);
//! - `bare_http` / `trace_layer`: an http `service_fn` alone and inside tower-http's `TraceLayer`
//!   (what tracing an HTTP call costs users today; compare the difference).
//!
//! Every call is `ToolCall::new(tool.clone())` of one `ToolName`, as a service calls a tool it
//! holds. Each row runs on 1 and on 2 long-lived threads (see `threads.rs`), the same number of
//! calls per thread, timed in each thread's CPU time (the time other processes take the core away
//! does not count; neither does the batch exporter's thread under OpenTelemetry).
//!
//! The subscriber is the process-wide default, as in a service that called `telemetry::init` (or
//! `tracing_subscriber::...::init()`): spans then hold no reference-counted dispatcher, which a
//! scoped default (`with_default`) would add to every row.

use std::convert::Infallible;
use std::time::Duration;

use criterion::Criterion;
use futures::future::{Ready, ready};
use mcp_readiness::layer::ReadinessService;
use mcp_readiness::{ToolCall, ToolName};
use tower::Layer;
use tower_http::classify::{ServerErrorsAsFailures, SharedClassifier};
use tower_http::trace::{Trace, TraceLayer};

use super::bare::{Bare, bare, call_once, readiness_service};
use super::contract;
use super::minimum::Minimum;
use super::rounds::{Measured, Rounds, bench_criterion, index, timed};
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
    Minimum(Bare, Minimum),
    Contract(Bare, Minimum),
    Readiness(ReadinessService<Bare>),
    BareHttp(BareHttp),
    TraceLayer(Trace<BareHttp, SharedClassifier<ServerErrorsAsFailures>>),
}

const ROWS: [&str; 6] = [
    "bare",
    "minimum",
    "contract",
    "readiness",
    "bare_http",
    "trace_layer",
];

/// Runs `iters` calls of the row on this thread; returns the CPU time it took.
fn run((row, tool): &mut (Row, ToolName), iters: u64) -> Duration {
    match row {
        Row::Bare(service) => timed(iters, || call_once(service, ToolCall::new(tool.clone()))),
        Row::Minimum(service, minimum) => timed(iters, || minimum.call(service, tool)),
        Row::Contract(service, minimum) => timed(iters, || contract::call(minimum, service, tool)),
        Row::Readiness(service) => timed(iters, || call_once(service, ToolCall::new(tool.clone()))),
        Row::BareHttp(service) => timed(iters, || {
            call_once(service, http::Request::new(String::new()))
        }),
        Row::TraceLayer(service) => timed(iters, || {
            call_once(service, http::Request::new(String::new()))
        }),
    }
}

/// Benchmarks every row on 1 and 2 threads, in the group `layer/{subscriber}`; then prints the
/// goal's ratio (the ready path's addition over the minimum's, at most `goal`), measured in
/// interleaved rounds (see [`print_ratios`]).
pub fn bench_rows(c: &mut Criterion, subscriber: &str, goal: f64) {
    let tool = ToolName::parse("mcp__files__read_file");
    let readiness = readiness_service(&tool, true);
    let minimum = Minimum::new();
    let rows: Vec<Measured> = ROWS
        .into_iter()
        .map(|name| {
            let on = |threads| {
                let (readiness, minimum, tool) = (readiness.clone(), minimum.clone(), tool.clone());
                Workers::start(
                    threads,
                    // Each thread owns its service, as each caller would; the name is shared.
                    move || {
                        let row = match name {
                            "bare" => Row::Bare(bare()),
                            "minimum" => Row::Minimum(bare(), minimum.clone()),
                            "contract" => Row::Contract(bare(), minimum.clone()),
                            "readiness" => Row::Readiness(readiness.clone()),
                            "bare_http" => Row::BareHttp(bare_http()),
                            _ => Row::TraceLayer(TraceLayer::new_for_http().layer(bare_http())),
                        };
                        (row, tool.clone())
                    },
                    run,
                )
            };
            Measured::on_one_and_two(name, on)
        })
        .collect();

    bench_criterion(c, &format!("layer/{subscriber}"), &rows);
    print_ratios(subscriber, &rows, goal);
}

/// Prints what the goals compare, measured in interleaved rounds (see [`Rounds`]): the overhead
/// ratios are computed within each round and the median over rounds is printed.
fn print_ratios(subscriber: &str, rows: &[Measured], goal: f64) {
    let measured = Rounds::measure(rows);
    measured.print_table(&format!("layer/{subscriber}"), rows);
    let (bare, bare_http, trace, minimum, readiness) = (
        index(rows, "bare"),
        index(rows, "bare_http"),
        index(rows, "trace_layer"),
        index(rows, "minimum"),
        index(rows, "readiness"),
    );
    measured.print_goal(subscriber, bare, minimum, readiness, goal);
    let added = |row, base, round| measured.added(row, base, round);
    let contract = index(rows, "contract");
    let contract_ratio =
        measured.per_round(&|r| added(contract, bare, r) / added(minimum, bare, r));
    let layer_ratio = measured.per_round(&|r| added(readiness, bare, r) / added(contract, bare, r));
    let beyond_contract = measured.per_round(&|r| added(readiness, contract, r));
    println!(
        "  CONTRACT {subscriber}: the span contract by hand adds {contract_ratio:.2}x what the \
         minimum adds; readiness adds {layer_ratio:.2}x what the contract by hand adds \
         ({beyond_contract:.1} ns beyond it)"
    );
    let vs_trace = measured.per_round(&|r| added(readiness, bare, r) / added(trace, bare_http, r));
    println!("  readiness adds {vs_trace:.2}x what TraceLayer adds");
}
