//! An MCP server whose OAuth authorization server answers with something that cannot be used
//! (metadata naming another issuer: an attack, or a misconfigured proxy) reads `unauthenticated`
//! with a reason naming the authorization server and what is wrong with it; one that cannot be
//! reached reads `connecting` and says "authorization server unreachable". Real rmcp OAuth
//! client, real HTTP on 127.0.0.1.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use mcp_readiness::client::SigningAlgorithm;
use mcp_readiness::secret::Secret;
use mcp_readiness::state::{ConnectResult, ConnectionEvent};
use mcp_readiness::{
    Hub,
    client::{Dpop, OAuthGrant, OAuthSpec},
};
use mcp_readiness::{ServerSpec, State, ToolCall, TransportSpec};
use serde_json::json;
use tokio::net::TcpListener;

/// An MCP endpoint at `/mcp` that answers every request `401` with a challenge pointing at its
/// protected resource metadata, which names `authorization_server`; at that address (when it is
/// this server) metadata whose `issuer` is `issuer` (`None`: its own origin), with a Dynamic
/// Client Registration endpoint that answers `500` with a 25 kB HTML error page. Returns its
/// `/mcp` URL.
async fn protected_server(
    authorization_server: Option<String>,
    issuer: Option<&'static str>,
) -> String {
    protected_server_with(authorization_server, issuer, json!({})).await
}

/// [`protected_server`] whose authorization server metadata has the members of `extra` too.
async fn protected_server_with(
    authorization_server: Option<String>,
    issuer: Option<&'static str>,
    extra: serde_json::Value,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let authorization_server = authorization_server.unwrap_or_else(|| origin.clone());
    let issuer = issuer.map_or_else(|| origin.clone(), str::to_owned);
    let resource = json!({
        "resource": format!("{origin}/mcp"),
        "authorization_servers": [authorization_server],
    });
    let metadata = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{origin}/authorize"),
        "token_endpoint": format!("{origin}/token"),
        "registration_endpoint": format!("{origin}/register"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    });
    let mut metadata = metadata;
    if let (Some(metadata), Some(extra)) = (metadata.as_object_mut(), extra.as_object()) {
        metadata.extend(extra.clone());
    }
    let challenge =
        format!(r#"Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp""#);
    let unauthorized = move || {
        let challenge = challenge.clone();
        async move {
            (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, challenge)],
            )
                .into_response()
        }
    };
    let mut app = axum::Router::new()
        .route("/mcp", get(unauthorized.clone()).post(unauthorized))
        .route(
            "/register",
            axum::routing::post(|| async {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [(header::CONTENT_TYPE, "text/html")],
                    error_page(),
                )
            }),
        );
    for (path, document) in [
        ("/.well-known/oauth-protected-resource/mcp", &resource),
        ("/.well-known/oauth-protected-resource", &resource),
        ("/.well-known/oauth-authorization-server", &metadata),
        ("/.well-known/openid-configuration", &metadata),
    ] {
        let document = document.clone();
        app = app.route(path, get(move || async move { json_body(&document) }));
    }
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("{origin}/mcp")
}

/// A 25 kB error page, as a web framework's debug mode prints one.
fn error_page() -> String {
    format!(
        "<!DOCTYPE html><html><head><title>Internal Server Error</title><style>body{{}}</style>\
         </head><body><h1>Traceback</h1>{}</body></html>",
        "<pre>  File \"app.py\", line 42, in register</pre>".repeat(500)
    )
}

fn json_body(value: &serde_json::Value) -> axum::response::Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn spec_for(url: String, store: &str, client_id: Option<&str>) -> ServerSpec {
    let path = std::env::temp_dir().join(format!("{store}-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut oauth = OAuthSpec::new(path, client_id.map(str::to_owned));
    oauth.reauthorize = Some("mcp-readiness oauth login --server vault".into());
    crate::support::hub::http_server("vault", url, Some(oauth))
}

fn hub_for(url: String, store: &str) -> Hub {
    let spec = spec_for(url, store, Some("client"));
    crate::support::hub::one(spec, crate::support::hub::options())
}

/// Calls `vault` once, which must fail with `result` and leave the server `state`; returns the
/// server's reason, which must carry no Rust type name.
async fn refused_call(hub: &Hub, result: ConnectResult, state: State) -> String {
    let error = hub
        .call(ToolCall::new("mcp__vault__search"))
        .await
        .unwrap_err();
    assert_eq!(error.connect_result(), Some(result), "{error}");
    assert_eq!(hub.state("vault"), Some(state), "{error}");
    let reason = reason(hub);
    assert!(!reason.contains("::") && !reason.contains('<'), "{reason}");
    reason
}

fn reason(hub: &Hub) -> String {
    hub.server("vault")
        .and_then(|s| s.reason)
        .unwrap_or_default()
}

#[tokio::test]
async fn an_issuer_mismatch_is_unauthenticated_naming_the_authorization_server_and_the_issuers() {
    let url = protected_server(None, Some("https://someone-else.example")).await;
    let hub = hub_for(url, "mcp-readiness-issuer-mismatch");
    let reason = refused_call(&hub, ConnectResult::Unauthorized, State::Unauthenticated).await;
    for said in [
        "its OAuth authorization server cannot be used",
        "issuer `https://someone-else.example`",
        "does not heal by waiting",
        "mcp-readiness oauth login --server vault",
    ] {
        assert!(reason.contains(said), "{said:?} missing: {reason}");
    }
    assert!(!reason.contains("heals when"), "{reason}");
    hub.shutdown().await;
}

#[tokio::test]
async fn an_authorization_server_that_refuses_connections_reads_connecting_and_unreachable() {
    let closed = crate::support::dead_addr().port();
    let url = protected_server(Some(format!("http://127.0.0.1:{closed}")), None).await;
    let hub = hub_for(url, "mcp-readiness-as-outage");
    let reason = refused_call(&hub, ConnectResult::Refused, State::Connecting).await;
    assert!(
        reason.contains("authorization server unreachable"),
        "{reason}"
    );
    assert!(reason.contains("heals when"), "{reason}");
    hub.shutdown().await;
}

/// `oauth login` for a server that is down: discovery starts at the MCP server (its challenge,
/// its protected resource metadata), so the MCP server is named, not an authorization server
/// nobody has reached yet.
#[tokio::test]
async fn a_login_to_a_server_that_is_down_names_the_mcp_server_not_an_authorization_server() {
    let closed = crate::support::dead_addr().port();
    let spec = spec_for(
        format!("http://127.0.0.1:{closed}/mcp"),
        "mcp-readiness-login-down",
        None,
    );
    let error = mcp_readiness::client::authorize(&spec, 0, |url| {
        panic!("no authorization URL without a server: {url}")
    })
    .await
    .unwrap_err()
    .to_string();
    assert!(
        error.contains(
            "the MCP server is unreachable (the discovery of its OAuth metadata): connection \
             refused"
        ),
        "{error}"
    );
    assert!(
        !error.contains("authorization server unreachable"),
        "{error}"
    );
}

#[tokio::test]
async fn a_registration_refused_with_an_html_error_page_is_cut_to_its_status_and_title() {
    let url = protected_server(None, None).await;
    let spec = spec_for(url, "mcp-readiness-dcr-page", None);
    let error = mcp_readiness::client::authorize(&spec, 0, |url| {
        panic!("no authorization URL without a registration: {url}")
    })
    .await
    .unwrap_err()
    .to_string();
    assert!(error.len() < 600, "{} characters", error.len());
    for said in [
        "server `vault`",
        "registration endpoint",
        "HTTP 500",
        "an HTML page: Internal Server Error",
    ] {
        assert!(error.contains(said), "{said:?} missing: {error}");
    }
    assert!(!error.contains('<') && !error.contains("::"), "{error}");
}

/// An MCP server that answers every token `403 insufficient_scope` (it wants `admin`), and its
/// authorization server that grants client-credentials tokens of 3 s with scope `tools` only.
/// Counts the token requests (each also sent on `tokens`) and the requests to `/mcp` that carry a
/// token (the handshakes).
struct StepUpServer {
    url: String,
    token_requests: Arc<AtomicUsize>,
    handshakes: Arc<AtomicUsize>,
    tokens: Arc<std::sync::Mutex<std::sync::mpsc::Receiver<()>>>,
}

impl StepUpServer {
    async fn start() -> StepUpServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let resource = json!({
            "resource": format!("{origin}/mcp"),
            "authorization_servers": [origin],
        });
        let metadata = json!({
            "issuer": origin,
            "authorization_endpoint": format!("{origin}/authorize"),
            "token_endpoint": format!("{origin}/token"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
        });
        let (token_requests, handshakes) =
            (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (sent, tokens) = std::sync::mpsc::channel();
        let sent = Arc::new(std::sync::Mutex::new(sent));
        let challenge = format!(
            r#"Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp""#
        );
        let mcp = {
            let handshakes = handshakes.clone();
            move |headers: axum::http::HeaderMap| {
                let challenge = challenge.clone();
                let handshakes = handshakes.clone();
                async move {
                    if headers.contains_key(header::AUTHORIZATION) {
                        handshakes.fetch_add(1, Ordering::SeqCst);
                        return (
                            StatusCode::FORBIDDEN,
                            [(
                                header::WWW_AUTHENTICATE,
                                r#"Bearer error="insufficient_scope", scope="tools admin""#
                                    .to_owned(),
                            )],
                        )
                            .into_response();
                    }
                    (
                        StatusCode::UNAUTHORIZED,
                        [(header::WWW_AUTHENTICATE, challenge)],
                    )
                        .into_response()
                }
            }
        };
        let token = {
            let token_requests = token_requests.clone();
            move || {
                let n = token_requests.fetch_add(1, Ordering::SeqCst) + 1;
                let _ = sent.lock().unwrap().send(());
                async move {
                    json_body(&json!({
                        "access_token": format!("AT-{n}"),
                        "token_type": "Bearer",
                        "expires_in": 3,
                        "scope": "tools",
                    }))
                }
            }
        };
        let app = axum::Router::new()
            .route("/mcp", get(mcp.clone()).post(mcp))
            .route("/token", axum::routing::post(token))
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(move || async move { json_body(&resource) }),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(move || async move { json_body(&metadata) }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        StepUpServer {
            url: format!("{origin}/mcp"),
            token_requests,
            handshakes,
            tokens: Arc::new(std::sync::Mutex::new(tokens)),
        }
    }

    /// Waits (at most 100 ms of real time) for a token request that came due on the paused
    /// clock to reach the server: the request itself is real loopback I/O.
    async fn settle(&self) {
        let tokens = self.tokens.clone();
        let _ = tokio::task::spawn_blocking(move || {
            tokens
                .lock()
                .unwrap()
                .recv_timeout(std::time::Duration::from_millis(100))
        })
        .await;
    }
}

/// The storm of issue 38: 18 token requests, 18 handshakes and 17 flips out of
/// `unauthenticated` in 21 s. Now: the server stays `unauthenticated`, nothing connects again,
/// and the renewals back off from the renewal interval (1.2 s for a 3 s token).
#[tokio::test]
async fn a_step_up_under_3_s_client_credential_renewals_never_flips_and_paces_its_token_requests() {
    let server = StepUpServer::start().await;
    let path = std::env::temp_dir().join(format!(
        "mcp-readiness-step-up-storm-{}.json",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let mut oauth = OAuthSpec::new(path.clone(), Some("job".into()));
    oauth.client_secret = Some(Secret::new("job-secret-123456"));
    oauth.grant = OAuthGrant::ClientCredentials {
        private_key: None,
        signing_algorithm: SigningAlgorithm::Rs256,
    };
    oauth.scopes = vec!["tools".into()];
    let spec = crate::support::hub::http_server("job", server.url.clone(), Some(oauth));
    let flips = Arc::new(AtomicUsize::new(0));
    let counted = flips.clone();
    let options = crate::support::hub::options()
        .health_interval(None)
        .event_sink(move |event: &ConnectionEvent| {
            if let ConnectionEvent::StateChanged {
                from: State::Unauthenticated,
                ..
            } = event
            {
                counted.fetch_add(1, Ordering::SeqCst);
            }
        })
        .build()
        .unwrap();
    let hub = Hub::new(vec![spec], options).unwrap();
    let call = || ToolCall::new("mcp__job__deploy");
    let error = hub.call(call()).await.unwrap_err();
    assert_eq!(hub.state("job"), Some(State::Unauthenticated), "{error}");
    assert!(
        error.to_string().contains("needs scope `tools admin`"),
        "{error}"
    );
    while server.tokens.lock().unwrap().try_recv().is_ok() {}
    let (tokens_before, handshakes_before) = (
        server.token_requests.load(Ordering::SeqCst),
        server.handshakes.load(Ordering::SeqCst),
    );

    // Paused time that moves only when the test says (a blocking task stops tokio from
    // advancing the clock by itself while real requests are in flight).
    tokio::time::pause();
    let (hold, held) = std::sync::mpsc::channel::<()>();
    let inhibitor = tokio::task::spawn_blocking(move || held.recv());
    for second in 1..=21u32 {
        tokio::time::advance(Duration::from_secs(1)).await;
        server.settle().await;
        // A use, as a service makes one: a server that flipped would connect again here.
        let _ = hub.call(call()).await;
        assert_eq!(
            hub.state("job"),
            Some(State::Unauthenticated),
            "at {second} s"
        );
    }
    drop(hold);
    let _ = inhibitor.await;
    let renewals = server.token_requests.load(Ordering::SeqCst) - tokens_before;
    let handshakes = server.handshakes.load(Ordering::SeqCst) - handshakes_before;
    assert_eq!(
        flips.load(Ordering::SeqCst),
        0,
        "flips out of unauthenticated"
    );
    assert_eq!(handshakes, 0, "handshakes after the step-up");
    // At 1.2 s (the renewal interval), then 3.6, 8.4 and 18 s: doubling waits.
    assert!(
        (1..=4).contains(&renewals),
        "token requests in 21 s: {renewals} (one per renewal interval would be 17)"
    );
    hub.shutdown().await;
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn dpop_asked_for_where_the_authorization_server_takes_no_es256_proofs_is_unauthenticated_naming_it()
 {
    let url = protected_server_with(
        None,
        None,
        json!({ "dpop_signing_alg_values_supported": ["RS256", "PS256"] }),
    )
    .await;
    let mut spec = spec_for(url, "mcp-readiness-dpop-no-es256", Some("client"));
    if let TransportSpec::Http {
        oauth: Some(oauth), ..
    } = &mut spec.transport
    {
        oauth.dpop = Dpop::Always;
    }
    let hub = crate::support::hub::one(spec, crate::support::hub::options());
    let reason = refused_call(&hub, ConnectResult::Unauthorized, State::Unauthenticated).await;
    for said in [
        "`oauth.dpop` is true",
        "without ES256",
        "`dpop_signing_alg_values_supported`",
        "remove `oauth.dpop`",
    ] {
        assert!(reason.contains(said), "{said:?} missing: {reason}");
    }
    hub.shutdown().await;
}

#[tokio::test]
async fn an_oauth_server_that_is_down_reads_absent_like_any_server_that_is_down() {
    // Discovery starts at the MCP server; when it cannot be reached, no authorization server is
    // at fault: `absent`, refused, backed off as any failed connect, never `connecting` for a
    // whole budget.
    let closed = crate::support::dead_addr().port();
    let hub = hub_for(
        format!("http://127.0.0.1:{closed}/mcp"),
        "mcp-readiness-oauth-down",
    );
    let reason = refused_call(&hub, ConnectResult::Refused, State::Absent).await;
    assert!(
        reason.contains("the MCP server is unreachable (the discovery of its OAuth metadata)")
            && reason.contains("check that the server is running and reachable"),
        "{reason}"
    );
    assert!(!reason.contains("heals when"), "{reason}");
    hub.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_login_to_a_server_that_never_answers_ends_with_a_reason_not_a_hang() {
    // Accepts every connection and never answers (a hung server, or a proxy holding it open).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let spec = spec_for(
        format!("http://127.0.0.1:{port}/mcp"),
        "mcp-readiness-login-hang",
        None,
    );
    let error = mcp_readiness::client::authorize(&spec, 0, |url| {
        panic!("no authorization URL from a server that never answers: {url}")
    })
    .await
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("did not answer within 30s") && error.contains("the MCP server"),
        "{error}"
    );
}

#[tokio::test]
async fn a_login_to_a_url_that_answers_a_page_or_an_error_says_what_it_answered() {
    for (status, content_type, said) in [
        (
            StatusCode::OK,
            "text/html; charset=utf-8",
            "the MCP server answered HTTP 200 OK with an HTML page (a login page?)",
        ),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/plain",
            "the MCP server answered HTTP 500 Internal Server Error",
        ),
    ] {
        let app = axum::Router::new().fallback(move || async move {
            (
                status,
                [(header::CONTENT_TYPE, content_type)],
                "<html><head><title>Sign in</title></head></html>",
            )
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let spec = spec_for(url, "mcp-readiness-login-page", None);
        let error = mcp_readiness::client::authorize(&spec, 0, |url| {
            panic!("no authorization URL from a page: {url}")
        })
        .await
        .unwrap_err()
        .to_string();
        let said = said.replace("the MCP server answered", "answered");
        assert!(error.contains(&said), "{error}");
        assert!(error.len() < 800, "{error}");
    }
}

#[tokio::test]
async fn an_oauth_server_that_answers_discovery_with_a_server_error_says_so_once() {
    let app = axum::Router::new()
        .fallback(|| async { (StatusCode::INTERNAL_SERVER_ERROR, "upstream down") });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let hub = hub_for(url, "mcp-readiness-oauth-500");
    let error = hub
        .call(ToolCall::new("mcp__vault__search"))
        .await
        .unwrap_err();
    let reason = reason(&hub);
    assert_eq!(hub.state("vault"), Some(State::Absent), "{error}");
    assert!(
        reason.contains("HTTP 500 Internal Server Error")
            && reason.contains("reachable but answers with a server error"),
        "{reason}"
    );
    assert!(!reason.contains("[redacted]"), "{reason}");
    assert_eq!(reason.matches("failed").count(), 1, "{reason}");
    hub.shutdown().await;
}
