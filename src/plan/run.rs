//! [`Run`]: one unattended run, from its root span to its record.

use std::time::SystemTime;

use futures::future::join_all;
use rmcp::model::CallToolResult;
use tower::{BoxError, Service};
use tracing::{Instrument, Span};

use super::call::call_step;
use super::preflight::preflight;
use super::spans::{record_run, run_span};
use super::{RunSummary, Step, StepOutcome};
use crate::resolve::CapabilityCache;
use crate::state::ToolCall;

/// One unattended run: its steps, the root span `readiness run` that makes it one trace, and the
/// outcomes decided so far; [`finish`](Run::finish) turns it into the run record.
///
/// [`start`](Run::start) opens the span, then the steps are decided in their order, each in a
/// `step {id}` span, child of the run span: all at once by calling their tools
/// ([`steps`](Run::steps), [`steps_each`](Run::steps_each)) or by resolving them only
/// ([`preflight`](Run::preflight)), or one by one ([`step`](Run::step),
/// [`step_with`](Run::step_with), e.g. with arguments). Each of these decides the steps not
/// decided yet. Work that belongs to the run (connecting the servers) goes in
/// [`in_scope`](Run::in_scope), so that its spans are children of the run span.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use mcp_readiness::plan::{Run, Step};
/// use mcp_readiness::resolve::CapabilityCache;
/// use mcp_readiness::{Snapshot, StaticInventory};
///
/// let cache = CapabilityCache::new(StaticInventory::new(
///     Snapshot::default().with_ready_tool("mcp__files__read").with_unauthenticated_server("github"),
/// ));
/// let mut run = Run::start([
///     Step::required("read", "mcp__files__read"),
///     Step::required("issues", "mcp__github__search_issues"),
/// ]);
/// run.preflight(&cache).await;
/// let summary = run.finish();
/// assert_eq!(summary.ran, 1);
/// assert_eq!(summary.blocked_by_auth, ["github"]);
/// assert_eq!(summary.outcomes[1].decision.as_str(), "abort");
/// # }
/// ```
#[derive(Debug)]
pub struct Run {
    span: Span,
    steps: Vec<Step>,
    outcomes: Vec<StepOutcome>,
}

impl Run {
    /// Starts a run of `steps`: opens its root span `readiness run` (a child of the current span),
    /// with `mcp_readiness.steps` set.
    pub fn start(steps: impl IntoIterator<Item = Step>) -> Run {
        let steps: Vec<Step> = steps.into_iter().collect();
        Run {
            span: run_span(steps.len()),
            steps,
            outcomes: Vec::new(),
        }
    }

    /// The run's steps, in order.
    pub fn planned(&self) -> &[Step] {
        &self.steps
    }

    /// The outcomes decided so far, in step order.
    pub fn outcomes(&self) -> &[StepOutcome] {
        &self.outcomes
    }

    /// The root span, `readiness run`.
    pub fn span(&self) -> &Span {
        &self.span
    }

    /// Runs `work` inside the run span, e.g. `run.in_scope(|| hub.connect_all())` so that every
    /// connection attempt's `initialize` span is a child of the run.
    pub fn in_scope<R>(&self, work: impl FnOnce() -> R) -> R {
        self.span.in_scope(work)
    }

    /// Decides every step not decided yet by calling its tool through `service` (with no
    /// arguments), all at once through clones of `service`: steps on one server share one wait
    /// when the service is a `ReadinessLayer`.
    ///
    /// - The call returned a result: the step ran ([`Decision::Run`](super::Decision::Run));
    ///   `waited` is how long the call took, resolution included.
    /// - The readiness layer refused it ([`NotReady`](crate::NotReady)): decided from its state,
    ///   scope and wait.
    /// - The Hub could not reach the server (a `CallError` whose state is not `ready`): decided
    ///   from that state, at server scope.
    /// - Any other failure (the tool's own error, a timeout of a live server): the step ran; the
    ///   failure is its `cause`.
    pub async fn steps<S>(&mut self, service: S)
    where
        S: Service<ToolCall, Response = CallToolResult> + Clone,
        S::Error: Into<BoxError>,
    {
        self.steps_each(service, |_: &StepOutcome| ()).await;
    }

    /// [`steps`](Run::steps), calling `on_outcome` with each outcome as soon as it is decided
    /// (e.g. to print a line per step).
    pub async fn steps_each<S, F>(&mut self, service: S, on_outcome: F)
    where
        S: Service<ToolCall, Response = CallToolResult> + Clone,
        S::Error: Into<BoxError>,
        F: Fn(&StepOutcome),
    {
        let pending = &self.steps[self.outcomes.len()..];
        let on_outcome = &on_outcome;
        let decided = join_all(pending.iter().map(|step| {
            let service = service.clone();
            async move {
                let outcome = call_step(service, step, ToolCall::new(step.tool.clone())).await;
                on_outcome(&outcome);
                outcome
            }
        }))
        .instrument(self.span.clone())
        .await;
        self.outcomes.extend(decided);
    }

    /// Decides the next step not decided yet by calling its tool through `service` with no
    /// arguments (see [`steps`](Run::steps)); `None` when every step is decided.
    pub async fn step<S>(&mut self, service: S) -> Option<&StepOutcome>
    where
        S: Service<ToolCall, Response = CallToolResult>,
        S::Error: Into<BoxError>,
    {
        let tool = self.steps.get(self.outcomes.len())?.tool.clone();
        self.step_with(service, ToolCall::new(tool)).await
    }

    /// [`step`](Run::step) with a call of your own (arguments, `idempotent`, metadata) for the
    /// next step's tool.
    pub async fn step_with<S>(&mut self, service: S, call: ToolCall) -> Option<&StepOutcome>
    where
        S: Service<ToolCall, Response = CallToolResult>,
        S::Error: Into<BoxError>,
    {
        let step = self.steps.get(self.outcomes.len())?;
        let outcome = call_step(service, step, call)
            .instrument(self.span.clone())
            .await;
        self.outcomes.push(outcome);
        self.outcomes.last()
    }

    /// Decides every step not decided yet by resolving its tool through `cache`, without calling
    /// it: the whole pre-flight takes about one budget however many servers there are, and steps
    /// on one server share one wait. A [`Step::server`] step is ready when its server is.
    pub async fn preflight(&mut self, cache: &CapabilityCache) {
        let pending = &self.steps[self.outcomes.len()..];
        let decided = preflight(cache, pending)
            .instrument(self.span.clone())
            .await;
        self.outcomes.extend(decided);
    }

    /// Ends the run: summarizes the outcomes decided (now, for the record's `ts`), records
    /// `mcp_readiness.ran` on the run span and closes it.
    pub fn finish(self) -> RunSummary {
        let summary = RunSummary::new(SystemTime::now(), self.outcomes);
        record_run(&self.span, &summary);
        summary
    }
}
