//! A whole small agent service that adopts the crate through the `Hub`: the README's example.
//!
//! An axum service that calls MCP tools for its clients (`POST /tools/{tool}` with the tool's
//! arguments as a JSON body). It loads a `.mcp.json`, lets the `Hub` make and supervise every
//! connection, puts `ReadinessLayer` around each call, answers a failure in one line
//! (`HttpFailure`: `503` with the state, action and reason when not ready), serves `/metrics`
//! and the status page beside its own routes, and on SIGTERM or Ctrl-C stops taking requests and
//! shuts the hub down (every stdio child and its process group).
//!
//! The lines marked `// glue` are everything the service adds or changes to adopt the crate
//! (imports apart: the lines marked `// glue: import`). A test counts them
//! (`e2e/tests/e2e/examples.rs`) and compares the count with what the README and
//! docs/architecture.md say.
//!
//! ```sh
//! cargo build -p mcp-readiness-cli     # examples/fleet.mcp.json runs `mcp-readiness demo-server`
//! PATH=$PWD/target/debug:$PATH cargo run --example hub_service -- examples/fleet.mcp.json 127.0.0.1:3000
//! curl -d '{"query": "standup"}' http://127.0.0.1:3000/tools/mcp__notes__search_notes   # 200: the result
//! curl -i -d '{}' http://127.0.0.1:3000/tools/mcp__tickets__search_tickets             # 503: absent
//! curl http://127.0.0.1:3000/metrics
//! ```

use axum::Router;
use axum::extract::{Path, State};
use axum::routing::post;
use mcp_readiness::layer::{HttpFailure, ReadinessService}; // glue: import
use mcp_readiness::{Config, Hub, Metrics, ReadinessLayer, ToolCall}; // glue: import
use tokio::signal::unix::{SignalKind, signal};
use tower::{BoxError, Layer, ServiceExt}; // glue: import

/// A handler's answer: the tool's result as JSON, or the failure as its HTTP answer.
type Answer = Result<String, HttpFailure>; // glue

/// The service's MCP tools, as its handlers see them.
type Tools = ReadinessService<Hub>; // glue

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let config_file = args.next().unwrap_or_else(|| ".mcp.json".into());
    let listen = args.next().unwrap_or_else(|| "127.0.0.1:3000".into());

    let config = Config::load(&config_file)?; // glue
    let metrics = Metrics::new(); // glue
    let hub = config.hub(|options| options.event_sink(metrics.clone()))?; // glue
    hub.connect_all(); // glue
    let readiness = ReadinessLayer::builder(hub.clone()).budget(config.readiness.budget); // glue
    let readiness = readiness.metrics(metrics.clone()).build(); // glue
    let tools: Tools = readiness.layer(hub.clone()); // glue

    let app = Router::new()
        .route("/tools/{tool}", post(call_tool))
        .with_state(tools)
        .merge(mcp_readiness::exporter::router(metrics)); // glue
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(stop_signal())
        .await?;
    hub.shutdown().await; // glue
    println!("stopped");
    Ok(())
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
