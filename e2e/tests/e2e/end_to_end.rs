//! The readiness layer in front of a real Hub and a real MCP server process: reconnect on use and
//! absent commands. (Trace propagation has its own binary, `e2e/tests/trace_propagation.rs`.)

use mcp_readiness_fixtures::call::{answer, refusal};
use mcp_readiness_fixtures::configure::command;
use mcp_readiness_fixtures::{eventually, stdio, text};

use std::time::Duration;

use mcp_readiness::HubOptions;
use mcp_readiness::ReadinessLayer;
use mcp_readiness::{Budget, Hub, State, ToolCall};
use tower::{ServiceBuilder, ServiceExt};

#[tokio::test]
async fn a_child_that_died_between_calls_is_reconnected_by_the_next_call_through_the_layer() {
    let hub = Hub::new(
        vec![stdio("fx", &[])],
        HubOptions::builder().health_interval(None),
    )
    .unwrap();
    let layer = ReadinessLayer::builder(hub.clone())
        .budget(Budget::try_new(Duration::from_secs(20), Duration::from_millis(200)).unwrap())
        .build();
    let service = ServiceBuilder::new().layer(layer).service(hub.clone());

    let first = answer(&service, "mcp__fx__pid").await;
    let pid: i32 = text(&first)
        .trim()
        .parse()
        .expect("the fixture answers its pid");
    let generation = hub.generation("fx");
    // The child exits on its own: the supervisor notices without any call, and (reconnecting
    // dropped servers in the background by default) may already have a fresh child.
    let _ = service
        .clone()
        .oneshot(ToolCall::new("mcp__fx__exit"))
        .await;
    let noticed = || hub.state("fx") != Some(State::Ready) || hub.generation("fx") > generation;
    let noticed = async || noticed();
    eventually(
        "the drop to be detected without a call",
        Duration::from_secs(10),
        noticed,
    )
    .await;

    let second = answer(&service, "mcp__fx__pid").await;
    let new_pid: i32 = text(&second).trim().parse().unwrap();
    assert_ne!(pid, new_pid, "a fresh child answered");
    assert!(hub.generation("fx") > generation);
    hub.shutdown().await;
}

#[tokio::test]
async fn a_missing_command_is_refused_as_absent_naming_the_command_without_calling_it() {
    let spec = command("gone", "/nonexistent/mcp-server", &[]);
    let hub = Hub::new(vec![spec], HubOptions::builder().health_interval(None)).unwrap();
    let service = ServiceBuilder::new()
        .layer(ReadinessLayer::new(hub.clone()))
        .service(hub.clone());
    let not_ready = refusal(&service, "mcp__gone__x").await;
    assert_eq!(not_ready.state(), State::Absent);
    assert!(
        not_ready.to_string().contains("/nonexistent/mcp-server"),
        "{not_ready}"
    );
    assert!(not_ready.waited() < Duration::from_secs(5));
    hub.shutdown().await;
}
