//! Trace context reaches the server: a call through the readiness layer and a real Hub carries the
//! client span's `traceparent` in `_meta` to a real MCP server process, and the span is exported
//! through the OpenTelemetry SDK.
//!
//! Alone in its binary on purpose: `tracing` caches callsite interest process-wide, and a test on
//! another thread that creates the same spans with no subscriber can race the scoped subscriber
//! installed here.

use std::time::Duration;

use mcp_readiness::HubOptions;
use mcp_readiness::ReadinessLayer;
use mcp_readiness::{Budget, Hub, Metrics};
use mcp_readiness_fixtures::call::answer;
use mcp_readiness_fixtures::{stdio, text};
use opentelemetry::trace::SpanKind;
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::trace::SpanData;
use tower::ServiceBuilder;

#[path = "support/spans.rs"]
mod spans;
use spans::collect_spans;

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a OtelValue> {
    span.attributes
        .iter()
        .find(|kv: &&KeyValue| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

#[tokio::test]
async fn the_server_receives_the_client_spans_trace_context_and_the_span_is_exported() {
    let (exporter, provider, _default) = collect_spans("end-to-end");

    let hub = Hub::new(
        vec![stdio("fx", &[])],
        HubOptions::builder().health_interval(None),
    )
    .unwrap();
    let metrics = Metrics::new();
    let layer = ReadinessLayer::builder(hub.clone())
        .budget(Budget::try_new(Duration::from_secs(20), Duration::from_millis(200)).unwrap())
        .metrics(metrics.clone())
        .build();
    let service = ServiceBuilder::new().layer(layer).service(hub.clone());

    // The server was never used: resolving its tool starts it (reconnect on use), then the call runs.
    let result = answer(&service, "mcp__fx__echo_meta").await;
    let meta: serde_json::Value =
        serde_json::from_str(&text(&result)).expect("the fixture echoes _meta as JSON");
    let traceparent = meta["traceparent"]
        .as_str()
        .expect("traceparent reached the server")
        .to_owned();

    let _ = provider.force_flush();
    let spans = exporter.0.lock().unwrap().clone();
    let span = spans
        .iter()
        .find(|s| s.name == "tools/call echo_meta")
        .expect("the call's span was exported");
    assert_eq!(
        traceparent,
        format!(
            "00-{}-{}-01",
            span.span_context.trace_id(),
            span.span_context.span_id()
        ),
        "the server joins the client span's trace"
    );
    assert_eq!(span.span_kind, SpanKind::Client);
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "echo_meta"),
        ("network.transport", "pipe"),
        ("mcp_readiness.server", "fx"),
        ("mcp_readiness.state", "ready"),
    ] {
        assert_eq!(
            attribute(span, key)
                .map(|v| v.as_str().into_owned())
                .as_deref(),
            Some(value),
            "{key}"
        );
    }
    assert!(
        matches!(attribute(span, "mcp_readiness.waited_ms"), Some(OtelValue::I64(ms)) if *ms >= 0)
    );

    let text = metrics.render();
    assert!(
        text.contains(
            r#"mcp_readiness_tool_calls_total{outcome="ok",server="fx",tool="echo_meta"} 1"#
        ),
        "{text}"
    );
    hub.shutdown().await;
}
