//! [`HubShared`]: what every supervisor of one hub shares (options, event sinks, the change feed,
//! the secrets to redact), and the queue that delivers a transition's events after the lock.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::Mutex;

use super::options::HubOptions;
use crate::resolve::ChangeFeed;
use crate::secret::{Secret, redact};
use crate::state::ConnectionEvent;

/// What every supervisor of one hub shares: options, event sinks, the change feed, and the
/// secrets of every configured server (redacted from every message).
pub(crate) struct HubShared {
    pub(crate) options: HubOptions,
    pub(crate) feed: ChangeFeed,
    secrets: Mutex<Vec<Secret>>,
    /// Events not yet delivered, in the order their transitions happened.
    pending: Mutex<VecDeque<ConnectionEvent>>,
    /// Held while delivering, so sinks see one ordered stream.
    delivering: Mutex<()>,
    /// Per-server wait budgets (from the options, changed by `Hub::set_server_budget`).
    budgets: std::sync::RwLock<std::collections::BTreeMap<String, crate::resolve::Budget>>,
}

thread_local! {
    /// Whether this thread is inside `flush` (a sink that causes events re-entrantly).
    static DELIVERING: Cell<bool> = const { Cell::new(false) };
}

impl HubShared {
    pub(crate) fn new(options: HubOptions) -> Self {
        HubShared {
            budgets: std::sync::RwLock::new(options.server_budgets.clone()),
            options,
            feed: ChangeFeed::new(),
            secrets: Mutex::new(Vec::new()),
            pending: Mutex::new(VecDeque::new()),
            delivering: Mutex::new(()),
        }
    }

    /// The wait budget set for `server`, if any.
    pub(crate) fn server_budget(&self, server: &str) -> Option<crate::resolve::Budget> {
        self.budgets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .copied()
    }

    /// Sets (or, with `None`, clears) the wait budget of `server`.
    pub(crate) fn set_server_budget(&self, server: &str, budget: Option<crate::resolve::Budget>) {
        let mut budgets = self.budgets.write().unwrap_or_else(|p| p.into_inner());
        match budget {
            Some(budget) => budgets.insert(server.to_owned(), budget),
            None => budgets.remove(server),
        };
    }

    pub(crate) fn add_secrets(&self, secrets: impl IntoIterator<Item = Secret>) {
        let secrets: Vec<Secret> = secrets.into_iter().collect();
        // Log lines and exported spans of every crate are redacted with them too.
        crate::secret::remember(secrets.iter().cloned());
        let mut known = self.secrets.lock().unwrap_or_else(|p| p.into_inner());
        for secret in secrets {
            if !known.contains(&secret) {
                known.push(secret);
            }
        }
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        let secrets = self.secrets.lock().unwrap_or_else(|p| p.into_inner());
        redact(text, &secrets)
    }

    /// Queues `events` and delivers them (see [`HubShared::flush`]).
    pub(crate) fn emit(&self, events: Vec<ConnectionEvent>) {
        self.queue(events);
        self.flush();
    }

    /// Queues `events` for delivery. Call it while still holding the lock under which their
    /// transitions were made, then [`HubShared::flush`] after releasing it: sinks then see the
    /// transitions in the order they happened (an attempt that fails at once must not report
    /// `connecting -> absent` before the `absent -> connecting` that started it).
    pub(crate) fn queue(&self, events: Vec<ConnectionEvent>) {
        if !events.is_empty() {
            self.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(events);
        }
    }

    /// Sends the queued events to every sink, in order, outside any supervisor lock, and bumps the
    /// change feed when one of them changes what an inventory snapshot would say. One thread
    /// delivers at a time; events a sink causes re-entrantly are delivered by the same loop.
    pub(crate) fn flush(&self) {
        if DELIVERING.with(Cell::get) {
            return;
        }
        let _turn = self.delivering.lock().unwrap_or_else(|p| p.into_inner());
        /// Clears the flag even when a sink panics.
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                DELIVERING.with(|d| d.set(false));
            }
        }
        DELIVERING.with(|d| d.set(true));
        let reset = Reset;
        let mut changed = false;
        loop {
            let next = self
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop_front();
            let Some(event) = next else { break };
            changed |= matches!(
                event,
                ConnectionEvent::StateChanged { .. }
                    | ConnectionEvent::ToolsChanged { .. }
                    | ConnectionEvent::ServerAdded { .. }
                    | ConnectionEvent::ServerRemoved { .. }
            );
            for sink in &self.options.sinks {
                sink.on_event(&event);
            }
        }
        drop(reset);
        if changed {
            self.feed.bump();
        }
    }
}
