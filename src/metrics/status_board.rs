//! The status board behind the status page: per configured server, its state, why, since when,
//! its tools and its last connection attempts, kept from the supervisor's events.
//!
//! Events arrive at connection speed (not call speed), so one mutex is enough.

// Only the exporter's status page (feature `http`) reads the board.
#![cfg_attr(not(feature = "http"), allow(dead_code))]

use crate::util::MutexExt as _;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::state_changes::{ChangeLog, StateChanges};
use crate::state::State;
use crate::state::{ConnectResult, ConnectionEvent};

/// How many connection attempts a row remembers.
pub(crate) const CONNECT_HISTORY: usize = 8;

/// One connection attempt as the board remembers it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConnectRecord {
    pub(crate) result: ConnectResult,
    pub(crate) duration: Duration,
    pub(crate) at_unix: f64,
}

/// One server's row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerRow {
    pub(crate) state: State,
    pub(crate) reason: Option<Arc<str>>,
    /// Unix time of the last state change (or of the server's announcement).
    pub(crate) since_unix: f64,
    pub(crate) tools: usize,
    /// The wait budget in force, when one was set.
    pub(crate) wait_budget: Option<Duration>,
    pub(crate) connects_ok: u64,
    pub(crate) connects_failed: u64,
    pub(crate) reconnects: u64,
    /// The last [`CONNECT_HISTORY`] attempts, oldest first.
    pub(crate) history: VecDeque<ConnectRecord>,
    /// Who answered the last completed handshake.
    pub(crate) identity: Option<crate::state::ServerIdentity>,
    /// Every credential of the server whose expiry is known.
    pub(crate) credentials: Vec<crate::state::CredentialExpiry>,
    /// Unix time the next connection attempt is due, while one waits for a time (a failed
    /// connect's backoff, a crash loop's backoff, a `Retry-After`); `/status.json`'s
    /// `next_attempt_at`.
    pub(crate) next_attempt_at: Option<f64>,
    /// Unix time of the first failed connect of the failures in a row now (cleared by a
    /// successful one): how long a server has been failing, which `since` does not say, as each
    /// retry moves it to `connecting` and back. `/status.json`'s `failing_since`.
    pub(crate) failing_since: Option<f64>,
    /// Failed connects in a row now.
    pub(crate) failed_in_a_row: u64,
}

impl ServerRow {
    fn new(state: State, now_unix: f64) -> ServerRow {
        ServerRow {
            state,
            reason: None,
            since_unix: now_unix,
            tools: 0,
            wait_budget: None,
            connects_ok: 0,
            connects_failed: 0,
            reconnects: 0,
            history: VecDeque::with_capacity(CONNECT_HISTORY),
            identity: None,
            credentials: Vec::new(),
            next_attempt_at: None,
            failing_since: None,
            failed_in_a_row: 0,
        }
    }
}

/// Rows by server name (sorted, so the page is stable), and the wait budgets, which are often
/// set before the Hub announces a server and outlive its re-announcement by a reload.
#[derive(Debug, Default)]
pub(crate) struct StatusBoard {
    inner: Mutex<Board>,
}

#[derive(Debug, Default)]
struct Board {
    rows: BTreeMap<Arc<str>, ServerRow>,
    budgets: BTreeMap<Arc<str>, Duration>,
    /// The numbered state changes, in the order the rows took them.
    changes: ChangeLog,
}

impl StatusBoard {
    fn board(&self) -> std::sync::MutexGuard<'_, Board> {
        self.inner.lock_unpoisoned()
    }

    /// Applies one event at wall-clock time `now_unix`. Only `ServerAdded` creates a row: events
    /// for a server the board does not know (a removed one, late) change nothing.
    pub(crate) fn apply(&self, event: &ConnectionEvent, now_unix: f64) {
        let mut board = self.board();
        let Board {
            rows,
            budgets,
            changes,
        } = &mut *board;
        match event {
            ConnectionEvent::ServerAdded { server, state } => {
                rows.insert(server.clone(), ServerRow::new(*state, now_unix));
            }
            ConnectionEvent::ServerRemoved { server } => {
                rows.remove(server);
                budgets.remove(server);
            }
            ConnectionEvent::StateChanged {
                server,
                from,
                to,
                reason,
            } => {
                if let Some(row) = rows.get_mut(server) {
                    if from != to {
                        changes.record(server, *from, *to, reason.clone(), now_unix);
                    }
                    row.state = *to;
                    row.reason = reason.clone();
                    row.since_unix = now_unix;
                    if *to != State::Ready {
                        row.tools = 0;
                    }
                }
            }
            ConnectionEvent::ReasonChanged {
                server,
                state,
                reason,
            } => {
                if let Some(row) = rows.get_mut(server)
                    && row.state == *state
                {
                    row.reason = reason.clone();
                }
            }
            ConnectionEvent::ConnectAttempt {
                server,
                result,
                duration,
            } => {
                if let Some(row) = rows.get_mut(server) {
                    if *result == ConnectResult::Ok {
                        row.connects_ok += 1;
                        row.failing_since = None;
                        row.failed_in_a_row = 0;
                    } else {
                        row.connects_failed += 1;
                        row.failing_since.get_or_insert(now_unix);
                        row.failed_in_a_row += 1;
                    }
                    if row.history.len() == CONNECT_HISTORY {
                        row.history.pop_front();
                    }
                    row.history.push_back(ConnectRecord {
                        result: *result,
                        duration: *duration,
                        at_unix: now_unix,
                    });
                }
            }
            ConnectionEvent::Reconnected { server } => {
                if let Some(row) = rows.get_mut(server) {
                    row.reconnects += 1;
                }
            }
            ConnectionEvent::ToolsChanged { server, count } => {
                if let Some(row) = rows.get_mut(server) {
                    row.tools = *count;
                }
            }
            ConnectionEvent::Handshake { server, identity } => {
                if let Some(row) = rows.get_mut(server) {
                    row.identity = Some(identity.clone());
                }
            }
            ConnectionEvent::NextAttempt { server, after } => {
                if let Some(row) = rows.get_mut(server) {
                    row.next_attempt_at = after.map(|after| now_unix + after.as_secs_f64());
                }
            }
            ConnectionEvent::CredentialsExpire { server, expiries } => {
                if let Some(row) = rows.get_mut(server) {
                    row.credentials = expiries.clone();
                }
            }
            ConnectionEvent::CooldownRejection { .. }
            | ConnectionEvent::StreamReopened { .. }
            | ConnectionEvent::Endpoint { .. } => {}
        }
    }

    /// Notes the wait budget in force for a server's tools.
    pub(crate) fn set_wait_budget(&self, server: &str, budget: Duration) {
        self.board().budgets.insert(Arc::from(server), budget);
    }

    /// A copy of every announced server's row, by name, with its wait budget.
    pub(crate) fn snapshot(&self) -> Vec<(Arc<str>, ServerRow)> {
        self.snapshot_with_last_change().0
    }

    /// [`StatusBoard::snapshot`], and the id of the last state change it includes (0 before the
    /// first), taken together.
    pub(crate) fn snapshot_with_last_change(&self) -> (Vec<(Arc<str>, ServerRow)>, u64) {
        let board = self.board();
        let rows = board
            .rows
            .iter()
            .map(|(name, row)| {
                let mut row = row.clone();
                row.wait_budget = board.budgets.get(name).copied();
                (name.clone(), row)
            })
            .collect();
        (rows, board.changes.last_id())
    }

    /// A subscription to the state changes from now on, or after change `after` (see
    /// [`ChangeLog::subscribe`]).
    pub(crate) fn subscribe(&self, after: Option<u64>) -> StateChanges {
        self.board().changes.subscribe(after)
    }

    /// How many subscribers follow the state changes now.
    #[cfg(test)]
    pub(crate) fn subscribers(&self) -> usize {
        self.board().changes.subscribers()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn added(server: &str, state: State) -> ConnectionEvent {
        ConnectionEvent::ServerAdded {
            server: server.into(),
            state,
        }
    }

    #[test]
    fn a_row_follows_its_server_through_connect_and_state_change() {
        let board = StatusBoard::default();
        board.apply(&added("files", State::Connecting), 10.0);
        board.apply(
            &ConnectionEvent::ConnectAttempt {
                server: "files".into(),
                result: ConnectResult::Ok,
                duration: Duration::from_millis(40),
            },
            11.0,
        );
        board.apply(
            &ConnectionEvent::StateChanged {
                server: "files".into(),
                from: State::Connecting,
                to: State::Ready,
                reason: None,
            },
            11.0,
        );
        board.apply(
            &ConnectionEvent::ToolsChanged {
                server: "files".into(),
                count: 3,
            },
            11.0,
        );
        let rows = board.snapshot();
        assert_eq!(rows.len(), 1);
        let (name, row) = &rows[0];
        assert_eq!(&**name, "files");
        assert_eq!(
            (row.state, row.since_unix, row.tools, row.connects_ok),
            (State::Ready, 11.0, 3, 1)
        );
        assert_eq!(row.history[0].duration, Duration::from_millis(40));
    }

    #[test]
    fn a_reason_change_replaces_the_reason_of_the_state_it_names_and_is_no_state_change() {
        let board = StatusBoard::default();
        board.apply(&added("t", State::Connecting), 10.0);
        let throttled = |state| ConnectionEvent::ReasonChanged {
            server: "t".into(),
            state,
            reason: Some("server `t` is throttling (HTTP 429 with Retry-After: 2m)".into()),
        };
        board.apply(&throttled(State::Connecting), 12.0);
        let (rows, last_change) = board.snapshot_with_last_change();
        let row = &rows[0].1;
        assert_eq!(
            row.reason.as_deref(),
            Some("server `t` is throttling (HTTP 429 with Retry-After: 2m)")
        );
        // In its state since it was added; nothing on the stream of changes.
        assert_eq!(
            (row.state, row.since_unix, last_change),
            (State::Connecting, 10.0, 0)
        );
        // A late reason for a state the row has left changes nothing.
        board.apply(
            &ConnectionEvent::StateChanged {
                server: "t".into(),
                from: State::Connecting,
                to: State::Ready,
                reason: None,
            },
            13.0,
        );
        board.apply(&throttled(State::Connecting), 14.0);
        let row = board.snapshot().remove(0).1;
        assert_eq!((row.state, row.reason), (State::Ready, None));
    }

    #[test]
    fn the_history_keeps_only_the_last_attempts_and_removal_drops_the_row() {
        let board = StatusBoard::default();
        board.apply(&added("flaky", State::Connecting), 0.0);
        for i in 0..(CONNECT_HISTORY as u64 + 5) {
            board.apply(
                &ConnectionEvent::ConnectAttempt {
                    server: "flaky".into(),
                    result: ConnectResult::Refused,
                    duration: Duration::from_millis(i),
                },
                i as f64,
            );
        }
        let row = board.snapshot().remove(0).1;
        assert_eq!(row.history.len(), CONNECT_HISTORY);
        assert_eq!(row.history[0].duration, Duration::from_millis(5));
        assert_eq!(row.connects_failed, CONNECT_HISTORY as u64 + 5);
        board.apply(
            &ConnectionEvent::ServerRemoved {
                server: "flaky".into(),
            },
            99.0,
        );
        assert!(board.snapshot().is_empty());
    }

    #[test]
    fn a_budget_set_before_the_server_is_announced_is_kept_and_not_shown_alone() {
        let board = StatusBoard::default();
        board.set_wait_budget("slow", Duration::from_secs(20));
        assert!(board.snapshot().is_empty(), "not announced yet");
        board.apply(&added("slow", State::Connecting), 5.0);
        let row = board.snapshot().remove(0).1;
        assert_eq!(row.wait_budget, Some(Duration::from_secs(20)));
        assert_eq!(row.since_unix, 5.0);
    }

    #[test]
    fn the_next_attempt_is_now_plus_its_delay_and_goes_away_when_none_is_due() {
        let board = StatusBoard::default();
        board.apply(&added("down", State::Connecting), 100.0);
        let next = |after: Option<Duration>| ConnectionEvent::NextAttempt {
            server: "down".into(),
            after,
        };
        board.apply(&next(Some(Duration::from_millis(4_500))), 110.0);
        assert_eq!(board.snapshot()[0].1.next_attempt_at, Some(114.5));
        board.apply(&next(None), 114.5);
        assert_eq!(board.snapshot()[0].1.next_attempt_at, None);
    }

    #[test]
    fn failing_since_is_the_first_failure_in_a_row_through_retries_and_a_success_clears_it() {
        fn attempt(result: ConnectResult) -> ConnectionEvent {
            let duration = Duration::from_millis(3);
            ConnectionEvent::ConnectAttempt {
                server: "crm".into(),
                result,
                duration,
            }
        }
        fn state(from: State, to: State) -> ConnectionEvent {
            ConnectionEvent::StateChanged {
                server: "crm".into(),
                from,
                to,
                reason: None,
            }
        }
        let board = StatusBoard::default();
        board.apply(&added("crm", State::Connecting), 0.0);
        // Fails at 1 s, retried (connecting) at 2 s and 4 s, failing each time.
        board.apply(&attempt(ConnectResult::SpawnFailed), 1.0);
        board.apply(&state(State::Connecting, State::Absent), 1.0);
        for at in [2.0, 4.0] {
            board.apply(&state(State::Absent, State::Connecting), at);
            board.apply(&attempt(ConnectResult::SpawnFailed), at);
            board.apply(&state(State::Connecting, State::Absent), at);
        }
        let row = board.snapshot().remove(0).1;
        assert_eq!(row.since_unix, 4.0, "since moves with each retry");
        assert_eq!((row.failing_since, row.failed_in_a_row), (Some(1.0), 3));
        board.apply(&attempt(ConnectResult::Ok), 8.0);
        let row = board.snapshot().remove(0).1;
        assert_eq!((row.failing_since, row.failed_in_a_row), (None, 0));
    }
}
