//! The rows of `layer.rs` with OpenTelemetry export: a `Registry` + `tracing-opentelemetry`
//! exporting through the SDK's batching processor to an exporter that drops each batch; then what
//! each attribute of the layer's span costs (`support/attributes.rs`).
//!
//! Run with `cargo bench --bench layer --bench layer_otel`.

mod support;

use support::{attributes, layer_rows};

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
    // The SDK's defaults, as a service installs it (a 2,048-span queue: past it, spans are
    // dropped on the calling thread).
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(DropExporter)
        .build();
    let otel = tracing_opentelemetry::layer().with_tracer(provider.tracer("bench"));
    // Process-wide, as a service installs it (see `layer_rows`).
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(otel))
        .expect("no subscriber installed yet");
    let mut criterion = Criterion::default().configure_from_args();
    layer_rows::bench_rows(&mut criterion, "registry+otel", 1.2);
    // The attributes' costs through an exporter that runs on the calling thread: each span's
    // attributes are freed where they were made, so a row does not depend on how far the batch
    // exporter's thread has got (which moves single attributes' figures by ±100 ns here).
    let simple = SdkTracerProvider::builder()
        .with_simple_exporter(DropExporter)
        .build();
    let dispatch = tracing::Dispatch::new(
        tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(simple.tracer("bench"))),
    );
    attributes::print_attribute_costs("registry+otel, simple exporter", dispatch);
    let _ = simple.shutdown();
    criterion.final_summary();
    let _ = provider.shutdown();
}
