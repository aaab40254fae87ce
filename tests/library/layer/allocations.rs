//! What a ready call allocates: nothing (`src/ready_path/`'s rule "no allocation") with no
//! subscriber and under a `Registry`; under OpenTelemetry, no more than the same span and trace
//! propagation written by hand (docs/benchmarks.md, "What a ready call allocates"); and that the
//! span written by hand (the fixtures' `span_contract`, also the layer benches' `contract` row)
//! declares what the layer's span declares.
//!
//! Counted on the calling thread by `allocation-counter` (this test binary's global allocator),
//! after a first call that resolves the tool and warm-up calls that fill the subscriber's
//! per-thread storage; every call is driven to completion at once, as the inner service answers
//! at once.

use std::convert::Infallible;
use std::sync::atomic::AtomicU64;

use futures::future::{Ready, ready};
use mcp_readiness_fixtures::span_contract::{self, ready_call_span};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tower::Layer;

use super::*;

/// Calls counted per measurement.
const CALLS: u64 = 200;

/// Calls before the counted ones.
const WARM_UP: u64 = 100;

type Answer = Ready<Result<CallToolResult, Infallible>>;

/// The inner service's answer: an empty success at once, allocating nothing, so every
/// allocation counted is the layer's or its subscriber's.
fn answer(_call: ToolCall) -> Answer {
    ready(Ok(CallToolResult::success(Vec::new())))
}

fn answering() -> tower::util::ServiceFn<fn(ToolCall) -> Answer> {
    tower::service_fn(answer as fn(ToolCall) -> Answer)
}

/// Runs `call` [`WARM_UP`] times, then counts the allocations of [`CALLS`] more on this thread.
fn allocations_of(mut call: impl FnMut()) -> u64 {
    for _ in 0..WARM_UP {
        call();
    }
    allocation_counter::measure(|| {
        for _ in 0..CALLS {
            call();
        }
    })
    .count_total
}

/// Allocations of ready calls of `mcp__files__read` through this room's layer (the four-state
/// world, with metrics), under this thread's default subscriber.
fn allocations_of_ready_calls() -> u64 {
    let tool = ToolName::parse("mcp__files__read");
    let mut service = layer(&Metrics::new()).layer(answering());
    // The first call resolves the tool (inside a runtime, as in a service); the later calls are
    // ready hits and need none.
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(async {
            service
                .ready()
                .await?
                .call(ToolCall::new(tool.clone()))
                .await
        })
        .expect("the first call resolves the ready tool");
    allocations_of(|| {
        let answered = service.call(ToolCall::new(tool.clone())).now_or_never();
        assert!(
            matches!(answered, Some(Ok(_))),
            "a ready hit answers at once"
        );
    })
}

/// Allocations of the same calls without the layer, traced by hand as the span contract asks:
/// the fixtures' `tools/call` span with the values the layer records on a ready call (its name,
/// kind, the semantic-convention attributes and ours; this room's world knows no transport),
/// entered once around the call, and the trace context written into the call's `_meta`.
fn allocations_of_calls_traced_by_hand() -> u64 {
    let tool = ToolName::parse("mcp__files__read");
    let otel_name = format!("tools/call {}", tool.tool());
    let mut inner = answering();
    allocations_of(|| {
        let span = ready_call_span(tool.server(), tool.tool(), &otel_name, None);
        let mut call = ToolCall::new(tool.clone());
        let mut meta = serde_json::Map::new();
        mcp_readiness::telemetry::inject_trace_context(&span, &mut meta);
        call.meta = Some(meta);
        let _entered = span.enter();
        let answered = inner.call(call).now_or_never();
        assert!(matches!(answered, Some(Ok(_))));
    })
}

/// The target, name and field names of `span` (sorted), opened under a `Registry`.
fn shape_of(
    open: impl FnOnce() -> tracing::Span,
) -> (&'static str, &'static str, Vec<&'static str>) {
    tracing::subscriber::with_default(registry(), || {
        let span = open();
        let metadata = span
            .metadata()
            .expect("an info span is enabled under the registry");
        let mut fields: Vec<_> = metadata.fields().iter().map(|field| field.name()).collect();
        fields.sort_unstable();
        (metadata.target(), metadata.name(), fields)
    })
}

/// The span written by hand is compared with the layer's (here and in the layer benches'
/// `contract` row), so it must stay the layer's span: the same target, name and fields.
#[test]
fn the_span_written_by_hand_declares_what_the_layers_span_declares() {
    let tool = ToolName::parse("mcp__files__read");
    let by_hand = shape_of(|| ready_call_span(tool.server(), tool.tool(), "tools/call read", None));
    let layers = shape_of(|| mcp_readiness::layer::execute_tool_span(&tool));
    assert_eq!(by_hand, layers);
    assert_eq!(span_contract::TARGET, mcp_readiness::layer::SPAN_TARGET);
}

/// A `Registry` as services install it, with a layer (here a pass-everything filter, as in
/// `benches/layer.rs`): a `Registry` with no layer at all never frees a closed span's slot
/// (tokio-rs/tracing#900), so it allocates a new page of slots now and then, with or without
/// this crate.
fn registry() -> impl tracing::Subscriber {
    tracing_subscriber::registry().with(tracing_subscriber::filter::LevelFilter::TRACE)
}

#[test]
fn a_ready_call_allocates_nothing_without_a_subscriber() {
    let allocations = tracing::subscriber::with_default(
        tracing::subscriber::NoSubscriber::default(),
        allocations_of_ready_calls,
    );
    assert_eq!(allocations, 0, "allocations in {CALLS} ready calls");
}

#[test]
fn a_ready_call_allocates_nothing_under_a_registry() {
    let allocations = tracing::subscriber::with_default(registry(), allocations_of_ready_calls);
    assert_eq!(allocations, 0, "allocations in {CALLS} ready calls");
}

/// Counts the spans it is given, and drops them.
#[derive(Debug, Default)]
struct CountingExporter(Arc<AtomicU64>);

impl SpanExporter for CountingExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.fetch_add(batch.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}

#[test]
fn under_opentelemetry_a_ready_call_allocates_no_more_than_its_span_traced_by_hand() {
    let exported = Arc::new(AtomicU64::new(0));
    // Exported on the calling thread, so each span is freed where it was made.
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(CountingExporter(exported.clone()))
        .build();
    let dispatch = tracing::Dispatch::new(
        tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("allocations"))),
    );
    let ready = tracing::dispatcher::with_default(&dispatch, allocations_of_ready_calls);
    let by_hand = tracing::dispatcher::with_default(&dispatch, allocations_of_calls_traced_by_hand);
    assert!(
        exported.load(Ordering::Relaxed) >= 2 * (WARM_UP + CALLS),
        "OpenTelemetry exported the spans of both"
    );
    // tracing-opentelemetry copies each string value into a new `String`, and `_meta` takes a
    // map, a key and a value: both sides pay those (about 20 a call here); the layer adds none.
    assert!(by_hand > 0, "tracing-opentelemetry allocates for each span");
    assert!(
        ready <= by_hand,
        "{CALLS} ready calls allocated {ready} times; the same span and propagation by hand {by_hand}"
    );
}
