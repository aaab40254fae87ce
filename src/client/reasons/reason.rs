//! The one way an error chain becomes the reason a person reads (a state's reason, `check`,
//! `call`, `oauth login`, the status page): the root cause first, in words, with the system at
//! fault named (the MCP server, its authorization server and which of its endpoints, the
//! credential store, the network); never a Rust type name; remote text cut to
//! [`REMOTE_TEXT_MAX`] characters with the status and what kind of body it was kept. Spans keep
//! their short codes (`error.type`); this is only for people.
//!
//! rmcp's errors Display the transport's Rust type
//! (`Transport [mcp_readiness::client::lifecycle::Handoff<…>] error: …`), repeat their sources,
//! and quote whole response bodies; [`explain`] walks the chain itself and says what it found.

use std::error::Error as StdError;
use std::io::ErrorKind;

use rmcp::ServiceError;
use rmcp::service::ClientInitializeError;

use crate::client::reasons::chain::{chain, closing};

/// At most this many characters of text that came from the remote side (a response body, an
/// error description) are kept in a reason.
pub(crate) const REMOTE_TEXT_MAX: usize = 200;

type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;
type IoHttpError = rmcp::transport::streamable_http_client::StreamableHttpError<std::io::Error>;

/// What an MCP endpoint answered instead of MCP, when some request of the handshake saw it:
/// an HTML page (an SSO login page in front of the server), a JSON body that is not JSON-RPC (a
/// health endpoint), or another content type. Looks at both requests of the `server/discover`
/// → `initialize` fallback: the first answer is the diagnosis, whichever request saw it.
pub(crate) fn not_mcp_answer(error: &(dyn StdError + 'static)) -> Option<String> {
    if let Some(ClientInitializeError::LegacyFallbackFailed { discover, fallback }) =
        error.downcast_ref::<ClientInitializeError>()
    {
        return not_mcp_answer(discover.as_ref()).or_else(|| not_mcp_answer(fallback.as_ref()));
    }
    chain(error).find_map(|level| {
        let (content_type, response) = if let Some(e) = level.downcast_ref::<HttpError>() {
            http_answer(e)
        } else if let Some(e) = level.downcast_ref::<IoHttpError>() {
            http_answer(e)
        } else {
            return None;
        };
        if let Some(content_type) = content_type {
            let content_type = clean_remote(&content_type, 60);
            return Some(if content_type.to_ascii_lowercase().contains("html") {
                format!(
                    "it answered HTML ({content_type}; a login page?): check that the URL is \
                     the MCP endpoint"
                )
            } else {
                format!(
                    "it answered `{content_type}`, not JSON-RPC: check that the URL is the MCP \
                     endpoint"
                )
            });
        }
        let response = response?;
        let body = response
            .strip_prefix("could not parse JSON response as ServerJsonRpcMessage: ")
            .map(body_after_parse_error)?;
        Some(format!(
            "it answered a JSON body that is not JSON-RPC ({}): check that the URL is the MCP \
             endpoint",
            clean_remote(body.trim(), 80)
        ))
    })
}

/// The body rmcp quotes after its parse error (`{serde error}: {body}`). serde's message may hold
/// `": "` itself (`invalid type: map, ...`) and so may the body (`{"status": "ok"}`): the body
/// starts after the error's position (`... at line 1 column 16: `), the first such mark.
fn body_after_parse_error(rest: &str) -> &str {
    const LINE: &str = " at line ";
    let mut from = 0;
    while let Some(at) = rest[from..].find(LINE).map(|i| from + i) {
        let after = &rest[at + LINE.len()..];
        let digits =
            |text: &str| text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let line_digits = digits(after);
        if line_digits > 0
            && let Some(column) = after[line_digits..].strip_prefix(" column ")
        {
            let column_digits = digits(column);
            if column_digits > 0
                && let Some(body) = column[column_digits..].strip_prefix(": ")
            {
                return body;
            }
        }
        from = at + LINE.len();
    }
    // No position (serde gives none for some errors): the body follows the first separator.
    rest.split_once(": ").map_or(rest, |(_, body)| body)
}

/// The content type an rmcp HTTP error says the endpoint answered, or the text of an
/// unexpected response.
fn http_answer<E: StdError + Send + Sync + 'static>(
    error: &rmcp::transport::streamable_http_client::StreamableHttpError<E>,
) -> (Option<String>, Option<String>) {
    use rmcp::transport::streamable_http_client::StreamableHttpError as H;
    match error {
        H::UnexpectedContentType(content_type) => (
            Some(
                content_type
                    .clone()
                    .unwrap_or_else(|| "no content type".into()),
            ),
            None,
        ),
        H::UnexpectedServerResponse(text) => (None, Some(text.to_string())),
        _ => (None, None),
    }
}

/// The reason for `error`: what went wrong at the root, in words, naming the system at fault.
///
/// ```text
/// the MCP server is unreachable: connection refused
/// authorization server unreachable (the refresh of its access token): connection refused
/// its authorization server's registration endpoint (Dynamic Client Registration) failed: it
///   answered HTTP 500 Internal Server Error with an HTML page: Internal Server Error
/// ```
pub(crate) fn explain(error: &(dyn StdError + 'static)) -> String {
    // The first answer wins in the discover → initialize fallback.
    if let Some(ClientInitializeError::LegacyFallbackFailed { discover, fallback }) =
        error.downcast_ref::<ClientInitializeError>()
    {
        if let Some(answer) = not_mcp_answer(error) {
            return format!("the MCP server: {answer}");
        }
        // A JSON-RPC error to `server/discover` (method not found) is how a server older than
        // 2026-07-28 says so: it is why `initialize` followed, not what went wrong.
        let legacy_signal = matches!(discover.as_ref(), ClientInitializeError::JsonRpcError(_));
        return if said_nothing(discover.as_ref())
            || (legacy_signal && !said_nothing(fallback.as_ref()))
        {
            explain(fallback.as_ref())
        } else {
            explain(discover.as_ref())
        };
    }
    if let Some(answer) = not_mcp_answer(error) {
        return format!("the MCP server: {answer}");
    }
    let levels: Vec<&(dyn StdError + 'static)> = chain(error).collect();
    let what = root_words(&levels);
    #[cfg(feature = "oauth")]
    if let Some(auth) = levels
        .iter()
        .find_map(|e| e.downcast_ref::<rmcp::transport::auth::AuthError>())
    {
        return authorization_server(auth, &levels, &what);
    }
    if unreachable(&levels) {
        return format!("the MCP server is unreachable: {what}");
    }
    format!("the MCP server: {what}")
}

/// Whether a failed request said nothing about the endpoint: the connection closed, the request
/// was cancelled.
fn said_nothing(error: &(dyn StdError + 'static)) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError as H;
    chain(error).all(
        |level| match level.downcast_ref::<ClientInitializeError>() {
            // A wrapper: judged by what it wraps.
            Some(ClientInitializeError::TransportError { .. }) => true,
            Some(ClientInitializeError::ConnectionClosed(_) | ClientInitializeError::Cancelled) => {
                true
            }
            Some(_) => false,
            None => {
                level.is::<rmcp::transport::DynamicTransportError>()
                    || matches!(
                        level.downcast_ref::<HttpError>(),
                        Some(H::TransportChannelClosed)
                    )
                    || matches!(
                        level.downcast_ref::<IoHttpError>(),
                        Some(H::TransportChannelClosed)
                    )
            }
        },
    )
}

/// What is wrong with an authorization server that answered but cannot be used, when the
/// failure is definitive (it will not heal by waiting): its metadata names another issuer than
/// the URL it was fetched from, names none, is not valid, is missing at every path the spec
/// names, or it refused the registration. `None` for outages (refused connections, 5xx,
/// timeouts) and for everything else.
#[cfg(feature = "oauth")]
pub(crate) fn authorization_server_unusable(
    auth: &rmcp::transport::auth::AuthError,
) -> Option<String> {
    use rmcp::transport::auth::AuthError as A;
    Some(match auth {
        A::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        } => format!(
            "its metadata names issuer `{}`, not `{}` where it was fetched (an attack, or a \
             misconfigured proxy in front of it)",
            clean_remote(received_issuer, 100),
            clean_remote(expected_issuer, 100)
        ),
        A::AuthorizationServerMissingIssuer { expected_issuer } => format!(
            "its metadata names no issuer (expected `{}`)",
            clean_remote(expected_issuer, 100)
        ),
        A::MetadataError(text) => format!(
            "its metadata is not valid ({})",
            clean_remote(text, REMOTE_TEXT_MAX)
        ),
        A::ProtectedResourceMetadataInvalid { .. } => format!(
            "the server's protected resource metadata is not valid ({})",
            clean_remote(&auth.to_string(), REMOTE_TEXT_MAX)
        ),
        A::AuthorizationServersUnavailable {
            authorization_servers,
            ..
        } => format!(
            "none of the authorization servers the server names ({}) publishes valid metadata at \
             the paths the spec names",
            clean_remote(&authorization_servers.join(", "), 150)
        ),
        A::NoAuthorizationSupport => {
            "no authorization server metadata at any of the paths the spec names".into()
        }
        A::PkceUnsupported => "it does not support PKCE with S256, which MCP requires".into(),
        A::RegistrationFailed(text) if !looks_unreachable(text) && !quotes_server_error(text) => {
            format!(
                "it refused the registration (Dynamic Client Registration): {}",
                remote_response(text)
            )
        }
        _ => return None,
    })
}

/// The authorization server's part in a failure: which of its endpoints, and whether it could
/// be reached at all.
#[cfg(feature = "oauth")]
fn authorization_server(
    auth: &rmcp::transport::auth::AuthError,
    levels: &[&(dyn StdError + 'static)],
    what: &str,
) -> String {
    use rmcp::transport::auth::AuthError as A;
    if let Some(unusable) = authorization_server_unusable(auth) {
        return format!("its authorization server cannot be used: {unusable}");
    }
    // Discovery starts at the MCP server: an unauthenticated request for its challenge, then its
    // protected resource metadata (RFC 9728). When one of those fails, the MCP server (or the way
    // to it) is at fault, not an authorization server nobody has reached yet.
    if let A::DiscoveryRequestFailed { url, .. } = auth
        && !is_authorization_server_metadata(url.path())
    {
        let step = "the discovery of its OAuth metadata";
        return if unreachable(levels) || looks_unreachable(&auth.to_string()) {
            format!("the MCP server is unreachable ({step}): {what}")
        } else {
            format!("{step} at the MCP server: {what}")
        };
    }
    let step = match auth {
        A::CredentialStoreError(text) => {
            return format!("the credential store: {}", clean_remote(text, 300));
        }
        A::TokenRefreshRejected(_) => {
            return format!(
                "its authorization server refused the refresh token ({what}): re-authorize"
            );
        }
        A::RegistrationFailed(text) => {
            return format!(
                "its authorization server's registration endpoint (Dynamic Client \
                 Registration) failed: {}",
                remote_response(text)
            );
        }
        A::TokenRefreshFailed(_) => "the refresh of its access token",
        A::TokenExchangeFailed(_) => "the exchange of the authorization code",
        A::ClientCredentialsError(_) => "the client-credentials token request",
        A::DiscoveryRequestFailed { .. }
        | A::MetadataError(_)
        | A::AuthorizationServersUnavailable { .. } => "the discovery of its metadata",
        A::AuthorizationRequired => {
            return "its authorization server: no access token yet; authorize first".into();
        }
        _ => "authorization",
    };
    let text = auth.to_string();
    if unreachable(levels) || looks_unreachable(&text) || quotes_server_error(&text) {
        format!("authorization server unreachable ({step}): {what}")
    } else {
        format!("its authorization server failed {step}: {what}")
    }
}

/// Whether an OAuth discovery failed at the MCP server itself (its challenge, its protected
/// resource metadata), not at an authorization server: `Some(true)` when it could not be reached
/// at all, `Some(false)` when it answered something discovery could not use, `None` when the
/// failure is not there.
#[cfg(feature = "oauth")]
pub(crate) fn discovery_failed_at_the_mcp_server(
    auth: &rmcp::transport::auth::AuthError,
) -> Option<bool> {
    let rmcp::transport::auth::AuthError::DiscoveryRequestFailed { url, .. } = auth else {
        return None;
    };
    if is_authorization_server_metadata(url.path()) {
        return None;
    }
    let levels: Vec<&(dyn StdError + 'static)> = chain(auth).collect();
    Some(unreachable(&levels) || looks_unreachable(&auth.to_string()))
}

/// Whether a discovery request's path is an authorization server's metadata (RFC 8414, OpenID
/// Connect discovery; at the root, inserted before the issuer's path, or appended to it).
#[cfg(feature = "oauth")]
fn is_authorization_server_metadata(path: &str) -> bool {
    path.contains("/.well-known/oauth-authorization-server")
        || path.contains("/.well-known/openid-configuration")
}

/// Whether the chain says the other side could not be reached (refused, reset, timed out, no
/// such host), rather than that it answered.
fn unreachable(levels: &[&(dyn StdError + 'static)]) -> bool {
    levels.iter().any(|level| {
        if let Some(io) = level.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ErrorKind::ConnectionRefused
                    | ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::TimedOut
                    | ErrorKind::NotConnected
                    | ErrorKind::HostUnreachable
                    | ErrorKind::NetworkUnreachable
                    | ErrorKind::AddrNotAvailable
            );
        }
        if let Some(e) = level.downcast_ref::<reqwest::Error>() {
            return e.is_connect() || e.is_timeout();
        }
        false
    }) || levels
        .last()
        .is_some_and(|root| looks_unreachable(&root.to_string()))
}

fn looks_unreachable(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "connection refused",
        "tcp connect error",
        "dns error",
        "timed out",
        "error sending request",
        "connection reset",
    ]
    .iter()
    .any(|p| text.contains(p))
}

/// Whether a text quotes a `5xx` answer: the other side is up but failing (an outage too).
#[cfg(feature = "oauth")]
fn quotes_server_error(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    text.contains("http 5") || text.contains("status 5")
}

/// The root cause in words: the deepest level that says something, without the levels that
/// wrap it.
/// The root cause of a failed request of the crate's own HTTP client (not an MCP request: a push
/// to the Pushgateway), in words: `connection refused`, `timed out`, what the name lookup said.
pub(crate) fn request_failure(error: &(dyn StdError + 'static)) -> String {
    let levels: Vec<&(dyn StdError + 'static)> = chain(error).collect();
    root_words(&levels)
}

fn root_words(levels: &[&(dyn StdError + 'static)]) -> String {
    for level in levels.iter().rev() {
        if let Some(words) = known_words(*level) {
            return words;
        }
    }
    let root = levels.last().map(|e| e.to_string()).unwrap_or_default();
    // rmcp's OAuth client: "unexpected HTTP status 500 Internal Server Error".
    if let Some(status) = root.strip_prefix(OAUTH_UNEXPECTED_STATUS) {
        return format!("it answered HTTP {}", clean_remote(status, 60));
    }
    clean_remote(&root, 300)
}

/// How rmcp's OAuth client says a discovery request got a status it could not use.
const OAUTH_UNEXPECTED_STATUS: &str = "unexpected HTTP status ";

/// The status an OAuth discovery request got, when that is why it failed (a 5xx, 408, 429).
#[cfg(feature = "oauth")]
pub(crate) fn oauth_http_status(auth: &rmcp::transport::auth::AuthError) -> Option<u16> {
    chain(auth).find_map(|level| {
        level
            .to_string()
            .strip_prefix(OAUTH_UNEXPECTED_STATUS)
            .and_then(|status| status.get(..3))
            .and_then(|code| code.parse().ok())
    })
}

/// Words for the errors whose Display is a type name, a whole body, or says nothing by itself.
fn known_words(level: &(dyn StdError + 'static)) -> Option<String> {
    if let Some(io) = level.downcast_ref::<std::io::Error>() {
        return Some(match io.kind() {
            ErrorKind::ConnectionRefused => "connection refused".into(),
            ErrorKind::ConnectionReset => "the connection was reset".into(),
            ErrorKind::ConnectionAborted => "the connection was aborted".into(),
            ErrorKind::TimedOut => "timed out".into(),
            ErrorKind::BrokenPipe => "the connection closed (broken pipe)".into(),
            ErrorKind::UnexpectedEof => "the connection closed mid-answer".into(),
            _ => clean_remote(&io.to_string(), 300),
        });
    }
    if let Some(e) = level.downcast_ref::<reqwest::Error>() {
        if level.source().is_some() {
            return None;
        }
        if e.is_timeout() {
            return Some("timed out".into());
        }
        if e.is_connect() {
            return Some("could not connect".into());
        }
        return None;
    }
    if let Some(e) = level.downcast_ref::<HttpError>() {
        return http_words(e);
    }
    if let Some(e) = level.downcast_ref::<IoHttpError>() {
        return http_words(e);
    }
    if let Some(e) = level.downcast_ref::<ServiceError>() {
        return service_words(e);
    }
    #[cfg(feature = "oauth")]
    if let Some(e) = level.downcast_ref::<rmcp::transport::auth::AuthError>() {
        use rmcp::transport::auth::AuthError as A;
        return match e {
            // Their text is the remote answer or the step's own words.
            A::TokenRefreshFailed(text)
            | A::TokenRefreshRejected(text)
            | A::TokenExchangeFailed(text)
            | A::ClientCredentialsError(text)
            | A::MetadataError(text)
            | A::AuthorizationFailed(text)
            | A::OAuthError(text) => Some(remote_response(text)),
            // Its own text is "... failed for <url>": what it ran into (a status, a refused
            // connection) is below it.
            A::HttpError(_) | A::DiscoveryRequestFailed { .. } => None,
            other => Some(clean_remote(&other.to_string(), 300)),
        };
    }
    if let Some(e) = level.downcast_ref::<ClientInitializeError>() {
        return match e {
            ClientInitializeError::ConnectionClosed(during) => Some(format!(
                "the connection closed before the handshake ended ({})",
                clean_remote(during, 80)
            )),
            ClientInitializeError::Cancelled => Some("the handshake was cancelled".into()),
            ClientInitializeError::JsonRpcError(data) => Some(format!(
                "it answered the handshake with JSON-RPC error {}: {}",
                data.code.0,
                clean_remote(&data.message, REMOTE_TEXT_MAX)
            )),
            ClientInitializeError::TransportError { .. } => None,
            other => Some(handshake_words(other)),
        };
    }
    None
}

/// Words for a handshake the server answered wrongly: what it answered, as the JSON it sent (cut),
/// never rmcp's `Debug` of it (`Some(EmptyResult(EmptyObject))`).
fn handshake_words(error: &ClientInitializeError) -> String {
    /// What the server sent, as the JSON it sent, cut to a short quote.
    fn quoted<T: serde::Serialize>(answer: &T) -> String {
        let json = serde_json::to_string(answer).unwrap_or_default();
        format!("`{}`", clean_remote(&json, 80))
    }
    fn versions(versions: &[rmcp::model::ProtocolVersion]) -> String {
        if versions.is_empty() {
            return "none".into();
        }
        let listed = versions
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        clean_remote(&listed, 120)
    }
    match error {
        ClientInitializeError::ExpectedInitResponse(None)
        | ClientInitializeError::ExpectedInitResult(None) => {
            "it never answered the handshake".into()
        }
        ClientInitializeError::ExpectedInitResponse(Some(message)) => format!(
            "it answered the handshake with a message that is not a response ({})",
            quoted(message)
        ),
        ClientInitializeError::ExpectedInitResult(Some(result)) => format!(
            "it answered the handshake with a result that is not a handshake result ({})",
            quoted(result)
        ),
        ClientInitializeError::ConflictInitResponseId(expected, received) => format!(
            "it answered handshake request {} with the id of another request ({}), which \
             JSON-RPC does not allow",
            clean_remote(&expected.to_string(), 40),
            clean_remote(&received.to_string(), 40)
        ),
        ClientInitializeError::UncorrelatedErrorResponse { expected, received } => format!(
            "it answered handshake request {} with an error for another request ({}), which \
             JSON-RPC does not allow",
            clean_remote(&expected.to_string(), 40),
            clean_remote(&received.to_string(), 40)
        ),
        ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported,
            server_supported,
        } => format!(
            "it speaks no protocol version this client speaks (it offers {}; this client {}): \
             upgrade the MCP server or mcp-readiness",
            versions(server_supported),
            versions(client_supported)
        ),
        ClientInitializeError::NoPreferredProtocolVersion => {
            "this client offered no protocol version to the MCP server (a defect in \
             mcp-readiness: please report it)"
                .into()
        }
        other => clean_remote(&other.to_string(), 300),
    }
}

/// `500 Internal Server Error`: the code and its reason phrase (rmcp keeps no more of a 429 or
/// 5xx answer: no body, no page title).
fn status_line(status: u16) -> String {
    match http::StatusCode::from_u16(status)
        .ok()
        .and_then(|code| code.canonical_reason())
    {
        Some(phrase) => format!("{status} {phrase}"),
        None => status.to_string(),
    }
}

/// The status of an HTTP error answer somewhere in `error`'s chain, when the MCP server (or what
/// stands in front of it) answered with a 429 or 5xx status rmcp reports as such.
pub(crate) fn answered_status(error: &(dyn StdError + 'static)) -> Option<u16> {
    use rmcp::transport::streamable_http_client::StreamableHttpError as H;
    chain(error).find_map(|level| match level.downcast_ref::<HttpError>() {
        Some(H::HttpStatus(status)) => Some(status.status),
        _ => match level.downcast_ref::<IoHttpError>() {
            Some(H::HttpStatus(status)) => Some(status.status),
            _ => None,
        },
    })
}

fn http_words<E: StdError + Send + Sync + 'static>(
    error: &rmcp::transport::streamable_http_client::StreamableHttpError<E>,
) -> Option<String> {
    use rmcp::transport::streamable_http_client::StreamableHttpError as H;
    Some(match error {
        H::HttpStatus(status) => format!("it answered HTTP {}", status_line(status.status)),
        H::UnexpectedServerResponse(text) => remote_response(text),
        H::UnexpectedEndOfStream => "its event stream ended mid-answer".into(),
        H::TransportChannelClosed => "the connection closed".into(),
        H::UnexpectedContentType(content_type) => format!(
            "it answered content type `{}`, not JSON-RPC",
            clean_remote(content_type.as_deref().unwrap_or("none"), 60)
        ),
        H::ResponseBodyTooLarge { max_size } => {
            format!("its answer was larger than {max_size} bytes")
        }
        H::SessionExpired => "its session expired (HTTP 404)".into(),
        H::MissingSessionIdInResponse => "it sent no session id".into(),
        H::AuthRequired(_) => "it answered HTTP 401 (authorization required)".into(),
        H::InsufficientScope(_) => "it answered HTTP 403 (insufficient scope)".into(),
        H::Client(_) | H::Io(_) | H::Sse(_) => return None,
        #[cfg(feature = "oauth")]
        H::Auth(_) => return None,
        other => clean_remote(&other.to_string(), 300),
    })
}

fn service_words(error: &ServiceError) -> Option<String> {
    Some(match error {
        ServiceError::TransportClosed => "the connection closed".into(),
        ServiceError::UnexpectedResponse => "it answered with a message of the wrong kind".into(),
        ServiceError::Cancelled { reason } => match reason {
            Some(reason) => format!("the request was cancelled: {}", clean_remote(reason, 100)),
            None => "the request was cancelled".into(),
        },
        ServiceError::Timeout { timeout } => {
            format!("no answer within {}", crate::util::Human(*timeout))
        }
        ServiceError::McpError(data) => format!(
            "it answered JSON-RPC error {}: {}",
            data.code.0,
            clean_remote(&data.message, REMOTE_TEXT_MAX)
        ),
        ServiceError::TransportSend(_) => return None,
        other => clean_remote(&other.to_string(), 300),
    })
}

/// A remote answer quoted as `HTTP <status> <reason>: <body>`: the status kept, the body named
/// by its kind (an HTML page is reduced to its title or text) and cut.
pub(crate) fn remote_response(text: &str) -> String {
    let text = text.trim();
    // A status line's reason phrase has no colon; an empty body leaves one at the end.
    let (status, body) = match text.strip_prefix("HTTP ") {
        Some(rest) => match rest.split_once(':') {
            Some((status, body)) => (Some(status), body),
            None => (Some(rest), ""),
        },
        None => (None, text),
    };
    let body = body.trim();
    let described = if body.is_empty() {
        String::new()
    } else if looks_like_html(body) {
        let text = html_text(body);
        if text.is_empty() {
            "an HTML page".into()
        } else {
            format!("an HTML page: {}", clean_remote(&text, REMOTE_TEXT_MAX))
        }
    } else {
        clean_remote(body, REMOTE_TEXT_MAX)
    };
    match (status, described.is_empty()) {
        (Some(status), true) => format!("it answered HTTP {}", clean_remote(status, 60)),
        // A page is named by its kind; any other body is quoted, so a short one (`no`) does not
        // read as the end of the sentence.
        (Some(status), false) if looks_like_html(body) => {
            format!(
                "it answered HTTP {} with {described}",
                clean_remote(status, 60)
            )
        }
        (Some(status), false) => format!(
            "it answered HTTP {} with the body `{described}`",
            clean_remote(status, 60)
        ),
        (None, _) => described,
    }
}

/// Whether an HTTP answer says it is a page (`text/html`, `application/xhtml+xml`): an SSO front,
/// a web server, never what an MCP server or a Pushgateway answers.
pub(crate) fn answered_html(response: &reqwest::Response) -> bool {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("html"))
}

fn looks_like_html(body: &str) -> bool {
    let head = body.get(..body.len().min(512)).unwrap_or(body);
    let head = head.to_ascii_lowercase();
    head.starts_with('<')
        && (head.contains("<html")
            || head.contains("<!doctype")
            || head.contains("<body")
            || head.contains("<head")
            || head.contains("<title")
            || head.contains("<p")
            || head.contains("<h1"))
}

/// The title of an HTML page, or its text without tags, scripts and styles.
fn html_text(page: &str) -> String {
    let lower = page.to_ascii_lowercase();
    if let Some(start) = lower.find("<title")
        && let Some(open_end) = lower[start..].find('>')
        && let Some(end) = lower[start + open_end..].find("</title")
    {
        let title = &page[start + open_end + 1..start + open_end + end];
        let title = collapse(title);
        if !title.is_empty() {
            return title;
        }
    }
    let mut out = String::new();
    let mut rest = page;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        out.push(' ');
        let tail = &rest[at..];
        let tail_lower = tail.to_ascii_lowercase();
        let skip_to = ["script", "style"].iter().find_map(|tag| {
            tail_lower
                .starts_with(&format!("<{tag}"))
                .then(|| {
                    tail_lower
                        .find(&format!("</{tag}>"))
                        .map(|e| e + tag.len() + 3)
                })
                .flatten()
        });
        rest = match skip_to {
            Some(end) => &tail[end..],
            None => match tail.find('>') {
                Some(end) => &tail[end + 1..],
                None => "",
            },
        };
        if out.len() > 4 * REMOTE_TEXT_MAX {
            break;
        }
    }
    out.push_str(rest);
    collapse(&out)
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text for a reason: rmcp's transport type names and Rust paths removed, markup and control
/// characters dropped, whitespace collapsed, cut to `max` characters.
pub(crate) fn clean_remote(text: &str, max: usize) -> String {
    let text = crate::client::reasons::chain::strip_transport_names(text);
    let text = strip_rust_paths(&text);
    let text: String = text
        .chars()
        .map(|c| match c {
            '<' => '‹',
            '>' => '›',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    cut(&collapse(&text), max)
}

/// Cuts `text` to at most `max` characters, marking the cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Replaces each Rust path (`a::b::C<D<E>>`) by its last segment without generics (`C`).
/// Where the bracketed IPv6 literal around the `::` at `at` ends (just past its `]`), if the
/// `::` is inside one: `[` then only hex digits, `:`, `.` (an embedded IPv4) or `%` (a zone) up
/// to `]`.
fn ipv6_literal_end(text: &str, at: usize) -> Option<usize> {
    let is_address = |c: char| c.is_ascii_hexdigit() || matches!(c, ':' | '.' | '%');
    let open = text[..at].rfind('[')?;
    let close = at + text[at..].find(']')?;
    text[open + 1..close]
        .chars()
        .all(is_address)
        .then_some(close + 1)
}

fn strip_rust_paths(text: &str) -> String {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("::") {
        if let Some(end) = ipv6_literal_end(rest, at) {
            // `http://[::1]:9/mcp`, `[fe80::abcd]`: an address the person may need, kept whole.
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        let before = &rest[..at];
        let start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_ident(*c))
            .last()
            .map_or(at, |(i, _)| i);
        let after = &rest[at + 2..];
        if start == at || !after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            // Not a path (`[::1]`, `a::`): keep the colons, without making `::`.
            out.push_str(&rest[..at]);
            out.push(':');
            rest = &rest[at + 1..];
            if rest.starts_with(':') {
                out.push(' ');
                rest = &rest[1..];
            }
            continue;
        }
        out.push_str(&rest[..start]);
        // Walk the path: segments joined by `::`, then optional generics.
        let mut tail = &rest[start..];
        let last = loop {
            let end = tail.find(|c: char| !is_ident(c)).unwrap_or(tail.len());
            let segment = &tail[..end];
            tail = &tail[end..];
            match tail.strip_prefix("::") {
                Some(next) if next.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
                    tail = next;
                }
                _ => break segment,
            }
        };
        if let Some(generics) = tail.strip_prefix('<') {
            // Past the matching `>` (`'<'` and `'>'` are one byte each), or to the end.
            tail = closing(generics, '<', '>').map_or("", |end| &generics[end + 1..]);
        }
        out.push_str(last);
        rest = tail;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use std::any::TypeId;

    use rmcp::ErrorData;
    use rmcp::transport::DynamicTransportError;
    use rmcp::transport::streamable_http_client::{
        AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
    };

    use super::*;
    use crate::client::error::{CallError, CallErrorKind, NotConnected};
    use crate::state::ConnectResult;

    /// The transport type name rmcp prints for the crate's HTTP connections.
    const TRANSPORT: &str = "mcp_readiness::client::lifecycle::Handoff<mcp_readiness::client::\
        quiet::Quiet<rmcp::transport::worker::WorkerTransport<rmcp::transport::\
        streamable_http_client::StreamableHttpClientWorker<mcp_readiness::client::session_id::\
        SessionIdClient<reqwest::Client>>>>>";

    fn wrapped(error: IoHttpError) -> DynamicTransportError {
        DynamicTransportError::from_parts(TRANSPORT, TypeId::of::<()>(), Box::new(error))
    }

    fn html_page() -> String {
        format!(
            "<!DOCTYPE html><html><head><title>Sign in - Example SSO</title><style>p{{x:1}}\
             </style></head><body>{}</body></html>",
            "<p>Please sign in to continue.</p>".repeat(800)
        )
    }

    /// Every transport error the crate's HTTP connections can see from rmcp.
    fn http_errors() -> Vec<IoHttpError> {
        use std::io::Error;
        vec![
            StreamableHttpError::Io(Error::from(ErrorKind::ConnectionRefused)),
            StreamableHttpError::Io(Error::from(ErrorKind::ConnectionReset)),
            StreamableHttpError::Io(Error::from(ErrorKind::TimedOut)),
            StreamableHttpError::Client(Error::other("error sending request for url")),
            HttpStatusError::new(503, Some("5".into())).into(),
            StreamableHttpError::UnexpectedEndOfStream,
            StreamableHttpError::UnexpectedServerResponse(
                format!("HTTP 500 Internal Server Error: {}", html_page()).into(),
            ),
            StreamableHttpError::UnexpectedServerResponse(
                "could not parse JSON response as ServerJsonRpcMessage: data did not match any \
                 variant of untagged enum JsonRpcMessage<rmcp::model::ClientRequest>: \
                 {\"status\":\"ok\"}"
                    .into(),
            ),
            StreamableHttpError::ResponseBodyTooLarge { max_size: 1 << 20 },
            StreamableHttpError::UnexpectedContentType(Some("text/html; charset=utf-8".into())),
            StreamableHttpError::UnexpectedContentType(None),
            StreamableHttpError::ServerDoesNotSupportSse,
            StreamableHttpError::ServerDoesNotSupportDeleteSession,
            serde_json::from_str::<u8>("x").unwrap_err().into(),
            StreamableHttpError::TransportChannelClosed,
            StreamableHttpError::MissingSessionIdInResponse,
            StreamableHttpError::AuthRequired(AuthRequiredError::new("Bearer".into())),
            StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
                "Bearer error=\"insufficient_scope\"".into(),
                Some("a".into()),
            )),
            StreamableHttpError::ReservedHeaderConflict("accept".into()),
            StreamableHttpError::SessionExpired,
            StreamableHttpError::SessionRecoveryTimeout,
            StreamableHttpError::ReinitializationFailed(ErrorData::internal_error("no", None)),
            StreamableHttpError::ControlRequestTimeout,
        ]
    }

    /// Every OAuth failure rmcp reports, with a registration endpoint's whole HTML error page.
    #[cfg(feature = "oauth")]
    fn auth_errors() -> Vec<rmcp::transport::auth::AuthError> {
        use rmcp::transport::auth::AuthError as A;
        vec![
            A::AuthorizationRequired,
            A::AuthorizationFailed("denied".into()),
            A::TokenExchangeFailed("HTTP 400: {\"error\":\"invalid_grant\"}".into()),
            A::TokenRefreshFailed(
                "error sending request for url (http://127.0.0.1:9/token): connection refused"
                    .into(),
            ),
            A::TokenRefreshRejected("invalid_grant".into()),
            A::CredentialStoreError("open to other users".into()),
            A::OAuthError("x".into()),
            A::MetadataError("no metadata".into()),
            A::InternalError("x".into()),
            A::InvalidTokenType("mac".into()),
            A::TokenExpired,
            A::InvalidScope("x".into()),
            A::RegistrationFailed(format!("HTTP 500 Internal Server Error: {}", html_page())),
            A::AuthorizationServerMismatch {
                expected_issuer: "http://127.0.0.1:9".into(),
                received_issuer: "http://evil.test".into(),
            },
            A::AuthorizationServerMissingIssuer {
                expected_issuer: "http://127.0.0.1:9".into(),
            },
            A::ClientCredentialsError("HTTP 401: {\"error\":\"invalid_client\"}".into()),
            A::NoAuthorizationSupport,
            A::PkceUnsupported,
        ]
    }

    /// The handshakes a server can answer wrongly (rmcp's `Debug` of what it answered is in
    /// their Display).
    fn handshake_errors() -> Vec<ClientInitializeError> {
        use rmcp::model::{NumberOrString, ProtocolVersion, ServerJsonRpcMessage, ServerResult};
        let result = |json| serde_json::from_value::<ServerResult>(json).expect("a result");
        let message =
            |json| serde_json::from_value::<ServerJsonRpcMessage>(json).expect("a message");
        vec![
            ClientInitializeError::ExpectedInitResult(Some(result(serde_json::json!({})))),
            ClientInitializeError::ExpectedInitResult(Some(result(serde_json::json!({
                "tools": [{"name": "x".repeat(500), "inputSchema": {"type": "object"}}]
            })))),
            ClientInitializeError::ExpectedInitResult(None),
            ClientInitializeError::ExpectedInitResponse(Some(message(serde_json::json!({
                "jsonrpc": "2.0", "id": 7, "method": "ping"
            })))),
            ClientInitializeError::ExpectedInitResponse(None),
            ClientInitializeError::ConflictInitResponseId(
                NumberOrString::Number(0),
                NumberOrString::String("<script>".into()),
            ),
            ClientInitializeError::UncorrelatedErrorResponse {
                expected: NumberOrString::Number(1),
                received: NumberOrString::Number(9),
            },
            ClientInitializeError::NoCompatibleProtocolVersion {
                client_supported: vec![
                    ProtocolVersion::V_2026_07_28,
                    ProtocolVersion::V_2025_11_25,
                ],
                server_supported: vec![ProtocolVersion::V_2024_11_05],
            },
            ClientInitializeError::NoPreferredProtocolVersion,
        ]
    }

    /// The errors a connection of the crate can end with, as rmcp hands them over: each HTTP
    /// error while sending, during the handshake (both requests of the discover fallback), and
    /// on a call; and rmcp's own service errors.
    fn all_errors() -> Vec<Box<dyn StdError + Send + Sync>> {
        let mut errors: Vec<Box<dyn StdError + Send + Sync>> = Vec::new();
        let count = http_errors().len();
        for i in 0..count {
            let e = || http_errors().swap_remove(i);
            errors.push(Box::new(ServiceError::TransportSend(wrapped(e()))));
            errors.push(Box::new(ClientInitializeError::TransportError {
                error: wrapped(e()),
                context: "send initialize request".into(),
            }));
            errors.push(Box::new(ClientInitializeError::LegacyFallbackFailed {
                discover: Box::new(ClientInitializeError::TransportError {
                    error: wrapped(e()),
                    context: "send discover request".into(),
                }),
                fallback: Box::new(ClientInitializeError::TransportError {
                    error: wrapped(StreamableHttpError::TransportChannelClosed),
                    context: "send initialize request".into(),
                }),
            }));
        }
        #[cfg(feature = "oauth")]
        for auth in auth_errors() {
            errors.push(Box::new(ServiceError::TransportSend(
                DynamicTransportError::from_parts(
                    TRANSPORT,
                    TypeId::of::<()>(),
                    Box::new(StreamableHttpError::<reqwest::Error>::Auth(auth)),
                ),
            )));
        }
        #[cfg(feature = "oauth")]
        errors.extend(
            auth_errors()
                .into_iter()
                .map(|e| Box::new(e) as Box<dyn StdError + Send + Sync>),
        );
        for i in 0..handshake_errors().len() {
            let e = || handshake_errors().swap_remove(i);
            errors.push(Box::new(ClientInitializeError::LegacyFallbackFailed {
                discover: Box::new(ClientInitializeError::JsonRpcError(ErrorData::new(
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    "Method not found",
                    None,
                ))),
                fallback: Box::new(e()),
            }));
            errors.push(Box::new(e()));
        }
        errors.push(Box::new(ServiceError::TransportClosed));
        errors.push(Box::new(ServiceError::UnexpectedResponse));
        errors.push(Box::new(ServiceError::Cancelled { reason: None }));
        errors.push(Box::new(ServiceError::Timeout {
            timeout: std::time::Duration::from_secs(30),
        }));
        errors.push(Box::new(ServiceError::McpError(ErrorData::internal_error(
            "boom", None,
        ))));
        errors.push(Box::new(ClientInitializeError::ConnectionClosed(
            "initialize response".into(),
        )));
        errors.push(Box::new(ClientInitializeError::Cancelled));
        errors.push(Box::new(std::io::Error::from(ErrorKind::NotFound)));
        errors
    }

    fn assert_readable(reason: &str) {
        let without_addresses = reason
            .split(['[', ']'])
            .filter(|part| {
                part.is_empty()
                    || !part
                        .chars()
                        .all(|c| c.is_ascii_hexdigit() || ":.%".contains(c))
            })
            .collect::<String>();
        assert!(
            !without_addresses.contains("::") && !reason.contains('<'),
            "a Rust type name or markup in: {reason}"
        );
        assert_eq!(debug_form(reason), None, "a Rust `Debug` form in: {reason}");
        assert!(
            reason.chars().count() <= 600,
            "{} characters: {reason}",
            reason.chars().count()
        );
    }

    /// The first `Name(` or `Name {` in `text` whose name is a Rust type's (`Some(`,
    /// `EmptyResult(`, `JsonRpcRequest {`): an uppercase letter, then letters and digits with a
    /// lowercase one among them.
    fn debug_form(text: &str) -> Option<String> {
        let mut words = text.char_indices().peekable();
        while let Some((start, c)) = words.next() {
            let at_word_start = text[..start]
                .chars()
                .next_back()
                .is_none_or(|p| !p.is_ascii_alphanumeric() && p != '_');
            if !(c.is_ascii_uppercase() && at_word_start) {
                continue;
            }
            let mut end = start + 1;
            while let Some(&(i, n)) = words.peek() {
                if !n.is_ascii_alphanumeric() {
                    break;
                }
                end = i + 1;
                words.next();
            }
            let name = &text[start..end];
            let rest = &text[end..];
            if name.chars().any(|c| c.is_ascii_lowercase())
                && (rest.starts_with('(') || rest.starts_with(" {"))
            {
                return Some(format!("{name}{}", &rest[..1]));
            }
        }
        None
    }

    #[test]
    fn a_json_body_that_is_not_json_rpc_is_quoted_whole_however_it_is_spaced() {
        // What rmcp says, from what serde says of each body (its message may hold ": " too).
        for body in [
            r#"{"status":"ok"}"#,
            r#"{"status": "ok"}"#,
            r#"{"a": 1, "b": {"c": "deep value"}, "d": [1,2]}"#,
            r#"[1, 2]"#,
            r#""at line 1 column 2: not this""#,
        ] {
            let serde = serde_json::from_str::<rmcp::model::ServerJsonRpcMessage>(body)
                .expect_err("not JSON-RPC");
            let said =
                format!("could not parse JSON response as ServerJsonRpcMessage: {serde}: {body}");
            let error: IoHttpError = StreamableHttpError::UnexpectedServerResponse(said.into());
            let answer = not_mcp_answer(&error).expect("a JSON body");
            assert_eq!(
                answer,
                format!(
                    "it answered a JSON body that is not JSON-RPC ({}): check that the URL is \
                     the MCP endpoint",
                    clean_remote(body, 80)
                ),
                "serde said: {serde}"
            );
        }
    }

    #[test]
    fn a_remote_status_with_an_empty_body_is_the_status_alone() {
        assert_eq!(
            remote_response("HTTP 404 Not Found: "),
            "it answered HTTP 404 Not Found"
        );
        assert_eq!(
            remote_response("HTTP 404 Not Found"),
            "it answered HTTP 404 Not Found"
        );
        assert_eq!(
            remote_response("HTTP 400 Bad Request: {\"error\":\"invalid_grant\"}"),
            "it answered HTTP 400 Bad Request with the body `{\"error\":\"invalid_grant\"}`"
        );
        assert_eq!(
            remote_response("HTTP 403 Forbidden: no"),
            "it answered HTTP 403 Forbidden with the body `no`"
        );
    }

    #[test]
    fn a_debug_form_is_told_from_words() {
        assert_eq!(
            debug_form("received: Some(EmptyResult(EmptyObject))").as_deref(),
            Some("Some(")
        );
        assert_eq!(
            debug_form("got JsonRpcRequest { id: 1 }").as_deref(),
            Some("JsonRpcRequest ")
        );
        assert_eq!(
            debug_form("versions [ProtocolVersion(\"2024-11-05\")]").as_deref(),
            Some("ProtocolVersion(")
        );
        assert_eq!(
            debug_form("its registration endpoint (Dynamic Client Registration) failed: HTTP 502"),
            None
        );
        assert_eq!(
            debug_form("it answered JSON-RPC error -32601 (Method not found)"),
            None
        );
    }

    #[test]
    fn no_reason_for_any_error_the_crate_can_see_carries_a_type_name_markup_or_a_whole_body() {
        let errors = all_errors();
        assert!(errors.len() > 90, "{}", errors.len());
        for error in &errors {
            let error: &(dyn StdError + 'static) = error.as_ref();
            let reason = explain(error);
            assert_readable(&reason);
            assert!(!reason.is_empty(), "{error:?}");
        }
    }

    #[test]
    fn every_call_and_connect_error_kind_built_from_a_reason_stays_readable() {
        let server: std::sync::Arc<str> = "vault".into();
        let kinds = [
            CallErrorKind::NotConnected(NotConnected::Unauthenticated),
            CallErrorKind::NotConnected(NotConnected::Absent),
            CallErrorKind::NotConnected(NotConnected::CoolingDown {
                left: std::time::Duration::from_secs(3),
            }),
            CallErrorKind::NotConnected(NotConnected::Throttled {
                left: std::time::Duration::from_secs(3),
            }),
            CallErrorKind::Transport,
            CallErrorKind::Timeout,
            CallErrorKind::Protocol,
            CallErrorKind::TaskFailed,
            CallErrorKind::InputRequired,
        ];
        let results = [
            ConnectResult::Refused,
            ConnectResult::Timeout,
            ConnectResult::Closed,
            ConnectResult::ProtocolError,
            ConnectResult::Unauthorized,
            ConnectResult::SpawnFailed,
        ];
        for error in all_errors() {
            let reason = explain(error.as_ref());
            for kind in kinds {
                let call = CallError::new(&server, kind, format!("server `vault`: {reason}"));
                assert_readable(call.message());
            }
            for result in results {
                let connect =
                    crate::client::ConnectError::new(result, format!("server `vault`: {reason}"));
                assert_readable(&connect.message);
            }
        }
    }

    #[test]
    fn a_transport_type_dump_becomes_the_root_cause_naming_the_system() {
        let refused = ServiceError::TransportSend(wrapped(StreamableHttpError::Io(
            std::io::Error::from(ErrorKind::ConnectionRefused),
        )));
        assert_eq!(
            explain(&refused),
            "the MCP server is unreachable: connection refused"
        );
        let closed =
            ServiceError::TransportSend(wrapped(StreamableHttpError::TransportChannelClosed));
        assert_eq!(explain(&closed), "the MCP server: the connection closed");
    }

    #[cfg(feature = "oauth")]
    #[test]
    fn an_authorization_server_outage_says_unreachable_and_a_registration_page_is_cut_to_its_title()
    {
        use rmcp::transport::auth::AuthError;
        let down = ServiceError::TransportSend(DynamicTransportError::from_parts(
            TRANSPORT,
            TypeId::of::<()>(),
            Box::new(StreamableHttpError::<reqwest::Error>::Auth(
                AuthError::TokenRefreshFailed(
                    "error sending request for url (http://127.0.0.1:9/token)".into(),
                ),
            )),
        ));
        assert_eq!(
            explain(&down),
            "authorization server unreachable (the refresh of its access token): error \
             sending request for url (http://127.0.0.1:9/token)"
        );
        let page = AuthError::RegistrationFailed(format!(
            "HTTP 500 Internal Server Error: {}",
            html_page()
        ));
        assert_eq!(
            explain(&page),
            "its authorization server's registration endpoint (Dynamic Client Registration) \
             failed: it answered HTTP 500 Internal Server Error with an HTML page: Sign in - Example SSO"
        );
    }

    #[test]
    fn the_first_answer_wins_the_diagnosis_of_the_discover_fallback() {
        let html = ClientInitializeError::LegacyFallbackFailed {
            discover: Box::new(ClientInitializeError::TransportError {
                error: wrapped(StreamableHttpError::UnexpectedContentType(Some(
                    "text/html".into(),
                ))),
                context: "send discover request".into(),
            }),
            fallback: Box::new(ClientInitializeError::TransportError {
                error: wrapped(StreamableHttpError::TransportChannelClosed),
                context: "send initialize request".into(),
            }),
        };
        assert_eq!(
            explain(&html),
            "the MCP server: it answered HTML (text/html; a login page?): check that the URL is \
             the MCP endpoint"
        );
        assert_eq!(
            crate::client::reasons::rmcp_errors::classify_init_error(&html, 0),
            ConnectResult::ProtocolError
        );
        // A discover that was answered with a status, then an initialize on a closed channel:
        // the status is the diagnosis.
        let status = ClientInitializeError::LegacyFallbackFailed {
            discover: Box::new(ClientInitializeError::TransportError {
                error: wrapped(HttpStatusError::new(502, None).into()),
                context: "send discover request".into(),
            }),
            fallback: Box::new(ClientInitializeError::TransportError {
                error: wrapped(StreamableHttpError::TransportChannelClosed),
                context: "send initialize request".into(),
            }),
        };
        assert_eq!(
            explain(&status),
            "the MCP server: it answered HTTP 502 Bad Gateway"
        );
    }

    #[test]
    fn rust_paths_become_their_last_segment_and_other_colons_stay_apart() {
        assert_eq!(
            strip_rust_paths("expected rmcp::model::JsonRpcMessage<A<B>> here"),
            "expected JsonRpcMessage here"
        );
        // IPv6 addresses are what the person must check: kept whole.
        assert_eq!(strip_rust_paths("http://[::1]:9/mcp"), "http://[::1]:9/mcp");
        assert_eq!(
            strip_rust_paths("tcp connect to [fe80::abcd%2]:443 failed in hyper::Error"),
            "tcp connect to [fe80::abcd%2]:443 failed in Error"
        );
        // Colons that are neither a path nor an address stay apart.
        assert!(!strip_rust_paths("a:: b").contains("::"));
        assert_eq!(cut("ééé", 2), "éé…");
    }
}
