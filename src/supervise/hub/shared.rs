//! [`HubShared`]: what every supervisor of one hub shares (options, the event queue with its
//! sinks and change feed, the secrets to redact, per-server budgets).

use crate::util::{MutexExt as _, RwLockExt as _};
use std::sync::Mutex;

use super::options::HubOptions;
use crate::secret::{Secret, redact};
use crate::supervise::events::EventQueue;

/// What every supervisor of one hub shares: options, the ordered event queue (the sinks and the
/// change feed), and the secrets of every configured server (redacted from every message).
pub(crate) struct HubShared {
    pub(crate) options: HubOptions,
    /// The hub's one ordered event queue: every supervisor queues its transitions' events here.
    pub(crate) events: EventQueue,
    secrets: Mutex<Vec<Secret>>,
    /// Per-server wait budgets (from the options, changed by `Hub::set_server_budget`).
    budgets: std::sync::RwLock<std::collections::BTreeMap<String, crate::resolve::Budget>>,
}

impl HubShared {
    pub(crate) fn new(options: HubOptions) -> Self {
        HubShared {
            budgets: std::sync::RwLock::new(options.server_budgets.clone()),
            events: EventQueue::new(options.sinks.clone()),
            options,
            secrets: Mutex::new(Vec::new()),
        }
    }

    /// The wait budget set for `server`, if any.
    pub(crate) fn server_budget(&self, server: &str) -> Option<crate::resolve::Budget> {
        self.budgets.read_unpoisoned().get(server).copied()
    }

    /// Sets (or, with `None`, clears) the wait budget of `server`.
    pub(crate) fn set_server_budget(&self, server: &str, budget: Option<crate::resolve::Budget>) {
        let mut budgets = self.budgets.write_unpoisoned();
        match budget {
            Some(budget) => budgets.insert(server.to_owned(), budget),
            None => budgets.remove(server),
        };
    }

    pub(crate) fn add_secrets(&self, secrets: impl IntoIterator<Item = Secret>) {
        let secrets: Vec<Secret> = secrets.into_iter().collect();
        // Log lines and exported spans of every crate are redacted with them too.
        crate::secret::remember(secrets.iter().cloned());
        let mut known = self.secrets.lock_unpoisoned();
        for secret in secrets {
            if !known.contains(&secret) {
                known.push(secret);
            }
        }
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        let secrets = self.secrets.lock_unpoisoned();
        redact(text, &secrets)
    }
}
