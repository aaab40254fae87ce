use futures::future::join_all;
use tracing::{Instrument, Span};

use super::run::{record_step, step_span};
use super::{Step, StepOutcome};
use crate::resolve::{CapabilityCache, Scope, Verdict};
use crate::state::{State, ToolName};

/// The tool name a server-level check resolves: `mcp__<server>__*`. A connected server that does
/// not list it is still ready as a server.
pub const SERVER_PROBE_TOOL: &str = "*";

/// A step that checks a whole server rather than one tool (for a pre-flight with no steps
/// configured). Returns `None` for a server name that cannot be written as `mcp__<server>__...`.
///
/// ```
/// use mcp_readiness::plan::server_step;
///
/// let step = server_step("files").unwrap();
/// assert_eq!((step.id.as_str(), step.tool.as_str(), step.required), ("files", "mcp__files__*", true));
/// ```
pub fn server_step(server: &str) -> Option<Step> {
    let tool = ToolName::qualified(server, SERVER_PROBE_TOOL)?;
    Some(Step::required(server, tool))
}

/// Resolves every step at once through `cache` and decides each: the whole pre-flight takes about
/// one budget however many servers there are, and steps on one server share one wait.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use mcp_readiness::plan::{preflight, Step};
/// use mcp_readiness::{resolve::CapabilityCache, Snapshot, StaticInventory};
///
/// let cache = CapabilityCache::new(StaticInventory::new(
///     Snapshot::default().with_ready_tool("mcp__files__read").with_unauthenticated_server("github"),
/// ));
/// let outcomes = preflight(&cache, &[
///     Step::required("read", "mcp__files__read"),
///     Step::required("issues", "mcp__github__search_issues"),
/// ]).await;
/// assert_eq!(outcomes[0].decision.as_str(), "run");
/// assert_eq!(outcomes[1].decision.as_str(), "abort");
/// # }
/// ```
///
/// Each resolution runs in a `step {id}` span (a child of the current span: open a
/// [`run_span`](super::run_span) around the pre-flight to make the run one trace).
pub async fn preflight(cache: &CapabilityCache, steps: &[Step]) -> Vec<StepOutcome> {
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
