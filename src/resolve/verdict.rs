use std::sync::Arc;
use std::time::Duration;

use crate::state::{Action, State};

/// Whether a verdict is a fact about the whole server or about one tool (DESIGN.md section 1:
/// `connecting`, `unauthenticated` and a server's `absent` are shared by all its tools; `ready`, and
/// a live server not offering a tool, are facts about one tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Shared by every tool of the server.
    Server,
    /// About this tool only.
    Tool,
}

/// The outcome of one resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The state the tool was found in.
    pub state: State,
    /// How long this caller waited for the verdict (zero for a cache hit).
    pub waited: Duration,
    /// Whether the budget ran out while the server was still connecting.
    pub timed_out: bool,
    /// Whether the verdict holds for the whole server or for this tool only.
    pub scope: Scope,
    /// Why, when the inventory said (never contains secrets).
    pub reason: Option<Arc<str>>,
}

impl Verdict {
    /// A ready verdict that did not wait.
    pub const READY: Verdict = Verdict {
        state: State::Ready,
        waited: Duration::ZERO,
        timed_out: false,
        scope: Scope::Tool,
        reason: None,
    };

    /// Whether the tool can be called.
    pub fn is_ready(&self) -> bool {
        self.state == State::Ready
    }

    /// The on-call action, `None` when ready.
    pub fn action(&self) -> Option<Action> {
        self.state.action()
    }

    /// The `error.type` span attribute for a verdict that is not ready: `server_unauthenticated`,
    /// `server_absent`, `tool_absent` or `resolve_timeout`.
    pub fn error_type(&self) -> Option<&'static str> {
        not_ready_error_type(self.state, self.scope)
    }

    /// The same verdict as seen by a caller that waited `waited`.
    pub(crate) fn waited_for(&self, waited: Duration) -> Verdict {
        Verdict {
            waited,
            ..self.clone()
        }
    }
}

/// The `error.type` of a call refused in `state` at the grain of `scope` (`None` when ready). The
/// one mapping verdicts, the layer's `NotReady` and the Hub's own refusals all use.
pub(crate) const fn not_ready_error_type(state: State, scope: Scope) -> Option<&'static str> {
    match (state, scope) {
        (State::Ready, _) => None,
        (State::Connecting, _) => Some("resolve_timeout"),
        (State::Unauthenticated, _) => Some("server_unauthenticated"),
        (State::Absent, Scope::Tool) => Some("tool_absent"),
        (State::Absent, Scope::Server) => Some("server_absent"),
    }
}
