//! The label caps: tool names beyond the cap counted as `other`, the cap configurable, servers only
//! callers name capped and configured ones never.

use mcp_readiness::State;
use mcp_readiness::state::{CallOutcome, EventSink};
use mcp_readiness::{Metrics, metrics::names};

use crate::support::events::*;
use crate::support::exposition::*;

#[test]
fn the_257th_distinct_tool_name_is_counted_as_other() {
    let metrics = Metrics::new();
    for i in 0..256 {
        metrics
            .server("files")
            .tool(&format!("tool{i}"))
            .observe_call(CallOutcome::Ok);
    }
    for (server, tool, outcome) in [
        ("files", "tool256", CallOutcome::Ok),
        ("files", "invented", CallOutcome::NotReady),
        ("other_server", "tool0", CallOutcome::Ok), // admitted names stay admitted
    ] {
        metrics.server(server).tool(tool).observe_call(outcome);
    }
    metrics
        .server("files")
        .tool("another_invention")
        .observe_absent();
    let samples = parse(&metrics.render());
    let calls = |server, tool, outcome| {
        value(
            &samples,
            names::TOOL_CALLS_TOTAL,
            &[("server", server), ("tool", tool), ("outcome", outcome)],
        )
    };
    assert_eq!(calls("files", "tool255", "ok"), Some(1.0));
    assert_eq!(calls("files", "tool256", "ok"), None);
    assert_eq!(calls("files", "other", "ok"), Some(1.0));
    assert_eq!(calls("files", "other", "not_ready"), Some(1.0));
    assert_eq!(calls("other_server", "tool0", "ok"), Some(1.0));
    assert_eq!(
        value(
            &samples,
            names::TOOL_ABSENT_TOTAL,
            &[("server", "files"), ("tool", "other")]
        ),
        Some(1.0)
    );
    let tools: std::collections::BTreeSet<_> = samples
        .iter()
        .filter(|s| s.name == names::TOOL_CALLS_TOTAL)
        .map(|s| s.labels["tool"].clone())
        .collect();
    assert_eq!(tools.len(), 257, "256 names and `other`");
}

#[test]
fn the_tool_cap_is_configurable() {
    let metrics = Metrics::builder().tool_cap(1).build().unwrap();
    for tool in ["first", "second"] {
        metrics.server("s").tool(tool).observe_call(CallOutcome::Ok);
    }
    let samples = parse(&metrics.render());
    let tools: Vec<_> = samples
        .iter()
        .filter(|s| s.name == names::TOOL_CALLS_TOTAL)
        .map(|s| s.labels["tool"].as_str())
        .collect();
    assert_eq!(tools, ["first", "other"]);
}

#[test]
fn servers_only_callers_name_are_capped_but_configured_ones_never_are() {
    let metrics = Metrics::builder()
        .unconfigured_server_cap(2)
        .build()
        .unwrap();
    for server in ["u1", "u2", "u3", "u4"] {
        metrics
            .server(server)
            .tool("t")
            .observe_call(CallOutcome::NotReady);
    }
    for i in 0..5 {
        metrics.on_event(&added(&format!("configured{i}"), State::Ready));
    }
    let samples = parse(&metrics.render());
    let servers: std::collections::BTreeSet<_> = samples
        .iter()
        .filter(|s| s.name == names::TOOL_CALLS_TOTAL)
        .map(|s| s.labels["server"].clone())
        .collect();
    assert_eq!(
        servers.into_iter().collect::<Vec<_>>(),
        ["other", "u1", "u2"]
    );
    assert_eq!(
        value(
            &samples,
            names::TOOL_CALLS_TOTAL,
            &[("server", "other"), ("tool", "t"), ("outcome", "not_ready")]
        ),
        Some(2.0)
    );
    for i in 0..5 {
        let server = format!("configured{i}");
        assert_eq!(
            value(
                &samples,
                names::SERVER_STATE,
                &[("server", &server), ("state", "ready")]
            ),
            Some(1.0)
        );
    }
}
