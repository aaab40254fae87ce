//! Removing a server leaves no series, and its old handles stay harmless.

use std::time::Duration;

use mcp_readiness::State;
use mcp_readiness::resolve::Scope;
use mcp_readiness::state::{CallOutcome, ConnectResult, ConnectionEvent, EventSink};
use mcp_readiness::{Metrics, metrics::names};

use crate::support::events::*;
use crate::support::exposition::*;

#[test]
fn a_removed_server_leaves_no_series_and_its_old_handles_stay_harmless() {
    let metrics = Metrics::new();
    for server in ["doomed", "kept"] {
        metrics.on_event(&added(server, State::Connecting));
        metrics.on_event(&connect(server, ConnectResult::Ok, 100));
        metrics.on_event(&changed(server, State::Connecting, State::Ready));
        metrics.on_event(&ConnectionEvent::ToolsChanged {
            server: server.into(),
            count: 2,
        });
        metrics.on_event(&ConnectionEvent::Reconnected {
            server: server.into(),
        });
        metrics.on_event(&ConnectionEvent::CooldownRejection {
            server: server.into(),
        });
        metrics.server(server).set_wait_budget(BUDGET);
        metrics.server(server).observe_resolution(
            &verdict(State::Connecting, 20_000, true, Scope::Server),
            BUDGET,
        );
        metrics
            .server(server)
            .observe_resolution(&verdict(State::Absent, 0, false, Scope::Tool), BUDGET);
        metrics
            .server(server)
            .tool("t")
            .observe_call(CallOutcome::Ok);
        metrics.server(server).tool("missing").observe_absent();
        metrics.server(server).tool("t").observe_operation(
            "tools/call",
            Some("tool_error"),
            Duration::from_millis(3),
        );
    }
    let handle = metrics.server("doomed");
    let tool = handle.tool("t");
    let before = metrics.render();
    assert!(before.contains("server=\"doomed\""));

    metrics.on_event(&ConnectionEvent::ServerRemoved {
        server: "doomed".into(),
    });
    assert!(!handle.is_live());
    // Old handles record into series nobody exports.
    handle.tool("t").observe_call(CallOutcome::Timeout);
    handle.observe_resolution(
        &verdict(State::Unauthenticated, 0, false, Scope::Server),
        BUDGET,
    );
    tool.observe_call(CallOutcome::Cancelled);
    tool.observe_operation("tools/call", None, Duration::from_millis(1));
    handle.set_wait_budget(BUDGET);

    let after = metrics.render();
    assert!(
        !after.contains("doomed"),
        "left behind:\n{}",
        after
            .lines()
            .filter(|l| l.contains("doomed"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let kept = |text: &str| {
        text.lines()
            .filter(|l| l.contains("server=\"kept\""))
            .count()
    };
    assert_eq!(kept(&before), kept(&after));
    assert!(kept(&after) > 20);

    // It can come back, with fresh series.
    metrics.on_event(&added("doomed", State::Unauthenticated));
    let samples = parse(&metrics.render());
    assert_eq!(
        value(
            &samples,
            names::SERVER_STATE,
            &[("server", "doomed"), ("state", "unauthenticated")]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(&samples, names::RECONNECTS_TOTAL, &[("server", "doomed")]),
        Some(0.0)
    );
    assert!(metrics.server("doomed").is_live());
}
