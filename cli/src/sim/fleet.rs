use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::time::Instant;

use mcp_readiness::ToolName;
use mcp_readiness::{Inventory, Snapshot, resolve::ChangeFeed};

/// How a simulated server behaves over virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Behaviour {
    /// Connected from the start.
    Ready,
    /// Connecting until the given time after the start, then connected.
    ReadyAfter(Duration),
    /// Connecting for ever.
    NeverReady,
    /// Waiting for authorization (and, as real runtimes show it, also pending).
    NeedsAuth,
}

#[derive(Debug, Clone)]
pub(crate) struct SimServer {
    pub(crate) name: &'static str,
    pub(crate) tools: Vec<&'static str>,
    pub(crate) behaviour: Behaviour,
}

impl SimServer {
    pub(crate) fn new(name: &'static str, tools: &[&'static str], behaviour: Behaviour) -> Self {
        SimServer {
            name,
            tools: tools.to_vec(),
            behaviour,
        }
    }

    pub(crate) fn tool_names(&self) -> impl Iterator<Item = ToolName> + '_ {
        self.tools
            .iter()
            .filter_map(|tool| ToolName::qualified(self.name, tool))
    }
}

/// An inventory whose servers change with virtual time. Counts how often it is asked.
#[derive(Debug)]
pub(crate) struct SimFleet {
    start: Instant,
    servers: Vec<SimServer>,
    feed: Option<Arc<ChangeFeed>>,
    polls: AtomicU64,
}

impl SimFleet {
    /// A fleet starting now. With `notify`, it bumps its change feed the moment a late server
    /// arrives (a background task on the virtual clock).
    pub(crate) fn start(servers: Vec<SimServer>, notify: bool) -> Arc<Self> {
        let start = Instant::now();
        let feed = notify.then(|| Arc::new(ChangeFeed::new()));
        if let Some(feed) = &feed {
            for server in &servers {
                if let Behaviour::ReadyAfter(after) = server.behaviour {
                    let feed = feed.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep_until(start + after).await;
                        feed.bump();
                    });
                }
            }
        }
        Arc::new(SimFleet {
            start,
            servers,
            feed,
            polls: AtomicU64::new(0),
        })
    }

    pub(crate) fn polls(&self) -> u64 {
        self.polls.load(Ordering::Relaxed)
    }

    fn snapshot_now(&self, only: Option<&str>) -> Snapshot {
        self.polls.fetch_add(1, Ordering::Relaxed);
        let elapsed = self.start.elapsed();
        let mut snapshot = Snapshot::default();
        for server in self
            .servers
            .iter()
            .filter(|s| only.is_none_or(|o| o == s.name))
        {
            let ready = match server.behaviour {
                Behaviour::Ready => true,
                Behaviour::ReadyAfter(after) => elapsed >= after,
                Behaviour::NeverReady | Behaviour::NeedsAuth => false,
            };
            if ready {
                snapshot.connected_servers.insert(server.name.to_owned());
                snapshot
                    .ready_tools
                    .extend(server.tool_names().map(|t| t.to_string()));
            } else {
                snapshot.pending_servers.insert(server.name.to_owned());
            }
            if server.behaviour == Behaviour::NeedsAuth {
                snapshot
                    .unauthenticated_servers
                    .insert(server.name.to_owned());
            }
        }
        snapshot
    }
}

impl Inventory for SimFleet {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        let snapshot = self.snapshot_now(None);
        Box::pin(async move { snapshot })
    }

    fn server_snapshot<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Snapshot> {
        let snapshot = self.snapshot_now(Some(server));
        Box::pin(async move { snapshot })
    }

    fn changes(&self) -> Option<&ChangeFeed> {
        self.feed.as_deref()
    }
}
