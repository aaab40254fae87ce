//! Paused-time tests of what a failed call says, through the hub and through the layer over it:
//! who is at fault, what the server reads afterwards, and the HTTP answer it maps to.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tower::{Layer as _, ServiceExt as _};

use crate::client::*;
use crate::state::State;
use crate::supervise::test_support::*;
use crate::supervise::*;

/// A script whose first call goes as `step` says.
fn script_calling(step: CallStep) -> Arc<Script> {
    let script = Arc::new(Script::default());
    script.calls.lock().unwrap().push_back(step);
    script
}

/// A call that is not retried when its pipe dies.
fn send() -> ToolCall {
    ToolCall::new("mcp__mail__send")
}

#[tokio::test(start_paused = true)]
async fn a_pipe_that_dies_during_a_call_reads_connecting_names_the_tool_and_answers_502() {
    let script = script_calling(CallStep::Drop);
    let hub = hub_with(ScriptedConnector::new(&script), quiet());
    let error = hub.call(send()).await.unwrap_err();
    assert_eq!(error.kind(), CallErrorKind::Transport);
    // The hub re-makes the connection: the server heals by itself, nobody has to add it.
    assert_eq!(error.state(), State::Connecting);
    assert_eq!(error.tool(), Some("mcp__mail__send"));
    assert!(
        error.to_string().contains("it reconnects at the next call"),
        "{error}"
    );

    #[cfg(feature = "http")]
    {
        use axum::response::IntoResponse as _;
        let answer = crate::layer::HttpFailure(Box::new(error)).into_response();
        // The call failed at the server (the tool may have run): 502, not an invitation to retry.
        assert_eq!(answer.status(), 502);
        assert!(answer.headers().get("retry-after").is_none());
        let body = axum::body::to_bytes(answer.into_body(), 1 << 20)
            .await
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["tool"], "mcp__mail__send", "{json}");
        assert_eq!(json["outcome"], "transport_error", "{json}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_in_flight_when_the_health_ping_ends_the_connection_says_so() {
    let script = script_calling(CallStep::HangUntilShutDown);
    let hub = hub_with(
        ScriptedConnector::new(&script),
        HubOptions::builder()
            .reconnect_on_drop(false)
            .health_interval(Some(Duration::from_secs(2)))
            .ping_timeout(Duration::from_secs(1))
            .call_timeout(Duration::from_secs(60)),
    );
    hub.connect_all();
    settle().await;
    script.sessions.lock().unwrap()[0]
        .frozen
        .store(true, Ordering::SeqCst);
    let error = hub.call(send()).await.unwrap_err();
    // Not "killed by signal 9": the hub ended it, and why.
    assert!(
        error.to_string().contains(
            "(the hub closed it: no answer to the health ping within 1s, nor to tools/list)"
        ),
        "{error}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_in_flight_at_shutdown_does_not_promise_a_reconnect() {
    let script = script_calling(CallStep::HangUntilShutDown);
    let hub = hub_with(ScriptedConnector::new(&script), quiet());
    hub.connect_all();
    settle().await;
    let call = tokio::spawn({
        let hub = hub.clone();
        async move { hub.call(send()).await }
    });
    settle().await;
    hub.shutdown().await;
    let error = call.await.unwrap().unwrap_err();
    assert_eq!(
        error.to_string(),
        "the hub closed its connection to server `mail` during `send` (it was shut down or \
         removed); calls to it fail from now on"
    );
    assert_eq!(error.state(), State::Absent);
}

#[tokio::test(start_paused = true)]
async fn a_json_rpc_error_is_cut_and_shows_no_control_characters() {
    let long = format!("bad \u{1b}[31m {}", "E".repeat(100_000));
    let script = script_calling(CallStep::JsonRpcErrorSaying(long));
    let hub = hub_with(ScriptedConnector::new(&script), quiet());
    let error = hub.call(send()).await.unwrap_err();
    let text = error.to_string();
    assert!(text.len() < 500, "{} characters", text.len());
    assert!(!text.chars().any(char::is_control), "{text:?}");
    assert!(
        text.starts_with("server `mail` answered `send` with JSON-RPC error -32603: bad [31m EEE"),
        "{text}"
    );
    assert!(text.ends_with('…'), "{text}");
    let data = error.json_rpc_error().unwrap();
    assert!(
        data.message.chars().count() <= 201,
        "{}",
        data.message.len()
    );
}

#[tokio::test(start_paused = true)]
async fn a_throttled_server_refused_through_the_layer_answers_with_its_own_retry_after() {
    let script = Script::starting_with([ConnectStep::Throttle(Duration::from_secs(120))]);
    let hub = hub_with(ScriptedConnector::new(&script), quiet());
    let budget =
        crate::resolve::Budget::try_new(Duration::from_secs(2), Duration::from_secs(1)).unwrap();
    let tools = crate::layer::readiness_layer::ReadinessLayer::builder(hub.clone())
        .budget(budget)
        .build()
        .layer(hub.clone());
    let error = tools.oneshot(send()).await.unwrap_err();
    let not_ready = error.downcast_ref::<crate::layer::NotReady>().unwrap();
    assert_eq!(not_ready.state(), State::Connecting);
    // Asked at the end of the 2 s budget: 118 s of the 120 s are left.
    assert_eq!(not_ready.retry_after(), Some(Duration::from_secs(118)));

    #[cfg(feature = "http")]
    {
        use axum::response::IntoResponse as _;
        let answer = crate::layer::HttpFailure(error).into_response();
        assert_eq!(answer.status(), 503);
        assert_eq!(answer.headers()["retry-after"], "118");
    }
}

#[tokio::test(start_paused = true)]
async fn an_unconfigured_server_refused_through_the_layer_says_it_is_not_configured() {
    let script = Arc::new(Script::default());
    let hub = hub_with(ScriptedConnector::new(&script), quiet());
    let tools = crate::layer::readiness_layer::ReadinessLayer::new(hub.clone()).layer(hub.clone());
    let error = tools
        .oneshot(ToolCall::new("mcp__nowhere__x"))
        .await
        .unwrap_err();
    let not_ready = error.downcast_ref::<crate::layer::NotReady>().unwrap();
    assert_eq!(not_ready.state(), State::Absent);
    assert_eq!(
        not_ready.reason(),
        Some("server `nowhere` is not configured; add it to the configuration")
    );
}
