//! Both protocol generations: how the rmcp connectors open an MCP lifecycle, and which protocol
//! versions they accept.
//!
//! - **2026-07-28** has no `initialize`: the client probes with `server/discover` and sends its
//!   version, identity and capabilities in every request's `_meta`.
//! - **Older servers** (2024-11-05 … 2025-11-25) answer `server/discover` with a JSON-RPC error
//!   (method not found, or an HTTP 4xx that rmcp turns into one); the client then falls back to
//!   `initialize` on the same connection, offering 2025-11-25.
//!
//! The probe therefore costs a server that speaks 2026-07-28 nothing (one round trip, like
//! `initialize`), and an older server one extra round trip (the rejected `server/discover`).
//!
//! The probe waits as long as the connect timeout allows. rmcp's own `Auto` lifecycle gives the
//! probe 10 s and then sends `initialize` on the same pipe; a stdio server still starting (an
//! `npx` download, a slow import) answers the probe late and the handshake fails on the response
//! id. So the two steps are run here, one after the other on one transport ([`Handoff`]):
//! `Discover`, then, only for a server that rejected it, `Initialize`.
//!
//! A server whose version is not one of ours (e.g. `2027-03-01` from `initialize`, or a
//! `server/discover` that lists only versions we do not speak) is refused with a reason that
//! names both lists, as the specification asks of a client that does not support the version.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use rmcp::model::{ErrorCode, ProtocolVersion, ServerPeerInfo};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt as _, RoleClient, RunningService,
    RxJsonRpcMessage, TxJsonRpcMessage,
};
use rmcp::transport::Transport;

use super::connector::ConnectError;
use super::rmcp_session::SupervisorClient;
use crate::state::ConnectResult;
use crate::state::ServerIdentity;

/// A transport lent to one lifecycle attempt and handed back when the attempt drops it (a failed
/// handshake drops its transport without closing it), so the next attempt continues on the same
/// pipe or HTTP client.
pub(crate) struct Handoff<T> {
    slot: Arc<Mutex<Option<T>>>,
    inner: Option<T>,
}

impl<T> Handoff<T> {
    fn lend(slot: &Arc<Mutex<Option<T>>>) -> Option<Handoff<T>> {
        let inner = slot.lock().unwrap_or_else(|p| p.into_inner()).take()?;
        Some(Handoff {
            slot: slot.clone(),
            inner: Some(inner),
        })
    }
}

impl<T> Drop for Handoff<T> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            *self.slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(inner);
        }
    }
}

/// The inner transport's own error type, so rmcp's classification (401 challenges, HTTP status,
/// dropped pipes) sees the same errors as without the handoff.
impl<T> Transport<RoleClient> for Handoff<T>
where
    T: Transport<RoleClient> + 'static,
    T::Error: From<std::io::Error>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = self.inner.as_mut().map(|inner| inner.send(item));
        async move {
            match sent {
                Some(sent) => sent.await,
                None => Err(std::io::Error::from(std::io::ErrorKind::NotConnected).into()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        match self.inner.as_mut() {
            Some(inner) => inner.receive().await,
            None => None,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        match self.inner.as_mut() {
            Some(inner) => inner.close().await,
            None => Ok(()),
        }
    }
}

/// Whether a failed `server/discover` says "I am an older server": a correlated JSON-RPC error
/// that is not one of 2026-07-28's own rejections (rmcp's rule for its `Auto` lifecycle).
fn rejected_as_legacy(error: &ClientInitializeError) -> bool {
    matches!(
        error,
        ClientInitializeError::JsonRpcError(data)
            if data.code != ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                && data.code != ErrorCode::HEADER_MISMATCH
    )
}

/// Opens the lifecycle on `transport`: `server/discover` offering 2026-07-28; for a server that
/// rejects it, `initialize` offering 2025-11-25 (from [`SupervisorClient`]'s info) on the same
/// transport. The caller bounds the whole with the connect timeout.
pub(crate) async fn handshake<T>(
    client: SupervisorClient,
    transport: T,
) -> Result<RunningService<RoleClient, SupervisorClient>, ClientInitializeError>
where
    T: Transport<RoleClient> + 'static,
    T::Error: From<std::io::Error>,
{
    let slot = Arc::new(Mutex::new(Some(transport)));
    let lent = Handoff::lend(&slot).ok_or(ClientInitializeError::Cancelled)?;
    let discover = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let probe = match client.clone().serve_with_lifecycle(lent, discover).await {
        Ok(running) => return Ok(running),
        Err(error) if rejected_as_legacy(&error) => error,
        Err(error) => return Err(error),
    };
    let lent = Handoff::lend(&slot).ok_or(ClientInitializeError::Cancelled)?;
    client
        .serve_with_lifecycle(lent, ClientLifecycleMode::Initialize)
        .await
        .map_err(|fallback| ClientInitializeError::LegacyFallbackFailed {
            discover: Box::new(probe),
            fallback: Box::new(fallback),
        })
}

/// The protocol versions this client speaks, oldest first.
pub(crate) fn ours() -> &'static [ProtocolVersion] {
    ProtocolVersion::KNOWN_VERSIONS
}

fn list(versions: &[ProtocolVersion]) -> String {
    let mut out = String::from("[");
    for (i, v) in versions.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        // Versions come from the server: keep them short and printable.
        let v: String = v
            .as_str()
            .chars()
            .filter(|c| c.is_ascii_graphic())
            .take(32)
            .collect();
        let _ = write!(out, "{v}");
    }
    out.push(']');
    out
}

/// Why a server's version is refused: it speaks `theirs`, we speak [`ours`].
pub(crate) fn unsupported_version_reason(theirs: &[ProtocolVersion]) -> String {
    format!(
        "the server speaks MCP protocol version(s) {} and mcp-readiness speaks {}; no version is \
         shared, so the client disconnected (upgrade mcp-readiness or configure the server for \
         a version both speak)",
        list(theirs),
        list(ours())
    )
}

/// The refusal for a completed handshake whose negotiated version is not one of ours (a server
/// answering `initialize` with, e.g., `2027-03-01`).
pub(crate) fn check_negotiated(info: &ServerPeerInfo) -> Result<(), String> {
    if ours().contains(&info.protocol_version) {
        Ok(())
    } else {
        Err(unsupported_version_reason(std::slice::from_ref(
            &info.protocol_version,
        )))
    }
}

/// A completed handshake, refused (and closed) when its version is not one of ours.
pub(crate) fn accept(
    server: &str,
    running: RunningService<RoleClient, SupervisorClient>,
) -> Result<RunningService<RoleClient, SupervisorClient>, ConnectError> {
    let refused = running
        .peer()
        .peer_info()
        .and_then(|info| check_negotiated(&info).err());
    match refused {
        None => Ok(running),
        Some(why) => {
            // Dropping the running service cancels it (and closes the transport).
            drop(running);
            Err(ConnectError::new(
                ConnectResult::ProtocolError,
                format!("server `{server}`: {why}"),
            ))
        }
    }
}

/// The refusal for a failed handshake that failed because no version is shared (discover listed
/// only versions we do not speak), or `None` for any other failure.
pub(crate) fn version_refusal(error: &ClientInitializeError) -> Option<String> {
    match error {
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => Some(unsupported_version_reason(server_supported)),
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => version_refusal(fallback),
        _ => None,
    }
}

/// The identity of the server behind a completed handshake, for `mcp_readiness_server_info` and
/// the status page. Values come from the server: they are cut short and kept printable.
pub(crate) fn identity(info: &ServerPeerInfo) -> ServerIdentity {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_control())
            .take(64)
            .collect::<String>()
    };
    let (name, version) = match &info.server_info {
        Some(implementation) => (clean(&implementation.name), clean(&implementation.version)),
        None => (String::new(), String::new()),
    };
    ServerIdentity {
        protocol_version: clean(info.protocol_version.as_str()),
        server_name: name,
        server_version: version,
    }
}

/// Whether `version` negotiated its lifecycle over `initialize` (so it has `ping`, an
/// `Mcp-Session-Id` over HTTP and un-subscribed `notifications/tools/list_changed`).
pub(crate) fn has_initialize(version: &str) -> bool {
    version < ProtocolVersion::NO_INITIALIZE.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ServerCapabilities;

    #[test]
    fn a_version_we_do_not_speak_is_refused_with_both_lists() {
        let info = ServerPeerInfo::new(
            serde_json::from_value(serde_json::json!("2027-03-01")).unwrap(),
            ServerCapabilities::default(),
        );
        let reason = check_negotiated(&info).unwrap_err();
        assert!(reason.contains("[2027-03-01]"), "{reason}");
        assert!(
            reason.contains("[2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28]"),
            "{reason}"
        );
    }

    #[test]
    fn every_known_version_is_accepted_and_only_old_ones_have_initialize() {
        for v in ours() {
            let info = ServerPeerInfo::new(v.clone(), ServerCapabilities::default());
            assert!(check_negotiated(&info).is_ok());
        }
        assert!(has_initialize("2025-11-25"));
        assert!(!has_initialize("2026-07-28"));
    }
}
