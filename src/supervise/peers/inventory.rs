//! The [`Inventory`] view of [`Peers`]: what a snapshot says about each server the service
//! connected.

use futures::future::BoxFuture;

use super::Peers;
use super::slot::{Conn, Slot};
use crate::resolve::{ChangeFeed, Inventory, Snapshot};
use crate::state::ToolName;

impl Peers {
    fn snapshot_of<'a>(&self, slots: impl Iterator<Item = (&'a str, &'a Slot)>) -> Snapshot {
        let mut snapshot = Snapshot::default();
        for (name, slot) in slots {
            match &slot.conn {
                Conn::Live { tools, session } if !super::Session::is_closed(&**session) => {
                    snapshot.connected_servers.insert(name.to_owned());
                    for tool in tools.iter() {
                        if let Some(qualified) = ToolName::qualified(name, tool) {
                            snapshot.ready_tools.insert(qualified.as_str().to_owned());
                        }
                    }
                }
                // Closed but the watcher has not run yet: absent already.
                Conn::Live { .. } | Conn::Absent => {}
                Conn::Connecting => {
                    snapshot.pending_servers.insert(name.to_owned());
                }
                Conn::Unauthenticated => {
                    snapshot.unauthenticated_servers.insert(name.to_owned());
                }
            }
            if let Some(reason) = &slot.reason {
                snapshot.reasons.insert(name.to_owned(), reason.to_string());
            }
        }
        snapshot
    }
}

/// Ready tools are the tools listed by live connections (as `mcp__<server>__<tool>`); the change
/// feed moves on every state and tool-list change, so the layer re-checks a ready tool the moment
/// its connection ends.
impl Inventory for Peers {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        let servers = self.inner.lock();
        let snapshot = self.snapshot_of(servers.iter().map(|(n, s)| (&**n, s)));
        drop(servers);
        Box::pin(std::future::ready(snapshot))
    }

    fn server_snapshot<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Snapshot> {
        let servers = self.inner.lock();
        let snapshot = self.snapshot_of(
            servers
                .get_key_value(server)
                .map(|(n, s)| (&**n, s))
                .into_iter(),
        );
        drop(servers);
        Box::pin(std::future::ready(snapshot))
    }

    fn changes(&self) -> Option<&ChangeFeed> {
        Some(self.inner.events.feed())
    }

    fn network_transport(&self, server: &str) -> Option<&'static str> {
        self.inner.lock().get(server).and_then(|s| s.transport)
    }
}
