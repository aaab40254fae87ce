//! Shutting an OpenTelemetry provider down from `Drop`, wherever the drop runs.

use opentelemetry_sdk::error::OTelSdkResult;

use super::error::TelemetryError;
use crate::secret::redact;

/// A provider [`Exporting`] flushes and shuts down (the tracer's, the meter's): its blocking
/// `force_flush` and `shutdown`.
pub(super) trait Provider: Clone + Send + 'static {
    fn flush_now(&self) -> OTelSdkResult;
    fn shut_down(&self) -> OTelSdkResult;
}

/// The provider of a guard (none when no exporter is configured): flushed and shut down without
/// blocking the runtime, and shut down when dropped.
pub(super) struct Exporting<P: Provider> {
    provider: Option<P>,
    /// The guard's error for a failed flush or shutdown (the exporter's message, redacted).
    failed: fn(String) -> TelemetryError,
    /// What is logged when the shutdown of a drop fails.
    drop_failure: &'static str,
}

impl<P: Provider> Exporting<P> {
    pub(super) fn new(
        provider: Option<P>,
        failed: fn(String) -> TelemetryError,
        drop_failure: &'static str,
    ) -> Self {
        Exporting {
            provider,
            failed,
            drop_failure,
        }
    }

    /// The provider, while it exports (read by the OTLP metrics export, `otel-metrics`).
    #[cfg_attr(not(feature = "otel-metrics"), allow(dead_code))]
    pub(super) fn provider(&self) -> Option<&P> {
        self.provider.as_ref()
    }

    /// Exports what the provider still holds, without shutting it down.
    pub(super) async fn flush(&self) -> Result<(), TelemetryError> {
        let Some(provider) = self.provider.clone() else {
            return Ok(());
        };
        run_blocking(move || provider.flush_now())
            .await
            .map_err(self.failed)
    }

    /// Exports a last time and shuts the provider down.
    pub(super) async fn shutdown(mut self) -> Result<(), TelemetryError> {
        let Some(provider) = self.provider.take() else {
            return Ok(());
        };
        run_blocking(move || provider.shut_down())
            .await
            .map_err(self.failed)
    }
}

/// As the provider's own (`None`, or `Some` and the provider).
impl<P: Provider + std::fmt::Debug> std::fmt::Debug for Exporting<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.provider.fmt(f)
    }
}

impl<P: Provider> Drop for Exporting<P> {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            shut_down_on_drop(move || provider.shut_down(), self.drop_failure);
        }
    }
}

/// Runs a provider's blocking `force_flush` or `shutdown` on a blocking thread, so that an
/// `async` caller does not block its runtime; the error is the exporter's, redacted.
async fn run_blocking(f: impl FnOnce() -> OTelSdkResult + Send + 'static) -> Result<(), String> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(redact(&e.to_string(), &[])),
        Err(e) => Err(e.to_string()),
    }
}

/// The environment `vars` describe, as the `from_env_with` constructors read it (tests).
#[cfg(test)]
pub(super) fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

/// An environment, and the OTLP endpoint it must give (tests).
#[cfg(test)]
pub(super) type EndpointCase = (Vec<(String, String)>, Option<super::config::OtlpConfig>);

/// How the standard variables choose the OTLP endpoint of `signal` (`TRACES`, `METRICS`), whose
/// HTTP path is `path` (`/v1/traces`): each environment with the `OtlpConfig` it must give. The
/// generic endpoint gets the signal's path over HTTP only; the signal's own variables win and are
/// used as they are (the other signal's are not read); the standard switches turn it off (tests).
#[cfg(test)]
pub(super) fn endpoint_cases(signal: &str, other: &str, path: &str) -> Vec<EndpointCase> {
    use super::config::OtlpConfig;
    let env = |vars: &[(&str, &str)]| -> Vec<(String, String)> {
        vars.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    let generic = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/");
    let endpoint = format!("OTEL_EXPORTER_OTLP_{signal}_ENDPOINT");
    let protocol = format!("OTEL_EXPORTER_OTLP_{signal}_PROTOCOL");
    let others = format!("OTEL_EXPORTER_OTLP_{other}_PROTOCOL");
    let exporter = format!("OTEL_{signal}_EXPORTER");
    vec![
        (
            env(&[generic]),
            Some(OtlpConfig::http(format!("http://c:4318{path}"))),
        ),
        (
            env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4317"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ]),
            Some(OtlpConfig::grpc("http://c:4317")),
        ),
        (
            env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4317"),
                (&endpoint, "http://signal:9999/custom"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                (&protocol, "http/protobuf"),
                (&others, "grpc"),
            ]),
            Some(OtlpConfig::http("http://signal:9999/custom")),
        ),
        (env(&[generic, ("OTEL_SDK_DISABLED", "true")]), None),
        (env(&[generic, (&exporter, "none")]), None),
    ]
}

/// Runs `shutdown` (a provider's: it flushes what is pending, and blocks) from a `Drop`: on a
/// current-thread runtime on a thread of its own (blocking there would stall the runtime the
/// export needs), on a multi-thread runtime in `block_in_place`, outside a runtime directly. A
/// failure is logged as `failure` with its error redacted; nothing else can be done in a drop.
fn shut_down_on_drop(
    shutdown: impl FnOnce() -> OTelSdkResult + Send + 'static,
    failure: &'static str,
) {
    use tokio::runtime::{Handle, RuntimeFlavor};

    let result = match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::CurrentThread => {
            std::thread::spawn(shutdown);
            return;
        }
        Ok(_) => tokio::task::block_in_place(shutdown),
        Err(_) => shutdown(),
    };
    if let Err(e) = result {
        tracing::warn!(error = %redact(&e.to_string(), &[]), "{failure}");
    }
}
