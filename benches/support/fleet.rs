//! The fleet the metrics benchmark and the memory example build: 1,000 servers with 20 tools each.

use std::time::Duration;

use mcp_readiness::{Metrics, state::CallOutcome};
use mcp_readiness::{
    State,
    resolve::Verdict,
    state::{ConnectResult, ConnectionEvent, EventSink},
};

pub const SERVERS: usize = 1_000;
pub const TOOLS: usize = 20;

pub fn server_name(i: usize) -> String {
    format!("server-{i:04}")
}

pub fn tool_name(j: usize) -> String {
    format!("tool_{j:02}")
}

/// What `mcp-readiness serve` holds for the fleet: every server announced, connected once, ready,
/// offering 20 tools, with its wait budget.
pub fn exporter_fleet() -> Metrics {
    exporter_fleet_of(SERVERS)
}

/// [`exporter_fleet`] with `servers` servers.
#[allow(dead_code)]
pub fn exporter_fleet_of(servers: usize) -> Metrics {
    let metrics = Metrics::new();
    for i in 0..servers {
        let server = server_name(i);
        metrics.on_event(&ConnectionEvent::ServerAdded {
            server: server.as_str().into(),
            state: State::Connecting,
        });
        metrics.on_event(&ConnectionEvent::ConnectAttempt {
            server: server.as_str().into(),
            result: ConnectResult::Ok,
            duration: Duration::from_millis(300 + i as u64),
        });
        metrics.on_event(&ConnectionEvent::StateChanged {
            server: server.as_str().into(),
            from: State::Connecting,
            to: State::Ready,
            reason: None,
        });
        metrics.on_event(&ConnectionEvent::ToolsChanged {
            server: server.as_str().into(),
            count: TOOLS,
        });
        metrics
            .server(&server)
            .set_wait_budget(Duration::from_secs(20));
    }
    metrics
}

/// The exporter fleet after an agent called every tool of every server once through the layer:
/// a ready resolution, an `ok` call and an operation duration per tool (20 tool names shared by
/// all servers, within the default tool cap).
pub fn layer_fleet() -> Metrics {
    let metrics = exporter_fleet();
    for i in 0..SERVERS {
        let server = metrics.server(&server_name(i));
        for j in 0..TOOLS {
            let tool = server.tool(&tool_name(j));
            server.observe_resolution(&Verdict::READY, Duration::from_secs(20));
            tool.observe_call(CallOutcome::Ok);
            tool.observe_operation("tools/call", None, Duration::from_millis(40));
        }
    }
    metrics
}
