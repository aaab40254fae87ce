//! The one readiness-change rule: which transition of a connection machine emits which
//! [`ConnectionEvent`]s, for a hub supervisor's `ConnState` and a
//! [`Peers`](crate::supervise::Peers) slot's `Conn` alike.
//!
//! | what happened | events, in this order |
//! |---|---|
//! | a server first heard of | `ServerAdded` with its state |
//! | an attempt ended (made by the hub, or reported to `Peers`) | `ConnectAttempt` with its result, before the transition it leads to |
//! | any transition | `StateChanged` when, and only when, the readiness state differs; otherwise `ReasonChanged` when the reason differs |
//! | a new live connection | its `StateChanged` (if it was not ready), `Endpoint` (where known), `Handshake` (when the session knows who answered), `ToolsChanged`, then `Reconnected` unless it is the first |
//! | a new tool list on the live connection | `ToolsChanged` |

use std::sync::Arc;
use std::time::Duration;

use crate::state::{ConnectResult, ConnectionEvent, ServerEndpoint, ServerIdentity, State};

/// A connection machine's state as readiness reads it (DESIGN.md section 1).
pub(crate) trait Readiness {
    /// The readiness state a server in this machine state is in.
    fn readiness(&self) -> State;

    /// A short name for logs.
    fn name(&self) -> &'static str;
}

/// What announces a new live connection (see [`Transitions::connected`]).
pub(crate) struct Announce {
    /// Where the server is reached, when the machine knows (`Endpoint`).
    pub(crate) endpoint: Option<ServerEndpoint>,
    /// Who answered the handshake, when the session knows (`Handshake`).
    pub(crate) identity: Option<ServerIdentity>,
    /// How many tools it lists (`ToolsChanged`).
    pub(crate) tools: usize,
    /// Whether an earlier connection of this server was live (`Reconnected`).
    pub(crate) reconnect: bool,
}

/// The events one server's transitions caused under its machine's lock, in the order they
/// happened, until the machine's owner queues them on its
/// [`EventQueue`](super::EventQueue). Every event a machine causes goes through here.
pub(crate) struct Transitions {
    server: Arc<str>,
    events: Vec<ConnectionEvent>,
}

impl Transitions {
    /// No events yet, for `server`.
    pub(crate) fn new(server: Arc<str>) -> Self {
        Transitions {
            server,
            events: Vec::new(),
        }
    }

    /// A server first heard of, in `state`: `ServerAdded`.
    pub(crate) fn added(server: Arc<str>, state: State) -> Self {
        let mut transitions = Transitions::new(server.clone());
        transitions
            .events
            .push(ConnectionEvent::ServerAdded { server, state });
        transitions
    }

    /// The events caused since the last call, in the order they happened.
    pub(crate) fn take(&mut self) -> Vec<ConnectionEvent> {
        std::mem::take(&mut self.events)
    }

    /// Records an event that is not a transition (a cooldown rejection), in order with the others.
    pub(crate) fn push(&mut self, event: ConnectionEvent) {
        self.events.push(event);
    }

    /// The readiness-change rule: `state` becomes `next` and `reason` becomes the recorded reason;
    /// `StateChanged` is queued when, and only when, the readiness state differs, and
    /// `ReasonChanged` when the state stays and the reason does not. Returns the
    /// state left (a live connection in it is the caller's to shut down).
    pub(crate) fn transition<S: Readiness>(
        &mut self,
        state: &mut S,
        recorded: &mut Option<Arc<str>>,
        next: S,
        reason: Option<Arc<str>>,
    ) -> S {
        let from = state.readiness();
        tracing::debug!(
            server = %self.server,
            from = state.name(),
            to = next.name(),
            reason = reason.as_deref().unwrap_or(""),
            "connection state"
        );
        let left = std::mem::replace(state, next);
        let same_reason = *recorded == reason;
        recorded.clone_from(&reason);
        let to = state.readiness();
        if from != to {
            self.events.push(ConnectionEvent::StateChanged {
                server: self.server.clone(),
                from,
                to,
                reason,
            });
        } else if !same_reason {
            // The same state for another reason (throttled, trying again after a failure): the
            // status page must not keep the old one.
            self.events.push(ConnectionEvent::ReasonChanged {
                server: self.server.clone(),
                state: to,
                reason,
            });
        }
        left
    }

    /// A new live connection: the transition to `next` (a live state, no reason), then
    /// `Endpoint`, `Handshake`, `ToolsChanged` and `Reconnected` as `announce` says. Returns the
    /// state left.
    pub(crate) fn connected<S: Readiness>(
        &mut self,
        state: &mut S,
        recorded: &mut Option<Arc<str>>,
        next: S,
        announce: Announce,
    ) -> S {
        let left = self.transition(state, recorded, next, None);
        let server = &self.server;
        if let Some(endpoint) = announce.endpoint {
            self.events.push(ConnectionEvent::Endpoint {
                server: server.clone(),
                endpoint,
            });
        }
        if let Some(identity) = announce.identity {
            self.events.push(ConnectionEvent::Handshake {
                server: server.clone(),
                identity,
            });
        }
        self.events.push(ConnectionEvent::ToolsChanged {
            server: server.clone(),
            count: announce.tools,
        });
        if announce.reconnect {
            self.events.push(ConnectionEvent::Reconnected {
                server: server.clone(),
            });
        }
        left
    }

    /// The live connection lists a new set of tools: `ToolsChanged`.
    pub(crate) fn tools_changed(&mut self, count: usize) {
        self.events.push(ConnectionEvent::ToolsChanged {
            server: self.server.clone(),
            count,
        });
    }

    /// An attempt ended with `result` after `duration`: `ConnectAttempt`, queued before the
    /// transition it leads to.
    pub(crate) fn attempt_ended(&mut self, result: ConnectResult, duration: Duration) {
        self.events.push(ConnectionEvent::ConnectAttempt {
            server: self.server.clone(),
            result,
            duration,
        });
    }
}
