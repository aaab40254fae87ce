//! Helpers of the library's own tests (hermetic: loopback only).
#![allow(dead_code)]

pub mod call;
pub mod events;
pub mod exposition;
pub mod grpc;
pub mod hub;
#[cfg(all(feature = "otel-metrics", feature = "otlp-grpc", feature = "otlp-http"))]
pub mod otlp_metrics;
