//! A real OTLP metrics receiver for tests, over gRPC (tonic) and HTTP/protobuf (axum), like the
//! trace receivers of `otlp.rs` (which the fixtures crate shares, so this one is separate), and a
//! helper to read what it got.

use std::net::SocketAddr;

use tokio::sync::mpsc;

use mcp_readiness_fixtures::otlp::string_attr;

use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::metrics::v1::Metric;

/// One metric the receiver got, with the `service.name` and instrumentation scope it came under.
#[derive(Debug, Clone)]
pub struct ReceivedMetric {
    pub service_name: Option<String>,
    pub scope: String,
    pub metric: Metric,
}

pub fn flatten_metrics(request: ExportMetricsServiceRequest) -> Vec<ReceivedMetric> {
    let mut out = Vec::new();
    for rm in request.resource_metrics {
        let service_name = rm
            .resource
            .as_ref()
            .and_then(|r| string_attr(&r.attributes, "service.name"));
        for sm in rm.scope_metrics {
            let scope = sm.scope.map(|s| s.name).unwrap_or_default();
            for metric in sm.metrics {
                out.push(ReceivedMetric {
                    service_name: service_name.clone(),
                    scope: scope.clone(),
                    metric,
                });
            }
        }
    }
    out
}

/// Starts an OTLP/HTTP receiver on a free loopback port: `POST /v1/metrics` with
/// `application/x-protobuf`. Every export request arrives on the returned channel.
pub async fn start_metrics_http_receiver() -> (
    SocketAddr,
    mpsc::UnboundedReceiver<ExportMetricsServiceRequest>,
) {
    mcp_readiness_fixtures::otlp::start_protobuf_receiver::<
        ExportMetricsServiceRequest,
        ExportMetricsServiceResponse,
    >("/v1/metrics")
    .await
}

// Starts an OTLP/gRPC metrics receiver (tonic) on a free loopback port.
crate::support::grpc::grpc_receiver!(
    pub start_metrics_grpc_receiver,
    GrpcMetricsReceiver: MetricsService,
    MetricsServiceServer,
    ExportMetricsServiceRequest => ExportMetricsServiceResponse
);
