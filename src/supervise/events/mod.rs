//! The events room: how a connection machine's transitions become [`ConnectionEvent`]s, and how
//! those reach the [`EventSink`]s, for both machines of `supervise/` (a hub supervisor's
//! `ConnState` and a [`Peers`](crate::supervise::Peers) slot's `Conn`). A fix to event order is
//! made here, once.
//!
//! - `rule.rs`: the one readiness-change rule ([`Transitions`]): which transition emits which
//!   events, and the order of the events that announce a new connection;
//! - `queue.rs`: the one ordered event queue ([`EventQueue`]): events queued under the machine's
//!   lock, delivered after it in the order their transitions happened, one delivery at a time, and
//!   the change feed moved when an inventory snapshot would read differently.
//!
//! [`ConnectionEvent`]: crate::state::ConnectionEvent
//! [`EventSink`]: crate::state::EventSink

mod queue;
mod rule;

pub(crate) use queue::EventQueue;
pub(crate) use rule::{Announce, Readiness, Transitions};
