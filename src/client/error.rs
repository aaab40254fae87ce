//! How a call through the hub (or `supervise::Peers`) ends without a result:
//! [`CallError`], its [`CallErrorKind`], and [`NotConnected`] for a server with no live connection.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;

use crate::resolve::{Scope, not_ready_error_type};
use crate::state::ConnectResult;
use crate::state::{CallOutcome, State};

/// Why a server had no live connection to take a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotConnected {
    /// Credentials are missing, expired or revoked; no retry until they change.
    Unauthenticated,
    /// Not configured, failed to start, or exited.
    Absent,
    /// The last connect failed; no new attempt until the cooldown ends.
    CoolingDown {
        /// Time left before the next attempt is allowed.
        left: Duration,
    },
    /// The server asked us to come back later (HTTP 429 / 503 with `Retry-After`); the next
    /// attempt starts by itself when that time is over, so the server is `connecting`.
    Throttled {
        /// Time left before the next attempt.
        left: Duration,
    },
}

impl NotConnected {
    /// The readiness state this corresponds to.
    pub const fn state(self) -> State {
        match self {
            NotConnected::Unauthenticated => State::Unauthenticated,
            NotConnected::Absent | NotConnected::CoolingDown { .. } => State::Absent,
            NotConnected::Throttled { .. } => State::Connecting,
        }
    }
}

/// What kind of failure a [`CallError`] is. Only [`CallErrorKind::Transport`] means "the pipe
/// died"; a JSON-RPC error or a tool result with `isError` is the server's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallErrorKind {
    /// The server had no live connection (and one could not be made now).
    NotConnected(NotConnected),
    /// The connection died during the call (closed pipe, reset, broken pipe).
    Transport,
    /// The call did not finish within the per-call timeout.
    Timeout,
    /// The server answered with a JSON-RPC error, or with something that is not MCP.
    Protocol,
    /// The server ran the call as a task (MCP 2026-07-28) and the task failed or was cancelled.
    TaskFailed,
    /// The server needs input (an `input_required` task or result) that an unattended run cannot
    /// give; the task was cancelled.
    InputRequired,
}

impl CallErrorKind {
    /// A short label: `not_connected`, `transport_error`, `timeout`, `protocol_error`,
    /// `task_failed` or `input_required`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CallErrorKind::NotConnected(_) => "not_connected",
            CallErrorKind::Transport => "transport_error",
            CallErrorKind::Timeout => "timeout",
            CallErrorKind::Protocol => "protocol_error",
            CallErrorKind::TaskFailed => "task_failed",
            CallErrorKind::InputRequired => "input_required",
        }
    }
}

/// A tool call through the `supervise::Hub` that produced no result. The message names the
/// server, says what happened and what to do next, and never contains secrets.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct CallError {
    server: Arc<str>,
    kind: CallErrorKind,
    message: String,
    connect_result: Option<ConnectResult>,
    json_rpc: Option<ErrorData>,
    /// The full name of the tool called (`mcp__server__tool`), when the error came from a call.
    tool: Option<Arc<str>>,
    /// A dead connection the hub re-makes by itself (not one the service must connect again).
    reconnects: bool,
    /// The live session's credentials were rejected and the session was dropped: one fresh
    /// handshake with the same credentials is due before the server is called unauthenticated.
    pub(crate) fresh_handshake_due: bool,
}

impl CallError {
    pub(crate) fn new(server: &Arc<str>, kind: CallErrorKind, message: String) -> Self {
        CallError {
            server: server.clone(),
            kind,
            message,
            connect_result: None,
            json_rpc: None,
            tool: None,
            reconnects: false,
            fresh_handshake_due: false,
        }
    }

    /// The error of a call to `tool` (its full name, `mcp__server__tool`).
    pub(crate) fn for_tool(mut self, tool: &crate::state::ToolName) -> Self {
        self.tool = Some(tool.as_arc().clone());
        self
    }

    /// A dead connection the hub re-makes by itself: the server reads `connecting`, not `absent`.
    pub(crate) fn reconnecting(mut self) -> Self {
        self.reconnects = true;
        self
    }

    pub(crate) fn with_connect_result(mut self, result: ConnectResult) -> Self {
        self.connect_result = Some(result);
        self
    }

    pub(crate) fn with_json_rpc(mut self, error: ErrorData) -> Self {
        self.json_rpc = Some(error);
        self
    }

    /// The server the call was for.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The full name of the tool the call was for (`mcp__server__tool`); `None` when the error
    /// did not come from a call.
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> CallErrorKind {
        self.kind
    }

    /// The readiness state the failure implies for the server: `unauthenticated` or `absent` for
    /// [`CallErrorKind::NotConnected`]; for a dead pipe `connecting` through the `Hub` (it re-makes
    /// the connection) and `absent` through `Peers` (the service connects it again); `ready`
    /// otherwise (the server is live; it answered with an error or was slow).
    pub fn state(&self) -> State {
        match self.kind {
            CallErrorKind::NotConnected(n) => n.state(),
            // The hub re-makes a dropped connection (it reads `connecting` meanwhile); a
            // connection the service owns (`Peers`) is absent until the service connects it.
            CallErrorKind::Transport if self.reconnects => State::Connecting,
            CallErrorKind::Transport => State::Absent,
            CallErrorKind::Timeout
            | CallErrorKind::Protocol
            | CallErrorKind::TaskFailed
            | CallErrorKind::InputRequired => State::Ready,
        }
    }

    /// How the connection attempt made for this call ended, when one was made and failed.
    pub fn connect_result(&self) -> Option<ConnectResult> {
        self.connect_result
    }

    /// The JSON-RPC error the server answered with, for [`CallErrorKind::Protocol`] (its message
    /// is the server's, redacted of known secrets).
    pub fn json_rpc_error(&self) -> Option<&ErrorData> {
        self.json_rpc.as_ref()
    }

    /// The human-readable message (same as `Display`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// How a call through the readiness layer ends when the hub fails it with this error: a
    /// server it could not connect is `not_ready` (the state changed after the cache said
    /// ready); a JSON-RPC error is the tool's answer (`tool_error`); a dead pipe or an answer that
    /// is not MCP is `transport_error`; a call past its timeout is `timeout`; a task that failed is
    /// `task_failed`; a call that needs input an unattended run cannot give is `input_required`.
    ///
    /// ```
    /// use mcp_readiness::state::CallOutcome;
    /// # fn check(error: &mcp_readiness::client::CallError) {
    /// if error.outcome() == CallOutcome::NotReady {
    ///     tracing::warn!("{} is {}: {}", error.server(), error.state(), error.error_type());
    /// }
    /// # }
    /// ```
    pub fn outcome(&self) -> CallOutcome {
        match self.kind {
            CallErrorKind::NotConnected(_) => CallOutcome::NotReady,
            CallErrorKind::Transport => CallOutcome::TransportError,
            CallErrorKind::Timeout => CallOutcome::Timeout,
            CallErrorKind::Protocol if self.json_rpc.is_some() => CallOutcome::ToolError,
            CallErrorKind::Protocol => CallOutcome::TransportError,
            CallErrorKind::TaskFailed => CallOutcome::TaskFailed,
            CallErrorKind::InputRequired => CallOutcome::InputRequired,
        }
    }

    /// The call span's `error.type` for this error: the layer's `not_ready` error type of the
    /// server's state (`server_unauthenticated`, `server_absent`), `transport_error`, `timeout`,
    /// the JSON-RPC error code, `protocol_error` for an answer that is not MCP, `task_failed` or
    /// `input_required`.
    pub fn error_type(&self) -> Cow<'static, str> {
        match self.kind {
            CallErrorKind::NotConnected(not_connected) => {
                not_ready_error_type(not_connected.state(), Scope::Server)
                    .unwrap_or("server_absent")
                    .into()
            }
            CallErrorKind::Transport => "transport_error".into(),
            CallErrorKind::Timeout => "timeout".into(),
            CallErrorKind::Protocol => match &self.json_rpc {
                Some(json_rpc) => json_rpc.code.0.to_string().into(),
                None => "protocol_error".into(),
            },
            CallErrorKind::TaskFailed => "task_failed".into(),
            CallErrorKind::InputRequired => "input_required".into(),
        }
    }
}
