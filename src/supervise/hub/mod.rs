//! The hub room: the [`Hub`] and what it owns across servers.
//!
//! - `mod.rs`: the `Hub` itself: built from specs or connectors, a call routed to its server
//!   (also as a `tower::Service`), `connect_all` and shutdown;
//! - `registry.rs`: its servers by name at run time (add, remove, replace, install), per-server
//!   budgets and re-authorization;
//! - `status.rs`: each server's status ([`ServerStatus`](crate::supervise::ServerStatus)), state,
//!   generation and transport;
//! - `shared.rs`: what every supervisor of one hub shares (options, the ordered event queue of
//!   `supervise/events/` with its sinks and change feed, the secrets to redact);
//! - `options.rs`: [`HubOptions`](crate::supervise::HubOptions) and its builder;
//! - `factory.rs`: the connector for a configured server ([`connector_for`](crate::supervise::connector_for));
//! - `attach.rs`: connections the hub did not make (`attach_with`, `add_connector`, `peer`);
//! - `fan_out.rs`: many calls at once, failures isolated;
//! - `inventory_view.rs`: the `Inventory` view of a hub.

pub(super) mod attach;
pub(super) mod factory;
pub(super) mod fan_out;
pub(super) mod inventory_view;
pub(crate) mod options;
mod registry;
pub(super) mod shared;
pub(super) mod status;
#[cfg(test)]
mod tests;

use crate::util::RwLockExt as _;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use rmcp::model::CallToolResult;

use self::factory::{connector_or_problem, secrets_of};
use self::options::HubOptions;
use self::shared::HubShared;
use crate::client::connector::Connector;
use crate::client::error::{CallError, CallErrorKind, NotConnected};
use crate::client::spec::ServerSpec;
use crate::client::spec::error::SpecError;
use crate::resolve::ChangeFeed;
use crate::state::{ConnectionEvent, State, ToolCall};
use crate::supervise::supervisor::Supervisor;

/// One server to supervise: its name, its connector, the configuration it came from (if any),
/// and why this build cannot serve that configuration (if it cannot).
type ServerEntry = (
    Arc<str>,
    Arc<dyn Connector>,
    Option<ServerSpec>,
    Option<SpecError>,
);

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
/// use mcp_readiness::{Hub, HubOptions, client::{AfterConnect, ConnectError}, state::ConnectResult};
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
    /// A hub for `specs`. Nothing connects until [`Hub::connect_all`] (call it at start, as MCP
    /// hosts connect every configured server) or the first use; meanwhile each server reads
    /// `connecting`.
    ///
    /// A server this build cannot serve (an `oauth` block without the `oauth` feature, a
    /// non-http(s) URL, a bad header, an empty command) is that server's problem alone: it reads
    /// `absent`, its reason is the [`SpecError`] (naming the feature or key at fault), calls to it
    /// fail at once, and the other servers start. Fails only on what concerns the whole hub: a
    /// duplicate name, a name that cannot form `mcp__<server>__<tool>`, or a bad option.
    pub fn new(specs: Vec<ServerSpec>, options: impl Into<HubOptions>) -> Result<Hub, SpecError> {
        let options = options.into();
        options.validate()?;
        let mut servers = Vec::with_capacity(specs.len());
        let mut secrets = Vec::new();
        for spec in specs {
            let (connector, problem) = connector_or_problem(&spec, &options)?;
            secrets.extend(secrets_of(&spec));
            servers.push((spec.name.clone(), connector, Some(spec), problem));
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
            .map(|(name, connector)| (name, connector, None, None))
            .collect();
        Hub::build(servers, options)
    }

    /// One supervisor per server, each built once with the configuration it came from (if any);
    /// every server is announced as added.
    fn build(servers: Vec<ServerEntry>, options: HubOptions) -> Result<Hub, SpecError> {
        let shared = Arc::new(HubShared::new(options));
        let mut supervisors = BTreeMap::new();
        let mut events = Vec::new();
        let mut problems = Vec::new();
        for (name, connector, spec, problem) in servers {
            if supervisors.contains_key(&name) {
                return Err(SpecError::Duplicate { server: name });
            }
            events.push(ConnectionEvent::ServerAdded {
                server: name.clone(),
                state: State::Connecting,
            });
            let supervisor = Supervisor::new(name.clone(), connector, shared.clone(), spec);
            if let Some(problem) = problem {
                problems.push((supervisor.clone(), problem));
            }
            supervisors.insert(name, supervisor);
        }
        shared.events.emit(events);
        // After the announcement, so the exporter's row exists for the reason.
        for (supervisor, problem) in &problems {
            supervisor.unservable(problem);
        }
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
        self.inner.servers.read_unpoisoned().get(server).cloned()
    }

    fn supervisors(&self) -> Vec<Arc<Supervisor>> {
        self.inner
            .servers
            .read_unpoisoned()
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
                        "{} to call `{}`",
                        inventory_view::not_configured_reason(&server),
                        crate::secret::echo(call.name.as_str())
                    ),
                )
                .for_tool(&call.name))
            }
        }
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
    fn feed(&self) -> &ChangeFeed {
        self.shared.events.feed()
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
