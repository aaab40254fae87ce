//! The library's own tests, hermetic (loopback only, no system tools), in one test binary: one
//! module per component. `cargo test -p mcp-readiness --test library <module>` runs one room.

mod support;

mod config;
mod core;
mod exporter;
mod exposition {
    mod golden;
    mod label_values;
    mod registry;
}
mod inner_service;
mod layer;
mod metrics {
    mod caps;
    mod recorder;
    mod removal;
}
mod peers;
#[cfg(all(feature = "otlp-grpc", feature = "otlp-http"))]
mod telemetry;
