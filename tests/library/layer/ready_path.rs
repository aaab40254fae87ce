//! The ready path's cached verdict: what it serves, and when it stops serving it.

use super::*;

/// A static inventory that counts how often it is asked: every ask is a resolution the ready
/// path did not serve from its cached verdict.
#[derive(Default)]
struct Counted {
    inner: StaticInventory,
    asked: AtomicUsize,
}

impl mcp_readiness::Inventory for Counted {
    fn snapshot(&self) -> futures::future::BoxFuture<'_, Snapshot> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.inner.snapshot()
    }
    fn changes(&self) -> Option<&mcp_readiness::resolve::ChangeFeed> {
        self.inner.changes()
    }
}

/// A layer (default lifetimes: ready 60 s) over a counted inventory where `files` offers `read`.
fn counted_world() -> (
    Arc<Counted>,
    ReadinessLayer,
    mcp_readiness::layer::ReadinessService<Servers>,
    Servers,
) {
    let inventory = Arc::new(Counted {
        inner: StaticInventory::new(Snapshot::default().with_ready_tool("mcp__files__read")),
        asked: AtomicUsize::new(0),
    });
    let layer = ReadinessLayer::builder(inventory.clone())
        .metrics(Metrics::new())
        .build();
    let servers = Servers::default();
    let service = ServiceBuilder::new()
        .layer(layer.clone())
        .service(servers.clone());
    (inventory, layer, service, servers)
}

/// One call to `mcp__files__read` through `service` (kept, so its cache is too).
async fn call_read_file(
    service: &mut mcp_readiness::layer::ReadinessService<Servers>,
) -> Result<CallToolResult, BoxError> {
    service
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("mcp__files__read"))
        .await
}

/// Whether one call to `mcp__files__read` went through.
async fn call_read(service: &mut mcp_readiness::layer::ReadinessService<Servers>) -> bool {
    call_read_file(service).await.is_ok()
}

#[tokio::test(start_paused = true)]
async fn the_ready_path_serves_a_verdict_for_exactly_its_lifetime() {
    let (inventory, _layer, mut service, servers) = counted_world();
    assert!(call_read(&mut service).await);
    let asked = inventory.asked.load(Ordering::SeqCst);
    assert!(asked >= 1);

    tokio::time::advance(Duration::from_millis(59_999)).await;
    assert!(call_read(&mut service).await);
    assert_eq!(
        inventory.asked.load(Ordering::SeqCst),
        asked,
        "a hit at 59.999 s"
    );

    tokio::time::advance(Duration::from_millis(1)).await;
    assert!(call_read(&mut service).await);
    assert!(
        inventory.asked.load(Ordering::SeqCst) > asked,
        "expired at 60 s: resolved again"
    );
    assert_eq!(servers.calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn an_inventory_change_or_a_cleared_cache_makes_the_ready_path_check_again() {
    let (inventory, layer, mut service, _servers) = counted_world();
    assert!(call_read(&mut service).await);
    let asked = inventory.asked.load(Ordering::SeqCst);

    // A change (here: the same snapshot again) makes the next call re-check once...
    inventory
        .inner
        .set(Snapshot::default().with_ready_tool("mcp__files__read"));
    assert!(call_read(&mut service).await);
    let after_change = inventory.asked.load(Ordering::SeqCst);
    assert!(after_change > asked);
    // ...and the call after it is a hit again.
    assert!(call_read(&mut service).await);
    assert_eq!(inventory.asked.load(Ordering::SeqCst), after_change);

    // The same after clearing the cache (slots are emptied in place, not replaced).
    layer.cache().clear();
    assert!(call_read(&mut service).await);
    let after_clear = inventory.asked.load(Ordering::SeqCst);
    assert!(after_clear > after_change);
    assert!(call_read(&mut service).await);
    assert_eq!(inventory.asked.load(Ordering::SeqCst), after_clear);
}

#[tokio::test(start_paused = true)]
async fn a_tool_withdrawn_from_a_live_server_is_no_longer_served_from_the_ready_path() {
    let (inventory, _layer, mut service, servers) = counted_world();
    assert!(call_read(&mut service).await);

    // `files` is still connected but no longer offers `read`.
    inventory.inner.set(
        Snapshot::default()
            .with_connected_server("files")
            .with_ready_tool("mcp__files__write"),
    );
    for _ in 0..3 {
        let refused = call_read_file(&mut service).await.unwrap_err();
        let not_ready = refused.downcast_ref::<NotReady>().expect("a NotReady");
        assert_eq!(not_ready.state(), State::Absent);
    }
    assert_eq!(
        servers.calls.load(Ordering::SeqCst),
        1,
        "only the first call"
    );
}

#[tokio::test(start_paused = true)]
async fn calls_counted_by_the_layer_and_by_hand_add_up_in_both_series() {
    // The layer counts a successful call through its duration series (one add fewer per call);
    // what a service records by hand on the same series must add up with it, not double.
    let metrics = Metrics::new();
    let mut service = ServiceBuilder::new()
        .layer(layer(&metrics))
        .service(Servers::default());
    for _ in 0..3 {
        assert!(call_read(&mut service).await);
        tokio::time::advance(Duration::from_millis(10)).await;
    }
    let read = metrics.server("files").tool("read");
    read.observe_operation("tools/call", None, Duration::from_millis(40));
    read.observe_call(CallOutcome::Ok);
    read.observe_call(CallOutcome::Ok);
    let ok = r#"{outcome="ok",server="files",tool="read"}"#;
    assert_metric(&metrics, &format!("mcp_readiness_tool_calls_total{ok} 5"));
    let series =
        r#"{error_type="",gen_ai_tool_name="read",mcp_method_name="tools/call",server="files"}"#;
    assert_metric(
        &metrics,
        &format!("mcp_client_operation_duration_seconds_count{series} 4"),
    );
    // The three calls through the layer took no virtual time; the one by hand 40 ms.
    assert_metric(
        &metrics,
        &format!("mcp_client_operation_duration_seconds_sum{series} 0.04"),
    );
}
