use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Decision, SERVER_PROBE_TOOL};
use crate::resolve::{Scope, Verdict};
use crate::state::{State, ToolName};

/// One step of an unattended run: the tool it needs, whether the run is pointless without it, and
/// what to do instead when it is optional.
///
/// ```
/// use mcp_readiness::plan::Step;
///
/// let step = Step::optional("archive", "mcp__storage__put").with_fallback("write-file");
/// assert_eq!(step.tool.server(), "storage");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// A name for the step, unique within the run.
    pub id: String,
    /// The tool it calls.
    pub tool: ToolName,
    /// Whether the run must not go on without it.
    pub required: bool,
    /// What an optional step does instead (a name the agent understands), if anything.
    pub fallback: Option<String>,
}

impl Step {
    /// A required step.
    pub fn required(id: impl Into<String>, tool: impl Into<ToolName>) -> Self {
        Step {
            id: id.into(),
            tool: tool.into(),
            required: true,
            fallback: None,
        }
    }

    /// An optional step.
    pub fn optional(id: impl Into<String>, tool: impl Into<ToolName>) -> Self {
        Step {
            required: false,
            ..Step::required(id, tool)
        }
    }

    /// A required step that checks a whole server rather than one tool (a pre-flight with no
    /// steps configured): its tool is `mcp__<server>__*` ([`SERVER_PROBE_TOOL`]). `None` for a
    /// server name that cannot be written as `mcp__<server>__...`.
    ///
    /// ```
    /// use mcp_readiness::plan::Step;
    ///
    /// let step = Step::server("files").unwrap();
    /// assert_eq!((step.id.as_str(), step.tool.as_str(), step.required), ("files", "mcp__files__*", true));
    /// ```
    pub fn server(server: &str) -> Option<Step> {
        let tool = ToolName::qualified(server, SERVER_PROBE_TOOL)?;
        Some(Step::required(server, tool))
    }

    /// Sets what the step does instead when its tool is not usable.
    pub fn with_fallback(mut self, fallback: impl Into<String>) -> Self {
        self.fallback = Some(fallback.into());
        self
    }
}

/// A step, the state its tool was found in, and what was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepOutcome {
    /// The step's id.
    pub id: String,
    /// The qualified tool name.
    pub tool: String,
    /// The tool's server.
    pub server: String,
    /// Whether the step was required.
    pub required: bool,
    /// The state the tool was found in.
    pub state: State,
    /// Whether the state is a fact about the server or about this tool only (a live server that
    /// does not offer the tool).
    pub scope: Scope,
    /// How long the resolution waited, in milliseconds.
    pub waited_ms: u64,
    /// What the step does.
    pub decision: Decision,
    /// Why the tool was in its state, when the inventory said (never contains secrets).
    pub cause: Option<String>,
}

impl StepOutcome {
    /// Decides `step` from its verdict.
    pub fn new(step: &Step, verdict: &Verdict) -> Self {
        StepOutcome {
            id: step.id.clone(),
            tool: step.tool.to_string(),
            server: step.tool.server().to_owned(),
            required: step.required,
            state: verdict.state,
            scope: verdict.scope,
            waited_ms: duration_ms(verdict.waited),
            decision: step.decide(verdict),
            cause: verdict.reason.as_deref().map(str::to_owned),
        }
    }
}

fn duration_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
