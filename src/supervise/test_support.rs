//! The scripted [`Connector`] and [`Session`] the rooms' paused-time tests drive a [`Hub`] with,
//! and the helpers those tests share.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, Tool};
use rmcp::{ErrorData, ServiceError};
use tokio::sync::watch;

use crate::client::*;
pub(super) use crate::state::{ConnectResult, ConnectionEvent, ToolCall};
use crate::supervise::*;

#[derive(Clone, Debug)]
pub(super) enum CallStep {
    Ok,
    IsError,
    JsonRpcError,
    Drop,
    Hang,
    /// Never answered; the pipe dies when the supervisor shuts the connection down (as a stdio
    /// child's does when its process group is killed).
    HangUntilShutDown,
    /// A JSON-RPC error with this message.
    JsonRpcErrorSaying(String),
    Delay(Duration),
}

pub(super) struct ScriptedSession {
    pub(super) closed_tx: watch::Sender<Option<Arc<str>>>,
    pub(super) calls: AtomicUsize,
    pub(super) script: Mutex<VecDeque<CallStep>>,
    pub(super) default_step: CallStep,
    pub(super) ping_fails: bool,
    /// `ping` is never answered (the server ignores it), while `tools/list` is.
    pub(super) ping_hangs: bool,
    /// Once set, nothing is answered any more: `ping` and `tools/list` hang.
    pub(super) frozen: std::sync::atomic::AtomicBool,
    pub(super) tools: Vec<String>,
    /// Whether the supervisor shut this connection down.
    pub(super) shut_down: std::sync::atomic::AtomicBool,
    /// Turns true when the supervisor shuts this connection down (a watch: a call that starts
    /// waiting after it did sees it at once).
    pub(super) shut_down_tx: watch::Sender<bool>,
}

impl ScriptedSession {
    /// A close event from this connection arrives (possibly late).
    pub(super) fn fire_close(&self) {
        let _ = self.closed_tx.send(Some("scripted close".into()));
    }
}

impl Session for ScriptedSession {
    fn call_tool(
        &self,
        params: CallToolRequestParams,
    ) -> BoxFuture<'_, Result<CallToolResult, ServiceError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let step = self
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(self.default_step.clone());
        let mut shut_down = self.shut_down_tx.subscribe();
        Box::pin(async move {
            match step {
                CallStep::HangUntilShutDown => {
                    let _ = shut_down.wait_for(|down| *down).await;
                    Err(ServiceError::TransportClosed)
                }
                CallStep::JsonRpcErrorSaying(message) => Err(ServiceError::McpError(
                    ErrorData::internal_error(message, None),
                )),
                CallStep::Ok => Ok(CallToolResult::success(vec![ContentBlock::text(
                    params.name.to_string(),
                )])),
                CallStep::IsError => Ok(CallToolResult::error(vec![ContentBlock::text(
                    "no such message",
                )])),
                CallStep::JsonRpcError => Err(ServiceError::McpError(ErrorData::invalid_params(
                    "bad", None,
                ))),
                CallStep::Drop => Err(ServiceError::TransportClosed),
                CallStep::Hang => futures::future::pending().await,
                CallStep::Delay(d) => {
                    tokio::time::sleep(d).await;
                    Ok(CallToolResult::success(vec![ContentBlock::text("late")]))
                }
            }
        })
    }

    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ServiceError>> {
        let tools = self
            .tools
            .iter()
            .map(|t| Tool::new(t.clone(), "t", Arc::new(serde_json::Map::new())))
            .collect();
        let frozen = self.frozen.load(Ordering::SeqCst);
        Box::pin(async move {
            if frozen {
                futures::future::pending::<()>().await;
            }
            Ok(tools)
        })
    }

    fn ping(&self) -> BoxFuture<'_, Result<(), ServiceError>> {
        let fails = self.ping_fails;
        let hangs = self.ping_hangs || self.frozen.load(Ordering::SeqCst);
        Box::pin(async move {
            if hangs {
                futures::future::pending::<()>().await;
            }
            if fails {
                Err(ServiceError::TransportClosed)
            } else {
                Ok(())
            }
        })
    }

    fn is_closed(&self) -> bool {
        self.closed_tx.borrow().is_some()
    }

    fn closed(&self) -> BoxFuture<'static, Arc<str>> {
        crate::client::session::closed_reason(self.closed_tx.subscribe(), "gone")
    }

    fn shutdown(&self) {
        self.shut_down.store(true, Ordering::SeqCst);
        self.shut_down_tx.send_replace(true);
    }
}

#[derive(Clone, Debug)]
pub(super) enum ConnectStep {
    Ok,
    Fail(ConnectResult),
    /// Refused with a `Retry-After` of this long (an HTTP 429 / 503).
    Throttle(Duration),
    Hang,
}

#[derive(Default)]
pub(super) struct Script {
    pub(super) connects: AtomicUsize,
    pub(super) provisions: AtomicUsize,
    pub(super) steps: Mutex<VecDeque<ConnectStep>>,
    pub(super) sessions: Mutex<Vec<Arc<ScriptedSession>>>,
    pub(super) calls: Mutex<VecDeque<CallStep>>,
}

impl Script {
    /// A script whose first connects go as `steps` say (then succeed).
    pub(super) fn starting_with(steps: impl IntoIterator<Item = ConnectStep>) -> Arc<Script> {
        let script = Arc::new(Script::default());
        script.steps.lock().unwrap().extend(steps);
        script
    }
}

pub(super) struct ScriptedConnector {
    pub(super) script: Arc<Script>,
    pub(super) delay: Duration,
    pub(super) default_step: CallStep,
    pub(super) ping_fails: bool,
    pub(super) ping_hangs: bool,
    pub(super) tools: Vec<String>,
}

impl ScriptedConnector {
    pub(super) fn new(script: &Arc<Script>) -> Self {
        ScriptedConnector {
            script: script.clone(),
            delay: Duration::ZERO,
            default_step: CallStep::Ok,
            ping_fails: false,
            ping_hangs: false,
            tools: vec!["read".into(), "write".into()],
        }
    }
}

impl Connector for ScriptedConnector {
    fn connect(
        &self,
        _events: SessionEvents,
    ) -> BoxFuture<'_, Result<Arc<dyn Session>, ConnectError>> {
        Box::pin(async move {
            self.script.connects.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            let step = self
                .script
                .steps
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or(ConnectStep::Ok);
            match step {
                ConnectStep::Ok => {}
                ConnectStep::Fail(result) => {
                    return Err(ConnectError::new(
                        result,
                        format!("scripted {}", result.as_str()),
                    ));
                }
                ConnectStep::Throttle(after) => {
                    return Err(ConnectError::new(
                        ConnectResult::Refused,
                        "scripted throttling (HTTP 429)",
                    )
                    .with_retry_after(after));
                }
                ConnectStep::Hang => futures::future::pending().await,
            }
            let session = Arc::new(ScriptedSession {
                closed_tx: watch::channel(None).0,
                calls: AtomicUsize::new(0),
                script: Mutex::new(std::mem::take(&mut *self.script.calls.lock().unwrap())),
                default_step: self.default_step.clone(),
                ping_fails: self.ping_fails,
                ping_hangs: self.ping_hangs,
                frozen: Default::default(),
                tools: self.tools.clone(),
                shut_down: Default::default(),
                shut_down_tx: watch::channel(false).0,
            });
            self.script.sessions.lock().unwrap().push(session.clone());
            Ok(session as Arc<dyn Session>)
        })
    }

    fn after_connect(&self, _session: Arc<dyn Session>) -> BoxFuture<'_, Result<(), ConnectError>> {
        self.script.provisions.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(()) })
    }

    fn network_transport(&self) -> &'static str {
        "pipe"
    }
}

pub(super) fn quiet() -> HubOptionsBuilder {
    HubOptions::builder().health_interval(None)
}

pub(super) fn hub_with(connector: impl Connector + 'static, options: impl Into<HubOptions>) -> Hub {
    Hub::with_connectors(
        vec![("mail".into(), Arc::new(connector) as Arc<dyn Connector>)],
        options,
    )
    .unwrap()
}

pub(super) fn read() -> ToolCall {
    ToolCall::new("mcp__mail__read").idempotent(true)
}

pub(super) async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

pub(super) fn recorder() -> (
    Arc<Mutex<Vec<ConnectionEvent>>>,
    impl Fn(&ConnectionEvent) + Send + Sync + 'static,
) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let events = events.clone();
        move |e: &ConnectionEvent| events.lock().unwrap().push(e.clone())
    };
    (events, sink)
}

/// Closes connection number `n` (0-based) after it has lived `life`, and lets the supervisor react.
pub(super) async fn close_after(script: &Script, n: usize, life: Duration) {
    tokio::time::advance(life).await;
    let session = script.sessions.lock().unwrap()[n].clone();
    session.fire_close();
    settle().await;
}

/// A quiet hub whose first connect fails with `result`, its script, and its first call's error.
pub(super) async fn first_connect_failing(result: ConnectResult) -> (Arc<Script>, Hub, CallError) {
    let script = Script::starting_with([ConnectStep::Fail(result)]);
    let hub = hub_with(ScriptedConnector::new(&script), quiet());
    let error = hub.call(read()).await.unwrap_err();
    (script, hub, error)
}

/// What `pick` takes from the events `events` recorded (see [`recorder`]), in order.
pub(super) fn events_of<T>(
    events: &Mutex<Vec<ConnectionEvent>>,
    pick: impl Fn(&ConnectionEvent) -> Option<T>,
) -> Vec<T> {
    events.lock().unwrap().iter().filter_map(pick).collect()
}

pub(super) fn connects(script: &Script) -> usize {
    script.connects.load(Ordering::SeqCst)
}

pub(super) fn reason(hub: &Hub) -> String {
    hub.servers()[0].reason.clone().unwrap_or_default()
}

/// A scripted connector that also reports credentials (what the OAuth connector does).
pub(super) struct WithCredentials {
    pub(super) inner: ScriptedConnector,
    pub(super) credentials: watch::Sender<CredentialState>,
}

impl Connector for WithCredentials {
    fn connect(
        &self,
        events: SessionEvents,
    ) -> BoxFuture<'_, Result<Arc<dyn Session>, ConnectError>> {
        self.inner.connect(events)
    }

    fn network_transport(&self) -> &'static str {
        "tcp"
    }

    fn credentials(&self) -> Option<watch::Receiver<CredentialState>> {
        Some(self.credentials.subscribe())
    }

    fn auth_problem(&self) -> Option<String> {
        Some("the refresh token was refused; run `login`".into())
    }
}
