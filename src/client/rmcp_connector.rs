//! [`RmcpConnector`]: connections the `supervise::Hub` makes with your own rmcp client handler
//! and transport, and the classification of a failed connect that it shares with
//! `supervise::Peers`.

use std::error::Error as StdError;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::service::{ClientInitializeError, RoleClient, RunningService};
use tower::BoxError;

use super::connector::{ConnectError, Connector, Session, SessionEvents};
use super::rmcp_errors::classify_init_error;
use super::rmcp_session::RmcpSession;
use crate::secret::redact;
use crate::state::ConnectResult;

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
                    Err(error) => Err(connect_error_of(&name, &*error.into())),
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

/// A failed connect of `server`, classified with the hub's rules (see [`RmcpConnector`]); the
/// message is redacted of URL paths, credentials and bearer tokens.
pub(crate) fn connect_error_of(
    server: &str,
    error: &(dyn StdError + Send + Sync + 'static),
) -> ConnectError {
    let root: &(dyn StdError + 'static) = error;
    let chain = || std::iter::successors(Some(root), |e: &&(dyn StdError + 'static)| (*e).source());
    let result = if let Some(init) = chain().find_map(|e| e.downcast_ref::<ClientInitializeError>())
    {
        classify_init_error(init, 0)
    } else {
        match chain()
            .find_map(|e| e.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind)
        {
            Some(std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied) => {
                ConnectResult::SpawnFailed
            }
            Some(std::io::ErrorKind::ConnectionRefused) => ConnectResult::Refused,
            // A process that could not start for want of descriptors or memory.
            _ if chain()
                .find_map(|e| e.downcast_ref::<std::io::Error>())
                .and_then(crate::util::out_of_descriptors)
                .is_some() =>
            {
                ConnectResult::SpawnFailed
            }
            Some(std::io::ErrorKind::TimedOut) => ConnectResult::Timeout,
            _ => ConnectResult::Closed,
        }
    };
    let mut detail = super::reason::explain(root);
    if result == ConnectResult::SpawnFailed {
        // No MCP server ran: the process the command names could not start.
        if let Some(what) = detail.strip_prefix("the MCP server: ") {
            detail = format!("the child process could not start: {what}");
        }
    }
    // The caller's own words on top of the cause (`anyhow`'s `.context(..)`, a wrapping error):
    // kept after the root cause when they say something more and hold no type name. rmcp's own
    // wrappers ("Send message error, when send initialize request: ...") are not kept: the
    // explanation already says what they wrap.
    let top = error.to_string();
    let from_rmcp =
        chain().any(|e| e.is::<ClientInitializeError>() || e.is::<rmcp::ServiceError>());
    if !from_rmcp
        && top.chars().count() <= super::reason::REMOTE_TEXT_MAX
        && !top.contains("::")
        && !top.contains('<')
        && !detail.contains(top.as_str())
    {
        detail = format!("{detail}; {top}");
    }
    let detail = redact(&detail, &[]);
    let next = match result {
        ConnectResult::Unauthorized => "re-authorize it, then connect again",
        ConnectResult::SpawnFailed => "check that its command is installed and executable",
        ConnectResult::Refused => "check that the server is running and reachable",
        _ => "check that it speaks MCP, then connect again",
    };
    ConnectError::new(
        result,
        format!("server `{server}`: connecting failed ({detail}); {next}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_command_is_spawn_failed_and_a_closed_handshake_is_closed() {
        let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        assert_eq!(
            connect_error_of("x", &missing).result,
            ConnectResult::SpawnFailed
        );
        let closed = ClientInitializeError::ConnectionClosed("initialize response".into());
        let error = connect_error_of("x", &closed);
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
        let message = connect_error_of("x", &error).message;
        assert!(
            !message.contains("pw") && !message.contains("t0k3n") && !message.contains("abc.def"),
            "{message}"
        );
    }
}
