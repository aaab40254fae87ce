//! What a completed handshake says of the server: its identity (for `mcp_readiness_server_info`
//! and the status page) and whether its protocol version has `initialize`.

use rmcp::model::{ProtocolVersion, ServerPeerInfo};

use crate::state::ServerIdentity;

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
