//! An agent service that pushes its readiness metrics over OTLP and has no scrape endpoint, for
//! `oncall::prometheus::otlp`: the servers of the configuration file given as its one argument
//! (a `.mcp.json`), a Hub and the `ReadinessLayer` recording into `Metrics` whose meter is
//! `telemetry::init_metrics()`'s (the standard `OTEL_*` variables say where and how often), and a
//! tool call to `mcp__<server>__echo` for every server every 200 ms, so that the calls a server
//! that is not ready refuses are counted. It runs until it is killed.

use std::time::Duration;

use mcp_readiness::HubOptions;
use mcp_readiness::{Config, Hub, Metrics, ToolCall};
use tower::{Service as _, ServiceBuilder, ServiceExt as _};

#[tokio::main]
async fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: otlp-agent <configuration file>");
    let config = Config::load(&path).expect("a valid configuration file");
    let otlp = mcp_readiness::telemetry::init_metrics().expect("the OTLP metric exporter");
    assert!(
        otlp.meter().is_some(),
        "no OTLP endpoint: set OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
    );
    let metrics = Metrics::builder()
        .meter(otlp.meter())
        .build()
        .expect("the recorder");
    let names: Vec<String> = config.servers.iter().map(|s| s.name.to_string()).collect();
    let hub = Hub::new(
        config.servers,
        HubOptions::builder().event_sink(metrics.clone()),
    )
    .expect("a hub");
    hub.connect_all();
    let budget = config.readiness.budget;
    let servers = names.iter().map(String::as_str);
    let layer =
        mcp_readiness_fixtures::agent_service::budgeted_layer(&hub, &metrics, budget, servers);
    let service = ServiceBuilder::new().layer(layer).service(hub.clone());
    eprintln!("otlp-agent: {} servers, pushing metrics", names.len());
    loop {
        for name in &names {
            let mut service = service.clone();
            let call = ToolCall::new(format!("mcp__{name}__echo"))
                .with_arguments(serde_json::json!({ "text": "hi" }));
            tokio::spawn(async move {
                if let Ok(ready) = service.ready().await {
                    let _ = ready.call(call).await;
                }
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
