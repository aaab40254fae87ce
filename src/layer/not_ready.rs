use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::resolve::{Scope, Verdict, not_ready_error_type};
use crate::state::{Action, State, ToolName};
use crate::util::echo;

/// The error the readiness layer returns, without calling the inner service, when a tool is not
/// ready: what state it is in, who has to do what, and how long the call waited to find out.
///
/// Returned boxed (`tower::BoxError`); recover it with `err.downcast_ref::<NotReady>()`.
///
/// Only this crate builds one; read it with the accessors below.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NotReady {
    pub(crate) tool: ToolName,
    pub(crate) state: State,
    pub(crate) scope: Scope,
    pub(crate) action: Action,
    pub(crate) waited: Duration,
    pub(crate) timed_out: bool,
    pub(crate) reason: Option<Arc<str>>,
    pub(crate) retry_after: Option<Duration>,
}

impl NotReady {
    /// Builds the error from a verdict that is not ready; `None` for a ready one.
    pub(crate) fn from_verdict(tool: &ToolName, verdict: &Verdict) -> Option<NotReady> {
        Some(NotReady {
            tool: tool.clone(),
            state: verdict.state,
            scope: verdict.scope,
            action: verdict.action()?,
            waited: verdict.waited,
            timed_out: verdict.timed_out,
            reason: verdict.reason.clone(),
            retry_after: None,
        })
    }

    /// How long until the server's next connection attempt, for a `connecting` server whose
    /// inventory schedules one (the `Hub`: a backoff, or the `Retry-After` a throttling server
    /// sent); `None` otherwise. The HTTP answer's `Retry-After` (feature `http`).
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The tool that was called.
    pub fn tool(&self) -> &ToolName {
        &self.tool
    }

    /// Its state (never [`State::Ready`]).
    pub fn state(&self) -> State {
        self.state
    }

    /// Whether the state is a fact about the server or about this tool only.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// What a human has to do.
    pub fn action(&self) -> Action {
        self.action
    }

    /// How long the call waited for the verdict.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Whether the wait budget ran out while the server was still connecting.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// Why, when the inventory said (never contains secrets).
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The server the tool belongs to.
    pub fn server(&self) -> &str {
        self.tool.server()
    }

    /// The span's `error.type`: `server_unauthenticated`, `server_absent`, `tool_absent` or
    /// `resolve_timeout`.
    pub fn error_type(&self) -> &'static str {
        // A `NotReady` is never built from a ready verdict.
        not_ready_error_type(self.state, self.scope).unwrap_or("server_absent")
    }
}

impl fmt::Display for NotReady {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names come from the caller (an agent may invent them): escaped and cut, once each.
        let name = echo(self.tool.as_str());
        let server = echo(self.server());
        let tool = echo(self.tool.tool());
        // A name without `mcp__` belongs to the `builtin` server (DESIGN.md); unless one is
        // configured, the name is what is wrong, not a connection.
        if self.tool.is_builtin() && self.state == State::Absent && self.scope == Scope::Server {
            return write!(
                f,
                "`{name}` is not ready: it is not an MCP tool name (`mcp__<server>__<tool>`), and \
                 no server `{server}` is configured for such names; next step: call the tool by \
                 its full name `mcp__<server>__{tool}`, or outside the MCP layer if it is the \
                 agent's own tool"
            );
        }
        match (self.state, self.scope) {
            (State::Absent, Scope::Tool) => write!(
                f,
                "`{name}` is not ready: server `{server}` is connected but does not offer `{tool}`"
            )?,
            (State::Connecting, _) => write!(
                f,
                "`{name}` is not ready: server `{server}` was still connecting after {} ms",
                self.waited.as_millis()
            )?,
            (state, _) => write!(f, "`{name}` is not ready: server `{server}` is {state}")?,
        }
        if let Some(reason) = self
            .reason
            .as_deref()
            .filter(|_| self.scope == Scope::Server)
        {
            write!(f, " ({reason})")?;
        }
        let next = match (self.state, self.scope) {
            (State::Absent, Scope::Tool) => {
                crate::state::Action::missing_tool_next_step(&server, &tool)
            }
            _ => self.action.next_step(&server),
        };
        write!(f, "; next step: {next}")
    }
}

impl std::error::Error for NotReady {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::{Scope, Verdict};

    fn absent(tool: &str) -> NotReady {
        let verdict = Verdict {
            state: State::Absent,
            waited: Duration::ZERO,
            timed_out: false,
            scope: Scope::Server,
            reason: None,
        };
        NotReady::from_verdict(&ToolName::parse(tool), &verdict).unwrap()
    }

    #[test]
    fn a_callers_name_is_shown_escaped_and_cut_however_long() {
        let text = absent("mcp__no\u{1b}]0;pwned\u{7}srv__x").to_string();
        assert!(!text.chars().any(char::is_control), "{text:?}");
        assert!(
            text.contains("server `no\\u{1b}]0;pwned\\u{7}srv`"),
            "{text}"
        );

        let long = format!("mcp__files__{}", "a".repeat(1_000_000));
        let text = absent(&long).to_string();
        assert!(text.len() < 1_000, "{} bytes", text.len());
        assert!(text.contains("… (1000012 characters)`"), "{text}");
    }

    #[test]
    fn a_name_without_mcp_is_named_as_the_fault_not_a_builtin_connection() {
        assert_eq!(
            absent("Bash").to_string(),
            "`Bash` is not ready: it is not an MCP tool name (`mcp__<server>__<tool>`), and no \
             server `builtin` is configured for such names; next step: call the tool by its full \
             name `mcp__<server>__Bash`, or outside the MCP layer if it is the agent's own tool"
        );
    }
}
