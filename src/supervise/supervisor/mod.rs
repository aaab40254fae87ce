//! The supervisor room: one server's supervisor and its connection state machine.
//!
//! - `conn_state.rs`: the `ConnState` enum and every transition of it, each commented with its
//!   edge, inside the `Machine` a supervisor's lock guards;
//! - `admission.rs`: the `Supervisor`: the machine behind its lock, the admission of callers
//!   (single-flight connects, the cooldown, auth that fails fast), the start and finish of
//!   attempts, lost and retired connections;
//! - `attempt.rs`: one connection attempt in a task of its own, with its `initialize` span;
//! - `call.rs`: the call path (per-call timeout, retry once after a dead pipe);
//! - `background.rs`: the drop watch, the health probe, the tool-list refresh and the timer that
//!   ends a cooldown or a backoff; `credential_watch.rs`: what a connector knows of its
//!   credentials, forwarded to the hub's sinks; `coalesce.rs`: one refresh at a time.
//!
//! A supervisor reads its hub's shared state and options (`hub/shared.rs`, `hub/options.rs`) and
//! drives a [`Connector`](crate::client::Connector) from the `client` room, whose
//! [`CallError`](crate::client::CallError) a call ends with.

pub(super) mod admission;
pub(super) mod attempt;
pub(super) mod background;
pub(super) mod call;
pub(super) mod coalesce;
pub(super) mod conn_state;
pub(super) mod credential_watch;
#[cfg(test)]
mod tests;
