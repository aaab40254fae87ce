//! What the readiness layer costs on the ready path (a cache hit), next to what users already pay,
//! under a plain `tracing_subscriber::Registry` (with a pass-everything `LevelFilter` layer: a
//! `Registry` with no layer at all never frees closed spans, tokio-rs/tracing#900, and would
//! measure its own page faults). The rows are in `support/layer_rows.rs`;
//! `layer_otel.rs` runs the same rows with OpenTelemetry export.
//!
//! Run with `cargo bench --bench layer --bench layer_otel`.

mod support;

use support::layer_rows;

use criterion::Criterion;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;

fn main() {
    // Process-wide, as a service installs it (see `layer_rows`).
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry().with(LevelFilter::TRACE),
    )
    .expect("no subscriber installed yet");
    let mut criterion = Criterion::default().configure_from_args();
    layer_rows::bench_rows(&mut criterion, "registry", 1.0);
    criterion.final_summary();
}
