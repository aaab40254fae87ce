//! `mcp-readiness oauth login`: the OAuth 2.1 authorization-code flow with PKCE for one
//! configured server, through rmcp's authorization manager. It prints the authorization URL,
//! receives the redirect on a loopback port, exchanges the code and writes the tokens to the
//! server's credential store file (mode 0600). No token is ever printed.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthorizationManager, OAuthClientConfig};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

use super::store::FileStore;
use crate::secret::{Secret, redact};
use crate::supervise::connectors::spec::OAuthSpec;

/// How long the login waits for the browser to come back.
const CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);

/// A login that did not end with tokens in the store. The message names the server and what to
/// do; it never contains a token, code or secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LoginError(String);

/// Authorizes `spec` (a streamable-HTTP server with `oauth`) with the OAuth 2.1 authorization-code
/// flow and PKCE, and writes the tokens to its credential store. `show_url` is handed the URL the
/// user opens in a browser; the redirect comes back to `http://127.0.0.1:<port>/callback`
/// (`port` 0: any free port; register the redirect URI with the authorization server if it
/// wants an exact one). Returns the store file written.
pub async fn authorize(
    spec: &crate::supervise::ServerSpec,
    port: u16,
    show_url: impl FnOnce(&str),
) -> Result<std::path::PathBuf, LoginError> {
    let crate::supervise::TransportSpec::Http {
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
    login(&spec.name, url, oauth, port, show_url)
        .await
        .map_err(LoginError)
}

/// Runs the flow for `server` at `url`; `show_url` is handed the authorization URL to open.
/// The callback listens on `127.0.0.1:port` (`0`: any free port).
async fn login(
    server: &str,
    url: &Secret,
    spec: &OAuthSpec,
    port: u16,
    show_url: impl FnOnce(&str),
) -> Result<std::path::PathBuf, String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        format!(
            "server `{server}`: {what} failed: {}",
            redact(&e.to_string(), std::slice::from_ref(url))
        )
    };
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| fail("listening for the redirect on 127.0.0.1", &e))?;
    let port = listener
        .local_addr()
        .map_err(|e| fail("listening for the redirect", &e))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");

    let store = FileStore::new(spec.store.clone());
    let mut manager = AuthorizationManager::new(url.expose())
        .await
        .map_err(|e| fail("preparing OAuth", &e))?;
    manager.set_credential_store(store.clone());
    let resolution = manager
        .resolve_metadata()
        .await
        .map_err(|e| fail("authorization server discovery", &e))?;
    manager.set_metadata(resolution.metadata);
    let mut config =
        OAuthClientConfig::new(spec.client_id.clone(), redirect).with_scopes(spec.scopes.clone());
    if let Some(secret) = &spec.client_secret {
        config = config.with_client_secret(secret.expose());
    }
    manager
        .configure_client(config)
        .map_err(|e| fail("configuring the OAuth client", &e))?;
    let scopes: Vec<&str> = spec.scopes.iter().map(String::as_str).collect();
    let authorize = manager
        .get_authorization_url(&scopes)
        .await
        .map_err(|e| fail("building the authorization URL", &e))?;
    show_url(&authorize);

    let (code, state) = tokio::time::timeout(CALLBACK_TIMEOUT, callback(&listener))
        .await
        .map_err(|_| {
            format!(
                "server `{server}`: no redirect came back to 127.0.0.1:{port} within {}; run the \
                 command again and open the URL it prints",
                crate::supervise::connectors::human::Human(CALLBACK_TIMEOUT)
            )
        })?
        .map_err(|e| format!("server `{server}`: {e}"))?;
    // rmcp logs the code at debug level: make sure it is redacted wherever logs go.
    crate::secret::remember([Secret::new(code.clone()), Secret::new(state.clone())]);
    let manager = Arc::new(manager);
    manager
        .exchange_code_for_token(&code, &state)
        .await
        .map_err(|e| fail("exchanging the authorization code", &e))?;
    Ok(store.path().to_owned())
}

/// Accepts connections on `listener` until one is the redirect (`GET /callback?code=…&state=…`),
/// answers it with a short page, and returns the code and state. An error redirect
/// (`?error=access_denied`) is an error.
async fn callback(listener: &TcpListener) -> Result<(String, String), String> {
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
        let Some(query) = target.strip_prefix("/callback?") else {
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
                (key == name).then(|| percent_decode(value))
            })
        };
        let (status, body, result) = match (param("code"), param("state"), param("error")) {
            (Some(code), Some(state), None) => (
                "200 OK",
                "Authorized. You can close this window.",
                Ok((code, state)),
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

/// `application/x-www-form-urlencoded` value decoding (`+` is a space, `%XX` a byte).
fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn redirect_parameters_are_form_decoded() {
        assert_eq!(percent_decode("a%2Fb+c"), "a/b c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
