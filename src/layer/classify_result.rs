//! How a call through the layer ended ([`CallOutcome`] and the span's `error.type`), from what
//! the inner service returned.

use std::borrow::Cow;

use rmcp::model::CallToolResult;
use tower::BoxError;

use super::NotReady;
use crate::client::CallError;
use crate::state::CallOutcome;

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
/// the hub's and `Peers`' [`CallError`](crate::client::CallError) carry their own mapping; rmcp's
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
    if let Some(error) = error.downcast_ref::<rmcp::ServiceError>() {
        return Some(classify_service_error(error));
    }
    None
}

/// rmcp's `ServiceError` from an inner service that is not the hub, with the hub's rules (the
/// `client` room's, built in every build).
fn classify_service_error(error: &rmcp::ServiceError) -> ClassifiedCall {
    use crate::client::classify_service_error as hub_rules;
    let (outcome, error_type) = hub_rules(error);
    ClassifiedCall {
        outcome,
        error_type: Some(error_type),
        stale_ready: matches!(outcome, CallOutcome::TransportError | CallOutcome::NotReady),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::{ErrorData, ServiceError};

    use super::*;
    use crate::client::CallErrorKind;

    fn classified(error: impl std::error::Error + Send + Sync + 'static) -> ClassifiedCall {
        classify_error(&error)
    }

    /// The client's rules are built in every build (`cargo test --lib --no-default-features`
    /// runs this too): an rmcp error is classified by what it says, never by the features the
    /// crate was built with.
    #[test]
    fn an_rmcp_error_is_classified_by_what_it_says_with_or_without_the_hub() {
        let answer = classified(ServiceError::McpError(ErrorData::invalid_params(
            "no such account",
            None,
        )));
        assert_eq!(answer.outcome, CallOutcome::ToolError);
        assert_eq!(answer.error_type.as_deref(), Some("-32602"));
        assert!(!answer.stale_ready, "an answer says the connection is live");

        let dead = classified(ServiceError::TransportClosed);
        assert_eq!(dead.outcome, CallOutcome::TransportError);
        assert_eq!(dead.error_type.as_deref(), Some("transport_error"));
        assert!(dead.stale_ready);

        let slow = classified(ServiceError::Timeout {
            timeout: std::time::Duration::from_secs(1),
        });
        assert_eq!(slow.outcome, CallOutcome::Timeout);

        let server: Arc<str> = "files".into();
        let hub_answer = CallError::new(&server, CallErrorKind::Protocol, "refused".into())
            .with_json_rpc(ErrorData::invalid_params("no such account", None));
        let hub_answer = classified(hub_answer);
        assert_eq!(hub_answer.outcome, CallOutcome::ToolError);
        assert_eq!(hub_answer.error_type.as_deref(), Some("-32602"));
    }
}
