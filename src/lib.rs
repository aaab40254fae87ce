//! # mcp-readiness
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
//! - [`state`]: [`State`], [`Action`] and [`ToolName`] (`mcp__<server>__<tool>`, anything else is
//!   server `builtin`).
//! - [`resolve`](mod@resolve): [`classify`], the budgeted [`resolve()`](resolve()) and the
//!   [`CapabilityCache`] keyed at the right grain (per server for `connecting`, `unauthenticated`,
//!   `absent`; per tool for `ready`), single flight per server.
//! - [`layer`]: the tower middleware ([`layer::ReadinessLayer`]) that resolves every call at the point
//!   of use, tags its span, records metrics, and refuses what is not ready.
//! - [`supervise`]: the [`Hub`] of supervised rmcp connections (reconnect on use, single flight,
//!   generation counter, cooldown, auth fails fast, fan-out isolation).
//! - [`metrics`]: the Prometheus recorder ([`Metrics`]) and the `/metrics` endpoint.
//! - [`telemetry`]: `tracing` + OpenTelemetry OTLP export set-up.
//! - [`plan`]: step decisions, the pre-flight and the run record; [`config`]: the `.mcp.json`
//!   file; [`sim`]: the design's virtual-clock scenarios.
//!
//! All waiting goes through `tokio::time`, so tests run on a paused, virtual clock.
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod config;
pub mod demo;
pub mod layer;
pub mod metrics;
pub mod plan;
pub mod resolve;
pub mod secret;
pub mod sim;
pub mod state;
pub mod supervise;
pub mod telemetry;
mod util;

pub use config::Config;
pub use layer::ToolCall;
pub use metrics::Metrics;
pub use resolve::{Budget, BudgetError, CacheTtls, CapabilityCache, ChangeFeed};
pub use resolve::{Inventory, Scope, Snapshot, StaticInventory, Verdict, classify, resolve};
pub use state::{Action, BUILTIN_SERVER, State, ToolName};
pub use supervise::{CallError, ConnectResult, ConnectionEvent, EventSink, Hub, HubOptions};
pub use supervise::{ServerSpec, TransportSpec};

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
