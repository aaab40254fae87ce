//! Tool calls that come back as a task (MCP 2026-07-28, SEP-2663) or as `input_required`.
//!
//! A `tools/call` answered with a task is followed to its end with `tasks/get`, at the server's
//! suggested poll interval (bounded), inside the call timeout the supervisor applies around the
//! whole call: the caller sees the task's final `CallToolResult` as if the call had answered it
//! directly. A task that fails or is cancelled ends the call with outcome `task_failed`; a task
//! (or an MRTR result) that needs input an unattended run cannot give is cancelled and ends the
//! call with outcome `input_required`. With a [`ServerRequests`](crate::client::ServerRequests) hook that
//! answers, an MRTR `input_required` result (SEP-2322) is answered through it and the call is
//! sent again, with the answers and the server's `requestState` echoed unchanged, under a new
//! request id, at most [`MAX_INPUT_ROUNDS`] times. A call whose timeout ends first is `timeout`, and the task
//! is cancelled (best effort).

use std::time::Duration;

use futures::future::BoxFuture;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelTaskParams,
    CancelledNotificationParam, ClientRequest, CreateTaskResult, ErrorCode, GetTaskParams,
    InputRequest, InputRequests, InputResponses, RequestId, ServerResult, TaskPayload,
};
use rmcp::service::{PeerRequestOptions, RoleClient};
use rmcp::{ErrorData, Peer, ServiceError};

use crate::client::session::handler::Answerer;
use crate::client::session::server_requests::MAX_INPUT_ROUNDS;

/// The `data` key that marks a JSON-RPC error as "the task failed" (see [`task_failed`]).
const TASK_MARK: &str = "io.github.mcp-readiness/task";

/// The poll interval when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// The shortest poll interval honoured (a server asking for less gets this).
const MIN_POLL: Duration = Duration::from_millis(20);
/// The longest poll interval honoured.
const MAX_POLL: Duration = Duration::from_secs(5);

/// How a task-shaped call ended without a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskEnd {
    /// The task failed or was cancelled.
    Failed,
    /// The server needs input an unattended run cannot give.
    InputRequired,
}

/// The error a [`Session`](crate::client::Session) returns for a call whose task failed (or was
/// cancelled): the task's JSON-RPC error, marked so the call's outcome is `task_failed`.
/// Custom sessions that follow tasks themselves can use it too.
pub fn task_failed(mut error: ErrorData) -> ServiceError {
    error.data = Some(serde_json::json!({ TASK_MARK: "failed" }));
    ServiceError::McpError(error)
}

/// The error a [`Session`](crate::client::Session) returns for a call that needs input (elicitation,
/// sampling, an `input_required` task or result) an unattended run cannot give: the call's outcome
/// is `input_required`.
pub fn input_required() -> ServiceError {
    ServiceError::InputRequiredRoundsExceeded { max_rounds: 0 }
}

/// Whether `error` is one of the two task ends above.
pub(crate) fn task_end(error: &ServiceError) -> Option<TaskEnd> {
    match error {
        ServiceError::InputRequiredRoundsExceeded { .. } => Some(TaskEnd::InputRequired),
        ServiceError::McpError(data)
            if data.data.as_ref().and_then(|d| d.get(TASK_MARK)).is_some() =>
        {
            Some(TaskEnd::Failed)
        }
        _ => None,
    }
}

fn poll_interval(ms: Option<u64>) -> Duration {
    ms.map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

/// Until disarmed, spawns `tell(peer, what)` when dropped: the caller stopped waiting (its
/// timeout ended) before the server answered. Best effort.
struct TellOnDrop<'a, T: Send + 'static> {
    peer: &'a Peer<RoleClient>,
    what: Option<T>,
    tell: fn(Peer<RoleClient>, T) -> BoxFuture<'static, ()>,
}

impl<T: Send + 'static> TellOnDrop<'_, T> {
    /// The server answered: nothing to tell.
    fn disarm(&mut self) {
        self.what = None;
    }
}

impl<T: Send + 'static> Drop for TellOnDrop<'_, T> {
    fn drop(&mut self) {
        if let Some(what) = self.what.take() {
            tokio::spawn((self.tell)(self.peer.clone(), what));
        }
    }
}

/// Cancels the task the call was dropped before.
fn cancel_task(peer: Peer<RoleClient>, task_id: String) -> BoxFuture<'static, ()> {
    Box::pin(async move {
        let _ = peer.cancel_task(CancelTaskParams::new(task_id)).await;
    })
}

/// Sends `notifications/cancelled` for a request whose caller stopped waiting.
fn abandon_request(peer: Peer<RoleClient>, id: RequestId) -> BoxFuture<'static, ()> {
    Box::pin(async move {
        let params = CancelledNotificationParam::new(
            Some(id),
            Some("request abandoned by the caller".into()),
        );
        let _ = peer.notify_cancelled(params).await;
    })
}

/// Sends one `tools/call` and records its JSON-RPC id on the current span
/// (`jsonrpc.request.id`, OpenTelemetry MCP conventions).
async fn send_call(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
) -> Result<ServerResult, ServiceError> {
    let handle = peer
        .send_request_with_option(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await?;
    tracing::Span::current().record("jsonrpc.request.id", handle.id.to_string());
    let mut guard = TellOnDrop {
        peer,
        what: Some(handle.id.clone()),
        tell: abandon_request,
    };
    let result = handle.await_response().await;
    guard.disarm();
    result
}

/// A retry after an `input_required` result that asked nothing (only `requestState`: the server
/// sheds load) waits this much times the number of such rounds so far.
const STATE_ONLY_BACKOFF: Duration = Duration::from_millis(100);

/// The answers to `requests` from `answerer`, or `None` when one of them is not an elicitation
/// (sampling and roots have no hook yet: the call ends `input_required`).
async fn answer(answerer: &Answerer, requests: InputRequests) -> Option<InputResponses> {
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let InputRequest::Elicitation(request) = request else {
            return None;
        };
        let result = answerer
            .requests
            .elicit(&answerer.server, request.params)
            .await;
        responses.insert(key, serde_json::to_value(result).ok()?);
    }
    Some(responses)
}

/// One `tools/call`, with a task followed to its end, and an `input_required` result answered
/// through `answerer` (or, without one, refused).
pub(crate) async fn call_tool(
    peer: &Peer<RoleClient>,
    mut params: CallToolRequestParams,
    answerer: Option<&Answerer>,
) -> Result<CallToolResult, ServiceError> {
    let mut rounds = 0;
    let mut state_only_rounds = 0u32;
    let created: CreateTaskResult = loop {
        match send_call(peer, params.clone()).await? {
            ServerResult::CallToolResult(result) => return Ok(result),
            ServerResult::InputRequiredResult(asked) => {
                let Some(answerer) = answerer else {
                    return Err(input_required());
                };
                rounds += 1;
                if rounds >= MAX_INPUT_ROUNDS {
                    return Err(input_required());
                }
                let requests = asked.input_requests.unwrap_or_default();
                if requests.is_empty() {
                    if asked.request_state.is_none() {
                        return Err(ServiceError::UnexpectedResponse);
                    }
                    state_only_rounds += 1;
                    tokio::time::sleep(STATE_ONLY_BACKOFF * state_only_rounds).await;
                } else {
                    state_only_rounds = 0;
                }
                let Some(responses) = answer(answerer, requests).await else {
                    return Err(input_required());
                };
                // The retry carries this round's answers and state only (none of an earlier
                // round's), and goes out under a new request id.
                params.input_responses = (!responses.is_empty()).then_some(responses);
                params.request_state = asked.request_state;
            }
            ServerResult::CreateTaskResult(created) => break created,
            // A tool with nothing to say may answer `{}`.
            ServerResult::EmptyResult(_) => return Ok(CallToolResult::success(Vec::new())),
            _ => return Err(ServiceError::UnexpectedResponse),
        }
    };
    let task_id = created.task.task_id.clone();
    let mut guard = TellOnDrop {
        peer,
        what: Some(task_id.clone()),
        tell: cancel_task,
    };
    let mut wait = poll_interval(created.task.poll_interval_ms);
    loop {
        tokio::time::sleep(wait).await;
        let got = peer.get_task(GetTaskParams::new(task_id.clone())).await?;
        wait = poll_interval(got.task.task.poll_interval_ms);
        match got.task.payload {
            TaskPayload::Working => continue,
            TaskPayload::InputRequired { .. } => break Err(input_required()),
            TaskPayload::Completed { result } => {
                guard.disarm();
                break serde_json::from_value::<CallToolResult>(serde_json::Value::Object(result))
                    .map_err(|_| ServiceError::UnexpectedResponse);
            }
            TaskPayload::Failed { error } => {
                guard.disarm();
                let code = error
                    .get("code")
                    .and_then(serde_json::Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok())
                    .map_or(ErrorCode::INTERNAL_ERROR, ErrorCode);
                let message = error
                    .get("message")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("the task failed")
                    .to_owned();
                break Err(task_failed(ErrorData::new(code, message, None)));
            }
            TaskPayload::Cancelled => {
                guard.disarm();
                let message = got
                    .task
                    .task
                    .status_message
                    .unwrap_or_else(|| "the task was cancelled by the server".into());
                break Err(task_failed(ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    message,
                    None,
                )));
            }
            _ => break Err(ServiceError::UnexpectedResponse),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::client::session::task::*;

    #[test]
    fn the_two_task_ends_are_recognised_and_an_ordinary_json_rpc_error_is_not() {
        assert_eq!(task_end(&input_required()), Some(TaskEnd::InputRequired));
        let failed = task_failed(ErrorData::internal_error("boom", None));
        assert_eq!(task_end(&failed), Some(TaskEnd::Failed));
        let plain = ServiceError::McpError(ErrorData::internal_error("boom", None));
        assert_eq!(task_end(&plain), None);
    }

    #[test]
    fn poll_intervals_are_bounded() {
        assert_eq!(poll_interval(None), DEFAULT_POLL);
        assert_eq!(poll_interval(Some(0)), MIN_POLL);
        assert_eq!(poll_interval(Some(3_600_000)), MAX_POLL);
        assert_eq!(poll_interval(Some(100)), Duration::from_millis(100));
    }
}
