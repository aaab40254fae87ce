use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;

/// A change notification an [`Inventory`](super::Inventory) can offer: a generation number that
/// moves on every change, and a way to wait for the next one.
///
/// A waiting resolution wakes the moment the inventory changes, not only at its next poll; the
/// [`CapabilityCache`](super::CapabilityCache) re-checks entries made under an older generation.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use mcp_readiness::resolve::ChangeFeed;
///
/// let feed = ChangeFeed::new();
/// let seen = feed.generation();
/// feed.bump();
/// feed.changed_since(seen).await; // returns at once: the generation moved
/// assert_eq!(feed.generation(), seen + 1);
/// # }
/// ```
#[derive(Debug, Default)]
pub struct ChangeFeed {
    generation: AtomicU64,
    notify: Notify,
}

impl ChangeFeed {
    /// A feed at generation 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current generation. Cheap: one atomic load.
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Records a change and wakes every waiter.
    pub fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.notify.notify_waiters();
    }

    /// Waits until the generation differs from `seen`.
    pub async fn changed_since(&self, seen: u64) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            // Register before checking, so a bump between the check and the await is not lost.
            notified.as_mut().enable();
            if self.generation() != seen {
                return;
            }
            notified.await;
        }
    }
}
