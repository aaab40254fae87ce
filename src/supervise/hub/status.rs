//! Each server of a [`Hub`] as it reports it: [`ServerStatus`], state, generation and transport.

use std::sync::Arc;

use super::Hub;
use crate::state::State;
use crate::supervise::supervisor::Supervisor;

/// One server as [`Hub::servers`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// The server's name.
    pub name: Arc<str>,
    /// Its readiness state.
    pub state: State,
    /// Why it is in that state (no secrets), if known.
    pub reason: Option<String>,
    /// How many tools it offers now (0 unless connected).
    pub tools: usize,
    /// `pipe` (stdio) or `tcp` (HTTP).
    pub transport: &'static str,
    /// Who answered the live connection's handshake (protocol version, server name and version).
    pub identity: Option<crate::state::ServerIdentity>,
    /// When the next connection attempt is due, while one waits for a time (the backoff after
    /// a failed connect, a crash loop's backoff, a `Retry-After`); `None` otherwise.
    pub next_attempt_at: Option<std::time::SystemTime>,
}

impl Hub {
    /// Every server, its state, why, how many tools, and its transport.
    pub fn servers(&self) -> Vec<ServerStatus> {
        self.supervisors().iter().map(|s| status_of(s)).collect()
    }

    /// One server's status (its state, why, tools, transport), if configured: what
    /// [`Hub::servers`] says of it.
    ///
    /// ```
    /// use mcp_readiness::{Hub, HubOptions, ServerSpec, State, TransportSpec};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let files = ServerSpec::new("files", TransportSpec::stdio("files-mcp"));
    /// let hub = Hub::new(vec![files], HubOptions::default()).unwrap();
    /// let files = hub.server("files").unwrap();
    /// assert_eq!(files.state, State::Connecting); // configured, not connected yet
    /// assert!(files.reason.unwrap().starts_with("not connected yet"));
    /// assert!(hub.server("nope").is_none());
    /// # }
    /// ```
    pub fn server(&self, server: &str) -> Option<ServerStatus> {
        self.supervisor(server).map(|s| status_of(&s))
    }

    /// The readiness state of one server, if configured.
    pub fn state(&self, server: &str) -> Option<State> {
        self.supervisor(server).map(|s| s.observe().state)
    }

    /// The generation of the server's newest successful connection (0 before the first), if
    /// configured. Every reconnect increments it.
    pub fn generation(&self, server: &str) -> Option<u64> {
        self.supervisor(server).map(|s| s.observe().generation)
    }

    /// What the renewal ahead of the next run found for each server that had a credential to
    /// renew ([`HubOptionsBuilder::renew_credentials_expiring_before`](crate::supervise::HubOptionsBuilder::renew_credentials_expiring_before)):
    /// renewed (with the new expiry) or not renewed (with why). A renewal the authorization
    /// server refused is not here: the server reads `unauthenticated` with the reason.
    pub fn renewals(&self) -> Vec<(Arc<str>, crate::client::connector::Renewal)> {
        self.supervisors()
            .into_iter()
            .filter_map(|s| Some((s.name().clone(), s.renewal()?)))
            .collect()
    }

    /// The OpenTelemetry `network.transport` of a server: `pipe` (stdio) or `tcp` (HTTP).
    pub fn network_transport(&self, server: &str) -> Option<&'static str> {
        self.supervisor(server).map(|s| s.network_transport())
    }
}

/// What a supervisor's server looks like from outside, now.
fn status_of(supervisor: &Supervisor) -> ServerStatus {
    let observed = supervisor.observe();
    ServerStatus {
        name: supervisor.name().clone(),
        state: observed.state,
        reason: observed.reason.map(|r| r.to_string()),
        tools: observed.tools.len(),
        transport: supervisor.network_transport(),
        identity: observed.identity,
        next_attempt_at: observed.next_attempt.map(|until| {
            std::time::SystemTime::now()
                + until.saturating_duration_since(tokio::time::Instant::now())
        }),
    }
}
