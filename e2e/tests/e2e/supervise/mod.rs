//! The supervisor's room: supervised connections proven on real MCP servers, the fixture server
//! (`fixtures/src/server.rs`, rmcp) over real stdio and real HTTP on 127.0.0.1 and a third-party
//! server from the npm registry. Restarts ([`restarts`]), authorization over HTTP ([`authorization`]),
//! isolation and what the hub hears by itself ([`isolation`]), a child's own exit ([`exits`]), event streams cut after their headers ([`streams`]), bad input ([`bad_input`]), faults
//! with the real binary ([`faults`]), the npm server ([`npm`]). The helpers they share are here.
#![cfg(target_os = "linux")]

mod authorization;
mod bad_input;
mod exits;
mod faults;
mod isolation;
mod npm;
mod restarts;
mod streams;

use mcp_readiness_fixtures::call::failure;
use mcp_readiness_fixtures::configure::http_fixture_with_env;
use mcp_readiness_fixtures::process::Guard;
use mcp_readiness_fixtures::{Scratch, alive, eventually};

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_readiness::secret::Secret;
use mcp_readiness::{
    Hub, HubOptions, ServerSpec, TransportSpec,
    client::{AfterConnect, CallErrorKind, ConnectError, NotConnected},
    state::{ConnectResult, ConnectionEvent},
    supervise::HubOptionsBuilder,
};
use mcp_readiness::{Inventory, State, ToolCall};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use tokio::time::Instant;

// ---------------------------------------------------------------------------------------------
// helpers

use mcp_readiness_fixtures::fixture;

/// How long a test waits for what a hub does by itself.
const WAIT: Duration = Duration::from_secs(10);

async fn assert_all_gone(pids: &[u32]) {
    assert!(!pids.is_empty(), "the test should have started processes");
    mcp_readiness_fixtures::process::assert_all_gone(
        "the hub's processes to exit",
        pids,
        Duration::from_secs(5),
    )
    .await;
}

/// Shuts the hub down and waits for every process the scratch's log saw started to exit.
async fn shut_down(hub: &Hub, scratch: &Scratch) {
    let pids = scratch.pids();
    hub.shutdown().await;
    assert_all_gone(&pids).await;
}

/// A stdio server that runs `command` with `args` and no environment.
fn command(name: &str, command: &str, args: Vec<String>) -> ServerSpec {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    mcp_readiness_fixtures::configure::command(name, command, &args)
}

/// The pid of `server`'s child, as the fixture's `pid` tool answers through the hub.
async fn child_pid(hub: &Hub, server: &str) -> u32 {
    let call = ToolCall::new(format!("mcp__{server}__pid"));
    text(&hub.call(call).await.unwrap()).parse().unwrap()
}

/// As [`failure`], and asserts the connect result the error carries.
async fn refused_with(
    hub: &Hub,
    tool: &str,
    result: ConnectResult,
) -> mcp_readiness::client::CallError {
    let error = failure(hub, tool).await;
    assert_eq!(error.connect_result(), Some(result), "{error}");
    error
}

/// Sends `signal` (`-9`, `-STOP`, …) to `pid`.
fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pid}");
}

fn stdio(name: &str, scratch: &Scratch, env: &[(&str, &str)]) -> ServerSpec {
    let mut vars: BTreeMap<String, Secret> = env
        .iter()
        .map(|(k, v)| (k.to_string(), Secret::new(*v)))
        .collect();
    vars.insert(
        "FIXTURE_LOG".into(),
        Secret::new(scratch.path("log").to_string_lossy()),
    );
    ServerSpec {
        name: name.into(),
        transport: TransportSpec::Stdio {
            command: fixture().to_string_lossy().into_owned(),
            args: vec![],
            env: vars,
            cwd: None,
        },
    }
}

fn options() -> HubOptionsBuilder {
    HubOptions::builder()
        .connect_timeout(Duration::from_secs(20))
        .call_timeout(Duration::from_secs(20))
        .health_interval(None)
}

type Events = Arc<Mutex<Vec<ConnectionEvent>>>;

fn recording(options: HubOptionsBuilder) -> (HubOptionsBuilder, Events) {
    let events: Events = Arc::default();
    let sink = {
        let events = events.clone();
        move |e: &ConnectionEvent| events.lock().unwrap().push(e.clone())
    };
    (options.event_sink(sink), events)
}

fn attempts(events: &Events, result: ConnectResult) -> usize {
    events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, ConnectionEvent::ConnectAttempt { result: r, .. } if *r == result))
        .count()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

fn provision_account() -> AfterConnect {
    Arc::new(|session| {
        Box::pin(async move {
            let params = CallToolRequestParams::new("add_account")
                .with_arguments(json!({"account": "yahoo"}).as_object().cloned().unwrap());
            session.call_tool(params).await.map(|_| ()).map_err(|e| {
                ConnectError::new(
                    ConnectResult::ProtocolError,
                    format!("provisioning failed: {e}"),
                )
            })
        })
    })
}

fn emails(result: &CallToolResult) -> usize {
    let value: Value = serde_json::from_str(&text(result)).unwrap();
    value["emails"].as_array().unwrap().len()
}

/// Starts the fixture as an HTTP server (logging to the scratch's `log`) and returns its guard
/// and URL.
async fn http_fixture(scratch: &Scratch, token: &str) -> (Guard, String) {
    let log = scratch.path("log").display().to_string();
    let (guard, port) = http_fixture_with_env(scratch, token, &[("FIXTURE_LOG", &log)]).await;
    (guard, format!("http://127.0.0.1:{port}/mcp"))
}

fn http(name: &str, url: &str, token: Option<&str>) -> ServerSpec {
    mcp_readiness_fixtures::configure::http_spec(name, url, token)
}
