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
//! - **health**: an optional health ping every 30 s (`ping`, or `server/discover` on 2026-07-28 sessions)
//!   finds a dead server before a user call, and `notifications/tools/list_changed` (a
//!   `subscriptions/listen` stream on 2026-07-28 sessions) refreshes the tool list.
//!
//! The rmcp connectors ([`StdioConnector`], [`HttpConnector`]) implement [`Connector`]; anything
//! else can too. Every transition is a [`ConnectionEvent`](crate::state::ConnectionEvent) for the configured
//! [`EventSink`](crate::state::EventSink)s.
//!
//! # Rooms
//!
//! How one connection is made (the connectors, the server specs, OAuth, the [`CallError`] a call
//! ends with and the rules that turn rmcp's errors into decisions) is the
//! [`client`](crate::client) room below this one. This room keeps
//! connections alive. The hub owns supervisors and a supervisor drives a connector; a supervisor
//! reads of its hub only the shared state and options. `peers` reuses the client's sessions and
//! errors for connections the hub did not make. Both machines (a supervisor's `ConnState`, a
//! `Peers` slot's `Conn`) turn their transitions into events by one rule and deliver them through
//! one ordered queue, both in `events/`.
//!
//! - `hub/`: the [`Hub`] (in `hub/mod.rs`) and what it owns across servers: membership and
//!   routing, [`HubOptions`], the state its supervisors share, the [`FanOut`], the `Inventory`
//!   view, connections attached from outside, and the factory that picks a connector for a
//!   configured server.
//! - `supervisor/`: one server's supervisor (in `supervisor/mod.rs`) and its `ConnState`
//!   machine: admission of callers, the attempt runner, the call path, background tasks (drop
//!   watch, health, tool-list refresh, credential watch).
//! - `events/`: the one readiness-change rule (which transition emits which
//!   [`ConnectionEvent`](crate::state::ConnectionEvent)) and the one ordered event queue that
//!   delivers them to the sinks and moves the change feed, for the hub and for `Peers`.
//! - `peers/`: [`Peers`] (in `peers/mod.rs`), the adapter over connections the service keeps
//!   itself, and its `Conn` machine.

mod events;
pub(crate) mod hub;
mod peers;
mod supervisor;
#[cfg(test)]
mod test_support;

#[cfg(doc)]
use crate::client::{CallError, Connector, HttpConnector, StdioConnector};
pub use crate::util::{OpenFileLimit, raise_open_file_limit};
pub(crate) use hub::Hub;
pub use hub::factory::connector_for;
pub use hub::fan_out::{Degraded, FanOut, FanOutResult};
pub(crate) use hub::options::HubOptions;
pub use hub::options::HubOptionsBuilder;
pub use hub::status::ServerStatus;
pub use peers::Peers;
