//! Each server of a [`Hub`] as it reports it: [`ServerStatus`], state, generation and transport.

use std::sync::Arc;

use super::Hub;
use crate::state::State;

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
        self.supervisors()
            .into_iter()
            .map(|s| {
                let observed = s.observe();
                ServerStatus {
                    name: s.name().clone(),
                    state: observed.state,
                    reason: observed.reason.map(|r| r.to_string()),
                    tools: observed.tools.len(),
                    transport: s.network_transport(),
                    identity: observed.identity,
                    next_attempt_at: observed.next_attempt.map(|until| {
                        std::time::SystemTime::now()
                            + until.saturating_duration_since(tokio::time::Instant::now())
                    }),
                }
            })
            .collect()
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
