//! [`CallFailure`]: one look at a failed call through the layer, whatever failed it.

use std::borrow::Cow;
use std::fmt;

use tower::BoxError;

use super::NotReady;
use super::classify_result::classify_error;
use crate::client::CallError;
use crate::state::{Action, CallOutcome, State};

/// A failed call through the readiness layer, seen once: the layer's error is a
/// `tower::BoxError` that may be the layer's own refusal ([`NotReady`]), the hub's or `Peers`'
/// [`CallError`](crate::client::CallError), rmcp's `ServiceError`, a timeout, or anything your inner
/// service returned. [`CallFailure::of`] does every downcast; its accessors answer what a caller
/// decides on.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use mcp_readiness::CallFailure;
/// use mcp_readiness::state::CallOutcome;
/// use mcp_readiness::{Action, ReadinessLayer, Snapshot, State, StaticInventory, ToolCall};
/// use rmcp::model::CallToolResult;
/// use tower::{ServiceBuilder, ServiceExt};
///
/// let servers = StaticInventory::new(Snapshot::default().with_unauthenticated_server("github"));
/// let tools = ServiceBuilder::new()
///     .layer(ReadinessLayer::new(servers))
///     .service(tower::service_fn(|_: ToolCall| async {
///         Ok::<_, tower::BoxError>(CallToolResult::success(vec![]))
///     }));
/// let error = tools.oneshot(ToolCall::new("mcp__github__search")).await.unwrap_err();
///
/// let failure = CallFailure::of(&error);
/// assert_eq!(failure.outcome(), CallOutcome::NotReady);
/// assert_eq!(failure.state(), Some(State::Unauthenticated));
/// assert_eq!(failure.action(), Some(Action::Reauthorize));
/// assert!(failure.not_ready().is_some()); // refused before the server was called
/// # }
/// ```
#[derive(Clone, Copy)]
pub struct CallFailure<'a> {
    error: &'a (dyn std::error::Error + Send + Sync + 'static),
}

impl<'a> CallFailure<'a> {
    /// A view of `error`, as returned by the layer.
    pub fn of(error: &'a BoxError) -> Self {
        CallFailure {
            error: error.as_ref(),
        }
    }

    /// How the call ended: `not_ready`, `tool_error`, `transport_error`, `timeout` or
    /// `cancelled` (the `outcome` label the layer recorded).
    pub fn outcome(&self) -> CallOutcome {
        classify_error(self.error).outcome
    }

    /// The span's `error.type` for it (`server_unauthenticated`, `server_absent`,
    /// `tool_absent`, `resolve_timeout`, `transport_error`, `timeout`, a JSON-RPC code, ...).
    pub fn error_type(&self) -> Cow<'static, str> {
        classify_error(self.error)
            .error_type
            .unwrap_or(Cow::Borrowed("transport_error"))
    }

    /// The layer's refusal, when the tool was not ready and the server was not called.
    pub fn not_ready(&self) -> Option<&'a NotReady> {
        self.error.downcast_ref::<NotReady>()
    }

    /// The hub's (or `Peers`') error, when the inner service failed the call.
    pub fn call_error(&self) -> Option<&'a CallError> {
        let root: &'a (dyn std::error::Error + 'static) = self.error;
        std::iter::successors(Some(root), |e| e.source())
            .find_map(|e| e.downcast_ref::<CallError>())
    }

    /// The server's readiness state the failure shows, when it shows one: the refusal's state,
    /// or what the inner service found (`unauthenticated` after a 401/403, `absent` after a
    /// dead pipe). `None` for an answer or a timeout of a live server.
    pub fn state(&self) -> Option<State> {
        if let Some(not_ready) = self.not_ready() {
            return Some(not_ready.state);
        }
        if let Some(error) = self.call_error() {
            return Some(error.state()).filter(|s| *s != State::Ready);
        }
        None
    }

    /// What a human has to do about it, when the failure shows a state that is not ready.
    pub fn action(&self) -> Option<Action> {
        self.state().and_then(State::action)
    }

    /// The error itself.
    pub fn error(&self) -> &'a (dyn std::error::Error + Send + Sync + 'static) {
        self.error
    }
}

impl fmt::Debug for CallFailure<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallFailure")
            .field("outcome", &self.outcome())
            .field("state", &self.state())
            .field("error", &self.error.to_string())
            .finish()
    }
}

impl fmt::Display for CallFailure<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.error, f)
    }
}
