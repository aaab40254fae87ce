//! [`RmcpConnector`]: connections the `supervise::Hub` makes with your own rmcp client handler
//! and transport, and the classification of a failed connect that it shares with
//! `supervise::Peers`.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::service::{RoleClient, RunningService};
use tower::BoxError;

use crate::client::connector::{ConnectError, Connector, Session, SessionEvents};
use crate::client::session::RmcpSession;

type Make = Arc<
    dyn Fn(SessionEvents) -> BoxFuture<'static, Result<Arc<dyn Session>, ConnectError>>
        + Send
        + Sync,
>;

/// A [`Connector`] that makes each connection with a closure of yours: any rmcp client handler
/// (sampling, elicitation, roots, your own notification handling) over any transport.
///
/// The `supervise::Hub` supervises what it returns like its own connections: it calls the
/// closure at the first use and again after every drop (single flight, cooldown after a failure,
/// `unauthenticated` after a 401/403 without retrying), watches for drops, and hands out the
/// [`Peer`](rmcp::Peer) with `Hub::peer`.
///
/// The closure gets the connection's [`SessionEvents`]: call
/// [`SessionEvents::tools_changed`] from your handler's `on_tool_list_changed` so the hub re-reads
/// the tool list (the hub's own handler does this for you; yours has to). A failed connect is
/// classified with the hub's rules: a `ClientInitializeError` by its 401/403 challenge, closed
/// pipe or refused connection; an `std::io::Error` of kind `NotFound` / `PermissionDenied` (the
/// command could not be started) is `spawn_failed`.
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_readiness::{HubOptions, client::RmcpConnector};
/// use mcp_readiness::Hub;
/// use mcp_readiness::rmcp::ServiceExt;
/// use mcp_readiness::rmcp::transport::TokioChildProcess;
///
/// # fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let files = RmcpConnector::new("files", "pipe", |_events| async {
///     let transport = TokioChildProcess::new(tokio::process::Command::new("files-mcp"))?;
///     // Your handler here (e.g. one that answers `sampling/createMessage`); `()` is rmcp's no-op.
///     Ok::<_, Box<dyn std::error::Error + Send + Sync>>(().serve(transport).await?)
/// });
/// let hub = Hub::with_connectors(vec![("files".into(), Arc::new(files))], HubOptions::default())?;
/// # drop(hub); Ok(()) }
/// ```
pub struct RmcpConnector {
    server: Arc<str>,
    transport: &'static str,
    make: Make,
}

impl RmcpConnector {
    /// A connector for `server` whose connections `make` opens; `transport` is the OpenTelemetry
    /// `network.transport` of the calls' spans (`pipe` for stdio, `tcp` for HTTP).
    pub fn new<S, E, F, Fut>(server: impl Into<Arc<str>>, transport: &'static str, make: F) -> Self
    where
        S: rmcp::Service<RoleClient>,
        E: Into<BoxError>,
        F: Fn(SessionEvents) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<RunningService<RoleClient, S>, E>> + Send + 'static,
    {
        let server = server.into();
        let name = server.clone();
        let make: Make = Arc::new(move |events| {
            let connecting = make(events.clone());
            let name = name.clone();
            Box::pin(async move {
                match connecting.await {
                    Ok(running) => Ok(Arc::new(RmcpSession::start(running, None, events, None))
                        as Arc<dyn Session>),
                    Err(error) => Err(ConnectError::classify(&name, &*error.into())),
                }
            })
        });
        RmcpConnector {
            server,
            transport,
            make,
        }
    }
}

impl std::fmt::Debug for RmcpConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RmcpConnector")
            .field("server", &self.server)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl Connector for RmcpConnector {
    fn connect(
        &self,
        events: SessionEvents,
    ) -> BoxFuture<'_, Result<Arc<dyn Session>, ConnectError>> {
        (self.make)(events)
    }

    fn network_transport(&self) -> &'static str {
        self.transport
    }
}

#[cfg(test)]
mod tests {
    use crate::client::session::rmcp_connector::*;
    use crate::state::ConnectResult;
    use rmcp::service::ClientInitializeError;

    #[test]
    fn a_missing_command_is_spawn_failed_and_a_closed_handshake_is_closed() {
        let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        assert_eq!(
            ConnectError::classify("x", &missing).result,
            ConnectResult::SpawnFailed
        );
        let closed = ClientInitializeError::ConnectionClosed("initialize response".into());
        let error = ConnectError::classify("x", &closed);
        assert_eq!(error.result, ConnectResult::Closed);
        assert!(
            error.message.starts_with(
                "server `x`: connecting failed (the MCP server: the connection closed"
            )
        );
    }

    #[test]
    fn credentials_in_a_failure_message_are_redacted() {
        let error = std::io::Error::other("GET https://bob:pw@x.test/t0k3n/mcp: Bearer abc.def");
        let message = ConnectError::classify("x", &error).message;
        assert!(
            !message.contains("pw") && !message.contains("t0k3n") && !message.contains("abc.def"),
            "{message}"
        );
    }
}
