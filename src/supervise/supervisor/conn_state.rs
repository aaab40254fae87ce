//! The per-server connection state machine: the [`ConnState`] enum and every transition of it,
//! each commented with its edge. [`Machine`] is what a supervisor's lock guards; the transitions
//! collect the [`ConnectionEvent`]s they cause by the one readiness-change rule
//! ([`Transitions`]), and the supervisor queues them on the hub's event queue and delivers them
//! after unlocking (see `Supervisor::update`).

use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, Shared};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::client::connector::{ConnectError, Session};
use crate::state::State;
use crate::state::{ConnectResult, ConnectionEvent, ServerEndpoint};
use crate::supervise::events::{Announce, Readiness, Transitions};
use crate::supervise::hub::options::CrashPolicy;
use crate::util::{Human, NextAttempt};

/// What a connection attempt yields to everyone who awaited it: the generation and session, or
/// the classified failure.
pub(crate) type AttemptOutcome = Result<(u64, Arc<dyn Session>), ConnectError>;

/// The single in-flight attempt, shared by every caller that arrives while it runs.
pub(crate) type Attempt = Shared<BoxFuture<'static, AttemptOutcome>>;

/// The per-server connection state machine. A connection is a thing you maintain, not a thing you
/// have: no boolean, one enum, and every transition goes through [`Machine::transition`], which
/// follows the one readiness-change rule ([`Transitions::transition`]).
///
/// ```text
///            ┌──────── connect_all / first use / reconnect after a drop ────────┐
///            ▼                                                                  │
///  Idle ──▶ Connecting ──ok──▶ Connected{g, since} ──drop / ping fail (lived long, or 1st short)──▶ Idle
///            │   ▲                 │
///            │   │                 └──drop soon after the handshake, again──▶ BackingOff{until}
///            │   ├── backoff over (reconnect_on_drop) ─────────────────────────────┘
///            │   └── cooldown over ───────────────────────── CoolingDown{until}
///            ├──fail (1 s, 2 s, 4 s ... up to the cooldown)──▶ CoolingDown{until}
///            ├──429/503 + Retry-After──▶ Throttled{until} ──retry-after over──▶ Connecting
///            └──401/403──▶ Unauthorized ◀──401 mid-session── Connected{g}
///                               └── credentials changed (replace_server / reset_auth) ──▶ Idle
///  BackingOff ── backoff over, no reconnect_on_drop ──▶ Idle
///  Idle ──configuration this build cannot serve (at add)──▶ Unservable
///  any ──shutdown / remove──▶ Stopped
/// ```
///
/// What each state reads as (DESIGN.md section 1): `Idle` is `connecting` (nothing has failed:
/// the next use, `connect_all` or the background reconnect connects it), `Connecting` is
/// `connecting`, `Throttled` is `connecting` (it heals by itself), `Connected` is `ready`,
/// `Unauthorized` is `unauthenticated`, and `CoolingDown`,
/// `BackingOff`, `Unservable` and `Stopped` are `absent`.
pub(crate) enum ConnState {
    /// No connection and no failure: never tried, or the last one closed after a normal life. The
    /// next use (or the background reconnect) connects.
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
        /// When its handshake completed (how long it lived decides crash-loop backoff).
        since: Instant,
    },
    /// Credentials were rejected: fail fast, no retry until they change.
    Unauthorized,
    /// The last connect failed: fail fast until `until`, then one new attempt.
    CoolingDown {
        last_error: ConnectError,
        until: Instant,
    },
    /// The server keeps ending its connection shortly after the handshake (a crash loop): fail
    /// fast until `until`, then one new attempt.
    BackingOff { until: Instant },
    /// The server asked us to come back at `until` (HTTP 429 / 503 with `Retry-After`): no
    /// attempt before then, one by itself at `until`. Reads `connecting`: it heals by itself.
    Throttled {
        last_error: ConnectError,
        until: Instant,
    },
    /// The configuration cannot be served by this build (a feature not built, a bad URL or
    /// header, an empty command): nothing connects until the configuration changes
    /// (`replace_server` builds a fresh supervisor). The other servers of the hub are not
    /// affected.
    Unservable,
    /// Removed from the hub or shut down: nothing will connect again.
    Stopped,
}

impl Readiness for ConnState {
    /// The readiness state of the server (DESIGN.md section 1).
    fn readiness(&self) -> State {
        match self {
            ConnState::Connected { .. } => State::Ready,
            // Nothing failed and something will connect it: a server configured but not started
            // yet, or idle after a drop, is not `absent` (that would page on-call for nothing).
            // Throttled: the server said when to come back; it heals by itself.
            ConnState::Idle | ConnState::Connecting { .. } | ConnState::Throttled { .. } => {
                State::Connecting
            }
            ConnState::Unauthorized => State::Unauthenticated,
            ConnState::CoolingDown { .. }
            | ConnState::BackingOff { .. }
            | ConnState::Unservable
            | ConnState::Stopped => State::Absent,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            ConnState::Idle => "idle",
            ConnState::Connecting { .. } => "connecting",
            ConnState::Connected { .. } => "connected",
            ConnState::Unauthorized => "unauthorized",
            ConnState::CoolingDown { .. } => "cooling_down",
            ConnState::BackingOff { .. } => "backing_off",
            ConnState::Throttled { .. } => "throttled",
            ConnState::Unservable => "unservable",
            ConnState::Stopped => "stopped",
        }
    }
}

/// One server's machine as its supervisor's lock guards it: the state, the generation counter,
/// the reason for humans, and the events its transitions caused that are not yet queued.
pub(crate) struct Machine {
    server: Arc<str>,
    /// Where the server is reached: announced with every connection (`Endpoint`).
    endpoint: ServerEndpoint,
    pub(crate) state: ConnState,
    /// The generation of the newest successful connection (0 before the first).
    pub(crate) generation: u64,
    /// Why the server is in its state, for humans; no secrets.
    pub(crate) reason: Option<Arc<str>>,
    /// Events caused under the lock, in order; taken by `Supervisor::update` before unlocking.
    events: Transitions,
    /// Connections in a row that ended soon after their handshake (see [`CrashPolicy`]).
    short_lives: u32,
    /// The longest life among those connections.
    longest_short_life: Duration,
    /// Failed connects in a row since the last successful one (the connect backoff doubles with
    /// each, up to the cooldown).
    connect_failures: u32,
    /// When the next attempt is due (cooling down, backing off or throttled), as last announced
    /// with [`ConnectionEvent::NextAttempt`].
    pub(crate) next_attempt: Option<Instant>,
    /// The connection the supervisor ended itself last (a health ping unanswered, the drop watch)
    /// and why: a call in flight on it reads its end from here rather than from the pipe, which
    /// only says it was killed.
    ended: Option<(u64, Arc<str>)>,
}

/// What ended a connection led to (returned by [`Machine::lose`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lost {
    /// `Idle`: reconnect now (background reconnect) or at the next use.
    Idle,
    /// `BackingOff`: the server keeps exiting; nothing connects for this long.
    BackingOff(Duration),
}

/// The reason of a server nothing has tried to connect yet.
const NOT_CONNECTED_YET: &str = "not connected yet; it connects when the service starts its \
                                 servers, or at its first use";

impl Machine {
    /// A machine for `server`, reached at `endpoint`, that has never connected: `Idle`,
    /// generation 0.
    pub(crate) fn new(server: Arc<str>, endpoint: ServerEndpoint) -> Self {
        Machine {
            events: Transitions::new(server.clone()),
            server,
            endpoint,
            state: ConnState::Idle,
            generation: 0,
            reason: Some(NOT_CONNECTED_YET.into()),
            short_lives: 0,
            longest_short_life: Duration::ZERO,
            connect_failures: 0,
            next_attempt: None,
            ended: None,
        }
    }

    /// The supervisor is ending the connection of `generation` itself, because `why`.
    pub(crate) fn ending(&mut self, generation: u64, why: &str) {
        self.ended = Some((generation, why.into()));
    }

    /// Why the supervisor ended the connection of `generation`, when it did.
    pub(crate) fn ended_because(&self, generation: u64) -> Option<Arc<str>> {
        self.ended
            .as_ref()
            .filter(|(ended, _)| *ended == generation)
            .map(|(_, why)| why.clone())
    }

    /// The events caused since the last call, in the order they happened.
    pub(crate) fn take_events(&mut self) -> Vec<ConnectionEvent> {
        self.events.take()
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

    /// Moves to `next`, recording `reason`, by the readiness-change rule
    /// ([`Transitions::transition`]: `StateChanged` when the readiness state changes). Every
    /// transition of the machine goes through here.
    fn transition(&mut self, next: ConnState, reason: Option<Arc<str>>) {
        self.events
            .transition(&mut self.state, &mut self.reason, next, reason);
        self.note_next_attempt();
    }

    /// Announces when the next attempt is due ([`ConnectionEvent::NextAttempt`]) whenever that
    /// changed: the end of a cooldown, a crash-loop backoff or a `Retry-After`; none otherwise.
    fn note_next_attempt(&mut self) {
        let next = match &self.state {
            ConnState::CoolingDown { until, .. }
            | ConnState::BackingOff { until }
            | ConnState::Throttled { until, .. } => Some(*until),
            _ => None,
        };
        if next != self.next_attempt {
            self.next_attempt = next;
            self.events.push(ConnectionEvent::NextAttempt {
                server: self.server.clone(),
                after: next.map(|until| until.saturating_duration_since(Instant::now())),
            });
        }
    }

    /// A connect failed: the wait before the next attempt, `initial` after the first failure in a
    /// row, doubling with each one after it, never longer than `cooldown`. A server down for a
    /// moment is therefore tried again within seconds; one that stays down costs one attempt per
    /// cooldown.
    pub(crate) fn connect_backoff(&mut self, initial: Duration, cooldown: Duration) -> Duration {
        self.connect_failures = self.connect_failures.saturating_add(1);
        let doublings = self.connect_failures - 1;
        let factor = 1u32.checked_shl(doublings.min(31)).unwrap_or(u32::MAX);
        initial.saturating_mul(factor).min(cooldown)
    }

    /// How many connects in a row have failed since the last successful one.
    pub(crate) fn connect_failures(&self) -> u32 {
        self.connect_failures
    }

    /// An attempt ended with `result` after `duration`: `ConnectAttempt`, before the transition
    /// it leads to.
    pub(crate) fn attempt_ended(&mut self, result: ConnectResult, duration: Duration) {
        self.events.attempt_ended(result, duration);
    }

    /// Idle / CoolingDown (expired) / BackingOff (expired) → Connecting, with `attempt` in flight.
    /// A retry keeps what happened before it (a failed attempt, a throttling answer, a lost
    /// connection) in its reason, so the evidence stays on the status page while it connects.
    pub(crate) fn start_connecting(&mut self, attempt: Attempt, abort: AbortHandle) {
        let reason = match self.reason.as_deref() {
            // A first attempt has nothing before it to keep.
            Some(before)
                if before != NOT_CONNECTED_YET
                    && !matches!(self.state, ConnState::Connecting { .. }) =>
            {
                // "...; next attempt at 05:01:00 UTC, ..." was true until now.
                let before = before
                    .split_once("; next attempt ")
                    .map_or(before, |(before, _)| before);
                format!(
                    "server `{}` is connecting again (before this attempt: {before})",
                    self.server
                )
            }
            _ => format!("server `{}` is connecting", self.server),
        };
        self.transition(
            ConnState::Connecting { attempt, abort },
            Some(reason.into()),
        );
    }

    /// Connecting → Connected{g}: a new generation, with the server's tool list, announced by
    /// the rule ([`Transitions::connected`]): `Endpoint`, `Handshake` (when the session knows who
    /// answered), `ToolsChanged`, and `Reconnected` when it is not the first connection. Returns
    /// `g`.
    pub(crate) fn connected(&mut self, session: Arc<dyn Session>, tools: Vec<String>) -> u64 {
        let announce = Announce {
            endpoint: Some(crate::state::ServerEndpoint {
                tls_certificate_expiry: session.tls_certificate_expiry(),
                ..self.endpoint.clone()
            }),
            identity: session.identity(),
            tools: tools.len(),
            reconnect: self.generation > 0,
        };
        self.generation += 1;
        self.connect_failures = 0;
        let generation = self.generation;
        self.events.connected(
            &mut self.state,
            &mut self.reason,
            ConnState::Connected {
                generation,
                session,
                tools: Arc::new(tools),
                since: Instant::now(),
            },
            announce,
        );
        self.note_next_attempt();
        generation
    }

    /// Connecting → Unauthorized: no retry until credentials change.
    pub(crate) fn unauthorized(&mut self, why: Arc<str>) {
        self.transition(ConnState::Unauthorized, Some(why));
    }

    /// Connecting → CoolingDown{until}: fail fast until `until` (the connect backoff, at most the
    /// cooldown).
    pub(crate) fn cool_down(&mut self, last_error: ConnectError, until: Instant, why: Arc<str>) {
        self.transition(ConnState::CoolingDown { last_error, until }, Some(why));
    }

    /// Connecting → Throttled{until}: the server said when to come back; the supervisor starts the
    /// next attempt itself at `until`.
    pub(crate) fn throttle(&mut self, last_error: ConnectError, until: Instant, why: Arc<str>) {
        self.transition(ConnState::Throttled { last_error, until }, Some(why));
    }

    /// Connected{g} → Idle or BackingOff, if `g` is still the live generation: shuts the session
    /// down. A late close from an older generation changes nothing (returns `None`).
    ///
    /// - it lived at least `policy.stable_after`: the crash-loop count resets, → Idle;
    /// - it is the first connection in a row to end sooner: → Idle (one restart is normal);
    /// - it is the second or later in a row: → BackingOff for `policy.delay(n)` (capped, growing),
    ///   with a reason that says the server keeps exiting.
    pub(crate) fn lose(
        &mut self,
        generation: u64,
        why: &str,
        policy: &CrashPolicy,
        reconnect_on_drop: bool,
    ) -> Option<Lost> {
        let ConnState::Connected { since, .. } = &self.state else {
            return None;
        };
        let since = *since;
        let session = self.session_of(generation)?;
        session.shutdown();
        let now = Instant::now();
        let life = now.saturating_duration_since(since);
        if life >= policy.stable_after {
            self.short_lives = 0;
            self.longest_short_life = Duration::ZERO;
        } else {
            self.short_lives = self.short_lives.saturating_add(1);
            self.longest_short_life = self.longest_short_life.max(life);
        }
        if let Some(delay) = policy.delay(self.short_lives) {
            let reason = format!(
                "server `{}` keeps exiting: it exited {} times in a row within {} after its \
                 handshake (last: {why}); {}",
                self.server,
                self.short_lives,
                Human(self.longest_short_life),
                NextAttempt(delay)
            );
            let until = crate::util::later(now, delay);
            self.transition(ConnState::BackingOff { until }, Some(reason.into()));
            return Some(Lost::BackingOff(delay));
        }
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
        Some(Lost::Idle)
    }

    /// Connected{g} → Idle, if `g` is still the live generation, without counting toward a crash
    /// loop: the client ended the session on purpose (a stale session gets one fresh handshake
    /// with the same credentials), the server did not exit. Returns whether it acted.
    pub(crate) fn retire(&mut self, generation: u64, why: &str) -> bool {
        let Some(session) = self.session_of(generation) else {
            return false;
        };
        session.shutdown();
        let reason = format!("server `{}`: {why}", self.server);
        self.transition(ConnState::Idle, Some(reason.into()));
        true
    }

    /// BackingOff (over) → Idle, when nothing reconnects in the background: the next use
    /// connects. Returns whether it acted.
    pub(crate) fn backoff_over(&mut self) -> bool {
        match self.state {
            ConnState::BackingOff { until } if Instant::now() >= until => {
                let reason = format!(
                    "server `{}` kept exiting after its handshake; the backoff is over and it \
                     reconnects at the next call",
                    self.server
                );
                self.transition(ConnState::Idle, Some(reason.into()));
                true
            }
            _ => false,
        }
    }

    /// How many connections in a row ended soon after their handshake.
    pub(crate) fn short_lives(&self) -> u32 {
        self.short_lives
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

    /// Idle → Unservable, when the server is added: its configuration cannot be served by this
    /// build, and `why` names the feature or key at fault. Nothing connects it again.
    pub(crate) fn unservable(&mut self, why: Arc<str>) {
        if matches!(self.state, ConnState::Idle) {
            self.transition(ConnState::Unservable, Some(why));
        }
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
            self.events.tools_changed(names.len());
            *tools = Arc::new(names);
        }
    }
}
