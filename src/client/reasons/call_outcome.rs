//! How an rmcp `ServiceError` ends a call through the readiness layer when the inner service is
//! not the hub (a service's own `Peer`): the hub's rules, from `connectors/rmcp_errors.rs`.

use std::borrow::Cow;

use rmcp::ServiceError;

use crate::client::reasons::rmcp_errors::{is_auth_failure, is_pipe_dead};
use crate::state::CallOutcome;

/// The call outcome and the span's `error.type` for `error`: a 401/403 is `not_ready`
/// (`server_unauthenticated`), a dead pipe `transport_error`, a JSON-RPC error the tool's answer
/// (`tool_error`, with the JSON-RPC code as `error.type`, as the hub reports it), rmcp's request
/// timeout `timeout`, a cancelled request `cancelled`, anything else `transport_error`
/// (`protocol_error`: the answer was not what MCP says).
pub(crate) fn classify_service_error(error: &ServiceError) -> (CallOutcome, Cow<'static, str>) {
    if is_auth_failure(error) {
        return (CallOutcome::NotReady, "server_unauthenticated".into());
    }
    if is_pipe_dead(error) {
        return (CallOutcome::TransportError, "transport_error".into());
    }
    match error {
        ServiceError::McpError(data) => (CallOutcome::ToolError, data.code.0.to_string().into()),
        ServiceError::Timeout { .. } => (CallOutcome::Timeout, "timeout".into()),
        ServiceError::Cancelled { .. } => (CallOutcome::Cancelled, "cancelled".into()),
        _ => (CallOutcome::TransportError, "protocol_error".into()),
    }
}

#[cfg(test)]
mod tests {
    use crate::client::reasons::call_outcome::*;
    use rmcp::ErrorData;

    #[test]
    fn a_json_rpc_error_is_a_tool_error_and_a_closed_transport_a_transport_error() {
        let json_rpc = ServiceError::McpError(ErrorData::invalid_params("no such account", None));
        assert_eq!(
            classify_service_error(&json_rpc),
            (CallOutcome::ToolError, "-32602".into())
        );
        assert_eq!(
            classify_service_error(&ServiceError::TransportClosed),
            (CallOutcome::TransportError, "transport_error".into())
        );
        assert_eq!(
            classify_service_error(&ServiceError::Timeout {
                timeout: std::time::Duration::from_secs(1)
            }),
            (CallOutcome::Timeout, "timeout".into())
        );
    }
}
