//! `mcp-readiness call`: one tool call through the readiness layer and the Hub, as a service would
//! make it. It is what on-call runs to see whether a fix worked: the server is `ready` and one
//! call succeeds.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use mcp_readiness::CallFailure;
use mcp_readiness::rmcp::model::CallToolResult;
use mcp_readiness::secret::{echo, escape_controls};
use mcp_readiness::{Budget, Metrics, ReadinessLayer, ToolCall, ToolName};
use serde_json::{Map, Value, json};
use tower::{ServiceBuilder, ServiceExt as _};

use super::common::{
    EXIT_INVALID, hub_options, load_config, parse_duration, print_stdout, start_hub,
};
use super::signals::{StopSignals, run_until_stop_signal};

/// Arguments of `mcp-readiness call`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The `.mcp.json`-style configuration file.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The tool to call: `mcp__<server>__<tool>`.
    #[arg(value_name = "TOOL")]
    tool: String,
    /// The call's arguments: a JSON object.
    #[arg(long, value_name = "JSON")]
    args: Option<String>,
    /// How long to wait for the server while it is still connecting (overrides the file's
    /// budget for this server).
    #[arg(long, value_name = "D", value_parser = parse_duration, allow_hyphen_values = true)]
    budget: Option<Duration>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The parsed, checked input of one call.
struct Request {
    tool: ToolName,
    arguments: Option<Map<String, Value>>,
}

fn request(args: &Args) -> Result<Request, String> {
    let tool = ToolName::parse(&args.tool);
    if tool.is_builtin() || tool.tool().is_empty() || tool.tool() == "*" {
        return Err(format!(
            "`{}` is not an MCP tool name: write mcp__<server>__<tool>, e.g. mcp__github__search_issues",
            echo(&args.tool)
        ));
    }
    let arguments = match &args.args {
        None => None,
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Some(map),
            Ok(other) => {
                return Err(format!(
                    "--args: expected a JSON object such as '{{\"query\": \"x\"}}', found {}",
                    kind(&other)
                ));
            }
            Err(err) => return Err(format!("--args is not valid JSON: {err}")),
        },
    };
    Ok(Request { tool, arguments })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) async fn run(args: Args) -> ExitCode {
    let request = match request(&args) {
        Ok(request) => request,
        Err(err) => {
            err_line!("error: {err}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let config = match load_config(&args.config) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let server = request.tool.server().to_owned();
    let configured = config
        .readiness
        .servers
        .get(&server)
        .and_then(|s| s.budget)
        .unwrap_or(config.readiness.budget);
    if args.budget.is_some_and(|budget| budget < Budget::MIN_POLL) {
        err_line!(
            "error: --budget: must be at least 1ms (how long the call may wait for a server that \
             is still connecting): use e.g. 10s"
        );
        return ExitCode::from(EXIT_INVALID);
    }
    let budget = match Budget::try_new(
        args.budget.unwrap_or(configured.wait()),
        configured
            .poll()
            .min(args.budget.unwrap_or(configured.wait())),
    ) {
        Ok(budget) => budget,
        Err(err) => {
            err_line!("error: --budget: {err}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    // Only the server the tool names is started: a call does not spawn the whole fleet. A server
    // that is not configured is `absent`, as it is for a service.
    let specs: Vec<_> = config
        .servers
        .iter()
        .filter(|s| *s.name == *server)
        .cloned()
        .collect();
    let specs_empty = specs.is_empty();
    let mut signals = match StopSignals::install() {
        Ok(signals) => signals,
        Err(code) => return code,
    };
    let metrics = Metrics::new();
    let options = hub_options(&config)
        .health_interval(None)
        .event_sink(metrics.clone());
    let hub = match start_hub(&args.config, specs, options) {
        Ok(hub) => hub,
        Err(code) => return code,
    };
    hub.connect_all();
    let mut layer = ReadinessLayer::builder(hub.clone())
        .budget(budget)
        .metrics(metrics);
    if args.budget.is_some() {
        // `--budget` wins over the server's own budget from the file (which the Hub offers, and
        // which would otherwise win over the layer's default).
        layer = layer.server_budget(server.as_str(), budget);
    }
    let layer = layer.build();
    let service = ServiceBuilder::new().layer(layer).service(hub.clone());
    let mut call = ToolCall::new(request.tool.clone());
    call.arguments = request.arguments;
    let started = tokio::time::Instant::now();
    let answer = match run_until_stop_signal(&mut signals, &hub, service.oneshot(call)).await {
        Ok(answer) => answer,
        Err(code) => return code,
    };
    let elapsed = started.elapsed();
    let mut report = Report::new(&request.tool, budget, elapsed, &answer);
    if specs_empty && report.reason.is_none() {
        report.reason = Some(format!(
            "server `{server}` is not in `mcpServers` of {}",
            args.config.display()
        ));
    }
    hub.shutdown().await;
    let output = if args.json {
        report.json().to_string() + "\n"
    } else {
        report.text()
    };
    if let Err(code) = print_stdout(&output) {
        return code;
    }
    if report.succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// What one call came to, for both outputs.
struct Report {
    tool: String,
    server: String,
    state: String,
    outcome: &'static str,
    waited_ms: Option<u128>,
    elapsed_ms: u128,
    timed_out: bool,
    action: Option<&'static str>,
    next_step: Option<String>,
    reason: Option<String>,
    result: Option<CallToolResult>,
    succeeded: bool,
}

impl Report {
    fn new(
        tool: &ToolName,
        budget: Budget,
        elapsed: Duration,
        answer: &Result<CallToolResult, tower::BoxError>,
    ) -> Report {
        let mut report = Report {
            tool: tool.as_str().to_owned(),
            server: tool.server().to_owned(),
            state: "ready".to_owned(),
            outcome: "ok",
            waited_ms: None,
            elapsed_ms: elapsed.as_millis(),
            timed_out: false,
            action: None,
            next_step: None,
            reason: None,
            result: None,
            succeeded: false,
        };
        match answer {
            Ok(result) => {
                let is_error = result.is_error.unwrap_or(false);
                report.outcome = if is_error { "tool_error" } else { "ok" };
                report.succeeded = !is_error;
                report.result = Some(result.clone());
            }
            Err(err) => {
                let failure = CallFailure::of(err);
                report.outcome = failure.outcome().as_str();
                match failure.not_ready() {
                    Some(not_ready) => {
                        report.state = not_ready.state().to_string();
                        report.waited_ms = Some(not_ready.waited().as_millis());
                        report.timed_out = not_ready.timed_out();
                        report.action = Some(not_ready.action().as_str());
                        report.next_step = Some(if not_ready.timed_out() {
                            format!(
                                "{} (it was still connecting after the {} budget)",
                                not_ready.action().next_step(&echo(&report.server)),
                                humantime::format_duration(budget.wait())
                            )
                        } else {
                            not_ready.action().next_step(&echo(&report.server))
                        });
                        report.reason = not_ready.reason().map(str::to_owned);
                    }
                    None => {
                        if let Some(state) = failure.state() {
                            report.state = state.to_string();
                        }
                        report.action = failure.action().map(|a| a.as_str());
                        // The call reached the server and failed there (it crashed, hung up,
                        // timed out): the action's next step, as for a server that was not ready.
                        report.next_step =
                            failure.action().map(|a| a.next_step(&echo(&report.server)));
                        report.reason = Some(err.to_string());
                    }
                }
            }
        }
        report
    }

    fn json(&self) -> Value {
        json!({
            "tool": self.tool,
            "server": self.server,
            "state": self.state,
            "outcome": self.outcome,
            "waited_ms": self.waited_ms,
            "elapsed_ms": self.elapsed_ms,
            "timed_out": self.timed_out,
            "action": self.action,
            "next_step": self.next_step,
            "reason": self.reason,
            "result": self.result.as_ref().and_then(|r| serde_json::to_value(r).ok()),
        })
    }

    fn text(&self) -> String {
        let mut out = format!("{}: {}", echo(&self.tool), self.state);
        match self.waited_ms {
            Some(waited) => out += &format!(", waited {waited} ms"),
            None => out += &format!(", call took {} ms", self.elapsed_ms),
        }
        out += &format!(", outcome {}\n", self.outcome);
        if let Some(action) = self.action {
            out += &format!("action: {action}\n");
        }
        if let Some(next) = &self.next_step {
            out += &format!("next step: {}\n", escape_controls(next));
        }
        if let Some(reason) = &self.reason {
            out += &format!("reason: {}\n", escape_controls(reason));
        }
        if let Some(result) = &self.result {
            for content in &result.content {
                match content.as_text() {
                    Some(text) => out += &escape_controls(&text.text),
                    None => {
                        out += &escape_controls(&serde_json::to_string(content).unwrap_or_default())
                    }
                }
                out.push('\n');
            }
            if let Some(structured) = &result.structured_content {
                out += &format!("structured: {structured}\n");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(tool: &str, json_args: Option<&str>) -> Args {
        Args {
            config: PathBuf::from("mcp.json"),
            tool: tool.to_owned(),
            args: json_args.map(str::to_owned),
            budget: None,
            json: false,
        }
    }

    #[test]
    fn a_name_that_is_not_an_mcp_tool_is_refused_with_the_form_to_write() {
        for bad in ["search", "mcp__github", "mcp__github__*", "mcp____x"] {
            let err = request(&args(bad, None)).err().unwrap_or_default();
            assert!(err.contains("mcp__<server>__<tool>"), "{bad}: {err}");
        }
        assert!(request(&args("mcp__github__search_issues", None)).is_ok());
    }

    #[test]
    fn arguments_must_be_a_json_object() {
        let err = request(&args("mcp__a__b", Some("[1]")))
            .err()
            .unwrap_or_default();
        assert!(err.contains("found an array"), "{err}");
        let err = request(&args("mcp__a__b", Some("{")))
            .err()
            .unwrap_or_default();
        assert!(err.contains("not valid JSON"), "{err}");
        let ok = request(&args("mcp__a__b", Some(r#"{"q": "x"}"#)))
            .ok()
            .unwrap();
        assert_eq!(ok.arguments.unwrap()["q"], "x");
    }
}
