//! The supervisor room: one server's [`Supervisor`] and its connection state machine.
//!
//! - `mod.rs`: the `Supervisor` itself: the machine behind its lock, the one way to change it
//!   ([`Supervisor::update`]: lock, transition, queue the events on the hub's event queue, unlock,
//!   deliver), what the hub observes, and stop;
//! - `conn_state.rs`: the `ConnState` enum and every transition of it, each commented with its
//!   edge, inside the `Machine` a supervisor's lock guards; the events each transition causes
//!   follow the readiness-change rule of `supervise/events/`;
//! - `admission.rs`: the admission of callers (single-flight connects, the cooldown, auth that
//!   fails fast), the start and finish of attempts, lost and retired connections;
//! - `attempt.rs`: one connection attempt in a task of its own, with its `initialize` span;
//! - `call.rs`: the call path (per-call timeout, retry once after a dead pipe);
//! - `background.rs`: the drop watch, the health ping, the tool-list refresh and the timer that
//!   ends a cooldown or a backoff; `credential_watch.rs`: what a connector knows of its
//!   credentials, forwarded to the hub's sinks; `coalesce.rs`: one refresh at a time.
//!
//! A supervisor reads its hub's shared state and options (`hub/shared.rs`, `hub/options.rs`) and
//! drives a [`Connector`](crate::client::Connector) from the `client` room, whose
//! [`CallError`](crate::client::CallError) a call ends with.

mod admission;
pub(super) mod attempt;
pub(super) mod background;
pub(super) mod call;
#[cfg(test)]
mod call_error_tests;
pub(super) mod coalesce;
pub(super) mod conn_state;
pub(super) mod credential_watch;
#[cfg(test)]
mod tests;

use crate::util::MutexExt as _;
use std::sync::{Arc, Mutex, MutexGuard};

use self::conn_state::{ConnState, Machine};
use crate::client::connector::{Connector, Session};
use crate::client::spec::ServerSpec;
use crate::state::{ServerEndpoint, State};
use crate::supervise::events::Readiness as _;
use crate::supervise::hub::shared::HubShared;

/// What the hub reads from a supervisor for snapshots and status.
#[derive(Debug, Clone)]
pub(crate) struct Observed {
    pub(crate) state: State,
    pub(crate) reason: Option<Arc<str>>,
    pub(crate) tools: Arc<Vec<String>>,
    pub(crate) generation: u64,
    /// Who answered the live connection's handshake.
    pub(crate) identity: Option<crate::state::ServerIdentity>,
    /// When the next attempt is due, while one waits for a time.
    pub(crate) next_attempt: Option<tokio::time::Instant>,
}

/// One server's supervisor: its [`Machine`] behind a lock, the connector that makes its
/// connections, and what it shares with the other supervisors of its hub. The admission of
/// callers is in `admission.rs`, the call path in `call.rs`, the background tasks in
/// `background.rs`.
pub(crate) struct Supervisor {
    name: Arc<str>,
    /// The configuration it was built from (`None` for a custom connector).
    spec: Option<ServerSpec>,
    connector: Arc<dyn Connector>,
    shared: Arc<HubShared>,
    machine: Mutex<Machine>,
    /// Whether the credential watch (`credential_watch.rs`) was started.
    watching_credentials: std::sync::atomic::AtomicBool,
    /// What the last renewal ahead of the next run found (`HubOptions::renew_before`).
    pub(super) renewal: Mutex<Option<crate::client::connector::Renewal>>,
}

impl Supervisor {
    /// A supervisor for `name`, idle until first use. `spec` is the configuration it was built
    /// from (`None` for a custom connector); [`Hub::replace_server`](crate::supervise::Hub::replace_server)
    /// compares it to keep an unchanged server's connection.
    pub(crate) fn new(
        name: Arc<str>,
        connector: Arc<dyn Connector>,
        shared: Arc<HubShared>,
        spec: Option<ServerSpec>,
    ) -> Arc<Self> {
        let endpoint = match &spec {
            Some(spec) => spec.transport.endpoint(),
            None => ServerEndpoint::transport_only(connector.network_transport()),
        };
        Arc::new(Supervisor {
            machine: Mutex::new(Machine::new(name.clone(), endpoint)),
            name,
            spec,
            connector,
            shared,
            watching_credentials: std::sync::atomic::AtomicBool::new(false),
            renewal: Mutex::new(None),
        })
    }

    pub(crate) fn spec(&self) -> Option<&ServerSpec> {
        self.spec.as_ref()
    }

    pub(crate) fn name(&self) -> &Arc<str> {
        &self.name
    }

    pub(crate) fn network_transport(&self) -> &'static str {
        self.connector.network_transport()
    }

    fn lock(&self) -> MutexGuard<'_, Machine> {
        self.machine.lock_unpoisoned()
    }

    /// Reads the machine under its lock (no transition, no events).
    pub(in crate::supervise) fn read<R>(&self, f: impl FnOnce(&Machine) -> R) -> R {
        f(&self.lock())
    }

    /// The one way to change the machine: lock, run `f` (its transitions collect events), queue
    /// the events on the hub's [`EventQueue`](crate::supervise::events::EventQueue) while still
    /// holding the lock, unlock, then deliver them. Sinks therefore see
    /// the transitions in the order they happened, and no sink runs under the lock. When `f`
    /// caused no event there is nothing to deliver (the hot path of a live connection takes no
    /// other lock).
    fn update<R>(&self, f: impl FnOnce(&mut Machine) -> R) -> R {
        let mut machine = self.lock();
        let result = f(&mut machine);
        let events = machine.take_events();
        if events.is_empty() {
            return result;
        }
        self.shared.events.queue(events);
        drop(machine);
        self.shared.events.flush();
        result
    }

    pub(crate) fn observe(&self) -> Observed {
        self.read(|machine| Observed {
            state: machine.state.readiness(),
            reason: machine.reason.clone(),
            tools: match &machine.state {
                ConnState::Connected { tools, .. } => tools.clone(),
                _ => Arc::new(Vec::new()),
            },
            generation: machine.generation,
            identity: match &machine.state {
                ConnState::Connected { session, .. } => session.identity(),
                _ => None,
            },
            next_attempt: machine.next_attempt,
        })
    }

    /// Marks the server as one whose configuration this build cannot serve: it reads `absent`
    /// with `problem` (which names the feature or key at fault) as its reason, and never
    /// connects. Called after the server was announced as added.
    pub(crate) fn unservable(&self, problem: &crate::client::spec::error::SpecError) {
        let reason = format!(
            "{problem}. This server stays absent until its configuration is fixed; the other \
             servers are not affected"
        );
        tracing::warn!(target: "mcp_readiness::hub", server = %self.name, "{reason}");
        self.update(|machine| machine.unservable(reason.into()));
    }

    /// Closes the live connection (killing a stdio child's process group) or cancels the attempt
    /// in flight; nothing connects again.
    pub(crate) fn stop(&self) {
        self.update(Machine::stop);
    }

    /// Stops the server for good without announcing it, as [`Supervisor::stop`] does otherwise:
    /// a reload removed or replaced it, and the caller announces that instead (`ServerRemoved`,
    /// or the replacement's state). The stop's own `StateChanged` ("shut down") would tell every
    /// sink, and the status stream, that the server went absent: it left the configuration.
    pub(crate) fn retire(&self) {
        let mut machine = self.lock();
        machine.stop();
        drop(machine.take_events());
    }

    /// What the last renewal ahead of the next run found, if one was due.
    pub(crate) fn renewal(&self) -> Option<crate::client::connector::Renewal> {
        self.renewal.lock_unpoisoned().clone()
    }

    fn session_of(&self, generation: u64) -> Option<Arc<dyn Session>> {
        self.read(|machine| machine.session_of(generation))
    }
}
