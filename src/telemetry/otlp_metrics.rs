//! Metrics over OTLP (features `otel-metrics` and `otlp-grpc` / `otlp-http`): an SDK meter
//! provider whose periodic reader exports through an OTLP metric exporter, configured by the
//! standard `OTEL_*` variables, for a service that pushes metrics and has no scrape endpoint.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry::InstrumentationScope;
use opentelemetry::metrics::{Meter, MeterProvider as _};
use opentelemetry_otlp::{MetricExporter, WithExportConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::{Instrument, PeriodicReader, SdkMeterProvider, Stream};

use super::config::{OtlpConfig, Protocol, Signal, otlp_from_env, resource_from_env};
use super::error::TelemetryError;
use super::export_failures::{Carried, ExportFailures, ReportingExporter};
use super::install::resource;
use super::shutdown::{Exporting, Provider};

/// The export interval when `OTEL_METRIC_EXPORT_INTERVAL` is not set: 60 s, as the specification
/// says.
pub const DEFAULT_METRIC_EXPORT_INTERVAL: Duration = Duration::from_secs(60);

/// The most series one instrument of this crate keeps in the SDK (its default is 2,000, fewer than
/// `mcp_readiness.server.state` has for 500 servers); the recorder's own caps bound them below
/// this.
pub const CARDINALITY_LIMIT: usize = 100_000;

/// The instrumentation scope of the meter [`OtlpMetrics::meter`] gives.
const SCOPE: &str = env!("CARGO_PKG_NAME");

/// Where and how often metrics are pushed; build it from the standard variables
/// ([`MetricsExportConfig::from_env`]) or by hand.
///
/// ```
/// use std::time::Duration;
/// use mcp_readiness::telemetry::{MetricsExportConfig, OtlpConfig};
///
/// let env = |name: &str| match name {
///     "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://collector:4318".to_owned()),
///     "OTEL_METRIC_EXPORT_INTERVAL" => Some("15000".to_owned()),
///     _ => None,
/// };
/// let config = MetricsExportConfig::from_env_with(env).unwrap();
/// assert_eq!(config.otlp, Some(OtlpConfig::http("http://collector:4318/v1/metrics")));
/// assert_eq!(config.interval, Duration::from_secs(15));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MetricsExportConfig {
    /// Where to push metrics (the HTTP URL with its `/v1/metrics` path); `None` exports nothing.
    pub otlp: Option<OtlpConfig>,
    /// How often (`OTEL_METRIC_EXPORT_INTERVAL`, milliseconds; default
    /// [`DEFAULT_METRIC_EXPORT_INTERVAL`]).
    pub interval: Duration,
    /// The resource's `service.name` (`OTEL_SERVICE_NAME`).
    pub service_name: String,
    /// More resource attributes (`OTEL_RESOURCE_ATTRIBUTES`).
    pub resource_attributes: Vec<(String, String)>,
}

impl Default for MetricsExportConfig {
    /// No exporter.
    fn default() -> Self {
        MetricsExportConfig {
            otlp: None,
            interval: DEFAULT_METRIC_EXPORT_INTERVAL,
            service_name: super::DEFAULT_SERVICE_NAME.to_owned(),
            resource_attributes: Vec::new(),
        }
    }
}

impl MetricsExportConfig {
    /// Reads the process environment: see [`MetricsExportConfig::from_env_with`].
    pub fn from_env() -> Result<Self, TelemetryError> {
        MetricsExportConfig::from_env_with(|name| std::env::var(name).ok())
    }

    /// Reads the standard variables through `env` (an empty value counts as unset):
    ///
    /// - `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as is) or `OTEL_EXPORTER_OTLP_ENDPOINT`
    ///   (HTTP appends `/v1/metrics`): without either, nothing is exported;
    /// - `OTEL_EXPORTER_OTLP_METRICS_PROTOCOL` or `OTEL_EXPORTER_OTLP_PROTOCOL`: `grpc` or
    ///   `http/protobuf` (the default when this program has it: [`Protocol::DEFAULT`]);
    /// - `OTEL_METRIC_EXPORT_INTERVAL`: milliseconds between exports (default 60000);
    /// - `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`);
    /// - `OTEL_SDK_DISABLED=true` or `OTEL_METRICS_EXPORTER=none` turn the exporter off.
    ///
    /// The exporter itself still reads `OTEL_EXPORTER_OTLP_HEADERS`, `..._TIMEOUT`,
    /// `..._COMPRESSION` (and their `_METRICS_` forms) and
    /// `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` (`cumulative` by default, or `delta`)
    /// from the process environment.
    pub fn from_env_with(env: impl Fn(&str) -> Option<String>) -> Result<Self, TelemetryError> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let (service_name, resource_attributes) = resource_from_env(&var)?;
        let interval = match var("OTEL_METRIC_EXPORT_INTERVAL") {
            None => DEFAULT_METRIC_EXPORT_INTERVAL,
            Some(value) => value
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis)
                .ok_or_else(|| TelemetryError::InvalidVariable {
                    name: "OTEL_METRIC_EXPORT_INTERVAL".to_owned(),
                    value: value.clone(),
                    expected: "a whole number of milliseconds above 0".to_owned(),
                })?,
        };
        Ok(MetricsExportConfig {
            otlp: otlp_from_env(&var, Signal::METRICS)?,
            interval,
            service_name,
            resource_attributes,
        })
    }

    /// Builds the meter provider and its OTLP exporter (none without an endpoint). The gRPC
    /// exporter must be built inside a Tokio runtime, which must keep running while metrics are
    /// exported; the reader exports from a thread of its own.
    pub fn build(self) -> Result<OtlpMetrics, TelemetryError> {
        let failures = Arc::new(ExportFailures::new(Carried::Metrics));
        let Some(otlp) = &self.otlp else {
            return Ok(OtlpMetrics::exporting(None, failures));
        };
        let exporter = otlp_exporter!(MetricExporter, otlp, MetricExporter);
        let reader = PeriodicReader::builder(ReportingExporter::new(exporter, failures.clone()))
            .with_interval(self.interval)
            .build();
        let provider = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource(&self.service_name, &self.resource_attributes))
            .with_view(|instrument: &Instrument| {
                (instrument.scope().name() == SCOPE)
                    .then(|| {
                        Stream::builder()
                            .with_cardinality_limit(CARDINALITY_LIMIT)
                            .build()
                            .ok()
                    })
                    .flatten()
            })
            .build();
        Ok(OtlpMetrics::exporting(Some(provider), failures))
    }
}

/// Sets metrics export up from the environment (see [`MetricsExportConfig::from_env_with`]):
/// give [`OtlpMetrics::meter`] to
/// [`MetricsBuilder::meter`](crate::metrics::MetricsBuilder::meter). Call it inside the Tokio
/// runtime (the gRPC exporter runs on it) and keep the handle until the end of the program.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_readiness::Metrics;
///
/// let otlp = mcp_readiness::telemetry::init_metrics()?;
/// let metrics = Metrics::builder().meter(otlp.meter()).build()?;
/// // ... the layer and the hub record into `metrics` ...
/// otlp.shutdown().await?; // export what was recorded since the last interval
/// # Ok(()) }
/// ```
pub fn init_metrics() -> Result<OtlpMetrics, TelemetryError> {
    MetricsExportConfig::from_env()?.build()
}

/// The meter provider that pushes metrics over OTLP (when an endpoint is configured). Dropping it
/// exports the last interval and shuts the exporter down, as [`OtlpMetrics::shutdown`] does
/// (prefer that inside a current-thread runtime: see
/// [`TelemetryGuard`](super::TelemetryGuard)).
#[must_use = "dropping it shuts the exporter down: keep it for the life of the program"]
pub struct OtlpMetrics {
    provider: Exporting<SdkMeterProvider>,
    /// What the exporter could not deliver, in its own words (the SDK's flush error has none).
    failures: Arc<ExportFailures>,
}

impl fmt::Debug for OtlpMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OtlpMetrics")
            .field("exporting", &self.provider().is_some())
            .finish()
    }
}

impl OtlpMetrics {
    fn exporting(provider: Option<SdkMeterProvider>, failures: Arc<ExportFailures>) -> Self {
        OtlpMetrics {
            provider: Exporting::new(
                provider,
                |message| TelemetryError::MetricExporter { message },
                "OTLP metric exporter shut down with an error: the last interval may be lost",
            ),
            failures,
        }
    }

    /// The meter of this crate's scope (`mcp-readiness`, with its version), or `None` when no
    /// endpoint is configured (so recording costs nothing more).
    pub fn meter(&self) -> Option<Meter> {
        self.provider().map(|provider| {
            provider.meter_with_scope(
                InstrumentationScope::builder(SCOPE)
                    .with_version(env!("CARGO_PKG_VERSION"))
                    .build(),
            )
        })
    }

    /// The SDK meter provider, when an endpoint is configured (for your own instruments too).
    pub fn provider(&self) -> Option<&SdkMeterProvider> {
        self.provider.provider()
    }

    /// Collects and exports now, without shutting down. An error when an export since the last
    /// `flush` (this one, or a periodic one) could not be delivered: how many, and the exporter's
    /// last error.
    pub async fn flush(&self) -> Result<(), TelemetryError> {
        let flushed = self.provider.flush().await;
        in_words(flushed, &self.failures)
    }

    /// Exports a last time and shuts the exporter down, without blocking the runtime. An error
    /// as for [`flush`](Self::flush).
    pub async fn shutdown(self) -> Result<(), TelemetryError> {
        let failures = self.failures.clone();
        let shut = self.provider.shutdown().await;
        in_words(shut, &failures)
    }
}

/// The result of a flush or shutdown, with what the exporter could not deliver in its own words
/// (the SDK's error only says `InternalFailure("Failed to flush")`).
fn in_words(
    result: Result<(), TelemetryError>,
    failures: &ExportFailures,
) -> Result<(), TelemetryError> {
    match (failures.take(), result) {
        (Some(message), _) => Err(TelemetryError::MetricExporter { message }),
        (None, result) => result,
    }
}

impl Provider for SdkMeterProvider {
    fn flush_now(&self) -> OTelSdkResult {
        self.force_flush()
    }

    fn shut_down(&self) -> OTelSdkResult {
        self.shutdown()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<MetricsExportConfig, TelemetryError> {
        MetricsExportConfig::from_env_with(crate::telemetry::shutdown::env_of(vars))
    }

    #[test]
    fn without_an_endpoint_nothing_is_exported() {
        let config = from(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:4318")]).unwrap();
        assert_eq!(config, MetricsExportConfig::default());
        assert!(config.build().unwrap().meter().is_none());
    }

    #[test]
    fn the_standard_variables_choose_the_metrics_endpoint_and_the_interval() {
        for (vars, expected) in
            crate::telemetry::shutdown::endpoint_cases("METRICS", "TRACES", "/v1/metrics")
        {
            let vars: Vec<(&str, &str)> =
                vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            assert_eq!(from(&vars).unwrap().otlp, expected, "{vars:?}");
        }
        let on = from(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_TRACES_EXPORTER", "none"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "500"),
            ("OTEL_SERVICE_NAME", "agent"),
        ])
        .unwrap();
        assert!(on.otlp.is_some());
        assert_eq!(on.interval, Duration::from_millis(500));
        assert_eq!(on.service_name, "agent");
    }

    #[test]
    fn bad_values_name_the_variable_and_hide_credentials() {
        for (value, expected) in [("0", "above 0"), ("1.5s", "milliseconds")] {
            let err = from(&[("OTEL_METRIC_EXPORT_INTERVAL", value)])
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!(
                    "OTEL_METRIC_EXPORT_INTERVAL=\"{value}\" is not valid"
                )),
                "{err}"
            );
            assert!(err.contains(expected), "{err}");
        }
        let err = from(&[("OTEL_METRICS_EXPORTER", "prometheus")]).unwrap_err();
        assert!(err.to_string().contains("`otlp` or `none`"), "{err}");
        let err = from(&[(
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
            "ftp://user:hunter2@c",
        )])
        .unwrap_err()
        .to_string();
        assert!(!err.contains("hunter2"), "{err}");
    }
}
