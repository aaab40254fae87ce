//! The readiness layer in front of a real Hub and a real MCP server process: reconnect on use,
//! trace context reaching the server, spans exported through the OpenTelemetry SDK.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_readiness::layer::{NotReady, ReadinessLayer};
use mcp_readiness::supervise::HubOptions;
use mcp_readiness::{Budget, Hub, Metrics, ServerSpec, State, ToolCall, TransportSpec};
use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use rmcp::model::{CallToolResult, ContentBlock};
use tower::{ServiceBuilder, ServiceExt};
use tracing_subscriber::layer::SubscriberExt;

#[derive(Debug, Clone, Default)]
struct Collect(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collect {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().unwrap().extend(batch);
        Ok(())
    }
}

fn stdio(name: &str, env: &[(&str, &str)]) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        transport: TransportSpec::Stdio {
            command: common::fixture().display().to_string(),
            args: Vec::new(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), (*v).into()))
                .collect::<BTreeMap<_, _>>(),
            cwd: None,
        },
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a OtelValue> {
    span.attributes
        .iter()
        .find(|kv: &&KeyValue| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

#[tokio::test]
async fn the_server_receives_the_client_spans_trace_context_and_the_span_is_exported() {
    let exporter = Collect::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("end-to-end")));
    let _default = tracing::subscriber::set_default(subscriber);

    let hub = Hub::new(
        vec![stdio("fx", &[])],
        HubOptions::default().health_interval(None),
    )
    .unwrap();
    let metrics = Metrics::new();
    let layer = ReadinessLayer::builder(hub.clone())
        .budget(Budget::try_new(Duration::from_secs(20), Duration::from_millis(200)).unwrap())
        .metrics(metrics.clone())
        .build();
    let service = ServiceBuilder::new().layer(layer).service(hub.clone());

    // The server was never used: resolving its tool starts it (reconnect on use), then the call runs.
    let result = service
        .clone()
        .oneshot(ToolCall::new("mcp__fx__echo_meta"))
        .await
        .expect("the call succeeds");
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
    assert_eq!(
        attribute(span, "mcp.method.name")
            .map(|v| v.as_str().into_owned())
            .as_deref(),
        Some("tools/call")
    );
    assert_eq!(
        attribute(span, "gen_ai.tool.name")
            .map(|v| v.as_str().into_owned())
            .as_deref(),
        Some("echo_meta")
    );
    assert_eq!(
        attribute(span, "network.transport")
            .map(|v| v.as_str().into_owned())
            .as_deref(),
        Some("pipe")
    );
    assert_eq!(
        attribute(span, "mcp_readiness.server")
            .map(|v| v.as_str().into_owned())
            .as_deref(),
        Some("fx")
    );
    assert_eq!(
        attribute(span, "mcp_readiness.state")
            .map(|v| v.as_str().into_owned())
            .as_deref(),
        Some("ready")
    );
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

#[tokio::test]
async fn a_child_that_died_between_calls_is_reconnected_by_the_next_call_through_the_layer() {
    let hub = Hub::new(
        vec![stdio("fx", &[])],
        HubOptions::default().health_interval(None),
    )
    .unwrap();
    let layer = ReadinessLayer::builder(hub.clone())
        .budget(Budget::try_new(Duration::from_secs(20), Duration::from_millis(200)).unwrap())
        .build();
    let service = ServiceBuilder::new().layer(layer).service(hub.clone());

    let first = service
        .clone()
        .oneshot(ToolCall::new("mcp__fx__pid"))
        .await
        .expect("first call");
    let pid: i32 = text(&first)
        .trim()
        .parse()
        .expect("the fixture answers its pid");
    let generation = hub.generation("fx");
    // The child exits on its own: the supervisor notices without any call.
    let _ = service
        .clone()
        .oneshot(ToolCall::new("mcp__fx__exit"))
        .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while hub.state("fx") == Some(State::Ready) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_ne!(
        hub.state("fx"),
        Some(State::Ready),
        "the drop was detected without a call"
    );

    let second = service
        .oneshot(ToolCall::new("mcp__fx__pid"))
        .await
        .expect("the next call reconnects");
    let new_pid: i32 = text(&second).trim().parse().unwrap();
    assert_ne!(pid, new_pid, "a fresh child answered");
    assert!(hub.generation("fx") > generation);
    hub.shutdown().await;
}

#[tokio::test]
async fn a_missing_command_is_refused_as_absent_naming_the_command_without_calling_it() {
    let spec = ServerSpec {
        name: "gone".into(),
        transport: TransportSpec::Stdio {
            command: "/nonexistent/mcp-server".into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
        },
    };
    let hub = Hub::new(vec![spec], HubOptions::default().health_interval(None)).unwrap();
    let service = ServiceBuilder::new()
        .layer(ReadinessLayer::new(hub.clone()))
        .service(hub.clone());
    let err = service
        .oneshot(ToolCall::new("mcp__gone__x"))
        .await
        .unwrap_err();
    let not_ready = err
        .downcast_ref::<NotReady>()
        .expect("NotReady, not a transport error");
    assert_eq!(not_ready.state, State::Absent);
    assert!(
        not_ready.to_string().contains("/nonexistent/mcp-server"),
        "{not_ready}"
    );
    assert!(not_ready.waited < Duration::from_secs(5));
    hub.shutdown().await;
}
