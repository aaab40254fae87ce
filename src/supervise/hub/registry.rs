//! The [`Hub`]'s servers by name at run time: add, remove and replace a server (a reload),
//! install one over a connector (`attach_with`, `add_connector`), per-server wait budgets, and
//! re-authorization.

use crate::util::RwLockExt as _;
use std::sync::Arc;

use super::Hub;
use super::factory::{connector_or_problem, secrets_of};
use crate::client::connector::Connector;
use crate::client::spec::ServerSpec;
use crate::client::spec::error::SpecError;
use crate::state::{ConnectionEvent, State};
use crate::supervise::supervisor::Supervisor;

impl Hub {
    /// Adds a server (idle, reading `connecting`, until used or [`Hub::connect_all`]). A server
    /// this build cannot serve is added too and reads `absent` with the problem as its reason
    /// (see [`Hub::new`]); only a duplicate or unusable name is refused.
    pub fn add_server(&self, spec: ServerSpec) -> Result<(), SpecError> {
        let (connector, problem) = connector_or_problem(&spec, &self.inner.shared.options)?;
        self.inner.shared.add_secrets(secrets_of(&spec));
        let mut servers = self.inner.servers.write_unpoisoned();
        if servers.contains_key(&spec.name) {
            return Err(SpecError::Duplicate { server: spec.name });
        }
        servers.insert(
            spec.name.clone(),
            Supervisor::new(
                spec.name.clone(),
                connector,
                self.inner.shared.clone(),
                Some(spec.clone()),
            ),
        );
        let added = servers.get(&spec.name).cloned();
        drop(servers);
        self.inner
            .shared
            .events
            .emit(vec![ConnectionEvent::ServerAdded {
                server: spec.name,
                state: State::Connecting,
            }]);
        if let Some(added) = added {
            match &problem {
                Some(problem) => added.unservable(problem),
                None => added.watch_credentials(),
            }
        }
        Ok(())
    }

    /// Removes a server, closing its connection (and killing a stdio child). Returns whether it
    /// was configured.
    pub fn remove_server(&self, server: &str) -> bool {
        let removed = self.inner.servers.write_unpoisoned().remove(server);
        match removed {
            Some(supervisor) => {
                supervisor.retire();
                self.inner
                    .shared
                    .events
                    .emit(vec![ConnectionEvent::ServerRemoved {
                        server: supervisor.name().clone(),
                    }]);
                true
            }
            None => false,
        }
    }

    /// Replaces a server's configuration (a reload). A changed configuration closes the old
    /// connection and starts afresh, so changed credentials let an unauthenticated server try
    /// again. An unknown server is added. A configuration this build cannot serve replaces the
    /// old one too, and the server reads `absent` with the problem as its reason.
    pub fn replace_server(&self, spec: ServerSpec) -> Result<(), SpecError> {
        if self
            .supervisor(&spec.name)
            .is_some_and(|s| s.spec() == Some(&spec))
        {
            // Unchanged: keep the live connection (a reload touches only what changed).
            return Ok(());
        }
        let (connector, problem) = connector_or_problem(&spec, &self.inner.shared.options)?;
        self.inner.shared.add_secrets(secrets_of(&spec));
        let fresh = Supervisor::new(
            spec.name.clone(),
            connector,
            self.inner.shared.clone(),
            Some(spec.clone()),
        );
        // The fresh supervisor is idle (`connecting`) until something connects it.
        self.swap_in(
            spec.name.clone(),
            &fresh,
            State::Connecting,
            "its configuration changed; reconnecting with the new one",
        );
        match &problem {
            Some(problem) => fresh.unservable(problem),
            None => fresh.watch_credentials(),
        }
        Ok(())
    }

    /// Sets the wait budget of `server`'s tools (or, with `None`, goes back to the resolver's
    /// default), as [`HubOptionsBuilder::server_budget`](crate::supervise::HubOptionsBuilder::server_budget)
    /// does at start; a configuration reload calls it. Resolutions that start afterwards use it.
    pub fn set_server_budget(&self, server: &str, budget: Option<crate::resolve::Budget>) {
        self.inner.shared.set_server_budget(server, budget);
    }

    /// The wait budget set for `server`, if any (see [`Hub::set_server_budget`]).
    pub fn server_budget(&self, server: &str) -> Option<crate::resolve::Budget> {
        self.inner.shared.server_budget(server)
    }

    /// Puts a fresh supervisor for `name` over `connector` in place of any supervisor of that name
    /// (whose connection is closed), announcing the change like [`Hub::replace_server`]. Used by
    /// [`Hub::attach_with`] and [`Hub::add_connector`].
    pub(super) fn install(
        &self,
        name: Arc<str>,
        connector: Arc<dyn Connector>,
    ) -> Result<Arc<Supervisor>, SpecError> {
        if crate::state::ToolName::qualified(&name, "x").is_none()
            || name.chars().any(char::is_control)
        {
            return Err(SpecError::BadName { server: name });
        }
        let fresh = Supervisor::new(name.clone(), connector, self.inner.shared.clone(), None);
        self.swap_in(name, &fresh, State::Absent, "replaced by a new connection");
        Ok(fresh)
    }

    /// Puts `fresh` in place of any supervisor of `name` (whose connection is closed) and
    /// announces it: a new server is added (`connecting`); a replaced one moves to `to` with
    /// `reason` (or, already there, only moves the change feed).
    fn swap_in(&self, name: Arc<str>, fresh: &Arc<Supervisor>, to: State, reason: &str) {
        let old = self
            .inner
            .servers
            .write_unpoisoned()
            .insert(name.clone(), fresh.clone());
        let Some(old) = old else {
            self.inner
                .shared
                .events
                .emit(vec![ConnectionEvent::ServerAdded {
                    server: name,
                    state: State::Connecting,
                }]);
            return;
        };
        let from = old.observe().state;
        old.retire();
        if from == to {
            self.inner.feed().bump();
        } else {
            self.inner
                .shared
                .events
                .emit(vec![ConnectionEvent::StateChanged {
                    server: name,
                    from,
                    to,
                    reason: Some(reason.into()),
                }]);
        }
    }

    /// Credentials changed outside the configuration (an explicit re-authorization): an
    /// unauthenticated server may try again at next use. Returns whether it was unauthenticated.
    pub fn reset_auth(&self, server: &str) -> bool {
        self.supervisor(server).is_some_and(|s| s.reset_auth())
    }
}
