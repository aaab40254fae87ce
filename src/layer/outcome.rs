//! How a call ended, from what the inner service returned.

use std::borrow::Cow;

use rmcp::model::CallToolResult;
use tower::BoxError;

use super::NotReady;
use crate::metrics::CallOutcome;
use crate::resolve::{Scope, not_ready_error_type};
use crate::supervise::{CallError, CallErrorKind};

/// A classified outcome: the metric label and, when it failed, the span's `error.type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Classified {
    pub(crate) outcome: CallOutcome,
    pub(crate) error_type: Option<Cow<'static, str>>,
}

pub(crate) fn classify_result(result: &Result<CallToolResult, BoxError>) -> Classified {
    match result {
        Ok(result) if result.is_error == Some(true) => Classified {
            outcome: CallOutcome::ToolError,
            error_type: Some(Cow::Borrowed("tool_error")),
        },
        Ok(_) => Classified {
            outcome: CallOutcome::Ok,
            error_type: None,
        },
        Err(error) => classify_error(error.as_ref()),
    }
}

pub(crate) fn classify_error(
    error: &(dyn std::error::Error + Send + Sync + 'static),
) -> Classified {
    if let Some(not_ready) = error.downcast_ref::<NotReady>() {
        return Classified {
            outcome: CallOutcome::NotReady,
            error_type: Some(Cow::Borrowed(not_ready.error_type())),
        };
    }
    if error.is::<tower::timeout::error::Elapsed>() || error.is::<tokio::time::error::Elapsed>() {
        return Classified {
            outcome: CallOutcome::Timeout,
            error_type: Some(Cow::Borrowed("timeout")),
        };
    }
    if let Some(error) = error.downcast_ref::<CallError>() {
        return classify_hub_error(error);
    }
    Classified {
        outcome: CallOutcome::TransportError,
        error_type: Some(Cow::Borrowed("transport_error")),
    }
}

/// The Hub's errors: a server it could not connect is `not_ready` (the state changed after the
/// cache said ready); a JSON-RPC error is the tool's answer (`tool_error`, `error.type` = its code).
fn classify_hub_error(error: &CallError) -> Classified {
    let (outcome, error_type): (CallOutcome, Cow<'static, str>) = match error.kind() {
        CallErrorKind::NotConnected(not_connected) => (
            CallOutcome::NotReady,
            not_ready_error_type(not_connected.state(), Scope::Server)
                .unwrap_or("server_absent")
                .into(),
        ),
        CallErrorKind::Transport => (CallOutcome::TransportError, "transport_error".into()),
        CallErrorKind::Timeout => (CallOutcome::Timeout, "timeout".into()),
        CallErrorKind::Protocol => match error.json_rpc_error() {
            Some(json_rpc) => (CallOutcome::ToolError, json_rpc.code.0.to_string().into()),
            None => (CallOutcome::TransportError, "protocol_error".into()),
        },
    };
    Classified {
        outcome,
        error_type: Some(error_type),
    }
}
