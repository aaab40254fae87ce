//! How a call ended, from what the inner service returned.

use std::borrow::Cow;

use rmcp::model::CallToolResult;
use tower::BoxError;

use super::NotReady;
use crate::metrics::CallOutcome;

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
    if let Some(classified) = crate::supervise::classify_call_error(error) {
        return classified;
    }
    Classified {
        outcome: CallOutcome::TransportError,
        error_type: Some(Cow::Borrowed("transport_error")),
    }
}
