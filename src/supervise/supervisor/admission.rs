//! The admission of callers to one server's [`Supervisor`] (single-flight `ensure_connected`,
//! the cooldown, auth that fails fast), the start and finish of attempts, and lost, retired and
//! re-authorized connections. The call path is in `call.rs`, the background tasks in
//! `background.rs`, the attempt runner in `attempt.rs`.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;
use tokio::time::Instant;

use super::Supervisor;
use super::attempt::{initialize_span, run_attempt};
use super::conn_state::{Attempt, AttemptOutcome, ConnState, Lost, Machine};
use crate::client::connector::{ConnectError, Session};
use crate::client::error::{CallError, CallErrorKind, NotConnected};
use crate::state::{ConnectResult, ConnectionEvent};
use crate::util::{Human, NextAttempt};

/// How [`Supervisor::ensure_connected`] admits a caller, decided under the lock.
enum Admission {
    /// A live connection: go.
    Live(u64, Arc<dyn Session>),
    /// Await the attempt in flight (single-flight): one already running, or the one this caller
    /// just started because nothing was in flight and nothing forbade it.
    Await(Attempt),
    /// Fail at once (cooling down, unauthorized, stopped).
    Refuse(CallError),
}

impl Supervisor {
    /// Makes sure there is a live connection, and returns it with its generation.
    ///
    /// - connected → go;
    /// - connecting → join the attempt in flight (single-flight);
    /// - cooling down, or backing off a crash loop → fail at once with the cause and the time
    ///   left;
    /// - unauthorized → fail at once, no retry until credentials change;
    /// - unservable (a configuration this build cannot serve) → fail at once with the reason;
    /// - idle, or the cooldown is over → start one attempt and await it.
    pub(crate) async fn ensure_connected(
        self: &Arc<Self>,
    ) -> Result<(u64, Arc<dyn Session>), CallError> {
        let admission = self.update(|machine| {
            match &machine.state {
                ConnState::Connected {
                    generation,
                    session,
                    ..
                } if !session.is_closed() => Admission::Live(*generation, session.clone()),
                // The pipe is known closed but the drop watcher has not run yet.
                ConnState::Connected { generation, .. } => {
                    let generation = *generation;
                    let options = &self.shared.options;
                    match machine.lose(
                        generation,
                        "the connection had closed",
                        &options.crash,
                        options.reconnect_on_drop,
                    ) {
                        Some(Lost::BackingOff(delay)) => {
                            self.wake_after(delay);
                            Admission::Refuse(self.backing_off_error(machine, delay))
                        }
                        _ => Admission::Await(self.start_attempt(machine)),
                    }
                }
                ConnState::Connecting { attempt, .. } => Admission::Await(attempt.clone()),
                ConnState::CoolingDown { last_error, until } => {
                    let now = Instant::now();
                    if now < *until {
                        let left = *until - now;
                        let error = self.cooling_down_error(last_error, left);
                        machine.push_event(ConnectionEvent::CooldownRejection {
                            server: self.name.clone(),
                        });
                        Admission::Refuse(error)
                    } else {
                        Admission::Await(self.start_attempt(machine))
                    }
                }
                ConnState::BackingOff { until } => {
                    let now = Instant::now();
                    if now < *until {
                        let error = self.backing_off_error(machine, *until - now);
                        machine.push_event(ConnectionEvent::CooldownRejection {
                            server: self.name.clone(),
                        });
                        Admission::Refuse(error)
                    } else {
                        Admission::Await(self.start_attempt(machine))
                    }
                }
                ConnState::Throttled { last_error, until } => {
                    let now = Instant::now();
                    if now < *until {
                        let left = *until - now;
                        Admission::Refuse(self.throttled_error(last_error, left))
                    } else {
                        Admission::Await(self.start_attempt(machine))
                    }
                }
                ConnState::Idle => Admission::Await(self.start_attempt(machine)),
                ConnState::Unauthorized => {
                    Admission::Refuse(self.unauthenticated_error(machine.reason.as_deref()))
                }
                ConnState::Unservable => Admission::Refuse(CallError::new(
                    &self.name,
                    CallErrorKind::NotConnected(NotConnected::Absent),
                    machine.reason.as_deref().map_or_else(
                        || format!("server `{}` cannot be served by this build", self.name),
                        str::to_owned,
                    ),
                )),
                ConnState::Stopped => Admission::Refuse(CallError::new(
                    &self.name,
                    CallErrorKind::NotConnected(NotConnected::Absent),
                    format!(
                        "server `{}` was removed or shut down; add it again to use it",
                        self.name
                    ),
                )),
            }
        });
        match admission {
            Admission::Live(generation, session) => Ok((generation, session)),
            Admission::Await(attempt) => attempt.await.map_err(|e| self.connect_failed(&e)),
            Admission::Refuse(error) => Err(error),
        }
    }

    fn cooling_down_error(
        &self,
        last_error: &ConnectError,
        left: std::time::Duration,
    ) -> CallError {
        CallError::new(
            &self.name,
            CallErrorKind::NotConnected(NotConnected::CoolingDown { left }),
            format!(
                "server `{}` is cooling down after a failed connect ({}: {}); next attempt \
                 allowed in {}",
                self.name,
                last_error.result.as_str(),
                last_error.message,
                Human(left)
            ),
        )
        .with_connect_result(last_error.result)
    }

    /// A call refused while the server backs off a crash loop; `left` is the time to the next
    /// attempt.
    fn backing_off_error(&self, machine: &Machine, left: std::time::Duration) -> CallError {
        let exits = machine.short_lives();
        CallError::new(
            &self.name,
            CallErrorKind::NotConnected(NotConnected::CoolingDown { left }),
            format!(
                "server `{}` keeps exiting shortly after its handshake ({exits} times in a row); \
                 next attempt allowed in {}",
                self.name,
                Human(left)
            ),
        )
        .with_connect_result(ConnectResult::Closed)
    }

    /// A call refused while the server asked us to come back later (429 / 503 with
    /// `Retry-After`); `left` is the time to the attempt that starts by itself.
    fn throttled_error(&self, last_error: &ConnectError, left: std::time::Duration) -> CallError {
        CallError::new(
            &self.name,
            CallErrorKind::NotConnected(NotConnected::Throttled { left }),
            format!(
                "{}; the next attempt starts by itself in {}",
                last_error.message,
                Human(left)
            ),
        )
        .with_connect_result(last_error.result)
    }

    pub(super) fn unauthenticated_error(&self, reason: Option<&str>) -> CallError {
        CallError::new(
            &self.name,
            CallErrorKind::NotConnected(NotConnected::Unauthenticated),
            format!(
                "server `{}` is unauthenticated ({}); re-authorize it and reload its credentials \
                 (no retry until then)",
                self.name,
                reason.unwrap_or("credentials rejected")
            ),
        )
        .with_connect_result(ConnectResult::Unauthorized)
    }

    fn connect_failed(&self, error: &ConnectError) -> CallError {
        if error.result == ConnectResult::Unauthorized {
            return self.unauthenticated_error(Some(&error.message));
        }
        if let Some(after) = error.retry_after() {
            return self.throttled_error(error, after);
        }
        let left = self.read(|machine| match &machine.state {
            ConnState::CoolingDown { until, .. } => {
                Some(until.saturating_duration_since(Instant::now()))
            }
            _ => None,
        });
        let message = match left {
            Some(left) => format!(
                "{}; calls fail fast until the next attempt in {}",
                error.message,
                Human(left)
            ),
            None => error.message.clone(),
        };
        CallError::new(
            &self.name,
            CallErrorKind::NotConnected(NotConnected::Absent),
            message,
        )
        .with_connect_result(error.result)
    }

    /// Starts one attempt in a task of its own (so a caller that gives up does not cancel it for
    /// the others) and moves the machine to `Connecting`.
    fn start_attempt(self: &Arc<Self>, machine: &mut Machine) -> Attempt {
        // A hub built outside a runtime starts the credential watch here.
        self.watch_credentials();
        // The attempt joins the trace of whatever the caller is inside (a run's step, the run
        // itself), so a trace shows what each connection attempt was for; it is not a `tracing`
        // child, because it may outlive the caller (a run ends while a server still starts).
        let span = initialize_span(&self.name, self.network_transport());
        crate::telemetry::join_current_trace(&span);
        // The span is carried, not entered: the transport's own long-lived tasks (an HTTP
        // session's worker) must not become its children and keep it open after the attempt.
        let task = tokio::spawn(run_attempt(
            Arc::downgrade(self),
            self.connector.clone(),
            self.shared.clone(),
            self.name.clone(),
            span,
        ));
        let abort = task.abort_handle();
        let name = self.name.clone();
        let attempt: Attempt = async move {
            match task.await {
                Ok(outcome) => outcome,
                Err(_) => Err(ConnectError::new(
                    ConnectResult::Closed,
                    format!("server `{name}`: the connection attempt was cancelled (removed or shut down)"),
                )),
            }
        }
        .boxed()
        .shared();
        machine.start_connecting(attempt.clone(), abort);
        attempt
    }

    /// Starts an attempt now if nothing is in flight and nothing forbids it (idle, or the
    /// cooldown is over). Does not wait.
    pub(crate) fn connect_now(self: &Arc<Self>) {
        self.update(|machine| {
            let start = match &machine.state {
                ConnState::Idle => true,
                ConnState::CoolingDown { until, .. }
                | ConnState::BackingOff { until }
                | ConnState::Throttled { until, .. } => Instant::now() >= *until,
                _ => false,
            };
            if start {
                drop(self.start_attempt(machine));
            }
        });
    }

    /// Records how an attempt that took `duration` ended: its `ConnectAttempt`, then the
    /// transition it leads to, in one batch. Called by the attempt's own task.
    pub(super) fn finish_attempt(
        self: &Arc<Self>,
        result: Result<(Arc<dyn Session>, Vec<String>), ConnectError>,
        duration: Duration,
    ) -> AttemptOutcome {
        self.update(|machine| {
            let connect_result = result
                .as_ref()
                .map_or_else(|e| e.result, |_| ConnectResult::Ok);
            machine.attempt_ended(connect_result, duration);
            if !matches!(machine.state, ConnState::Connecting { .. }) {
                // Shut down or removed while connecting: the new session must not outlive that.
                if let Ok((session, _)) = &result {
                    session.shutdown();
                }
                return Err(ConnectError::new(
                    ConnectResult::Closed,
                    format!("server `{}` was shut down while connecting", self.name),
                ));
            }
            match result {
                Ok((session, tools)) => {
                    let generation = machine.connected(session.clone(), tools);
                    self.watch_for_drop(generation, &session);
                    if let Some(interval) = self.shared.options.health_interval {
                        self.spawn_health(generation, interval);
                    }
                    Ok((generation, session))
                }
                Err(error) if error.result == ConnectResult::Unauthorized => {
                    machine.unauthorized(error.message.clone().into());
                    Err(error)
                }
                Err(error) if error.retry_after().is_some() => {
                    // The server said when to come back: wait that long, then try by itself (the
                    // server reads `connecting` meanwhile), whatever `reconnect_on_drop` says.
                    let after = error.retry_after().unwrap_or_default();
                    let until = crate::util::later(Instant::now(), after);
                    machine.throttle(error.clone(), until, error.message.clone().into());
                    self.wake_after(after);
                    Err(error)
                }
                Err(error) => {
                    let options = &self.shared.options;
                    let delay = machine.connect_backoff(options.crash.initial, options.cooldown);
                    let failures = machine.connect_failures();
                    let in_a_row = if failures > 1 {
                        format!(" ({failures} failed connects in a row; the wait doubles up to the cooldown of {})", Human(options.cooldown))
                    } else {
                        String::new()
                    };
                    // The reason stays shown until the next attempt: it names when, not "in 4s".
                    let next = NextAttempt(delay);
                    let reason = if options.reconnect_on_drop {
                        format!("{}; {next}{in_a_row}", error.message)
                    } else {
                        let until = next.at().unwrap_or_else(|| "much later".to_owned());
                        format!(
                            "{}; calls fail fast until {until} (a wait of {}), then the next call \
                             tries again{in_a_row}",
                            error.message,
                            Human(delay)
                        )
                    };
                    let until = crate::util::later(Instant::now(), delay);
                    machine.cool_down(error.clone(), until, reason.into());
                    if options.reconnect_on_drop {
                        self.wake_after(delay);
                    }
                    Err(error)
                }
            }
        })
    }

    /// The supervisor ends the connection of `generation` itself (its health ping went
    /// unanswered): [`Supervisor::connection_lost`], with `why` kept for the calls in flight on
    /// it, whose pipe only says it was killed.
    pub(crate) fn end_connection(self: &Arc<Self>, generation: u64, why: &str) {
        self.update(|machine| machine.ending(generation, why));
        self.connection_lost(generation, why);
    }

    /// The connection of generation `generation` died (drop watcher, failed call, failed ping).
    ///
    /// - ended normally (or the first short life in a row) → Idle, and with `reconnect_on_drop`
    ///   one attempt at once;
    /// - the server keeps exiting soon after its handshake → BackingOff, and a timer that ends
    ///   the backoff ([`Supervisor::backoff_timer_fired`]).
    pub(crate) fn connection_lost(self: &Arc<Self>, generation: u64, why: &str) {
        let options = &self.shared.options;
        let reconnect_on_drop = options.reconnect_on_drop;
        let lost =
            self.update(|machine| machine.lose(generation, why, &options.crash, reconnect_on_drop));
        match lost {
            Some(Lost::Idle) if reconnect_on_drop => self.connect_now(),
            Some(Lost::BackingOff(delay)) => self.wake_after(delay),
            _ => {}
        }
    }

    /// The client ended the session of `generation` on purpose (a stale session: one fresh
    /// handshake decides); not a crash, so it never starts a backoff. With `reconnect_on_drop` the
    /// fresh attempt starts now (a caller that retries joins it).
    pub(crate) fn session_retired(self: &Arc<Self>, generation: u64, why: &str) {
        let acted = self.update(|machine| machine.retire(generation, why));
        if acted && self.shared.options.reconnect_on_drop {
            self.connect_now();
        }
    }

    /// A backoff or cooldown timer fired: with `reconnect_on_drop`, one attempt if nothing forbids
    /// it any more; without, a crash-loop backoff that is over ends in Idle (the next use
    /// connects).
    pub(super) fn backoff_timer_fired(self: &Arc<Self>) {
        // A server that said when to come back (Throttled) is tried again then, whatever
        // `reconnect_on_drop` says: it reads `connecting`, so something must connect it.
        let throttled = self.read(|machine| matches!(machine.state, ConnState::Throttled { .. }));
        if throttled || self.shared.options.reconnect_on_drop {
            self.connect_now();
        } else {
            self.update(Machine::backoff_over);
        }
    }

    /// The server rejected the credentials of generation `generation` mid-session. Returns the
    /// reason recorded: `why`, plus what the connector knows (e.g. a refused refresh token).
    pub(super) fn auth_lost(&self, generation: u64, why: String) -> String {
        let why = match self.connector.auth_problem() {
            Some(problem) => format!("{why}: {problem}"),
            None => why,
        };
        self.update(|machine| machine.auth_lost(generation, why.clone()));
        why
    }

    /// Credentials changed: an unauthorized server may try again at next use. Returns whether the
    /// server was unauthorized.
    pub(crate) fn reset_auth(&self) -> bool {
        self.update(Machine::reset_auth)
    }
}
