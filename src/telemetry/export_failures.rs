//! Spans the collector did not take are said, not lost in silence: the span exporter counts the
//! batches it could not deliver, logs the first failure of a run of them (once, until an export
//! succeeds again), and the guard's `flush` / `shutdown` returns what failed since it last asked.

use std::sync::{Arc, Mutex};

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

use crate::secret::redact_everywhere;
use crate::util::MutexExt as _;

/// The longest exporter message kept: its errors can quote a whole response body.
const MESSAGE_MAX: usize = 300;

/// What the span exporter could not deliver since the guard last asked.
#[derive(Debug, Default)]
pub(crate) struct ExportFailures(Mutex<Failed>);

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
    /// Counts a batch of `spans` spans the exporter could not deliver; `true` when it is the first
    /// failure since an export succeeded (or since the start).
    fn failed(&self, spans: usize, error: &OTelSdkError) -> (bool, String) {
        let message = exporter_message(error);
        let mut failed = self.0.lock_unpoisoned();
        failed.batches += 1;
        failed.spans += spans as u64;
        failed.last = Some(message.clone());
        let first = !std::mem::replace(&mut failed.failing, true);
        (first, message)
    }

    fn succeeded(&self) {
        self.0.lock_unpoisoned().failing = false;
    }

    /// What failed since the last call, in words; `None` when every batch was delivered.
    pub(crate) fn take(&self) -> Option<String> {
        let mut failed = self.0.lock_unpoisoned();
        if failed.batches == 0 {
            return None;
        }
        let taken = std::mem::take(&mut *failed);
        failed.failing = taken.failing;
        Some(format!(
            "{} span{} in {} batch{} could not be exported (the last error: {})",
            taken.spans,
            if taken.spans == 1 { "" } else { "s" },
            taken.batches,
            if taken.batches == 1 { "" } else { "es" },
            taken.last.unwrap_or_default()
        ))
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

/// A span exporter that counts what `E` could not deliver into an [`ExportFailures`].
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
        match &result {
            Ok(()) => self.failures.succeeded(),
            Err(error) => {
                let (first, message) = self.failures.failed(spans, error);
                if first {
                    tracing::warn!(
                        "spans could not be exported to the OTLP collector: {message}; check \
                         OTEL_EXPORTER_OTLP_ENDPOINT and that the collector is reachable (said \
                         once until an export succeeds again)"
                    );
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_counted_said_once_per_run_of_them_and_taken_once() {
        let failures = ExportFailures::default();
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
    }
}
