//! The tower middleware that wraps every MCP tool call: resolve at the point of use, tag the span
//! with the state, record metrics, and refuse what is not ready without calling the server.
//!
//! Shaped like tower-http's `trace` module: [`ReadinessLayer`](crate::ReadinessLayer) (the `tower::Layer`), configured
//! only through [`ReadinessLayerBuilder`] (budget, lifetimes, metrics, cache, hooks),
//! [`ReadinessService`] (the service), [`ResponseFuture`] (its future), and [hooks] with `()`
//! no-op and closure implementations.
//!
//! ```
//! use std::time::Duration;
//! use mcp_readiness::{NotReady, ReadinessLayer};
//! use mcp_readiness::{Budget, Metrics, Snapshot, State, StaticInventory, ToolCall};
//! use rmcp::model::{CallToolResult, ContentBlock};
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() -> Result<(), tower::BoxError> {
//! let inventory = StaticInventory::new(
//!     Snapshot::default().with_ready_tool("mcp__files__read").with_unauthenticated_server("chat"),
//! );
//! let metrics = Metrics::new();
//! let layer = ReadinessLayer::builder(inventory)
//!     .budget(Budget::try_new(Duration::from_secs(15), Duration::from_secs(1))?)
//!     .metrics(metrics.clone())
//!     .build();
//! // Any tower::Service<ToolCall, Response = CallToolResult>: usually a `Hub`.
//! let servers = tower::service_fn(|_call: ToolCall| async {
//!     Ok::<_, tower::BoxError>(CallToolResult::success(vec![ContentBlock::text("hello")]))
//! });
//! let service = ServiceBuilder::new().layer(layer).service(servers);
//!
//! let ok = service.clone().oneshot(ToolCall::new("mcp__files__read")).await?;
//! assert_eq!(ok.is_error, Some(false));
//!
//! let err = service.oneshot(ToolCall::new("mcp__chat__send")).await.unwrap_err();
//! let not_ready = err.downcast_ref::<NotReady>().expect("refused before the server was called");
//! assert_eq!(not_ready.state(), State::Unauthenticated);
//! assert_eq!(not_ready.action().as_str(), "reauthorize");
//! # Ok(()) }
//! ```

mod builder;
mod classify_result;
pub(crate) mod failure;
mod future;
mod handles;
pub mod hooks;
#[cfg(feature = "http")]
mod http_answer;
pub(crate) mod not_ready;
pub(crate) mod readiness_layer;
mod service;
mod span;

pub use builder::ReadinessLayerBuilder;
pub use future::ResponseFuture;
#[cfg(feature = "http")]
pub use http_answer::{CONNECTING_RETRY_AFTER, HttpFailure};
pub(crate) use not_ready::NotReady;

pub use service::ReadinessService;
pub use span::{SPAN_TARGET, execute_tool_span};
