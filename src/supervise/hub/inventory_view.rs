//! The [`Inventory`] view of a [`Hub`]: what a snapshot says about each supervised server.

use futures::future::BoxFuture;

use super::Hub;
use crate::resolve::{ChangeFeed, Inventory, Snapshot};
use crate::state::{State, ToolName};

impl Hub {
    /// What every server (or only `only`) looks like now: ready tools of connected servers,
    /// pending, unauthenticated, and the reasons.
    pub(super) fn build_snapshot(&self, only: Option<&str>) -> Snapshot {
        let mut snapshot = Snapshot::default();
        let supervisors = match only {
            Some(server) => self.supervisor(server).into_iter().collect(),
            None => self.supervisors(),
        };
        for supervisor in supervisors {
            let name = supervisor.name();
            let observed = supervisor.observe();
            match observed.state {
                State::Ready => {
                    snapshot.connected_servers.insert(name.to_string());
                    for tool in observed.tools.iter() {
                        if let Some(qualified) = ToolName::qualified(name, tool) {
                            snapshot.ready_tools.insert(qualified.as_str().to_owned());
                        }
                    }
                }
                State::Connecting => {
                    snapshot.pending_servers.insert(name.to_string());
                }
                State::Unauthenticated => {
                    snapshot.unauthenticated_servers.insert(name.to_string());
                }
                State::Absent => {}
            }
            if let Some(reason) = observed.reason {
                snapshot
                    .reasons
                    .insert(name.to_string(), reason.to_string());
            }
        }
        snapshot
    }
}

/// Why a server the hub does not have reads `absent`: `server `x` is not configured; add it to
/// the configuration`.
pub(super) fn not_configured_reason(server: &str) -> String {
    format!(
        "server `{}` is not configured; add it to the configuration",
        crate::secret::echo(server)
    )
}

impl Inventory for Hub {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        let snapshot = self.build_snapshot(None);
        Box::pin(std::future::ready(snapshot))
    }

    /// Asking about one server is a use of it: an idle server (never connected, or dropped while
    /// nobody called it) and one whose cooldown or crash-loop backoff is over start connecting now, so resolution through
    /// the readiness layer reconnects on use instead of reporting the server absent.
    fn server_snapshot<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Snapshot> {
        let configured = self
            .supervisor(server)
            .inspect(|supervisor| supervisor.connect_now());
        let mut snapshot = self.build_snapshot(Some(server));
        // Absent because nobody configured it: say so, as `Hub::call` does.
        if configured.is_none() {
            snapshot = snapshot.with_reason(server, not_configured_reason(server));
        }
        Box::pin(std::future::ready(snapshot))
    }

    fn changes(&self) -> Option<&ChangeFeed> {
        Some(self.inner.feed())
    }

    fn network_transport(&self, server: &str) -> Option<&'static str> {
        Hub::network_transport(self, server)
    }

    fn wait_budget(&self, server: &str) -> Option<crate::resolve::Budget> {
        self.server_budget(server)
    }

    fn next_attempt(&self, server: &str) -> Option<std::time::Duration> {
        let until = self.supervisor(server)?.observe().next_attempt?;
        Some(until.saturating_duration_since(tokio::time::Instant::now()))
    }
}
