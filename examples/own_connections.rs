//! An existing agent service that keeps its own rmcp connections, and gains the readiness layer,
//! metrics and the status page through [`Peers`], without handing its connections to a `Hub`.
//!
//! ```sh
//! cargo build -p mcp-readiness-e2e --bin fixture-server            # the MCP server it connects to
//! cargo run -p mcp-readiness-e2e --example own_connections            # runs once, prints what happened, exits
//! cargo run -p mcp-readiness-e2e --example own_connections -- --serve # keeps /metrics and the status page up
//! ```
//!
//! The service connects three servers the way it always did: `files` (the fixture server over
//! stdio), `web` (the fixture over streamable HTTP with the right bearer token) and `crm` (the
//! same endpoint with a revoked token: 401). The 12 lines marked `// adapter` are all it adds
//! for the registry, the layer, the metrics and the status page: one `use`, three set-up lines,
//! four around its own connect code, four for the layer.
//!
//! Then the `files` server is killed (SIGKILL): it is `absent` within milliseconds and its calls
//! are refused as not ready instead of being sent to the dead peer.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use mcp_readiness::rmcp::ServiceExt;
use mcp_readiness::rmcp::model::{CallToolResult, ContentBlock};
use mcp_readiness::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use mcp_readiness::rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use mcp_readiness::{CallFailure, Metrics, ReadinessLayer, State, ToolCall, supervise::Peers}; // adapter
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

const TOKEN: &str = "own-connections-token-4b1d";

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let serve = std::env::args().any(|a| a == "--serve");
    let fixture = fixture_path()?;
    // Someone else's MCP server over HTTP, for the example only.
    let (_http_server, port) = start_http_fixture(&fixture).await?;
    let url = format!("http://127.0.0.1:{port}/mcp");

    let metrics = Metrics::new(); // adapter
    let peers = Peers::with_events(metrics.clone()); // adapter
    let status = mcp_readiness::exporter::serve(metrics.clone(), "127.0.0.1:0".parse()?).await?; // adapter

    // The service's own connections, made as before; each handed over once it is up.
    for (name, transport) in [("files", "pipe"), ("web", "tcp"), ("crm", "tcp")] {
        peers.connecting(name); // adapter
        peers.set_network_transport(name, transport); // adapter
        let connected = match name {
            "files" => {
                ().serve(TokioChildProcess::new(tokio::process::Command::new(
                    &fixture,
                ))?)
                .await
            }
            _ => {
                let token = if name == "web" {
                    TOKEN
                } else {
                    "revoked-token"
                };
                let config =
                    StreamableHttpClientTransportConfig::with_uri(url.clone()).auth_header(token);
                ().serve(StreamableHttpClientTransport::from_config(config))
                    .await
            }
        };
        match connected {
            Ok(running) => drop(peers.insert(name, running).await), // adapter
            Err(error) => peers.failed(name, error),                // adapter
        }
    }
    let layer = ReadinessLayer::builder(peers.clone()).metrics(metrics.clone()); // adapter
    let tools = ServiceBuilder::new() // adapter
        .layer(layer.build()) // adapter
        .service(peers.clone()); // adapter

    println!("status page on http://{}/status", status.local_addr());
    let files_pid = {
        let answer = call(&tools, "mcp__files__pid").await?;
        text(&answer).trim().parse::<u32>()?
    };
    for tool in [
        "mcp__web__echo",
        "mcp__crm__echo",
        "mcp__web__json_rpc_error",
    ] {
        report(tool, tools.clone().oneshot(echo(tool)).await);
    }
    // Resources, prompts, anything else: the service still has its peer.
    if let Some(peer) = peers.peer("web") {
        println!(
            "web lists {} tools through its own peer",
            peer.list_all_tools().await?.len()
        );
    }

    std::process::Command::new("kill")
        .args(["-KILL", &files_pid.to_string()])
        .status()?;
    let killed = tokio::time::Instant::now();
    while peers.state("files") != Some(State::Absent) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    println!(
        "files killed: absent after {} ms",
        killed.elapsed().as_millis()
    );
    report(
        "mcp__files__echo",
        tools.clone().oneshot(echo("mcp__files__echo")).await,
    );

    let (_, exposition) = get(status.local_addr(), "/metrics").await?;
    for line in exposition
        .lines()
        .filter(|l| l.starts_with("mcp_readiness_server_state{") && l.ends_with(" 1"))
    {
        println!("{line}");
    }
    let (_, page) = get(status.local_addr(), "/status").await?;
    let rows = page.matches("<tr data-server=").count();
    println!("status page rows: {rows}");
    if serve {
        println!("serving; Ctrl-C to stop");
        tokio::signal::ctrl_c().await?;
    }
    status.shutdown().await?;
    Ok(())
}

fn echo(tool: &str) -> ToolCall {
    ToolCall::new(tool).with_arguments(serde_json::json!({ "text": "hello" }))
}

async fn call<S>(tools: &S, tool: &str) -> Result<CallToolResult, BoxError>
where
    S: tower::Service<ToolCall, Response = CallToolResult, Error = BoxError> + Clone,
{
    tools.clone().oneshot(ToolCall::new(tool)).await
}

/// One line per call: how it ended, and for a refusal the state and the next step.
fn report(tool: &str, result: Result<CallToolResult, BoxError>) {
    match result {
        Ok(answer) => println!("{tool}: ok ({})", text(&answer)),
        Err(error) => {
            let failure = CallFailure::of(&error);
            let action = failure
                .action()
                .map(|a| format!(" -> {a}"))
                .unwrap_or_default();
            println!("{tool}: {}{action}", failure.outcome());
        }
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

/// The `fixture-server` binary of this package, next to `examples/` in `target/<profile>/`.
fn fixture_path() -> Result<PathBuf, BoxError> {
    let dir = std::env::current_exe()?
        .parent()
        .and_then(|examples| examples.parent())
        .map(PathBuf::from)
        .ok_or("no directory for this example")?;
    let path = dir.join("fixture-server");
    if !path.exists() {
        return Err(format!(
            "{} not found: run `cargo build -p mcp-readiness-e2e --bin fixture-server`",
            path.display()
        )
        .into());
    }
    Ok(path)
}

/// The fixture over streamable HTTP on a free loopback port, requiring `TOKEN`.
async fn start_http_fixture(fixture: &PathBuf) -> Result<(tokio::process::Child, u16), BoxError> {
    let mut child = tokio::process::Command::new(fixture)
        .arg("--http")
        .env("FIXTURE_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    while let Some(line) = lines.next_line().await? {
        if let Some(port) = line.strip_prefix("PORT ") {
            return Ok((child, port.trim().parse()?));
        }
    }
    Err("the HTTP fixture exited before printing its port".into())
}

/// A plain HTTP/1.0 GET: (status line, body).
async fn get(addr: std::net::SocketAddr, target: &str) -> Result<(String, String), BoxError> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(format!("GET {target} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    Ok((
        head.lines().next().unwrap_or_default().to_owned(),
        body.to_owned(),
    ))
}
