//! The span of one tool call: OpenTelemetry MCP semantic-convention attributes plus ours.

use std::sync::Arc;

use tracing::Span;
use tracing::field::Empty;

use crate::resolve::Verdict;
use crate::state::ToolName;

/// The `target` of the spans the layer opens.
pub const SPAN_TARGET: &str = "mcp_readiness::call";

/// The span with the values already known at creation (recording later costs a by-name field
/// lookup per field, so the ready path passes everything here): `$otel_name` is the span's
/// `otel.name`, `$transport` an `Option<&'static str>`, `$ready` an `Option<&Verdict>`.
macro_rules! tool_span {
    ($tool:expr, $otel_name:expr, $transport:expr, $ready:expr) => {
        tracing::info_span!(
            target: SPAN_TARGET,
            "tools/call",
            otel.name = $otel_name,
            otel.kind = "client",
            otel.status_code = Empty,
            mcp.method.name = "tools/call",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = $tool.tool(),
            network.transport = $transport,
            mcp.protocol.version = Empty,
            server.address = Empty,
            server.port = Empty,
            jsonrpc.request.id = Empty,
            mcp.session.id = Empty,
            error.type = Empty,
            tool_error = Empty,
            mcp_readiness.server = $tool.server(),
            mcp_readiness.state = $ready.map(|v| v.state.as_str()),
            mcp_readiness.waited_ms = $ready.map(waited_ms),
            mcp_readiness.timed_out = $ready.map(|v| v.timed_out),
            mcp_readiness.action = Empty,
        )
    };
}

/// Opens the span the readiness layer would open for a call to `tool`: named `tools/call`
/// (exported to OpenTelemetry as `tools/call {tool}`), kind client, with every field of
/// DESIGN.md's "Spans" section declared.
///
/// Open it yourself around an `execute_tool` operation that does more than the call (prompting,
/// parsing the result...): when it is the current span, the layer enriches it instead of opening
/// a second one, as the semantic conventions ask.
///
/// ```
/// use mcp_readiness::ToolName;
/// use mcp_readiness::layer::execute_tool_span;
///
/// let span = execute_tool_span(&ToolName::parse("mcp__files__read_file"));
/// let _entered = span.enter();
/// // ... calls through ReadinessService record their state on this span
/// ```
pub fn execute_tool_span(tool: &ToolName) -> Span {
    tool_span!(
        tool,
        tracing::field::display(format_args!("tools/call {}", tool.tool())),
        None::<&str>,
        None::<&Verdict>
    )
}

/// `otel.name` of the spans for `tool`: `tools/call {tool}`. The layer makes it once per tool
/// (it is in the tool's handles), so that a subscriber that records the name copies a string
/// instead of formatting one on every call.
pub(crate) fn otel_name(tool: &ToolName) -> Arc<str> {
    Arc::from(format!("tools/call {}", tool.tool()))
}

/// The span for one call: the current span when it is an `execute_tool` span of ours (enriched),
/// otherwise a new one. With `ready`, the verdict is recorded too.
#[inline]
pub(crate) fn call_span(
    tool: &ToolName,
    otel_name: &str,
    transport: Option<&'static str>,
    ready: Option<&Verdict>,
) -> Span {
    // No subscriber takes `info` spans (none installed, or all filter them out, as at
    // `RUST_LOG=warn`): neither ours nor an enclosing one of ours can be recorded, so skip the
    // outer-span check and the span's fields (inlined: one atomic load and a comparison).
    if !tracing::level_enabled!(tracing::Level::INFO) {
        return Span::none();
    }
    enabled_call_span(tool, otel_name, transport, ready)
}

/// [`call_span`] when `info` spans may be recorded.
fn enabled_call_span(
    tool: &ToolName,
    otel_name: &str,
    transport: Option<&'static str>,
    ready: Option<&Verdict>,
) -> Span {
    // Look at the current span's metadata without cloning a `Span` (and its dispatcher).
    let enclosing = tracing::dispatcher::get_default(|dispatch| {
        dispatch.current_span().metadata().is_some_and(is_tool_span)
    });
    if !enclosing {
        return tool_span!(tool, otel_name, transport, ready);
    }
    let current = Span::current();
    current.record("gen_ai.tool.name", tool.tool());
    current.record("mcp_readiness.server", tool.server());
    if let Some(transport) = transport {
        current.record("network.transport", transport);
    }
    if let Some(verdict) = ready {
        record_verdict(&current, verdict);
    }
    current
}

/// Whether `meta` is a span of ours (from [`execute_tool_span`] or the layer): two comparisons of
/// static strings, so a service's own enclosing spans (a request span...) are told apart at once,
/// without searching their fields by name.
fn is_tool_span(meta: &tracing::Metadata<'_>) -> bool {
    meta.target() == SPAN_TARGET && meta.name() == "tools/call"
}

/// i64, not u64: tracing-opentelemetry exports u64 fields as strings.
fn waited_ms(verdict: &Verdict) -> i64 {
    i64::try_from(verdict.waited.as_millis()).unwrap_or(i64::MAX)
}

/// Records the verdict's state, wait and (when not ready) the action and `error.type`.
pub(crate) fn record_verdict(span: &Span, verdict: &Verdict) {
    span.record("mcp_readiness.state", verdict.state.as_str());
    span.record("mcp_readiness.waited_ms", waited_ms(verdict));
    span.record("mcp_readiness.timed_out", verdict.timed_out);
    if let Some(action) = verdict.action() {
        span.record("mcp_readiness.action", action.as_str());
    }
}

/// Records a failure: `error.type`, and the OpenTelemetry status.
pub(crate) fn record_error(span: &Span, error_type: &str, tool_error: bool) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
    if tool_error {
        span.record("tool_error", true);
    }
}
