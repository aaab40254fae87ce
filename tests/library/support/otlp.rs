//! A real OTLP/HTTP (protobuf) trace receiver for tests, and helpers to read what it got.

use std::net::SocketAddr;

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// What the receiver got: the resource's `service.name` and the spans.
#[derive(Debug)]
pub struct Received {
    pub service_name: Option<String>,
    pub spans: Vec<Span>,
}

pub fn flatten(request: ExportTraceServiceRequest) -> Vec<Received> {
    request
        .resource_spans
        .into_iter()
        .map(|rs| Received {
            service_name: rs
                .resource
                .as_ref()
                .and_then(|r| string_attr(&r.attributes, "service.name")),
            spans: rs.scope_spans.into_iter().flat_map(|ss| ss.spans).collect(),
        })
        .collect()
}

pub fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

pub fn string_attr(attrs: &[KeyValue], key: &str) -> Option<String> {
    match attr(attrs, key) {
        Some(any_value::Value::StringValue(s)) => Some(s.clone()),
        _ => None,
    }
}

/// Starts a receiver on a free loopback port: `POST /v1/traces` with `application/x-protobuf`.
/// Every export request arrives on the returned channel.
pub async fn start_http_receiver() -> (
    SocketAddr,
    mpsc::UnboundedReceiver<ExportTraceServiceRequest>,
) {
    start_protobuf_receiver::<ExportTraceServiceRequest, ExportTraceServiceResponse>("/v1/traces")
        .await
}

/// Starts an OTLP/HTTP receiver of `Request`s on a free loopback port: `POST path` with
/// `application/x-protobuf`, answered with an empty `Response` (no partial success). Every
/// export request arrives on the returned channel; anything else is a 400.
pub async fn start_protobuf_receiver<Request, Response>(
    path: &'static str,
) -> (SocketAddr, mpsc::UnboundedReceiver<Request>)
where
    Request: Message + Default + Send + 'static,
    Response: Message + Default + 'static,
{
    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::{StatusCode, header};

    async fn receive<Request: Message + Default, Response: Message + Default>(
        State(tx): State<mpsc::UnboundedSender<Request>>,
        headers: axum::http::HeaderMap,
        body: Bytes,
    ) -> (StatusCode, [(header::HeaderName, &'static str); 1], Vec<u8>) {
        let protobuf = headers
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v == "application/x-protobuf");
        match Request::decode(body) {
            Ok(request) if protobuf => {
                let _ = tx.send(request);
                (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, "application/x-protobuf")],
                    Response::default().encode_to_vec(),
                )
            }
            _ => (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "text/plain")],
                b"not OTLP protobuf".to_vec(),
            ),
        }
    }

    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local addr");
    let (tx, rx) = mpsc::unbounded_channel();
    let app = axum::Router::new()
        .route(path, axum::routing::post(receive::<Request, Response>))
        .with_state(tx);
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, rx)
}
