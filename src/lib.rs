//! # mcp-readiness
//!
//! Readiness for MCP tool calls: put [`ReadinessLayer`] in front of your tool calls and
//! every call is resolved at the point of use. A ready tool runs; a server still connecting is
//! waited for within a budget; an unauthenticated or absent one is refused at once, with the
//! state and the action a human must take:
//!
//! ```
//! use std::time::Duration;
//! use mcp_readiness::{Action, Budget, NotReady, ReadinessLayer, Snapshot, State, StaticInventory, ToolCall};
//! use rmcp::model::{CallToolResult, ContentBlock};
//! use tower::{ServiceBuilder, ServiceExt};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() -> Result<(), tower::BoxError> {
//! // What is known about the servers: usually a `Hub` of supervised rmcp connections.
//! let servers = StaticInventory::new(
//!     Snapshot::default()
//!         .with_ready_tool("mcp__files__read")
//!         .with_pending_server("search")
//!         .with_unauthenticated_server("github"),
//! );
//! let layer = ReadinessLayer::builder(servers)
//!     .budget(Budget::try_new(Duration::from_secs(20), Duration::from_secs(2))?)
//!     .build();
//! // The inner service makes the call: usually the same `Hub`.
//! let calls = tower::service_fn(|_call: ToolCall| async {
//!     Ok::<_, tower::BoxError>(CallToolResult::success(vec![ContentBlock::text("done")]))
//! });
//! let tools = ServiceBuilder::new().layer(layer).service(calls);
//!
//! tools.clone().oneshot(ToolCall::new("mcp__files__read")).await?; // ready: runs
//!
//! let err = tools.clone().oneshot(ToolCall::new("mcp__github__search")).await.unwrap_err();
//! let refused = err.downcast_ref::<NotReady>().unwrap();
//! assert_eq!((refused.state(), refused.action()), (State::Unauthenticated, Action::Reauthorize));
//! assert_eq!(refused.waited(), Duration::ZERO); // waiting would never help
//!
//! let err = tools.oneshot(ToolCall::new("mcp__search__query")).await.unwrap_err();
//! let refused = err.downcast_ref::<NotReady>().unwrap();
//! assert_eq!((refused.state(), refused.timed_out()), (State::Connecting, true));
//! assert_eq!(refused.waited(), Duration::from_secs(20)); // the whole budget, then a verdict
//! # Ok(()) }
//! ```
//!
//! ## Why
//!
//! An agent service calls tools named `mcp__<server>__<tool>`. When one is not usable, "not found"
//! hides three situations whose fixes are opposite:
//!
//! | state | heals with time? | default | on-call `action` |
//! |---|---|---|---|
//! | `ready` | - | run | - |
//! | `connecting` | yes, usually seconds | wait inside a budget | `extend_wait_budget` |
//! | `unauthenticated` | no: a human must re-authorize | stop waiting at once | `reauthorize` |
//! | `absent` | no | stop waiting at once; fall back or abort | `add_connection` |
//!
//! What is in the crate:
//!
//! The names a service uses are at the root: the layer ([`ReadinessLayer`]), the call
//! ([`ToolCall`]), the errors ([`NotReady`], [`CallFailure`]), the states ([`State`], [`Action`],
//! [`ToolName`]), the budget ([`Budget`]), the inventory ([`Inventory`], [`Snapshot`],
//! [`StaticInventory`]), the metrics ([`Metrics`]), the hub ([`Hub`], [`HubOptions`],
//! [`ServerSpec`], [`TransportSpec`]) and the configuration ([`Config`]). Everything else is at
//! its module path only:
//!
//! - [`state`]: [`State`], [`Action`] and [`ToolName`] (`mcp__<server>__<tool>`, anything else is
//!   server `builtin`), and the vocabulary every module shares: [`ToolCall`],
//!   [`CallOutcome`](state::CallOutcome) and the connection events.
//! - [`resolve`](mod@resolve): [`classify`](resolve::classify), the budgeted
//!   [`resolve()`](resolve::resolve()) and the [`CapabilityCache`](resolve::CapabilityCache) keyed
//!   at the right grain (per server for `connecting`, `unauthenticated`, `absent`; per tool for
//!   `ready`), single flight per server.
//! - [`layer`]: the tower middleware ([`ReadinessLayer`]) that resolves every call at the point
//!   of use, tags its span, records metrics, and refuses what is not ready.
//! - [`client`]: how one MCP connection is made (stdio and streamable-HTTP connectors, both
//!   protocol generations, sessions, OAuth and its store) and what its failures mean
//!   ([`CallError`](client::CallError) and rmcp's error rules, in every build).
//! - [`supervise`]: the [`Hub`] of supervised rmcp connections (reconnect on use, single flight,
//!   generation counter, cooldown, auth fails fast, fan-out isolation), which can also make
//!   connections with your own client handler ([`RmcpConnector`](client::RmcpConnector)) or
//!   take over one you opened ([`Hub::attach_with`]); and [`Peers`](supervise::Peers), the layer's
//!   inventory and inner service over the rmcp connections a service keeps itself (drop
//!   detection, the hub's error classification, events for [`Metrics`] and the status page,
//!   [`Peers::peer`](supervise::Peers::peer) for resources and prompts).
//! - [`rmcp`]: the rmcp this crate is built with (its types are in this crate's API), so a
//!   service names one version; supported: `>=3.11, <4`.
//! - [`metrics`]: the Prometheus recorder ([`Metrics`]) and its recording handles; [`exporter`]:
//!   `/metrics` and the status page (`/status`); [`probe`]: `/probe?target=URL`, any MCP server
//!   probed by URL (the multi-target exporter pattern).
//! - [`telemetry`]: `tracing` + OpenTelemetry OTLP export set-up.
//! - [`plan`]: one unattended [`Run`](plan::Run) of [`Step`](plan::Step)s (their decisions, the
//!   pre-flight or the calls, the run and step spans) and its record,
//!   [`RunSummary`](plan::RunSummary); [`config`]: the `.mcp.json` file. The design's
//!   virtual-clock scenarios and the demo's MCP servers are in the `mcp-readiness-cli` package.
//!
//! Feature flags: `hub` ([`supervise`], [`Peers`](supervise::Peers), [`config`], [`probe`], the
//! connections of [`client`]), `http` (the `/metrics` endpoint
//! and status page) and `tls` (HTTPS to MCP servers) are on by default; `oauth` (OAuth 2.1 for
//! streamable-HTTP servers), `otlp-grpc` / `otlp-http` (the [`telemetry`] set-up) and `otel-metrics`
//! (the metrics through the OpenTelemetry metrics API too, pushed over OTLP with an `otlp-*`
//! feature) are opt-in.
//! With none, the layer, cache, resolver, plans, spans and the metrics recorder are built. The
//! command line is the `mcp-readiness-cli` package. MSRV: Rust 1.88.
//!
//! All waiting goes through `tokio::time`, so tests run on a paused, virtual clock.
#![warn(missing_docs, unreachable_pub)]
// On docs.rs (`--cfg docsrs`, every feature): each item says which features it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod client;
#[cfg(feature = "hub")]
pub mod config;
#[cfg(any(feature = "http", feature = "hub"))]
pub mod exporter;
mod exposition;
pub mod layer;
pub mod metrics;
pub mod plan;
#[cfg(feature = "hub")]
pub mod probe;
mod ready_path;
pub mod resolve;
pub mod secret;
pub mod state;
#[cfg(feature = "hub")]
pub mod supervise;
pub mod telemetry;
mod util;

/// The rmcp this crate is built with (its types are in this crate's API): name it as
/// `mcp_readiness::rmcp` so your service and this crate agree on one version. Supported range:
/// `docs/own-connections.md`, "Versions".
pub use rmcp;

// The front door: what a user names, at this one path (their modules use them crate-internally).
// Everything else is at its module path only: one public path per name (`docs/architecture.md`,
// "The public surface", checked by `tests/library/public_surface.rs`).
#[cfg(feature = "hub")]
pub use client::spec::{ServerSpec, TransportSpec};
#[cfg(feature = "hub")]
pub use config::parsed::Config;
pub use layer::{failure::CallFailure, not_ready::NotReady, readiness_layer::ReadinessLayer};
pub use metrics::recorder::Metrics;
pub use resolve::{
    budget::Budget,
    inventory::{Inventory, StaticInventory},
    snapshot::Snapshot,
};
pub use state::{action::Action, readiness::State, tool_call::ToolCall, tool_name::ToolName};
#[cfg(feature = "hub")]
pub use supervise::{hub::Hub, hub::options::HubOptions};

/// The README's and `docs/`'s Rust examples, compiled and run as doc tests
/// (`cargo test -p mcp-readiness --doc --all-features`). Every page is included, so a code block
/// that is not Rust must name its language (`text`, `toml`, `sh`, `yaml`, `json`...).
#[cfg(doctest)]
pub mod doc_pages {
    /// `README.md`.
    #[cfg(all(feature = "hub", feature = "http"))]
    #[doc = include_str!("../README.md")]
    pub struct Readme;
    /// `docs/architecture.md`.
    #[cfg(all(feature = "hub", feature = "http"))]
    #[doc = include_str!("../docs/architecture.md")]
    pub struct Architecture;
    /// `docs/benchmarks.md`.
    #[doc = include_str!("../docs/benchmarks.md")]
    pub struct Benchmarks;
    /// `docs/configuration.md`.
    #[doc = include_str!("../docs/configuration.md")]
    pub struct Configuration;
    /// `docs/development.md`.
    #[doc = include_str!("../docs/development.md")]
    pub struct Development;
    /// `docs/features.md`.
    #[doc = include_str!("../docs/features.md")]
    pub struct Features;
    /// `docs/guarantees.md`.
    #[doc = include_str!("../docs/guarantees.md")]
    pub struct Guarantees;
    /// `docs/metrics.md`.
    #[doc = include_str!("../docs/metrics.md")]
    pub struct Metrics;
    /// `docs/oauth.md`.
    #[doc = include_str!("../docs/oauth.md")]
    pub struct Oauth;
    /// `docs/oncall.md`.
    #[doc = include_str!("../docs/oncall.md")]
    pub struct Oncall;
    /// `docs/operations.md`.
    #[doc = include_str!("../docs/operations.md")]
    pub struct Operations;
    /// `docs/own-connections.md`.
    #[cfg(all(feature = "hub", feature = "http"))]
    #[doc = include_str!("../docs/own-connections.md")]
    pub struct OwnConnections;
    /// `docs/probe.md`.
    #[cfg(all(feature = "hub", feature = "http"))]
    #[doc = include_str!("../docs/probe.md")]
    pub struct Probe;
    /// `docs/protocol.md`.
    #[doc = include_str!("../docs/protocol.md")]
    pub struct Protocol;
    /// `docs/runbook.md`.
    #[doc = include_str!("../docs/runbook.md")]
    pub struct Runbook;
    /// `docs/scale.md`.
    #[doc = include_str!("../docs/scale.md")]
    pub struct Scale;
    /// `docs/status-api.md`.
    #[cfg(feature = "http")]
    #[doc = include_str!("../docs/status-api.md")]
    pub struct StatusApi;
    /// `docs/supervision.md`.
    #[doc = include_str!("../docs/supervision.md")]
    pub struct Supervision;
}
