//! One step called through a service (usually `ReadinessLayer` over a `Hub`), and the verdict its
//! result or failure implies.

use std::sync::Arc;

use rmcp::model::CallToolResult;
use tower::{BoxError, Service, ServiceExt};
use tracing::Instrument;

use super::spans::{record_step, step_span};
use super::{Step, StepOutcome};
use crate::client::CallError;
use crate::layer::NotReady;
use crate::resolve::{Scope, Verdict};
use crate::state::{State, ToolCall};

/// Calls `call` (for `step`'s tool) through `service` and decides from what came back, inside a
/// `step {id}` span.
///
/// - The call returned a result: the step ran ([`Decision::Run`](super::Decision::Run)); `waited`
///   is how long the call took, resolution included.
/// - The readiness layer refused it ([`NotReady`]): decided from its state, scope and wait.
/// - The Hub could not reach the server (a `CallError` whose state is not `ready`): decided from
///   that state, at server scope.
/// - Any other failure (the tool's own error, a timeout of a live server): the step ran; the
///   failure is its `cause`.
pub(crate) async fn call_step<S>(service: S, step: &Step, call: ToolCall) -> StepOutcome
where
    S: Service<ToolCall, Response = CallToolResult>,
    S::Error: Into<BoxError>,
{
    let span = step_span(step);
    let started = tokio::time::Instant::now();
    let result = service.oneshot(call).instrument(span.clone()).await;
    let verdict = match result {
        Ok(_) => Verdict {
            waited: started.elapsed(),
            ..Verdict::READY
        },
        Err(error) => verdict_of_failure(&error.into(), started.elapsed()),
    };
    let outcome = StepOutcome::new(step, &verdict);
    record_step(&span, &outcome);
    outcome
}

fn verdict_of_failure(error: &BoxError, elapsed: std::time::Duration) -> Verdict {
    if let Some(not_ready) = error.downcast_ref::<NotReady>() {
        return Verdict {
            state: not_ready.state,
            waited: not_ready.waited,
            timed_out: not_ready.timed_out,
            scope: not_ready.scope,
            reason: not_ready.reason.clone(),
        };
    }
    let (state, reason) =
        hub_failure(error).unwrap_or_else(|| (State::Ready, error.to_string().into()));
    Verdict {
        state,
        waited: elapsed,
        timed_out: false,
        scope: Scope::Server,
        reason: Some(reason),
    }
}

/// The state a `Hub` failure implies for its server, and its message.
fn hub_failure(error: &BoxError) -> Option<(State, Arc<str>)> {
    let call = error.downcast_ref::<CallError>()?;
    Some((call.state(), call.message().into()))
}
