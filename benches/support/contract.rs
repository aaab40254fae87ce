//! The span contract written by hand (DESIGN.md "Spans"): what a service that traced its tool
//! calls as the layer does, without the layer, would pay. It is the minimum (`minimum.rs`) with
//! the layer's span written by hand (the fixtures' `span_contract`: every field, with the values
//! the bench's layer gives a ready call), `traceparent` written into the call's `_meta`, and the
//! span entered twice (around the inner service's `call`, then around its future's poll, so that
//! work a `Buffer` hands to its worker stays in the call's span). The ratio goals compare the
//! layer with the minimum; this row splits that ratio in two: what the contract costs beyond the
//! minimum, and what the layer adds beyond its contract (its cache lookup, its metrics and its
//! response future, less what it does faster than this plain code).

// A clock pair is part of the minimum; library code never reads `std::time::Instant` (clippy.toml).
#![allow(clippy::disallowed_types)]

use std::hint::black_box;
use std::time::Instant;

use futures::FutureExt;
use mcp_readiness::{ToolCall, ToolName};
use mcp_readiness_fixtures::span_contract::ready_call_span;
use tower::Service;

use super::bare::{Bare, OTEL_NAME};
use super::minimum::Minimum;

/// One call of `tool` through `service` with the layer's span contract, timed and counted.
pub fn call(minimum: &Minimum, service: &mut Bare, tool: &ToolName) {
    if !minimum.is_ready() {
        return;
    }
    // A `StaticInventory` knows no transport, so the bench's layer records none either.
    let span = ready_call_span(tool.server(), tool.tool(), &OTEL_NAME, None);
    let began = Instant::now();
    let mut call = ToolCall::new(tool.clone());
    let mut meta = serde_json::Map::new();
    mcp_readiness::telemetry::inject_trace_context(&span, &mut meta);
    if !meta.is_empty() {
        call.meta = Some(meta);
    }
    let future = {
        let _entered = span.enter();
        service.call(call)
    };
    let answer = {
        let _entered = span.enter();
        future.now_or_never()
    };
    black_box(answer);
    minimum.observe(began);
}
