//! The OpenTelemetry MCP semantic conventions as they stand, pinned against what the readiness
//! layer emits for real calls over both protocol generations: the Python SDK over streamable HTTP
//! (2026-07-28) and the rmcp fixture over streamable HTTP (2025-11-25), through a real Hub, exported
//! through the OpenTelemetry SDK: the call spans, and `mcp.client.operation.duration` with its
//! recommended attributes.
//!
//! Alone in its binary on purpose (like `trace_propagation.rs`): `tracing` caches callsite interest
//! process-wide.
#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_readiness::HubOptions;
use mcp_readiness::ReadinessLayer;
use mcp_readiness::metrics::names;
use mcp_readiness::{Budget, Hub, Metrics, ServerSpec, ToolCall};
use mcp_readiness_fixtures::process::Guard;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::SpanKind;
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider, Temporality};
use opentelemetry_sdk::trace::SpanData;
use tower::{ServiceBuilder, ServiceExt};

#[path = "support/spans.rs"]
mod spans;
use spans::collect_spans;

/// One exported point: its attributes (sorted key, value pairs) and its count.
type Point = (Vec<(String, String)>, u64);

/// Every `mcp.client.operation.duration` point of the last export.
#[derive(Debug, Clone, Default)]
struct Operations(Arc<Mutex<Vec<Point>>>);

impl PushMetricExporter for Operations {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let mut points = Vec::new();
        for scope in metrics.scope_metrics() {
            for metric in scope.metrics() {
                if metric.name() != "mcp.client.operation.duration" {
                    continue;
                }
                let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
                    panic!("{} is not an f64 histogram", metric.name());
                };
                for point in histogram.data_points() {
                    let mut attributes: Vec<(String, String)> = point
                        .attributes()
                        .map(|kv| (kv.key.to_string(), kv.value.to_string()))
                        .collect();
                    attributes.sort();
                    points.push((attributes, point.count()));
                }
            }
        }
        *self.0.lock().unwrap() = points;
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

fn attribute(span: &SpanData, key: &str) -> Option<OtelValue> {
    span.attributes
        .iter()
        .find(|kv: &&KeyValue| kv.key.as_str() == key)
        .map(|kv| kv.value.clone())
}

fn string(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

fn http(name: &str, url: &str, token: Option<&str>) -> ServerSpec {
    mcp_readiness_fixtures::configure::http_spec(name, url, token)
}

async fn python_sdk_http(out: PathBuf) -> Option<(Guard, u16)> {
    let dir = mcp_readiness_fixtures::repo().join("e2e/python");
    let python = mcp_readiness_fixtures::tools::python_sdk()?;
    let mut command = std::process::Command::new(&python);
    command.arg(dir.join("sdk_server.py")).arg("--http");
    let name = "the Python SDK server";
    Some(mcp_readiness_fixtures::configure::serve_http(command, &out, name).await)
}

#[tokio::test]
async fn the_layer_emits_the_opentelemetry_mcp_conventions_on_both_protocol_generations() {
    let scratch = mcp_readiness_fixtures::Scratch::new("semconv");
    let Some((_py, py_port)) = python_sdk_http(scratch.path("py.out")).await else {
        return;
    };
    let rs_log = scratch.path("rs.log");
    let (_rs, rs_port) = mcp_readiness_fixtures::configure::http_fixture_with_env(
        &scratch,
        "tok-semconv",
        &[("FIXTURE_LOG", &rs_log.to_string_lossy())],
    )
    .await;

    let (exporter, provider, _default) = collect_spans("semconv");

    let operations = Operations::default();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(
            PeriodicReader::builder(operations.clone())
                .with_interval(Duration::from_secs(3600))
                .build(),
        )
        .build();
    let metrics = Metrics::builder()
        .meter(Some(meter_provider.meter("mcp-readiness")))
        .build()
        .unwrap();
    let hub = Hub::new(
        vec![
            http("py", &format!("http://127.0.0.1:{py_port}/mcp"), None),
            http(
                "rs",
                &format!("http://127.0.0.1:{rs_port}/mcp"),
                Some("tok-semconv"),
            ),
        ],
        HubOptions::builder()
            .health_interval(None)
            .connect_timeout(Duration::from_secs(20))
            .event_sink(metrics.clone()),
    )
    .unwrap();
    let layer = ReadinessLayer::builder(hub.clone())
        .budget(Budget::try_new(Duration::from_secs(20), Duration::from_millis(100)).unwrap())
        .metrics(metrics.clone())
        .build();
    let service = ServiceBuilder::new().layer(layer).service(hub.clone());
    let call = |tool: &str| service.clone().oneshot(ToolCall::new(tool));

    call("mcp__py__one").await.expect("2026-07-28 call");
    call("mcp__rs__pid").await.expect("2025-11-25 call");
    call("mcp__rs__echo")
        .await
        .expect("a second 2025-11-25 call");
    let py_error = call("mcp__py__fail_json_rpc").await.unwrap_err();
    let rs_error = call("mcp__rs__json_rpc_error").await.unwrap_err();
    let _ = provider.force_flush();
    let spans = exporter.0.lock().unwrap().clone();
    let span = |name: &str| -> SpanData {
        spans
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| {
                panic!(
                    "no span {name} in {:?}",
                    spans.iter().map(|s| &s.name).collect::<Vec<_>>()
                )
            })
            .clone()
    };

    for (name, tool, protocol, port) in [
        ("tools/call one", "one", "2026-07-28", py_port),
        ("tools/call pid", "pid", "2025-11-25", rs_port),
        (
            "tools/call fail_json_rpc",
            "fail_json_rpc",
            "2026-07-28",
            py_port,
        ),
        (
            "tools/call json_rpc_error",
            "json_rpc_error",
            "2025-11-25",
            rs_port,
        ),
    ] {
        // Span name `{mcp.method.name} {gen_ai.tool.name}`, kind client.
        let s = span(name);
        assert_eq!(s.span_kind, SpanKind::Client, "{name}");
        assert_eq!(string(&s, "mcp.method.name").as_deref(), Some("tools/call"));
        assert_eq!(string(&s, "gen_ai.tool.name").as_deref(), Some(tool));
        assert_eq!(
            string(&s, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(
            string(&s, "mcp.protocol.version").as_deref(),
            Some(protocol),
            "{name}"
        );
        // HTTP: server.address / server.port, network.transport tcp.
        assert_eq!(string(&s, "network.transport").as_deref(), Some("tcp"));
        assert_eq!(string(&s, "server.address").as_deref(), Some("127.0.0.1"));
        assert_eq!(
            attribute(&s, "server.port"),
            Some(OtelValue::I64(i64::from(port))),
            "{name}"
        );
        // The JSON-RPC request id of the tools/call.
        let id = string(&s, "jsonrpc.request.id").unwrap_or_default();
        assert!(
            !id.is_empty() && id.chars().all(|c| c.is_ascii_digit()),
            "{name}: {id:?}"
        );
        // 2026-07-28 has no session.
        if protocol == "2026-07-28" {
            assert_eq!(attribute(&s, "mcp.session.id"), None, "{name}");
        }
    }
    // 2025-11-25 over HTTP: mcp.session.id is the `Mcp-Session-Id` the server assigned (as the
    // fixture saw it on each call), the same on every call of the one session.
    let server_sessions: Vec<String> = std::fs::read_to_string(&rs_log)
        .unwrap()
        .lines()
        .filter_map(|l| Some(l.strip_prefix("session ")?.to_owned()))
        .collect();
    assert_eq!(
        server_sessions.len(),
        3,
        "one per tools/call: {server_sessions:?}"
    );
    let session = &server_sessions[0];
    assert!(!session.is_empty());
    assert!(
        server_sessions.iter().all(|s| s == session),
        "{server_sessions:?}"
    );
    for name in [
        "tools/call pid",
        "tools/call echo",
        "tools/call json_rpc_error",
    ] {
        assert_eq!(
            string(&span(name), "mcp.session.id").as_deref(),
            Some(session.as_str()),
            "{name}"
        );
    }
    // Never a metric label.
    assert!(
        !metrics.render().contains(session.as_str()),
        "the session id is in the metrics"
    );
    // A client-side JSON-RPC error: error.type is the JSON-RPC code.
    for (name, error) in [
        ("tools/call fail_json_rpc", &py_error),
        ("tools/call json_rpc_error", &rs_error),
    ] {
        let s = span(name);
        assert_eq!(
            string(&s, "error.type").as_deref(),
            Some("-32602"),
            "{name}: {error}"
        );
    }
    assert_eq!(attribute(&span("tools/call one"), "error.type"), None);

    // mcp.client.operation.duration: its buckets and attribute set.
    let text = metrics.render();
    let bucket_line = |tool: &str, error: &str, server: &str, le: &str| {
        format!(
            "{}_bucket{{error_type=\"{error}\",gen_ai_tool_name=\"{tool}\",mcp_method_name=\"tools/call\",server=\"{server}\",le=\"{le}\"}}",
            names::MCP_CLIENT_OPERATION_DURATION_SECONDS
        )
    };
    for le in [
        "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "30", "60", "120", "300",
        "+Inf",
    ] {
        for (tool, error, server) in [
            ("one", "", "py"),
            ("pid", "", "rs"),
            ("fail_json_rpc", "-32602", "py"),
            ("json_rpc_error", "-32602", "rs"),
        ] {
            let line = bucket_line(tool, error, server, le);
            assert!(text.contains(&line), "{line} missing:\n{text}");
        }
    }
    let prefix = format!(
        "{}_bucket{{error_type=\"\",gen_ai_tool_name=\"one\",mcp_method_name=\"tools/call\",server=\"py\",le=",
        names::MCP_CLIENT_OPERATION_DURATION_SECONDS
    );
    let buckets = text.lines().filter(|l| l.starts_with(&prefix)).count();
    assert_eq!(buckets, 15, "exactly the 14 bounds and +Inf:\n{text}");

    // The same operations over OpenTelemetry: the scrape's labels as the conventions' attributes,
    // plus the recommended ones the scrape has no label for (the connection's transport, address,
    // port and protocol version; `rpc.response.status_code` on a JSON-RPC error).
    meter_provider.force_flush().unwrap();
    let exported = operations.0.lock().unwrap().clone();
    for (tool, error, server, protocol, port) in [
        ("one", "", "py", "2026-07-28", py_port),
        ("pid", "", "rs", "2025-11-25", rs_port),
        ("echo", "", "rs", "2025-11-25", rs_port),
        ("fail_json_rpc", "-32602", "py", "2026-07-28", py_port),
        ("json_rpc_error", "-32602", "rs", "2025-11-25", rs_port),
    ] {
        let port = port.to_string();
        let mut want: Vec<(String, String)> = [
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", tool),
            ("mcp.method.name", "tools/call"),
            ("mcp.protocol.version", protocol),
            ("network.transport", "tcp"),
            ("server", server),
            ("server.address", "127.0.0.1"),
            ("server.port", &port),
            ("error.type", error),
            ("rpc.response.status_code", error),
        ]
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        want.sort();
        let found: Vec<u64> = exported
            .iter()
            .filter(|(attributes, _)| *attributes == want)
            .map(|(_, count)| *count)
            .collect();
        assert_eq!(found, [1], "{tool}: {want:?} once, in {exported:#?}");
    }
    assert_eq!(exported.len(), 5, "{exported:#?}");
    meter_provider.shutdown().unwrap();
    hub.shutdown().await;
}
