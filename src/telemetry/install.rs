use std::sync::Arc;

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing::{Metadata, Subscriber};
use tracing_opentelemetry::OpenTelemetryLayer;
use tracing_subscriber::filter::{FilterFn, Filtered};
use tracing_subscriber::layer::{Layer as _, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{EnvFilter, fmt};

use super::config::{Protocol, TelemetryConfig};
use super::error::TelemetryError;
use super::export_failures::{Carried, ExportFailures, ReportingExporter};
use super::redaction::{RedactingExporter, SafeStderr};
use super::shutdown::{Exporting, Provider};

/// The instrumentation scope of our spans.
const SCOPE: &str = env!("CARGO_PKG_NAME");

/// The layer [`Telemetry::layer`] returns: `tracing-opentelemetry` exporting through the OTLP
/// tracer, without the exporter's own internals.
pub type ExportLayer<S> =
    Filtered<OpenTelemetryLayer<S, SdkTracer>, FilterFn<fn(&Metadata<'_>) -> bool>, S>;

/// Crates the exporter runs on: their spans must not be exported (feedback loop). Exact crate
/// names: `tower_http` or `hyper_rustls` in a user's service are theirs to export.
const EXPORTER_INTERNALS: [&str; 10] = [
    "h2",
    "hyper",
    "hyper_util",
    "tonic",
    "tower",
    "reqwest",
    "opentelemetry",
    "opentelemetry_sdk",
    "opentelemetry_otlp",
    "opentelemetry_http",
];

fn not_exporter_internals(metadata: &Metadata<'_>) -> bool {
    !is_exporter_internal(metadata.target())
}

fn is_exporter_internal(target: &str) -> bool {
    EXPORTER_INTERNALS.iter().any(|c| {
        target
            .strip_prefix(c)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

/// Telemetry that is built but not yet installed: the tracer provider (when an exporter is
/// configured) and the filter and `fmt` settings. Install it globally with
/// [`Telemetry::install`], or use [`Telemetry::subscriber`] / [`Telemetry::layer`] in a
/// subscriber of your own (a scoped one in tests).
#[derive(Debug)]
pub struct Telemetry {
    config: TelemetryConfig,
    provider: Option<SdkTracerProvider>,
    /// What the exporter could not deliver, for the guard to report.
    failures: Arc<ExportFailures>,
}

impl TelemetryConfig {
    /// Builds the exporter (if any) and checks the filter. The gRPC exporter must be built inside a
    /// Tokio runtime, which must keep running while spans are exported.
    pub fn build(self) -> Result<Telemetry, TelemetryError> {
        EnvFilter::try_new(&self.filter).map_err(|e| TelemetryError::Filter {
            filter: self.filter.clone(),
            message: e.to_string(),
        })?;
        let failures = Arc::new(ExportFailures::new(Carried::Spans));
        let provider = match &self.otlp {
            None => None,
            Some(otlp) => {
                let exporter = otlp_exporter!(SpanExporter, otlp, Exporter);
                let resource = resource(&self.service_name, &self.resource_attributes);
                Some(
                    SdkTracerProvider::builder()
                        .with_batch_exporter(ReportingExporter::new(
                            RedactingExporter(exporter),
                            failures.clone(),
                        ))
                        .with_sampler(self.sampler.to_sampler())
                        .with_resource(resource)
                        .build(),
                )
            }
        };
        Ok(Telemetry {
            config: self,
            provider,
            failures,
        })
    }
}

impl Provider for SdkTracerProvider {
    fn flush_now(&self) -> OTelSdkResult {
        self.force_flush()
    }

    fn shut_down(&self) -> OTelSdkResult {
        self.shutdown()
    }
}

/// The resource attribute that tells replicas of one `service.name` apart (Prometheus' OTLP
/// receiver and the Collector make it the `instance` label).
pub(super) const SERVICE_INSTANCE_ID: &str = "service.instance.id";

/// The SDK's detectors (service name, `OTEL_RESOURCE_ATTRIBUTES`, telemetry SDK), then ours on
/// top; without a `service.instance.id` from either, [`default_instance_id`]: replicas pushing
/// under one `service.name` must not merge into one series.
pub(super) fn resource(service_name: &str, attributes: &[(String, String)]) -> Resource {
    let builder = || {
        Resource::builder()
            .with_attributes(
                attributes
                    .iter()
                    .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
            )
            .with_service_name(service_name.to_owned())
    };
    let resource = builder().build();
    if resource
        .get(&opentelemetry::Key::from_static_str(SERVICE_INSTANCE_ID))
        .is_some()
    {
        return resource;
    }
    builder()
        .with_attribute(KeyValue::new(SERVICE_INSTANCE_ID, default_instance_id()))
        .build()
}

/// `<hostname>-<pid>`: unique among the processes of a fleet at one time (a pod's hostname is its
/// name), and new when a process restarts, as a scrape's `instance` of a new pod is. The hostname
/// is the kernel's (`/proc/sys/kernel/hostname`), else `$HOSTNAME`, else `localhost`.
pub(super) fn default_instance_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("{host}-{}", std::process::id())
}

impl Telemetry {
    /// The `tracing-opentelemetry` layer exporting to OTLP; a layer that does nothing without an
    /// exporter, so it composes either way.
    ///
    /// It leaves out the spans of the crates the exporter itself runs on (`h2`, `hyper`, `tonic`,
    /// `tower`, `reqwest`, `opentelemetry*`): exporting them would make every export produce more
    /// spans to export.
    pub fn layer<S>(&self) -> Option<ExportLayer<S>>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        self.provider.as_ref().map(|p| {
            tracing_opentelemetry::layer()
                .with_tracer(p.tracer(SCOPE))
                .with_filter(FilterFn::new(
                    not_exporter_internals as fn(&Metadata<'_>) -> bool,
                ))
        })
    }

    /// The filter from the configuration (`RUST_LOG`).
    pub fn filter(&self) -> EnvFilter {
        EnvFilter::try_new(&self.config.filter)
            .unwrap_or_else(|_| EnvFilter::new(super::DEFAULT_FILTER))
    }

    /// The whole subscriber: filter, `fmt` lines to stderr (unless turned off) and the OTLP layer.
    /// Use it with `tracing::subscriber::set_default` for a scoped installation.
    pub fn subscriber(&self) -> impl Subscriber + Send + Sync + 'static {
        let fmt = self.config.fmt.then(|| {
            fmt::layer()
                .with_writer(SafeStderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        });
        tracing_subscriber::registry()
            .with(self.filter())
            .with(fmt)
            .with(self.layer())
    }

    /// The tracer provider, when an exporter is configured.
    pub fn provider(&self) -> Option<&SdkTracerProvider> {
        self.provider.as_ref()
    }

    /// Installs [`Telemetry::subscriber`] as the global default, the W3C trace-context propagator
    /// and the tracer provider as OpenTelemetry's globals, and returns the guard that flushes.
    pub fn install(self) -> Result<TelemetryGuard, TelemetryError> {
        tracing::subscriber::set_global_default(self.subscriber())
            .map_err(|_| TelemetryError::AlreadyInstalled)?;
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        if let Some(provider) = &self.provider {
            opentelemetry::global::set_tracer_provider(provider.clone());
        }
        Ok(self.into_guard())
    }

    /// The guard that flushes and shuts the provider down, without installing anything.
    pub fn into_guard(self) -> TelemetryGuard {
        TelemetryGuard {
            provider: Exporting::new(
                self.provider,
                |message| TelemetryError::Exporter { message },
                // Only reached after a failed export; the message is redacted.
                "OTLP exporter shut down with an error: some spans may be lost",
            ),
            failures: self.failures,
        }
    }
}

/// Flushes the spans still batched and shuts the exporter down: call
/// [`TelemetryGuard::shutdown`]`.await` at the end of `main`, or let it drop.
///
/// Dropping it blocks until the export finishes (at most the exporter's timeout). Inside a
/// current-thread Tokio runtime a blocking wait would stall the runtime that drives the gRPC
/// connection, so there the drop hands the shutdown to another thread without waiting: prefer
/// `shutdown().await` in that case.
#[derive(Debug)]
#[must_use = "dropping the guard shuts the exporter down: keep it for the life of the program"]
pub struct TelemetryGuard {
    provider: Exporting<SdkTracerProvider>,
    failures: Arc<ExportFailures>,
}

impl TelemetryGuard {
    /// Exports every span ended so far, without shutting down. An error when the exporter failed,
    /// or when spans could not be delivered since the last `flush` (how many, and the last error).
    pub async fn flush(&self) -> Result<(), TelemetryError> {
        self.provider.flush().await?;
        undelivered(&self.failures)
    }

    /// Exports every span ended so far and shuts the exporter down, without blocking the runtime.
    /// An error as for [`flush`](Self::flush): spans the collector did not take are said.
    pub async fn shutdown(self) -> Result<(), TelemetryError> {
        let failures = self.failures.clone();
        self.provider.shutdown().await?;
        undelivered(&failures)
    }
}

/// What the exporter could not deliver since it was last asked, as the guard's error.
fn undelivered(failures: &ExportFailures) -> Result<(), TelemetryError> {
    match failures.take() {
        None => Ok(()),
        Some(message) => Err(TelemetryError::Exporter { message }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_service_instance_id_the_resource_gets_hostname_dash_pid() {
        let id = |resource: &Resource| {
            resource
                .get(&opentelemetry::Key::from_static_str(SERVICE_INSTANCE_ID))
                .map(|v| v.to_string())
        };
        let default = id(&resource("agents", &[])).expect("a default service.instance.id");
        assert_eq!(default, default_instance_id());
        let (host, pid) = default.rsplit_once('-').expect("<hostname>-<pid>");
        assert!(!host.is_empty(), "{default}");
        assert_eq!(pid, std::process::id().to_string());
        // Given, it is kept as is; the service name and other attributes are untouched.
        let given = resource(
            "agents",
            &[
                (SERVICE_INSTANCE_ID.to_owned(), "pod-7".to_owned()),
                ("deployment.environment".to_owned(), "prod".to_owned()),
            ],
        );
        assert_eq!(id(&given).as_deref(), Some("pod-7"));
        assert_eq!(
            given
                .get(&opentelemetry::Key::from_static_str("service.name"))
                .map(|v| v.to_string())
                .as_deref(),
            Some("agents")
        );
    }

    #[test]
    fn the_exporters_own_crates_are_left_out_and_ours_kept() {
        let keep = |target: &str| !is_exporter_internal(target);
        for target in [
            "h2::proto",
            "hyper",
            "hyper_util::client",
            "tonic::transport",
            "opentelemetry_sdk",
            "tower::buffer",
            "reqwest::connect",
        ] {
            assert!(!keep(target), "{target} should be left out");
        }
        for target in [
            "mcp_readiness::layer",
            "my_agent",
            "towers",
            "tower_http::trace",
            "hyper_rustls",
            "hyperloop",
            "rmcp::service",
        ] {
            assert!(keep(target), "{target} should be kept");
        }
    }
}
