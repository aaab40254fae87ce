//! Supervised connections: a connection is a thing you maintain, not a thing you have.

mod event;
mod spec;

pub use event::{ConnectResult, ConnectionEvent, EventSink};
pub use spec::{ServerSpec, TransportSpec};
