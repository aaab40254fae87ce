//! `mcp-readiness check` exports its run as one trace to a real OTLP receiver: a root
//! `readiness run`, a `step {id}` per step and an `initialize` per connection attempt, over a real
//! stdio fixture server and a command that does not exist.
#![cfg(target_os = "linux")]

use std::process::Stdio;
use std::time::Duration;

use mcp_readiness_fixtures::otlp::{flatten, start_http_receiver, string_attr};
use mcp_readiness_fixtures::{Scratch, fixture};
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_exports_its_run_as_one_trace_of_steps_and_connection_attempts() {
    let scratch = Scratch::new("check-trace");
    let config = scratch.path("mcp.json");
    let servers = json!({
        "files": { "command": fixture().display().to_string() },
        "gone": { "command": "/nonexistent/bin/mcp-server" },
    });
    let readiness = json!({
        "budget": "2s", "poll": "500ms",
        "steps": [
            { "id": "read", "tool": "mcp__files__echo", "required": true },
            { "id": "archive", "tool": "mcp__gone__write", "required": false, "fallback": "local" },
        ],
    });
    std::fs::write(
        &config,
        json!({ "mcpServers": servers, "readiness": readiness }).to_string(),
    )
    .unwrap();
    let (receiver, mut received) = start_http_receiver().await;

    let output = tokio::process::Command::new(mcp_readiness_fixtures::cli())
        .args(["check", "--json", "--config"])
        .arg(&config)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{receiver}"))
        .stdin(Stdio::null())
        .output();
    let output = tokio::time::timeout(Duration::from_secs(30), output)
        .await
        .expect("check ends within 30 s")
        .expect("run check");
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut spans: Vec<Span> = Vec::new();
    while let Ok(request) = received.try_recv() {
        spans.extend(flatten(request).into_iter().flat_map(|r| r.spans));
    }
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    let root = spans
        .iter()
        .find(|s| s.name == "readiness run")
        .unwrap_or_else(|| panic!("no run span in {names:?}"));
    assert!(root.parent_span_id.is_empty());
    let child = |name: &str| {
        let span = spans
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no span `{name}` in {names:?}"));
        assert_eq!(
            span.parent_span_id, root.span_id,
            "{name} is a child of the run"
        );
        assert_eq!(span.trace_id, root.trace_id);
        span
    };
    let read = child("step read");
    assert_eq!(
        string_attr(&read.attributes, "mcp_readiness.decision").as_deref(),
        Some("run")
    );
    let archive = child("step archive");
    assert_eq!(
        string_attr(&archive.attributes, "mcp_readiness.state").as_deref(),
        Some("absent")
    );
    assert_eq!(
        string_attr(&archive.attributes, "mcp_readiness.decision").as_deref(),
        Some("fallback")
    );
    let attempts: Vec<(Option<String>, Option<String>)> = spans
        .iter()
        .filter(|s| s.name == "initialize")
        .map(|s| {
            assert_eq!(s.parent_span_id, root.span_id);
            (
                string_attr(&s.attributes, "mcp_readiness.server"),
                string_attr(&s.attributes, "mcp_readiness.result"),
            )
        })
        .collect();
    assert!(
        attempts.contains(&(Some("files".into()), Some("ok".into()))),
        "{attempts:?}"
    );
    assert!(
        attempts.contains(&(Some("gone".into()), Some("spawn_failed".into()))),
        "{attempts:?}"
    );
}
