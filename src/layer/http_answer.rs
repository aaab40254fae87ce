//! A failed call as an HTTP answer (feature `http`): [`NotReady`], [`CallFailure`] and
//! [`HttpFailure`] (the layer's `tower::BoxError`, owned) implement axum's `IntoResponse`, so a
//! handler maps any failure of a tool call in one line.
//!
//! | the failure | status | `Retry-After` |
//! |---|---|---|
//! | not ready: `connecting` | 503 Service Unavailable | yes: when the server said (`Retry-After` it sent) or the hub's next attempt is due ([`NotReady::retry_after`]), else [`CONNECTING_RETRY_AFTER`] |
//! | not ready: `unauthenticated` or `absent` | 503 Service Unavailable | no: it does not heal by itself |
//! | the call timed out | 504 Gateway Timeout | no |
//! | anything else (a tool error, a connection that died during the call, a JSON-RPC error) | 502 Bad Gateway | no: the tool may have run |
//!
//! The body is one JSON object: `{"state", "action", "reason", "server", "tool", "outcome"}`;
//! `state` and `action` are `null` when the failure shows no readiness state (a timeout of a
//! live server), `reason` is the error's own words (secrets redacted, as in every error this
//! crate builds), `server` and `tool` are there when known.

use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower::BoxError;

use super::NotReady;
use super::failure::CallFailure;
use crate::client::{CallErrorKind, NotConnected};
use crate::state::{CallOutcome, State};

/// The `Retry-After` of a `connecting` answer when nothing more precise is known: a server that
/// is connecting usually is ready within seconds.
pub const CONNECTING_RETRY_AFTER: Duration = Duration::from_secs(5);

/// The layer's error, owned, as an HTTP answer: `tools.oneshot(call).await.map_err(HttpFailure)?`
/// in an axum handler that returns `Result<_, HttpFailure>`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use axum::response::IntoResponse;
/// use mcp_readiness::layer::HttpFailure;
/// use mcp_readiness::{ReadinessLayer, Snapshot, StaticInventory, ToolCall};
/// use rmcp::model::CallToolResult;
/// use tower::{ServiceBuilder, ServiceExt};
///
/// let servers = StaticInventory::new(Snapshot::default().with_unauthenticated_server("github"));
/// let tools = ServiceBuilder::new()
///     .layer(ReadinessLayer::new(servers))
///     .service(tower::service_fn(|_: ToolCall| async {
///         Ok::<_, tower::BoxError>(CallToolResult::success(vec![]))
///     }));
/// // In a handler: `let result = tools.oneshot(call).await.map_err(HttpFailure)?;`
/// let error = tools.oneshot(ToolCall::new("mcp__github__search")).await.unwrap_err();
/// let answer = HttpFailure(error).into_response();
/// assert_eq!(answer.status(), 503);
/// assert!(answer.headers().get("retry-after").is_none()); // a human must re-authorize
/// # }
/// ```
#[derive(Debug)]
pub struct HttpFailure(pub BoxError);

impl From<BoxError> for HttpFailure {
    fn from(error: BoxError) -> Self {
        HttpFailure(error)
    }
}

impl std::fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl IntoResponse for HttpFailure {
    fn into_response(self) -> Response {
        CallFailure::of(&self.0).into_response()
    }
}

impl IntoResponse for NotReady {
    fn into_response(self) -> Response {
        let retry_after = (self.state() == State::Connecting)
            .then(|| self.retry_after().unwrap_or(CONNECTING_RETRY_AFTER));
        answer(
            StatusCode::SERVICE_UNAVAILABLE,
            retry_after,
            Body {
                state: Some(self.state()),
                reason: self.to_string(),
                server: Some(self.server()),
                tool: Some(self.tool().as_str()),
                outcome: CallOutcome::NotReady,
            },
        )
    }
}

impl IntoResponse for CallFailure<'_> {
    fn into_response(self) -> Response {
        if let Some(not_ready) = self.not_ready() {
            return not_ready.clone().into_response();
        }
        let call_error = self.call_error();
        let state = self.state();
        let outcome = self.outcome();
        // A connection that died during the call failed this call, whatever the server reads
        // now: the tool may have run, so it is not an invitation to retry.
        let died = call_error.is_some_and(|e| e.kind() == CallErrorKind::Transport);
        let status = match (state, outcome) {
            _ if died => StatusCode::BAD_GATEWAY,
            (Some(_), _) => StatusCode::SERVICE_UNAVAILABLE,
            (None, CallOutcome::Timeout) => StatusCode::GATEWAY_TIMEOUT,
            (None, _) => StatusCode::BAD_GATEWAY,
        };
        let retry_after = match call_error.map(|e| e.kind()) {
            _ if died => None,
            Some(CallErrorKind::NotConnected(NotConnected::Throttled { left })) => Some(left),
            _ if state == Some(State::Connecting) => Some(CONNECTING_RETRY_AFTER),
            _ => None,
        };
        answer(
            status,
            retry_after,
            Body {
                state,
                reason: self.to_string(),
                server: call_error.map(|e| e.server()),
                tool: call_error.and_then(|e| e.tool()),
                outcome,
            },
        )
    }
}

struct Body<'a> {
    state: Option<State>,
    reason: String,
    server: Option<&'a str>,
    tool: Option<&'a str>,
    outcome: CallOutcome,
}

fn answer(status: StatusCode, retry_after: Option<Duration>, body: Body<'_>) -> Response {
    let json = serde_json::json!({
        "state": body.state.map(State::as_str),
        "action": body.state.and_then(State::action).map(|a| a.as_str()),
        "reason": body.reason,
        "server": body.server,
        "tool": body.tool,
        "outcome": body.outcome.as_str(),
    });
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        json.to_string(),
    )
        .into_response();
    if let Some(after) = retry_after {
        // Whole seconds, rounded up (RFC 9110 §10.2.3), at least 1.
        let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
    }
    response
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::response::IntoResponse;
    use rmcp::model::CallToolResult;
    use tower::{ServiceBuilder, ServiceExt};

    use super::HttpFailure;
    use crate::client::{CallError, CallErrorKind, NotConnected};
    use crate::layer::readiness_layer::ReadinessLayer;
    use crate::resolve::inventory::StaticInventory;
    use crate::resolve::{Budget, Snapshot};
    use crate::state::ToolCall;

    async fn refused(snapshot: Snapshot, tool: &str) -> tower::BoxError {
        let budget = Budget::try_new(Duration::from_secs(3), Duration::from_secs(1)).unwrap();
        let tools = ServiceBuilder::new()
            .layer(
                ReadinessLayer::builder(StaticInventory::new(snapshot))
                    .budget(budget)
                    .build(),
            )
            .service(tower::service_fn(|_: ToolCall| async {
                Ok::<_, tower::BoxError>(CallToolResult::success(vec![]))
            }));
        tools.oneshot(ToolCall::new(tool)).await.unwrap_err()
    }

    async fn body(response: axum::response::Response) -> serde_json::Value {
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_connecting_server_is_503_with_retry_after_and_says_state_action_and_reason() {
        let error = refused(
            Snapshot::default().with_pending_server("slow"),
            "mcp__slow__read",
        )
        .await;
        let response = HttpFailure(error).into_response();
        assert_eq!(response.status(), 503);
        assert_eq!(response.headers()["retry-after"], "5");
        assert_eq!(response.headers()["content-type"], "application/json");
        let json = body(response).await;
        assert_eq!(json["state"], "connecting");
        assert_eq!(json["action"], "extend_wait_budget");
        assert_eq!(json["server"], "slow");
        assert_eq!(json["tool"], "mcp__slow__read");
        assert_eq!(json["outcome"], "not_ready");
        assert!(
            json["reason"]
                .as_str()
                .unwrap()
                .contains("still connecting"),
            "{json}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_unauthenticated_or_absent_server_is_503_without_retry_after() {
        for (snapshot, tool, state, action) in [
            (
                Snapshot::default().with_unauthenticated_server("github"),
                "mcp__github__search",
                "unauthenticated",
                "reauthorize",
            ),
            (
                Snapshot::default(),
                "mcp__gone__read",
                "absent",
                "add_connection",
            ),
        ] {
            let error = refused(snapshot, tool).await;
            let response = HttpFailure::from(error).into_response();
            assert_eq!(response.status(), 503, "{tool}");
            assert!(response.headers().get("retry-after").is_none(), "{tool}");
            let json = body(response).await;
            assert_eq!(
                (json["state"].as_str(), json["action"].as_str()),
                (Some(state), Some(action))
            );
        }
    }

    #[tokio::test]
    async fn the_hubs_errors_map_too_a_throttled_server_with_the_time_it_asked_for() {
        let throttled: tower::BoxError = Box::new(CallError::new(
            &"api".into(),
            CallErrorKind::NotConnected(NotConnected::Throttled {
                left: Duration::from_millis(2_500),
            }),
            "server `api` asked to come back later".into(),
        ));
        let response = HttpFailure(throttled).into_response();
        assert_eq!(response.status(), 503);
        assert_eq!(response.headers()["retry-after"], "3");
        let json = body(response).await;
        assert_eq!(json["state"], "connecting");
        assert_eq!(json["server"], "api");

        let timeout: tower::BoxError = Box::new(tower::timeout::error::Elapsed::new());
        let response = HttpFailure(timeout).into_response();
        assert_eq!(response.status(), 504);
        let json = body(response).await;
        assert!(
            json["state"].is_null() && json["action"].is_null(),
            "{json}"
        );
    }
}
