//! `promtool check metrics` (Debian's `prometheus`) on the exposition: the golden file the
//! library's own tests compare the fixed scenario with, and hostile label values.

use mcp_readiness::{
    Metrics, State,
    state::{CallOutcome, ConnectionEvent, EventSink as _},
};
use mcp_readiness_fixtures::repo;
use mcp_readiness_fixtures::tools::promtool_check_metrics as promtool_check;

#[test]
fn promtool_check_metrics_reports_nothing_for_the_golden_exposition() {
    let golden = std::fs::read_to_string(repo().join("mcp-readiness/tests/golden/metrics.txt"))
        .expect("the golden exposition");
    assert!(golden.contains("mcp_readiness_server_state"), "{golden}");
    let Some((ok, said)) = promtool_check(&golden) else {
        return;
    };
    assert!(ok && said.is_empty(), "promtool said: {said}");
}

#[test]
fn promtool_check_metrics_accepts_hostile_label_values() {
    let metrics = Metrics::new();
    let server = "a\"b\\c\nd é 🚀";
    metrics.on_event(&ConnectionEvent::ServerAdded {
        server: server.into(),
        state: State::Ready,
    });
    metrics
        .server(server)
        .tool("to\"ol\\\n\u{0}x")
        .observe_call(CallOutcome::Ok);
    let text = metrics.render();
    assert!(text.contains(r#"server="a\"b\\c\nd é 🚀""#), "{text}");
    let Some((ok, said)) = promtool_check(&text) else {
        return;
    };
    assert!(ok && said.is_empty(), "promtool said: {said}");
}
