//! The call path of [`Peers`]: route by server, call with the per-call timeout, and classify a
//! failure with the hub's rules; a 401/403 makes the server `unauthenticated`, a dead pipe makes
//! it `absent`, and both change the feed so the layer re-checks.

use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult, RequestMetaObject};

use super::Peers;
use crate::client::connector::Session;
use crate::client::error::{CallError, CallErrorKind, NotConnected};
use crate::client::reasons::reason::{REMOTE_TEXT_MAX, clean_remote, explain};
use crate::client::reasons::rmcp_errors::{is_auth_failure, is_pipe_dead};
use crate::secret::redact;
use crate::state::{ConnectResult, State, ToolCall};
use crate::supervise::events::Readiness as _;
use crate::util::Human;

impl Peers {
    /// Routes one call to its server's live connection (see the `tower::Service` impl). A server
    /// without one fails at once with [`CallErrorKind::NotConnected`]; nothing is sent.
    pub async fn call(&self, call: ToolCall) -> Result<CallToolResult, CallError> {
        let name = call.name.clone();
        self.call_routed(call)
            .await
            .map_err(|error| error.for_tool(&name))
    }

    async fn call_routed(&self, call: ToolCall) -> Result<CallToolResult, CallError> {
        let server: Arc<str> = call.name.server().into();
        let (live, state, reason) = {
            let servers = self.inner.lock();
            match servers.get(&*server) {
                Some(slot) => (
                    slot.live_session(),
                    slot.conn.readiness(),
                    slot.reason.clone(),
                ),
                None => (None, State::Absent, None),
            }
        };
        let Some((generation, session)) = live else {
            return Err(not_connected(&server, &call, state, reason.as_deref()));
        };
        let mut params = CallToolRequestParams::new(call.name.tool().to_owned());
        // For the messages: the caller's name, escaped and cut.
        let tool = crate::secret::echo(call.name.tool()).into_owned();
        params.arguments = call.arguments;
        params.meta = call.meta.map(|m| RequestMetaObject(m.into()));
        let timeout = self.inner.call_timeout();
        let error = match tokio::time::timeout(timeout, session.call_tool(params)).await {
            Ok(Ok(result)) => return Ok(result),
            Err(_elapsed) => {
                return Err(CallError::new(
                    &server,
                    CallErrorKind::Timeout,
                    format!(
                        "server `{server}` did not answer `{tool}` within {}; the call was cancelled",
                        Human(timeout)
                    ),
                ));
            }
            Ok(Err(error)) => error,
        };
        let detail = redact(&explain(&error), &[]);
        if is_auth_failure(&error) {
            let why = format!(
                "server `{server}` rejected the credentials during `{tool}` (HTTP 401/403)"
            );
            self.inner
                .update_known(&server, |slot| slot.auth_lost(generation, why.clone()));
            return Err(CallError::new(
                &server,
                CallErrorKind::NotConnected(NotConnected::Unauthenticated),
                format!("{why}; re-authorize it and connect again"),
            )
            .with_connect_result(ConnectResult::Unauthorized));
        }
        if is_pipe_dead(&error) {
            self.inner.update_known(&server, |slot| {
                slot.lost(
                    generation,
                    &format!("the pipe died during `{tool}` ({detail})"),
                )
            });
            return Err(CallError::new(
                &server,
                CallErrorKind::Transport,
                format!(
                    "connection to server `{server}` died during `{tool}` ({detail}); it is absent \
                     until the service connects it again"
                ),
            ));
        }
        Err(match error {
            ServiceError::Timeout { .. } => CallError::new(
                &server,
                CallErrorKind::Timeout,
                format!("server `{server}` did not answer `{tool}` in time ({detail})"),
            ),
            ServiceError::McpError(mut data) => {
                // The server's own words: redacted, cut and with control characters gone.
                data.message = clean_remote(&redact(&data.message, &[]), REMOTE_TEXT_MAX).into();
                data.data = None;
                CallError::new(
                    &server,
                    CallErrorKind::Protocol,
                    format!(
                        "server `{server}` answered `{tool}` with JSON-RPC error {}: {}",
                        data.code.0, data.message
                    ),
                )
                .with_json_rpc(data)
            }
            _ => CallError::new(
                &server,
                CallErrorKind::Protocol,
                format!("server `{server}` answered `{tool}` with something unexpected ({detail})"),
            ),
        })
    }
}

/// The error for a call to a server without a live connection, in its state's words.
fn not_connected(
    server: &Arc<str>,
    call: &ToolCall,
    state: State,
    reason: Option<&str>,
) -> CallError {
    let (kind, what) = match state {
        State::Unauthenticated => (NotConnected::Unauthenticated, "is unauthenticated"),
        State::Connecting => (NotConnected::Absent, "is still connecting"),
        State::Ready | State::Absent => (NotConnected::Absent, "has no live connection"),
    };
    let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
    CallError::new(
        server,
        CallErrorKind::NotConnected(kind),
        format!(
            "server `{server}` {what}{why}; `{}` was not sent",
            call.name
        ),
    )
}

impl tower::Service<ToolCall> for Peers {
    type Response = CallToolResult;
    type Error = CallError;
    type Future = BoxFuture<'static, Result<CallToolResult, CallError>>;

    /// Always ready: readiness is per server and per call, decided inside `call`.
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    /// Routes by `call.name.server()` and passes `call.meta` as the request `_meta`.
    fn call(&mut self, call: ToolCall) -> Self::Future {
        let peers = self.clone();
        Box::pin(async move { peers.call(call).await })
    }
}
