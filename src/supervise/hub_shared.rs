use std::sync::Mutex;

use super::event::ConnectionEvent;
use super::options::HubOptions;
use crate::resolve::ChangeFeed;
use crate::secret::{Secret, redact};

/// What every supervisor of one hub shares: options, event sinks, the change feed, and the
/// secrets of every configured server (redacted from every message).
pub(crate) struct HubShared {
    pub(crate) options: HubOptions,
    pub(crate) feed: ChangeFeed,
    secrets: Mutex<Vec<Secret>>,
}

impl HubShared {
    pub(crate) fn new(options: HubOptions) -> Self {
        HubShared {
            options,
            feed: ChangeFeed::new(),
            secrets: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn add_secrets(&self, secrets: impl IntoIterator<Item = Secret>) {
        self.secrets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(secrets);
    }

    pub(crate) fn redact(&self, text: &str) -> String {
        let secrets = self.secrets.lock().unwrap_or_else(|p| p.into_inner());
        redact(text, &secrets)
    }

    /// Sends events to every sink (outside any lock), and bumps the change feed when one of them
    /// changes what an inventory snapshot would say.
    pub(crate) fn emit(&self, events: Vec<ConnectionEvent>) {
        let mut changed = false;
        for event in &events {
            changed |= matches!(
                event,
                ConnectionEvent::StateChanged { .. }
                    | ConnectionEvent::ToolsChanged { .. }
                    | ConnectionEvent::ServerAdded { .. }
                    | ConnectionEvent::ServerRemoved { .. }
            );
            for sink in &self.options.sinks {
                sink.on_event(event);
            }
        }
        if changed {
            self.feed.bump();
        }
    }
}
