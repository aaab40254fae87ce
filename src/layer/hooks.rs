//! Hooks called by the readiness layer. Each has a no-op `()` implementation and is implemented
//! for closures, like tower-http's `trace` callbacks.
//!
//! # When hooks fire
//!
//! - [`OnNotReady`] fires once per call whose tool is not ready, after the resolution and before
//!   the error is returned. The inner service is not called.
//! - [`OnOutcome`] fires exactly once per call that reached the layer: when the response future
//!   completes (`ok`, `tool_error`, `not_ready`, `transport_error`, `timeout`), or when it is dropped
//!   before completing (`cancelled`).

use std::time::Duration;

use super::NotReady;
use crate::state::{CallOutcome, ToolName};

/// Called when a call is refused because its tool is not ready.
pub trait OnNotReady: Clone + Send + Sync + 'static {
    /// Observes the refusal.
    fn on_not_ready(&self, error: &NotReady);
}

impl OnNotReady for () {
    fn on_not_ready(&self, _error: &NotReady) {}
}

impl<F> OnNotReady for F
where
    F: Fn(&NotReady) + Clone + Send + Sync + 'static,
{
    fn on_not_ready(&self, error: &NotReady) {
        self(error)
    }
}

/// Called once with every call's outcome and how long the call took through the layer.
pub trait OnOutcome: Clone + Send + Sync + 'static {
    /// Whether this hook looks at anything: the no-op `()` says `false`, and the layer then keeps
    /// no copy of the tool name for it.
    const OBSERVES: bool = true;

    /// Observes the outcome.
    fn on_outcome(&self, tool: &ToolName, outcome: CallOutcome, elapsed: Duration);
}

impl OnOutcome for () {
    const OBSERVES: bool = false;

    fn on_outcome(&self, _tool: &ToolName, _outcome: CallOutcome, _elapsed: Duration) {}
}

impl<F> OnOutcome for F
where
    F: Fn(&ToolName, CallOutcome, Duration) + Clone + Send + Sync + 'static,
{
    fn on_outcome(&self, tool: &ToolName, outcome: CallOutcome, elapsed: Duration) {
        self(tool, outcome, elapsed)
    }
}
