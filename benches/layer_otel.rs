//! The rows of `layer.rs` with OpenTelemetry export: a `Registry` + `tracing-opentelemetry`
//! exporting through the SDK's batching processor to an exporter that drops each batch.
//!
//! Run with `cargo bench --bench layer --bench layer_otel`.

#[path = "support/attributes.rs"]
mod attributes;
#[path = "support/bare.rs"]
mod bare;
#[path = "support/layer_rows.rs"]
mod layer_rows;
#[path = "support/minimum.rs"]
mod minimum;
#[path = "support/rounds.rs"]
mod rounds;
#[path = "support/threads.rs"]
mod threads;

use std::hint::black_box;

use criterion::Criterion;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use tracing_subscriber::layer::SubscriberExt;

#[derive(Debug)]
struct DropExporter;

impl SpanExporter for DropExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        black_box(batch);
        Ok(())
    }
}

fn main() {
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(DropExporter)
        .build();
    let otel = tracing_opentelemetry::layer().with_tracer(provider.tracer("bench"));
    // Process-wide, as a service installs it (see `layer_rows`).
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(otel))
        .expect("no subscriber installed yet");
    let mut criterion = Criterion::default().configure_from_args();
    layer_rows::bench_rows(&mut criterion, "registry+otel", 1.2);
    attributes::print_attribute_costs("registry+otel");
    criterion.final_summary();
    let _ = provider.shutdown();
}
