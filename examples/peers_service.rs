//! A whole small agent service that keeps its own rmcp connections and adopts the crate through
//! `Peers`: docs/own-connections.md's example.
//!
//! An axum service that calls MCP tools for its clients (`POST /tools/{tool}` with the tool's
//! arguments as a JSON body). It connects its servers itself, as it always did (a command over
//! stdio, a URL over streamable HTTP), hands each connection, or the error of a failed connect, to
//! `Peers`, puts `ReadinessLayer` around each call, answers a failure in one line (`HttpFailure`:
//! `503` with the state, action and reason when not ready), serves `/metrics` and the status page
//! beside its own routes, and on SIGTERM or Ctrl-C stops taking requests and closes its
//! connections. `Peers` does not reconnect: a dropped server stays `absent` until the service
//! connects it again (the `Hub` does that: examples/hub_service.rs).
//!
//! The lines marked `// glue` are everything the service adds or changes to adopt the crate
//! (imports apart: the lines marked `// glue: import`). A test counts them
//! (`e2e/tests/e2e/examples.rs`) and compares the count with what docs/own-connections.md says.
//!
//! ```sh
//! cargo build -p mcp-readiness-cli
//! target/debug/mcp-readiness demo-server wiki --http 127.0.0.1:8931 &
//! cargo run --example peers_service -- 127.0.0.1:3000 \
//!     "notes=target/debug/mcp-readiness demo-server notes" wiki=http://127.0.0.1:8931/mcp
//! curl -d '{"query": "standup"}' http://127.0.0.1:3000/tools/mcp__wiki__search   # 200: the result
//! curl http://127.0.0.1:3000/status
//! ```

use axum::Router;
use axum::extract::{Path, State};
use axum::routing::post;
use mcp_readiness::layer::{HttpFailure, ReadinessService}; // glue: import
use mcp_readiness::rmcp::ServiceExt as _;
use mcp_readiness::rmcp::service::{RoleClient, RunningService};
use mcp_readiness::rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use mcp_readiness::{Metrics, ReadinessLayer, ToolCall, supervise::Peers}; // glue: import
use tokio::signal::unix::{SignalKind, signal};
use tower::{BoxError, Layer, ServiceExt}; // glue: import

/// A handler's answer: the tool's result as JSON, or the failure as its HTTP answer.
type Answer = Result<String, HttpFailure>; // glue

/// The service's MCP tools, as its handlers see them.
type Tools = ReadinessService<Peers>; // glue

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    // `LISTEN NAME=COMMAND...` (stdio) or `NAME=http(s)://...` (streamable HTTP).
    let mut args = std::env::args().skip(1);
    let listen = args.next().unwrap_or_else(|| "127.0.0.1:3000".into());
    let servers: Vec<(String, String)> = args
        .filter_map(|arg| {
            arg.split_once('=')
                .map(|(n, t)| (n.to_owned(), t.to_owned()))
        })
        .collect();

    let metrics = Metrics::new(); // glue
    let peers = Peers::with_events(metrics.clone()); // glue
    for (name, target) in &servers {
        peers.connecting(name); // glue
        match connect(target).await {
            Ok(running) => drop(peers.insert(name.as_str(), running).await), // glue
            Err(error) => peers.failed(name, error),                         // glue
        }
    }
    let readiness = ReadinessLayer::builder(peers.clone()).metrics(metrics.clone()); // glue
    let tools: Tools = readiness.build().layer(peers.clone()); // glue

    let app = Router::new()
        .route("/tools/{tool}", post(call_tool))
        .with_state(tools)
        .merge(mcp_readiness::exporter::router(metrics)); // glue
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(stop_signal())
        .await?;
    peers.shutdown(); // glue
    println!("stopped");
    Ok(())
}

/// One connection, made the way the service always made it.
async fn connect(target: &str) -> Result<RunningService<RoleClient, ()>, BoxError> {
    if target.starts_with("http://") || target.starts_with("https://") {
        Ok(
            ().serve(StreamableHttpClientTransport::from_uri(target))
                .await?,
        )
    } else {
        let mut words = target.split_whitespace();
        let mut command = tokio::process::Command::new(words.next().unwrap_or_default());
        command.args(words);
        Ok(().serve(TokioChildProcess::new(command)?).await?)
    }
}

/// One tool call for a client: the result as JSON, or the failure as its HTTP answer.
async fn call_tool(State(tools): State<Tools>, Path(tool): Path<String>, body: String) -> Answer {
    let arguments = serde_json::from_str(&body).unwrap_or_default();
    let call = ToolCall::new(tool.as_str()).with_arguments(arguments); // glue
    let result = tools.oneshot(call).await?; // glue
    Ok(serde_json::to_string(&result).unwrap_or_default())
}

/// Resolves at SIGTERM or Ctrl-C.
async fn stop_signal() {
    let Ok(mut terminate) = signal(SignalKind::terminate()) else {
        return;
    };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
