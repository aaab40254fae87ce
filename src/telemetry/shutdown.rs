//! Shutting an OpenTelemetry provider down from `Drop`, wherever the drop runs.

use opentelemetry_sdk::error::OTelSdkResult;

use crate::secret::redact;

/// Runs `shutdown` (a provider's: it flushes what is pending, and blocks) from a `Drop`: on a
/// current-thread runtime on a thread of its own (blocking there would stall the runtime the
/// export needs), on a multi-thread runtime in `block_in_place`, outside a runtime directly. A
/// failure is logged as `failure` with its error redacted; nothing else can be done in a drop.
pub(super) fn shut_down_on_drop(
    shutdown: impl FnOnce() -> OTelSdkResult + Send + 'static,
    failure: &'static str,
) {
    use tokio::runtime::{Handle, RuntimeFlavor};

    let result = match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::CurrentThread => {
            std::thread::spawn(shutdown);
            return;
        }
        Ok(_) => tokio::task::block_in_place(shutdown),
        Err(_) => shutdown(),
    };
    if let Err(e) = result {
        tracing::warn!(error = %redact(&e.to_string(), &[]), "{failure}");
    }
}
