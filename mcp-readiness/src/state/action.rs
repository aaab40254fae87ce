use std::fmt;

use serde::{Deserialize, Serialize};

/// What a human has to do about a tool that is not ready. This is the `action` label that alerts
/// route on-call by.
///
/// ```
/// use mcp_readiness::Action;
///
/// assert_eq!(Action::Reauthorize.as_str(), "reauthorize");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Credentials expired or were revoked: someone must re-run the authorization.
    Reauthorize,
    /// The server is not configured, not running, or does not offer the tool: add or fix the connection.
    AddConnection,
    /// The server was still connecting when the wait budget ran out: extend the budget or move the step later.
    ExtendWaitBudget,
}

impl Action {
    /// The label value used in metrics, spans and alerts.
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::Reauthorize => "reauthorize",
            Action::AddConnection => "add_connection",
            Action::ExtendWaitBudget => "extend_wait_budget",
        }
    }

    /// One sentence telling a human what to do, naming the server.
    pub fn next_step(self, server: &str) -> String {
        match self {
            Action::Reauthorize => format!("re-authorize the `{server}` connection"),
            Action::AddConnection => format!("add or repair the `{server}` connection"),
            Action::ExtendWaitBudget => {
                format!("extend the wait budget for `{server}` or move its steps later")
            }
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
