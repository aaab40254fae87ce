//! The spans that make a run one trace: the root `readiness run` and one `step {id}` per step.

use tracing::Span;
use tracing::field::Empty;

use super::{RunSummary, Step, StepOutcome};

/// The `target` of the run and step spans.
pub const RUN_SPAN_TARGET: &str = "mcp_readiness::run";

/// The root span of one unattended run, `readiness run`, with `mcp_readiness.steps` set and
/// `mcp_readiness.ran` left for [`record_run`].
pub(crate) fn run_span(steps: usize) -> Span {
    tracing::info_span!(
        target: RUN_SPAN_TARGET,
        "readiness run",
        otel.name = "readiness run",
        mcp_readiness.steps = i64::try_from(steps).unwrap_or(i64::MAX),
        mcp_readiness.ran = Empty,
    )
}

/// Records how the run ended on its [`run_span`]: `mcp_readiness.ran`.
pub(crate) fn record_run(span: &Span, summary: &RunSummary) {
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
