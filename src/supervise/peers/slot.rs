//! One server of a [`Peers`](super::Peers) registry: the [`Conn`] state machine and its
//! transitions, each commented with its edge; every transition collects the
//! [`ConnectionEvent`]s it causes by the one readiness-change rule ([`Transitions`]), the same as
//! a hub supervisor's machine.

use std::sync::Arc;

use tokio::time::Instant;

use crate::client::connector::Session;
use crate::client::session::RmcpSession;
use crate::state::{ConnectResult, ConnectionEvent, State};
use crate::supervise::events::{Announce, Readiness, Transitions};

/// Where the service's connection to one server is.
///
/// ```text
///  (new) ──connecting──▶ Connecting ──insert ok──▶ Live{g} ──drop / dead pipe──▶ Absent
///    │                      │                         │
///    └──insert ok───────────┼─────────────────────────┤──401/403 on a call──▶ Unauthenticated
///                           └──failed──▶ Absent / Unauthenticated
///  any ──insert ok──▶ Live{g+1}      any ──connecting──▶ Connecting      any ──remove──▶ (gone)
/// ```
pub(super) enum Conn {
    /// The service said it is connecting (its handshake is in progress).
    Connecting,
    /// A live connection of generation `g`, watched for its end.
    Live {
        session: Arc<RmcpSession>,
        /// The tool names it lists (unqualified).
        tools: Arc<Vec<String>>,
    },
    /// Credentials were rejected (at connect or mid-session).
    Unauthenticated,
    /// No connection: it failed, ended, or was never made.
    Absent,
}

impl Readiness for Conn {
    fn readiness(&self) -> State {
        match self {
            Conn::Connecting => State::Connecting,
            Conn::Live { .. } => State::Ready,
            Conn::Unauthenticated => State::Unauthenticated,
            Conn::Absent => State::Absent,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Conn::Connecting => "connecting",
            Conn::Live { .. } => "live",
            Conn::Unauthenticated => "unauthenticated",
            Conn::Absent => "absent",
        }
    }
}

/// One server: its connection state, why, the generation of its newest live connection, when
/// the service started connecting it, its transport, and the events its transitions caused that
/// are not queued yet.
pub(super) struct Slot {
    server: Arc<str>,
    pub(super) conn: Conn,
    events: Transitions,
    pub(super) reason: Option<Arc<str>>,
    /// The newest live connection's generation (0 before the first).
    pub(super) generation: u64,
    /// When the service said it started connecting (for `connect_duration_seconds`).
    since: Option<Instant>,
    pub(super) transport: Option<&'static str>,
}

impl Slot {
    /// A server first heard of: `Absent`, and `ServerAdded` queued.
    pub(super) fn new(server: Arc<str>) -> Slot {
        Slot {
            events: Transitions::added(server.clone(), Conn::Absent.readiness()),
            server,
            conn: Conn::Absent,
            reason: None,
            generation: 0,
            since: None,
            transport: None,
        }
    }

    /// The events caused since the last call, in the order they happened.
    pub(super) fn take_events(&mut self) -> Vec<ConnectionEvent> {
        self.events.take()
    }

    /// Moves to `next` with `reason` by the readiness-change rule ([`Transitions::transition`]:
    /// `StateChanged` when the readiness state changes). Every transition goes through here; a
    /// live connection left behind is shut down.
    fn transition(&mut self, next: Conn, reason: Option<Arc<str>>) {
        let left = self
            .events
            .transition(&mut self.conn, &mut self.reason, next, reason);
        if let Conn::Live { session, .. } = left {
            session.shutdown();
        }
    }

    /// Any → Connecting: the service started a handshake; its duration is measured from now.
    pub(super) fn connecting(&mut self) {
        self.since = Some(Instant::now());
        let reason = format!("server `{}` is connecting", self.server);
        self.transition(Conn::Connecting, Some(reason.into()));
    }

    /// Any → Live{g+1}: a connection with its tool list. Queues `ConnectAttempt{ok}`, then the
    /// announcement of the rule ([`Transitions::connected`]): `ToolsChanged`, and `Reconnected`
    /// when it is not the first (a connection the service made names no endpoint, and its
    /// handshake is not announced). Returns the generation.
    pub(super) fn live(&mut self, session: Arc<RmcpSession>, tools: Vec<String>) -> u64 {
        self.attempt_ended(ConnectResult::Ok);
        let announce = Announce {
            endpoint: None,
            identity: None,
            tools: tools.len(),
            reconnect: self.generation > 0,
        };
        self.generation += 1;
        let left = self.events.connected(
            &mut self.conn,
            &mut self.reason,
            Conn::Live {
                session,
                tools: Arc::new(tools),
            },
            announce,
        );
        if let Conn::Live { session, .. } = left {
            session.shutdown();
        }
        self.generation
    }

    /// Any → Unauthenticated (`result` unauthorized) or Absent: a connect the service made
    /// failed. Queues `ConnectAttempt{result}`.
    pub(super) fn failed(&mut self, result: ConnectResult, why: Arc<str>) {
        self.attempt_ended(result);
        let next = match result {
            ConnectResult::Unauthorized => Conn::Unauthenticated,
            _ => Conn::Absent,
        };
        self.transition(next, Some(why));
    }

    /// Live{g} → Absent, if `g` is still the live generation (a late end of an older connection
    /// changes nothing). Returns whether it acted.
    pub(super) fn lost(&mut self, generation: u64, why: &str) -> bool {
        if !self.is_live(generation) {
            return false;
        }
        let reason = format!(
            "connection to server `{}` lost: {why}; the service has to connect it again",
            self.server
        );
        self.transition(Conn::Absent, Some(reason.into()));
        true
    }

    /// Live{g} → Unauthenticated, if `g` is still live: the server rejected the credentials
    /// mid-session.
    pub(super) fn auth_lost(&mut self, generation: u64, why: String) {
        if self.is_live(generation) {
            self.transition(Conn::Unauthenticated, Some(why.into()));
        }
    }

    /// Live{g} → Live{g} with a new tool list, if `g` is still live. Queues `ToolsChanged`.
    pub(super) fn replace_tools(&mut self, generation: u64, names: Vec<String>) {
        if let Conn::Live { tools, .. } = &mut self.conn
            && self.generation == generation
        {
            self.events.tools_changed(names.len());
            *tools = Arc::new(names);
        }
    }

    /// Any → (gone): closes a live connection. The caller queues `ServerRemoved`.
    pub(super) fn close(&mut self) {
        if let Conn::Live { session, .. } = &self.conn {
            session.shutdown();
        }
    }

    /// The live connection and its generation, unless it is known to have closed.
    pub(super) fn live_session(&self) -> Option<(u64, Arc<RmcpSession>)> {
        match &self.conn {
            Conn::Live { session, .. } if !session.is_closed() => {
                Some((self.generation, session.clone()))
            }
            _ => None,
        }
    }

    fn is_live(&self, generation: u64) -> bool {
        matches!(self.conn, Conn::Live { .. }) && self.generation == generation
    }

    /// Queues `ConnectAttempt` for the attempt that just ended, timed from `connecting` (zero
    /// when the service did not say it was connecting).
    fn attempt_ended(&mut self, result: ConnectResult) {
        let duration = self.since.take().map(|s| s.elapsed()).unwrap_or_default();
        self.events.attempt_ended(result, duration);
    }
}
