//! Connections made with your own handler or transport: [`Hub::add_connector`] (your
//! [`Connector`], e.g. an [`RmcpConnector`] with your own handler: the hub makes every
//! connection), [`Hub::attach_with`] (a `RunningService` you already opened, and the connector
//! that makes the next ones), and [`Hub::peer`] for everything beyond tools.

use crate::util::MutexExt as _;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::Peer;
use rmcp::service::{RoleClient, RunningService};

use super::Hub;
#[cfg(doc)]
use crate::client::RmcpConnector;
use crate::client::connector::{ConnectError, Connector, Session, SessionEvents};
use crate::client::session::RmcpSession;
use crate::client::spec::error::SpecError;
use crate::supervise::supervisor::conn_state::ConnState;

impl Hub {
    /// Supervises a connection you opened yourself (any client handler: sampling, elicitation,
    /// roots, ...) as server `name`, replacing any server of that name, and makes every later
    /// connection of it with `reconnect` (for example an [`RmcpConnector`] that opens the same
    /// transport with the same handler).
    ///
    /// It is `ready` as soon as its tools are listed, and supervised from then on exactly like a
    /// configured server: drop watch, reconnect through `reconnect`, 401/403 → `unauthenticated`,
    /// health pings, events, metrics. Your handler receives `notifications/tools/list_changed`,
    /// not the hub: call [`Hub::refresh_tools`] from its `on_tool_list_changed` (connections
    /// `reconnect` makes get [`SessionEvents::tools_changed`] for that). Calls get the
    /// `network.transport` of `reconnect`.
    pub fn attach_with<S: rmcp::Service<RoleClient>>(
        &self,
        name: impl Into<Arc<str>>,
        running: RunningService<RoleClient, S>,
        reconnect: Arc<dyn Connector>,
    ) -> Result<(), SpecError> {
        self.attach_inner(name.into(), running, reconnect)
    }

    /// Adds (or replaces) server `name` connected by `connector`, e.g. an [`RmcpConnector`] with
    /// your own client handler. Idle until used or [`Hub::connect_all`].
    pub fn add_connector(
        &self,
        name: impl Into<Arc<str>>,
        connector: Arc<dyn Connector>,
    ) -> Result<(), SpecError> {
        self.install(name.into(), connector).map(drop)
    }

    fn attach_inner<S: rmcp::Service<RoleClient>>(
        &self,
        name: Arc<str>,
        running: RunningService<RoleClient, S>,
        reconnect: Arc<dyn Connector>,
    ) -> Result<(), SpecError> {
        let session: Arc<dyn Session> = Arc::new(RmcpSession::start(
            running,
            None,
            SessionEvents::ignore(),
            None,
        ));
        let connector = Attached {
            first: Mutex::new(Some(session.clone())),
            reconnect,
        };
        match self.install(name, Arc::new(connector)) {
            Ok(supervisor) => {
                // The "attempt" hands over the attached connection and lists its tools.
                supervisor.connect_now();
                Ok(())
            }
            Err(error) => {
                session.shutdown();
                Err(error)
            }
        }
    }

    /// The rmcp client [`Peer`] of server `name`'s live connection, for resources, prompts,
    /// completions and anything else beyond tool calls. `None` unless it is `ready` (this does
    /// not connect; a call or [`Hub::connect_all`] does).
    pub fn peer(&self, name: &str) -> Option<Peer<RoleClient>> {
        self.supervisor(name)?.read(|machine| match &machine.state {
            ConnState::Connected { session, .. } if !session.is_closed() => session.peer(),
            _ => None,
        })
    }

    /// Re-reads server `name`'s tool list (what the hub's own client handler does on
    /// `notifications/tools/list_changed`; call it from yours). Does nothing unless it is `ready`.
    pub fn refresh_tools(&self, name: &str) {
        if let Some(supervisor) = self.supervisor(name) {
            // A one-off refresh: its own latch, so it never joins the connection's coalescing.
            let latch =
                std::sync::Arc::new(crate::supervise::supervisor::coalesce::Coalesce::default());
            if latch.request() {
                supervisor.refresh_tools(latch);
            }
        }
    }
}

/// The connector of an attached server: hands over the attached connection once, then makes
/// every later one with `reconnect`.
struct Attached {
    first: Mutex<Option<Arc<dyn Session>>>,
    reconnect: Arc<dyn Connector>,
}

impl Connector for Attached {
    fn connect(
        &self,
        events: SessionEvents,
    ) -> BoxFuture<'_, Result<Arc<dyn Session>, ConnectError>> {
        match self.first.lock_unpoisoned().take() {
            Some(session) => Box::pin(std::future::ready(Ok(session))),
            None => self.reconnect.connect(events),
        }
    }

    fn after_connect(&self, session: Arc<dyn Session>) -> BoxFuture<'_, Result<(), ConnectError>> {
        self.reconnect.after_connect(session)
    }

    fn network_transport(&self) -> &'static str {
        self.reconnect.network_transport()
    }
}

impl Drop for Attached {
    /// An attached connection the hub never took over (removed first) is closed with it.
    fn drop(&mut self) {
        if let Some(session) = self
            .first
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            session.shutdown();
        }
    }
}
