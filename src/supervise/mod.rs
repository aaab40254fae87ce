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
mod coalesce;
mod conn_state;
mod connector;
mod error;
mod factory;
mod fan_out;
mod fd_limit;
mod http;
mod hub;
mod hub_shared;
mod inventory_view;
mod options;
mod quiet;
mod rmcp_session;
mod spec;
mod spec_error;
mod stdio;
mod supervisor;
mod tool_pages;

pub use crate::state::{ConnectResult, ConnectionEvent, EventSink};
pub use connector::{AfterConnect, ConnectError, Connector, Session, SessionEvents};
pub use error::{CallError, CallErrorKind, NotConnected};
pub use factory::connector_for;
pub use fan_out::{Degraded, FanOut, FanOutResult};
pub use fd_limit::{OpenFileLimit, raise_open_file_limit};
pub use http::HttpConnector;
pub use hub::{Hub, ServerStatus};
pub use options::{HubOptions, HubOptionsBuilder};
pub use spec::{ServerSpec, TransportSpec};
pub use spec_error::SpecError;
pub use stdio::MAX_STDOUT_LINE;
pub use stdio::StdioConnector;
pub use tool_pages::{MAX_TOOL_PAGES, MAX_TOOLS};

#[cfg(test)]
mod tests;
