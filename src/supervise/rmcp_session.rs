//! The [`Session`] behind the rmcp connectors: an rmcp client [`Peer`], a task that awaits rmcp's
//! end of service (drop detection without waiting for a call), and for stdio the child's process
//! group, killed when the session ends.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, ClientRequest, Implementation,
    PingRequest, Tool,
};
use rmcp::service::{NotificationContext, QuitReason, RoleClient, RunningService};
use rmcp::{ClientHandler, Peer, ServiceError};
use tokio::sync::{Notify, watch};

use super::connector::{Session, SessionEvents};

/// The rmcp client handler: forwards `notifications/tools/list_changed` to the supervisor.
#[derive(Debug, Clone)]
pub(crate) struct SupervisorClient {
    events: SessionEvents,
}

impl SupervisorClient {
    pub(crate) fn new(events: SessionEvents) -> Self {
        SupervisorClient { events }
    }
}

impl ClientHandler for SupervisorClient {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.events.tools_changed();
    }

    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.client_info = Implementation::new("mcp-readiness", env!("CARGO_PKG_VERSION"));
        config
    }
}

/// A stdio child in its own process group. Dropping it (or [`ChildGuard::kill`]) sends `SIGKILL` to
/// the whole group, synchronously, so no grandchild survives either.
#[derive(Debug)]
pub(crate) struct ChildGuard {
    #[cfg(unix)]
    child: std::sync::Mutex<Option<Box<dyn process_wrap::tokio::ChildWrapper>>>,
    pid: Option<u32>,
}

#[cfg(unix)]
const SIGKILL: i32 = 9;

impl ChildGuard {
    #[cfg(unix)]
    pub(crate) fn new(child: Box<dyn process_wrap::tokio::ChildWrapper>) -> Self {
        let pid = child.id();
        ChildGuard {
            child: std::sync::Mutex::new(Some(child)),
            pid,
        }
    }

    /// The child's pid (also its process group id).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Kills the child's whole process group now. Idempotent.
    pub(crate) fn kill(&self) {
        #[cfg(unix)]
        {
            let mut slot = self.child.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(mut child) = slot.take() {
                // Reap the leader if it already exited; the group may still have members.
                let _ = child.try_wait();
                if let Err(e) = child.signal(SIGKILL) {
                    tracing::trace!(pid = ?self.pid, "kill process group: {e}");
                }
                // Dropping the tokio child hands it to tokio's orphan reaper.
                drop(child);
            }
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A live rmcp client connection.
pub(crate) struct RmcpSession {
    peer: Peer<RoleClient>,
    ended: watch::Receiver<Option<Arc<str>>>,
    stop: Arc<Notify>,
    child: Option<ChildGuard>,
}

impl std::fmt::Debug for RmcpSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RmcpSession")
            .field("pid", &self.child.as_ref().and_then(ChildGuard::pid))
            .finish()
    }
}

impl RmcpSession {
    /// Takes over a running rmcp client; a task awaits its end and records why it ended.
    pub(crate) fn start(
        running: RunningService<RoleClient, SupervisorClient>,
        child: Option<ChildGuard>,
    ) -> Self {
        let peer = running.peer().clone();
        let (tx, ended) = watch::channel(None);
        let stop = Arc::new(Notify::new());
        let stop_task = stop.clone();
        tokio::spawn(async move {
            let reason: Arc<str> = tokio::select! {
                quit = running.waiting() => match quit {
                    Ok(QuitReason::Closed) => "the server closed the connection".into(),
                    Ok(QuitReason::Cancelled) => "the connection was cancelled".into(),
                    Ok(_) | Err(_) => "the connection task ended unexpectedly".into(),
                },
                // Dropping the `waiting` future drops the RunningService, which cancels it.
                _ = stop_task.notified() => "the connection was shut down".into(),
            };
            let _ = tx.send(Some(reason));
        });
        RmcpSession {
            peer,
            ended,
            stop,
            child,
        }
    }
}

impl Session for RmcpSession {
    fn call_tool(
        &self,
        params: CallToolRequestParams,
    ) -> BoxFuture<'_, Result<CallToolResult, ServiceError>> {
        Box::pin(self.peer.call_tool(params))
    }

    fn list_tools(&self) -> BoxFuture<'_, Result<Vec<Tool>, ServiceError>> {
        Box::pin(super::tool_pages::list_tools_bounded(&self.peer))
    }

    fn ping(&self) -> BoxFuture<'_, Result<(), ServiceError>> {
        Box::pin(async move {
            self.peer
                .send_request(ClientRequest::PingRequest(PingRequest::default()))
                .await
                .map(|_| ())
        })
    }

    fn is_closed(&self) -> bool {
        self.peer.is_transport_closed() || self.ended.borrow().is_some()
    }

    fn closed(&self) -> BoxFuture<'static, Arc<str>> {
        let mut ended = self.ended.clone();
        Box::pin(async move {
            loop {
                if let Some(reason) = ended.borrow_and_update().clone() {
                    return reason;
                }
                if ended.changed().await.is_err() {
                    return "the connection ended".into();
                }
            }
        })
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
