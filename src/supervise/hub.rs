use std::collections::BTreeMap;
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use rmcp::model::CallToolResult;

use super::connector::Connector;
use super::error::{CallError, CallErrorKind, NotConnected};
use super::event::ConnectionEvent;
use super::http::HttpConnector;
use super::hub_shared::HubShared;
use super::options::HubOptions;
use super::spec::{ServerSpec, TransportSpec};
use super::spec_error::SpecError;
use super::stdio::StdioConnector;
use super::supervisor::Supervisor;
use crate::layer::ToolCall;
use crate::resolve::{ChangeFeed, Inventory, Snapshot};
use crate::secret::Secret;
use crate::state::{State, ToolName};

/// Builds the rmcp connector for `spec`: [`StdioConnector`] for a command, [`HttpConnector`] for a
/// URL, with the connect timeout and the `after_connect` hook for that server from `options`.
pub fn connector_for(
    spec: &ServerSpec,
    options: &HubOptions,
) -> Result<Arc<dyn Connector>, SpecError> {
    if ToolName::qualified(&spec.name, "x").is_none() || spec.name.chars().any(char::is_control) {
        return Err(SpecError::BadName {
            server: spec.name.clone(),
        });
    }
    let hook = options.after_connect.get(&*spec.name).cloned();
    Ok(match &spec.transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            if command.trim().is_empty() {
                return Err(SpecError::EmptyCommand {
                    server: spec.name.clone(),
                });
            }
            Arc::new(
                StdioConnector::new(spec.name.clone(), command.clone(), args.clone())
                    .env(env.clone())
                    .cwd(cwd.clone())
                    .init_timeout(options.connect_timeout)
                    .after_connect(hook),
            )
        }
        TransportSpec::Http { url, headers } => Arc::new(
            HttpConnector::new(spec.name.clone(), url.clone(), headers)?
                .connect_timeout(options.connect_timeout)
                .after_connect(hook),
        ),
    })
}

fn secrets_of(spec: &ServerSpec) -> Vec<Secret> {
    match &spec.transport {
        TransportSpec::Stdio { env, .. } => env.values().cloned().collect(),
        TransportSpec::Http { url, headers } => {
            let mut secrets: Vec<Secret> = headers.values().cloned().collect();
            secrets.push(url.clone());
            secrets
        }
    }
}

/// One server as [`Hub::servers`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerStatus {
    /// The server's name.
    pub name: Arc<str>,
    /// Its readiness state.
    pub state: State,
    /// Why it is in that state (no secrets), if known.
    pub reason: Option<String>,
    /// How many tools it offers now (0 unless connected).
    pub tools: usize,
    /// `pipe` (stdio) or `tcp` (HTTP).
    pub transport: &'static str,
}

/// A server that did not contribute to a [`FanOut`], with its state and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Degraded {
    /// The server.
    pub server: Arc<str>,
    /// Its readiness state (`ready` for a live but too slow server).
    pub state: State,
    /// What happened, for humans; no secrets.
    pub reason: String,
}

/// One call's outcome in a [`FanOut`].
#[derive(Debug, Clone)]
pub struct FanOutResult {
    /// The tool that was called.
    pub tool: ToolName,
    /// Its result (a result with `isError` is still `Ok`: it is the tool's answer).
    pub result: Result<CallToolResult, CallError>,
}

/// Every server's result side by side, plus the servers that could not answer.
#[derive(Debug, Clone)]
pub struct FanOut {
    /// One entry per call, in the order of the calls.
    pub results: Vec<FanOutResult>,
    /// The servers that were not connected, died mid-call or timed out (one entry per server).
    pub degraded: Vec<Degraded>,
}

impl FanOut {
    /// The successful results.
    pub fn ok(&self) -> impl Iterator<Item = (&ToolName, &CallToolResult)> {
        self.results
            .iter()
            .filter_map(|r| r.result.as_ref().ok().map(|ok| (&r.tool, ok)))
    }
}

struct HubInner {
    servers: RwLock<BTreeMap<Arc<str>, Arc<Supervisor>>>,
    shared: Arc<HubShared>,
}

impl Drop for HubInner {
    /// The last handle is gone: kill every child and its process group, cancel every attempt.
    fn drop(&mut self) {
        let servers = self.servers.get_mut().unwrap_or_else(|p| p.into_inner());
        for supervisor in servers.values() {
            supervisor.stop();
        }
    }
}

/// The configured MCP servers by name, each supervised: reconnect on use, single-flight connects,
/// a generation counter, a cooldown after failure, auth failures that fail fast, drop detection
/// and optional health pings.
///
/// - It is an [`Inventory`]: ready tools are the tools listed by connected servers (as
///   `mcp__<server>__<tool>`), pending servers are connecting, unauthenticated servers are
///   unauthorized, everything else is absent; [`Inventory::changes`] moves on every state and
///   tool-list change.
/// - It is a `tower::Service<ToolCall>` that routes by `call.name.server()`.
/// - [`Hub::fan_out`] calls many servers at once and isolates failures.
///
/// Cheap to clone. Dropping the last clone (or [`Hub::shutdown`]) kills every stdio child with its
/// process group.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use mcp_readiness::supervise::{AfterConnect, ConnectError, ConnectResult, Hub, HubOptions};
/// use mcp_readiness::{ServerSpec, ToolCall, TransportSpec};
/// use rmcp::model::CallToolRequestParams;
/// use serde_json::json;
///
/// let imap = ServerSpec {
///     name: "imap".into(),
///     transport: TransportSpec::Stdio {
///         command: "imap-mcp".into(),
///         args: vec![],
///         env: Default::default(),
///         cwd: None,
///     },
/// };
/// // Every fresh child starts with an empty account store: provision it before the first call.
/// let provision: AfterConnect = Arc::new(|session| {
///     Box::pin(async move {
///         let add = CallToolRequestParams::new("add_account")
///             .with_arguments(json!({"account": "yahoo"}).as_object().cloned().unwrap_or_default());
///         session.call_tool(add).await.map(|_| ()).map_err(|e| {
///             ConnectError::new(ConnectResult::ProtocolError, format!("provisioning failed: {e}"))
///         })
///     })
/// });
/// let hub = Hub::new(vec![imap], HubOptions::default().after_connect("imap", provision))?;
/// hub.connect_all();
///
/// let answer = hub
///     .fan_out(vec![ToolCall::new("mcp__imap__list_emails").idempotent(true)])
///     .await;
/// for degraded in &answer.degraded {
///     tracing::warn!("{} unavailable ({}): {}", degraded.server, degraded.state, degraded.reason);
/// }
/// hub.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Hub {
    inner: Arc<HubInner>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("servers", &self.servers())
            .finish()
    }
}

impl Hub {
    /// A hub for `specs`. Nothing connects until [`Hub::connect_all`] or the first call. Fails on a
    /// configuration that cannot work (a non-http(s) URL, a bad header, an empty command, a
    /// duplicate or unusable name).
    pub fn new(specs: Vec<ServerSpec>, options: HubOptions) -> Result<Hub, SpecError> {
        options.validate()?;
        let mut connectors = Vec::with_capacity(specs.len());
        let mut secrets = Vec::new();
        for spec in &specs {
            connectors.push((spec.name.clone(), connector_for(spec, &options)?));
            secrets.extend(secrets_of(spec));
        }
        let hub = Hub::with_connectors(connectors, options)?;
        hub.inner.shared.add_secrets(secrets);
        {
            let mut servers = hub.inner.servers.write().unwrap_or_else(|p| p.into_inner());
            for spec in specs {
                if let Some(supervisor) = servers.get_mut(&spec.name) {
                    let fresh = Supervisor::new(
                        spec.name.clone(),
                        supervisor.connector().clone(),
                        hub.inner.shared.clone(),
                    )
                    .with_spec(spec);
                    *supervisor = fresh;
                }
            }
        }
        Ok(hub)
    }

    /// A hub over connectors you built yourself (custom transports, test doubles).
    pub fn with_connectors(
        connectors: Vec<(Arc<str>, Arc<dyn Connector>)>,
        options: HubOptions,
    ) -> Result<Hub, SpecError> {
        options.validate()?;
        let shared = Arc::new(HubShared::new(options));
        let mut servers = BTreeMap::new();
        let mut events = Vec::new();
        for (name, connector) in connectors {
            if servers.contains_key(&name) {
                return Err(SpecError::Duplicate { server: name });
            }
            events.push(ConnectionEvent::ServerAdded {
                server: name.clone(),
                state: State::Absent,
            });
            servers.insert(
                name.clone(),
                Supervisor::new(name, connector, shared.clone()),
            );
        }
        shared.emit(events);
        Ok(Hub {
            inner: Arc::new(HubInner {
                servers: RwLock::new(servers),
                shared,
            }),
        })
    }

    fn supervisor(&self, server: &str) -> Option<Arc<Supervisor>> {
        self.inner
            .servers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .cloned()
    }

    fn supervisors(&self) -> Vec<Arc<Supervisor>> {
        self.inner
            .servers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Starts connecting every server that is idle (or whose cooldown is over) now, concurrently,
    /// without waiting.
    pub fn connect_all(&self) {
        for supervisor in self.supervisors() {
            supervisor.connect_now();
        }
    }

    /// Routes one call to its server (see the `tower::Service` impl).
    pub async fn call(&self, call: ToolCall) -> Result<CallToolResult, CallError> {
        let server = call.name.server().to_owned();
        match self.supervisor(&server) {
            Some(supervisor) => supervisor.call(call).await,
            None => {
                let server: Arc<str> = server.into();
                Err(CallError::new(
                    &server,
                    CallErrorKind::NotConnected(NotConnected::Absent),
                    format!(
                        "server `{server}` is not configured; add it to the configuration to call `{}`",
                        call.name
                    ),
                ))
            }
        }
    }

    /// Calls every tool at once and returns every result side by side. One dead or slow server
    /// never fails the whole answer: its calls fail on their own (at once when it cools down) and
    /// it is listed in [`FanOut::degraded`].
    pub async fn fan_out(&self, calls: Vec<ToolCall>) -> FanOut {
        let tools: Vec<ToolName> = calls.iter().map(|c| c.name.clone()).collect();
        let outcomes = futures::future::join_all(calls.into_iter().map(|c| self.call(c))).await;
        let mut degraded = Vec::new();
        let mut seen = HashSet::new();
        let mut results = Vec::with_capacity(outcomes.len());
        for (tool, result) in tools.into_iter().zip(outcomes) {
            if let Err(error) = &result
                && error.kind() != CallErrorKind::Protocol
                && seen.insert(error.server().to_owned())
            {
                let state = match error.kind() {
                    CallErrorKind::Timeout => self.state(error.server()).unwrap_or(State::Absent),
                    _ => error.state(),
                };
                degraded.push(Degraded {
                    server: error.server().into(),
                    state,
                    reason: error.to_string(),
                });
            }
            results.push(FanOutResult { tool, result });
        }
        FanOut { results, degraded }
    }

    /// Adds a server (idle until used or [`Hub::connect_all`]).
    pub fn add_server(&self, spec: ServerSpec) -> Result<(), SpecError> {
        let connector = connector_for(&spec, &self.inner.shared.options)?;
        self.inner.shared.add_secrets(secrets_of(&spec));
        let mut servers = self
            .inner
            .servers
            .write()
            .unwrap_or_else(|p| p.into_inner());
        if servers.contains_key(&spec.name) {
            return Err(SpecError::Duplicate { server: spec.name });
        }
        servers.insert(
            spec.name.clone(),
            Supervisor::new(spec.name.clone(), connector, self.inner.shared.clone())
                .with_spec(spec.clone()),
        );
        drop(servers);
        self.inner.shared.emit(vec![ConnectionEvent::ServerAdded {
            server: spec.name,
            state: State::Absent,
        }]);
        Ok(())
    }

    /// Removes a server, closing its connection (and killing a stdio child). Returns whether it
    /// was configured.
    pub fn remove_server(&self, server: &str) -> bool {
        let removed = self
            .inner
            .servers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(server);
        match removed {
            Some(supervisor) => {
                supervisor.stop();
                self.inner.shared.emit(vec![ConnectionEvent::ServerRemoved {
                    server: supervisor.name().clone(),
                }]);
                true
            }
            None => false,
        }
    }

    /// Replaces a server's configuration (a reload). A changed configuration closes the old
    /// connection and starts afresh, so changed credentials let an unauthenticated server try
    /// again. An unknown server is added.
    pub fn replace_server(&self, spec: ServerSpec) -> Result<(), SpecError> {
        if self
            .supervisor(&spec.name)
            .is_some_and(|s| s.spec() == Some(&spec))
        {
            // Unchanged: keep the live connection (a reload touches only what changed).
            return Ok(());
        }
        let connector = connector_for(&spec, &self.inner.shared.options)?;
        self.inner.shared.add_secrets(secrets_of(&spec));
        let fresh = Supervisor::new(spec.name.clone(), connector, self.inner.shared.clone())
            .with_spec(spec.clone());
        let old = self
            .inner
            .servers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(spec.name.clone(), fresh);
        match old {
            Some(old) => {
                let from = old.observe().state;
                old.stop();
                if from != State::Absent {
                    self.inner.shared.emit(vec![ConnectionEvent::StateChanged {
                        server: spec.name.clone(),
                        from,
                        to: State::Absent,
                        reason: Some("configuration changed; connects at next use".into()),
                    }]);
                } else {
                    self.inner.feed().bump();
                }
            }
            None => self.inner.shared.emit(vec![ConnectionEvent::ServerAdded {
                server: spec.name,
                state: State::Absent,
            }]),
        }
        Ok(())
    }

    /// Credentials changed outside the configuration (an explicit re-authorization): an
    /// unauthenticated server may try again at next use. Returns whether it was unauthenticated.
    pub fn reset_auth(&self, server: &str) -> bool {
        self.supervisor(server).is_some_and(|s| s.reset_auth())
    }

    /// Every server, its state, why, how many tools, and its transport.
    pub fn servers(&self) -> Vec<ServerStatus> {
        self.supervisors()
            .into_iter()
            .map(|s| {
                let observed = s.observe();
                ServerStatus {
                    name: s.name().clone(),
                    state: observed.state,
                    reason: observed.reason.map(|r| r.to_string()),
                    tools: observed.tools.len(),
                    transport: s.network_transport(),
                }
            })
            .collect()
    }

    /// The readiness state of one server, if configured.
    pub fn state(&self, server: &str) -> Option<State> {
        self.supervisor(server).map(|s| s.observe().state)
    }

    /// The generation of the server's newest successful connection (0 before the first), if
    /// configured. Every reconnect increments it.
    pub fn generation(&self, server: &str) -> Option<u64> {
        self.supervisor(server).map(|s| s.observe().generation)
    }

    /// The OpenTelemetry `network.transport` of a server: `pipe` (stdio) or `tcp` (HTTP).
    pub fn network_transport(&self, server: &str) -> Option<&'static str> {
        self.supervisor(server).map(|s| s.network_transport())
    }

    /// Closes every connection: kills every stdio child with its process group and cancels every
    /// attempt. The hub answers `absent` afterwards.
    pub async fn shutdown(&self) {
        for supervisor in self.supervisors() {
            supervisor.stop();
        }
        self.inner.feed().bump();
        tokio::task::yield_now().await;
    }

    fn build_snapshot(&self, only: Option<&str>) -> Snapshot {
        let mut snapshot = Snapshot::default();
        let supervisors = match only {
            Some(server) => self.supervisor(server).into_iter().collect(),
            None => self.supervisors(),
        };
        for supervisor in supervisors {
            let name = supervisor.name();
            let observed = supervisor.observe();
            match observed.state {
                State::Ready => {
                    snapshot.connected_servers.insert(name.to_string());
                    for tool in observed.tools.iter() {
                        if let Some(qualified) = ToolName::qualified(name, tool) {
                            snapshot.ready_tools.insert(qualified.as_str().to_owned());
                        }
                    }
                }
                State::Connecting => {
                    snapshot.pending_servers.insert(name.to_string());
                }
                State::Unauthenticated => {
                    snapshot.unauthenticated_servers.insert(name.to_string());
                }
                State::Absent => {}
            }
            if let Some(reason) = observed.reason {
                snapshot
                    .reasons
                    .insert(name.to_string(), reason.to_string());
            }
        }
        snapshot
    }
}

impl HubInner {
    fn feed(&self) -> &ChangeFeed {
        &self.shared.feed
    }
}

impl Inventory for Hub {
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        let snapshot = self.build_snapshot(None);
        Box::pin(std::future::ready(snapshot))
    }

    /// Asking about one server is a use of it: an idle server (never connected, or dropped while
    /// nobody called it) and one whose cooldown is over start connecting now, so resolution through
    /// the readiness layer reconnects on use instead of reporting the server absent.
    fn server_snapshot<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Snapshot> {
        if let Some(supervisor) = self.supervisor(server) {
            supervisor.connect_now();
        }
        let snapshot = self.build_snapshot(Some(server));
        Box::pin(std::future::ready(snapshot))
    }

    fn changes(&self) -> Option<&ChangeFeed> {
        Some(self.inner.feed())
    }

    fn network_transport(&self, server: &str) -> Option<&'static str> {
        Hub::network_transport(self, server)
    }
}

impl tower::Service<ToolCall> for Hub {
    type Response = CallToolResult;
    type Error = CallError;
    type Future = BoxFuture<'static, Result<CallToolResult, CallError>>;

    /// Always ready: readiness is per server and per call, decided inside `call`.
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    /// Routes by `call.name.server()` and passes `call.meta` as the request `_meta`.
    fn call(&mut self, call: ToolCall) -> Self::Future {
        let hub = self.clone();
        Box::pin(async move { hub.call(call).await })
    }
}
