use std::sync::Arc;

use tokio::time::Instant;

use super::{Budget, Inventory, Scope, Snapshot, Verdict, classify};
use crate::state::{State, ToolName};

/// Resolves one tool within a budget.
///
/// `ready`, `unauthenticated` and `absent` return at once, without waiting. `connecting` is polled
/// on a fixed grid (every `budget.poll()` from the start) until the next poll would overrun the
/// budget; then the verdict is `connecting` with `timed_out`. When the inventory offers a
/// [`ChangeFeed`](super::ChangeFeed), a change wakes the resolution at once, off the grid.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use mcp_readiness::resolve::resolve;
/// use mcp_readiness::{Budget, Snapshot, State, StaticInventory, ToolName};
///
/// let inventory = StaticInventory::new(Snapshot::default().with_unauthenticated_server("chat"));
/// let verdict = resolve(&inventory, &ToolName::parse("mcp__chat__send"), Budget::default()).await;
/// assert_eq!(verdict.state, State::Unauthenticated);
/// assert!(verdict.waited.is_zero()); // waiting never heals it
/// # }
/// ```
pub async fn resolve<I: Inventory + ?Sized>(
    inventory: &I,
    tool: &ToolName,
    budget: Budget,
) -> Verdict {
    resolve_with(inventory, tool, budget, classify).await
}

/// [`resolve()`] with a classification of your own instead of [`classify`]: what the budgeted
/// wait does with a different reading of the same snapshots. `mcp-readiness simulate` passes one
/// without states (anything not ready might still arrive, so it waits on everything) to measure
/// what states save.
pub async fn resolve_with<I: Inventory + ?Sized>(
    inventory: &I,
    tool: &ToolName,
    budget: Budget,
    classify: impl Fn(&ToolName, &Snapshot) -> State,
) -> Verdict {
    let start = Instant::now();
    let deadline = crate::util::later(start, budget.wait());
    let mut next_poll = start;
    loop {
        let generation = inventory.changes().map(|feed| feed.generation());
        let snapshot = inventory.server_snapshot(tool.server()).await;
        let state = classify(tool, &snapshot);
        let now = Instant::now();
        if state != State::Connecting {
            return verdict(tool, &snapshot, state, now - start, false);
        }
        // Stay on the poll grid even when a change woke us early.
        while next_poll <= now {
            next_poll += budget.poll();
        }
        // Would the next poll overrun the budget? Then stop here.
        if next_poll > deadline {
            return verdict(tool, &snapshot, state, now - start, true);
        }
        match (inventory.changes(), generation) {
            (Some(feed), Some(seen)) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(next_poll) => {}
                    _ = feed.changed_since(seen) => {}
                }
            }
            _ => tokio::time::sleep_until(next_poll).await,
        }
    }
}

pub(super) fn verdict(
    tool: &ToolName,
    snapshot: &Snapshot,
    state: State,
    waited: std::time::Duration,
    timed_out: bool,
) -> Verdict {
    let server = tool.server();
    let scope = match state {
        State::Ready => Scope::Tool,
        State::Absent if snapshot.is_connected(server) => Scope::Tool,
        _ => Scope::Server,
    };
    let reason = match (state, scope) {
        (State::Ready, _) => None,
        (State::Absent, Scope::Tool) => Some(Arc::from(format!(
            "server `{server}` is connected but does not offer `{}`",
            tool.tool()
        ))),
        _ => snapshot.reason(server).map(Arc::from),
    };
    Verdict {
        state,
        waited,
        timed_out,
        scope,
        reason,
    }
}
