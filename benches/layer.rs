//! What the readiness layer costs on the ready path (a cache hit), next to what users already pay.
//!
//! Rows, each with a plain `tracing_subscriber::Registry` and with a `Registry` +
//! `tracing-opentelemetry` exporting through a batching processor (to an exporter that drops):
//! - `bare`: the inner `service_fn` alone (`ToolCall` in, `CallToolResult` out);
//! - `bare_http` / `trace_layer`: an http `service_fn` alone and inside tower-http's `TraceLayer`
//!   (what tracing an HTTP call costs users today; compare the difference);
//! - `minimum`: a hand-written minimum: one span with the same fields + one pre-resolved histogram
//!   observation around the bare service;
//! - `readiness`: `ReadinessLayer` (with metrics) around the bare service, ready cache hit.
//!
//! Each row runs on 1 and on 2 threads, the same number of calls per thread; compare time per
//! call: equal time on 2 threads means twice the calls per second.

// Benchmarks measure wall-clock time on purpose; library code never does (clippy.toml).
#![allow(clippy::disallowed_types)]

use std::convert::Infallible;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/threads.rs"]
mod threads;
use futures::FutureExt;
use futures::future::{Ready, ready};
use mcp_readiness::layer::{ReadinessLayer, execute_tool_span};
use mcp_readiness::{Metrics, Snapshot, StaticInventory, ToolCall, ToolName};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use rmcp::model::CallToolResult;
use tower::{Layer, Service};
use tower_http::trace::TraceLayer;
use tracing::Dispatch;
use tracing_subscriber::layer::SubscriberExt;

#[derive(Debug)]
struct DropExporter;

impl SpanExporter for DropExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        black_box(batch);
        Ok(())
    }
}

fn subscribers() -> Vec<(&'static str, Dispatch, Option<SdkTracerProvider>)> {
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(DropExporter)
        .build();
    let otel = tracing_opentelemetry::layer().with_tracer(provider.tracer("bench"));
    vec![
        (
            "registry",
            Dispatch::new(tracing_subscriber::registry()),
            None,
        ),
        (
            "registry+otel",
            Dispatch::new(tracing_subscriber::registry().with(otel)),
            Some(provider),
        ),
    ]
}

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

#[derive(Clone, Copy, Debug)]
enum Variant {
    Bare,
    BareHttp,
    TraceLayer,
    Minimum,
    Readiness,
}

/// Runs `iters` calls of `variant` on this thread; returns the elapsed time.
fn run(variant: Variant, iters: u64, tool: &ToolName) -> Duration {
    match variant {
        Variant::Bare => {
            let mut service = bare();
            let start = Instant::now();
            for _ in 0..iters {
                call_once(&mut service, ToolCall::new(tool.clone()));
            }
            start.elapsed()
        }
        Variant::BareHttp => {
            let mut service = bare_http();
            let start = Instant::now();
            for _ in 0..iters {
                call_once(&mut service, http::Request::new(String::new()));
            }
            start.elapsed()
        }
        Variant::TraceLayer => {
            let mut service = TraceLayer::new_for_http().layer(bare_http());
            let start = Instant::now();
            for _ in 0..iters {
                call_once(&mut service, http::Request::new(String::new()));
            }
            start.elapsed()
        }
        Variant::Minimum => {
            let mut service = bare();
            let histogram = minimum_histogram();
            let start = Instant::now();
            for _ in 0..iters {
                let span = execute_tool_span(tool);
                let _entered = span.enter();
                let began = tokio::time::Instant::now();
                call_once(&mut service, ToolCall::new(tool.clone()));
                histogram.observe(began.elapsed().as_secs_f64());
            }
            start.elapsed()
        }
        Variant::Readiness => unreachable!("run_readiness"),
    }
}

fn minimum_histogram() -> prometheus::Histogram {
    static HISTOGRAM: std::sync::OnceLock<prometheus::Histogram> = std::sync::OnceLock::new();
    HISTOGRAM
        .get_or_init(|| {
            prometheus::Histogram::with_opts(prometheus::HistogramOpts::new("minimum", "minimum"))
                .expect("a valid histogram")
        })
        .clone()
}

fn readiness_service(tool: &ToolName) -> impl Service<ToolCall> + Clone + Send + 'static {
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
    layer.layer(tower::util::MapErr::new(bare(), |e: Infallible| match e {}))
}

fn bench_layer(c: &mut Criterion) {
    let tool = ToolName::parse("mcp__files__read_file");
    for (subscriber, dispatch, provider) in subscribers() {
        let mut group = c.benchmark_group(format!("layer/{subscriber}"));
        group
            .measurement_time(Duration::from_secs(3))
            .warm_up_time(Duration::from_secs(1));
        let readiness = readiness_service(&tool);
        for variant in [
            Variant::Bare,
            Variant::BareHttp,
            Variant::TraceLayer,
            Variant::Minimum,
            Variant::Readiness,
        ] {
            for threads in [1usize, 2] {
                let name = format!("{variant:?}/{threads}t").to_lowercase();
                group.bench_function(name, |b| {
                    b.iter_custom(|iters| {
                        let (dispatch, tool, readiness) =
                            (dispatch.clone(), tool.clone(), readiness.clone());
                        threads::on_threads(
                            threads,
                            move || {
                                // Each thread owns its name, as each caller would: a shared `Arc`
                                // would make every row pay for refcount bouncing.
                                let tool = ToolName::parse(tool.as_str());
                                (dispatch.clone(), tool, readiness.clone(), variant, iters)
                            },
                            |(dispatch, tool, mut readiness, variant, iters)| {
                                tracing::dispatcher::with_default(&dispatch, || match variant {
                                    Variant::Readiness => {
                                        let start = Instant::now();
                                        for _ in 0..iters {
                                            call_once(&mut readiness, ToolCall::new(tool.clone()));
                                        }
                                        start.elapsed()
                                    }
                                    other => run(other, iters, &tool),
                                })
                            },
                        )
                    })
                });
            }
        }
        group.finish();
        if let Some(provider) = provider {
            let _ = provider.shutdown();
        }
    }
}

criterion_group!(benches, bench_layer);
criterion_main!(benches);
