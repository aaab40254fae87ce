//! The MCP client: how ONE connection to an MCP server is made, and what its failures mean.
//!
//! Supervision (keeping connections alive: the hub, its supervisors, the connections a service
//! keeps itself) is in `supervise`, which builds on this wing; nothing here knows of a hub or a
//! supervisor.
//!
//! The wing has rooms, each a folder, and every import between them points down this list
//! (`docs/architecture.md`, "The rooms of the client", checked by `tests/library/architecture.rs`):
//!
//! - `http/`: [`HttpConnector`], streamable HTTP: bearer headers or OAuth, the `Mcp-Session-Id`
//!   each answer carries, event-stream re-opens paced;
//! - `stdio/`: [`StdioConnector`], a child process in its own group, its stdout read safely and
//!   its stderr kept;
//! - `oauth/` (feature `oauth`): OAuth 2.1, every grant, DPoP, token errors, the credential store;
//! - `handshake/`: both protocol generations, `server/discover` first and `initialize` for older
//!   servers, and which generations a connection offers ([`ProtocolGenerations`]);
//! - `session/`: one rmcp session, its client handler, what the server asks during a call
//!   ([`ServerRequests`]), tasks, `tools/list` across pages, and [`RmcpConnector`] for
//!   connections made with your own handler;
//! - `transport/`: the reqwest client, TLS and the server's certificate, `Retry-After`;
//! - `spec/`: how to reach a configured server ([`ServerSpec`], [`OAuthSpec`])
//!   and why a configuration cannot be used ([`SpecError`]);
//! - at the door: `credential_expiry.rs` ([`CredentialState`]), `connector.rs` (the [`Connector`]
//!   and [`Session`] contract every connection kind implements, [`ConnectError`]);
//! - `reasons/` (always built): rmcp's errors turned into decisions, and the one way an error
//!   chain becomes the reason a person reads (the root cause first, the system at fault named, no
//!   Rust type names, remote text cut);
//! - `error.rs` (always built): [`CallError`], how a call through a supervised connection ends
//!   without a result, so the readiness layer classifies an error the same way in every build.

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
