//! Fan-out: many calls at once, every result side by side, and the servers that could not
//! answer listed with their state, so one dead or slow server never fails the whole answer.

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::model::CallToolResult;

use super::Hub;
use crate::client::error::{CallError, CallErrorKind};
use crate::state::ToolCall;
use crate::state::{State, ToolName};

/// A server that did not contribute to a [`FanOut`], with its state and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Degraded {
    /// The server.
    pub server: Arc<str>,
    /// Its readiness state (`ready` for a live but too slow server).
    pub state: State,
    /// What happened, for humans; no secrets.
    pub reason: String,
}

/// One call's outcome in a [`FanOut`].
#[derive(Debug, Clone)]
pub struct FanOutResult {
    /// The tool that was called.
    pub tool: ToolName,
    /// Its result (a result with `isError` is still `Ok`: it is the tool's answer).
    pub result: Result<CallToolResult, CallError>,
}

/// Every server's result side by side, plus the servers that could not answer.
#[derive(Debug, Clone)]
pub struct FanOut {
    /// One entry per call, in the order of the calls.
    pub results: Vec<FanOutResult>,
    /// The servers that were not connected, died mid-call or timed out (one entry per server).
    pub degraded: Vec<Degraded>,
}

impl FanOut {
    /// The successful results.
    pub fn ok(&self) -> impl Iterator<Item = (&ToolName, &CallToolResult)> {
        self.results
            .iter()
            .filter_map(|r| r.result.as_ref().ok().map(|ok| (&r.tool, ok)))
    }
}

impl Hub {
    /// Calls every tool at once and returns every result side by side. One dead or slow server
    /// never fails the whole answer: its calls fail on their own (at once when it cools down) and
    /// it is listed in [`FanOut::degraded`].
    pub async fn fan_out(&self, calls: Vec<ToolCall>) -> FanOut {
        let tools: Vec<ToolName> = calls.iter().map(|c| c.name.clone()).collect();
        let outcomes = futures::future::join_all(calls.into_iter().map(|c| self.call(c))).await;
        let mut degraded = Vec::new();
        let mut seen = HashSet::new();
        let mut results = Vec::with_capacity(outcomes.len());
        for (tool, result) in tools.into_iter().zip(outcomes) {
            if let Err(error) = &result
                && error.kind() != CallErrorKind::Protocol
                && seen.insert(error.server().to_owned())
            {
                let state = match error.kind() {
                    CallErrorKind::Timeout => self.state(error.server()).unwrap_or(State::Absent),
                    _ => error.state(),
                };
                degraded.push(Degraded {
                    server: error.server().into(),
                    state,
                    reason: error.to_string(),
                });
            }
            results.push(FanOutResult { tool, result });
        }
        FanOut { results, degraded }
    }
}
