//! The library's own tests, hermetic (loopback only, no system tools), in one test binary: one
//! module per component. `cargo test -p mcp-readiness --test library <module>` runs one room.

mod support;

mod config;
mod core;
mod inner_service;
mod layer;
mod metrics;
mod peers;
#[cfg(all(feature = "otlp-grpc", feature = "otlp-http"))]
mod telemetry;
