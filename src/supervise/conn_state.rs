//! The per-server connection state machine: the [`ConnState`] enum and every transition of it,
//! each commented with its edge. [`Machine`] is what a supervisor's lock guards; the transitions
//! queue the [`ConnectionEvent`]s they cause, and the supervisor delivers them after unlocking
//! (see `Supervisor::update`).

use std::sync::Arc;

use futures::future::{BoxFuture, Shared};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::connector::{ConnectError, Session};
use crate::state::ConnectionEvent;
use crate::state::State;

/// What a connection attempt yields to everyone who awaited it: the generation and session, or
/// the classified failure.
pub(crate) type AttemptOutcome = Result<(u64, Arc<dyn Session>), ConnectError>;

/// The single in-flight attempt, shared by every caller that arrives while it runs.
pub(crate) type Attempt = Shared<BoxFuture<'static, AttemptOutcome>>;

/// The per-server connection state machine. A connection is a thing you maintain, not a thing you
/// have: no boolean, one enum, and every transition goes through [`Machine::transition`], which
/// queues the events.
///
/// ```text
///            ┌──────────── connect_all / first use ───────────┐
///            ▼                                                │
///  Idle ──▶ Connecting ──ok──▶ Connected{g} ──drop / ping fail──▶ Idle
///            │   ▲                 │
///            │   └─ cooldown over ─┼──────────── CoolingDown{until}
///            ├──fail──────────────────────────▶ CoolingDown{until}
///            ├──429/503 + Retry-After──▶ Throttled{until} ──retry-after over──▶ Connecting
///            └──401/403──▶ Unauthorized ◀──401 mid-session── Connected{g}
///                               └── credentials changed (replace_server / reset_auth) ──▶ Idle
///  any ──shutdown / remove──▶ Stopped
/// ```
pub(crate) enum ConnState {
    /// No connection: never tried, or the last one closed. The next use connects.
    Idle,
    /// One attempt in flight (single-flight); callers join `attempt`.
    Connecting {
        /// The shared outcome.
        attempt: Attempt,
        /// Cancels the attempt (and kills a half-started child) on shutdown.
        abort: AbortHandle,
    },
    /// A live connection of generation `generation`; closes and errors from older generations are
    /// ignored.
    Connected {
        generation: u64,
        session: Arc<dyn Session>,
        /// The tool names the server lists (unqualified).
        tools: Arc<Vec<String>>,
    },
    /// Credentials were rejected: fail fast, no retry until they change.
    Unauthorized,
    /// The last connect failed: fail fast until `until`, then one new attempt.
    CoolingDown {
        last_error: ConnectError,
        until: Instant,
    },
    /// The server asked us to come back at `until` (HTTP 429 / 503 with `Retry-After`): no
    /// attempt before then, one by itself at `until`. Reads `connecting`: it heals by itself.
    Throttled {
        last_error: ConnectError,
        until: Instant,
    },
    /// Removed from the hub or shut down: nothing will connect again.
    Stopped,
}

impl ConnState {
    /// The readiness state of the server (DESIGN.md section 1).
    pub(crate) fn readiness(&self) -> State {
        match self {
            ConnState::Connected { .. } => State::Ready,
            ConnState::Connecting { .. } | ConnState::Throttled { .. } => State::Connecting,
            ConnState::Unauthorized => State::Unauthenticated,
            ConnState::Idle | ConnState::CoolingDown { .. } | ConnState::Stopped => State::Absent,
        }
    }

    /// A short name for logs.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            ConnState::Idle => "idle",
            ConnState::Connecting { .. } => "connecting",
            ConnState::Connected { .. } => "connected",
            ConnState::Unauthorized => "unauthorized",
            ConnState::CoolingDown { .. } => "cooling_down",
            ConnState::Throttled { .. } => "throttled",
            ConnState::Stopped => "stopped",
        }
    }
}

/// One server's machine as its supervisor's lock guards it: the state, the generation counter,
/// the reason for humans, and the events its transitions caused that are not yet queued.
pub(crate) struct Machine {
    server: Arc<str>,
    pub(crate) state: ConnState,
    /// The generation of the newest successful connection (0 before the first).
    pub(crate) generation: u64,
    /// Why the server is in its state, for humans; no secrets.
    pub(crate) reason: Option<Arc<str>>,
    /// Events caused under the lock, in order; taken by `Supervisor::update` before unlocking.
    events: Vec<ConnectionEvent>,
}

impl Machine {
    /// A machine for `server` that has never connected: `Idle`, generation 0.
    pub(crate) fn new(server: Arc<str>) -> Self {
        Machine {
            server,
            state: ConnState::Idle,
            generation: 0,
            reason: Some("not connected yet; connects at first use".into()),
            events: Vec::new(),
        }
    }

    /// The events caused since the last call, in the order they happened.
    pub(crate) fn take_events(&mut self) -> Vec<ConnectionEvent> {
        std::mem::take(&mut self.events)
    }

    /// Records an event that is not a transition (a cooldown rejection), in order with the others.
    pub(crate) fn push_event(&mut self, event: ConnectionEvent) {
        self.events.push(event);
    }

    /// The live session of generation `generation`, if it is still the connected one.
    pub(crate) fn session_of(&self, generation: u64) -> Option<Arc<dyn Session>> {
        match &self.state {
            ConnState::Connected {
                generation: live,
                session,
                ..
            } if *live == generation => Some(session.clone()),
            _ => None,
        }
    }

    /// Moves to `next`, recording `reason`, and queues a `StateChanged` when the readiness state
    /// changes. Every transition of the machine goes through here.
    fn transition(&mut self, next: ConnState, reason: Option<Arc<str>>) {
        let from = self.state.readiness();
        tracing::debug!(
            server = %self.server,
            from = self.state.name(),
            to = next.name(),
            reason = reason.as_deref().unwrap_or(""),
            "connection state"
        );
        self.state = next;
        self.reason = reason.clone();
        let to = self.state.readiness();
        if from != to {
            self.events.push(ConnectionEvent::StateChanged {
                server: self.server.clone(),
                from,
                to,
                reason,
            });
        }
    }

    /// Idle / CoolingDown (expired) / closed Connected → Connecting, with `attempt` in flight.
    pub(crate) fn start_connecting(&mut self, attempt: Attempt, abort: AbortHandle) {
        let reason = format!("server `{}` is connecting", self.server);
        self.transition(
            ConnState::Connecting { attempt, abort },
            Some(reason.into()),
        );
    }

    /// Connecting → Connected{g}: a new generation, with the server's tool list. Queues
    /// `ToolsChanged`, and `Reconnected` when it is not the first connection. Returns `g`.
    pub(crate) fn connected(&mut self, session: Arc<dyn Session>, tools: Vec<String>) -> u64 {
        let reconnect = self.generation > 0;
        self.generation += 1;
        let generation = self.generation;
        let count = tools.len();
        let identity = session.identity();
        self.transition(
            ConnState::Connected {
                generation,
                session,
                tools: Arc::new(tools),
            },
            None,
        );
        if let Some(identity) = identity {
            self.events.push(ConnectionEvent::Handshake {
                server: self.server.clone(),
                identity,
            });
        }
        self.events.push(ConnectionEvent::ToolsChanged {
            server: self.server.clone(),
            count,
        });
        if reconnect {
            self.events.push(ConnectionEvent::Reconnected {
                server: self.server.clone(),
            });
        }
        generation
    }

    /// Connecting → Unauthorized: no retry until credentials change.
    pub(crate) fn unauthorized(&mut self, why: Arc<str>) {
        self.transition(ConnState::Unauthorized, Some(why));
    }

    /// Connecting → CoolingDown{until}: fail fast until `until`.
    pub(crate) fn cool_down(&mut self, last_error: ConnectError, until: Instant, why: Arc<str>) {
        self.transition(ConnState::CoolingDown { last_error, until }, Some(why));
    }

    /// Connecting → Throttled{until}: the server said when to come back; the supervisor starts the
    /// next attempt itself at `until`.
    pub(crate) fn throttle(&mut self, last_error: ConnectError, until: Instant, why: Arc<str>) {
        self.transition(ConnState::Throttled { last_error, until }, Some(why));
    }

    /// Connected{g} → Idle, if `g` is still the live generation: shuts the session down. A late
    /// close from an older generation changes nothing. Returns whether it acted.
    pub(crate) fn lose(&mut self, generation: u64, why: &str, reconnect_on_drop: bool) -> bool {
        let Some(session) = self.session_of(generation) else {
            return false;
        };
        session.shutdown();
        let next_step = if reconnect_on_drop {
            "reconnecting now"
        } else {
            "it reconnects at the next call"
        };
        let reason = format!(
            "connection to server `{}` lost: {why}; {next_step}",
            self.server
        );
        self.transition(ConnState::Idle, Some(reason.into()));
        true
    }

    /// Connected{g} → Unauthorized, if `g` is still the live generation (the server rejected the
    /// credentials mid-session): shuts the session down.
    pub(crate) fn auth_lost(&mut self, generation: u64, why: String) {
        if let Some(session) = self.session_of(generation) {
            session.shutdown();
            self.transition(ConnState::Unauthorized, Some(why.into()));
        }
    }

    /// Unauthorized → Idle: credentials changed, the next use tries again. Returns whether the
    /// server was unauthorized.
    pub(crate) fn reset_auth(&mut self) -> bool {
        let was = matches!(self.state, ConnState::Unauthorized);
        if was {
            self.transition(
                ConnState::Idle,
                Some("credentials reset; connects at next use".into()),
            );
        }
        was
    }

    /// Any state → Stopped: closes the live connection (killing a stdio child's process group) or
    /// cancels the attempt in flight. Sinks (the exporter's gauges) learn that the server is no
    /// longer ready.
    pub(crate) fn stop(&mut self) {
        match &self.state {
            ConnState::Connected { session, .. } => session.shutdown(),
            ConnState::Connecting { abort, .. } => abort.abort(),
            _ => {}
        }
        self.transition(ConnState::Stopped, Some("shut down".into()));
    }

    /// Connected{g} → Connected{g} with a new tool list (after `tools/list_changed`), if `g` is
    /// still the live generation. Queues `ToolsChanged`.
    pub(crate) fn replace_tools(&mut self, generation: u64, names: Vec<String>) {
        if let ConnState::Connected {
            generation: live,
            tools,
            ..
        } = &mut self.state
            && *live == generation
        {
            self.events.push(ConnectionEvent::ToolsChanged {
                server: self.server.clone(),
                count: names.len(),
            });
            *tools = Arc::new(names);
        }
    }
}
