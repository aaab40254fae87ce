//! The MCP client: how ONE connection to an MCP server is made, and what its failures mean.
//!
//! Supervision (keeping connections alive: the hub, its supervisors, the connections a service
//! keeps itself) is in `supervise`, which builds on this room; nothing here knows of a hub or a
//! supervisor.
//!
//! Always built (no feature): what a failed call says, so the readiness layer classifies an error
//! the same way in every build:
//!
//! - `error.rs`: [`CallError`], its [`CallErrorKind`] and [`NotConnected`], how a call through a
//!   supervised connection ends without a result;
//! - `rmcp_errors.rs`: rmcp's errors turned into decisions (a dead pipe, rejected credentials,
//!   the `ConnectResult` of a failed handshake); `call_outcome.rs`: an rmcp `ServiceError` as a
//!   call outcome, by the same rules.
//!
//! With feature `hub`, the connections themselves:
//!
//! - `connector.rs`: the [`Connector`] and [`Session`] contract every connection kind implements;
//! - `spec.rs`, `spec_builders.rs`, `spec_error.rs`: how to reach a configured server
//!   ([`ServerSpec`]) and why a configuration cannot be used ([`SpecError`]);
//! - `stdio.rs` (a child process; `child_guard.rs` watches it for its exit and kills its group,
//!   `child_streams.rs` reads its stdout and stderr safely) and `streamable_http.rs`
//!   (`session_id.rs` for sessions and each HTTP answer, `retry_after.rs`, `stream_pacing.rs` for
//!   event-stream re-opens, `tls_certificate.rs` for the TLS set-up and the server certificate's
//!   notAfter, and OAuth with its credential store in `oauth/`): the rmcp connectors;
//! - `rmcp_connector.rs`: connections made with your own rmcp client handler and transport
//!   ([`RmcpConnector`]);
//! - `rmcp_session.rs`: the session behind every rmcp connector; `lifecycle.rs`: both protocol
//!   generations' handshakes; `generations.rs`: which generations an HTTP connection offers
//!   ([`ProtocolGenerations`]); `quiet.rs`: the notifications dropped before rmcp sees them;
//!   `task.rs`: calls answered with a task; `tool_pages.rs`: `tools/list` across pages, bounded;
//! - `credential_expiry.rs`: when a credential stops working ([`CredentialState`]);
//! - `reason.rs`: the one way an error chain becomes the reason a person reads (the root cause
//!   first, the system at fault named, no Rust type names, remote text cut).

// The door: the contract every connection kind implements, the errors a call and a connect end
// with, and a credential's expiry. The rooms below it (see the module doc) hold the rest.
#[cfg(feature = "hub")]
pub(crate) mod connector;
#[cfg(feature = "hub")]
pub(crate) mod credential_expiry;
// Without `hub` nothing in the crate makes a `CallError` (the hub and `Peers` do); the layer and
// the plans still read one, the same way in every build.
#[cfg_attr(not(feature = "hub"), allow(dead_code))]
pub(crate) mod error;

#[cfg(feature = "hub")]
pub(crate) mod handshake;
#[cfg(feature = "hub")]
pub(crate) mod http;
#[cfg(feature = "oauth")]
pub(crate) mod oauth;
pub(crate) mod reasons;
#[cfg(feature = "hub")]
pub(crate) mod session;
#[cfg(feature = "hub")]
pub(crate) mod spec;
#[cfg(feature = "hub")]
pub(crate) mod stdio;
#[cfg(feature = "hub")]
pub(crate) mod transport;

#[cfg(feature = "hub")]
pub use connector::{
    AfterConnect, ConnectError, Connector, HttpAnswer, MAX_RETRY_AFTER, Renewal, Session,
    SessionEvents,
};
#[cfg(feature = "hub")]
pub use credential_expiry::CredentialState;
pub use error::{CallError, CallErrorKind, NotConnected};
#[cfg(feature = "hub")]
pub use handshake::generations::ProtocolGenerations;
#[cfg(feature = "hub")]
pub use http::HttpConnector;
#[cfg(feature = "oauth")]
pub use oauth::{LoginError, authorize};
pub(crate) use reasons::call_outcome::classify_service_error;
#[cfg(feature = "hub")]
pub(crate) use reasons::rmcp_errors::is_auth_failure;
#[cfg(feature = "hub")]
pub use session::rmcp_connector::RmcpConnector;
#[cfg(feature = "hub")]
pub use session::server_requests::{MAX_INPUT_ROUNDS, ServerRequests};
#[cfg(feature = "hub")]
pub use session::task::{input_required, task_failed};
#[cfg(feature = "hub")]
pub use session::tool_pages::{MAX_TOOL_PAGES, MAX_TOOLS};
#[cfg(feature = "hub")]
pub use spec::error::SpecError;
#[cfg(feature = "hub")]
pub use spec::{AssertionSource, Dpop, IdentityProvider, OAuthGrant, OAuthSpec, SigningAlgorithm};
#[cfg(feature = "hub")]
pub(crate) use spec::{ServerSpec, TransportSpec};
#[cfg(feature = "hub")]
pub use stdio::{MAX_STDOUT_LINE, StdioConnector};
