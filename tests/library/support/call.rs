//! One tool call through a tower service, and the layer's refusal it may end in.

use mcp_readiness::{NotReady, ToolCall};
use tower::{BoxError, Service, ServiceExt};

/// Sends `tool` through a clone of `service`.
pub async fn call<S>(
    service: &S,
    tool: impl Into<mcp_readiness::ToolName>,
) -> Result<S::Response, S::Error>
where
    S: Service<ToolCall> + Clone,
{
    service.clone().oneshot(ToolCall::new(tool)).await
}

/// Sends `tool` through a clone of `service` and returns the layer's refusal (panics on anything
/// else).
pub async fn refusal<S>(service: &S, tool: &str) -> NotReady
where
    S: Service<ToolCall, Error = BoxError> + Clone,
{
    let Err(error) = call(service, tool).await else {
        panic!("`{tool}` went through");
    };
    match error.downcast_ref::<NotReady>() {
        Some(not_ready) => not_ready.clone(),
        None => panic!("`{tool}` failed, not refused: {error}"),
    }
}
