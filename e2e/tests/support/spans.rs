//! The span collector of the tracing tests that have binaries of their own (`semconv.rs`,
//! `trace_propagation.rs`), included by each with `#[path]`.

use std::sync::{Arc, Mutex};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing::subscriber::DefaultGuard;
use tracing_subscriber::layer::SubscriberExt;

/// Every span exported so far.
#[derive(Debug, Clone, Default)]
pub struct Collect(pub Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collect {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().unwrap().extend(batch);
        Ok(())
    }
}

/// Installs, for this thread until the guard drops, a subscriber that exports the `tracing` spans
/// through a tracer named `tracer` to a fresh [`Collect`]; returns it, the provider (to flush) and
/// the guard.
pub fn collect_spans(tracer: &'static str) -> (Collect, SdkTracerProvider, DefaultGuard) {
    let exporter = Collect::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer(tracer)));
    let guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();
    (exporter, provider, guard)
}
