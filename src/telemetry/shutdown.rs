//! Shutting an OpenTelemetry provider down from `Drop`, wherever the drop runs.

use opentelemetry_sdk::error::OTelSdkResult;

use crate::secret::redact;

/// Runs a provider's blocking `force_flush` or `shutdown` on a blocking thread, so that an
/// `async` caller does not block its runtime; the error is the exporter's, redacted.
pub(super) async fn run_blocking(
    f: impl FnOnce() -> OTelSdkResult + Send + 'static,
) -> Result<(), String> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(redact(&e.to_string(), &[])),
        Err(e) => Err(e.to_string()),
    }
}

/// The environment `vars` describe, as the `from_env_with` constructors read it (tests).
#[cfg(test)]
pub(super) fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

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
