//! Supervised connections: a connection is a thing you maintain, not a thing you have.

mod event;
mod spec;

pub use event::{ConnectResult, ConnectionEvent, EventSink};
pub use spec::{ServerSpec, TransportSpec};

/// Classifies an error of the [`Hub`] for the readiness layer's metrics and spans; `None` when it
/// is not one of ours.
pub(crate) fn classify_call_error(
    _error: &(dyn std::error::Error + Send + Sync + 'static),
) -> Option<crate::layer::Classified> {
    None
}
