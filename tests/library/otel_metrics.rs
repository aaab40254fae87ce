//! Metrics over OTLP end to end over real sockets: a recorder with a meter from
//! `MetricsExportConfig` records through its handles and the supervisor's events, the provider is
//! flushed, and an OTLP receiver started inside each test (gRPC with tonic, HTTP/protobuf with
//! axum) gets every instrument with its name, unit, kind, attributes and bucket bounds, and the
//! same values as the Prometheus text of the same recorder.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mcp_readiness::State;
use mcp_readiness::metrics::names::{OPERATION_BUCKETS, WAIT_BUCKETS};
use mcp_readiness::metrics::otel_names::{self, InstrumentKind};
use mcp_readiness::resolve::{Scope, Verdict};
use mcp_readiness::state::{
    CallOutcome, ConnectResult, ConnectionEvent, CredentialExpiry, CredentialKind, EventSink,
    ServerEndpoint, ServerIdentity,
};
use mcp_readiness::telemetry::{MetricsExportConfig, OtlpConfig, OtlpMetrics, TelemetryError};
use mcp_readiness::{
    Metrics,
    metrics::{ManualClock, ServerMetrics},
};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, HistogramDataPoint, NumberDataPoint, metric, number_data_point,
};
use tokio::sync::mpsc;

use crate::support::otlp_metrics::{
    ReceivedMetric, flatten_metrics, start_metrics_grpc_receiver, start_metrics_http_receiver,
};

/// A label set: attribute keys (or label names) to values.
type Labels = BTreeMap<String, String>;

fn config(otlp: OtlpConfig, service: &str) -> MetricsExportConfig {
    MetricsExportConfig {
        otlp: Some(otlp),
        // Only flushes export.
        interval: Duration::from_secs(3600),
        service_name: service.to_owned(),
        ..MetricsExportConfig::default()
    }
}

fn ev(metrics: &Metrics, event: ConnectionEvent) {
    metrics.on_event(&event);
}

/// Something for every family: the supervisor's events, resolutions, calls, operations.
fn record_everything(metrics: &Metrics) -> ServerMetrics {
    let files: Arc<str> = "files".into();
    ev(
        metrics,
        ConnectionEvent::ServerAdded {
            server: files.clone(),
            state: State::Connecting,
        },
    );
    ev(
        metrics,
        ConnectionEvent::ConnectAttempt {
            server: files.clone(),
            result: ConnectResult::Ok,
            duration: Duration::from_millis(1500),
        },
    );
    ev(
        metrics,
        ConnectionEvent::StateChanged {
            server: files.clone(),
            from: State::Connecting,
            to: State::Ready,
            reason: None,
        },
    );
    ev(
        metrics,
        ConnectionEvent::ToolsChanged {
            server: files.clone(),
            count: 3,
        },
    );
    ev(
        metrics,
        ConnectionEvent::Endpoint {
            server: files.clone(),
            // Over HTTPS: its certificate's end is exported too.
            endpoint: ServerEndpoint::network("files.internal", 8443)
                .with_tls_certificate_expiry(Some(1_925_078_400)),
        },
    );
    ev(
        metrics,
        ConnectionEvent::Handshake {
            server: files.clone(),
            identity: ServerIdentity {
                protocol_version: "2025-11-25".into(),
                server_name: "fs".into(),
                server_version: "1.2.3".into(),
            },
        },
    );
    ev(
        metrics,
        ConnectionEvent::CredentialsExpire {
            server: files.clone(),
            expiries: vec![CredentialExpiry {
                kind: CredentialKind::BearerToken,
                expires_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_900_000_000),
                renewable: false,
            }],
        },
    );
    ev(
        metrics,
        ConnectionEvent::NextAttempt {
            server: files.clone(),
            after: Some(Duration::from_secs(2)),
        },
    );
    ev(
        metrics,
        ConnectionEvent::Reconnected {
            server: files.clone(),
        },
    );
    ev(
        metrics,
        ConnectionEvent::StreamReopened {
            server: files.clone(),
        },
    );
    ev(
        metrics,
        ConnectionEvent::CooldownRejection {
            server: files.clone(),
        },
    );
    metrics.config_reloaded(true);
    metrics.probe_modules_configured(2);

    let server = metrics.server("files");
    server.set_wait_budget(Duration::from_secs(20));
    server.observe_resolution(
        &Verdict {
            state: State::Connecting,
            waited: Duration::from_secs(2),
            timed_out: true,
            scope: Scope::Server,
            reason: None,
        },
        Duration::from_secs(20),
    );
    server.observe_resolution(
        &Verdict {
            state: State::Absent,
            waited: Duration::ZERO,
            timed_out: false,
            scope: Scope::Server,
            reason: None,
        },
        Duration::from_secs(20),
    );
    let read = server.tool("read_file");
    read.observe_call(CallOutcome::Ok);
    read.observe_call(CallOutcome::Ok);
    read.observe_operation("tools/call", None, Duration::from_millis(40));
    read.observe_operation(
        "tools/call",
        Some("tool_error"),
        Duration::from_millis(1500),
    );
    read.observe_operation("tools/call", Some("-32602"), Duration::from_millis(3));
    server.tool("missing").observe_absent();
    // Announced, never connected: its zeroed series (the `result="ok"` connect duration among
    // them) exist on both sides.
    ev(
        metrics,
        ConnectionEvent::ServerAdded {
            server: "idle".into(),
            state: State::Connecting,
        },
    );
    server
}

/// Every request the receiver has got, once the first has arrived.
async fn received(
    rx: &mut mpsc::UnboundedReceiver<ExportMetricsServiceRequest>,
) -> Vec<ReceivedMetric> {
    let first = tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("an export within 10 s")
        .expect("the receiver runs");
    let mut all = flatten_metrics(first);
    while let Ok(more) = rx.try_recv() {
        all.extend(flatten_metrics(more));
    }
    all
}

fn value_text(value: &any_value::Value) -> String {
    match value {
        any_value::Value::StringValue(s) => s.clone(),
        any_value::Value::IntValue(i) => i.to_string(),
        other => format!("{other:?}"),
    }
}

fn attributes(attrs: &[KeyValue]) -> Labels {
    attrs
        .iter()
        .map(|kv| {
            let value = kv.value.as_ref().and_then(|v| v.value.as_ref());
            (kv.key.clone(), value.map(value_text).unwrap_or_default())
        })
        .collect()
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn number(point: &NumberDataPoint) -> f64 {
    match point.value {
        Some(number_data_point::Value::AsInt(v)) => v as f64,
        Some(number_data_point::Value::AsDouble(v)) => v,
        None => f64::NAN,
    }
}

fn by_name<'a>(metrics: &'a [ReceivedMetric], name: &str) -> &'a ReceivedMetric {
    let found: Vec<_> = metrics.iter().filter(|m| m.metric.name == name).collect();
    assert_eq!(found.len(), 1, "{name} once: {found:?}");
    found[0]
}

fn histogram_point<'a>(m: &'a ReceivedMetric, want: &Labels) -> &'a HistogramDataPoint {
    let Some(metric::Data::Histogram(h)) = &m.metric.data else {
        panic!("{} is not a histogram", m.metric.name);
    };
    h.data_points
        .iter()
        .find(|p| &attributes(&p.attributes) == want)
        .unwrap_or_else(|| {
            panic!(
                "{} has no point {want:?}: {:?}",
                m.metric.name, h.data_points
            )
        })
}

/// The labels of a sample line's `{...}` block, without its braces.
fn label_block(labels: &str) -> Labels {
    labels
        .split("\",")
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once("=\"").expect("label=\"value\"");
            (k.to_owned(), v.trim_end_matches('"').to_owned())
        })
        .collect()
}

/// The counter and gauge series of the Prometheus text: (metric, labels) to value.
fn prometheus_series(text: &str) -> BTreeMap<(String, Labels), f64> {
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("a sample line");
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, rest.trim_end_matches('}')),
            None => (series, ""),
        };
        if name.ends_with("_bucket") || name.ends_with("_sum") || name.ends_with("_count") {
            continue;
        }
        // The process's own gauge (`Metrics::new`'s registry, for the restart alert) is no
        // mcp-readiness instrument: an OTLP service has the SDK's process resource instead.
        if name == mcp_readiness::metrics::names::PROCESS_START_TIME_SECONDS {
            continue;
        }
        out.insert(
            (name.to_owned(), label_block(labels)),
            value.parse().expect("a number"),
        );
    }
    out
}

/// The counter and gauge points received, as Prometheus series: the instrument's Prometheus
/// name, and the attributes as labels (`.` to `_`, as the OTLP-to-Prometheus translation does).
fn otlp_series(metrics: &[ReceivedMetric]) -> BTreeMap<(String, Labels), f64> {
    let mut out = BTreeMap::new();
    for m in metrics {
        let spec = otel_names::ALL
            .iter()
            .find(|i| i.name == m.metric.name)
            .expect("one of ours");
        let points = match &m.metric.data {
            Some(metric::Data::Sum(sum)) => &sum.data_points,
            Some(metric::Data::Gauge(gauge)) => &gauge.data_points,
            _ => continue,
        };
        for point in points {
            let labels = attributes(&point.attributes)
                .into_iter()
                .map(|(k, v)| (k.replace('.', "_"), v))
                .collect();
            out.insert((spec.prometheus.to_owned(), labels), number(point));
        }
    }
    out
}

/// One histogram series: its count, sum and cumulative bucket counts (the `le` buckets, `+Inf`
/// last).
type HistogramSeries = (u64, f64, Vec<u64>);

/// Every histogram series of the Prometheus text: (metric, labels without `le`) to its values.
fn prometheus_histograms(text: &str) -> BTreeMap<(String, Labels), HistogramSeries> {
    let mut out: BTreeMap<(String, Labels), HistogramSeries> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("a sample line");
        let Some((name, labels)) = series.split_once('{') else {
            continue;
        };
        let (base, part) = if let Some(base) = name.strip_suffix("_bucket") {
            (base, "bucket")
        } else if let Some(base) = name.strip_suffix("_sum") {
            (base, "sum")
        } else if let Some(base) = name.strip_suffix("_count") {
            (base, "count")
        } else {
            continue;
        };
        let mut labels = label_block(labels.trim_end_matches('}'));
        labels.remove("le");
        // A label with an empty value is no label (`error_type=""` on a successful operation).
        labels.retain(|_, v| !v.is_empty());
        let entry = out.entry((base.to_owned(), labels)).or_default();
        match part {
            "bucket" => entry.2.push(value.parse().expect("a count")),
            "sum" => entry.1 = value.parse().expect("a sum"),
            _ => entry.0 = value.parse().expect("a count"),
        }
    }
    out
}

/// Every histogram point received, as Prometheus series: the instrument's Prometheus name, the
/// attributes as labels without the ones only OTLP carries, and cumulative bucket counts. Each
/// point must be alone under its labels (the OTLP-only attributes split no series).
fn otlp_histograms(metrics: &[ReceivedMetric]) -> BTreeMap<(String, Labels), HistogramSeries> {
    let mut out = BTreeMap::new();
    for m in metrics {
        let Some(metric::Data::Histogram(h)) = &m.metric.data else {
            continue;
        };
        let spec = otel_names::ALL
            .iter()
            .find(|i| i.name == m.metric.name)
            .expect("one of ours");
        for point in &h.data_points {
            let labels: Labels = attributes(&point.attributes)
                .into_iter()
                .filter(|(k, _)| !otel_names::OTLP_ONLY_OPERATION_ATTRIBUTES.contains(&k.as_str()))
                .map(|(k, v)| (k.replace('.', "_"), v))
                .collect();
            let buckets = point
                .bucket_counts
                .iter()
                .scan(0, |total, n| {
                    *total += n;
                    Some(*total)
                })
                .collect();
            let values = (point.count, point.sum.unwrap_or(0.0), buckets);
            let key = (spec.prometheus.to_owned(), labels);
            assert!(
                out.insert(key.clone(), values).is_none(),
                "two OTLP points for one scrape series {key:?}"
            );
        }
    }
    out
}

/// What every transport must deliver for `record_everything`.
fn assert_everything_arrived(metrics: &[ReceivedMetric], prometheus_text: &str, service: &str) {
    let names: BTreeSet<&str> = metrics.iter().map(|m| m.metric.name.as_str()).collect();
    let expected: BTreeSet<&str> = otel_names::ALL.iter().map(|i| i.name).collect();
    assert_eq!(names, expected);

    for m in metrics {
        let spec = otel_names::ALL
            .iter()
            .find(|i| i.name == m.metric.name)
            .unwrap();
        assert_eq!(m.service_name.as_deref(), Some(service));
        assert_eq!(m.scope, "mcp-readiness");
        assert_eq!(m.metric.unit, spec.unit, "{}", spec.name);
        assert!(!m.metric.description.is_empty(), "{}", spec.name);
        let cumulative = AggregationTemporality::Cumulative as i32;
        match (&m.metric.data, spec.kind) {
            (Some(metric::Data::Histogram(h)), InstrumentKind::Histogram) => {
                assert_eq!(h.aggregation_temporality, cumulative);
                let bounds: &[f64] = if spec.name == otel_names::MCP_CLIENT_OPERATION_DURATION {
                    &OPERATION_BUCKETS
                } else {
                    &WAIT_BUCKETS
                };
                for point in &h.data_points {
                    assert_eq!(point.explicit_bounds, bounds, "{}", spec.name);
                }
            }
            (Some(metric::Data::Sum(sum)), InstrumentKind::Counter) => {
                assert!(sum.is_monotonic, "{}", spec.name);
                assert_eq!(sum.aggregation_temporality, cumulative);
            }
            (Some(metric::Data::Gauge(_)), InstrumentKind::Gauge) => {}
            (data, kind) => panic!("{}: {kind:?} arrived as {data:?}", spec.name),
        }
    }

    // `mcp.client.operation.duration` exactly as the MCP semantic conventions have it.
    let operation = by_name(metrics, "mcp.client.operation.duration");
    let connection = [
        ("network.transport", "tcp"),
        ("server.address", "files.internal"),
        ("server.port", "8443"),
        ("mcp.protocol.version", "2025-11-25"),
    ];
    let with_connection = |pairs: &[(&str, &str)]| {
        let mut all = labels(pairs);
        all.extend(labels(&connection));
        all
    };
    let ok = histogram_point(
        operation,
        &with_connection(&[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "read_file"),
            ("gen_ai.operation.name", "execute_tool"),
            ("server", "files"),
        ]),
    );
    assert_eq!((ok.count, ok.sum), (1, Some(0.04)));
    assert_eq!(
        ok.bucket_counts[2], 1,
        "0.04 s is in the (0.02, 0.05] bucket"
    );
    let failed = histogram_point(
        operation,
        &with_connection(&[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "read_file"),
            ("gen_ai.operation.name", "execute_tool"),
            ("error.type", "tool_error"),
            ("server", "files"),
        ]),
    );
    assert_eq!((failed.count, failed.sum), (1, Some(1.5)));
    // A JSON-RPC error: its code is `error.type` and `rpc.response.status_code`.
    let refused = histogram_point(
        operation,
        &with_connection(&[
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "read_file"),
            ("gen_ai.operation.name", "execute_tool"),
            ("error.type", "-32602"),
            ("rpc.response.status_code", "-32602"),
            ("server", "files"),
        ]),
    );
    assert_eq!((refused.count, refused.sum), (1, Some(0.003)));

    let wait = by_name(metrics, "mcp_readiness.resolve.wait");
    let connecting = histogram_point(
        wait,
        &labels(&[("server", "files"), ("state", "connecting")]),
    );
    assert_eq!((connecting.count, connecting.sum), (1, Some(2.0)));
    let connect = by_name(metrics, "mcp_readiness.connect.duration");
    let ok = histogram_point(connect, &labels(&[("server", "files"), ("result", "ok")]));
    assert_eq!((ok.count, ok.sum), (1, Some(1.5)));
    // A server that never connected: the zeroed series is there, as on the scrape.
    let idle = histogram_point(connect, &labels(&[("server", "idle"), ("result", "ok")]));
    assert_eq!((idle.count, idle.sum), (0, Some(0.0)));

    // Every histogram series, with the scrape's labels (once the OTLP-only attributes are left
    // out), count, sum and buckets: zero-valued ones included.
    assert_eq!(
        otlp_histograms(metrics),
        prometheus_histograms(prometheus_text)
    );

    // Every counter and gauge series, with the value the Prometheus text has.
    let otlp = otlp_series(metrics);
    let prometheus = prometheus_series(prometheus_text);
    assert_eq!(otlp, prometheus);
    let state = |s: &str| {
        otlp.get(&(
            "mcp_readiness_server_state".to_owned(),
            labels(&[("server", "files"), ("state", s)]),
        ))
        .copied()
    };
    assert_eq!(
        ["ready", "connecting", "unauthenticated", "absent"].map(state),
        [Some(1.0), Some(0.0), Some(0.0), Some(0.0)]
    );
    let calls = otlp[&(
        "mcp_readiness_tool_calls_total".to_owned(),
        labels(&[
            ("server", "files"),
            ("tool", "read_file"),
            ("outcome", "ok"),
        ]),
    )];
    assert_eq!(calls, 2.0);
}

/// Records everything through a recorder on `otlp`'s meter, flushes, and checks what arrived.
/// Exports every instrument through `otlp` as `service` and checks what `rx` received.
async fn export_and_check(
    otlp: OtlpConfig,
    mut rx: mpsc::UnboundedReceiver<ExportMetricsServiceRequest>,
    service: &str,
) {
    let otlp = config(otlp, service).build().unwrap();
    let metrics = Metrics::builder().meter(otlp.meter()).build().unwrap();
    record_everything(&metrics);
    otlp.flush().await.expect("the export succeeds");
    let got = received(&mut rx).await;
    assert_everything_arrived(&got, &metrics.render(), service);
    otlp.shutdown().await.expect("a clean shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_instrument_reaches_an_otlp_grpc_receiver_with_the_prometheus_values() {
    let (addr, rx) = start_metrics_grpc_receiver().await;
    let otlp = OtlpConfig::grpc(format!("http://{addr}"));
    export_and_check(otlp, rx, "metrics-grpc-test").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_instrument_reaches_an_otlp_http_receiver_with_the_prometheus_values() {
    let (addr, rx) = start_metrics_http_receiver().await;
    let endpoint = format!("http://{addr}/v1/metrics");
    export_and_check(OtlpConfig::http(endpoint), rx, "metrics-http-test").await;
}

/// A recorder whose meter exports over OTLP/HTTP (on flushes only) to a receiver of its own.
async fn recorder_over_http(
    service: &str,
) -> (
    OtlpMetrics,
    Metrics,
    mpsc::UnboundedReceiver<ExportMetricsServiceRequest>,
) {
    let (addr, rx) = start_metrics_http_receiver().await;
    let otlp = config(
        OtlpConfig::http(format!("http://{addr}/v1/metrics")),
        service,
    )
    .build()
    .unwrap();
    let metrics = Metrics::builder().meter(otlp.meter()).build().unwrap();
    (otlp, metrics, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_server_leaves_the_next_export_and_later_calls_keep_counting() {
    let (otlp, metrics, mut rx) = recorder_over_http("removal").await;
    record_everything(&metrics);
    ev(
        &metrics,
        ConnectionEvent::ServerAdded {
            server: "kept".into(),
            state: State::Absent,
        },
    );
    otlp.flush().await.unwrap();
    let first = otlp_series(&received(&mut rx).await);
    assert!(
        first
            .keys()
            .any(|(_, l)| l.get("server").map(String::as_str) == Some("files"))
    );

    ev(
        &metrics,
        ConnectionEvent::ServerRemoved {
            server: "files".into(),
        },
    );
    metrics
        .server("kept")
        .tool("t")
        .observe_call(CallOutcome::NotReady);
    otlp.flush().await.unwrap();
    let second = otlp_series(&received(&mut rx).await);
    assert!(
        !second
            .keys()
            .any(|(_, l)| l.get("server").map(String::as_str) == Some("files")),
        "{second:?}"
    );
    assert_eq!(second, prometheus_series(&metrics.render()));
    otlp.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_upgrades_its_protocol_starts_new_operation_series() {
    let (otlp, metrics, mut rx) = recorder_over_http("upgrade").await;
    record_everything(&metrics);
    let read = metrics.server("files").tool("read_file");
    // The same call before and after a reconnect that negotiated 2026-07-28, and the same again
    // on a handshake that changed nothing.
    read.observe_tool_call(CallOutcome::Ok, None, Duration::from_millis(10));
    for _ in 0..2 {
        ev(
            &metrics,
            ConnectionEvent::Handshake {
                server: "files".into(),
                identity: ServerIdentity {
                    protocol_version: "2026-07-28".into(),
                    server_name: "fs".into(),
                    server_version: "1.3.0".into(),
                },
            },
        );
        read.observe_tool_call(CallOutcome::Ok, None, Duration::from_millis(10));
    }
    otlp.flush().await.unwrap();
    let got = received(&mut rx).await;
    let operation = by_name(&got, "mcp.client.operation.duration");
    let ok_call = |version: &str| {
        histogram_point(
            operation,
            &labels(&[
                ("mcp.method.name", "tools/call"),
                ("gen_ai.tool.name", "read_file"),
                ("gen_ai.operation.name", "execute_tool"),
                ("server", "files"),
                ("network.transport", "tcp"),
                ("server.address", "files.internal"),
                ("server.port", "8443"),
                ("mcp.protocol.version", version),
            ]),
        )
        .count
    };
    // `record_everything`'s call and one more on 2025-11-25; two on 2026-07-28.
    assert_eq!((ok_call("2025-11-25"), ok_call("2026-07-28")), (2, 2));
    // The scrape has one series for all four.
    assert!(metrics.render().contains(
        r#"mcp_client_operation_duration_seconds_count{error_type="",gen_ai_tool_name="read_file",mcp_method_name="tools/call",server="files"} 4"#
    ), "{}", metrics.render());
    otlp.shutdown().await.unwrap();
}

#[test]
fn without_a_meter_the_recorder_is_the_prometheus_one() {
    let clock = ManualClock::new(Duration::from_secs(1_800_000_000));
    let with = Metrics::builder()
        .meter(None)
        .clock(clock.clone())
        .build()
        .unwrap();
    let without = Metrics::builder().clock(clock).build().unwrap();
    record_everything(&with);
    record_everything(&without);
    assert_eq!(with.render(), without.render());
}

/// A collector that is not there: `flush` and `shutdown` say how many exports were lost and the
/// exporter's own words, not the SDK's `InternalFailure("Failed to flush")`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_the_collector_did_not_take_are_said_in_the_exporters_words() {
    let (http, grpc) = (crate::support::dead_addr(), crate::support::dead_addr());
    for otlp in [
        OtlpConfig::http(format!("http://{http}/v1/metrics")),
        OtlpConfig::grpc(format!("http://{grpc}")),
    ] {
        let otlp = config(otlp, "metrics-dead-test").build().unwrap();
        let metrics = Metrics::builder().meter(otlp.meter()).build().unwrap();
        record_everything(&metrics);
        for (when, result) in [
            ("flush", otlp.flush().await),
            ("shutdown", otlp.shutdown().await),
        ] {
            let message = match result {
                Err(TelemetryError::MetricExporter { message }) => message,
                other => panic!("{when}: the lost export is said, got {other:?}"),
            };
            assert!(
                message
                    .starts_with("1 export of the metrics could not be exported (the last error: ")
                    && !message.contains("InternalFailure"),
                "{when}: {message}"
            );
        }
    }
}
