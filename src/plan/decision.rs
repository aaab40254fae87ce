use std::fmt;

use serde::{Deserialize, Serialize};

use super::Step;
use crate::resolve::{Scope, Verdict};
use crate::state::{Action, State};

/// What a step does, with a reason that names the server and the next human step.
///
/// ```
/// use mcp_readiness::plan::{Decision, Step};
/// use mcp_readiness::{resolve::{Scope, Verdict}, State};
///
/// let unauthenticated = Verdict { state: State::Unauthenticated, scope: Scope::Server, ..Verdict::READY };
/// let step = Step::required("fetch-issues", "mcp__github__search_issues");
/// let decision = step.decide(&unauthenticated);
/// assert_eq!(decision.as_str(), "abort");
/// assert_eq!(
///     decision.reason(),
///     "`mcp__github__search_issues` needs authorization: re-authorize the `github` connection"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Decision {
    /// The tool is ready: run the step.
    Run,
    /// A required step cannot run and waiting will not help: stop the steps that depend on it.
    Abort {
        /// Why, and what a human does next.
        reason: String,
    },
    /// An optional step cannot run: do its fallback instead.
    Fallback {
        /// The fallback, if the step named one.
        to: Option<String>,
        /// Why, and what a human does next.
        reason: String,
    },
    /// A required step's server was still connecting when the budget ran out: a later run may work.
    RetryNextRun {
        /// Why, and what a human may do.
        reason: String,
    },
    /// An optional step's server was still connecting when the budget ran out: skip it this run.
    Skip {
        /// Why, and what a human may do.
        reason: String,
    },
}

impl Decision {
    /// The decision's name: `run`, `abort`, `fallback`, `retry_next_run` or `skip`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Run => "run",
            Decision::Abort { .. } => "abort",
            Decision::Fallback { .. } => "fallback",
            Decision::RetryNextRun { .. } => "retry_next_run",
            Decision::Skip { .. } => "skip",
        }
    }

    /// The reason, naming the next human step (`ready` for [`Decision::Run`]).
    pub fn reason(&self) -> &str {
        match self {
            Decision::Run => "ready",
            Decision::Abort { reason }
            | Decision::Fallback { reason, .. }
            | Decision::RetryNextRun { reason }
            | Decision::Skip { reason } => reason,
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Run => f.write_str("run"),
            Decision::Fallback {
                to: Some(to),
                reason,
            } => write!(f, "fallback to {to}: {reason}"),
            other => write!(f, "{}: {}", other.as_str(), other.reason()),
        }
    }
}

impl Step {
    /// Decides this step from its tool's verdict, per the table of the [`plan`](super) module.
    ///
    /// `unauthenticated` and `absent` both abort a required step, with different wording on
    /// purpose: one means redo the authorization, the other means add the connection.
    pub fn decide(&self, verdict: &Verdict) -> Decision {
        decide(self, verdict)
    }
}

fn decide(step: &Step, verdict: &Verdict) -> Decision {
    let tool = step.tool.as_str();
    let server = step.tool.server();
    // A required step aborts; an optional one takes its fallback.
    let abort_or_fallback = |abort: String, fallback: String| {
        if step.required {
            Decision::Abort { reason: abort }
        } else {
            Decision::Fallback {
                to: step.fallback.clone(),
                reason: fallback,
            }
        }
    };
    match verdict.state {
        State::Ready => Decision::Run,
        State::Unauthenticated => {
            let next = Action::Reauthorize.next_step(server);
            abort_or_fallback(
                format!("`{tool}` needs authorization: {next}"),
                format!("`{server}` is not authorized; using the fallback: {next}"),
            )
        }
        State::Connecting => {
            let next = Action::ExtendWaitBudget.next_step(server);
            if step.required {
                Decision::RetryNextRun {
                    reason: format!(
                        "`{server}` was still starting when the budget ran out: {next}"
                    ),
                }
            } else {
                Decision::Skip {
                    reason: format!("`{server}` was still starting; skipped this run: {next}"),
                }
            }
        }
        State::Absent => {
            let what = match verdict.scope {
                Scope::Tool => format!(
                    "`{server}` is connected but does not offer `{}`",
                    step.tool.tool()
                ),
                Scope::Server => format!("`{tool}` is not connected"),
            };
            let next = match verdict.scope {
                Scope::Tool => Action::missing_tool_next_step(server, step.tool.tool()),
                Scope::Server => Action::AddConnection.next_step(server),
            };
            abort_or_fallback(
                format!("{what}: {next}"),
                format!("{what}; using the fallback: {next}"),
            )
        }
    }
}
