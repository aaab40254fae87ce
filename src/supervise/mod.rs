//! Supervised connections: a connection is a thing you maintain, not a thing you have.
//!
//! The [`Hub`] holds the configured servers by name. For each one a supervisor runs a small state
//! machine (idle → connecting → connected / unauthorized / cooling down):
//!
//! - **reconnect on use**: a dropped connection is noticed at once (a task awaits rmcp's end of
//!   service) and re-made at the next call (or at once with
//!   [`HubOptions::reconnect_on_drop`]);
//! - **single-flight**: callers arriving during a connect join it (64 callers, one handshake);
//! - **generation counter**: a late close from connection N never marks connection N+1 down;
//! - **cooldown**: after a failed connect, calls fail in microseconds for 60 s (default);
//! - **auth fails fast**: a 401/403 is `unauthenticated` after one attempt, and nothing retries
//!   until the credentials change ([`Hub::replace_server`], [`Hub::reset_auth`]);
//! - **retry once**: a call whose pipe died reconnects and, when marked idempotent, runs once more;
//!   a tool result with `isError` or a JSON-RPC error is an answer and never retried;
//! - **health**: an optional MCP `ping` every 30 s finds a dead server before a user call, and
//!   `notifications/tools/list_changed` refreshes the tool list.
//!
//! The rmcp connectors ([`StdioConnector`], [`HttpConnector`]) implement [`Connector`]; anything
//! else can too. Every transition is a [`ConnectionEvent`] for the configured [`EventSink`]s.

mod attempt;
mod background;
mod call;
mod child_streams;
mod classify;
mod conn_state;
mod connector;
mod credential_expiry;
mod credential_watch;
mod error;
mod factory;
mod fan_out;
mod http;
mod hub;
mod hub_shared;
mod inventory_view;
#[cfg(feature = "oauth")]
mod oauth;
mod options;
mod rmcp_session;
mod spec;
mod spec_error;
mod stdio;
mod supervisor;

pub use crate::state::{ConnectResult, ConnectionEvent, EventSink};
pub use connector::{AfterConnect, ConnectError, Connector, Session, SessionEvents};
pub use credential_expiry::CredentialState;
pub use error::{CallError, CallErrorKind, NotConnected};
pub use factory::connector_for;
pub use fan_out::{Degraded, FanOut, FanOutResult};
pub use http::HttpConnector;
pub use hub::{Hub, ServerStatus};
#[cfg(feature = "oauth")]
pub use oauth::{LoginError, authorize};
pub use options::{HubOptions, HubOptionsBuilder};
pub use spec::{OAuthSpec, ServerSpec, TransportSpec};
pub use spec_error::SpecError;
pub use stdio::StdioConnector;

#[cfg(test)]
mod tests;
