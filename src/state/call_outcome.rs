use std::fmt;

/// How one call through the layer ended: the `outcome` label of `mcp_readiness_tool_calls_total`.
///
/// ```
/// use mcp_readiness::state::CallOutcome;
///
/// assert_eq!(CallOutcome::NotReady.as_str(), "not_ready");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallOutcome {
    /// The tool ran and its result is not an error.
    Ok,
    /// The tool ran and its result has `isError` set.
    ToolError,
    /// The tool was not ready (connecting past the budget, unauthenticated or absent); the inner
    /// service was not called.
    NotReady,
    /// The connection failed while the call was in flight.
    TransportError,
    /// The call did not finish in time.
    Timeout,
    /// The caller dropped the call before it finished.
    Cancelled,
    /// The server ran the call as a task (MCP 2026-07-28) and the task failed or was cancelled.
    TaskFailed,
    /// The server needs input (elicitation, sampling, an `input_required` task or result) that an
    /// unattended run cannot give.
    InputRequired,
}

impl CallOutcome {
    /// Every outcome, in label order.
    pub const ALL: [CallOutcome; 8] = [
        CallOutcome::Ok,
        CallOutcome::ToolError,
        CallOutcome::NotReady,
        CallOutcome::TransportError,
        CallOutcome::Timeout,
        CallOutcome::Cancelled,
        CallOutcome::TaskFailed,
        CallOutcome::InputRequired,
    ];

    /// The label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::ToolError => "tool_error",
            CallOutcome::NotReady => "not_ready",
            CallOutcome::TransportError => "transport_error",
            CallOutcome::Timeout => "timeout",
            CallOutcome::Cancelled => "cancelled",
            CallOutcome::TaskFailed => "task_failed",
            CallOutcome::InputRequired => "input_required",
        }
    }

    /// The position of this outcome in [`CallOutcome::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for CallOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
