//! Forwards what a connector knows of its credentials to the hub's sinks: every change of the
//! known expiries is a [`ConnectionEvent::CredentialsExpire`] (the gauge, the status page), and a
//! re-authorization after refused credentials lets an unauthenticated server try again.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Supervisor;
use crate::state::ConnectionEvent;

impl Supervisor {
    /// Starts (once) the task that forwards the connector's credential changes. Call it after
    /// the server was announced (`ServerAdded`), from inside a tokio runtime; outside one it does
    /// nothing and the first connection attempt starts it.
    pub(crate) fn watch_credentials(self: &Arc<Self>) {
        if tokio::runtime::Handle::try_current().is_err()
            || self.watching_credentials.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let Some(mut updates) = self.connector.credentials() else {
            return;
        };
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut reauthorized = updates.borrow().reauthorized;
            loop {
                let state = updates.borrow_and_update().clone();
                let Some(supervisor) = weak.upgrade() else {
                    return;
                };
                if state.reauthorized != reauthorized {
                    reauthorized = state.reauthorized;
                    // New credentials after refused ones: try them now.
                    if supervisor.reset_auth() {
                        supervisor.connect_now();
                    }
                }
                supervisor
                    .shared
                    .events
                    .emit(vec![ConnectionEvent::CredentialsExpire {
                        server: supervisor.name.clone(),
                        expiries: state.expiries,
                    }]);
                drop(supervisor);
                // Ends when the connector (and its sender) is gone.
                if updates.changed().await.is_err() {
                    return;
                }
            }
        });
    }
}
