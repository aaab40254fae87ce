//! One rmcp session: the [`Session`] behind every rmcp connector ([`RmcpSession`]: an rmcp client
//! [`Peer`], a task that awaits rmcp's end of service or, for stdio, the child's own exit (drop
//! detection without waiting for a call), and for stdio the child's process group, killed when the
//! session ends), and what runs inside one:
//!
//! - `handler.rs`: the rmcp client handler and who answers what a server asks; `server_requests.rs`
//!   the hook for those questions; `quiet.rs` the notifications dropped before rmcp sees them;
//! - `task.rs`: calls answered with a task; `tool_pages.rs`: `tools/list` across pages, bounded;
//! - `peer_info.rs`: what the handshake said of the server; `session_id_slot.rs`: an HTTP
//!   session's id; `child_guard.rs`: the child process a stdio session owns;
//! - `rmcp_connector.rs`: connections made with your own rmcp client handler and transport.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, DiscoverRequest, DiscoverRequestParams,
    PingRequest, ServerNotification, SubscriptionFilter, Tool,
};
use rmcp::service::{QuitReason, RoleClient, RunningService, SubscriptionEnd};
use rmcp::{Peer, ServiceError};
use tokio::sync::{Notify, watch};

pub(crate) mod child_guard;
pub(crate) mod handler;
pub(crate) mod peer_info;
pub(crate) mod quiet;
pub(crate) mod rmcp_connector;
pub(crate) mod server_requests;
pub(crate) mod session_id_slot;
pub(crate) mod task;
pub(crate) mod tool_pages;

use crate::client::connector::{Session, SessionEvents};
use crate::state::ServerIdentity;
use child_guard::ChildGuard;
use handler::Answerer;
use session_id_slot::SessionIdSlot;

/// A live rmcp client connection.
pub(crate) struct RmcpSession {
    peer: Peer<RoleClient>,
    ended: watch::Receiver<Option<Arc<str>>>,
    stop: Arc<Notify>,
    child: Option<ChildGuard>,
    identity: Option<ServerIdentity>,
    /// Whether the lifecycle came from `initialize` (before 2026-07-28): `ping` exists.
    has_initialize: bool,
    /// `server.address` and `server.port` of an HTTP server (OpenTelemetry MCP conventions).
    endpoint: Option<(String, u16)>,
    /// The `Mcp-Session-Id` of an HTTP session before 2026-07-28 (`mcp.session.id`).
    session_id: Option<SessionIdSlot>,
    /// The leaf certificate's notAfter of an HTTPS connection, noted at its TLS handshake.
    tls_certificate_expiry: Option<i64>,
    /// Who answers an MRTR `input_required` result (none: the call ends `input_required`).
    answerer: Option<Answerer>,
}

impl std::fmt::Debug for RmcpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RmcpSession")
            .field("pid", &self.child.as_ref().and_then(ChildGuard::pid))
            .finish()
    }
}

impl RmcpSession {
    /// Takes over a running rmcp client (with any client handler); a task awaits its end and
    /// records why it ended.
    ///
    /// On a 2026-07-28 session a second task holds a `subscriptions/listen` stream for
    /// `notifications/tools/list_changed` (older sessions get the notification through the
    /// client handler: [`SupervisorClient`] for the Hub's own connections).
    pub(crate) fn start<S: rmcp::Service<RoleClient>>(
        running: RunningService<RoleClient, S>,
        child: Option<ChildGuard>,
        events: SessionEvents,
        endpoint: Option<(String, u16)>,
    ) -> Self {
        let peer = running.peer().clone();
        let info = peer.peer_info();
        let identity = info.as_deref().map(peer_info::identity);
        let has_initialize = identity
            .as_ref()
            .is_none_or(|i| peer_info::has_initialize(&i.protocol_version));
        let (tx, ended) = watch::channel(None);
        let stop = Arc::new(Notify::new());
        let stop_task = stop.clone();
        // A stdio child's own exit ends the session even while something else (a helper it
        // started in the background) keeps its stdout open.
        let child_exit = child.as_ref().map(ChildGuard::exited);
        let has_child = child_exit.is_some();
        tokio::spawn(async move {
            let child_exit = async move {
                match child_exit {
                    Some(exited) => exited.await,
                    None => std::future::pending().await,
                }
            };
            tokio::pin!(child_exit);
            let reason: Arc<str> = tokio::select! {
                how = &mut child_exit => format!("the server process ended: {how}").into(),
                quit = running.waiting() => match quit {
                    // A child's stdout closes as it dies: its exit status, when it follows at
                    // once, says how (an exit code, a kill) where "closed" says nothing.
                    Ok(QuitReason::Closed) if has_child => {
                        match tokio::time::timeout(EXIT_STATUS_GRACE, &mut child_exit).await {
                            Ok(how) => format!("the server process ended: {how}").into(),
                            Err(_) => "the server closed the connection".into(),
                        }
                    }
                    Ok(QuitReason::Closed) => "the server closed the connection".into(),
                    Ok(QuitReason::Cancelled) => "the connection was cancelled".into(),
                    Ok(_) | Err(_) => "the connection task ended unexpectedly".into(),
                },
                // Dropping the `waiting` future drops the RunningService, which cancels it.
                _ = stop_task.notified() => "the connection was shut down".into(),
            };
            let _ = tx.send(Some(reason));
        });
        if !has_initialize {
            tokio::spawn(listen_for_tool_changes(peer.clone(), events, ended.clone()));
        }
        RmcpSession {
            peer,
            ended,
            stop,
            child,
            identity,
            has_initialize,
            endpoint,
            session_id: None,
            tls_certificate_expiry: None,
            answerer: None,
        }
    }

    /// Answers `input_required` results of calls through `answerer`.
    pub(crate) fn answered_by(mut self, answerer: Option<Answerer>) -> Self {
        self.answerer = answerer;
        self
    }

    /// Reads the session id from `slot` (an HTTP session's; see [`SessionIdSlot`]).
    /// The notAfter of the leaf certificate the connection was made with.
    pub(crate) fn with_tls_certificate_expiry(mut self, not_after: Option<i64>) -> Self {
        self.tls_certificate_expiry = not_after;
        self
    }

    pub(crate) fn with_session_id(mut self, slot: SessionIdSlot) -> Self {
        self.session_id = Some(slot);
        self
    }
}

/// [`Session::closed`] of a session whose end `ended` tells: the reason it is given, or `gone`
/// when the sender is dropped without one.
pub(crate) fn closed_reason(
    mut ended: watch::Receiver<Option<Arc<str>>>,
    gone: &'static str,
) -> BoxFuture<'static, Arc<str>> {
    Box::pin(async move {
        match ended.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_else(|| gone.into()),
            Err(_) => gone.into(),
        }
    })
}

/// How long a stdio session whose pipe closed waits for its child's exit status, to name it.
const EXIT_STATUS_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// How many times a `subscriptions/listen` stream that the server ended gracefully (or that lagged)
/// is re-opened before the session gives up on it; health pings still run.
const LISTEN_REOPENS: usize = 5;

/// Holds a `subscriptions/listen` stream for tool-list changes on a 2026-07-28 session and calls
/// `tools_changed` for each `notifications/tools/list_changed`. Ends with the session.
async fn listen_for_tool_changes(
    peer: Peer<RoleClient>,
    events: SessionEvents,
    mut ended: watch::Receiver<Option<Arc<str>>>,
) {
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    for _ in 0..LISTEN_REOPENS {
        let opened = tokio::select! {
            opened = peer.listen(filter.clone()) => opened,
            _ = ended.wait_for(Option::is_some) => return,
        };
        let mut subscription = match opened {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::debug!("subscriptions/listen refused: {e}");
                return;
            }
        };
        loop {
            let next = tokio::select! {
                next = subscription.next() => next,
                _ = ended.wait_for(Option::is_some) => return,
            };
            match next {
                Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                    events.tools_changed();
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!("subscriptions/listen stream failed: {e}");
                    return;
                }
            }
        }
        match subscription.end() {
            // A lagged stream may have dropped a change: re-read the list, then re-open.
            Some(SubscriptionEnd::Lagged { .. }) => events.tools_changed(),
            Some(SubscriptionEnd::Graceful(_)) => {}
            // The transport closed or someone cancelled: the drop watch takes over.
            _ => return,
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

impl Session for RmcpSession {
    fn call_tool(
        &self,
        params: CallToolRequestParams,
    ) -> BoxFuture<'_, Result<CallToolResult, ServiceError>> {
        // The call's span (the layer's `tools/call` span, current while the call is polled)
        // learns what only the session knows; the request id is recorded when it is sent.
        let span = tracing::Span::current();
        if let Some(identity) = &self.identity {
            span.record("mcp.protocol.version", identity.protocol_version.as_str());
        }
        if let Some((address, port)) = &self.endpoint {
            span.record("server.address", address.as_str());
            span.record("server.port", i64::from(*port));
        }
        if let Some(id) = self.session_id() {
            span.record("mcp.session.id", &*id);
        }
        Box::pin(crate::client::session::task::call_tool(
            &self.peer,
            params,
            self.answerer.as_ref(),
        ))
    }

    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ServiceError>> {
        Box::pin(async move {
            // A list read after a change notification must not come from rmcp's response cache
            // (a server's `ttlMs` hint would otherwise hide the change); pages are bounded.
            self.peer.clear_response_cache().await;
            crate::client::session::tool_pages::list_tools_bounded(&self.peer).await
        })
    }

    fn ping(&self) -> BoxFuture<'_, Result<(), ServiceError>> {
        Box::pin(async move {
            let request = if self.has_initialize {
                ClientRequest::PingRequest(PingRequest::default())
            } else {
                // 2026-07-28 has no `ping`: `server/discover` is the cheapest request it has (sent
                // directly, so rmcp's discover cache cannot answer for a frozen server).
                ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams {}))
            };
            self.peer.send_request(request).await.map(|_| ())
        })
    }

    fn identity(&self) -> Option<ServerIdentity> {
        self.identity.clone()
    }

    fn session_id(&self) -> Option<Arc<str>> {
        self.session_id.as_ref().and_then(SessionIdSlot::get)
    }

    fn tls_certificate_expiry(&self) -> Option<i64> {
        self.tls_certificate_expiry
    }

    fn is_closed(&self) -> bool {
        self.peer.is_transport_closed() || self.ended.borrow().is_some()
    }

    fn peer(&self) -> Option<Peer<RoleClient>> {
        Some(self.peer.clone())
    }

    fn closed(&self) -> BoxFuture<'static, Arc<str>> {
        closed_reason(self.ended.clone(), "the connection ended")
    }

    fn shutdown(&self) {
        self.stop.notify_one();
        if let Some(child) = &self.child {
            child.kill();
        }
    }
}

impl Drop for RmcpSession {
    fn drop(&mut self) {
        self.shutdown();
    }
}
