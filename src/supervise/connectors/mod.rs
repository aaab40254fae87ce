//! The connectors room: how a connection to one MCP server is made, and what its failures mean.
//!
//! - `connector.rs`: the [`Connector`](crate::supervise::Connector) and
//!   [`Session`](crate::supervise::Session) contract every connection kind implements;
//! - `spec.rs`, `spec_builders.rs`, `spec_error.rs`: how to reach a configured server
//!   ([`ServerSpec`](crate::supervise::ServerSpec)) and why a configuration cannot be used;
//! - `stdio.rs` (a child process; `child_guard.rs` watches it for its exit and kills its
//!   group, `child_streams.rs` reads its stdout and stderr safely,
//!   `fd_limit.rs` its file descriptors) and `streamable_http.rs` (`session_id.rs`,
//!   `retry_after.rs`, `stream_pacing.rs` for event-stream re-opens, and OAuth in `oauth/`): the
//!   rmcp connectors;
//! - `rmcp_connector.rs`: connections made with your own rmcp client handler and transport;
//! - `rmcp_session.rs`: the session behind every rmcp connector; `lifecycle.rs`: both protocol
//!   generations' handshakes; `quiet.rs`: the notifications dropped before rmcp sees them;
//!   `task.rs`: calls answered with a task; `tool_pages.rs`: `tools/list` across pages, bounded;
//! - `generations.rs`: which protocol generations an HTTP connection offers (both, or one);
//! - `credential_expiry.rs`: when a credential stops working;
//! - `rmcp_errors.rs`: rmcp's errors turned into decisions (a dead pipe, rejected credentials,
//!   the `ConnectResult` of a failed handshake), used by every room; `human.rs`: durations in
//!   messages.
//!
//! No code here uses the hub or a supervisor: connectors are the bottom of `supervise`.

pub(super) mod child_guard;
pub(super) mod child_streams;
pub(super) mod connector;
pub(super) mod credential_expiry;
pub(super) mod fd_limit;
pub(super) mod generations;
pub(super) mod human;
pub(super) mod lifecycle;
#[cfg(feature = "oauth")]
pub(super) mod oauth;
pub(super) mod quiet;
pub(super) mod retry_after;
pub(super) mod rmcp_connector;
pub(super) mod rmcp_errors;
pub(super) mod rmcp_session;
pub(super) mod session_id;
pub(super) mod spec;
pub(super) mod spec_builders;
pub(super) mod spec_error;
pub(super) mod stdio;
pub(super) mod stream_pacing;
pub(super) mod streamable_http;
pub(super) mod task;
pub(super) mod tool_pages;
