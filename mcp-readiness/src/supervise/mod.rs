//! Supervised connections: a connection is a thing you maintain, not a thing you have.
//!
//! The [`Hub`] holds the configured servers by name. For each one a supervisor runs a small state
//! machine (idle → connecting → connected / unauthorized / cooling down / backing off):
//!
//! - **reconnect**: a dropped connection is noticed at once (a task awaits rmcp's end of
//!   service) and re-made at once in the background (or at the next use without
//!   [`HubOptions::reconnect_on_drop`]); meanwhile the server reads `connecting`, not `absent`;
//! - **crash-loop backoff**: a server that keeps exiting shortly after its handshake waits a
//!   growing, capped delay between attempts and reads `absent` with a reason that says so;
//! - **single-flight**: callers arriving during a connect join it (64 callers, one handshake);
//! - **generation counter**: a late close from connection N never marks connection N+1 down;
//! - **cooldown**: after a failed connect, calls fail in microseconds for 60 s (default);
//! - **auth fails fast**: a 401, or a 403 with a challenge, is `unauthenticated` after one attempt
//!   (a live session whose credentials are rejected first gets one fresh handshake with the same
//!   credentials), and nothing retries until the credentials change ([`Hub::replace_server`],
//!   [`Hub::reset_auth`]);
//! - **both protocol generations**: `server/discover` (2026-07-28) first, `initialize` for older
//!   servers; a 429 / 503 with `Retry-After` reads `connecting` until the time the server asked for;
//! - **retry once**: a call whose pipe died reconnects and, when marked idempotent, runs once more;
//!   a tool result with `isError` or a JSON-RPC error is an answer and never retried;
//! - **health**: an optional probe every 30 s (`ping`, or `server/discover` on 2026-07-28 sessions)
//!   finds a dead server before a user call, and `notifications/tools/list_changed` (a
//!   `subscriptions/listen` stream on 2026-07-28 sessions) refreshes the tool list.
//!
//! The rmcp connectors ([`StdioConnector`], [`HttpConnector`]) implement [`Connector`]; anything
//! else can too. Every transition is a [`ConnectionEvent`](crate::state::ConnectionEvent) for the configured [`EventSink`](crate::state::EventSink)s.

mod attach;
mod attempt;
mod background;
mod call;
mod child_streams;
mod classify;
mod coalesce;
mod conn_state;
mod connector;
mod credential_expiry;
mod credential_watch;
mod error;
mod factory;
mod fan_out;
mod fd_limit;
mod http;
mod hub;
mod hub_shared;
mod inventory_view;
mod lifecycle;
#[cfg(feature = "oauth")]
mod oauth;
mod options;
mod outcome;
mod peers;
mod quiet;
mod retry_after;
mod rmcp_connector;
mod rmcp_session;
mod session_id;
mod spec;
mod spec_builders;
mod spec_error;
mod stdio;
mod supervisor;
mod task;
mod tool_pages;

pub use connector::{
    AfterConnect, ConnectError, Connector, MAX_RETRY_AFTER, Session, SessionEvents,
};
pub use credential_expiry::CredentialState;
pub use error::{CallError, CallErrorKind, NotConnected};
pub use factory::connector_for;
pub use fan_out::{Degraded, FanOut, FanOutResult};
pub use fd_limit::{OpenFileLimit, raise_open_file_limit};
pub use http::HttpConnector;
pub use hub::{Hub, ServerStatus};
#[cfg(feature = "oauth")]
pub use oauth::{LoginError, authorize};
pub use options::{HubOptions, HubOptionsBuilder};
pub(crate) use outcome::classify_service_error;
pub use peers::Peers;
pub use rmcp_connector::RmcpConnector;
pub use spec::{OAuthSpec, ServerSpec, TransportSpec};
pub use spec_error::SpecError;
pub use stdio::MAX_STDOUT_LINE;
pub use stdio::StdioConnector;
pub use task::{input_required, task_failed};
pub use tool_pages::{MAX_TOOL_PAGES, MAX_TOOLS};

#[cfg(test)]
mod tests;
