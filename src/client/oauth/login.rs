//! `mcp-readiness oauth login`: the OAuth 2.1 authorization-code flow with PKCE for one
//! configured server, as the MCP authorization spec (2026-07-28) describes it: discovery from
//! the server's 401 challenge ([`discovery`](crate::client::oauth::discovery)), the client registered by hand or
//! registered now ([`registration`](crate::client::oauth::registration)), the authorization URL printed, the
//! redirect received on a loopback port, its `iss` checked against the authorization server's
//! issuer (RFC 9207), and the code exchanged with the `resource` the tokens are for (RFC 8707).
//! The tokens (and a registration) go to the server's credential store file (mode 0600). With
//! DPoP, the tokens are bound to a new key pair, kept in the store with them. No token, code,
//! key or secret is ever printed.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use crate::client::oauth::store::FileStore;
use crate::client::spec::{OAuthGrant, OAuthSpec};
use crate::secret::{Secret, redact};

/// How long the login waits for the browser to come back.
const CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);

/// How long each request before the browser opens may take (the MCP server's challenge and
/// metadata, the authorization server's metadata, registration): a server that accepts the
/// connection and never answers ends the login with a reason, not a silent hang.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(30);

/// `step` within [`DISCOVERY_TIMEOUT`], or a reason that names `who` did not answer.
async fn within<T>(
    server: &str,
    who: &str,
    step: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(DISCOVERY_TIMEOUT, step)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "server `{server}`: {who} did not answer within {}; check that it is up and \
                 answering (a proxy that holds the connection open without answering looks the \
                 same)",
                crate::util::Human(DISCOVERY_TIMEOUT)
            ))
        })
}

/// A login that did not end with tokens in the store. The message names the server and what to
/// do; it never contains a token, code or secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LoginError(String);

/// Authorizes `spec` (a streamable-HTTP server with `oauth`) with the OAuth 2.1 authorization-code
/// flow and PKCE, and writes the tokens to its credential store. `show_url` is handed the URL the
/// user opens in a browser; the redirect comes back to `http://127.0.0.1:<port>/callback`
/// (`port` 0: the port of the kept registration, else any free port; register the redirect URI
/// with the authorization server if it wants an exact one). Returns the store file written.
pub async fn authorize(
    spec: &crate::client::ServerSpec,
    port: u16,
    show_url: impl FnOnce(&str),
) -> Result<std::path::PathBuf, LoginError> {
    let crate::client::TransportSpec::Http {
        url,
        oauth: Some(oauth),
        ..
    } = &spec.transport
    else {
        return Err(LoginError(format!(
            "server `{}` has no `oauth` block: only a streamable-HTTP server with `oauth` can be \
             authorized",
            spec.name
        )));
    };
    let grant = match oauth.grant {
        OAuthGrant::AuthorizationCode => None,
        OAuthGrant::ClientCredentials { .. } => Some(("client_credentials", "client credentials")),
        OAuthGrant::WorkloadIdentity { .. } => Some((
            "workload_identity",
            "workload's identity token (`oauth.assertion_file` or `oauth.assertion_command`)",
        )),
        OAuthGrant::EnterpriseManaged { .. } => Some((
            "enterprise_managed",
            "enterprise ID token (`oauth.assertion_file` or `oauth.assertion_command`), \
             exchanged at `oauth.identity_provider`",
        )),
    };
    if let Some((name, with)) = grant {
        return Err(LoginError(format!(
            "server `{}` uses `\"grant\": \"{name}\"`: there is no login; `check` and `serve` \
             fetch and renew its tokens with the {with}",
            spec.name
        )));
    }
    login(&spec.name, url, oauth, port, show_url)
        .await
        .map_err(LoginError)
}

/// Runs the flow for `server` at `url`; `show_url` is handed the authorization URL to open.
async fn login(
    server: &str,
    url: &Secret,
    spec: &OAuthSpec,
    port: u16,
    show_url: impl FnOnce(&str),
) -> Result<std::path::PathBuf, String> {
    let mut known = vec![url.clone()];
    known.extend(spec.client_secret.clone());
    let failed = |what: &str, e: &(dyn std::error::Error + 'static), known: &[Secret]| {
        format!(
            "server `{server}`: {what} failed: {}",
            redact(&crate::client::reasons::reason::explain(e), known)
        )
    };
    let fail = |what: &str, e: &(dyn std::error::Error + 'static)| {
        failed(what, e, std::slice::from_ref(url))
    };
    let store = FileStore::new(spec.store.clone());
    let kept = store
        .registration()
        .await
        .map_err(|e| format!("server `{server}`: {e}"))?;
    let port = match (port, &kept) {
        (0, Some(kept)) if spec.client_id.is_none() => {
            super::registration::registered_port(&kept.redirect_uri).unwrap_or(0)
        }
        _ => port,
    };
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| fail("listening for the redirect on 127.0.0.1", &e))?;
    let port = listener
        .local_addr()
        .map_err(|e| fail("listening for the redirect", &e))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");

    let mut manager = AuthorizationManager::new(url.expose())
        .await
        .map_err(|e| fail("preparing OAuth", &e))?;
    manager.set_credential_store(store.clone());
    let http = crate::client::transport::http_client::default_http_client(server)
        .map_err(|e| e.message)?;
    let challenge = within(
        server,
        "the MCP server (asked for its OAuth challenge)",
        async { Ok(crate::client::oauth::discovery::challenge(&http, url.expose()).await) },
    )
    .await?;
    let metadata = within(
        server,
        "the OAuth discovery (the MCP server's protected resource metadata, then its \
         authorization server's metadata)",
        async {
            crate::client::oauth::discovery::metadata(&manager, url.expose(), &challenge)
                .await
                .map_err(|e| format!("server `{server}`: {}", redact(&e, &known)))
        },
    )
    .await?;
    manager.set_metadata(metadata.clone());
    // With DPoP, the same discovery through the client that adds proofs to token requests; the
    // tokens of this login are bound to a new key (the store's key rotates with its tokens).
    let dpop = crate::client::oauth::dpop::wanted(spec.dpop, &metadata)
        .map_err(|why| format!("server `{server}`: {why}"))?;
    if dpop {
        let http = crate::client::oauth::dpop::DpopTokenClient::new(
            crate::client::oauth::dpop::Dpop::new(store.clone()),
            &metadata.token_endpoint,
            crate::client::oauth::address_policy::Policy::for_server(url.expose()),
        )
        .map_err(|e| fail("preparing DPoP", &e))?;
        manager = AuthorizationManager::new_with_oauth_http_client(
            url.expose(),
            std::sync::Arc::new(http),
        )
        .await
        .map_err(|e| fail("preparing OAuth", &e))?;
        manager.set_credential_store(store.clone());
        let again = within(server, "the OAuth discovery (again, for DPoP)", async {
            crate::client::oauth::discovery::metadata(&manager, url.expose(), &challenge)
                .await
                .map_err(|e| format!("server `{server}`: {}", redact(&e, &known)))
        })
        .await?;
        manager.set_metadata(again);
    }

    // The scopes already granted plus what the server asked for since (step-up), or the
    // configured ones; none: rmcp picks them (the challenge's `scope`, then the resource's
    // `scopes_supported`, then the authorization server's).
    let (granted, step_up) = store.scopes().await;
    let mut scopes = spec.scopes.clone();
    if !step_up.is_empty() {
        for scope in granted.iter().chain(&step_up) {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
    }
    let client = within(
        server,
        "its authorization server's registration endpoint",
        async {
            crate::client::oauth::registration::client(
                &mut manager,
                &metadata,
                spec,
                &store,
                &redirect,
                &scopes,
            )
            .await
            .map_err(|e| format!("server `{server}`: {}", redact(&e, &known)))
        },
    )
    .await?;
    tracing::debug!(server, client = %client.how, "OAuth login");
    let mut request = AuthorizationRequest::new(redirect.clone())
        .with_preregistered_client(client.id.clone())
        .with_client_name("mcp-readiness");
    if let Some(secret) = &client.secret {
        known.push(secret.clone());
        request = request.with_client_secret(secret.expose());
    }
    if !scopes.is_empty() {
        request = request.with_scopes(scopes.iter().cloned());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| failed("starting the authorization", &e, &known))?;
    show_url(session.get_authorization_url());

    let target = tokio::time::timeout(CALLBACK_TIMEOUT, callback(&listener))
        .await
        .map_err(|_| {
            format!(
                "server `{server}`: no redirect came back to 127.0.0.1:{port} within {}; run the \
                 command again and open the URL it prints",
                crate::util::Human(CALLBACK_TIMEOUT)
            )
        })?
        .map_err(|e| format!("server `{server}`: {e}"))?;
    // rmcp logs the code at debug level: make sure it is redacted wherever logs go.
    for (key, value) in query_pairs(&target) {
        if key == "code" || key == "state" {
            crate::secret::remember([Secret::new(value)]);
        }
    }
    if dpop {
        // A new key for the tokens about to be issued, saved with them.
        store
            .rotate_dpop_key()
            .map_err(|e| format!("server `{server}`: {e}"))?;
    }
    session
        .handle_callback_url(&format!("http://127.0.0.1:{port}{target}"))
        .await
        .map_err(|e| match e {
            AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            } => format!(
                "server `{server}`: the authorization response names issuer `{}`, not `{}` \
                 (RFC 9207 `iss`): refused, it may come from another authorization server",
                crate::secret::escape_controls(&received_issuer),
                expected_issuer
            ),
            AuthError::AuthorizationServerMissingIssuer { expected_issuer } => format!(
                "server `{server}`: the authorization server `{expected_issuer}` says it sends \
                 `iss` in its authorization responses (RFC 9207), but this one has none: refused"
            ),
            e => failed("exchanging the authorization code", &e, &known),
        })?;
    Ok(store.path().to_owned())
}

/// The decoded `key=value` pairs of `target`'s query.
fn query_pairs(target: &str) -> Vec<(String, String)> {
    let query = target.split_once('?').map_or("", |(_, q)| q);
    query
        .split('&')
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            Some((
                crate::util::form_decode(key),
                crate::util::form_decode(value),
            ))
        })
        .collect()
}

/// Accepts connections on `listener` until one is the redirect (`GET /callback?code=…&state=…`),
/// answers it with a short page, and returns its request target (`/callback?code=…&state=…`, with
/// `iss` when the authorization server sends it). An error redirect (`?error=access_denied`) is
/// an error.
async fn callback(listener: &TcpListener) -> Result<String, String> {
    loop {
        let (mut socket, _) = listener
            .accept()
            .await
            .map_err(|e| format!("receiving the redirect failed: {e}"))?;
        let mut buffer = vec![0u8; 8192];
        let mut read = 0;
        // The request line is all we need; stop at the end of the headers or a full buffer.
        while read < buffer.len() {
            match tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buffer[read..]))
                .await
            {
                Ok(Ok(0)) | Err(_) => break,
                Ok(Ok(n)) => {
                    read += n;
                    if buffer[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                Ok(Err(_)) => break,
            }
        }
        let request = String::from_utf8_lossy(&buffer[..read]);
        let target = request
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_default();
        let Some(query) = target.strip_prefix("/callback?").map(str::to_owned) else {
            let _ = socket
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            continue;
        };
        let param = |name: &str| {
            query.split('&').find_map(|pair| {
                let (key, value) = pair.split_once('=')?;
                (key == name).then(|| crate::util::form_decode(value))
            })
        };
        let (status, body, result) = match (param("code"), param("state"), param("error")) {
            (Some(_), Some(_), None) => (
                "200 OK",
                "Authorized. You can close this window.",
                Ok(format!("/callback?{query}")),
            ),
            (_, _, Some(error)) => (
                "400 Bad Request",
                "Authorization failed. See the terminal.",
                Err(format!(
                    "the authorization server refused: {}",
                    crate::secret::escape_controls(&error)
                )),
            ),
            _ => (
                "400 Bad Request",
                "The redirect carried no code.",
                Err("the redirect carried no code and state".to_owned()),
            ),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(response.as_bytes()).await;
        let _ = socket.shutdown().await;
        return result;
    }
}
