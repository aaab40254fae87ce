//! `conformance-client`: the MCP client that the official conformance suite
//! (npm `@modelcontextprotocol/conformance`, `client` mode) drives, built on mcp-readiness's own
//! stack: the scenario's server is supervised by a [`Hub`](mcp_readiness::Hub), every tool call
//! goes through the [`ReadinessLayer`](mcp_readiness::ReadinessLayer), and the auth scenarios log
//! in with the library's `oauth login` flow and its credential store.
//!
//! The suite runs `conformance-client <server URL>` with the scenario in
//! `MCP_CONFORMANCE_SCENARIO` and its context (tool calls, a pre-registered client) as JSON in
//! `MCP_CONFORMANCE_CONTEXT`, then judges what the client did on the wire. The client exits 0
//! when the scenario ran to its end, 1 with the reason on stderr otherwise. A tool call the
//! scenario did not ask for (the client calls every listed tool) that fails is reported on
//! stderr and the scenario goes on: the server's answer is the scenario's to judge, not a
//! failure of the client.

use std::process::ExitCode;
use std::time::Duration;

use mcp_readiness::{ServerSpec, TransportSpec};
use tracing_subscriber::EnvFilter;

mod answers;
mod arguments;
mod auth;
mod browser;
mod context;
mod stack;

use context::Context;
use stack::{SERVER, Stack};

/// Writes one line to stderr; a stderr that is closed or full loses it instead of panicking.
fn say(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// The suite kills a client after 30 s; end before that with a reason of our own.
const SCENARIO_DEADLINE: Duration = Duration::from_secs(25);

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let Some(url) = std::env::args().skip(1).last() else {
        say("usage: conformance-client <server URL> (the suite passes it)");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            say(&format!("error: could not start the async runtime: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(async {
        let context = Context::from_env()?;
        tracing::info!(scenario, url, "scenario starts");
        tokio::time::timeout(SCENARIO_DEADLINE, run(&scenario, &url, &context))
            .await
            .map_err(|_| {
                format!("scenario `{scenario}` did not end within {SCENARIO_DEADLINE:?}")
            })?
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // The scenario is named: the suite's summary of a failed client is read by
            // conformance/tests/suite.rs, which runs that scenario again alone.
            say(&format!(
                "conformance-client failed scenario `{scenario}`: {err}"
            ));
            ExitCode::FAILURE
        }
    }
}

/// Runs one scenario: authorize where it asks ([`auth::run`]), connect through the Hub, list the
/// tools, call the scenario's tools (or every tool) through the layer, close.
async fn run(scenario: &str, url: &str, context: &Context) -> Result<(), String> {
    if scenario.starts_with("auth/") {
        return auth::run(scenario, url, context).await;
    }
    let spec = ServerSpec::new(SERVER, TransportSpec::http(url.to_owned()));
    let stack = Stack::start(spec)?;
    let result = exercise(scenario, &stack, context).await;
    stack.shutdown().await;
    result
}

/// Lists the tools and calls the scenario's (or every one, with arguments from its schema).
pub(crate) async fn exercise(
    scenario: &str,
    stack: &Stack,
    context: &Context,
) -> Result<(), String> {
    let tools = stack.ready_tools().await?;
    tracing::info!(tools = tools.len(), "listed tools");
    if scenario == "json-schema-2020-12-preservation" {
        // The scenario asks for the focal tool's inputSchema, as this client holds it, back
        // through its echo tool: what the Hub keeps of a schema is what the suite judges.
        let focal = tools
            .iter()
            .find(|t| t.name == "json_schema_2020_12_tool")
            .ok_or("the scenario's server lists no json_schema_2020_12_tool")?;
        let mut arguments = serde_json::Map::new();
        arguments.insert(
            "schema".to_owned(),
            serde_json::Value::Object((*focal.input_schema).clone()),
        );
        stack.call("json_schema_echo", Some(arguments)).await?;
        return Ok(());
    }
    if context.tool_calls.is_empty() {
        for tool in &tools {
            match stack.call(&tool.name, arguments::for_tool(tool)).await {
                Ok(_) => {}
                // Not ready, or a login could fix it: the scenario cannot go on as it is.
                Err(failure)
                    if matches!(failure, stack::CallFailure::NotReady(_))
                        || failure.needs_authorization() =>
                {
                    return Err(failure.into());
                }
                Err(failure) => tracing::warn!(%failure, "a call the scenario did not ask for"),
            }
        }
    } else {
        for call in &context.tool_calls {
            stack.call(&call.name, call.arguments.clone()).await?;
        }
    }
    Ok(())
}
