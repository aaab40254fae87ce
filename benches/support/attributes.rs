//! What each attribute of the layer's span costs under a given subscriber: a span named
//! `tools/call` (the layer's target, entered once, dropped) with no field, then the layer's
//! attributes added one at a time, each with the value the ready path gives it (the last row is
//! the ready path's whole span); then single rows on the field-less span: how a value is given
//! (formatted or made once; `&'static str` or `String`) and what the layer does with its span
//! beyond opening it (entering it a second time, writing `traceparent`). Costs are medians of
//! per-round differences, on 1 thread, in thread CPU time.

use std::hint::black_box;
use std::time::Duration;

use mcp_readiness::ToolName;
use mcp_readiness::layer::SPAN_TARGET;
use tracing::field::Empty;

use super::bare::OTEL_NAME;
use super::rounds::{Measured, Rounds, load_average, timed};
use super::threads::Workers;

type SpanRow = fn(&ToolName);

/// `mcp.method.name` as a `String` rather than a `&'static str` (tracing-opentelemetry copies
/// both into a new `String`: its visitor sees a `&str`).
static METHOD: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| "tools/call".to_owned());

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

/// The steps: the field-less span, then the layer's attributes added one at a time, in the order
/// of the layer's span (the last row is the ready path's whole span).
fn steps() -> Vec<(&'static str, SpanRow)> {
    vec![
        ("span", span_row!(tool => )),
        (
            "+otel.name",
            span_row!(tool => otel.name = OTEL_NAME.as_str()),
        ),
        (
            "+otel.kind",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client"),
        ),
        (
            "+mcp.method.name",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client", mcp.method.name = "tools/call"),
        ),
        (
            "+gen_ai.operation.name",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client", mcp.method.name = "tools/call", gen_ai.operation.name = "execute_tool"),
        ),
        (
            "+gen_ai.tool.name",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client", mcp.method.name = "tools/call", gen_ai.operation.name = "execute_tool", gen_ai.tool.name = tool.tool()),
        ),
        (
            "+network.transport",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client", mcp.method.name = "tools/call", gen_ai.operation.name = "execute_tool", gen_ai.tool.name = tool.tool(), network.transport = "pipe"),
        ),
        (
            "+mcp_readiness.server",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client", mcp.method.name = "tools/call", gen_ai.operation.name = "execute_tool", gen_ai.tool.name = tool.tool(), network.transport = "pipe", mcp_readiness.server = tool.server()),
        ),
        (
            "+mcp_readiness.state",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client", mcp.method.name = "tools/call", gen_ai.operation.name = "execute_tool", gen_ai.tool.name = tool.tool(), network.transport = "pipe", mcp_readiness.server = tool.server(), mcp_readiness.state = "ready"),
        ),
        (
            "+mcp_readiness.waited_ms",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client", mcp.method.name = "tools/call", gen_ai.operation.name = "execute_tool", gen_ai.tool.name = tool.tool(), network.transport = "pipe", mcp_readiness.server = tool.server(), mcp_readiness.state = "ready", mcp_readiness.waited_ms = 0_i64),
        ),
        (
            "+mcp_readiness.timed_out",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client", mcp.method.name = "tools/call", gen_ai.operation.name = "execute_tool", gen_ai.tool.name = tool.tool(), network.transport = "pipe", mcp_readiness.server = tool.server(), mcp_readiness.state = "ready", mcp_readiness.waited_ms = 0_i64, mcp_readiness.timed_out = false),
        ),
        (
            "+the 9 empty fields",
            span_row!(tool => otel.name = OTEL_NAME.as_str(), otel.kind = "client", mcp.method.name = "tools/call", gen_ai.operation.name = "execute_tool", gen_ai.tool.name = tool.tool(), network.transport = "pipe", mcp_readiness.server = tool.server(), mcp_readiness.state = "ready", mcp_readiness.waited_ms = 0_i64, mcp_readiness.timed_out = false, otel.status_code = Empty, mcp.protocol.version = Empty, server.address = Empty, server.port = Empty, jsonrpc.request.id = Empty, mcp.session.id = Empty, error.type = Empty, tool_error = Empty, mcp_readiness.action = Empty),
        ),
    ]
}

/// Rows compared with the field-less span alone: how a value is given, and what the layer does
/// with its span beyond opening it.
fn alone() -> Vec<(&'static str, SpanRow)> {
    vec![
        (
            "otel.name, formatted per call",
            span_row!(tool => otel.name = %format_args!("tools/call {}", tool.tool())),
        ),
        (
            "otel.name, made once",
            span_row!(tool => otel.name = OTEL_NAME.as_str()),
        ),
        (
            "mcp.method.name, &'static str",
            span_row!(tool => mcp.method.name = "tools/call"),
        ),
        (
            "mcp.method.name, String",
            span_row!(tool => mcp.method.name = METHOD.as_str()),
        ),
        ("entered a second time", |tool| {
            let span = tracing::info_span!(target: SPAN_TARGET, "tools/call");
            drop(span.enter());
            let _entered = span.enter();
            black_box(tool);
        }),
        ("traceparent written", |tool| {
            let span = tracing::info_span!(target: SPAN_TARGET, "tools/call");
            let mut meta = serde_json::Map::new();
            mcp_readiness::telemetry::inject_trace_context(&span, &mut meta);
            let _entered = span.enter();
            black_box((meta, tool));
        }),
    ]
}

fn run(
    (row, tool, _default): &mut (SpanRow, ToolName, tracing::dispatcher::DefaultGuard),
    iters: u64,
) -> Duration {
    timed(iters, || row(tool))
}

/// Measures every row in interleaved rounds, each worker under `dispatch` (its thread's default),
/// and prints each step's cost beyond the previous step and each other row's beyond the
/// field-less span.
pub fn print_attribute_costs(title: &str, dispatch: tracing::Dispatch) {
    let tool = ToolName::parse("mcp__files__read_file");
    let steps = steps();
    let first_alone = steps.len();
    let rows: Vec<Measured> = steps
        .into_iter()
        .chain(alone())
        .map(|(name, row)| {
            let (tool, dispatch) = (tool.clone(), dispatch.clone());
            Measured {
                name,
                one: Workers::start(
                    1,
                    move || {
                        let guard = tracing::dispatcher::set_default(&dispatch);
                        (row, tool.clone(), guard)
                    },
                    run,
                ),
                two: None,
            }
        })
        .collect();
    let measured = Rounds::measure(&rows);
    measured.print_table(&format!("span attributes/{title}"), &rows);
    let cost = |row, base| measured.per_round(&|r| measured.added(row, base, r));
    println!(
        "  each attribute added in turn (ns beyond the previous row, median of per-round differences):"
    );
    for (row, step) in rows.iter().enumerate().take(first_alone).skip(1) {
        println!("    {:<32} {:>8.1}", step.name, cost(row, row - 1));
    }
    println!(
        "    {:<32} {:>8.1}",
        "all of them",
        cost(first_alone - 1, 0)
    );
    println!("  alone on the field-less span (ns beyond it):");
    for (row, alone) in rows.iter().enumerate().skip(first_alone) {
        println!("    {:<32} {:>8.1}", alone.name, cost(row, 0));
    }
    println!("  load average {}", load_average());
}
