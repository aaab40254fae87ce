//! The layer is safe over any inner service: rmcp's `ServiceError` is classified with the hub's
//! rules (also when wrapped), and a `transport_error` on a ready tool drops its ready entry so the
//! next call re-checks, even over an inventory without a change feed. Paused time.
#![cfg(feature = "hub")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_readiness::rmcp::model::CallToolResult;
use mcp_readiness::rmcp::{ErrorData, ServiceError};
use mcp_readiness::state::CallOutcome;
use mcp_readiness::{
    CallFailure, Inventory, Metrics, NotReady, ReadinessLayer, Snapshot, State, ToolCall,
};
use tower::{BoxError, ServiceBuilder};

use crate::support::call::{call, refusal};

/// A host's view of its servers without a change feed: it changes silently.
#[derive(Default)]
struct Silent(Mutex<Snapshot>);

impl Silent {
    fn set(&self, snapshot: Snapshot) {
        *self.0.lock().unwrap() = snapshot;
    }
}

impl Inventory for Silent {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        let snapshot = self.0.lock().unwrap().clone();
        Box::pin(async move { snapshot })
    }
}

/// An inner service that answers each call with the next of `answers` and counts its calls.
fn scripted(
    answers: Vec<fn() -> Result<CallToolResult, ServiceError>>,
    calls: Arc<AtomicUsize>,
) -> impl tower::Service<
    ToolCall,
    Response = CallToolResult,
    Error = BoxError,
    Future = BoxFuture<'static, Result<CallToolResult, BoxError>>,
> + Clone {
    let answers = Arc::new(answers);
    tower::service_fn(move |_call: ToolCall| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        let answer = answers[n.min(answers.len() - 1)]();
        Box::pin(async move { answer.map_err(BoxError::from) }) as BoxFuture<'static, _>
    })
}

fn ok() -> Result<CallToolResult, ServiceError> {
    Ok(CallToolResult::success(vec![]))
}
fn closed() -> Result<CallToolResult, ServiceError> {
    Err(ServiceError::TransportClosed)
}
fn json_rpc() -> Result<CallToolResult, ServiceError> {
    Err(ServiceError::McpError(ErrorData::invalid_params(
        "no such account",
        None,
    )))
}

/// `mcp__mail__list` ready in a silent inventory, behind the layer over `script`; the inventory,
/// the call counter and the service.
fn mail_list(
    script: Vec<fn() -> Result<CallToolResult, ServiceError>>,
) -> (
    Arc<Silent>,
    Arc<AtomicUsize>,
    impl tower::Service<ToolCall, Response = CallToolResult, Error = BoxError> + Clone,
) {
    let inventory = Arc::new(Silent::default());
    inventory.set(Snapshot::default().with_ready_tool("mcp__mail__list"));
    let calls = Arc::new(AtomicUsize::new(0));
    let tools = ServiceBuilder::new()
        .layer(ReadinessLayer::new(inventory.clone()))
        .service(scripted(script, calls.clone()));
    (inventory, calls, tools)
}

#[tokio::test(start_paused = true)]
async fn a_transport_error_on_a_ready_tool_drops_its_entry_so_the_next_call_rechecks() {
    let (inventory, calls, tools) = mail_list(vec![ok, closed, ok]);

    call(&tools, "mcp__mail__list").await.unwrap(); // cached ready
    // The server dies; the host's view changes silently (no feed).
    inventory.set(Snapshot::default());
    tokio::time::advance(Duration::from_secs(1)).await;
    let error = call(&tools, "mcp__mail__list").await.unwrap_err();
    assert_eq!(
        CallFailure::of(&error).outcome(),
        CallOutcome::TransportError
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    // Well inside the 60 s ready TTL, the next call re-checks and is refused, not sent.
    let refused = refusal(&tools, "mcp__mail__list").await;
    assert_eq!(refused.state(), State::Absent);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "nothing sent to the dead server"
    );
}

#[tokio::test(start_paused = true)]
async fn without_a_feed_a_ready_verdict_is_trusted_until_its_ttl_ends_unless_a_call_finds_the_pipe_dead()
 {
    let (inventory, calls, tools) = mail_list(vec![ok, json_rpc, ok]);
    call(&tools, "mcp__mail__list").await.unwrap();
    inventory.set(Snapshot::default());

    // A JSON-RPC error is the tool's answer: the server is alive, the entry stays.
    tokio::time::advance(Duration::from_secs(30)).await;
    let error = call(&tools, "mcp__mail__list").await.unwrap_err();
    assert_eq!(CallFailure::of(&error).outcome(), CallOutcome::ToolError);
    // Just before the ready TTL (60 s) ends: still trusted, sent.
    tokio::time::advance(Duration::from_millis(29_999)).await;
    call(&tools, "mcp__mail__list").await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
    // Just after: re-checked, refused.
    tokio::time::advance(Duration::from_millis(2)).await;
    let error = call(&tools, "mcp__mail__list").await.unwrap_err();
    assert_eq!(
        error.downcast_ref::<NotReady>().map(|r| r.state()),
        Some(State::Absent)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

/// An inner service's own error type that keeps rmcp's error as its source.
#[derive(Debug, thiserror::Error)]
#[error("agent tool call failed")]
struct AgentError(#[source] ServiceError);

#[tokio::test(start_paused = true)]
async fn rmcp_service_errors_are_classified_with_the_hubs_rules_even_when_wrapped() {
    let metrics = Metrics::new();
    let inventory = mcp_readiness::StaticInventory::new(
        Snapshot::default()
            .with_ready_tool("mcp__mail__rpc")
            .with_ready_tool("mcp__mail__closed")
            .with_ready_tool("mcp__mail__slow")
            .with_ready_tool("mcp__mail__wrapped"),
    );
    let inner = tower::service_fn(|call: ToolCall| async move {
        let error = match call.name.tool() {
            "rpc" => ServiceError::McpError(ErrorData::internal_error("boom", None)),
            "closed" => ServiceError::TransportClosed,
            "slow" => ServiceError::Timeout {
                timeout: Duration::from_secs(5),
            },
            _ => {
                return Err(BoxError::from(AgentError(ServiceError::McpError(
                    ErrorData::invalid_params("bad", None),
                ))));
            }
        };
        Err::<CallToolResult, _>(BoxError::from(error))
    });
    let tools = ServiceBuilder::new()
        .layer(
            ReadinessLayer::builder(inventory)
                .metrics(metrics.clone())
                .build(),
        )
        .service(inner);
    for (tool, outcome, error_type) in [
        ("rpc", CallOutcome::ToolError, "-32603"),
        ("closed", CallOutcome::TransportError, "transport_error"),
        ("slow", CallOutcome::Timeout, "timeout"),
        ("wrapped", CallOutcome::ToolError, "-32602"),
    ] {
        let error = call(&tools, format!("mcp__mail__{tool}").as_str())
            .await
            .unwrap_err();
        let failure = CallFailure::of(&error);
        assert_eq!(
            (failure.outcome(), &*failure.error_type()),
            (outcome, error_type),
            "{tool}"
        );
    }
    let exposition = metrics.render();
    assert!(
        exposition.contains(
            r#"mcp_readiness_tool_calls_total{outcome="tool_error",server="mail",tool="rpc"} 1"#
        ),
        "{exposition}"
    );
    assert!(exposition.contains(r#"mcp_readiness_tool_calls_total{outcome="transport_error",server="mail",tool="closed"} 1"#), "{exposition}");
}
