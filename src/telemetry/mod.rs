//! Logs and traces: one call sets up `tracing-subscriber` (an `EnvFilter` from `RUST_LOG`, log
//! lines on stderr), `tracing-opentelemetry`, and an OTLP span exporter (batched) configured by the
//! standard `OTEL_*` variables.
//!
//! ```no_run
//! # // `init` needs `otlp-grpc` or `otlp-http`: without them this example is not compiled.
//! # #[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
//! # async fn run() -> Result<(), mcp_readiness::telemetry::TelemetryError> {
//! let guard = mcp_readiness::telemetry::init()?;
//! tracing::info!("started");
//! // ... the program ...
//! guard.shutdown().await?; // flush the last spans
//! # Ok(()) }
//! ```
//!
//! Without `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, no exporter is
//! installed and nothing leaves the process. With one, `OTEL_EXPORTER_OTLP_PROTOCOL` chooses
//! `grpc` or `http/protobuf` (the default; `grpc` in a build with only `otlp-grpc`: see
//! [`Protocol::DEFAULT`]), `OTEL_SERVICE_NAME` names the service, and
//! `OTEL_TRACES_SAMPLER` (+ `OTEL_TRACES_SAMPLER_ARG`) samples. See
//! [`TelemetryConfig::from_env_with`] for the whole list.
//!
//! To configure by hand, or to compose your own subscriber:
//!
//! ```no_run
//! # #[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
//! # mod example {
//! use mcp_readiness::telemetry::{OtlpConfig, TelemetryConfig};
//! use tracing_subscriber::layer::SubscriberExt;
//!
//! # async fn run() -> Result<(), mcp_readiness::telemetry::TelemetryError> {
//! let telemetry = TelemetryConfig {
//!     otlp: Some(OtlpConfig::grpc("http://127.0.0.1:4317")),
//!     service_name: "nightly-agent".into(),
//!     ..TelemetryConfig::default()
//! }
//! .build()?;
//! let subscriber = tracing_subscriber::registry().with(telemetry.layer());
//! let guard = telemetry.into_guard();
//! tracing::subscriber::with_default(subscriber, || tracing::info!("exported"));
//! guard.shutdown().await?;
//! # Ok(()) }
//! # }
//! ```
//!
//! With the feature `otel-metrics` too, `init_metrics` pushes the recorder's metrics over OTLP
//! from the same variables (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, `OTEL_METRIC_EXPORT_INTERVAL`,
//! ...; see `MetricsExportConfig::from_env_with`), for a service without a scrape endpoint.
//!
//! Spans whose `otel.kind` field is `"client"` are exported with kind client, and an `otel.name`
//! field overrides the span name (how a layer names its span `tools/call {tool}`).
//! [`inject_trace_context`] carries the current trace into an MCP request's `_meta`.

/// The OTLP exporter `$exporter` (`SpanExporter`, `MetricExporter`) for `$otlp`'s protocol, or
/// `return`s the error: gRPC needs a tokio runtime, a protocol whose feature is off is
/// `ProtocolNotBuilt`, and a build error becomes `$error` with its message redacted. One choice
/// for every signal (the builders are distinct types, hence a macro).
#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
macro_rules! otlp_exporter {
    ($exporter:ty, $otlp:expr, $error:ident) => {{
        let otlp = $otlp;
        match otlp.protocol {
            #[cfg(feature = "otlp-grpc")]
            Protocol::Grpc => {
                tokio::runtime::Handle::try_current().map_err(|_| TelemetryError::NoRuntime)?;
                <$exporter>::builder()
                    .with_tonic()
                    .with_endpoint(&otlp.endpoint)
                    .build()
            }
            #[cfg(feature = "otlp-http")]
            Protocol::HttpProtobuf => <$exporter>::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(&otlp.endpoint)
                .build(),
            #[allow(unreachable_patterns)]
            protocol => {
                return Err(TelemetryError::ProtocolNotBuilt {
                    protocol: protocol.as_str(),
                });
            }
        }
        .map_err(|e| TelemetryError::$error {
            message: crate::secret::redact(&e.to_string(), &[]),
        })?
    }};
}

#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
mod config;
#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
mod error;
#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
mod export_failures;
#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
mod install;
#[cfg(all(
    feature = "otel-metrics",
    any(feature = "otlp-grpc", feature = "otlp-http")
))]
mod otlp_metrics;
mod propagation;
#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
mod redaction;
#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
mod shutdown;

#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
pub use config::{
    DEFAULT_FILTER, DEFAULT_SERVICE_NAME, OtlpConfig, Protocol, TelemetryConfig, TraceSampler,
};
#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
pub use error::TelemetryError;
#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
pub use install::{ExportLayer, Telemetry, TelemetryGuard};
#[cfg(all(
    feature = "otel-metrics",
    any(feature = "otlp-grpc", feature = "otlp-http")
))]
pub use otlp_metrics::{
    CARDINALITY_LIMIT, DEFAULT_METRIC_EXPORT_INTERVAL, MetricsExportConfig, OtlpMetrics,
    init_metrics,
};
pub(crate) use propagation::inject_into_optional_meta;
#[cfg(feature = "hub")]
pub(crate) use propagation::join_current_trace;
pub use propagation::{extract_trace_context, inject_current_trace_context, inject_trace_context};

#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
/// Sets everything up from the environment and installs it globally: see
/// [`TelemetryConfig::from_env_with`] for the variables. Call it once, inside the Tokio runtime
/// (the gRPC exporter runs on it), and keep the guard until the end of the program.
pub fn init() -> Result<TelemetryGuard, TelemetryError> {
    TelemetryConfig::from_env()?.build()?.install()
}
