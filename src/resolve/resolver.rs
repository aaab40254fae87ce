use std::sync::Arc;

use tokio::time::Instant;

use super::{Budget, Inventory, Scope, Snapshot, Verdict, classify};
use crate::state::{State, ToolName};

/// Resolves one tool within a budget.
///
/// `ready`, `unauthenticated` and `absent` return at once, without waiting. `connecting` is polled
/// on a fixed grid (every `budget.poll()` from the start) until the next poll would overrun the
/// budget; then the verdict is `connecting` with `timed_out`. When the inventory offers a
/// [`ChangeFeed`](super::ChangeFeed), a change wakes the resolution at once, off the grid, and
/// the rest of the budget after the last poll that fits is spent waiting for one: the wait ends
/// at the budget (a 3 s budget polled every 2 s waits 3 s, not 2 s), never past it.
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
        // Stay on the poll grid even when a change woke us early (or a slow snapshot made us
        // late): the first grid point after now, in one step.
        if next_poll <= now {
            next_poll = next_on_grid(next_poll, now, budget.poll());
        }
        // Would the next poll overrun the budget? Without a change feed, stop here (the seed's
        // rule). With one, the rest of the budget costs nothing to wait: a change wakes the
        // resolution at once, so it waits for one until the budget ends, never past it, and a
        // server ready in the budget's last second is still caught.
        let feed = inventory.changes().zip(generation);
        let wake_at = match (next_poll > deadline, &feed) {
            (false, _) => next_poll,
            (true, Some(_)) if now < deadline => deadline,
            (true, _) => return verdict(tool, &snapshot, state, now - start, true),
        };
        match feed {
            Some((feed, seen)) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(wake_at) => {}
                    _ = feed.changed_since(seen) => {}
                }
            }
            None => tokio::time::sleep_until(wake_at).await,
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
            "server `{}` is connected but does not offer `{}`",
            crate::util::echo(server),
            crate::util::echo(tool.tool())
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

/// The first point of the grid `from + k * poll` (k ≥ 1) after `now` (`from <= now`).
fn next_on_grid(from: Instant, now: Instant, poll: std::time::Duration) -> Instant {
    let poll_nanos = poll.as_nanos().max(1);
    let steps = (now - from).as_nanos() / poll_nanos + 1;
    let ahead = std::time::Duration::from_nanos(
        u64::try_from(steps.saturating_mul(poll_nanos)).unwrap_or(u64::MAX),
    );
    crate::util::later(from, ahead)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_next_grid_point_is_found_in_one_step_however_far_behind() {
        let from = Instant::now();
        let poll = Duration::from_millis(2);
        let at = |ms| from + Duration::from_millis(ms);
        assert_eq!(next_on_grid(from, from, poll), at(2));
        assert_eq!(next_on_grid(from, at(1), poll), at(2));
        // On a grid point: the next one.
        assert_eq!(next_on_grid(from, at(2), poll), at(4));
        assert_eq!(next_on_grid(from, at(3), poll), at(4));
        // Far behind (a slow snapshot, a busy runtime): one step, not one per missed point.
        assert_eq!(next_on_grid(from, at(60_001), poll), at(60_002));
        // The shortest poll over an hour: still one step.
        let hour = from + Duration::from_secs(3600);
        assert_eq!(
            next_on_grid(from, hour, Budget::MIN_POLL),
            hour + Budget::MIN_POLL
        );
    }
}
