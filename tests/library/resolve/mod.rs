//! The resolver's room: classification, the budget, the budgeted resolver and the capability
//! cache (one module each), and properties over any names. Every time test runs on tokio's paused
//! clock and steps to each edge. The shared world: a server that connects at a given virtual time.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_readiness::{
    Budget, Inventory, Snapshot, State, StaticInventory, ToolName, resolve,
    resolve::{CacheTtls, CapabilityCache, ChangeFeed, Scope, classify},
};
use tokio::time::Instant;

mod budget;
mod cache;
mod classify;
mod properties;
mod resolver;

const MS: fn(u64) -> Duration = Duration::from_millis;

/// One server that connects at a given virtual time and then offers `tools`; counts polls.
struct LateServer {
    start: Instant,
    server: &'static str,
    tools: Vec<&'static str>,
    ready_at: Option<Duration>,
    feed: Option<ChangeFeed>,
    polls: AtomicU64,
}

impl LateServer {
    fn new(server: &'static str, tools: &[&'static str], ready_at: Option<Duration>) -> Self {
        LateServer {
            start: Instant::now(),
            server,
            tools: tools.to_vec(),
            ready_at,
            feed: None,
            polls: AtomicU64::new(0),
        }
    }

    /// Also notifies at `ready_at` (needs a running runtime).
    fn notifying(mut self) -> Arc<Self> {
        self.feed = Some(ChangeFeed::new());
        let this = Arc::new(self);
        if let Some(at) = this.ready_at {
            let weak = Arc::downgrade(&this);
            let when = this.start + at;
            tokio::spawn(async move {
                tokio::time::sleep_until(when).await;
                if let Some(this) = weak.upgrade() {
                    this.feed.as_ref().map(ChangeFeed::bump);
                }
            });
        }
        this
    }

    fn polls(&self) -> u64 {
        self.polls.load(Ordering::SeqCst)
    }
}

impl Inventory for LateServer {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        let ready = self.ready_at.is_some_and(|at| self.start.elapsed() >= at);
        let mut snapshot = Snapshot::default();
        if ready {
            for tool in &self.tools {
                snapshot = snapshot.with_ready_tool(&format!("mcp__{}__{tool}", self.server));
            }
            snapshot = snapshot.with_connected_server(self.server);
        } else {
            snapshot = snapshot.with_pending_server(self.server);
        }
        Box::pin(async move { snapshot })
    }

    fn changes(&self) -> Option<&ChangeFeed> {
        self.feed.as_ref()
    }
}

/// A verdict's state and wait, to compare in one line.
fn waited(verdict: &resolve::Verdict) -> (State, Duration) {
    (verdict.state, verdict.waited)
}

/// A verdict's state, wait and whether the budget ran out.
fn timed(verdict: &resolve::Verdict) -> (State, Duration, bool) {
    (verdict.state, verdict.waited, verdict.timed_out)
}

fn tool(name: &str) -> ToolName {
    ToolName::parse(name)
}
