//! Turning rmcp errors into decisions: is this the pipe dying (reconnect, maybe retry), a missing
//! credential (stop), or an answer (never retry)?

use std::error::Error as StdError;
use std::io::ErrorKind;

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;

use crate::client::reasons::chain::chain;
use crate::state::ConnectResult;

/// Messages that mean "the connection dropped", wherever in the stack it was noticed: rmcp's
/// closed transport, the raw socket's `ECONNRESET` / `EPIPE`, a stream that ended early.
const DROP_PATTERNS: [&str; 12] = [
    "broken pipe",
    "connection reset",
    "econnreset",
    "epipe",
    "connection closed",
    "transport closed",
    "socket hang up",
    "write after end",
    "unexpected end of stream",
    "transport channel closed",
    "connection refused",
    "connection aborted",
];

fn io_kind_in_chain(error: &(dyn StdError + 'static)) -> Option<ErrorKind> {
    chain(error).find_map(|e| e.downcast_ref::<std::io::Error>().map(std::io::Error::kind))
}

/// The whole chain as lowercase text, for classification only (never shown: it may contain URLs).
/// rmcp keeps the HTTP client's error as a field without `source()`: [`chain`] walks into it for
/// the crate's own clients, and the `Debug` form (which includes the OS error, e.g.
/// `ConnectionRefused`) is appended for any other.
fn text_of_chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = chain(error)
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    text.push_str(&format!(" {error:?}"));
    text.to_ascii_lowercase()
}

fn is_drop_kind(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::BrokenPipe
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::ConnectionRefused
            | ErrorKind::NotConnected
            | ErrorKind::UnexpectedEof
    )
}

/// Whether a call failed because the pipe died (so a reconnect, and for idempotent calls one
/// retry, is the right move). JSON-RPC errors, timeouts and authorization failures are not.
pub(crate) fn is_pipe_dead(error: &ServiceError) -> bool {
    if is_auth_failure(error) {
        return false;
    }
    match error {
        ServiceError::TransportClosed => true,
        ServiceError::TransportSend(inner) => {
            let inner: &(dyn StdError + 'static) = inner;
            if io_kind_in_chain(inner).is_some_and(is_drop_kind) {
                return true;
            }
            let text = text_of_chain(inner);
            DROP_PATTERNS.iter().any(|p| text.contains(p))
        }
        _ => false,
    }
}

/// The one rule for HTTP authorization failures (DESIGN.md section 1): a 401 means the
/// credentials are missing, expired or revoked; a 403 means so only with a `WWW-Authenticate`
/// challenge (insufficient scope). A bare 403 is a refusal that re-authorizing will not fix
/// (`absent`).
pub(crate) const fn is_auth_rejection(status: u16, has_challenge: bool) -> bool {
    status == 401 || (status == 403 && has_challenge)
}

/// The HTTP status rmcp quotes in an unexpected-response error (`HTTP 401 Unauthorized: ...`).
/// The first HTTP status quoted in an error's (lower-cased) text (`... http 403 forbidden ...`), as
/// rmcp writes an unexpected answer it keeps only as text.
#[cfg(feature = "hub")]
fn status_in_text(text: &str) -> Option<u16> {
    text.match_indices("http ").find_map(|(at, _)| {
        let status: u16 = text.get(at + 5..at + 8)?.parse().ok()?;
        (100..=599).contains(&status).then_some(status)
    })
}

fn quoted_status(text: &str) -> Option<u16> {
    let at = text.find("http 4")?;
    text.get(at + 5..at + 8)?.parse().ok()
}

/// Whether an error chain says the credentials were rejected: a challenge (401 or 403), a local
/// "authorization required", or a 401 without a challenge; never a bare 403.
fn auth_rejected(challenge: bool, required: bool, error: &(dyn StdError + 'static)) -> bool {
    if required {
        return true;
    }
    if challenge {
        // rmcp reports a challenge for 401 (`AuthRequired`) and 403 (`InsufficientScope`); under
        // the rule both are rejections.
        return true;
    }
    quoted_status(&text_of_chain(error)).is_some_and(|status| is_auth_rejection(status, false))
}

/// The scope a `WWW-Authenticate` challenge asks for when it says `error="insufficient_scope"`
/// (RFC 6750 §3.1): `Some("")` when it names none, `None` for any other challenge. The scope is
/// returned with control characters removed.
pub(crate) fn insufficient_scope(challenge: &str) -> Option<String> {
    let param = |name: &str| -> Option<String> {
        let lower = challenge.to_ascii_lowercase();
        let mut from = 0;
        while let Some(at) = lower[from..].find(name) {
            let start = from + at;
            from = start + name.len();
            let before = lower[..start].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = challenge[from..].trim_start();
            let Some(rest) = rest.strip_prefix('=') else {
                continue;
            };
            let rest = rest.trim_start();
            let value = match rest.strip_prefix('"') {
                Some(quoted) => quoted.split('"').next().unwrap_or_default(),
                None => rest.split([',', ' ']).next().unwrap_or_default(),
            };
            return Some(value.chars().filter(|c| !c.is_control()).collect());
        }
        None
    };
    (param("error")?.as_str() == "insufficient_scope").then(|| param("scope").unwrap_or_default())
}

/// Whether a call or ping failed because credentials are missing, expired or revoked.
pub(crate) fn is_auth_failure(error: &ServiceError) -> bool {
    auth_rejected(
        error.auth_challenge().is_some(),
        error.is_authorization_required(),
        error,
    )
}

/// Classifies a failed request after the handshake (`tools/list` of a fresh connection):
/// rejected credentials, a dead pipe, or else the server's fault.
pub(crate) fn classify_request_error(error: &ServiceError) -> ConnectResult {
    if is_auth_failure(error) {
        ConnectResult::Unauthorized
    } else if is_pipe_dead(error) {
        ConnectResult::Closed
    } else {
        ConnectResult::ProtocolError
    }
}

/// Classifies a failed handshake. `garbage_lines` counts stdout lines that were not JSON-RPC.
pub(crate) fn classify_init_error(
    error: &ClientInitializeError,
    garbage_lines: usize,
) -> ConnectResult {
    if auth_rejected(
        error.auth_challenge().is_some(),
        error.is_authorization_required(),
        error,
    ) {
        return ConnectResult::Unauthorized;
    }
    // An endpoint that answered HTML or JSON that is not JSON-RPC, to either request of the
    // discover → initialize fallback, is not MCP: the first answer is the diagnosis.
    #[cfg(feature = "hub")]
    if crate::client::reasons::reason::not_mcp_answer(error).is_some() {
        return ConnectResult::ProtocolError;
    }
    // An HTTP status: the server answered. A server error or a throttle (it is there and not
    // serving) is `refused`, as a server that refuses connections; any other status (a bare 403
    // of a firewall, a redirect to a login, a 404) is an answer that is not MCP, never `closed`.
    // (A 404 to `server/discover` alone is how an older server says so: the fallback decides.)
    #[cfg(feature = "hub")]
    if !matches!(error, ClientInitializeError::LegacyFallbackFailed { .. })
        && let Some(status) = crate::client::reasons::reason::answered_status(error)
            .or_else(|| status_in_text(&text_of_chain(error)))
    {
        return if status >= 500 || status == 429 {
            ConnectResult::Refused
        } else {
            ConnectResult::ProtocolError
        };
    }
    match error {
        ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
            #[cfg(not(feature = "hub"))]
            let _ = discover;
            let result = classify_init_error(fallback, garbage_lines);
            // A fallback that saw only its channel close (rmcp ends the transport after the
            // first failed answer) says nothing: the discover's answer is the diagnosis.
            #[cfg(feature = "hub")]
            if result == ConnectResult::Closed
                && crate::client::reasons::reason::answered_status(discover.as_ref())
                    .or_else(|| status_in_text(&text_of_chain(discover.as_ref())))
                    .is_some()
            {
                return classify_init_error(discover, garbage_lines);
            }
            result
        }
        ClientInitializeError::ConnectionClosed(_) | ClientInitializeError::Cancelled => {
            if garbage_lines > 0 {
                ConnectResult::ProtocolError
            } else {
                ConnectResult::Closed
            }
        }
        ClientInitializeError::TransportError { error, .. } => {
            let inner: &(dyn StdError + 'static) = error;
            let text = text_of_chain(inner);
            match io_kind_in_chain(inner) {
                Some(ErrorKind::ConnectionRefused) => return ConnectResult::Refused,
                Some(ErrorKind::TimedOut) => return ConnectResult::Timeout,
                Some(ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted) => {
                    return ConnectResult::Refused;
                }
                Some(ErrorKind::BrokenPipe | ErrorKind::UnexpectedEof) => {
                    return ConnectResult::Closed;
                }
                _ => {}
            }
            if text.contains("connection refused")
                || text.contains("connectionrefused")
                || text.contains("tcp connect error")
                || text.contains("dns error")
                || text.contains("http 5")
                || text.contains("http 429")
            {
                ConnectResult::Refused
            } else if text.contains("timed out") || text.contains("timeout") {
                ConnectResult::Timeout
            } else if text.contains("content type")
                || text.contains("deserialize")
                || text.contains("unexpected server response")
                || text.contains("session id")
                || garbage_lines > 0
            {
                ConnectResult::ProtocolError
            } else {
                ConnectResult::Closed
            }
        }
        _ => ConnectResult::ProtocolError,
    }
}

/// What an OAuth failure during a handshake means for the state table, from rmcp's `AuthError`
/// in the error's chain.
#[cfg(feature = "oauth")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OAuthFailure {
    /// The credential store cannot give a token (unreadable, open to other users, not JSON):
    /// `unauthenticated`, with the store's own fix.
    Store,
    /// The authorization server refused the refresh token: `unauthenticated`, re-authorize.
    RefreshRefused,
    /// The authorization server answered with something that cannot be used (another issuer, no
    /// or invalid metadata, a refused registration): `unauthenticated`, it does not heal by
    /// waiting. What is wrong, in words.
    Unusable(String),
    /// The authorization server could not be reached or failed: it heals when the authorization
    /// server is back. The reason, naming the step that failed.
    AuthorizationServer(String),
}

/// The OAuth failure in `error`'s chain, if there is one.
#[cfg(feature = "oauth")]
pub(crate) fn oauth_failure(error: &(dyn StdError + 'static)) -> Option<OAuthFailure> {
    use rmcp::transport::auth::AuthError;
    let auth = chain(error).find_map(|e| e.downcast_ref::<AuthError>())?;
    if let Some(unusable) = crate::client::reasons::reason::authorization_server_unusable(auth) {
        return Some(OAuthFailure::Unusable(unusable));
    }
    Some(match auth {
        AuthError::CredentialStoreError(_) => OAuthFailure::Store,
        AuthError::TokenRefreshRejected(_) => OAuthFailure::RefreshRefused,
        AuthError::TokenRefreshFailed(_)
        | AuthError::HttpError(_)
        | AuthError::DiscoveryRequestFailed { .. } => {
            OAuthFailure::AuthorizationServer(crate::client::reasons::reason::explain(auth))
        }
        _ => return None,
    })
}

/// Cuts a message to at most `max` characters (on a character boundary).
pub(crate) fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod scope_tests {
    use crate::client::reasons::rmcp_errors::insufficient_scope;

    #[test]
    fn an_insufficient_scope_challenge_gives_the_scope_it_asks_for() {
        assert_eq!(
            insufficient_scope(
                r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="https://x/.well-known/oauth-protected-resource""#
            )
            .as_deref(),
            Some("mcp:basic mcp:write")
        );
        assert_eq!(
            insufficient_scope(r#"Bearer error=insufficient_scope"#).as_deref(),
            Some("")
        );
        assert_eq!(insufficient_scope(r#"Bearer error="invalid_token""#), None);
        assert_eq!(insufficient_scope(r#"Bearer realm="x""#), None);
    }
}

#[cfg(test)]
mod tests {
    use crate::client::reasons::rmcp_errors::*;
    use rmcp::ErrorData;

    #[test]
    fn a_closed_transport_is_a_dead_pipe_and_a_json_rpc_error_is_an_answer() {
        assert!(is_pipe_dead(&ServiceError::TransportClosed));
        assert!(!is_pipe_dead(&ServiceError::McpError(
            ErrorData::internal_error("boom", None)
        )));
        assert!(!is_pipe_dead(&ServiceError::Timeout {
            timeout: std::time::Duration::from_secs(1)
        }));
    }

    #[test]
    fn a_closed_stdout_during_the_handshake_is_closed_unless_garbage_was_seen() {
        let e = ClientInitializeError::ConnectionClosed("initialize response".into());
        assert_eq!(classify_init_error(&e, 0), ConnectResult::Closed);
        assert_eq!(classify_init_error(&e, 2), ConnectResult::ProtocolError);
        let e = ClientInitializeError::JsonRpcError(ErrorData::internal_error("x", None));
        assert_eq!(classify_init_error(&e, 0), ConnectResult::ProtocolError);
    }

    #[test]
    fn a_401_is_unauthenticated_and_a_403_only_with_a_challenge() {
        assert!(is_auth_rejection(401, false));
        assert!(is_auth_rejection(401, true));
        assert!(is_auth_rejection(403, true));
        assert!(!is_auth_rejection(403, false));
        assert!(!is_auth_rejection(404, false));
        assert_eq!(
            quoted_status("unexpected server response: http 403 forbidden: no"),
            Some(403)
        );
        assert_eq!(quoted_status("http 5"), None);
    }

    #[test]
    fn truncation_respects_character_boundaries() {
        assert_eq!(truncate("ééé".into(), 3), "é…");
        assert_eq!(truncate("abc".into(), 3), "abc");
    }
}
