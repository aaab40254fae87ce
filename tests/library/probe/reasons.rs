//! Reasons as people read them, from real rmcp clients against real servers on 127.0.0.1: no
//! Rust type name, no whole remote body.
//!
//! URLs that answer, but not MCP: an SSO login page in front of the server (every POST answered
//! `200 text/html`) and a health endpoint (`200 application/json` that is not JSON-RPC). The
//! first answer is the diagnosis, whichever request of the `server/discover` → `initialize`
//! fallback saw it: `protocol_error`, with what the URL answered and what to check.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use axum::http::header;
use mcp_readiness::Hub;
use mcp_readiness::State;
use mcp_readiness::ToolCall;
use mcp_readiness::probe::{ProbeConfig, ProbeRequest};
use mcp_readiness::state::ConnectResult;

use super::*;

/// Serves `content_type` and `body` with `200` to every request on 127.0.0.1; its `/mcp` URL.
async fn answering(content_type: &'static str, body: String) -> String {
    let app = axum::Router::new().fallback(move || {
        let body = body.clone();
        async move { ([(header::CONTENT_TYPE, content_type)], body) }
    });
    let (addr, accepted, listener) = counting_listener().await;
    tokio::spawn(serve_counted(listener, accepted, app));
    format!("http://{addr}/mcp")
}

fn sso_page() -> String {
    format!(
        "<!DOCTYPE html><html><head><title>Sign in</title></head><body>{}</body></html>",
        "<p>Single sign-on: please sign in.</p>".repeat(500)
    )
}

fn assert_readable(reason: &str) {
    assert!(
        !reason.contains("::") && !reason.contains('<') && reason.len() < 600,
        "{reason}"
    );
}

#[tokio::test]
async fn an_sso_page_and_a_health_endpoint_are_protocol_errors_that_say_what_the_url_answered() {
    let cases = [
        (
            answering("text/html; charset=utf-8", sso_page()).await,
            "it answered HTML (text/html; charset=utf-8; a login page?): check that the URL is \
             the MCP endpoint",
        ),
        (
            // Spaced as most servers write JSON: quoted whole, not from its last ": ".
            answering("application/json", r#"{"status": "ok"}"#.into()).await,
            r#"it answered a JSON body that is not JSON-RPC ({"status": "ok"})"#,
        ),
    ];
    let prober = prober(ProbeConfig::allowing(loopback()));
    for (url, said) in cases {
        let answer = prober
            .probe(&ProbeRequest {
                target: url.clone(),
                server: Some("api".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        let reason = answer.outcome.reason.clone().unwrap_or_default();
        assert_eq!(
            answer.outcome.result,
            ConnectResult::ProtocolError,
            "{reason}"
        );
        assert_eq!(answer.outcome.state, State::Absent, "{reason}");
        assert!(reason.contains(said), "{reason}");
        assert!(
            reason.contains("check that the URL is the MCP endpoint"),
            "{reason}"
        );
        assert_readable(&reason);
        assert_eq!(
            sample(
                &answer.text,
                r#"mcp_readiness_connects_total{result="protocol_error",server="api"}"#
            ),
            Some(1.0),
            "{}",
            answer.text
        );
    }
}

#[tokio::test]
async fn a_supervised_server_behind_an_sso_page_reads_absent_with_the_page_named_not_a_closed_channel()
 {
    let url = answering("text/html", sso_page()).await;
    let spec = crate::support::hub::http_server("sso", url, None);
    let hub = crate::support::hub::one(spec, crate::support::hub::options());
    let error = hub
        .call(ToolCall::new("mcp__sso__search"))
        .await
        .unwrap_err();
    let result = error.connect_result();
    assert_eq!(result, Some(ConnectResult::ProtocolError), "{error}");
    let status = hub.server("sso").unwrap();
    let reason = status.reason.unwrap_or_default();
    assert!(reason.contains("answered HTML"), "{reason}");
    assert!(!reason.contains("channel closed"), "{reason}");
    assert_readable(&reason);
    assert_readable(error.message());
    hub.shutdown().await;
}

/// The fixture MCP server, until `failing` is set: then every request is answered `500` with an
/// HTML error page (a proxy in front of a server that went down).
async fn failing_server(failing: Arc<AtomicBool>) -> String {
    let service = mcp::http_service(mcp::PROBE);
    let app = axum::Router::new().nest_service("/mcp", service).layer(
        axum::middleware::from_fn(move |request: Request<Body>, next: axum::middleware::Next| {
            let failing = failing.clone();
            async move {
                if failing.load(Ordering::SeqCst) {
                    return Response::builder()
                        .status(StatusCode::INTERNAL_SERVER_ERROR)
                        .header(header::CONTENT_TYPE, "text/html")
                        .body(Body::from(format!(
                            "<html><head><title>502 Bad Gateway</title></head><body>{}</body></html>",
                            "<p>upstream went away</p>".repeat(400)
                        )))
                        .unwrap();
                }
                next.run(request).await
            }
        }),
    );
    let (addr, accepted, listener) = counting_listener().await;
    tokio::spawn(serve_counted(listener, accepted, app));
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn a_health_ping_that_fails_reads_the_root_cause_not_the_transport_type() {
    use mcp_readiness::Inventory as _;
    let failing = Arc::new(AtomicBool::new(false));
    let url = failing_server(failing.clone()).await;
    let spec = crate::support::hub::http_server("rot", url, None);
    let options = crate::support::hub::options()
        .health_interval(Some(Duration::from_millis(100)))
        .reconnect_on_drop(false)
        .build()
        .unwrap();
    let hub = Hub::new(vec![spec], options).unwrap();
    // The fixture lists `lookup` but does not run it: the call connects and is answered.
    let _ = hub.call(ToolCall::new("mcp__rot__lookup")).await;
    assert_eq!(hub.state("rot"), Some(State::Ready));
    let feed = hub.changes().unwrap();
    let seen = feed.generation();
    failing.store(true, Ordering::SeqCst);
    let reason = tokio::time::timeout(Duration::from_secs(20), async {
        let mut seen = seen;
        loop {
            feed.changed_since(seen).await;
            seen = feed.generation();
            if hub.state("rot") != Some(State::Ready) {
                let status = hub.server("rot").unwrap();
                return status.reason.unwrap_or_default();
            }
        }
    })
    .await
    .expect("the failed ping is noticed");
    assert!(reason.contains("health ping failed"), "{reason}");
    assert!(
        reason.contains(
            "health ping failed: the MCP server: it answered HTTP 500 Internal Server Error"
        ),
        "{reason}"
    );
    assert_readable(&reason);
    hub.shutdown().await;
}

#[tokio::test]
async fn a_server_that_answers_the_handshake_with_a_server_error_is_reachable_and_failing() {
    let url = failing_server(Arc::new(AtomicBool::new(true))).await;
    let spec = crate::support::hub::http_server("down", url, None);
    let hub = crate::support::hub::one(spec, crate::support::hub::options());
    let error = hub
        .call(ToolCall::new("mcp__down__lookup"))
        .await
        .unwrap_err();
    let reason = hub
        .server("down")
        .and_then(|s| s.reason)
        .unwrap_or_default();
    // Its status in words, and a next step that does not send anyone to check it is running:
    // it answered.
    assert!(
        reason.contains("it answered HTTP 500 Internal Server Error"),
        "{reason}"
    );
    assert!(
        reason
            .contains("reachable but answers with a server error: check the MCP server's own logs"),
        "{reason}"
    );
    assert!(
        !reason.contains("check that the server is running"),
        "{reason}"
    );
    assert_readable(&reason);
    assert_readable(error.message());
    hub.shutdown().await;
}

/// Serves `status` (with `headers`) to every request on 127.0.0.1; its `/mcp` URL.
async fn answering_status(
    status: axum::http::StatusCode,
    headers: Vec<(header::HeaderName, &'static str)>,
) -> String {
    let app = axum::Router::new().fallback(move || {
        let headers = headers.clone();
        async move {
            let mut response =
                axum::response::Response::new(axum::body::Body::from("Forbidden by policy"));
            *response.status_mut() = status;
            for (name, value) in headers {
                response
                    .headers_mut()
                    .insert(name, header::HeaderValue::from_static(value));
            }
            response
        }
    });
    let (addr, accepted, listener) = counting_listener().await;
    tokio::spawn(serve_counted(listener, accepted, app));
    format!("http://{addr}/mcp")
}

/// An answer with a status that is neither a credential challenge nor a server error is an
/// answer that is not MCP (`protocol_error`), never `closed` (the server closed or exited); a 5xx
/// or a 429 is `refused` (there and not serving).
#[tokio::test]
async fn an_http_status_answer_is_a_protocol_error_or_refused_never_closed() {
    use axum::http::StatusCode;
    let cases = [
        (
            answering_status(StatusCode::FORBIDDEN, vec![]).await,
            ConnectResult::ProtocolError,
        ),
        (
            answering_status(
                StatusCode::FOUND,
                vec![(header::LOCATION, "https://sso.example/login")],
            )
            .await,
            ConnectResult::ProtocolError,
        ),
        (
            answering_status(StatusCode::NOT_IMPLEMENTED, vec![]).await,
            ConnectResult::Refused,
        ),
        (
            answering_status(StatusCode::SERVICE_UNAVAILABLE, vec![]).await,
            ConnectResult::Refused,
        ),
    ];
    let prober = prober(ProbeConfig::allowing(loopback()));
    for (url, result) in cases {
        let request = ProbeRequest {
            target: url.clone(),
            ..Default::default()
        };
        let answer = prober.probe(&request).await.unwrap();
        assert_eq!(
            answer.outcome.result, result,
            "{url}: {:?}",
            answer.outcome.reason
        );
        assert_eq!(answer.outcome.state, State::Absent, "{url}");
        assert_readable(answer.outcome.reason.as_deref().unwrap_or_default());
    }
}
