//! Both protocol generations on real servers: the official Python SDK (`mcp` 2.3.0 from PyPI,
//! speaking 2026-07-28 and older versions), the crate's rmcp fixture (versions before
//! 2026-07-28 only), and plain JSON-RPC servers that follow the specification for the edge cases
//! (`e2e/python/`). `scripts/test` creates `e2e/python/.venv` with the SDK.
#![cfg(target_os = "linux")]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_readiness::{
    Hub, HubOptions, ServerSpec, client::CallErrorKind, supervise::HubOptionsBuilder,
};
use mcp_readiness::{Metrics, state::CallOutcome};
use mcp_readiness::{State, ToolCall};
use mcp_readiness_fixtures::call::failure;
use mcp_readiness_fixtures::{Scratch, fixture, text};
use serde_json::json;
use tokio::time::Instant;

// ---------------------------------------------------------------------------------------------
// helpers

fn python_dir() -> PathBuf {
    mcp_readiness_fixtures::repo().join("e2e/python")
}

/// The venv's Python with the SDK, or `None` (see `mcp_readiness_fixtures::tools`).
fn python() -> Option<PathBuf> {
    mcp_readiness_fixtures::tools::python_sdk()
}

fn options() -> HubOptionsBuilder {
    HubOptions::builder()
        .connect_timeout(Duration::from_secs(20))
        .call_timeout(Duration::from_secs(10))
        .cooldown(Duration::from_secs(60))
        .health_interval(None)
}

fn stdio(name: &str, command: &str, args: &[&str]) -> ServerSpec {
    mcp_readiness_fixtures::configure::command(name, command, args)
}

fn python_stdio(name: &str, python: &std::path::Path, script: &str, args: &[&str]) -> ServerSpec {
    let script = python_dir().join(script).display().to_string();
    let mut all = vec![script.as_str()];
    all.extend_from_slice(args);
    stdio(name, &python.display().to_string(), &all)
}

fn http(name: &str, url: &str, token: Option<&str>) -> ServerSpec {
    mcp_readiness_fixtures::configure::http_spec(name, url, token)
}

/// A Python HTTP server started from `e2e/python/`; returns its guard and MCP URL.
async fn python_http(
    scratch: &Scratch,
    python: &std::path::Path,
    script: &str,
    args: &[&str],
) -> (mcp_readiness_fixtures::process::Guard, String) {
    let mut command = Command::new(python);
    command.arg(python_dir().join(script)).args(args);
    let out = scratch.path(&format!("{script}.out"));
    let (guard, port) =
        mcp_readiness_fixtures::configure::serve_http(command, &out, "a Python HTTP server").await;
    (guard, format!("http://127.0.0.1:{port}/mcp"))
}

fn reason(hub: &Hub, server: &str) -> String {
    hub.server(server)
        .and_then(|s| s.reason)
        .unwrap_or_default()
}

fn protocol(hub: &Hub, server: &str) -> Option<String> {
    hub.server(server)
        .and_then(|s| s.identity)
        .map(|i| i.protocol_version)
}

fn tools(hub: &Hub, server: &str) -> usize {
    hub.server(server).map_or(0, |s| s.tools)
}

async fn until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !ok() {
        assert!(
            started.elapsed() < limit,
            "timed out after {limit:?}: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    started.elapsed()
}

/// Connects `spec` alone and returns how long the first call took to find it ready.
async fn connect_time(spec: ServerSpec, tool: &str, metrics: &Metrics) -> (Hub, Duration) {
    let hub = Hub::new(vec![spec], options().event_sink(metrics.clone())).unwrap();
    let started = Instant::now();
    hub.call(ToolCall::new(tool)).await.unwrap();
    (hub, started.elapsed())
}

// ---------------------------------------------------------------------------------------------
// 1. both generations

#[tokio::test(flavor = "multi_thread")]
async fn a_python_sdk_server_is_ready_on_2026_07_28_and_the_rmcp_fixture_falls_back_to_initialize()
{
    let Some(python) = python() else { return };
    let scratch = Scratch::new("protocol-both");
    let (_guard, py_url) = python_http(&scratch, &python, "sdk_server.py", &["--http"]).await;
    let (fixture_http, fixture_port) =
        mcp_readiness_fixtures::configure::http_fixture(&scratch, "tok-1").await;
    let metrics = Metrics::new();

    let (py_stdio, py_stdio_ms) = connect_time(
        python_stdio("py", &python, "sdk_server.py", &[]),
        "mcp__py__one",
        &metrics,
    )
    .await;
    let (py_http, py_http_ms) =
        connect_time(http("pyh", &py_url, None), "mcp__pyh__one", &metrics).await;
    let (rs_stdio, rs_stdio_ms) = connect_time(
        stdio("rs", &fixture().display().to_string(), &[]),
        "mcp__rs__pid",
        &metrics,
    )
    .await;
    let (rs_http, rs_http_ms) = connect_time(
        http(
            "rsh",
            &format!("http://127.0.0.1:{fixture_port}/mcp"),
            Some("tok-1"),
        ),
        "mcp__rsh__pid",
        &metrics,
    )
    .await;

    assert_eq!(protocol(&py_stdio, "py").as_deref(), Some("2026-07-28"));
    assert_eq!(protocol(&py_http, "pyh").as_deref(), Some("2026-07-28"));
    assert_eq!(protocol(&rs_stdio, "rs").as_deref(), Some("2025-11-25"));
    assert_eq!(protocol(&rs_http, "rsh").as_deref(), Some("2025-11-25"));
    assert_eq!(tools(&py_stdio, "py"), 5);
    assert_eq!(py_stdio.state("py"), Some(State::Ready));
    let identity = py_stdio.servers()[0].identity.clone().unwrap();
    assert_eq!(identity.server_name, "py-sdk-fixture");
    assert_eq!(identity.server_version, "2.3.0-fixture");
    let echo = py_http
        .call(ToolCall::new("mcp__pyh__echo").with_arguments(json!({"text": "both"})))
        .await
        .unwrap();
    assert!(text(&echo).contains("both"), "{echo:?}");
    // The probe's cost on an older server: one extra round trip (the rejected server/discover).
    let mut round_trips = Vec::new();
    for (hub, tool) in [(&rs_stdio, "mcp__rs__pid"), (&rs_http, "mcp__rsh__pid")] {
        let started = Instant::now();
        for _ in 0..10 {
            hub.call(ToolCall::new(tool)).await.unwrap();
        }
        round_trips.push((tool, started.elapsed() / 10));
    }
    drop(fixture_http);
    eprintln!("one round trip: {round_trips:?}");
    eprintln!(
        "connect + first call: python stdio (2026-07-28, discover) {py_stdio_ms:?}, python http \
         {py_http_ms:?}; rmcp fixture stdio (discover rejected, then initialize) {rs_stdio_ms:?}, \
         http {rs_http_ms:?}"
    );
    // Which protocol each server speaks, for the fleet; a removed server's series goes.
    let exposition = metrics.render();
    for line in [
        r#"mcp_readiness_server_info{protocol_version="2026-07-28",server="py",server_name="py-sdk-fixture",server_version="2.3.0-fixture"} 1"#,
        r#"mcp_readiness_server_info{protocol_version="2026-07-28",server="pyh",server_name="py-sdk-fixture",server_version="2.3.0-fixture"} 1"#,
        r#"mcp_readiness_server_info{protocol_version="2025-11-25",server="rs","#,
        r#"mcp_readiness_server_info{protocol_version="2025-11-25",server="rsh","#,
    ] {
        assert!(
            exposition.contains(line),
            "{line} missing from:\n{exposition}"
        );
    }
    assert!(py_stdio.remove_server("py"));
    assert!(!metrics.render().contains(r#"server="py","#));
    for hub in [py_stdio, py_http, rs_stdio, rs_http] {
        hub.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn versions_we_do_not_speak_are_refused_with_a_reason_naming_both_lists() {
    let Some(python) = python() else { return };
    let ours = "[2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28]";
    for mode in ["initialize-2027", "discover-2027"] {
        let hub = Hub::new(
            vec![python_stdio("future", &python, "spec_server.py", &[mode])],
            options(),
        )
        .unwrap();
        let error = failure(&hub, "mcp__future__x").await;
        assert_eq!(hub.state("future"), Some(State::Absent), "{mode}");
        let why = reason(&hub, "future");
        assert!(why.contains("[2027-03-01]"), "{mode}: {why}");
        assert!(why.contains(ours), "{mode}: {why}");
        assert!(error.message().contains("[2027-03-01]"), "{error}");
        assert_eq!(
            error.connect_result(),
            Some(mcp_readiness::state::ConnectResult::ProtocolError)
        );
        hub.shutdown().await;
    }
}

// ---------------------------------------------------------------------------------------------
// 2. tool lists and liveness on both generations

#[tokio::test(flavor = "multi_thread")]
async fn tool_changes_are_heard_from_subscriptions_listen_and_from_the_older_notification() {
    let Some(python) = python() else { return };
    let hub = Hub::new(
        vec![
            python_stdio("py", &python, "sdk_server.py", &[]),
            stdio("rs", &fixture().display().to_string(), &[]),
        ],
        options(),
    )
    .unwrap();
    hub.call(ToolCall::new("mcp__py__one")).await.unwrap();
    hub.call(ToolCall::new("mcp__rs__pid")).await.unwrap();
    assert_eq!(tools(&hub, "py"), 5);
    let rs_before = tools(&hub, "rs");

    hub.call(ToolCall::new("mcp__py__add_tool")).await.unwrap();
    let py_took = until(
        "the 2026-07-28 server's sixth tool",
        Duration::from_secs(10),
        || tools(&hub, "py") == 6,
    )
    .await;
    hub.call(ToolCall::new("mcp__rs__add_tool")).await.unwrap();
    let rs_took = until(
        "the older server's new tool",
        Duration::from_secs(10),
        || tools(&hub, "rs") == rs_before + 1,
    )
    .await;
    let extra = hub.call(ToolCall::new("mcp__py__extra")).await.unwrap();
    assert!(text(&extra).contains("extra"));
    eprintln!(
        "tool change noticed: 2026-07-28 (listen) {py_took:?}, 2025-11-25 (notification) {rs_took:?}"
    );
    hub.shutdown().await;
}

fn pid_of(result: &rmcp::model::CallToolResult) -> u32 {
    let t = text(result);
    t.trim_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .unwrap_or_else(|_| panic!("no pid in {t:?}"))
}

fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([signal, &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_frozen_server_is_noticed_within_two_ping_intervals_on_both_generations() {
    let Some(python) = python() else { return };
    let interval = Duration::from_millis(500);
    let timeout = Duration::from_millis(400);
    let hub = Hub::new(
        vec![
            python_stdio("py", &python, "sdk_server.py", &[]),
            stdio("rs", &fixture().display().to_string(), &[]),
        ],
        // Nothing reconnects in the background, so the reason read after the freeze is the
        // probe's (a background reconnect would replace it with its own).
        options()
            .health_interval(Some(interval))
            .ping_timeout(timeout)
            .reconnect_on_drop(false),
    )
    .unwrap();
    let py_pid = pid_of(&hub.call(ToolCall::new("mcp__py__pid")).await.unwrap());
    let rs_pid = pid_of(&hub.call(ToolCall::new("mcp__rs__pid")).await.unwrap());
    // Probes answered while alive: both stay ready over a few intervals.
    tokio::time::sleep(interval * 3).await;
    assert_eq!(
        hub.state("py"),
        Some(State::Ready),
        "{}",
        reason(&hub, "py")
    );
    assert_eq!(
        hub.state("rs"),
        Some(State::Ready),
        "{}",
        reason(&hub, "rs")
    );

    let mut noticed = Vec::new();
    for (server, pid) in [("py", py_pid), ("rs", rs_pid)] {
        signal(pid, "-STOP");
        let took = until(
            &format!("{server} frozen to be noticed"),
            interval * 6,
            || hub.state(server) != Some(State::Ready),
        )
        .await;
        signal(pid, "-KILL");
        assert!(
            took <= interval * 2 + timeout,
            "{server}: noticed after {took:?}, more than two intervals plus the probe timeout"
        );
        assert!(
            reason(&hub, server).contains("health ping"),
            "{}",
            reason(&hub, server)
        );
        noticed.push((server, took));
    }
    eprintln!(
        "frozen server noticed (interval {interval:?}, probe timeout {timeout:?}): {noticed:?}"
    );
    hub.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 3. tasks

#[tokio::test(flavor = "multi_thread")]
async fn a_task_is_followed_to_its_end_and_failed_or_input_needing_tasks_have_their_own_outcome() {
    let Some(python) = python() else { return };
    let hub = Hub::new(
        vec![python_stdio("jobs", &python, "spec_server.py", &["tasks"])],
        options().call_timeout(Duration::from_secs(2)),
    )
    .unwrap();
    let done = hub.call(ToolCall::new("mcp__jobs__task_ok")).await.unwrap();
    assert_eq!(text(&done), "done");
    assert_eq!(protocol(&hub, "jobs").as_deref(), Some("2026-07-28"));

    let failed = failure(&hub, "mcp__jobs__task_fails").await;
    assert_eq!(failed.kind(), CallErrorKind::TaskFailed, "{failed}");
    assert_eq!(failed.outcome(), CallOutcome::TaskFailed);
    assert_eq!(failed.error_type(), "task_failed");
    assert!(failed.message().contains("backend exploded"), "{failed}");

    let input = failure(&hub, "mcp__jobs__task_needs_input").await;
    assert_eq!(input.kind(), CallErrorKind::InputRequired, "{input}");
    assert_eq!(input.outcome(), CallOutcome::InputRequired);
    assert_eq!(input.error_type(), "input_required");

    let slow = failure(&hub, "mcp__jobs__task_never_ends").await;
    assert_eq!(slow.kind(), CallErrorKind::Timeout, "{slow}");
    // The server stays ready throughout: these are answers, not a broken connection.
    assert_eq!(hub.state("jobs"), Some(State::Ready));
    hub.shutdown().await;
}

/// A service with a person behind it: accepts each form, `confirmed` set to true, and counts
/// the questions.
#[derive(Debug, Default, Clone)]
struct Approver(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl mcp_readiness::client::ServerRequests for Approver {
    fn answers_elicitation(&self) -> bool {
        true
    }

    fn elicit(
        &self,
        server: &str,
        request: mcp_readiness::rmcp::model::ElicitRequestParams,
    ) -> futures::future::BoxFuture<'_, mcp_readiness::rmcp::model::ElicitResult> {
        use mcp_readiness::rmcp::model::{ElicitResult, ElicitationAction};
        assert_eq!(server, "deploys");
        let asked = serde_json::to_value(&request).unwrap();
        assert_eq!(asked["message"], "Deploy to production?", "{asked}");
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirmed": true}))
        })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_input_required_result_ends_the_call_unattended_and_is_answered_and_retried_with_a_person_behind_the_hub()
 {
    let Some(python) = python() else { return };
    let spec = || python_stdio("deploys", &python, "spec_server.py", &["mrtr"]);

    // Unattended (no hook): nobody answers, the call's outcome is `input_required`.
    let unattended = Hub::new(vec![spec()], options()).unwrap();
    let input = failure(&unattended, "mcp__deploys__confirm").await;
    assert_eq!(input.kind(), CallErrorKind::InputRequired, "{input}");
    assert_eq!(input.outcome(), CallOutcome::InputRequired);
    assert_eq!(unattended.state("deploys"), Some(State::Ready));
    unattended.shutdown().await;

    // With a person behind it: the question reaches the hook once, and the retry carries the
    // answer and the server's requestState unchanged.
    let approver = Approver::default();
    let attended = Hub::new(vec![spec()], options().server_requests(approver.clone())).unwrap();
    let done = attended
        .call(ToolCall::new("mcp__deploys__confirm"))
        .await
        .unwrap();
    let echoed: serde_json::Value = serde_json::from_str(&text(&done)).unwrap();
    assert_eq!(echoed["answer"]["action"], "accept", "{echoed}");
    assert_eq!(
        echoed["answer"]["content"],
        json!({"confirmed": true}),
        "{echoed}"
    );
    assert!(
        echoed["state"].as_str().unwrap().starts_with("state-"),
        "the requestState was not echoed: {echoed}"
    );
    assert_eq!(approver.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    attended.shutdown().await;
}

#[test]
fn the_new_outcomes_are_exported_under_their_names() {
    let metrics = Metrics::new();
    let tool = metrics.server("jobs").tool("task_fails");
    tool.observe_call(CallOutcome::TaskFailed);
    tool.observe_call(CallOutcome::InputRequired);
    let text = metrics.render();
    assert!(text.contains(
        "mcp_readiness_tool_calls_total{outcome=\"task_failed\",server=\"jobs\",tool=\"task_fails\"} 1"
    ), "{text}");
    assert!(text.contains(
        "mcp_readiness_tool_calls_total{outcome=\"input_required\",server=\"jobs\",tool=\"task_fails\"} 1"
    ), "{text}");
}

// ---------------------------------------------------------------------------------------------
// 4. sessions and throttling

#[tokio::test(flavor = "multi_thread")]
async fn a_stale_session_answered_401_gets_one_fresh_initialize_before_the_server_is_unauthenticated()
 {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("protocol-stale");
    let (_guard, url) = python_http(&scratch, &python, "spec_http_server.py", &["sessions"]).await;
    let hub = Hub::new(vec![http("s", &url, Some("good"))], options()).unwrap();
    hub.call(ToolCall::new("mcp__s__echo")).await.unwrap();
    hub.call(ToolCall::new("mcp__s__expire")).await.unwrap();
    // The session is stale now: 401 with a Bearer challenge on it; the same token initializes.
    let echo = hub.call(ToolCall::new("mcp__s__echo")).await.unwrap();
    assert_eq!(text(&echo), "echo");
    assert_eq!(hub.state("s"), Some(State::Ready), "{}", reason(&hub, "s"));
    let stats = text(&hub.call(ToolCall::new("mcp__s__stats")).await.unwrap());
    assert_eq!(stats, r#"{"initializes": 2}"#);
    assert_eq!(hub.generation("s"), Some(2));

    // A token that is really revoked: the fresh initialize is refused too.
    hub.call(ToolCall::new("mcp__s__revoke")).await.unwrap();
    let error = failure(&hub, "mcp__s__echo").await;
    assert_eq!(hub.state("s"), Some(State::Unauthenticated), "{error}");
    assert_eq!(error.state(), State::Unauthenticated);
    assert!(!error.message().contains("good"), "{error}");
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn throttling_with_retry_after_reads_connecting_and_heals_by_itself() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("protocol-throttle");
    for status in ["429", "503"] {
        let mode = format!("throttle-{status}");
        let (_guard, url) =
            python_http(&scratch, &python, "spec_http_server.py", &[mode.as_str()]).await;
        let hub = Hub::new(vec![http("t", &url, Some("good"))], options()).unwrap();
        let error = failure(&hub, "mcp__t__echo").await;
        assert_eq!(hub.state("t"), Some(State::Connecting), "{status}: {error}");
        assert_eq!(error.state(), State::Connecting);
        let why = reason(&hub, "t");
        assert!(why.contains(&format!("HTTP {status}")), "{why}");
        assert!(why.contains("Retry-After: 1s"), "{why}");
        assert!(why.contains("heals by itself"), "{why}");
        // The server asked for one second: no cooldown of a minute, no call needed to heal.
        let healed = until(
            "the throttled server to heal",
            Duration::from_secs(5),
            || hub.state("t") == Some(State::Ready),
        )
        .await;
        eprintln!("HTTP {status} with Retry-After: 1 healed after {healed:?}");
        hub.call(ToolCall::new("mcp__t__echo")).await.unwrap();
        hub.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_401_is_unauthenticated_and_a_403_only_with_a_challenge() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("protocol-403");
    for (mode, want) in [
        ("unauthorized-bare", State::Unauthenticated),
        ("forbidden-challenge", State::Unauthenticated),
        ("forbidden", State::Absent),
    ] {
        let (_guard, url) = python_http(&scratch, &python, "spec_http_server.py", &[mode]).await;
        let hub = Hub::new(vec![http("a", &url, Some("good"))], options()).unwrap();
        let error = failure(&hub, "mcp__a__echo").await;
        assert_eq!(hub.state("a"), Some(want), "{mode}: {error}");
        hub.shutdown().await;
    }
}
