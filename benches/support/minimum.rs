//! The hand-built minimum of the goals: what hand-written tracing and metrics around one tool call
//! do at the least, the same in every layer bench (no subscriber, `Registry`, OpenTelemetry):
//!
//! - a readiness check (one atomic load: the tool is callable while it holds `READY`);
//! - one `info` span named `tools/call` carrying the tool's name, entered once around the call;
//! - one clock pair: `std::time::Instant`, which is what `tokio::time::Instant` reads in a
//!   service (the bench's tokio has `test-util`, which makes tokio's `now()` look for a paused
//!   clock first: a cost no service pays, so the minimum does not use it);
//! - one pre-resolved `prometheus` histogram observation and one counter increment.

// A clock pair is part of the minimum; library code never reads `std::time::Instant` (clippy.toml).
#![allow(clippy::disallowed_types)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use mcp_readiness::{ToolCall, ToolName};

use super::bare::{Bare, call_once};

/// The readiness check's value for "callable".
const READY: u8 = 1;

/// What the hand-built minimum holds, resolved before the first call.
#[derive(Clone)]
pub struct Minimum {
    state: Arc<AtomicU8>,
    histogram: prometheus::Histogram,
    counter: prometheus::IntCounter,
}

impl Minimum {
    pub fn new() -> Minimum {
        Minimum {
            state: Arc::new(AtomicU8::new(READY)),
            histogram: prometheus::Histogram::with_opts(prometheus::HistogramOpts::new(
                "minimum_seconds",
                "minimum",
            ))
            .expect("a valid histogram"),
            counter: prometheus::IntCounter::new("minimum_calls", "minimum").expect("a counter"),
        }
    }

    /// Whether the tool is callable: the readiness check.
    pub fn is_ready(&self) -> bool {
        self.state.load(Ordering::Acquire) == READY
    }

    /// The end of a call that `began`: its duration observed, the call counted.
    pub fn observe(&self, began: Instant) {
        self.histogram.observe(began.elapsed().as_secs_f64());
        self.counter.inc();
    }

    /// One call of `tool` through `service`, traced, timed and counted.
    pub fn call(&self, service: &mut Bare, tool: &ToolName) {
        if !self.is_ready() {
            return;
        }
        let span = tracing::info_span!("tools/call", gen_ai.tool.name = tool.tool());
        let _entered = span.enter();
        let began = Instant::now();
        call_once(service, ToolCall::new(tool.clone()));
        self.observe(began);
    }
}
