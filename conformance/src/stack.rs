//! The crate's own stack for one scenario server, as a service would build it: a [`Hub`]
//! supervising the server, a [`ReadinessLayer`] in front of it, and calls made through the layer.

use std::time::Duration;

use mcp_readiness::HubOptions;
use mcp_readiness::resolve::{CapabilityCache, Scope};
use mcp_readiness::rmcp::model::Tool;
use mcp_readiness::{
    Budget, Hub, Metrics, NotReady, ReadinessLayer, ServerSpec, State, ToolCall, ToolName,
};
use serde_json::{Map, Value};
use tower::{ServiceBuilder, ServiceExt as _};

/// The scenario server's name in the Hub (tools are `mcp__conformance__<tool>`).
pub(crate) const SERVER: &str = "conformance";

/// How long a call may wait for the server to become ready: the suite gives a client 30 s per
/// scenario, and its servers answer at once.
const WAIT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(25);

/// Why a call through the stack did not give a result.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The layer did not call: the server is not ready (its state, action and reason).
    NotReady(String),
    /// The call was made and failed (a JSON-RPC error, a transport error, a timeout).
    Failed(String),
}

impl CallFailure {
    /// Whether re-authorizing could fix it (the server reads `unauthenticated`).
    pub(crate) fn needs_authorization(&self) -> bool {
        match self {
            CallFailure::NotReady(why) | CallFailure::Failed(why) => {
                why.contains("unauthenticated")
            }
        }
    }
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallFailure::NotReady(why) | CallFailure::Failed(why) => f.write_str(why),
        }
    }
}

impl From<CallFailure> for String {
    fn from(failure: CallFailure) -> String {
        failure.to_string()
    }
}

/// The Hub and the layer over it, for one server.
pub(crate) struct Stack {
    hub: Hub,
    budget: Budget,
    metrics: Metrics,
}

impl Stack {
    /// Supervises `spec` (named [`SERVER`]) and starts connecting.
    pub(crate) fn start(spec: ServerSpec) -> Result<Stack, String> {
        let metrics = Metrics::new();
        let options = HubOptions::builder()
            // A scenario is one short run: no health ping of its own on the suite's server.
            .health_interval(None)
            // A service with a person behind it: what a server asks is answered.
            .server_requests(crate::answers::AcceptDefaults)
            .event_sink(metrics.clone());
        let hub = Hub::new(vec![spec], options).map_err(|e| e.to_string())?;
        hub.connect_all();
        let budget = Budget::try_new(WAIT, POLL).map_err(|e| e.to_string())?;
        Ok(Stack {
            hub,
            budget,
            metrics,
        })
    }

    /// Waits (within the budget) until the server is `ready`, then lists its tools on the live
    /// connection. A server that is not ready is an error naming its state, action and reason.
    pub(crate) async fn ready_tools(&self) -> Result<Vec<Tool>, String> {
        let cache = CapabilityCache::new(self.hub.clone()).with_budget(self.budget);
        let probe = ToolName::qualified(SERVER, "*").ok_or("the server name is not valid")?;
        let verdict = cache.resolve(&probe).await;
        // `*` is no tool: a live server that does not list it is ready as a server.
        let live =
            verdict.is_ready() || (verdict.state == State::Absent && verdict.scope == Scope::Tool);
        if !live {
            return Err(format!(
                "server `{SERVER}` is {} after {:?} (action: {}): {}",
                verdict.state,
                verdict.waited,
                verdict
                    .action()
                    .map_or("no action".to_owned(), |a| a.to_string()),
                self.reason()
            ));
        }
        let peer = self
            .hub
            .peer(SERVER)
            .ok_or_else(|| format!("server `{SERVER}` is ready but has no live connection"))?;
        peer.list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))
    }

    /// Calls `tool` with `arguments` through the readiness layer and the Hub. A result with
    /// `isError` is a result (the scenario judges it), not a failure of the client.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<bool, CallFailure> {
        let name = ToolName::qualified(SERVER, tool).ok_or_else(|| {
            CallFailure::Failed(format!("`{tool}` is not a tool name this client can call"))
        })?;
        let layer = ReadinessLayer::builder(self.hub.clone())
            .budget(self.budget)
            .metrics(self.metrics.clone())
            .build();
        let service = ServiceBuilder::new().layer(layer).service(self.hub.clone());
        let call = ToolCall::new(name).with_arguments(arguments.map_or(Value::Null, Value::Object));
        match service.oneshot(call).await {
            Ok(result) => {
                let is_error = result.is_error.unwrap_or(false);
                tracing::info!(tool, is_error, "called");
                Ok(is_error)
            }
            Err(err) => Err(match err.downcast_ref::<NotReady>() {
                Some(not_ready) => CallFailure::NotReady(format!(
                    "`{tool}` not called: {} ({}), waited {:?}: {}",
                    not_ready.state(),
                    not_ready.action(),
                    not_ready.waited(),
                    not_ready.reason().unwrap_or("no reason given")
                )),
                None => CallFailure::Failed(format!("`{tool}` failed: {err}")),
            }),
        }
    }

    /// The server's current reason, as the Hub tells it.
    fn reason(&self) -> String {
        self.hub
            .servers()
            .into_iter()
            .find(|s| &*s.name == SERVER)
            .and_then(|s| s.reason)
            .unwrap_or_else(|| "no reason given".to_owned())
    }

    /// Ends every session (the suite judges a clean close too).
    pub(crate) async fn shutdown(self) {
        self.hub.shutdown().await;
    }
}
