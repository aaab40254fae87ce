//! How a call through the layer ended ([`CallOutcome`] and the span's `error.type`), from what
//! the inner service returned.

use std::borrow::Cow;

use rmcp::model::CallToolResult;
use tower::BoxError;

use super::NotReady;
use crate::state::CallOutcome;
#[cfg(feature = "hub")]
use crate::supervise::CallError;

/// A classified outcome: the metric label, when it failed the span's `error.type`, and whether
/// the failure says the tool's ready verdict is stale (the connection died, or the server turned
/// out not ready): then its ready cache entry is dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassifiedCall {
    pub(crate) outcome: CallOutcome,
    pub(crate) error_type: Option<Cow<'static, str>>,
    pub(crate) stale_ready: bool,
}

impl ClassifiedCall {
    fn new(outcome: CallOutcome, error_type: Option<Cow<'static, str>>) -> Self {
        let stale_ready = outcome == CallOutcome::TransportError;
        ClassifiedCall {
            outcome,
            error_type,
            stale_ready,
        }
    }
}

#[inline]
pub(crate) fn classify_result(result: &Result<CallToolResult, BoxError>) -> ClassifiedCall {
    match result {
        Ok(result) if result.is_error == Some(true) => {
            ClassifiedCall::new(CallOutcome::ToolError, Some(Cow::Borrowed("tool_error")))
        }
        Ok(_) => ClassifiedCall::new(CallOutcome::Ok, None),
        Err(error) => classify_error(error.as_ref()),
    }
}

/// Classifies what the layer itself refused ([`NotReady`]) or what the inner service failed
/// with, looking through the error's `source()` chain (an inner service may wrap its errors):
/// the hub's and `Peers`' [`CallError`](crate::supervise::CallError) carry their own mapping; rmcp's
/// `ServiceError` from any other inner service is mapped with the hub's rules (a JSON-RPC error
/// is the tool's answer, `tool_error`; a 401/403 is `not_ready`; a closed transport is
/// `transport_error`; rmcp's request timeout is `timeout`); timeouts of tower and tokio are
/// `timeout`; anything else is `transport_error`.
pub(crate) fn classify_error(
    error: &(dyn std::error::Error + Send + Sync + 'static),
) -> ClassifiedCall {
    if let Some(not_ready) = error.downcast_ref::<NotReady>() {
        // Refused by the layer before calling: nothing was learned about a ready entry.
        return ClassifiedCall {
            outcome: CallOutcome::NotReady,
            error_type: Some(Cow::Borrowed(not_ready.error_type())),
            stale_ready: false,
        };
    }
    let root: &(dyn std::error::Error + 'static) = error;
    let chain = std::iter::successors(Some(root), |e: &&(dyn std::error::Error + 'static)| {
        (*e).source()
    });
    for error in chain {
        if let Some(classified) = classify_one(error) {
            return classified;
        }
    }
    ClassifiedCall::new(
        CallOutcome::TransportError,
        Some(Cow::Borrowed("transport_error")),
    )
}

fn classify_one(error: &(dyn std::error::Error + 'static)) -> Option<ClassifiedCall> {
    if error.is::<tower::timeout::error::Elapsed>() || error.is::<tokio::time::error::Elapsed>() {
        return Some(ClassifiedCall::new(
            CallOutcome::Timeout,
            Some(Cow::Borrowed("timeout")),
        ));
    }
    #[cfg(feature = "hub")]
    if let Some(error) = error.downcast_ref::<CallError>() {
        // The hub's errors carry their own mapping; a server it could not reach after the cache
        // said ready makes that ready entry stale too.
        let outcome = error.outcome();
        return Some(ClassifiedCall {
            outcome,
            error_type: Some(error.error_type()),
            stale_ready: matches!(outcome, CallOutcome::TransportError | CallOutcome::NotReady),
        });
    }
    #[cfg(feature = "hub")]
    if let Some(error) = error.downcast_ref::<rmcp::ServiceError>() {
        return Some(classify_service_error(error));
    }
    None
}

/// rmcp's `ServiceError` from an inner service that is not the hub, with the hub's rules.
#[cfg(feature = "hub")]
fn classify_service_error(error: &rmcp::ServiceError) -> ClassifiedCall {
    use crate::supervise::classify_service_error as hub_rules;
    let (outcome, error_type) = hub_rules(error);
    ClassifiedCall {
        outcome,
        error_type: Some(error_type),
        stale_ready: matches!(outcome, CallOutcome::TransportError | CallOutcome::NotReady),
    }
}
