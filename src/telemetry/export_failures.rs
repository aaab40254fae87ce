//! What the collector did not take is said, not lost in silence: the span exporter and the metric
//! exporter count the exports they could not deliver, log the first failure of a run of them
//! (once, until an export succeeds again), and their handle's `flush` / `shutdown` returns what
//! failed since it last asked, with the exporter's own words (the SDK's flush error says only
//! `InternalFailure("Failed to flush")`).

use std::sync::{Arc, Mutex};

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
#[cfg(feature = "otel-metrics")]
use opentelemetry_sdk::metrics::{
    Temporality, data::ResourceMetrics, exporter::PushMetricExporter,
};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

use crate::secret::redact_everywhere;
use crate::util::MutexExt as _;

/// The longest exporter message kept: its errors can quote a whole response body.
const MESSAGE_MAX: usize = 300;

/// What an exporter could not deliver since its handle last asked.
#[derive(Debug)]
pub(crate) struct ExportFailures {
    /// What one export carries, for the words.
    carried: Carried,
    failed: Mutex<Failed>,
}

/// What one export of an exporter carries.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Carried {
    /// A batch of spans: counted by span.
    Spans,
    /// One collection of every metric.
    #[cfg_attr(not(feature = "otel-metrics"), allow(dead_code))]
    Metrics,
}

#[derive(Debug, Default)]
struct Failed {
    batches: u64,
    spans: u64,
    /// The last failure's message (redacted, cut).
    last: Option<String>,
    /// Whether the last export failed: the first failure of a run of them is logged.
    failing: bool,
}

impl ExportFailures {
    pub(crate) fn new(carried: Carried) -> Self {
        ExportFailures {
            carried,
            failed: Mutex::default(),
        }
    }

    /// Counts an export of `spans` spans (0 for metrics) the exporter could not deliver; `true`
    /// when it is the first failure since an export succeeded (or since the start).
    fn failed(&self, spans: usize, error: &OTelSdkError) -> (bool, String) {
        let message = exporter_message(error);
        let mut failed = self.failed.lock_unpoisoned();
        failed.batches += 1;
        failed.spans += spans as u64;
        failed.last = Some(message.clone());
        let first = !std::mem::replace(&mut failed.failing, true);
        (first, message)
    }

    fn succeeded(&self) {
        self.failed.lock_unpoisoned().failing = false;
    }

    /// What failed since the last call, in words; `None` when every export was delivered.
    pub(crate) fn take(&self) -> Option<String> {
        let mut failed = self.failed.lock_unpoisoned();
        if failed.batches == 0 {
            return None;
        }
        let taken = std::mem::take(&mut *failed);
        failed.failing = taken.failing;
        let plural =
            |n: u64, one: &'static str, many: &'static str| if n == 1 { one } else { many };
        let what = match self.carried {
            Carried::Spans => format!(
                "{} {} in {} {}",
                taken.spans,
                plural(taken.spans, "span", "spans"),
                taken.batches,
                plural(taken.batches, "batch", "batches")
            ),
            Carried::Metrics => format!(
                "{} {} of the metrics",
                taken.batches,
                plural(taken.batches, "export", "exports")
            ),
        };
        Some(format!(
            "{what} could not be exported (the last error: {})",
            taken.last.unwrap_or_default()
        ))
    }

    /// Counts the `result` of an export of `spans` spans (0 for metrics), and logs the first
    /// failure of a run of them.
    fn count(&self, spans: usize, result: &OTelSdkResult) {
        let Err(error) = result else {
            self.succeeded();
            return;
        };
        let (first, message) = self.failed(spans, error);
        if first {
            let what = match self.carried {
                Carried::Spans => "spans",
                Carried::Metrics => "metrics",
            };
            tracing::warn!(
                "{what} could not be exported to the OTLP collector: {message}; check \
                 OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is reachable (said once until \
                 an export succeeds again)"
            );
        }
    }
}

/// The exporter's message, redacted (an endpoint may carry credentials) and cut.
fn exporter_message(error: &OTelSdkError) -> String {
    let text = match error {
        OTelSdkError::InternalFailure(message) => message.clone(),
        // `Duration`'s own form: `10s`, `1.5s`.
        OTelSdkError::Timeout(after) => format!("no answer within {after:?}"),
        other => other.to_string(),
    };
    let text = redact_everywhere(text.trim());
    match text.char_indices().nth(MESSAGE_MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// An exporter (of spans, or of metrics with `otel-metrics`) that counts what `E` could not
/// deliver into an [`ExportFailures`].
#[derive(Debug)]
pub(crate) struct ReportingExporter<E> {
    inner: E,
    failures: Arc<ExportFailures>,
}

impl<E> ReportingExporter<E> {
    pub(crate) fn new(inner: E, failures: Arc<ExportFailures>) -> Self {
        ReportingExporter { inner, failures }
    }
}

impl<E: SpanExporter> SpanExporter for ReportingExporter<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        let result = self.inner.export(batch).await;
        self.failures.count(spans, &result);
        result
    }

    fn shutdown_with_timeout(&self, timeout: std::time::Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

#[cfg(feature = "otel-metrics")]
impl<E: PushMetricExporter> PushMetricExporter for ReportingExporter<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let result = self.inner.export(metrics).await;
        self.failures.count(0, &result);
        result
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: std::time::Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_counted_said_once_per_run_of_them_and_taken_once() {
        let failures = ExportFailures::new(Carried::Spans);
        assert_eq!(failures.take(), None);
        let refused = OTelSdkError::InternalFailure(format!(
            "connection refused to https://user:secret@collector.example/v1/traces {}",
            "x".repeat(1000)
        ));
        assert!(failures.failed(3, &refused).0, "the first failure is said");
        assert!(!failures.failed(2, &refused).0, "the second is not");
        let taken = failures.take().expect("what failed");
        assert!(
            taken.starts_with("5 spans in 2 batches could not be exported (the last error: "),
            "{taken}"
        );
        assert!(!taken.contains("secret"), "{taken}");
        assert!(taken.chars().count() < MESSAGE_MAX + 100, "{taken}");
        assert_eq!(failures.take(), None, "taken once");
        // Still failing: not said again until an export succeeds.
        assert!(!failures.failed(1, &refused).0);
        failures.succeeded();
        assert!(
            failures
                .failed(
                    1,
                    &OTelSdkError::Timeout(std::time::Duration::from_secs(10))
                )
                .0
        );
        assert_eq!(
            failures.take().as_deref(),
            Some(
                "2 spans in 2 batches could not be exported (the last error: no answer within 10s)"
            )
        );
        let metrics = ExportFailures::new(Carried::Metrics);
        metrics.failed(0, &refused);
        let taken = metrics.take().expect("what failed");
        assert!(
            taken.starts_with("1 export of the metrics could not be exported (the last error: "),
            "{taken}"
        );
    }
}
