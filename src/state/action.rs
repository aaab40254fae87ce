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

impl Action {
    /// The next step for a tool that a live, ready server does not offer (`absent` at the grain
    /// of one tool, still [`Action::AddConnection`]): the connection works, so the fix is another
    /// tool name or a version of the server that offers the tool.
    ///
    /// ```
    /// use mcp_readiness::Action;
    ///
    /// assert_eq!(
    ///     Action::missing_tool_next_step("notes", "export_pdf"),
    ///     "check the tool name `export_pdf`, or run a version of `notes` that offers it",
    /// );
    /// ```
    pub fn missing_tool_next_step(server: &str, tool: &str) -> String {
        format!("check the tool name `{tool}`, or run a version of `{server}` that offers it")
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
