//! `promtool check metrics` (Debian's `prometheus`) on the exposition: the golden file the
//! library's own tests compare the fixed scenario with, and hostile label values.

use std::io::Write as _;
use std::process::{Command, Stdio};

use mcp_readiness::{
    Metrics, State,
    state::{CallOutcome, ConnectionEvent, EventSink as _},
};
use mcp_readiness_fixtures::oncall::system_tool;
use mcp_readiness_fixtures::repo;

/// `promtool check metrics` on `text`: whether it passed, and what it said.
fn promtool_check(text: &str) -> Option<(bool, String)> {
    let promtool = system_tool("promtool", "prometheus")?;
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start promtool");
    child
        .stdin
        .take()
        .expect("promtool's stdin")
        .write_all(text.as_bytes())
        .expect("write to promtool");
    let out = child.wait_with_output().expect("promtool's output");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some((out.status.success(), said))
}

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
