use std::fmt;

use serde::{Deserialize, Serialize};

use super::Action;

/// Whether a tool can be called right now, and if not, why.
///
/// The order of the variants is the order of classification (DESIGN.md section 1): a tool that is
/// listed is `Ready`; otherwise its server is `Unauthenticated` before `Connecting` (a server that is
/// both pending and awaiting authorization would never finish connecting), and `Absent` last.
///
/// ```
/// use mcp_readiness::{Action, State};
///
/// assert_eq!(State::Unauthenticated.as_str(), "unauthenticated");
/// assert!(State::Connecting.heals_with_time());
/// assert_eq!(State::Absent.action(), Some(Action::AddConnection));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// The tool is offered by a live connection.
    Ready,
    /// The server's handshake or start-up is still in progress; it usually heals within seconds.
    Connecting,
    /// Credentials are missing, expired or revoked; only a human re-authorizing heals it.
    Unauthenticated,
    /// Not configured, failed to start, exited, cooling down, or the live server does not offer the tool.
    Absent,
}

impl State {
    /// All four states, in classification order. Metrics export one series per entry.
    pub const ALL: [State; 4] = [
        State::Ready,
        State::Connecting,
        State::Unauthenticated,
        State::Absent,
    ];

    /// The label value used in metrics, spans and the run record.
    pub const fn as_str(self) -> &'static str {
        match self {
            State::Ready => "ready",
            State::Connecting => "connecting",
            State::Unauthenticated => "unauthenticated",
            State::Absent => "absent",
        }
    }

    /// Whether waiting can turn this state into [`State::Ready`]. Only `Connecting` heals with time;
    /// waiting on anything else is waste.
    pub const fn heals_with_time(self) -> bool {
        matches!(self, State::Connecting)
    }

    /// The on-call action this state asks for, or `None` for `Ready`.
    pub const fn action(self) -> Option<Action> {
        match self {
            State::Ready => None,
            State::Connecting => Some(Action::ExtendWaitBudget),
            State::Unauthenticated => Some(Action::Reauthorize),
            State::Absent => Some(Action::AddConnection),
        }
    }

    /// The position of this state in [`State::ALL`], for arrays indexed by state.
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
