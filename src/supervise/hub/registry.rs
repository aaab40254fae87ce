//! The [`Hub`]: its supervised servers by name (built from specs or connectors, added, removed and
//! replaced at run time), a call routed to its server (also as a `tower::Service`), each server's
//! status and budget, and shutdown.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use rmcp::model::CallToolResult;

use super::factory::{connector_for, secrets_of};
use super::options::HubOptions;
use super::shared::HubShared;
use crate::client::connector::Connector;
use crate::client::error::{CallError, CallErrorKind, NotConnected};
use crate::client::spec::ServerSpec;
use crate::client::spec_error::SpecError;
use crate::resolve::ChangeFeed;
use crate::state::ConnectionEvent;
use crate::state::State;
use crate::state::ToolCall;
use crate::supervise::supervisor::admission::Supervisor;

/// One server to supervise: its name, its connector, and the configuration it came from (if any).
type ServerEntry = (Arc<str>, Arc<dyn Connector>, Option<ServerSpec>);

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
    /// Who answered the live connection's handshake (protocol version, server name and version).
    pub identity: Option<crate::state::ServerIdentity>,
}

pub(super) struct HubInner {
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
/// - It is an [`Inventory`](crate::resolve::Inventory): ready tools are the tools listed by connected servers (as
///   `mcp__<server>__<tool>`), pending servers are connecting, unauthenticated servers are
///   unauthorized, everything else is absent; [`Inventory::changes`](crate::resolve::Inventory::changes) moves on every state and
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
/// use mcp_readiness::{supervise::{AfterConnect, ConnectError, Hub, HubOptions}, state::ConnectResult};
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
/// let hub = Hub::new(vec![imap], HubOptions::builder().after_connect("imap", provision))?;
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
    pub(super) inner: Arc<HubInner>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("servers", &self.servers())
            .finish()
    }
}

impl Hub {
    /// A hub for `specs`. Nothing connects until [`Hub::connect_all`] (call it at start, as MCP
    /// hosts connect every configured server) or the first use; meanwhile each server reads
    /// `connecting`. Fails on a
    /// configuration that cannot work (a non-http(s) URL, a bad header, an empty command, a
    /// duplicate or unusable name).
    pub fn new(specs: Vec<ServerSpec>, options: impl Into<HubOptions>) -> Result<Hub, SpecError> {
        let options = options.into();
        options.validate()?;
        let mut servers = Vec::with_capacity(specs.len());
        let mut secrets = Vec::new();
        for spec in specs {
            let connector = connector_for(&spec, &options)?;
            secrets.extend(secrets_of(&spec));
            servers.push((spec.name.clone(), connector, Some(spec)));
        }
        let hub = Hub::build(servers, options)?;
        hub.inner.shared.add_secrets(secrets);
        Ok(hub)
    }

    /// A hub over connectors you built yourself (custom transports, test doubles).
    pub fn with_connectors(
        connectors: Vec<(Arc<str>, Arc<dyn Connector>)>,
        options: impl Into<HubOptions>,
    ) -> Result<Hub, SpecError> {
        let options = options.into();
        options.validate()?;
        let servers = connectors
            .into_iter()
            .map(|(name, connector)| (name, connector, None))
            .collect();
        Hub::build(servers, options)
    }

    /// One supervisor per server, each built once with the configuration it came from (if any);
    /// every server is announced as added.
    fn build(servers: Vec<ServerEntry>, options: HubOptions) -> Result<Hub, SpecError> {
        let shared = Arc::new(HubShared::new(options));
        let mut supervisors = BTreeMap::new();
        let mut events = Vec::new();
        for (name, connector, spec) in servers {
            if supervisors.contains_key(&name) {
                return Err(SpecError::Duplicate { server: name });
            }
            events.push(ConnectionEvent::ServerAdded {
                server: name.clone(),
                state: State::Connecting,
            });
            supervisors.insert(
                name.clone(),
                Supervisor::new(name, connector, shared.clone(), spec),
            );
        }
        shared.emit(events);
        for supervisor in supervisors.values() {
            supervisor.watch_credentials();
        }
        Ok(Hub {
            inner: Arc::new(HubInner {
                servers: RwLock::new(supervisors),
                shared,
            }),
        })
    }

    pub(in crate::supervise) fn supervisor(&self, server: &str) -> Option<Arc<Supervisor>> {
        self.inner
            .servers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .cloned()
    }

    pub(super) fn supervisors(&self) -> Vec<Arc<Supervisor>> {
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

    /// Adds a server (idle, reading `connecting`, until used or [`Hub::connect_all`]).
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
            Supervisor::new(
                spec.name.clone(),
                connector,
                self.inner.shared.clone(),
                Some(spec.clone()),
            ),
        );
        let added = servers.get(&spec.name).cloned();
        drop(servers);
        self.inner.shared.emit(vec![ConnectionEvent::ServerAdded {
            server: spec.name,
            state: State::Connecting,
        }]);
        if let Some(added) = added {
            added.watch_credentials();
        }
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
        let fresh = Supervisor::new(
            spec.name.clone(),
            connector,
            self.inner.shared.clone(),
            Some(spec.clone()),
        );
        let old = self
            .inner
            .servers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(spec.name.clone(), fresh.clone());
        match old {
            Some(old) => {
                let from = old.observe().state;
                old.stop();
                // The fresh supervisor is idle (`connecting`) until something connects it.
                if from != State::Connecting {
                    self.inner.shared.emit(vec![ConnectionEvent::StateChanged {
                        server: spec.name.clone(),
                        from,
                        to: State::Connecting,
                        reason: Some(
                            "configuration changed; connects at `connect_all` or the next use"
                                .into(),
                        ),
                    }]);
                } else {
                    self.inner.feed().bump();
                }
            }
            None => self.inner.shared.emit(vec![ConnectionEvent::ServerAdded {
                server: spec.name,
                state: State::Connecting,
            }]),
        }
        fresh.watch_credentials();
        Ok(())
    }

    /// Sets the wait budget of `server`'s tools (or, with `None`, goes back to the resolver's
    /// default), as [`HubOptionsBuilder::server_budget`](crate::supervise::HubOptionsBuilder::server_budget)
    /// does at start; a configuration reload calls it. Resolutions that start afterwards use it.
    pub fn set_server_budget(&self, server: &str, budget: Option<crate::resolve::Budget>) {
        self.inner.shared.set_server_budget(server, budget);
    }

    /// The wait budget set for `server`, if any (see [`Hub::set_server_budget`]).
    pub fn server_budget(&self, server: &str) -> Option<crate::resolve::Budget> {
        self.inner.shared.server_budget(server)
    }

    /// Puts a fresh supervisor for `name` over `connector` in place of any supervisor of that name
    /// (whose connection is closed), announcing the change like [`Hub::replace_server`]. Used by
    /// [`Hub::attach`] and [`Hub::add_connector`].
    pub(super) fn install(
        &self,
        name: Arc<str>,
        connector: Arc<dyn Connector>,
    ) -> Result<Arc<Supervisor>, SpecError> {
        if crate::state::ToolName::qualified(&name, "x").is_none()
            || name.chars().any(char::is_control)
        {
            return Err(SpecError::BadName { server: name });
        }
        let fresh = Supervisor::new(name.clone(), connector, self.inner.shared.clone(), None);
        let old = self
            .inner
            .servers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.clone(), fresh.clone());
        match old {
            Some(old) => {
                let from = old.observe().state;
                old.stop();
                if from != State::Absent {
                    self.inner.shared.emit(vec![ConnectionEvent::StateChanged {
                        server: name,
                        from,
                        to: State::Absent,
                        reason: Some("replaced by a new connection".into()),
                    }]);
                } else {
                    self.inner.feed().bump();
                }
            }
            None => self.inner.shared.emit(vec![ConnectionEvent::ServerAdded {
                server: name,
                state: State::Connecting,
            }]),
        }
        Ok(fresh)
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
                    identity: observed.identity,
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
}

impl HubInner {
    pub(super) fn feed(&self) -> &ChangeFeed {
        &self.shared.feed
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
