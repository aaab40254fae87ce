//! The call path of a supervisor: ensure a connection, call with the per-call timeout, map rmcp's
//! errors to [`CallError`]s (and to transitions: a dead pipe loses the connection, rejected
//! credentials drop the session for one fresh handshake and then make the server unauthorized),
//! and retry once after a dead pipe when the call is idempotent.

use std::sync::Arc;

use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult, RequestMetaObject};

use super::Supervisor;
use super::conn_state::ConnState;
use crate::client::connector::Session;
use crate::client::error::{CallError, CallErrorKind};
use crate::client::reasons::reason::{REMOTE_TEXT_MAX, clean_remote, explain};
use crate::client::reasons::rmcp_errors::{
    insufficient_scope, is_auth_failure, is_pipe_dead, truncate,
};
use crate::client::session::task::{TaskEnd, task_end};
use crate::state::ToolCall;
use crate::util::Human;

/// How long a call whose pipe died waits for its session to say how it ended (a stdio child's
/// exit status follows its pipe's end within milliseconds).
const SESSION_END_GRACE: std::time::Duration = std::time::Duration::from_millis(300);

impl Supervisor {
    /// Routes one call: ensure a connection, call with the per-call timeout, and when the pipe
    /// died, reconnect once and (for idempotent calls only) retry once.
    pub(crate) async fn call(
        self: &Arc<Self>,
        call: ToolCall,
    ) -> Result<CallToolResult, CallError> {
        let name = call.name.clone();
        self.call_routed(call)
            .await
            .map_err(|error| error.for_tool(&name))
    }

    async fn call_routed(self: &Arc<Self>, call: ToolCall) -> Result<CallToolResult, CallError> {
        let mut params = CallToolRequestParams::new(call.name.tool().to_owned());
        params.arguments = call.arguments;
        params.meta = call.meta.map(|m| RequestMetaObject(m.into()));
        let (generation, session) = self.ensure_connected().await?;
        match self
            .call_once(generation, &session, params.clone(), false)
            .await
        {
            Err(e) if e.kind() == CallErrorKind::Transport && call.idempotent => {
                drop(session);
                tracing::debug!(server = %self.name, "pipe died mid-call; reconnecting and retrying once");
                let (generation, session) = self.ensure_connected().await?;
                self.call_once(generation, &session, params, false).await
            }
            // The server rejected the credentials on a live session (a stale streamable-HTTP
            // session answered 401 / 404): one fresh handshake with the same credentials decides.
            // A rejected request was not run, so it is retried whatever its idempotency.
            Err(e) if e.fresh_handshake_due => {
                drop(session);
                tracing::debug!(server = %self.name, "credentials rejected on the live session; one fresh handshake");
                let (generation, session) = self.ensure_connected().await?;
                self.call_once(generation, &session, params, true).await
            }
            other => other,
        }
    }

    /// The live session of `generation` had its credentials rejected. The first time (`fresh_tried`
    /// false) the session is dropped so one fresh handshake with the same credentials decides;
    /// after a fresh handshake the server is unauthenticated. Returns the call's error.
    pub(super) fn credentials_rejected(
        self: &Arc<Self>,
        generation: u64,
        during: &str,
        fresh_tried: bool,
    ) -> CallError {
        if fresh_tried {
            let why = format!(
                "server `{}` rejected the credentials during {during} (HTTP 401, or 403 with a \
                 challenge), also on a fresh session",
                self.name
            );
            let why = self.auth_lost(generation, why);
            return self.unauthenticated_error(Some(&why));
        }
        let why = format!(
            "the server rejected the credentials of the live session during {during}; the \
             session may be stale, so one fresh handshake with the same credentials decides"
        );
        self.session_retired(generation, &why);
        let mut error = self.unauthenticated_error(Some(&why));
        error.fresh_handshake_due = true;
        error
    }

    /// The server answered `403 insufficient_scope` during `during`, asking for `scope`: the
    /// credentials work but do not reach far enough, which no fresh handshake changes. The server
    /// is unauthenticated (action `reauthorize`) with a reason naming the scope and what to run;
    /// the connector remembers the scope for the next authorization before this returns.
    async fn scope_missing(&self, generation: u64, during: &str, scope: &str) -> CallError {
        let scope = truncate(self.shared.redact(scope), 200);
        let asked = if scope.is_empty() {
            "a scope it did not name".to_owned()
        } else {
            format!("scope `{scope}`")
        };
        let next = self
            .connector
            .step_up(&scope)
            .await
            .unwrap_or_else(|| "re-authorize it with that scope".to_owned());
        let why = format!(
            "server `{}` needs {asked} for {during} (HTTP 403 insufficient_scope); {next}",
            self.name
        );
        // Not `auth_lost`: what the connector knows is the same step-up, said once here.
        self.update(|machine| machine.auth_lost(generation, why.clone()));
        self.unauthenticated_error(Some(&why))
    }

    /// One call on the connection of `generation`, its failure classified.
    async fn call_once(
        self: &Arc<Self>,
        generation: u64,
        session: &Arc<dyn Session>,
        params: CallToolRequestParams,
        fresh_tried: bool,
    ) -> Result<CallToolResult, CallError> {
        // For the messages: the caller's name, escaped and cut.
        let tool = crate::secret::echo(&params.name).into_owned();
        let timeout = self.shared.options.call_timeout;
        let outcome = tokio::time::timeout(timeout, session.call_tool(params)).await;
        let error = match outcome {
            Ok(Ok(result)) => return Ok(result),
            Err(_elapsed) => {
                return Err(CallError::new(
                    &self.name,
                    CallErrorKind::Timeout,
                    format!(
                        "server `{}` did not answer `{tool}` within {}; the call was cancelled \
                         (raise the call timeout if the tool is slow)",
                        self.name,
                        Human(timeout)
                    ),
                ));
            }
            Ok(Err(error)) => error,
        };
        let detail = self.shared.redact(&explain(&error));
        if let Some(scope) = error.auth_challenge().and_then(insufficient_scope) {
            return Err(self
                .scope_missing(generation, &format!("`{tool}`"), &scope)
                .await);
        }
        if is_auth_failure(&error) {
            return Err(self.credentials_rejected(generation, &format!("`{tool}`"), fresh_tried));
        }
        match task_end(&error) {
            Some(TaskEnd::InputRequired) => {
                return Err(CallError::new(
                    &self.name,
                    CallErrorKind::InputRequired,
                    format!(
                        "server `{}` needs input for `{tool}` (elicitation or an input_required \
                         task) that an unattended run cannot give; run it interactively",
                        self.name
                    ),
                ));
            }
            Some(TaskEnd::Failed) => {
                let message = match &error {
                    ServiceError::McpError(data) => self.shared.redact(&data.message),
                    _ => String::new(),
                };
                return Err(CallError::new(
                    &self.name,
                    CallErrorKind::TaskFailed,
                    format!(
                        "server `{}` ran `{tool}` as a task and the task failed: {}",
                        self.name,
                        truncate(message, 300)
                    ),
                ));
            }
            None => {}
        }
        if is_pipe_dead(&error) {
            // The session knows how it ended (a child's exit status: "exited with status 3",
            // "killed by signal 9"); the call's own error only that the pipe closed.
            let detail = match tokio::time::timeout(SESSION_END_GRACE, session.closed()).await {
                Ok(how) => self.shared.redact(&how),
                Err(_) => detail,
            };
            // The supervisor ended it itself (an unanswered health ping): that is why, not the
            // signal that ended the child.
            let detail = match self.read(|machine| machine.ended_because(generation)) {
                Some(why) => format!("the hub closed it: {why}"),
                None => detail,
            };
            self.connection_lost(
                generation,
                &format!("the pipe died during `{tool}` ({detail})"),
            );
            // Shut down on purpose (`Hub::shutdown`, a removal): nothing reconnects.
            if self.read(|machine| matches!(machine.state, ConnState::Stopped)) {
                return Err(CallError::new(
                    &self.name,
                    CallErrorKind::Transport,
                    format!(
                        "the hub closed its connection to server `{}` during `{tool}` (it was \
                         shut down or removed); calls to it fail from now on",
                        self.name
                    ),
                ));
            }
            return Err(CallError::new(
                &self.name,
                CallErrorKind::Transport,
                format!(
                    "connection to server `{}` died during `{tool}` ({detail}); it reconnects at \
                     the next call (only idempotent calls are retried)",
                    self.name
                ),
            )
            .reconnecting());
        }
        match error {
            ServiceError::Timeout { .. } => Err(CallError::new(
                &self.name,
                CallErrorKind::Timeout,
                format!(
                    "server `{}` did not answer `{tool}` in time ({detail})",
                    self.name
                ),
            )),
            ServiceError::McpError(mut data) => {
                // The server's own words: redacted, cut and with control characters gone, as
                // every remote text in a reason (its `data` is dropped).
                data.message =
                    clean_remote(&self.shared.redact(&data.message), REMOTE_TEXT_MAX).into();
                data.data = None;
                Err(CallError::new(
                    &self.name,
                    CallErrorKind::Protocol,
                    format!(
                        "server `{}` answered `{tool}` with JSON-RPC error {}: {}",
                        self.name, data.code.0, data.message
                    ),
                )
                .with_json_rpc(data))
            }
            _ => Err(CallError::new(
                &self.name,
                CallErrorKind::Protocol,
                format!(
                    "server `{}` answered `{tool}` with something unexpected ({detail})",
                    self.name
                ),
            )),
        }
    }
}
