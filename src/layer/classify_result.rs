//! How a call through the layer ended ([`CallOutcome`] and the span's `error.type`), from what
//! the inner service returned.

use std::borrow::Cow;

use rmcp::model::CallToolResult;
use tower::BoxError;

use super::NotReady;
use crate::state::CallOutcome;
#[cfg(feature = "hub")]
use crate::supervise::CallError;

/// A classified outcome: the metric label and, when it failed, the span's `error.type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassifiedCall {
    pub(crate) outcome: CallOutcome,
    pub(crate) error_type: Option<Cow<'static, str>>,
}

pub(crate) fn classify_result(result: &Result<CallToolResult, BoxError>) -> ClassifiedCall {
    match result {
        Ok(result) if result.is_error == Some(true) => ClassifiedCall {
            outcome: CallOutcome::ToolError,
            error_type: Some(Cow::Borrowed("tool_error")),
        },
        Ok(_) => ClassifiedCall {
            outcome: CallOutcome::Ok,
            error_type: None,
        },
        Err(error) => classify_error(error.as_ref()),
    }
}

pub(crate) fn classify_error(
    error: &(dyn std::error::Error + Send + Sync + 'static),
) -> ClassifiedCall {
    if let Some(not_ready) = error.downcast_ref::<NotReady>() {
        return ClassifiedCall {
            outcome: CallOutcome::NotReady,
            error_type: Some(Cow::Borrowed(not_ready.error_type())),
        };
    }
    if error.is::<tower::timeout::error::Elapsed>() || error.is::<tokio::time::error::Elapsed>() {
        return ClassifiedCall {
            outcome: CallOutcome::Timeout,
            error_type: Some(Cow::Borrowed("timeout")),
        };
    }
    #[cfg(feature = "hub")]
    if let Some(error) = error.downcast_ref::<CallError>() {
        // The hub's errors carry their own mapping.
        return ClassifiedCall {
            outcome: error.outcome(),
            error_type: Some(error.error_type()),
        };
    }
    ClassifiedCall {
        outcome: CallOutcome::TransportError,
        error_type: Some(Cow::Borrowed("transport_error")),
    }
}
