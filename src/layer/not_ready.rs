use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::resolve::{Scope, Verdict, not_ready_error_type};
use crate::state::{Action, State, ToolName};

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
        })
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
        let server = self.server();
        match (self.state, self.scope) {
            (State::Absent, Scope::Tool) => write!(
                f,
                "`{}` is not ready: server `{server}` is connected but does not offer `{}`",
                self.tool,
                self.tool.tool()
            )?,
            (State::Connecting, _) => write!(
                f,
                "`{}` is not ready: server `{server}` was still connecting after {} ms",
                self.tool,
                self.waited.as_millis()
            )?,
            (state, _) => write!(
                f,
                "`{}` is not ready: server `{server}` is {state}",
                self.tool
            )?,
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
                crate::state::Action::missing_tool_next_step(server, self.tool.tool())
            }
            _ => self.action.next_step(server),
        };
        write!(f, "; next step: {next}")
    }
}

impl std::error::Error for NotReady {}
