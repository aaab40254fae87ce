use crate::util::MutexExt as _;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::{ChangeFeed, Snapshot};

/// Anything that can say which tools are usable now: the `Hub` of supervised
/// connections, a test double, or an adapter over an agent runtime's own connector list.
///
/// `snapshot` is called once per poll, never on the cache-hit path, so it may allocate.
pub trait Inventory: Send + Sync + 'static {
    /// What is known now, for every server.
    fn snapshot(&self) -> BoxFuture<'_, Snapshot>;

    /// What is known now about one server. Implementations with many servers should override this
    /// to avoid building the whole snapshot; the default calls [`Inventory::snapshot`].
    fn server_snapshot<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Snapshot> {
        let _ = server;
        self.snapshot()
    }

    /// The change notification, if this inventory offers one.
    ///
    /// With a feed, a waiting resolution wakes the moment the inventory changes, and every cached
    /// verdict made before a change is re-checked at its next use (a dropped server's tools stop
    /// being ready at once).
    ///
    /// Without one (the default), waiting resolutions notice changes at their next poll only, and
    /// cached verdicts are trusted for their whole lifetime ([`CacheTtls`](crate::resolve::CacheTtls)):
    /// a ready tool stays ready for the ready TTL (60 s by default) even if its server dropped,
    /// unless a call on it fails with `transport_error` (or the inner service reports the server
    /// not ready), which drops that tool's ready entry so the next call re-checks. Inventories
    /// over live connections should offer a feed ([`ChangeFeed::bump`] on every change), as the
    /// `Hub` and `Peers` (feature `hub`) do.
    fn changes(&self) -> Option<&ChangeFeed> {
        None
    }

    /// The OpenTelemetry `network.transport` of a server's connection (`pipe` for stdio, `tcp`
    /// for HTTP), if known. The readiness layer puts it on each call's span.
    fn network_transport(&self, server: &str) -> Option<&'static str> {
        let _ = server;
        None
    }

    /// The wait budget for `server`'s tools, if this inventory knows one (the Hub's
    /// `readiness.servers.<name>.budget`). A [`CapabilityCache`](super::CapabilityCache) uses it
    /// instead of its default budget, unless it was given one for that server itself.
    fn wait_budget(&self, server: &str) -> Option<super::Budget> {
        let _ = server;
        None
    }

    /// How long until `server`'s next connection attempt, when one is scheduled (the `Hub`: a
    /// failed connect's backoff, a crash loop's, or the `Retry-After` a throttling server sent).
    /// A `connecting` refusal answers HTTP with it as `Retry-After` (feature `http`).
    fn next_attempt(&self, server: &str) -> Option<std::time::Duration> {
        let _ = server;
        None
    }
}

impl<T: Inventory + ?Sized> Inventory for Arc<T> {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        (**self).snapshot()
    }
    fn server_snapshot<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Snapshot> {
        (**self).server_snapshot(server)
    }
    fn changes(&self) -> Option<&ChangeFeed> {
        (**self).changes()
    }
    fn network_transport(&self, server: &str) -> Option<&'static str> {
        (**self).network_transport(server)
    }
    fn wait_budget(&self, server: &str) -> Option<super::Budget> {
        (**self).wait_budget(server)
    }
    fn next_attempt(&self, server: &str) -> Option<std::time::Duration> {
        (**self).next_attempt(server)
    }
}

/// An inventory whose snapshot is set by hand, with change notifications. Useful in tests and for
/// runtimes that push their connector list rather than being asked for it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use mcp_readiness::{Inventory, Snapshot, StaticInventory};
///
/// let inventory = StaticInventory::new(Snapshot::default().with_pending_server("search"));
/// inventory.set(Snapshot::default().with_ready_tool("mcp__search__query"));
/// assert!(inventory.snapshot().await.ready_tools.contains("mcp__search__query"));
/// # }
/// ```
#[derive(Debug, Default)]
pub struct StaticInventory {
    snapshot: std::sync::Mutex<Snapshot>,
    feed: ChangeFeed,
}

impl StaticInventory {
    /// An inventory that answers `snapshot` until [`StaticInventory::set`] replaces it.
    pub fn new(snapshot: Snapshot) -> Self {
        StaticInventory {
            snapshot: std::sync::Mutex::new(snapshot),
            feed: ChangeFeed::new(),
        }
    }

    /// Replaces the snapshot and notifies waiters.
    pub fn set(&self, snapshot: Snapshot) {
        *self.snapshot.lock_unpoisoned() = snapshot;
        self.feed.bump();
    }
}

impl Inventory for StaticInventory {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        let snapshot = self.snapshot.lock_unpoisoned().clone();
        Box::pin(async move { snapshot })
    }

    fn changes(&self) -> Option<&ChangeFeed> {
        Some(&self.feed)
    }
}
