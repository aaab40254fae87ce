//! An MCP server whose OAuth authorization server answers with something that cannot be used
//! (metadata naming another issuer: an attack, or a misconfigured proxy) reads `unauthenticated`
//! with a reason naming the authorization server and what is wrong with it; one that cannot be
//! reached reads `connecting` and says "authorization server unreachable". Real rmcp OAuth
//! client, real HTTP on 127.0.0.1.

use std::time::Duration;

use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use mcp_readiness::secret::Secret;
use mcp_readiness::state::ConnectResult;
use mcp_readiness::supervise::{Hub, HubOptions, OAuthSpec};
use mcp_readiness::{ServerSpec, State, ToolCall, TransportSpec};
use serde_json::json;
use tokio::net::TcpListener;

/// An MCP endpoint at `/mcp` that answers every request `401` with a challenge pointing at its
/// protected resource metadata, which names `authorization_server`; at that address (when it is
/// this server) metadata whose `issuer` is `issuer`. Returns its `/mcp` URL.
async fn protected_server(authorization_server: Option<String>, issuer: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let authorization_server = authorization_server.unwrap_or_else(|| origin.clone());
    let resource = json!({
        "resource": format!("{origin}/mcp"),
        "authorization_servers": [authorization_server],
    });
    let metadata = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{origin}/authorize"),
        "token_endpoint": format!("{origin}/token"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    });
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
    let app = axum::Router::new()
        .route("/mcp", get(unauthorized.clone()).post(unauthorized))
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get({
                let resource = resource.clone();
                move || async move { json_body(&resource) }
            }),
        )
        .route(
            "/.well-known/oauth-protected-resource",
            get(move || async move { json_body(&resource) }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get({
                let metadata = metadata.clone();
                move || async move { json_body(&metadata) }
            }),
        )
        .route(
            "/.well-known/openid-configuration",
            get(move || async move { json_body(&metadata) }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("{origin}/mcp")
}

fn json_body(value: &serde_json::Value) -> axum::response::Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn hub_for(url: String, store: &str) -> Hub {
    let path = std::env::temp_dir().join(format!("{store}-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut oauth = OAuthSpec::new(path, Some("client".into()));
    oauth.reauthorize = Some("mcp-readiness oauth login --server vault".into());
    let spec = ServerSpec {
        name: "vault".into(),
        transport: TransportSpec::Http {
            url: Secret::new(url),
            headers: Default::default(),
            oauth: Some(oauth),
        },
    };
    let options = HubOptions::builder()
        .connect_timeout(Duration::from_secs(10))
        .health_interval(None)
        .build()
        .unwrap();
    Hub::new(vec![spec], options).unwrap()
}

fn reason(hub: &Hub) -> String {
    hub.servers()
        .into_iter()
        .find(|s| &*s.name == "vault")
        .and_then(|s| s.reason)
        .unwrap_or_default()
}

#[tokio::test]
async fn an_issuer_mismatch_is_unauthenticated_naming_the_authorization_server_and_the_issuers() {
    let url = protected_server(None, "https://someone-else.example").await;
    let hub = hub_for(url, "mcp-readiness-issuer-mismatch");
    let error = hub
        .call(ToolCall::new("mcp__vault__search"))
        .await
        .unwrap_err();
    assert_eq!(
        error.connect_result(),
        Some(ConnectResult::Unauthorized),
        "{error}"
    );
    assert_eq!(hub.state("vault"), Some(State::Unauthenticated), "{error}");
    let reason = reason(&hub);
    for said in [
        "its OAuth authorization server cannot be used",
        "issuer `https://someone-else.example`",
        "does not heal by waiting",
        "mcp-readiness oauth login --server vault",
    ] {
        assert!(reason.contains(said), "{said:?} missing: {reason}");
    }
    assert!(!reason.contains("heals when"), "{reason}");
    assert!(!reason.contains("::") && !reason.contains('<'), "{reason}");
    hub.shutdown().await;
}

#[tokio::test]
async fn an_authorization_server_that_refuses_connections_reads_connecting_and_unreachable() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = protected_server(Some(format!("http://127.0.0.1:{closed}")), "unused").await;
    let hub = hub_for(url, "mcp-readiness-as-outage");
    let error = hub
        .call(ToolCall::new("mcp__vault__search"))
        .await
        .unwrap_err();
    assert_eq!(
        error.connect_result(),
        Some(ConnectResult::Refused),
        "{error}"
    );
    assert_eq!(hub.state("vault"), Some(State::Connecting), "{error}");
    let reason = reason(&hub);
    assert!(
        reason.contains("authorization server unreachable"),
        "{reason}"
    );
    assert!(reason.contains("heals when"), "{reason}");
    assert!(!reason.contains("::") && !reason.contains('<'), "{reason}");
    hub.shutdown().await;
}
