use std::sync::Arc;

use futures::future::{BoxFuture, Shared};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::connector::{ConnectError, Session};
use crate::state::State;

/// What a connection attempt yields to everyone who awaited it: the generation and session, or
/// the classified failure.
pub(crate) type AttemptOutcome = Result<(u64, Arc<dyn Session>), ConnectError>;

/// The single in-flight attempt, shared by every caller that arrives while it runs.
pub(crate) type Attempt = Shared<BoxFuture<'static, AttemptOutcome>>;

/// The per-server connection state machine. A connection is a thing you maintain, not a thing you
/// have: no boolean, one enum, and every transition goes through `Supervisor::transition`, which
/// emits the events.
///
/// ```text
///            ┌──────────── connect_all / first use ───────────┐
///            ▼                                                │
///  Idle ──▶ Connecting ──ok──▶ Connected{g} ──drop / ping fail──▶ Idle
///            │   ▲                 │
///            │   └─ cooldown over ─┼──────────── CoolingDown{until}
///            ├──fail──────────────────────────▶ CoolingDown{until}
///            └──401/403──▶ Unauthorized ◀──401 mid-session── Connected{g}
///                               └── credentials changed (replace_server / reset_auth) ──▶ Idle
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
    /// Removed from the hub or shut down: nothing will connect again.
    Stopped,
}

impl ConnState {
    /// The readiness state of the server (DESIGN.md section 1).
    pub(crate) fn readiness(&self) -> State {
        match self {
            ConnState::Connected { .. } => State::Ready,
            ConnState::Connecting { .. } => State::Connecting,
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
            ConnState::Stopped => "stopped",
        }
    }
}
