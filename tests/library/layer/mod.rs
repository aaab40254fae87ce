//! The readiness layer's room: spans, outcomes, metrics and hooks per state ([`outcomes`]), the
//! ready path's cached verdict ([`ready_path`]) and what a ready call allocates ([`allocations`]),
//! and any inner service ([`inner_service`]), with a capturing subscriber and tokio's paused clock.
//! The shared world: four servers, one per state.

mod allocations;
mod inner_service;
mod outcomes;
mod ready_path;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use mcp_readiness::state::CallOutcome;
use mcp_readiness::{Budget, Metrics, Snapshot, State, StaticInventory, ToolCall, ToolName};
use mcp_readiness::{
    NotReady, ReadinessLayer,
    layer::{ReadinessLayerBuilder, execute_tool_span},
};
use rmcp::model::{CallToolResult, ContentBlock};
use tower::{BoxError, Service, ServiceBuilder, ServiceExt};

use crate::support::call::{call, refusal};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

// ------------------------------------------------------------ a capturing subscriber

#[derive(Debug, Clone, Default)]
struct CapturedSpan {
    name: String,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<CapturedSpan>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

struct Index(usize);

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut span = CapturedSpan {
            name: attrs.metadata().name().to_owned(),
            ..Default::default()
        };
        attrs.record(&mut Fields(&mut span.fields));
        let mut spans = self.0.lock().unwrap();
        spans.push(span);
        if let Some(s) = ctx.span(id) {
            s.extensions_mut().insert(Index(spans.len() - 1));
        }
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(s) = ctx.span(id)
            && let Some(Index(i)) = s.extensions().get::<Index>()
        {
            values.record(&mut Fields(&mut self.0.lock().unwrap()[*i].fields));
        }
    }
}

impl Capture {
    fn install(&self) -> tracing::subscriber::DefaultGuard {
        let guard =
            tracing::subscriber::set_default(tracing_subscriber::registry().with(self.clone()));
        // Callsite interest is cached process-wide; recompute it now that this thread has a
        // subscriber, so a concurrent test cannot leave our spans disabled.
        tracing::callsite::rebuild_interest_cache();
        guard
    }
    fn spans(&self) -> Vec<CapturedSpan> {
        self.0.lock().unwrap().clone()
    }
    fn only_span(&self) -> CapturedSpan {
        let spans = self.spans();
        assert_eq!(spans.len(), 1, "exactly one span: {spans:#?}");
        spans[0].clone()
    }
}

// ------------------------------------------------------------ a world of four states

fn inventory() -> StaticInventory {
    StaticInventory::new(
        Snapshot::default()
            .with_ready_tool("mcp__files__read")
            .with_ready_tool("mcp__files__fail")
            .with_ready_tool("mcp__files__broken")
            .with_ready_tool("mcp__files__hang")
            .with_unauthenticated_server("chat")
            .with_reason("chat", "HTTP 401 with a WWW-Authenticate challenge")
            .with_pending_server("search"),
    )
}

/// An inner service that answers by tool name and counts its calls.
#[derive(Clone, Default)]
struct Servers {
    calls: Arc<AtomicUsize>,
    metas: Arc<Mutex<Vec<serde_json::Map<String, serde_json::Value>>>>,
}

impl Service<ToolCall> for Servers {
    type Response = CallToolResult;
    type Error = BoxError;
    type Future = futures::future::BoxFuture<'static, Result<CallToolResult, BoxError>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), BoxError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ToolCall) -> Self::Future {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.metas
            .lock()
            .unwrap()
            .push(call.meta.clone().unwrap_or_default());
        async move {
            match call.name.tool() {
                "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(
                    "no such message",
                )])),
                "broken" => Err("connection reset by peer".into()),
                "hang" => futures::future::pending().await,
                _ => Ok(CallToolResult::success(vec![ContentBlock::text("ok")])),
            }
        }
        .boxed()
    }
}

fn layer(metrics: &Metrics) -> ReadinessLayer {
    layer_builder(metrics).build()
}

fn layer_builder(metrics: &Metrics) -> ReadinessLayerBuilder {
    ReadinessLayer::builder(inventory())
        .budget(Budget::try_new(Duration::from_secs(4), Duration::from_secs(1)).unwrap())
        .metrics(metrics.clone())
}

/// A capturing subscriber (and its guard), a recorder, the inner `Servers` and the layer over
/// them: what most tests start from.
fn world() -> (
    Capture,
    tracing::subscriber::DefaultGuard,
    Metrics,
    Servers,
    mcp_readiness::layer::ReadinessService<Servers>,
) {
    let capture = Capture::default();
    let guard = capture.install();
    let metrics = Metrics::new();
    let servers = Servers::default();
    let service = ServiceBuilder::new()
        .layer(layer(&metrics))
        .service(servers.clone());
    (capture, guard, metrics, servers, service)
}

fn metric_line(metrics: &Metrics, needle: &str) -> Option<String> {
    metrics
        .render()
        .lines()
        .find(|l| l.starts_with(needle))
        .map(str::to_owned)
}

/// Asserts the exposition has a line starting with `line`, showing the whole text when not.
#[track_caller]
fn assert_metric(metrics: &Metrics, line: &str) {
    assert!(
        metric_line(metrics, line).is_some(),
        "missing `{line}` in:\n{}",
        metrics.render()
    );
}
