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
//! This crate resolves capability at the point of use ([`resolve`], [`CapabilityCache`]), decides
//! what each step of an unattended run does ([`plan`]), and replays the design's virtual-clock
//! scenarios ([`sim`]).
//!
//! All waiting goes through `tokio::time`, so tests run on a paused, virtual clock.
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![forbid(unsafe_code)]

pub mod layer;
pub mod metrics;
pub mod resolve;
pub mod secret;
pub mod state;
pub mod supervise;

pub use resolve::{
    Budget, BudgetError, ChangeFeed, Inventory, Scope, Snapshot, StaticInventory, Verdict, classify,
    resolve,
};
pub use layer::ToolCall;
pub use metrics::Metrics;
pub use state::{Action, BUILTIN_SERVER, State, ToolName};
pub use supervise::{ConnectResult, ConnectionEvent, EventSink, ServerSpec, TransportSpec};
