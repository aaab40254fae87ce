//! One server's supervisor: the [`ConnState`] machine, single-flight `ensure_connected`, the
//! generation counter, the cooldown, drop detection, health pings and calls with retry-once.

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use futures::FutureExt as _;
use rmcp::ServiceError;
use rmcp::model::{CallToolRequestParams, CallToolResult, RequestMetaObject};
use tokio::time::Instant;

use super::classify::{is_auth_failure, is_pipe_dead, truncate};
use super::conn_state::{Attempt, AttemptOutcome, ConnState};
use super::connector::{ConnectError, Connector, Session, SessionEvents};
use super::error::{CallError, CallErrorKind, Human, NotConnected};
use super::event::{ConnectResult, ConnectionEvent};
use super::hub_shared::HubShared;
use super::spec::ServerSpec;
use crate::layer::ToolCall;
use crate::state::State;

/// What the hub reads from a supervisor for snapshots and status.
#[derive(Debug, Clone)]
pub(crate) struct Observed {
    pub(crate) state: State,
    pub(crate) reason: Option<Arc<str>>,
    pub(crate) tools: Arc<Vec<String>>,
    pub(crate) generation: u64,
}

struct Inner {
    state: ConnState,
    /// The generation of the newest successful connection (0 before the first).
    generation: u64,
    /// Why the server is in its state, for humans; no secrets.
    reason: Option<Arc<str>>,
}

pub(crate) struct Supervisor {
    name: Arc<str>,
    /// The configuration it was built from (`None` for a custom connector).
    spec: Option<ServerSpec>,
    connector: Arc<dyn Connector>,
    shared: Arc<HubShared>,
    inner: Mutex<Inner>,
}

enum Step {
    Start,
    Join(Attempt),
    Fail(CallError),
}

impl Supervisor {
    pub(crate) fn new(
        name: Arc<str>,
        connector: Arc<dyn Connector>,
        shared: Arc<HubShared>,
    ) -> Arc<Self> {
        Arc::new(Supervisor {
            name,
            spec: None,
            connector,
            shared,
            inner: Mutex::new(Inner {
                state: ConnState::Idle,
                generation: 0,
                reason: Some("not connected yet; connects at first use".into()),
            }),
        })
    }

    /// Records the configuration this supervisor was built from (before anything runs).
    pub(crate) fn with_spec(self: Arc<Self>, spec: ServerSpec) -> Arc<Self> {
        match Arc::try_unwrap(self) {
            Ok(mut supervisor) => {
                supervisor.spec = Some(spec);
                Arc::new(supervisor)
            }
            Err(shared) => shared,
        }
    }

    pub(crate) fn spec(&self) -> Option<&ServerSpec> {
        self.spec.as_ref()
    }

    pub(crate) fn connector(&self) -> &Arc<dyn Connector> {
        &self.connector
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn name(&self) -> &Arc<str> {
        &self.name
    }

    pub(crate) fn network_transport(&self) -> &'static str {
        self.connector.network_transport()
    }

    pub(crate) fn observe(&self) -> Observed {
        let inner = self.lock();
        let tools = match &inner.state {
            ConnState::Connected { tools, .. } => tools.clone(),
            _ => Arc::new(Vec::new()),
        };
        Observed {
            state: inner.state.readiness(),
            reason: inner.reason.clone(),
            tools,
            generation: inner.generation,
        }
    }

    /// Moves to `next`, recording `reason`, and queues a `StateChanged` when the readiness state
    /// changes. Every transition of the machine goes through here.
    fn transition(
        &self,
        inner: &mut Inner,
        next: ConnState,
        reason: Option<Arc<str>>,
        events: &mut Vec<ConnectionEvent>,
    ) {
        let from = inner.state.readiness();
        tracing::debug!(
            server = %self.name,
            from = inner.state.name(),
            to = next.name(),
            reason = reason.as_deref().unwrap_or(""),
            "connection state"
        );
        inner.state = next;
        inner.reason = reason.clone();
        let to = inner.state.readiness();
        if from != to {
            events.push(ConnectionEvent::StateChanged {
                server: self.name.clone(),
                from,
                to,
                reason,
            });
        }
    }

    /// Makes sure there is a live connection, and returns it with its generation.
    ///
    /// - connected → go;
    /// - connecting → join the attempt in flight (single-flight);
    /// - cooling down → fail at once with the cause and the time left;
    /// - unauthorized → fail at once, no retry until credentials change;
    /// - idle, or the cooldown is over → start one attempt and await it.
    pub(crate) async fn ensure_connected(
        self: &Arc<Self>,
    ) -> Result<(u64, Arc<dyn Session>), CallError> {
        let attempt = {
            let mut events = Vec::new();
            let mut inner = self.lock();
            let step = match &inner.state {
                ConnState::Connected {
                    generation,
                    session,
                    ..
                } if !session.is_closed() => return Ok((*generation, session.clone())),
                // The pipe is known closed but the drop watcher has not run yet.
                ConnState::Connected { generation, .. } => {
                    let generation = *generation;
                    self.lose(
                        &mut inner,
                        generation,
                        "the connection had closed",
                        &mut events,
                    );
                    Step::Start
                }
                ConnState::Connecting { attempt, .. } => Step::Join(attempt.clone()),
                ConnState::CoolingDown { last_error, until } => {
                    let now = Instant::now();
                    if now < *until {
                        events.push(ConnectionEvent::CooldownRejection {
                            server: self.name.clone(),
                        });
                        let left = *until - now;
                        Step::Fail(
                            CallError::new(
                                &self.name,
                                CallErrorKind::NotConnected(NotConnected::CoolingDown { left }),
                                format!(
                                    "server `{}` is cooling down after a failed connect ({}: {}); \
                                     next attempt allowed in {}",
                                    self.name,
                                    last_error.result.as_str(),
                                    last_error.message,
                                    Human(left)
                                ),
                            )
                            .with_connect_result(last_error.result),
                        )
                    } else {
                        Step::Start
                    }
                }
                ConnState::Idle => Step::Start,
                ConnState::Unauthorized => {
                    Step::Fail(self.unauthenticated_error(inner.reason.as_deref()))
                }
                ConnState::Stopped => Step::Fail(CallError::new(
                    &self.name,
                    CallErrorKind::NotConnected(NotConnected::Absent),
                    format!(
                        "server `{}` was removed or shut down; add it again to use it",
                        self.name
                    ),
                )),
            };
            let result = match step {
                Step::Start => Ok(self.start_attempt(&mut inner, &mut events)),
                Step::Join(attempt) => Ok(attempt),
                Step::Fail(error) => Err(error),
            };
            self.shared.queue(events);
            drop(inner);
            self.shared.flush();
            result?
        };
        attempt.await.map_err(|e| self.connect_failed(&e))
    }

    fn unauthenticated_error(&self, reason: Option<&str>) -> CallError {
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
        CallError::new(
            &self.name,
            CallErrorKind::NotConnected(NotConnected::Absent),
            format!(
                "{}; calls fail fast for {}",
                error.message,
                Human(self.shared.options.cooldown)
            ),
        )
        .with_connect_result(error.result)
    }

    /// Starts one attempt in a task of its own (so a caller that gives up does not cancel it for
    /// the others) and moves to `Connecting`.
    fn start_attempt(
        self: &Arc<Self>,
        inner: &mut Inner,
        events: &mut Vec<ConnectionEvent>,
    ) -> Attempt {
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
        // Idle / CoolingDown (expired) / closed Connected → Connecting.
        self.transition(
            inner,
            ConnState::Connecting {
                attempt: attempt.clone(),
                abort,
            },
            Some(format!("server `{}` is connecting", self.name).into()),
            events,
        );
        attempt
    }

    /// Starts an attempt now if nothing is in flight and nothing forbids it (idle, or the
    /// cooldown is over). Does not wait.
    pub(crate) fn connect_now(self: &Arc<Self>) {
        let mut events = Vec::new();
        let mut inner = self.lock();
        let start = match &inner.state {
            ConnState::Idle => true,
            ConnState::CoolingDown { until, .. } => Instant::now() >= *until,
            _ => false,
        };
        if start {
            drop(self.start_attempt(&mut inner, &mut events));
        }
        self.shared.queue(events);
        drop(inner);
        self.shared.flush();
    }

    /// Records how an attempt ended. Called by the attempt's own task.
    fn finish_attempt(
        self: &Arc<Self>,
        result: Result<(Arc<dyn Session>, Vec<String>), ConnectError>,
    ) -> AttemptOutcome {
        let mut events = Vec::new();
        let mut inner = self.lock();
        if !matches!(inner.state, ConnState::Connecting { .. }) {
            // Shut down or removed while connecting: the new session must not outlive that.
            if let Ok((session, _)) = &result {
                session.shutdown();
            }
            return Err(ConnectError::new(
                ConnectResult::Closed,
                format!("server `{}` was shut down while connecting", self.name),
            ));
        }
        let outcome = match result {
            Ok((session, tools)) => {
                let reconnect = inner.generation > 0;
                inner.generation += 1;
                let generation = inner.generation;
                let count = tools.len();
                // Connecting → Connected{g}.
                self.transition(
                    &mut inner,
                    ConnState::Connected {
                        generation,
                        session: session.clone(),
                        tools: Arc::new(tools),
                    },
                    None,
                    &mut events,
                );
                events.push(ConnectionEvent::ToolsChanged {
                    server: self.name.clone(),
                    count,
                });
                if reconnect {
                    events.push(ConnectionEvent::Reconnected {
                        server: self.name.clone(),
                    });
                }
                self.watch_for_drop(generation, &session);
                if let Some(interval) = self.shared.options.health_interval {
                    self.spawn_health(generation, interval);
                }
                Ok((generation, session))
            }
            Err(error) if error.result == ConnectResult::Unauthorized => {
                // Connecting → Unauthorized: no retry until credentials change.
                self.transition(
                    &mut inner,
                    ConnState::Unauthorized,
                    Some(error.message.clone().into()),
                    &mut events,
                );
                Err(error)
            }
            Err(error) => {
                // Connecting → CoolingDown: fail fast until the cooldown ends.
                let cooldown = self.shared.options.cooldown;
                let reason = format!("{}; cooling down for {}", error.message, Human(cooldown));
                self.transition(
                    &mut inner,
                    ConnState::CoolingDown {
                        last_error: error.clone(),
                        until: crate::util::later(Instant::now(), cooldown),
                    },
                    Some(reason.into()),
                    &mut events,
                );
                if self.shared.options.reconnect_on_drop {
                    let weak = Arc::downgrade(self);
                    tokio::spawn(async move {
                        tokio::time::sleep(cooldown).await;
                        if let Some(supervisor) = weak.upgrade() {
                            supervisor.connect_now();
                        }
                    });
                }
                Err(error)
            }
        };
        self.shared.queue(events);
        drop(inner);
        self.shared.flush();
        outcome
    }

    /// Connected{g} → Idle, if `g` is still the live generation. A late close from an older
    /// generation changes nothing. Returns whether it acted.
    fn lose(
        &self,
        inner: &mut Inner,
        generation: u64,
        why: &str,
        events: &mut Vec<ConnectionEvent>,
    ) -> bool {
        let ConnState::Connected {
            generation: live,
            session,
            ..
        } = &inner.state
        else {
            return false;
        };
        if *live != generation {
            return false;
        }
        session.shutdown();
        let next_step = if self.shared.options.reconnect_on_drop {
            "reconnecting now"
        } else {
            "it reconnects at the next call"
        };
        self.transition(
            inner,
            ConnState::Idle,
            Some(
                format!(
                    "connection to server `{}` lost: {why}; {next_step}",
                    self.name
                )
                .into(),
            ),
            events,
        );
        true
    }

    /// The connection of generation `generation` died (drop watcher, failed call, failed ping).
    pub(crate) fn connection_lost(self: &Arc<Self>, generation: u64, why: &str) {
        let mut events = Vec::new();
        let mut inner = self.lock();
        let acted = self.lose(&mut inner, generation, why, &mut events);
        self.shared.queue(events);
        drop(inner);
        self.shared.flush();
        if acted && self.shared.options.reconnect_on_drop {
            self.connect_now();
        }
    }

    /// The server rejected the credentials of generation `generation` mid-session:
    /// Connected{g} → Unauthorized.
    fn auth_lost(&self, generation: u64, why: String) {
        let mut events = Vec::new();
        let mut inner = self.lock();
        if let ConnState::Connected {
            generation: live,
            session,
            ..
        } = &inner.state
            && *live == generation
        {
            session.shutdown();
            self.transition(
                &mut inner,
                ConnState::Unauthorized,
                Some(why.into()),
                &mut events,
            );
        }
        self.shared.queue(events);
        drop(inner);
        self.shared.flush();
    }

    /// Unauthorized → Idle: credentials changed, the next use tries again. Returns whether the
    /// server was unauthorized.
    pub(crate) fn reset_auth(&self) -> bool {
        let mut events = Vec::new();
        let mut inner = self.lock();
        let was = matches!(inner.state, ConnState::Unauthorized);
        if was {
            self.transition(
                &mut inner,
                ConnState::Idle,
                Some("credentials reset; connects at next use".into()),
                &mut events,
            );
        }
        self.shared.queue(events);
        drop(inner);
        self.shared.flush();
        was
    }

    /// Any state → Stopped: closes the live connection (killing a stdio child's process group)
    /// or cancels the attempt in flight.
    pub(crate) fn stop(&self) {
        {
            let mut inner = self.lock();
            match &inner.state {
                ConnState::Connected { session, .. } => session.shutdown(),
                ConnState::Connecting { abort, .. } => abort.abort(),
                _ => {}
            }
            // Sinks (the exporter's gauges) learn that the server is no longer ready.
            let mut events = Vec::new();
            self.transition(
                &mut inner,
                ConnState::Stopped,
                Some("shut down".into()),
                &mut events,
            );
            self.shared.queue(events);
        }
        self.shared.flush();
    }

    fn session_of(&self, generation: u64) -> Option<Arc<dyn Session>> {
        match &self.lock().state {
            ConnState::Connected {
                generation: live,
                session,
                ..
            } if *live == generation => Some(session.clone()),
            _ => None,
        }
    }

    /// Drop detection without waiting for a call: a task awaits the end of the connection and
    /// flips the state the moment it happens.
    fn watch_for_drop(self: &Arc<Self>, generation: u64, session: &Arc<dyn Session>) {
        let closed = session.closed();
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let why = closed.await;
            if let Some(supervisor) = weak.upgrade() {
                supervisor.connection_lost(generation, &why);
            }
        });
    }

    /// Periodic MCP `ping` on the connection of `generation`; a failed or unanswered ping marks it
    /// lost (or unauthorized).
    fn spawn_health(self: &Arc<Self>, generation: u64, interval: Duration) {
        let weak = Arc::downgrade(self);
        let timeout = self.shared.options.ping_timeout;
        tokio::spawn(async move {
            let mut ticker =
                tokio::time::interval_at(crate::util::later(Instant::now(), interval), interval);
            loop {
                ticker.tick().await;
                let Some(session) = weak.upgrade().and_then(|s| s.session_of(generation)) else {
                    return;
                };
                let outcome = tokio::time::timeout(timeout, session.ping()).await;
                drop(session);
                let Some(supervisor) = weak.upgrade() else {
                    return;
                };
                match outcome {
                    // Any answer, even a JSON-RPC error, proves the server is alive.
                    Ok(Ok(())) | Ok(Err(ServiceError::McpError(_))) => {}
                    Ok(Err(e)) if is_auth_failure(&e) => {
                        supervisor.auth_lost(
                            generation,
                            format!(
                                "server `{}` rejected the credentials on a health ping",
                                supervisor.name
                            ),
                        );
                        return;
                    }
                    Ok(Err(e)) => {
                        let why = format!(
                            "health ping failed ({})",
                            truncate(supervisor.shared.redact(&e.to_string()), 200)
                        );
                        supervisor.connection_lost(generation, &why);
                        return;
                    }
                    Err(_) => {
                        let why = format!("no answer to the health ping within {}", Human(timeout));
                        supervisor.connection_lost(generation, &why);
                        return;
                    }
                }
            }
        });
    }

    /// Re-reads the tool list after `notifications/tools/list_changed`.
    pub(crate) fn refresh_tools(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let timeout = self.shared.options.call_timeout;
        tokio::spawn(async move {
            let Some(supervisor) = weak.upgrade() else {
                return;
            };
            let current = match &supervisor.lock().state {
                ConnState::Connected {
                    generation,
                    session,
                    ..
                } => Some((*generation, session.clone())),
                _ => None,
            };
            drop(supervisor);
            let Some((generation, session)) = current else {
                return;
            };
            let Ok(Ok(tools)) = tokio::time::timeout(timeout, session.list_tools()).await else {
                return;
            };
            let Some(supervisor) = weak.upgrade() else {
                return;
            };
            let mut events = Vec::new();
            let mut inner = supervisor.lock();
            if let ConnState::Connected {
                generation: live,
                tools: current,
                ..
            } = &mut inner.state
                && *live == generation
            {
                let names: Vec<String> = tools.into_iter().map(|t| t.name.into_owned()).collect();
                events.push(ConnectionEvent::ToolsChanged {
                    server: supervisor.name.clone(),
                    count: names.len(),
                });
                *current = Arc::new(names);
            }
            supervisor.shared.queue(events);
            drop(inner);
            supervisor.shared.flush();
        });
    }

    /// Routes one call: ensure a connection, call with the per-call timeout, and when the pipe
    /// died, reconnect once and (for idempotent calls only) retry once.
    pub(crate) async fn call(
        self: &Arc<Self>,
        call: ToolCall,
    ) -> Result<CallToolResult, CallError> {
        let mut params = CallToolRequestParams::new(call.name.tool().to_owned());
        params.arguments = call.arguments;
        params.meta = call.meta.map(|m| RequestMetaObject(m.into()));
        let (generation, session) = self.ensure_connected().await?;
        match self.call_once(generation, &session, params.clone()).await {
            Err(e) if e.kind() == CallErrorKind::Transport && call.idempotent => {
                drop(session);
                tracing::debug!(server = %self.name, "pipe died mid-call; reconnecting and retrying once");
                let (generation, session) = self.ensure_connected().await?;
                self.call_once(generation, &session, params).await
            }
            other => other,
        }
    }

    async fn call_once(
        self: &Arc<Self>,
        generation: u64,
        session: &Arc<dyn Session>,
        params: CallToolRequestParams,
    ) -> Result<CallToolResult, CallError> {
        let tool = params.name.clone();
        let timeout = self.shared.options.call_timeout;
        let outcome = tokio::time::timeout(timeout, session.call_tool(params)).await;
        let error = match outcome {
            Ok(Ok(result)) => return Ok(result),
            Err(_elapsed) => {
                return Err(CallError::new(
                    &self.name,
                    CallErrorKind::Timeout,
                    format!(
                        "server `{}` did not answer `{tool}` within {}; the call was cancelled \
                         (raise the call timeout if the tool is slow)",
                        self.name,
                        Human(timeout)
                    ),
                ));
            }
            Ok(Err(error)) => error,
        };
        let detail = truncate(self.shared.redact(&error.to_string()), 300);
        if is_auth_failure(&error) {
            let why = format!(
                "server `{}` rejected the credentials during `{tool}` (HTTP 401/403)",
                self.name
            );
            self.auth_lost(generation, why.clone());
            return Err(self.unauthenticated_error(Some(&why)));
        }
        if is_pipe_dead(&error) {
            self.connection_lost(
                generation,
                &format!("the pipe died during `{tool}` ({detail})"),
            );
            return Err(CallError::new(
                &self.name,
                CallErrorKind::Transport,
                format!(
                    "connection to server `{}` died during `{tool}` ({detail}); it reconnects at \
                     the next call (only idempotent calls are retried)",
                    self.name
                ),
            ));
        }
        match error {
            ServiceError::Timeout { .. } => Err(CallError::new(
                &self.name,
                CallErrorKind::Timeout,
                format!(
                    "server `{}` did not answer `{tool}` in time ({detail})",
                    self.name
                ),
            )),
            ServiceError::McpError(mut data) => {
                data.message = self.shared.redact(&data.message).into();
                data.data = None;
                Err(CallError::new(
                    &self.name,
                    CallErrorKind::Protocol,
                    format!(
                        "server `{}` answered `{tool}` with JSON-RPC error {}: {}",
                        self.name, data.code.0, data.message
                    ),
                )
                .with_json_rpc(data))
            }
            _ => Err(CallError::new(
                &self.name,
                CallErrorKind::Protocol,
                format!(
                    "server `{}` answered `{tool}` with something unexpected ({detail})",
                    self.name
                ),
            )),
        }
    }
}

/// How long after the connect timeout the supervisor gives up on a connector that has not
/// returned (the rmcp connectors time out on their own at the connect timeout).
const CONNECTOR_GRACE: Duration = Duration::from_millis(250);

/// One connection attempt: connect, `after_connect`, first tool list, all inside the connect
/// timeout. Emits `ConnectAttempt` and records the outcome in the supervisor.
async fn run_attempt(
    weak: Weak<Supervisor>,
    connector: Arc<dyn Connector>,
    shared: Arc<HubShared>,
    name: Arc<str>,
    span: tracing::Span,
) -> AttemptOutcome {
    let started = Instant::now();
    let events = {
        let weak = weak.clone();
        SessionEvents::new(move || {
            if let Some(supervisor) = weak.upgrade() {
                supervisor.refresh_tools();
            }
        })
    };
    let timeout = shared.options.connect_timeout;
    let backstop = crate::util::later(started, timeout.saturating_add(CONNECTOR_GRACE));
    let timed_out = || {
        ConnectError::new(
            ConnectResult::Timeout,
            format!(
                "server `{name}` was not ready within the connect timeout of {}; check that it \
                 starts, or raise the timeout",
                Human(timeout)
            ),
        )
    };
    let work = async {
        // The connector applies the connect timeout itself (so it can classify, e.g. a banner on
        // stdout as `protocol_error`); the backstop catches connectors that never return.
        let session = tokio::time::timeout_at(backstop, connector.connect(events))
            .await
            .map_err(|_| timed_out())??;
        let rest = async {
            connector.after_connect(session.clone()).await?;
            session.list_tools().await.map_err(|e| {
                let result = if is_auth_failure(&e) {
                    ConnectResult::Unauthorized
                } else if is_pipe_dead(&e) {
                    ConnectResult::Closed
                } else {
                    ConnectResult::ProtocolError
                };
                ConnectError::new(
                    result,
                    format!(
                        "server `{name}`: listing its tools failed ({})",
                        truncate(shared.redact(&e.to_string()), 300)
                    ),
                )
            })
        };
        let tools = tokio::time::timeout_at(backstop, rest)
            .await
            .map_err(|_| timed_out())??;
        Ok::<_, ConnectError>((
            session,
            tools.into_iter().map(|t| t.name.into_owned()).collect(),
        ))
    };
    // Defence in depth: no configured secret leaves in a reason, whatever the connector said.
    // A panicking connector must not leave the server `connecting` forever.
    let result = std::panic::AssertUnwindSafe(work)
        .catch_unwind()
        .await
        .unwrap_or_else(|_| {
            Err(ConnectError::new(
                ConnectResult::ProtocolError,
                format!("server `{name}`: the connector panicked while connecting"),
            ))
        });
    let result = result.map_err(|mut e: ConnectError| {
        e.message = shared.redact(&e.message);
        e
    });
    let connect_result = result
        .as_ref()
        .map_or_else(|e| e.result, |_| ConnectResult::Ok);
    record_initialize(&span, connect_result);
    drop(span);
    shared.emit(vec![ConnectionEvent::ConnectAttempt {
        server: name.clone(),
        result: connect_result,
        duration: started.elapsed(),
    }]);
    match weak.upgrade() {
        Some(supervisor) => supervisor.finish_attempt(result),
        None => {
            if let Ok((session, _)) = &result {
                session.shutdown();
            }
            Err(ConnectError::new(
                ConnectResult::Closed,
                format!("server `{name}` was removed while connecting"),
            ))
        }
    }
}

/// The `target` of the connection-attempt spans.
pub(crate) const CONNECT_SPAN_TARGET: &str = "mcp_readiness::connect";

/// The span of one connection attempt, named `initialize` as the OpenTelemetry MCP conventions
/// name the handshake: kind client, `mcp.method.name`, `network.transport`, the server, and (when
/// it ends) `mcp_readiness.result` and, on failure, `error.type`.
fn initialize_span(server: &str, transport: &'static str) -> tracing::Span {
    tracing::info_span!(
        target: CONNECT_SPAN_TARGET,
        parent: None,
        "initialize",
        otel.name = "initialize",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        mcp.method.name = "initialize",
        network.transport = transport,
        mcp_readiness.server = server,
        mcp_readiness.result = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// Records how an attempt ended on its [`initialize_span`].
fn record_initialize(span: &tracing::Span, result: ConnectResult) {
    span.record("mcp_readiness.result", result.as_str());
    if result != ConnectResult::Ok {
        span.record("error.type", result.as_str());
        span.record("otel.status_code", "ERROR");
    }
}
