//! Running the steps of an unattended run through a service (usually `ReadinessLayer` over a
//! `Hub`), and the spans that make the run one trace.

use std::sync::Arc;

use futures::future::join_all;
use rmcp::model::CallToolResult;
use tower::{BoxError, Service, ServiceExt};
use tracing::field::Empty;
use tracing::{Instrument, Span};

use super::{RunSummary, Step, StepOutcome};
use crate::layer::NotReady;
use crate::resolve::{Scope, Verdict};
use crate::state::State;
use crate::state::ToolCall;
#[cfg(feature = "hub")]
use crate::supervise::CallError;

/// The `target` of the run and step spans.
pub const RUN_SPAN_TARGET: &str = "mcp_readiness::run";

/// The root span of one unattended run, `readiness run`, with `mcp_readiness.steps` set and
/// `mcp_readiness.ran` left for [`record_run`]. Open it around the whole run (connecting the
/// servers included) so that every step and connection attempt becomes its child:
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use std::time::SystemTime;
/// use mcp_readiness::plan::{preflight, record_run, run_span, RunSummary, Step};
/// use mcp_readiness::{resolve::CapabilityCache, Snapshot, StaticInventory};
/// use tracing::Instrument;
///
/// let cache = CapabilityCache::new(StaticInventory::new(Snapshot::default().with_ready_tool("mcp__files__read")));
/// let steps = [Step::required("read", "mcp__files__read")];
/// let span = run_span(steps.len());
/// let outcomes = preflight(&cache, &steps).instrument(span.clone()).await;
/// let summary = RunSummary::new(SystemTime::now(), outcomes);
/// record_run(&span, &summary);
/// assert_eq!(summary.ran, 1);
/// # }
/// ```
pub fn run_span(steps: usize) -> Span {
    tracing::info_span!(
        target: RUN_SPAN_TARGET,
        "readiness run",
        otel.name = "readiness run",
        mcp_readiness.steps = i64::try_from(steps).unwrap_or(i64::MAX),
        mcp_readiness.ran = Empty,
    )
}

/// Records how the run ended on its [`run_span`]: `mcp_readiness.ran`.
pub fn record_run(span: &Span, summary: &RunSummary) {
    span.record(
        "mcp_readiness.ran",
        i64::try_from(summary.ran).unwrap_or(i64::MAX),
    );
}

/// The span of one step's resolution, `step {id}`, child of the current span.
pub(crate) fn step_span(step: &Step) -> Span {
    tracing::info_span!(
        target: RUN_SPAN_TARGET,
        "step",
        otel.name = %format_args!("step {}", step.id),
        mcp_readiness.step = %step.id,
        mcp_readiness.tool = step.tool.as_str(),
        mcp_readiness.server = step.tool.server(),
        mcp_readiness.state = Empty,
        mcp_readiness.waited_ms = Empty,
        mcp_readiness.decision = Empty,
        mcp_readiness.action = Empty,
    )
}

/// Records a step's outcome on its [`step_span`].
pub(crate) fn record_step(span: &Span, outcome: &StepOutcome) {
    span.record("mcp_readiness.state", outcome.state.as_str());
    span.record(
        "mcp_readiness.waited_ms",
        i64::try_from(outcome.waited_ms).unwrap_or(i64::MAX),
    );
    span.record("mcp_readiness.decision", outcome.decision.as_str());
    if let Some(action) = outcome.state.action() {
        span.record("mcp_readiness.action", action.as_str());
    }
}

/// Runs one step: calls its tool through `service` (with no arguments) and decides from what
/// came back, inside a `step {id}` span.
///
/// - The call returned a result: the step ran ([`Decision::Run`](super::Decision::Run)); `waited`
///   is how long the call took, resolution included.
/// - The readiness layer refused it ([`NotReady`]): decided from its state, scope and wait.
/// - The Hub could not reach the server (a `CallError` whose state is not `ready`): decided from
///   that state, at server scope.
/// - Any other failure (the tool's own error, a timeout of a live server): the step ran; the
///   failure is its `cause`.
pub async fn run_step<S>(service: S, step: &Step) -> StepOutcome
where
    S: Service<ToolCall, Response = CallToolResult>,
    S::Error: Into<BoxError>,
{
    run_step_with(service, step, ToolCall::new(step.tool.clone())).await
}

/// [`run_step`] with a call of your own (arguments, `idempotent`, metadata) for the step's tool.
pub async fn run_step_with<S>(service: S, step: &Step, call: ToolCall) -> StepOutcome
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

/// Runs every step at once through clones of `service` (steps on one server share one wait when
/// the service is a `ReadinessLayer`) and returns their outcomes in step order.
pub async fn run_steps<S>(service: S, steps: &[Step]) -> Vec<StepOutcome>
where
    S: Service<ToolCall, Response = CallToolResult> + Clone,
    S::Error: Into<BoxError>,
{
    join_all(steps.iter().map(|step| run_step(service.clone(), step))).await
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
#[cfg(feature = "hub")]
fn hub_failure(error: &BoxError) -> Option<(State, Arc<str>)> {
    let call = error.downcast_ref::<CallError>()?;
    Some((call.state(), call.message().into()))
}

/// Without the `hub` feature no error comes from a `Hub`.
#[cfg(not(feature = "hub"))]
fn hub_failure(_error: &BoxError) -> Option<(State, Arc<str>)> {
    None
}
