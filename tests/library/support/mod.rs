//! Helpers of the library's own tests (hermetic: loopback only).
#![allow(dead_code)]

pub mod call;
pub mod events;
pub mod exposition;
pub mod grpc;
pub mod hub;
#[cfg(all(feature = "otel-metrics", feature = "otlp-grpc", feature = "otlp-http"))]
pub mod otlp_metrics;

/// A loopback address nothing listens on (free a moment ago): a collector, a server or a gateway
/// that is not there.
pub fn dead_addr() -> std::net::SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("bind 127.0.0.1:0")
}
