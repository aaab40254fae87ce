//! What each attribute of the layer's span costs under the installed subscriber: a span named
//! `tools/call` (the layer's target, entered once, dropped) with no field, then the same span
//! with one attribute, one row per attribute, each carrying the value the ready path gives it;
//! then the layer's whole span as the ready path opens it, and what the layer does with a span
//! beyond opening it (entering it a second time, writing `traceparent`). Each row's cost is the
//! median of its per-round differences from the field-less span, on 1 thread, in thread CPU time.

use std::hint::black_box;
use std::time::Duration;

use mcp_readiness::ToolName;
use mcp_readiness::layer::SPAN_TARGET;
use tracing::field::Empty;

use super::rounds::{Measured, Rounds, index, thread_cpu_time};
use super::threads::Workers;

type SpanRow = fn(&ToolName);

/// `mcp.method.name` as a `String` rather than a `&'static str` (tracing-opentelemetry copies
/// both into a new `String`: its visitor sees a `&str`).
static METHOD: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| "tools/call".to_owned());

/// `otel.name` made once, as the layer keeps it in the tool's handles.
static OTEL_NAME: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| "tools/call read_file".to_owned());

/// A row: a `tools/call` span with `fields` (which may use the tool's name, `$tool`), entered
/// once.
macro_rules! span_row {
    ($tool:ident => $($fields:tt)*) => {
        |$tool: &ToolName| {
            let _ = $tool;
            let span = tracing::info_span!(target: SPAN_TARGET, "tools/call", $($fields)*);
            let _entered = span.enter();
            black_box(&span);
        }
    };
}

/// The rows, by name; `span` is the field-less span every other row is compared with.
fn rows() -> Vec<(&'static str, SpanRow)> {
    vec![
        ("span", span_row!(tool => )),
        (
            "otel.name (formatted)",
            span_row!(tool => otel.name = %format_args!("tools/call {}", tool.tool())),
        ),
        (
            "otel.name (made once)",
            span_row!(tool => otel.name = OTEL_NAME.as_str()),
        ),
        ("otel.kind", span_row!(tool => otel.kind = "client")),
        ("mcp.method.name", span_row!(tool => mcp.method.name = "tools/call")),
        (
            "mcp.method.name (String)",
            span_row!(tool => mcp.method.name = METHOD.as_str()),
        ),
        (
            "gen_ai.operation.name",
            span_row!(tool => gen_ai.operation.name = "execute_tool"),
        ),
        ("gen_ai.tool.name", span_row!(tool => gen_ai.tool.name = tool.tool())),
        ("network.transport", span_row!(tool => network.transport = "pipe")),
        ("mcp_readiness.server", span_row!(tool => mcp_readiness.server = tool.server())),
        ("mcp_readiness.state", span_row!(tool => mcp_readiness.state = "ready")),
        ("mcp_readiness.waited_ms", span_row!(tool => mcp_readiness.waited_ms = 0_i64)),
        ("mcp_readiness.timed_out", span_row!(tool => mcp_readiness.timed_out = false)),
        (
            "the 9 empty fields",
            span_row!(tool =>
                otel.status_code = Empty,
                mcp.protocol.version = Empty,
                server.address = Empty,
                server.port = Empty,
                jsonrpc.request.id = Empty,
                mcp.session.id = Empty,
                error.type = Empty,
                tool_error = Empty,
                mcp_readiness.action = Empty,
            ),
        ),
        ("entered twice", |tool| {
            let span = tracing::info_span!(target: SPAN_TARGET, "tools/call");
            drop(span.enter());
            let _entered = span.enter();
            black_box(tool);
        }),
        ("traceparent", |tool| {
            let span = tracing::info_span!(target: SPAN_TARGET, "tools/call");
            let mut meta = serde_json::Map::new();
            mcp_readiness::telemetry::inject_trace_context(&span, &mut meta);
            let _entered = span.enter();
            black_box((meta, tool));
        }),
        (
            "all (the ready path's)",
            span_row!(tool =>
                otel.name = OTEL_NAME.as_str(),
                otel.kind = "client",
                otel.status_code = Empty,
                mcp.method.name = "tools/call",
                gen_ai.operation.name = "execute_tool",
                gen_ai.tool.name = tool.tool(),
                network.transport = "pipe",
                mcp.protocol.version = Empty,
                server.address = Empty,
                server.port = Empty,
                jsonrpc.request.id = Empty,
                mcp.session.id = Empty,
                error.type = Empty,
                tool_error = Empty,
                mcp_readiness.server = tool.server(),
                mcp_readiness.state = "ready",
                mcp_readiness.waited_ms = 0_i64,
                mcp_readiness.timed_out = false,
                mcp_readiness.action = Empty,
            ),
        ),
    ]
}

fn run((row, tool): &mut (SpanRow, ToolName), iters: u64) -> Duration {
    let start = thread_cpu_time();
    for _ in 0..iters {
        row(tool);
    }
    thread_cpu_time().saturating_sub(start)
}

/// Measures every row in interleaved rounds and prints each one's cost beyond the field-less span.
pub fn print_attribute_costs(subscriber: &str) {
    let tool = ToolName::parse("mcp__files__read_file");
    let rows: Vec<Measured> = rows()
        .into_iter()
        .map(|(name, row)| {
            let tool = tool.clone();
            Measured {
                name,
                one: Workers::start(1, move || (row, tool.clone()), run),
                two: None,
            }
        })
        .collect();
    let measured = Rounds::measure(&rows);
    measured.print_table(&format!("span attributes/{subscriber}"), &rows);
    let span = index(&rows, "span");
    println!("  what each row adds to the field-less span (ns, median of per-round differences):");
    for (row, measured_row) in rows.iter().enumerate().skip(1) {
        let cost = measured.per_round(&|r| measured.added(row, span, r));
        println!("    {:<26} {cost:>8.1}", measured_row.name);
    }
}
