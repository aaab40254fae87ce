//! What every layer bench wraps: the bare inner service (`ToolCall` in, `CallToolResult` out), a
//! way to drive one call without a runtime, and the readiness layer around it on a ready cache hit.

use std::convert::Infallible;
use std::hint::black_box;

use futures::FutureExt;
use futures::future::{Ready, ready};
use mcp_readiness::{Metrics, Snapshot, StaticInventory, ToolCall, ToolName};
use mcp_readiness::{ReadinessLayer, layer::ReadinessService};
use rmcp::model::CallToolResult;
use tower::{Layer, Service, ServiceExt};

/// `otel.name` of the benches' tool (`mcp__files__read_file`), made once, as the layer keeps it
/// in the tool's handles.
pub static OTEL_NAME: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| "tools/call read_file".to_owned());

/// The bare inner service: answers at once.
pub type Bare = tower::util::ServiceFn<fn(ToolCall) -> Ready<Result<CallToolResult, Infallible>>>;

pub fn bare() -> Bare {
    fn answer(_call: ToolCall) -> Ready<Result<CallToolResult, Infallible>> {
        ready(Ok(CallToolResult::success(Vec::new())))
    }
    tower::service_fn(answer as fn(ToolCall) -> Ready<Result<CallToolResult, Infallible>>)
}

/// One call through `service`, driven to completion without a runtime (everything is ready).
///
/// Never inlined: every row pays the same call into it, so the rows the ratios subtract (`bare`,
/// the minimum) do not move when a change elsewhere tips the compiler into inlining it into one
/// row's loop and not another's (a change to the library once made `bare` and the minimum 8 ns
/// faster that way, and the ready path's ratio 0.1x worse, with the ready path's own code the same).
#[inline(never)]
pub fn call_once<S, R>(service: &mut S, request: R)
where
    S: Service<R>,
{
    let future = service.call(request);
    black_box(future.now_or_never());
}

/// The readiness layer over the bare service, built as a service builds it: a
/// [`StaticInventory`] where `tool` is ready, a fresh [`Metrics::new()`] when `metrics`; its first
/// call (inside a runtime, as in a service) resolves `tool`, so every later call is a ready hit.
pub fn readiness_service(tool: &ToolName, metrics: bool) -> ReadinessService<Bare> {
    let inventory = StaticInventory::new(Snapshot::default().with_ready_tool(tool.as_str()));
    let builder = ReadinessLayer::builder(inventory);
    let layer = if metrics {
        builder.metrics(Metrics::new()).build()
    } else {
        builder.build()
    };
    let service = layer.layer(bare());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    runtime
        .block_on(service.clone().oneshot(ToolCall::new(tool.clone())))
        .expect("the first call goes through");
    service
}
