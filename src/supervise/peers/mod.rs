//! The peers room: [`Peers`], the registry of a service's own rmcp connections (see its
//! documentation).
//!
//! - `mod.rs`: `Peers` itself: hand-over (`insert`), `connecting`, `failed`, `remove`, the tool
//!   list, the peer and status, and the one way to change a server (`PeersInner::update`);
//! - `slot.rs`: one server's `Conn` machine and its transitions, whose events follow the same
//!   readiness-change rule as a hub supervisor's (`supervise/events/`);
//! - `call.rs`: the call path, classified with the hub's rules;
//! - `inventory.rs`: the `Inventory` view.
//!
//! Events go through the same ordered event queue as the hub's.

mod call;
mod inventory;
mod slot;

use crate::util::MutexExt as _;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use rmcp::Peer;
use rmcp::service::{RoleClient, RunningService};

use crate::client::connector::SessionEvents;
use crate::client::connector::{ConnectError, Session};
use crate::client::reasons::rmcp_errors::classify_request_error;
use crate::client::session::RmcpSession;
use crate::secret::redact;
use crate::state::{ConnectResult, ConnectionEvent, EventSink, State, ToolName};
use crate::supervise::events::{EventQueue, Readiness as _};
use crate::supervise::hub::status::ServerStatus;
use slot::{Conn, Slot};

///  [`Peers`]: the readiness layer, metrics and status page over the rmcp connections a service
///  already keeps.
///
///  The service goes on making its own connections (`().serve(TokioChildProcess::new(..))`, a
///  streamable-HTTP client, its own client handler) and hands each one over with
///  [`Peers::insert`]; from then on `Peers` is the [`Inventory`](crate::Inventory) and the
///  `tower::Service<ToolCall>` the [`ReadinessLayer`](crate::ReadinessLayer) needs:
///
///  - **states**: `connecting` ([`Peers::connecting`]), `ready` (inserted, tools listed),
///    `unauthenticated` (a 401/403 at connect, [`Peers::failed`], or on a call), `absent` (failed,
///    ended, removed, or never heard of);
///  - **drops noticed at once**: a watcher owns each connection's end (rmcp's service loop) and
///    marks the server `absent` the moment it ends, so calls are refused as not ready instead of
///    being sent to a dead peer; the change feed makes the layer re-check at once;
///  - **errors classified with the hub's rules**: 401/403 → `unauthenticated`, a dead pipe →
///    `transport_error` (and `absent`), a JSON-RPC error → `tool_error`, no answer within the call
///    timeout → `timeout`; calls fail with the hub's [`CallError`](crate::client::CallError);
///  - **events** ([`ConnectionEvent`]) to an optional sink, usually [`Metrics`](crate::Metrics):
///    `server_state`, `connects_total`, `server_tools` and the status page;
///  - **the peer** for everything beyond tools: [`Peers::peer`].
///
///  What it does not do is reconnect: the connection is the service's, so after a drop it stays
///  `absent` until the service inserts a new one. For supervision (reconnect on use, cooldown,
///  health pings, retry-once) with your own connections or client handler, use
///  an [`RmcpConnector`](crate::client::RmcpConnector) with
///  [`Hub::add_connector`](crate::supervise::Hub::add_connector), or hand over a connection you
///  opened with [`Hub::attach_with`](crate::supervise::Hub::attach_with).
///
///  ```no_run
///  use std::time::Duration;
///  use mcp_readiness::rmcp::{ServiceExt, transport::TokioChildProcess};
///  use mcp_readiness::{Metrics, supervise::Peers, ReadinessLayer, ToolCall};
///  use tower::{ServiceBuilder, ServiceExt as _};
///
///  # async fn demo() -> Result<(), tower::BoxError> {
///  let metrics = Metrics::new();
///  let peers = Peers::with_events(metrics.clone());
///
///  // The service's own connection, made as before; then handed over. Every failure goes to
///  // `failed`: a command that cannot start reads `absent` at once (`spawn_failed`), not
///  // `connecting` for ever.
///  peers.connecting("files");
///  match TokioChildProcess::new(tokio::process::Command::new("files-mcp")) {
///      Err(spawn_error) => peers.failed("files", spawn_error),
///      Ok(transport) => match ().serve(transport).await {
///          Ok(running) => drop(peers.insert("files", running).await),
///          Err(error) => peers.failed("files", error),
///      },
///  }
///
///  let tools = ServiceBuilder::new()
///      .layer(ReadinessLayer::builder(peers.clone()).metrics(metrics.clone()).build())
///      .service(peers.clone());
///  let answer = tools.oneshot(ToolCall::new("mcp__files__read_file")).await;
///  # drop(answer); Ok(()) }
///  ```
///
/// Cheap to clone; clones share the registry. Dropping the last clone closes every connection.
#[derive(Clone)]
pub struct Peers {
    inner: Arc<PeersInner>,
}

struct PeersInner {
    servers: Mutex<BTreeMap<Arc<str>, Slot>>,
    /// The ordered event queue (the sink, if any, and the change feed), the same as a hub's.
    events: EventQueue,
    call_timeout_ms: AtomicU64,
}

impl Default for Peers {
    fn default() -> Self {
        Peers::new()
    }
}

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers")
            .field("servers", &self.servers())
            .finish_non_exhaustive()
    }
}

impl Peers {
    /// The default per-call (and tool-listing) timeout: 60 s.
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

    /// An empty registry whose events go nowhere.
    pub fn new() -> Peers {
        Peers::build(None, Self::DEFAULT_CALL_TIMEOUT)
    }

    /// An empty registry whose [`ConnectionEvent`]s go to `sink`: usually your
    /// [`Metrics`](crate::Metrics), which then exports `server_state`, `connects_total`,
    /// `server_tools` and shows every server on its status page.
    pub fn with_events(sink: impl EventSink) -> Peers {
        Peers::build(Some(Arc::new(sink)), Self::DEFAULT_CALL_TIMEOUT)
    }

    /// Sets the per-call (and tool-listing) timeout, default [`Peers::DEFAULT_CALL_TIMEOUT`].
    pub fn set_call_timeout(&self, timeout: Duration) {
        let millis = u64::try_from(timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        self.inner.call_timeout_ms.store(millis, Ordering::Relaxed);
    }

    fn build(sink: Option<Arc<dyn EventSink>>, call_timeout: Duration) -> Peers {
        let call_timeout_ms = u64::try_from(call_timeout.as_millis()).unwrap_or(u64::MAX);
        Peers {
            inner: Arc::new(PeersInner {
                servers: Mutex::new(BTreeMap::new()),
                events: EventQueue::new(sink.into_iter().collect()),
                call_timeout_ms: AtomicU64::new(call_timeout_ms),
            }),
        }
    }

    /// The service started connecting `server`: it is `connecting` (the layer waits for it inside
    /// its budget) and the connect duration is measured from now.
    pub fn connecting(&self, server: &str) {
        self.inner.update(server, Slot::connecting);
    }

    /// Hands over a live connection to `server` (any client handler), replacing any connection of
    /// that name. Lists its tools; then `server` is `ready` and a watcher marks it `absent` the
    /// moment the connection ends. Returns how many tools it offers.
    ///
    /// When listing the tools fails the connection is closed and the failure classified (a
    /// 401/403 makes the server `unauthenticated`); the error says so.
    pub async fn insert<S: rmcp::Service<RoleClient>>(
        &self,
        server: impl Into<Arc<str>>,
        running: RunningService<RoleClient, S>,
    ) -> Result<usize, ConnectError> {
        let server: Arc<str> = server.into();
        if ToolName::qualified(&server, "x").is_none() || server.chars().any(char::is_control) {
            return Err(ConnectError::new(
                ConnectResult::ProtocolError,
                format!(
                    "server name `{}` cannot be used in `mcp__<server>__<tool>`; use letters, \
                     digits, `-` and single `_`",
                    server.escape_debug()
                ),
            ));
        }
        let session = Arc::new(RmcpSession::start(
            running,
            None,
            SessionEvents::ignore(),
            None,
        ));
        let listed = tokio::time::timeout(self.inner.call_timeout(), session.list_tools()).await;
        let tools = match listed {
            Ok(Ok(tools)) => tools,
            Ok(Err(error)) => {
                session.shutdown();
                let result = classify_request_error(&error);
                let detail = redact(&crate::client::reasons::reason::explain(&error), &[]);
                let error = ConnectError::new(
                    result,
                    format!("server `{server}`: listing its tools failed: {detail}"),
                );
                self.failed_with(&server, error.clone());
                return Err(error);
            }
            Err(_elapsed) => {
                session.shutdown();
                let error = ConnectError::new(
                    ConnectResult::Timeout,
                    format!(
                        "server `{server}` did not list its tools within {}",
                        crate::util::Human(self.inner.call_timeout())
                    ),
                );
                self.failed_with(&server, error.clone());
                return Err(error);
            }
        };
        let names: Vec<String> = tools.into_iter().map(|t| t.name.into_owned()).collect();
        let count = names.len();
        let closed = session.closed();
        let generation = self.inner.update(&server, |slot| slot.live(session, names));
        // The watcher: the moment this connection ends, the server is absent.
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let why = closed.await;
            if let Some(inner) = Weak::upgrade(&weak) {
                inner.update_known(&server, |slot| slot.lost(generation, &why));
            }
        });
        Ok(count)
    }

    /// The service's connect to `server` failed with `error`, whatever it is: rmcp's
    /// [`ClientInitializeError`](rmcp::service::ClientInitializeError) from `serve`, the
    /// `std::io::Error` of a command that could not start (`TokioChildProcess::new`), an HTTP
    /// client's error, or your own error wrapping one of them. It is classified the way the
    /// [`Hub`](crate::Hub) classifies its own connects ([`ConnectError::classify`]):
    /// `unauthenticated` for a 401/403 challenge, `absent` with `spawn_failed` for a command that
    /// is missing or not executable, `absent` otherwise, with the reason; counted in
    /// `connects_total`.
    ///
    /// Takes the error by value, as a service has it: any `std::error::Error + Send + Sync`
    /// (`std::io::Error`, rmcp's `ClientInitializeError`), a `Box<dyn Error + Send + Sync>`, or an
    /// `anyhow::Error` (it converts into that box, with the error it wraps, so its cause is read
    /// through any context added to it). To keep the error, classify a borrow with
    /// [`Peers::failed_with`]`(server, ConnectError::classify(server, &*error))`.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use mcp_readiness::{State, supervise::Peers};
    ///
    /// let peers = Peers::new();
    /// let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
    /// peers.failed("files", missing);
    /// let boxed: Box<dyn std::error::Error + Send + Sync> = "the server said no".into();
    /// peers.failed("mail", boxed);
    /// assert_eq!(peers.state("files"), Some(State::Absent));
    /// # Ok(()) }
    /// ```
    pub fn failed(
        &self,
        server: &str,
        error: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) {
        let error = error.into();
        self.failed_with(server, ConnectError::classify(server, &*error));
    }

    /// The service's connect to `server` failed for a reason it classified itself (e.g.
    /// `spawn_failed` when the command could not start).
    pub fn failed_with(&self, server: &str, error: ConnectError) {
        self.inner.update(server, |slot| {
            slot.failed(error.result, error.message.into())
        });
    }

    /// Forgets `server`, closing its connection. Its series leave `/metrics`. Returns whether
    /// it was known.
    pub fn remove(&self, server: &str) -> bool {
        let mut servers = self.inner.lock();
        let Some(mut slot) = servers.remove(server) else {
            return false;
        };
        // Queued under the lock, like every transition, so it stays in order with them.
        self.inner
            .events
            .queue(vec![ConnectionEvent::ServerRemoved {
                server: server.into(),
            }]);
        drop(servers);
        slot.close();
        self.inner.events.flush();
        true
    }

    /// Closes every connection and forgets every server, as a service does when it stops (the
    /// counterpart of [`Hub::shutdown`](crate::Hub::shutdown)): each rmcp service is cancelled,
    /// which closes its transport (a stdio server's stdin), and the servers' series leave
    /// `/metrics`. Connections inserted afterwards are kept as usual.
    pub fn shutdown(&self) {
        let servers: Vec<Arc<str>> = self.inner.lock().keys().cloned().collect();
        for server in servers {
            self.remove(&server);
        }
    }

    /// Sets the OpenTelemetry `network.transport` of `server`'s calls (`pipe` for stdio, `tcp`
    /// for HTTP); unknown (no attribute) until set. Applies to tools first called afterwards.
    pub fn set_network_transport(&self, server: &str, transport: &'static str) {
        if let Some(slot) = self.inner.lock().get_mut(server) {
            slot.transport = Some(transport);
        }
    }

    /// Re-reads `server`'s tool list (call it from your handler's `on_tool_list_changed`).
    /// Returns how many tools it offers now; `None` when it has no live connection or listing
    /// failed (the tools it had stay listed).
    pub async fn refresh_tools(&self, server: &str) -> Option<usize> {
        let (generation, session) = self.inner.lock().get(server).and_then(Slot::live_session)?;
        let listed = tokio::time::timeout(self.inner.call_timeout(), session.list_tools()).await;
        let Ok(Ok(tools)) = listed else {
            return None;
        };
        let names: Vec<String> = tools.into_iter().map(|t| t.name.into_owned()).collect();
        let count = names.len();
        self.inner
            .update_known(server, |slot| slot.replace_tools(generation, names));
        Some(count)
    }

    /// The rmcp client [`Peer`] of `server`'s live connection, for resources, prompts,
    /// completions and anything else beyond tool calls. `None` unless it is `ready`.
    pub fn peer(&self, server: &str) -> Option<Peer<RoleClient>> {
        let live = self.inner.lock().get(server).and_then(Slot::live_session);
        live.and_then(|(_, session)| session.peer())
    }

    /// The readiness state of `server`, if known.
    pub fn state(&self, server: &str) -> Option<State> {
        self.inner.lock().get(server).map(|s| s.conn.readiness())
    }

    /// Every known server, its state, why, how many tools, and its transport (`unknown` until
    /// [`Peers::set_network_transport`]).
    pub fn servers(&self) -> Vec<ServerStatus> {
        self.inner
            .lock()
            .iter()
            .map(|(name, slot)| ServerStatus {
                name: name.clone(),
                state: slot.conn.readiness(),
                reason: slot.reason.as_deref().map(str::to_owned),
                tools: match &slot.conn {
                    Conn::Live { tools, .. } => tools.len(),
                    _ => 0,
                },
                transport: slot.transport.unwrap_or("unknown"),
                identity: match &slot.conn {
                    Conn::Live { session, .. } => session.identity(),
                    _ => None,
                },
                // Your own connections are re-made by you: no attempt is scheduled here.
                next_attempt_at: None,
            })
            .collect()
    }
}

impl PeersInner {
    fn call_timeout(&self) -> Duration {
        Duration::from_millis(self.call_timeout_ms.load(Ordering::Relaxed))
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<Arc<str>, Slot>> {
        // Every write is one assignment: a panic elsewhere cannot leave a slot half-written.
        self.servers.lock_unpoisoned()
    }

    /// The one way to change a server: lock, run `f` on its slot (created `absent` and announced
    /// if new), queue the events its transitions caused while still holding the lock, unlock, and
    /// deliver them through the ordered event queue (which moves the change feed), exactly as a
    /// hub supervisor does.
    fn update<R>(&self, server: &str, f: impl FnOnce(&mut Slot) -> R) -> R {
        let mut servers = self.lock();
        let slot = match servers.get_mut(server) {
            Some(slot) => slot,
            None => servers
                .entry(server.into())
                .or_insert_with(|| Slot::new(server.into())),
        };
        let result = f(slot);
        self.events.queue(slot.take_events());
        drop(servers);
        self.events.flush();
        result
    }

    /// Like [`PeersInner::update`] for a server that is still known; `None` (and nothing
    /// announced) for one removed meanwhile, so the late end of a removed server's connection, or
    /// a call that was in flight, cannot bring it back.
    fn update_known<R>(&self, server: &str, f: impl FnOnce(&mut Slot) -> R) -> Option<R> {
        let mut servers = self.lock();
        let slot = servers.get_mut(server)?;
        let result = f(slot);
        self.events.queue(slot.take_events());
        drop(servers);
        self.events.flush();
        Some(result)
    }
}

impl Drop for PeersInner {
    /// The last handle is gone: close every connection.
    fn drop(&mut self) {
        let servers = self.servers.get_mut().unwrap_or_else(|p| p.into_inner());
        for slot in servers.values_mut() {
            slot.close();
        }
    }
}
