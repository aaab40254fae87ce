//! The exposition as a scraper reads it: `promtool check metrics` (Debian's `prometheus`) on the
//! golden file the library's own tests compare the fixed scenario with and on hostile label
//! values, hostile names rendered without raw control characters, and a removed server's late
//! events that never bring its series back.

use mcp_readiness::{
    Metrics, State,
    state::{CallOutcome, ConnectionEvent, EventSink as _},
};
use mcp_readiness_fixtures::exposition::assert_one_hot;
use mcp_readiness_fixtures::repo;
use mcp_readiness_fixtures::run::assert_no_raw_controls;
use mcp_readiness_fixtures::tools::promtool_check_metrics as promtool_check;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn promtool_check_metrics_reports_nothing_for_the_golden_exposition() {
    let golden = std::fs::read_to_string(repo().join("tests/golden/metrics.txt"))
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

#[test]
fn a_removed_servers_late_events_do_not_bring_its_series_back() {
    use mcp_readiness::Metrics;
    use mcp_readiness::state::ConnectResult;
    use mcp_readiness::{
        State,
        state::{ConnectionEvent, EventSink},
    };

    let metrics = Metrics::new();
    metrics.on_event(&ConnectionEvent::ServerAdded {
        server: "old".into(),
        state: State::Connecting,
    });
    metrics.on_event(&ConnectionEvent::ServerRemoved {
        server: "old".into(),
    });
    // The removed server's aborted attempt reports late.
    metrics.on_event(&ConnectionEvent::StateChanged {
        server: "old".into(),
        from: State::Connecting,
        to: State::Absent,
        reason: Some("shut down".into()),
    });
    metrics.on_event(&ConnectionEvent::ConnectAttempt {
        server: "old".into(),
        result: ConnectResult::Closed,
        duration: Duration::from_millis(3),
    });
    let text = metrics.render();
    assert!(!text.contains("server=\"old\""), "{text}");

    // Added again, it is exported again.
    metrics.on_event(&ConnectionEvent::ServerAdded {
        server: "old".into(),
        state: State::Absent,
    });
    assert_one_hot(&metrics.render(), "re-added");
    assert!(metrics.render().contains("server=\"old\""));
}

#[test]
fn hostile_names_render_a_promtool_clean_exposition_without_raw_control_characters() {
    use mcp_readiness::{Metrics, state::CallOutcome};
    use mcp_readiness::{
        State,
        state::{ConnectionEvent, EventSink},
    };

    let metrics = Metrics::new();
    for name in [
        "esc\u{1b}[2J",
        "cr\rlf\nnul\u{0}",
        "bel\u{7}",
        "q\"b\\",
        "名前",
        "",
    ] {
        metrics.on_event(&ConnectionEvent::ServerAdded {
            server: name.into(),
            state: State::Absent,
        });
        metrics
            .server(name)
            .tool(&format!("t{name}"))
            .observe_call(CallOutcome::Ok);
    }
    let text = metrics.render();
    assert_no_raw_controls("/metrics", &text);
    assert_one_hot(&text, "hostile names");
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("promtool not found ({e}): `promtool check metrics` was NOT run");
            return;
        }
        Err(e) => panic!("promtool is required in CI ({e}): apt-get install prometheus"),
    };
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && said.trim().is_empty(),
        "promtool said: {said}"
    );
}
