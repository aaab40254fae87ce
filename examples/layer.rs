//! Put the readiness layer in front of your MCP calls, scrape `/metrics`, and see state-tagged
//! spans.
//!
//! ```sh
//! cargo run --example layer --features otlp-http -- npx -y @modelcontextprotocol/server-filesystem /tmp
//! ```
//!
//! The arguments are the stdio MCP server to start as server `files`; without any, the example
//! starts the end-to-end tests' fixture server (`cargo build -p mcp-readiness-e2e --bin fixture-server`
//! first).

use std::time::Duration;

use mcp_readiness::{Budget, Hub, HubOptions, Metrics, ServerSpec, ToolCall, TransportSpec};
use mcp_readiness::{NotReady, ReadinessLayer};
use tower::{ServiceBuilder, ServiceExt};

#[tokio::main]
async fn main() -> Result<(), tower::BoxError> {
    let _telemetry = mcp_readiness::telemetry::init()?; // OTLP export when OTEL_EXPORTER_OTLP_* is set
    let mut command: Vec<String> = std::env::args().skip(1).collect();
    if command.is_empty() {
        // The fixture MCP server of the end-to-end tests: `cargo build -p mcp-readiness-e2e`.
        command.push(env!("CARGO_MANIFEST_DIR").to_owned() + "/target/debug/fixture-server");
    }
    let files = ServerSpec {
        name: "files".into(),
        transport: TransportSpec::Stdio {
            command: command.remove(0),
            args: command,
            env: Default::default(),
            cwd: None,
        },
    };

    // The ten lines: supervised connections, metrics, the layer, one service for every call.
    let metrics = Metrics::new();
    let hub = Hub::new(
        vec![files],
        HubOptions::builder().event_sink(metrics.clone()),
    )?;
    let layer = ReadinessLayer::builder(hub.clone())
        .budget(Budget::try_new(
            Duration::from_secs(20),
            Duration::from_secs(2),
        )?)
        .metrics(metrics.clone())
        .build();
    let tools = ServiceBuilder::new().layer(layer).service(hub.clone());
    let exporter = mcp_readiness::exporter::serve(metrics.clone(), "127.0.0.1:0".parse()?).await?;
    println!("metrics at http://{}/metrics", exporter.local_addr());

    for name in [
        "mcp__files__list_allowed_directories",
        "mcp__files__echo",
        "mcp__github__search_issues",
    ] {
        match tools
            .clone()
            .oneshot(ToolCall::new(name).idempotent(true))
            .await
        {
            Ok(result) => println!("{name}: ok (isError: {:?})", result.is_error),
            Err(err) => match err.downcast_ref::<NotReady>() {
                Some(not_ready) => println!("{name}: {} -> {}", not_ready.state(), not_ready),
                None => println!("{name}: failed: {err}"),
            },
        }
    }
    println!(
        "\n{}",
        metrics
            .render()
            .lines()
            .filter(|l| l.starts_with("mcp_readiness_tool_calls_total"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    hub.shutdown().await;
    exporter.shutdown().await?;
    Ok(())
}
