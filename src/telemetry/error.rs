/// Why telemetry could not be set up. Endpoint values are redacted (they may carry credentials).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// An environment variable has a value this crate cannot use.
    #[error("{name}={value:?} is not valid: expected {expected}")]
    InvalidVariable {
        /// The variable.
        name: String,
        /// Its value (redacted when it may hold credentials).
        value: String,
        /// What would be accepted.
        expected: String,
    },
    /// The log filter (`RUST_LOG`) does not parse.
    #[error(
        "invalid log filter {filter:?} (RUST_LOG): {message}: use e.g. `info` or `info,mcp_readiness=debug`"
    )]
    Filter {
        /// The filter text.
        filter: String,
        /// What the parser said.
        message: String,
    },
    /// The gRPC exporter needs a Tokio runtime to run its connection.
    #[error(
        "the OTLP gRPC exporter needs a Tokio runtime: set up telemetry inside the runtime (e.g. in `#[tokio::main]`), or use OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"
    )]
    NoRuntime,
    /// The OTLP exporter could not be built or could not flush.
    #[error(
        "OTLP span exporter: {message}: check OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is reachable"
    )]
    Exporter {
        /// What went wrong (redacted).
        message: String,
    },
    /// The OTLP metric exporter could not be built or could not export.
    #[error(
        "OTLP metric exporter: {message}: check OTEL_EXPORTER_OTLP_METRICS_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is reachable"
    )]
    MetricExporter {
        /// What went wrong (redacted).
        message: String,
    },
    /// The configured OTLP protocol's exporter was not compiled in (Cargo feature `otlp-grpc` or
    /// `otlp-http`).
    #[error(
        "OTLP protocol {protocol} is not built into this program: enable the `otlp-grpc` / `otlp-http` Cargo feature, or set OTEL_EXPORTER_OTLP_PROTOCOL to the other protocol"
    )]
    ProtocolNotBuilt {
        /// The protocol asked for (`grpc` or `http/protobuf`).
        protocol: &'static str,
    },
    /// A global `tracing` subscriber was installed before.
    #[error(
        "a global tracing subscriber is already installed: call `telemetry::init()` once, or add `Telemetry::layer()` to your own subscriber"
    )]
    AlreadyInstalled,
}
