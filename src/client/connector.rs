//! The contract between a supervisor and a connection: a [`Connector`] makes a [`Session`] (or a
//! classified [`ConnectError`]); [`SessionEvents`] carries what the server tells the supervisor.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};

use std::error::Error as StdError;

use rmcp::service::ClientInitializeError;

use crate::client::reasons::rmcp_errors::classify_init_error;
use crate::secret::redact;
use crate::state::ConnectResult;
use crate::state::ServerIdentity;

/// A failed connection attempt, classified. The message names the server and what to do next,
/// and never contains secrets (connectors redact what they know).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConnectError {
    /// How the attempt ended (never [`ConnectResult::Ok`]).
    pub result: ConnectResult,
    /// What happened, for humans.
    pub message: String,
    /// How long the server asked us to stay away (HTTP 429 / 503 with `Retry-After`), bounded.
    retry_after: Option<Duration>,
}

impl ConnectError {
    /// A classified failure.
    pub fn new(result: ConnectResult, message: impl Into<String>) -> Self {
        ConnectError {
            result,
            message: message.into(),
            retry_after: None,
        }
    }

    /// Classifies a failed connect of `server` the way the `Hub` classifies its
    /// own: rmcp's `ClientInitializeError` anywhere in `error`'s chain by its cause (a 401/403
    /// challenge is `unauthorized`, nothing listening `refused`, ...), an `std::io::Error` from
    /// starting a command (not found, not executable, out of file descriptors) `spawn_failed`,
    /// refused / timed-out sockets `refused` / `timeout`, anything else `closed`. The message
    /// names the server, the cause (redacted) and the next step.
    ///
    /// ```
    /// use mcp_readiness::state::ConnectResult;
    /// use mcp_readiness::client::ConnectError;
    ///
    /// let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
    /// let error = ConnectError::classify("files", &missing);
    /// assert_eq!(error.result, ConnectResult::SpawnFailed);
    /// assert!(error.message.contains("check that its command is installed"));
    /// ```
    pub fn classify(server: &str, error: &(dyn std::error::Error + Send + Sync + 'static)) -> Self {
        connect_error_of(server, error)
    }

    /// The server said when to come back (HTTP 429 / 503 with `Retry-After`): the supervisor
    /// cools down for that long and the server reads `connecting` meanwhile (it heals by itself).
    /// Bounded by [`MAX_RETRY_AFTER`].
    pub fn with_retry_after(mut self, after: Duration) -> Self {
        self.retry_after = Some(after.min(MAX_RETRY_AFTER));
        self
    }

    /// How long the server asked us to stay away, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

/// The longest `Retry-After` honoured (10 minutes): a server asking for more is retried then.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

/// One live MCP connection, as the supervisor sees it. The rmcp connectors return one backed by an
/// rmcp [`Peer`](rmcp::Peer); tests may script their own.
///
/// Dropping the last handle, or [`Session::shutdown`], closes the connection (and kills a stdio
/// child with its whole process group).
pub trait Session: Send + Sync + 'static {
    /// Sends `tools/call`. Timeouts are applied by the caller.
    fn call_tool(
        &self,
        params: CallToolRequestParams,
    ) -> BoxFuture<'_, Result<CallToolResult, ServiceError>>;

    /// Lists every tool the server offers now (all pages).
    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ServiceError>>;

    /// One liveness ping: the MCP `ping` request on sessions before 2026-07-28, a cheap request
    /// (`server/discover`) on 2026-07-28 sessions, which have no `ping`.
    fn ping(&self) -> BoxFuture<'_, Result<(), ServiceError>>;

    /// Who answered the handshake (protocol version, server name and version), when known. The
    /// default knows nothing.
    fn identity(&self) -> Option<ServerIdentity> {
        None
    }

    /// The streamable-HTTP session id (`Mcp-Session-Id`) the server assigned, recorded as
    /// `mcp.session.id` on the call's span. `None` for stdio, for 2026-07-28 sessions (which have
    /// none) and by default. Not a secret, but never a metric label.
    fn session_id(&self) -> Option<Arc<str>> {
        None
    }

    /// The notAfter (Unix seconds) of the leaf certificate the server presented when this
    /// connection was made over HTTPS. `None` for plain HTTP, stdio and by default.
    fn tls_certificate_expiry(&self) -> Option<i64> {
        None
    }

    /// Whether the connection is known to be over (cheap, synchronous).
    fn is_closed(&self) -> bool;

    /// Resolves with a human reason (no secrets) the moment the connection ends: the child exited,
    /// the stream died, or [`Session::shutdown`] was called.
    fn closed(&self) -> BoxFuture<'static, Arc<str>>;

    /// Closes the connection now; a stdio child and its process group are killed synchronously.
    fn shutdown(&self);

    /// The rmcp client [`Peer`](rmcp::Peer) behind this connection, for everything beyond tools
    /// (resources, prompts, completions, ...). `None` for sessions not backed by rmcp (the
    /// default).
    fn peer(&self) -> Option<rmcp::Peer<rmcp::service::RoleClient>> {
        None
    }
}

impl fmt::Debug for dyn Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// What a connection reports back to its supervisor while it runs.
#[derive(Clone)]
pub struct SessionEvents {
    tools_changed: Arc<dyn Fn() + Send + Sync>,
    stream_reopened: Arc<dyn Fn() + Send + Sync>,
    http_answered: Option<Arc<dyn Fn(HttpAnswer) + Send + Sync>>,
}

/// One HTTP answer a streamable-HTTP server gave, as a person debugging it reads it (`/probe`'s
/// `debug=true` log): what was asked and what came back, never a header value, a URL or a body.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpAnswer {
    /// The request: `POST initialize`, `POST tools/list`, `GET` (the event stream), `DELETE`.
    pub request: String,
    /// The HTTP status, where the HTTP client reports it: exact for the failures rmcp tells
    /// apart (401, 403, 404, 405, 429, 5xx and other 4xx), `None` for an answer that carried an
    /// MCP message (rmcp hides its 2xx code).
    pub status: Option<u16>,
    /// What came back: the content type of a message (`application/json`,
    /// `text/event-stream`), `accepted` (202 or 204, no body), or what failed.
    pub answer: String,
    /// Whether a `None` status was a 2xx (rmcp hides the code of an answer it took, and of a
    /// 2xx it could not use); otherwise, with no status, no answer came (or its code is not known).
    pub(crate) answered_2xx: bool,
}

impl fmt::Display for HttpAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = match self.status {
            Some(status) => format!("HTTP {status}"),
            None if self.answered_2xx => "HTTP 2xx".into(),
            // No answer, or one whose status rmcp did not keep: say nothing of a status.
            None => String::new(),
        };
        let separator = if status.is_empty() || self.answer.is_empty() {
            ""
        } else {
            " "
        };
        write!(f, "{} -> {status}{separator}{}", self.request, self.answer)
    }
}

impl SessionEvents {
    /// Events that call `tools_changed` on `notifications/tools/list_changed`.
    pub fn new(tools_changed: impl Fn() + Send + Sync + 'static) -> Self {
        SessionEvents {
            tools_changed: Arc::new(tools_changed),
            stream_reopened: Arc::new(|| {}),
            http_answered: None,
        }
    }

    /// Also calls `answered` with every HTTP answer the server gives a streamable-HTTP
    /// connection (status and content type; see [`HttpAnswer`]). `/probe`'s debug log uses it.
    pub fn on_http_answer(mut self, answered: impl Fn(HttpAnswer) + Send + Sync + 'static) -> Self {
        self.http_answered = Some(Arc::new(answered));
        self
    }

    /// The server gave an HTTP answer (a no-op unless [`SessionEvents::on_http_answer`] set one).
    pub(crate) fn http_answered(&self, answer: impl FnOnce() -> HttpAnswer) {
        if let Some(answered) = &self.http_answered {
            answered(answer());
        }
    }

    /// Whether anyone reads the HTTP answers.
    pub(crate) fn wants_http_answers(&self) -> bool {
        self.http_answered.is_some()
    }

    /// Also calls `stream_reopened` every time the connection opens an event stream again (an
    /// HTTP connection's `GET` stream, or a response stream resumed; see
    /// `mcp_readiness_stream_reopens_total`).
    pub fn on_stream_reopened(
        mut self,
        stream_reopened: impl Fn() + Send + Sync + 'static,
    ) -> Self {
        self.stream_reopened = Arc::new(stream_reopened);
        self
    }

    /// The connection opened an event stream again.
    pub fn stream_reopened(&self) {
        (self.stream_reopened)()
    }

    /// Events that go nowhere.
    pub fn ignore() -> Self {
        SessionEvents::new(|| {})
    }

    /// The server said its tool list changed: the supervisor re-reads it.
    pub fn tools_changed(&self) {
        (self.tools_changed)()
    }
}

impl fmt::Debug for SessionEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionEvents")
    }
}

/// Re-provisions per-connection state on a fresh connection before its first call (the seed's
/// IMAP account store). Runs on every successful connect; a failure fails the attempt.
pub type AfterConnect =
    Arc<dyn Fn(Arc<dyn Session>) -> BoxFuture<'static, Result<(), ConnectError>> + Send + Sync>;

/// Opens one live connection to one server and classifies failure.
///
/// The supervisor calls [`Connector::connect`] and then [`Connector::after_connect`] on every fresh
/// connection, before any call is routed to it, inside the connect timeout.
pub trait Connector: Send + Sync + 'static {
    /// Opens one connection (spawn + handshake, or HTTP handshake). `events` must be wired to the
    /// connection's notifications.
    fn connect(
        &self,
        events: SessionEvents,
    ) -> BoxFuture<'_, Result<Arc<dyn Session>, ConnectError>>;

    /// Re-provisions per-connection state before the first call. The default does nothing.
    fn after_connect(&self, session: Arc<dyn Session>) -> BoxFuture<'_, Result<(), ConnectError>> {
        let _ = session;
        Box::pin(std::future::ready(Ok(())))
    }

    /// The OpenTelemetry `network.transport`: `pipe` (stdio) or `tcp` (HTTP).
    fn network_transport(&self) -> &'static str;

    /// What is known of this server's credentials, as it changes: the hub exports the expiries
    /// as `mcp_readiness_credential_expiry_timestamp_seconds` and lets an unauthenticated server
    /// try again after a re-authorization. The default: nothing is known.
    fn credentials(&self) -> Option<tokio::sync::watch::Receiver<crate::client::CredentialState>> {
        None
    }

    /// Why the credentials cannot work, when the connector knows more than the server's 401
    /// says (e.g. the refresh token was refused, and what to run), for `unauthenticated`
    /// reasons. Never contains a secret. The default: nothing more is known.
    fn auth_problem(&self) -> Option<String> {
        None
    }

    /// The server answered `403 insufficient_scope` asking for `scope` (space-separated): the
    /// connector remembers it for the next authorization (OAuth: `oauth login` then asks for the
    /// granted scopes plus these) and returns what to run, for the `unauthenticated` reason. The
    /// supervisor awaits the future before it returns the `unauthenticated` error, so a login
    /// started on that error (by a run that exits on it, or a client that re-authorizes at once)
    /// finds the scope remembered. The default: nothing is remembered, no command is known.
    fn step_up(&self, scope: &str) -> BoxFuture<'_, Option<String>> {
        let _ = scope;
        Box::pin(std::future::ready(None))
    }

    /// Renews now a credential the connector renews itself (an OAuth refresh token, client
    /// credentials, a workload identity) whose access token expires before `at`, so that a grant
    /// that stopped working is found now rather than when the token runs out (the pre-flight
    /// does this for the next run, see `HubOptionsBuilder::renew_credentials_expiring_before`).
    /// The supervisor calls it after a successful handshake and tool list. An error (result
    /// [`ConnectResult::Unauthorized`]) means the authorization server refused the renewal, and
    /// fails the attempt with its message (which says what to run);
    /// [`Renewal::NotRenewed`] that it could not be asked. The default: nothing is renewed
    /// ([`Renewal::NotDue`]).
    fn renew_credentials_expiring_before(
        &self,
        at: std::time::SystemTime,
    ) -> BoxFuture<'_, Result<Renewal, ConnectError>> {
        let _ = at;
        Box::pin(std::future::ready(Ok(Renewal::NotDue)))
    }
}

/// What renewing a server's credentials ahead of the next run found
/// ([`Connector::renew_credentials_expiring_before`], read back by `Hub::renewals`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renewal {
    /// Nothing the connector renews itself expires before then.
    NotDue,
    /// Renewed now; the new access token expires at `expires_at` when the authorization server
    /// said.
    Renewed {
        /// When the new access token expires, if known.
        expires_at: Option<std::time::SystemTime>,
    },
    /// The authorization server could not be asked (it did not answer, or answered with an
    /// error of its own): the current token still works now, but nothing proves it can be
    /// renewed before the next run. `reason` names the authorization server and what to check.
    NotRenewed {
        /// Why, for a person (no secrets).
        reason: String,
    },
}

impl fmt::Debug for dyn Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connector")
            .field("network_transport", &self.network_transport())
            .finish()
    }
}

/// Runs the optional hook (shared by the rmcp connectors).
pub(crate) fn run_hook(
    hook: Option<&AfterConnect>,
    session: Arc<dyn Session>,
) -> BoxFuture<'static, Result<(), ConnectError>> {
    match hook {
        Some(hook) => hook(session),
        None => Box::pin(std::future::ready(Ok(()))),
    }
}

/// A failed connect of `server`, classified with the hub's rules ([`ConnectError::classify`]);
/// the message is redacted of URL paths, credentials and bearer tokens.
fn connect_error_of(server: &str, error: &(dyn StdError + Send + Sync + 'static)) -> ConnectError {
    let root: &(dyn StdError + 'static) = error;
    let chain = || std::iter::successors(Some(root), |e: &&(dyn StdError + 'static)| (*e).source());
    let result = if let Some(init) = chain().find_map(|e| e.downcast_ref::<ClientInitializeError>())
    {
        classify_init_error(init, 0)
    } else {
        match chain()
            .find_map(|e| e.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind)
        {
            Some(std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied) => {
                ConnectResult::SpawnFailed
            }
            Some(std::io::ErrorKind::ConnectionRefused) => ConnectResult::Refused,
            // A process that could not start for want of descriptors or memory.
            _ if chain()
                .find_map(|e| e.downcast_ref::<std::io::Error>())
                .and_then(crate::util::out_of_descriptors)
                .is_some() =>
            {
                ConnectResult::SpawnFailed
            }
            Some(std::io::ErrorKind::TimedOut) => ConnectResult::Timeout,
            _ => ConnectResult::Closed,
        }
    };
    let mut detail = crate::client::reasons::reason::explain(root);
    if result == ConnectResult::SpawnFailed {
        // No MCP server ran: the process the command names could not start.
        if let Some(what) = detail.strip_prefix("the MCP server: ") {
            detail = format!("the child process could not start: {what}");
        }
    }
    // The caller's own words on top of the cause (`anyhow`'s `.context(..)`, a wrapping error):
    // kept after the root cause when they say something more and hold no type name. rmcp's own
    // wrappers ("Send message error, when send initialize request: ...") are not kept: the
    // explanation already says what they wrap.
    let raw_top = error.to_string();
    let max = crate::client::reasons::reason::REMOTE_TEXT_MAX;
    // Compared and kept as every reason keeps text: control characters gone (a caller's error
    // may carry a terminal escape), so the same words are not kept twice.
    let top = crate::client::reasons::reason::clean_remote(&raw_top, max);
    let from_rmcp =
        chain().any(|e| e.is::<ClientInitializeError>() || e.is::<rmcp::ServiceError>());
    if !from_rmcp
        && raw_top.chars().count() <= max
        && !raw_top.contains("::")
        && !raw_top.contains('<')
        && !detail.contains(top.as_str())
    {
        detail = format!("{detail}; {top}");
    }
    let detail = redact(&detail, &[]);
    let next = match result {
        ConnectResult::Unauthorized => "re-authorize it, then connect again",
        ConnectResult::SpawnFailed => "check that its command is installed and executable",
        ConnectResult::Refused => "check that the server is running and reachable",
        _ => "check that it speaks MCP, then connect again",
    };
    ConnectError::new(
        result,
        format!("server `{server}`: connecting failed ({detail}); {next}"),
    )
}
