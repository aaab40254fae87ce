//! The pre-flight: every step resolved through a cache, without calling a tool.

use futures::future::join_all;
use tracing::{Instrument, Span};

use super::spans::{record_step, step_span};
use super::{Step, StepOutcome};
use crate::resolve::{CapabilityCache, Scope, Verdict};
use crate::state::State;

/// The tool name a server-level check resolves: `mcp__<server>__*` (see [`Step::server`]). A
/// connected server that does not list it is still ready as a server.
pub const SERVER_PROBE_TOOL: &str = "*";

/// Resolves every step at once through `cache` and decides each, each in a `step {id}` span
/// (child of the current span).
pub(crate) async fn preflight(cache: &CapabilityCache, steps: &[Step]) -> Vec<StepOutcome> {
    join_all(steps.iter().map(|step| {
        let span = step_span(step);
        async move {
            let verdict = cache.resolve(&step.tool).await;
            let verdict = if step.tool.tool() == SERVER_PROBE_TOOL && is_live_server(&verdict) {
                Verdict {
                    state: State::Ready,
                    scope: Scope::Server,
                    reason: None,
                    ..verdict
                }
            } else {
                verdict
            };
            let outcome = StepOutcome::new(step, &verdict);
            record_step(&Span::current(), &outcome);
            outcome
        }
        .instrument(span)
    }))
    .await
}

fn is_live_server(verdict: &Verdict) -> bool {
    verdict.state == State::Ready
        || (verdict.state == State::Absent && verdict.scope == Scope::Tool)
}
