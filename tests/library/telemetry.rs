//! Telemetry end to end over real sockets: an OTLP receiver started inside each test (gRPC with
//! tonic, HTTP/protobuf with axum) receives a span emitted through `tracing`, with its name, kind,
//! attributes and resource; the `traceparent` injected into `_meta` names the same trace.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_readiness::ReadinessLayer;
use mcp_readiness::telemetry::{
    OtlpConfig, TelemetryConfig, TelemetryError, extract_trace_context, inject_trace_context,
};
use mcp_readiness::{Inventory, Snapshot, StaticInventory, ToolCall};
use opentelemetry::trace::TraceContextExt;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tower::{ServiceBuilder, ServiceExt};

use mcp_readiness_fixtures::otlp::{Received, attr, flatten, start_http_receiver, string_attr};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The world the layer sees: `github` offers `search_issues` over HTTP (`network.transport = tcp`).
struct Github(StaticInventory);

impl Inventory for Github {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        self.0.snapshot()
    }
    fn network_transport(&self, _server: &str) -> Option<&'static str> {
        Some("tcp")
    }
}

/// Makes one call through the real `ReadinessLayer` (so the exported span is the layer's own), and
/// returns the `_meta` the inner service received.
fn emit_tool_call_span() -> Map<String, Value> {
    let inventory = Github(StaticInventory::new(
        Snapshot::default().with_ready_tool("mcp__github__search_issues"),
    ));
    let received = Arc::new(Mutex::new(Map::new()));
    let seen = received.clone();
    let inner = tower::service_fn(move |call: ToolCall| {
        *seen.lock().unwrap() = call.meta.unwrap_or_default();
        async { Ok::<_, tower::BoxError>(CallToolResult::success(Vec::new())) }
    });
    let service = ServiceBuilder::new()
        .layer(ReadinessLayer::new(inventory))
        .service(inner);
    let mut call = ToolCall::new("mcp__github__search_issues");
    call.meta = Some(Map::from_iter([(
        "progressToken".to_owned(),
        Value::from(7),
    )]));
    futures::executor::block_on(service.oneshot(call)).expect("the call succeeds");
    received.lock().unwrap().clone()
}

/// Emits the span through a scoped subscriber built from `config`, flushes, and returns what the
/// receiver got plus the `_meta` of the request.
async fn export_one_span(
    config: TelemetryConfig,
    mut received: mpsc::UnboundedReceiver<ExportTraceServiceRequest>,
    shutdown_by_drop: bool,
) -> (Vec<Received>, Map<String, Value>) {
    let telemetry = config.build().expect("telemetry builds");
    let subscriber = telemetry.subscriber();
    let guard = telemetry.into_guard();
    let meta = tracing::subscriber::with_default(subscriber, || {
        // Callsite interest is cached process-wide: recompute it with this subscriber in place.
        tracing::callsite::rebuild_interest_cache();
        emit_tool_call_span()
    });
    if shutdown_by_drop {
        drop(guard);
    } else {
        guard.shutdown().await.expect("the exporter flushes");
    }
    let request = tokio::time::timeout(Duration::from_secs(20), received.recv())
        .await
        .expect("the receiver gets the spans within 20 s")
        .expect("the receiver is alive");
    (flatten(request), meta)
}

fn check_exported_span(received: &[Received], meta: &Map<String, Value>, service: &str) {
    assert_eq!(received.len(), 1, "one resource: {received:?}");
    assert_eq!(received[0].service_name.as_deref(), Some(service));
    let spans = &received[0].spans;
    assert_eq!(spans.len(), 1, "one span: {spans:?}");
    let span = &spans[0];

    assert_eq!(span.name, "tools/call search_issues");
    assert_eq!(span.kind, SpanKind::Client as i32);
    let a = &span.attributes;
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "search_issues"),
        ("gen_ai.operation.name", "execute_tool"),
        ("network.transport", "tcp"),
        ("mcp_readiness.server", "github"),
        ("mcp_readiness.state", "ready"),
    ] {
        assert_eq!(
            string_attr(a, key).as_deref(),
            Some(value),
            "{key} in {a:?}"
        );
    }
    assert_eq!(
        attr(a, "mcp_readiness.waited_ms"),
        Some(&any_value::Value::IntValue(0))
    );
    assert_eq!(
        attr(a, "mcp_readiness.timed_out"),
        Some(&any_value::Value::BoolValue(false))
    );
    assert!(attr(a, "otel.kind").is_none() && attr(a, "otel.name").is_none());

    // The request's `_meta` carries the same trace and this span as the parent.
    let traceparent = meta["traceparent"]
        .as_str()
        .expect("traceparent is a string");
    assert_eq!(
        traceparent,
        format!("00-{}-{}-01", hex(&span.trace_id), hex(&span.span_id))
    );
    assert_eq!(meta["progressToken"], 7, "existing _meta entries are kept");
}

crate::support::grpc::grpc_receiver!(
    start_grpc_receiver,
    GrpcReceiver: TraceService,
    TraceServiceServer,
    ExportTraceServiceRequest => ExportTraceServiceResponse
);

/// Spans over OTLP/gRPC to `addr` as `service`, no log lines.
fn over_grpc(addr: std::net::SocketAddr, service: &str) -> TelemetryConfig {
    TelemetryConfig {
        otlp: Some(OtlpConfig::grpc(format!("http://{addr}"))),
        service_name: service.into(),
        fmt: false,
        ..TelemetryConfig::default()
    }
}

#[tokio::test]
async fn a_span_reaches_an_otlp_grpc_receiver_with_its_name_kind_attributes_and_resource() {
    let (addr, rx) = start_grpc_receiver().await;
    let config = over_grpc(addr, "readiness-grpc-test");
    let (received, meta) = export_one_span(config, rx, false).await;
    check_exported_span(&received, &meta, "readiness-grpc-test");
}

#[tokio::test]
async fn a_span_reaches_an_otlp_http_protobuf_receiver_configured_by_the_standard_variables() {
    let (addr, rx) = start_http_receiver().await;
    let endpoint = format!("http://{addr}");
    let env = |name: &str| match name {
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(endpoint.clone()),
        "OTEL_EXPORTER_OTLP_PROTOCOL" => Some("http/protobuf".to_owned()),
        "OTEL_SERVICE_NAME" => Some("readiness-http-test".to_owned()),
        "OTEL_TRACES_SAMPLER" => Some("always_on".to_owned()),
        _ => None,
    };
    let config = TelemetryConfig {
        fmt: false,
        ..TelemetryConfig::from_env_with(env).unwrap()
    };
    assert_eq!(
        config.otlp,
        Some(OtlpConfig::http(format!("{endpoint}/v1/traces")))
    );
    let (received, meta) = export_one_span(config, rx, false).await;
    check_exported_span(&received, &meta, "readiness-http-test");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_guard_on_a_multi_thread_runtime_flushes_the_last_spans() {
    let (addr, rx) = start_grpc_receiver().await;
    let config = over_grpc(addr, "readiness-drop-test");
    let (received, meta) = export_one_span(config, rx, true).await;
    check_exported_span(&received, &meta, "readiness-drop-test");
}

/// A collector that is not there: the guard says how many spans were lost and why, instead of
/// an `Ok` over spans that went nowhere (what `mcp-readiness check` prints as a warning).
#[tokio::test]
async fn spans_the_collector_did_not_take_are_counted_in_the_guards_error() {
    let (http, grpc) = (crate::support::dead_addr(), crate::support::dead_addr());
    for (protocol, otlp) in [
        ("http", OtlpConfig::http(format!("http://{http}/v1/traces"))),
        ("grpc", OtlpConfig::grpc(format!("http://{grpc}"))),
    ] {
        let telemetry = TelemetryConfig {
            otlp: Some(otlp),
            fmt: false,
            ..TelemetryConfig::default()
        }
        .build()
        .expect("telemetry builds");
        let subscriber = telemetry.subscriber();
        let guard = telemetry.into_guard();
        tracing::subscriber::with_default(subscriber, || {
            tracing::callsite::rebuild_interest_cache();
            emit_tool_call_span();
        });
        match guard.shutdown().await {
            Err(TelemetryError::Exporter { message }) => assert!(
                message.starts_with("1 span in 1 batch could not be exported (the last error: "),
                "{protocol}: {message}"
            ),
            other => panic!("{protocol}: the lost span is said, got {other:?}"),
        }
    }
}

#[test]
fn without_an_endpoint_nothing_is_exported_and_nothing_is_injected() {
    let telemetry = TelemetryConfig::from_env_with(|name| {
        (name == "OTEL_SERVICE_NAME").then(|| "quiet".to_owned())
    })
    .unwrap()
    .build()
    .unwrap();
    assert!(telemetry.provider().is_none());
    let subscriber = telemetry.subscriber();
    let meta = tracing::subscriber::with_default(subscriber, || {
        // Callsite interest is cached process-wide: recompute it with this subscriber in place.
        tracing::callsite::rebuild_interest_cache();
        emit_tool_call_span()
    });
    assert_eq!(meta.len(), 1, "only the existing entry: {meta:?}");
}

#[test]
fn the_grpc_exporter_outside_a_tokio_runtime_is_refused_with_a_way_out() {
    let err = TelemetryConfig {
        otlp: Some(OtlpConfig::grpc("http://127.0.0.1:4317")),
        ..TelemetryConfig::default()
    }
    .build()
    .unwrap_err();
    assert!(matches!(err, TelemetryError::NoRuntime));
    assert!(
        err.to_string()
            .contains("OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
    );
}

#[test]
fn a_bad_log_filter_is_refused_and_named() {
    let err = TelemetryConfig {
        filter: "info,[[".into(),
        ..TelemetryConfig::default()
    }
    .build()
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid log filter \"info,[[\" (RUST_LOG):"),
        "{err}"
    );
}

#[test]
fn an_injected_context_extracts_to_the_same_trace_on_the_server_side() {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt;

    // A provider without an exporter still gives spans real ids.
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let (meta, trace_id) = tracing::subscriber::with_default(subscriber, || {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let span = tracing::info_span!("tools/call", otel.kind = "client");
        let mut meta = Map::new();
        inject_trace_context(&span, &mut meta);
        (meta, span.context().span().span_context().trace_id())
    });
    let traceparent = meta["traceparent"].as_str().unwrap();
    assert!(
        traceparent.starts_with(&format!("00-{trace_id}-")),
        "{traceparent}"
    );
    let extracted = extract_trace_context(&meta);
    let remote = extracted.span().span_context().clone();
    assert!(remote.is_remote() && remote.is_valid());
    assert_eq!(remote.trace_id(), trace_id);
}

#[test]
fn installing_globally_twice_is_refused() {
    let config = TelemetryConfig {
        fmt: false,
        ..TelemetryConfig::default()
    };
    let first = config.clone().build().unwrap().install();
    assert!(first.is_ok());
    let second = config.build().unwrap().install();
    assert!(matches!(second, Err(TelemetryError::AlreadyInstalled)));
}
