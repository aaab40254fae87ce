//! The `/metrics` endpoint over a real socket: metrics, a landing page and 404, a taken address,
//! the router mounted into a user's application, the default listen address.

use mcp_readiness::Metrics;
use mcp_readiness::State;
use mcp_readiness::exporter;
use mcp_readiness::state::EventSink;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::events::*;
use crate::support::exposition::*;

async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

#[tokio::test]
async fn the_endpoint_serves_metrics_a_landing_page_and_404_over_a_real_socket() {
    let metrics = Metrics::new();
    metrics.on_event(&added("files", State::Ready));
    let server = exporter::serve(metrics.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);

    let (status, head, body) = get(addr, "/metrics").await;
    assert_eq!(status, 200);
    assert!(
        head.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    assert!(body.contains(r#"mcp_readiness_server_state{server="files",state="ready"} 1"#));
    assert_eq!(parse(&body), parse(&metrics.render()));

    let (status, head, body) = get(addr, "/status").await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(body.contains("<a href=\"/metrics\">"));

    // `/` sends a browser to the status page; anything else is not found.
    let (redirect, head, _) = get(addr, "/").await;
    assert!(head.contains("location: /status"), "{head}");
    assert_eq!((redirect, get(addr, "/nope").await.0), (307, 404));

    server.shutdown().await.unwrap();
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "still listening after shutdown"
    );
}

#[tokio::test]
async fn a_taken_address_is_an_error_that_says_what_to_do() {
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = taken.local_addr().unwrap();
    let error = exporter::serve(Metrics::new(), addr).await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with(&format!("could not listen on {addr} (")),
        "{message}"
    );
    assert!(message.ends_with(
        "choose another address (e.g. --listen 127.0.0.1:0) or stop the process using it"
    ));
}

#[tokio::test]
async fn the_metrics_router_mounts_into_a_users_application() {
    let metrics = Metrics::new();
    let app = axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .merge(exporter::router(metrics));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    let (status, _, body) = get(addr, "/healthz").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    let (status, _, body) = get(addr, "/metrics").await;
    assert_eq!(status, 200);
    assert!(body.contains("mcp_readiness_build_info"));
    let (status, _, body) = get(addr, "/status").await;
    assert_eq!(status, 200);
    assert!(body.contains("<!DOCTYPE html>"), "{body}");
    // `/` stays the host's: the router does not take it.
    let (status, _, _) = get(addr, "/").await;
    assert_eq!(status, 404);
    task.abort();
}

#[test]
fn the_default_listen_address_is_loopback_9464() {
    assert_eq!(exporter::DEFAULT_LISTEN.to_string(), "127.0.0.1:9464");
}
