//! The library's own tests, hermetic (loopback only, no system tools), in one test binary: one
//! module per component (the rooms of `src/`). `cargo test -p mcp-readiness --test library
//! <module>` runs one room, e.g. `layer::` or `exposition::golden`.

mod support;

mod architecture;
#[cfg(feature = "oauth")]
mod authorization_server;
mod config;
mod exporter;
mod exposition {
    mod golden;
    mod label_values;
    mod registry;
}
mod layer;
mod metrics {
    mod caps;
    mod recorder;
    mod removal;
}
#[cfg(all(feature = "otel-metrics", feature = "otlp-grpc", feature = "otlp-http"))]
mod otel_metrics;
mod peers;
mod plan;
mod probe;
mod public_surface;
mod resolve;
#[cfg(all(feature = "otlp-grpc", feature = "otlp-http"))]
mod telemetry;
