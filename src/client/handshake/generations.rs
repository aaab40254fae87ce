//! Which protocol generations a streamable-HTTP connection offers: both (the default,
//! `server/discover` first and `initialize` for a server that rejects it, see `lifecycle.rs`), or
//! only one of them (a probe module that must see a server speak one generation).

use rmcp::model::ProtocolVersion;
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt as _, RoleClient, RunningService,
};
use rmcp::transport::Transport;

use crate::client::handshake;
use crate::client::session::handler::SupervisorClient;

/// The MCP protocol generations a connection offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ProtocolGenerations {
    /// `server/discover` (2026-07-28) first, `initialize` (2024-11-05 … 2025-11-25) for a server
    /// that rejects it: what every connection of the Hub offers.
    #[default]
    Both,
    /// Only `server/discover` (2026-07-28 and later): an older server fails the handshake
    /// (`protocol_error`).
    Discover,
    /// Only `initialize`, offering 2025-11-25 (a server may answer with an older version down to
    /// 2024-11-05).
    Initialize,
}

impl ProtocolGenerations {
    /// The configuration's name of the newer generation.
    pub const DISCOVER_NAME: &'static str = "2026-07-28";
    /// The configuration's name of the older generation.
    pub const INITIALIZE_NAME: &'static str = "2025-11-25";

    /// The generations named in a list (`"2026-07-28"`, `"2025-11-25"`), or `None` when the list
    /// names none.
    pub fn from_names(discover: bool, initialize: bool) -> Option<ProtocolGenerations> {
        match (discover, initialize) {
            (true, true) => Some(ProtocolGenerations::Both),
            (true, false) => Some(ProtocolGenerations::Discover),
            (false, true) => Some(ProtocolGenerations::Initialize),
            (false, false) => None,
        }
    }
}

/// Opens the lifecycle on `transport` offering `generations`; [`ProtocolGenerations::Both`] is
/// exactly `handshake::handshake` (with `discover_wait` for an unanswered `server/discover`).
pub(crate) async fn handshake_offering<T>(
    generations: ProtocolGenerations,
    client: SupervisorClient,
    transport: T,
    discover_wait: std::time::Duration,
) -> Result<RunningService<RoleClient, SupervisorClient>, ClientInitializeError>
where
    T: Transport<RoleClient> + 'static,
    T::Error: From<std::io::Error>,
{
    match generations {
        ProtocolGenerations::Both => handshake::handshake(client, transport, discover_wait).await,
        ProtocolGenerations::Discover => {
            let discover = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            client.serve_with_lifecycle(transport, discover).await
        }
        ProtocolGenerations::Initialize => {
            client
                .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
                .await
        }
    }
}
