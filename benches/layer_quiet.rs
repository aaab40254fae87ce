//! What the readiness layer costs on the ready path when no span is recorded: with no subscriber
//! at all, then under a subscriber whose filter drops the layer's `info` span (as `RUST_LOG=warn`
//! does). A bench of its own because the other layer benches install their subscriber
//! process-wide. The rows are in `support/quiet_rows.rs`.
//!
//! Run with `cargo bench --bench layer_quiet` (add a criterion filter that matches no row, e.g.
//! `-- summary-only`, to print only the interleaved summary).

mod support;

use support::quiet_rows;

use criterion::Criterion;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    // No subscriber: every span is disabled.
    quiet_rows::bench_rows(&mut criterion, "none");
    // Process-wide, as a service installs it; the layer's spans are `info`, below `warn`.
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(LevelFilter::WARN))
        .expect("no subscriber installed yet");
    quiet_rows::bench_rows(&mut criterion, "warn");
    criterion.final_summary();
}
