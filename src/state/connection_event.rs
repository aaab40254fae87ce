use std::sync::Arc;
use std::time::Duration;

use crate::state::State;

/// How one connection attempt ended: the `result` label of `mcp_readiness_connects_total` and
/// `mcp_readiness_connect_duration_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConnectResult {
    /// The handshake completed and the tool list was read.
    Ok,
    /// HTTP 401 (with or without a challenge), 403 with a challenge (insufficient scope), or a
    /// local "authorization required". A bare 403 is not (`protocol_error` / `refused`).
    Unauthorized,
    /// The server refused the connection (nothing listening, connection reset during connect),
    /// or answered with an HTTP server error (5xx) or 429: it is not serving.
    Refused,
    /// The configured command is missing or not executable.
    SpawnFailed,
    /// The handshake did not complete within the connect timeout.
    Timeout,
    /// The server closed the connection during the handshake (the child exited, the stream ended).
    Closed,
    /// The server answered with something that is not MCP (a page, another HTTP status such as a
    /// bare 403, a redirect or a 404, garbage on stdout).
    ProtocolError,
}

impl ConnectResult {
    /// Every result, in label order.
    pub const ALL: [ConnectResult; 7] = [
        ConnectResult::Ok,
        ConnectResult::Unauthorized,
        ConnectResult::Refused,
        ConnectResult::SpawnFailed,
        ConnectResult::Timeout,
        ConnectResult::Closed,
        ConnectResult::ProtocolError,
    ];

    /// The label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConnectResult::Ok => "ok",
            ConnectResult::Unauthorized => "unauthorized",
            ConnectResult::Refused => "refused",
            ConnectResult::SpawnFailed => "spawn_failed",
            ConnectResult::Timeout => "timeout",
            ConnectResult::Closed => "closed",
            ConnectResult::ProtocolError => "protocol_error",
        }
    }

    /// The readiness state a server is in after an attempt that ended this way.
    pub const fn state(self) -> State {
        match self {
            ConnectResult::Ok => State::Ready,
            ConnectResult::Unauthorized => State::Unauthenticated,
            _ => State::Absent,
        }
    }
}

/// Who answered a completed handshake: `mcp_readiness_server_info` and the status page show it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ServerIdentity {
    /// The negotiated protocol version (`2025-11-25`, `2026-07-28`, ...).
    pub protocol_version: String,
    /// The server's `serverInfo.name` (empty when it sent none).
    pub server_name: String,
    /// The server's `serverInfo.version` (empty when it sent none).
    pub server_version: String,
}

/// Something that happened to a supervised connection. Metrics, logs and the inventory's change
/// notification all listen to these.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConnectionEvent {
    /// A server became known (configured or added by a reload). Its state starts as `from`-less.
    ServerAdded {
        /// The server.
        server: Arc<str>,
        /// Its initial readiness state.
        state: State,
    },
    /// A server was removed (a reload dropped it); its series should go away.
    ServerRemoved {
        /// The server.
        server: Arc<str>,
    },
    /// The server's readiness state changed.
    StateChanged {
        /// The server.
        server: Arc<str>,
        /// The state before.
        from: State,
        /// The state now.
        to: State,
        /// Why, in words a human can act on; never contains secrets.
        reason: Option<Arc<str>>,
    },
    /// The reason for the server's state changed while the state did not: a `connecting` server
    /// that is throttled (`Retry-After`) or tries again after a failure, an `absent` one whose
    /// next attempt failed another way. The status page, `/status.json` and `Hub::servers` show
    /// the new reason; it is not a state change (not on `/events`, not counted).
    ReasonChanged {
        /// The server.
        server: Arc<str>,
        /// The state it is (still) in.
        state: State,
        /// Why, in words a human can act on; never contains secrets.
        reason: Option<Arc<str>>,
    },
    /// One connection attempt ended.
    ConnectAttempt {
        /// The server.
        server: Arc<str>,
        /// How it ended.
        result: ConnectResult,
        /// From the start of the attempt to ready or failure.
        duration: Duration,
    },
    /// A connection was re-established after a drop.
    Reconnected {
        /// The server.
        server: Arc<str>,
    },
    /// An HTTP connection opened an event stream again (its `GET` stream, or a response stream
    /// resumed), after the pacing of re-opens (`mcp_readiness_stream_reopens_total`).
    StreamReopened {
        /// The server.
        server: Arc<str>,
    },
    /// A call failed fast because the server is cooling down after a failed connect.
    CooldownRejection {
        /// The server.
        server: Arc<str>,
    },
    /// A connection was established (announced before its [`ConnectionEvent::Handshake`]): where
    /// the server is reached. The recorder puts it on `mcp.client.operation.duration` over OTLP
    /// (`network.transport`, `server.address`, `server.port`).
    Endpoint {
        /// The server.
        server: Arc<str>,
        /// Where it is reached.
        endpoint: crate::state::ServerEndpoint,
    },
    /// A handshake completed: who answered and which protocol version was negotiated
    /// (`mcp_readiness_server_info`).
    Handshake {
        /// The server.
        server: Arc<str>,
        /// Who answered.
        identity: ServerIdentity,
    },
    /// The server's tool list was (re)read.
    ToolsChanged {
        /// The server.
        server: Arc<str>,
        /// How many tools it offers now.
        count: usize,
    },
    /// When the next connection attempt is due changed: `after` from now (the end of a failed
    /// connect's backoff, a crash loop's backoff or a `Retry-After`), or `None` when no attempt
    /// is waiting for a time (connecting, connected, unauthenticated, stopped)
    /// (`mcp_readiness_server_next_attempt_timestamp_seconds`).
    NextAttempt {
        /// The server.
        server: Arc<str>,
        /// How long from now, when one is due.
        after: Option<Duration>,
    },
    /// What is known of when the server's credentials expire changed (a token was issued or
    /// refreshed, a store was re-authorized); empty when nothing is known any more.
    CredentialsExpire {
        /// The server.
        server: Arc<str>,
        /// Every credential of the server whose expiry is known.
        expiries: Vec<crate::state::CredentialExpiry>,
    },
}

impl ConnectionEvent {
    /// The server the event is about.
    pub fn server(&self) -> &str {
        match self {
            ConnectionEvent::ServerAdded { server, .. }
            | ConnectionEvent::ServerRemoved { server }
            | ConnectionEvent::StateChanged { server, .. }
            | ConnectionEvent::ReasonChanged { server, .. }
            | ConnectionEvent::ConnectAttempt { server, .. }
            | ConnectionEvent::Reconnected { server }
            | ConnectionEvent::CooldownRejection { server }
            | ConnectionEvent::NextAttempt { server, .. }
            | ConnectionEvent::StreamReopened { server }
            | ConnectionEvent::ToolsChanged { server, .. }
            | ConnectionEvent::Handshake { server, .. }
            | ConnectionEvent::Endpoint { server, .. } => server,
            ConnectionEvent::CredentialsExpire { server, .. } => server,
        }
    }
}

/// A listener for [`ConnectionEvent`]s. Called synchronously on the supervising task: keep it cheap
/// and never block. `()` ignores every event.
pub trait EventSink: Send + Sync + 'static {
    /// Observes one event.
    fn on_event(&self, event: &ConnectionEvent);
}

impl EventSink for () {
    fn on_event(&self, _event: &ConnectionEvent) {}
}

impl<F> EventSink for F
where
    F: Fn(&ConnectionEvent) + Send + Sync + 'static,
{
    fn on_event(&self, event: &ConnectionEvent) {
        self(event)
    }
}

impl<T: EventSink + ?Sized> EventSink for Arc<T> {
    fn on_event(&self, event: &ConnectionEvent) {
        (**self).on_event(event)
    }
}
