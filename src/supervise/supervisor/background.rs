//! A supervisor's background tasks: the drop watch, the health ping, the tool-list refresh and
//! the timer that ends a cooldown or a crash-loop backoff. Each holds only a weak reference, so a removed server's tasks end, and
//! each changes the machine only through the supervisor's transitions.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::ServiceError;
use tokio::time::Instant;

use super::Supervisor;
use super::coalesce::Coalesce;
use super::conn_state::ConnState;
use crate::client::connector::Session;
use crate::client::reasons::reason::explain;
use crate::client::reasons::rmcp_errors::is_auth_failure;
use crate::client::session::peer_info::has_initialize;
use crate::client::session::tool_pages::unbounded_reason;
use crate::util::Human;

impl Supervisor {
    /// Drop detection without waiting for a call: a task awaits the end of the connection and
    /// flips the state the moment it happens.
    pub(super) fn watch_for_drop(self: &Arc<Self>, generation: u64, session: &Arc<dyn Session>) {
        let closed = session.closed();
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            let why = closed.await;
            if let Some(supervisor) = weak.upgrade() {
                supervisor.connection_lost(generation, &why);
            }
        });
    }

    /// Periodic liveness ping on the connection of `generation` (`ping` before 2026-07-28,
    /// `server/discover` on 2026-07-28 sessions, see `Session::ping`); a failed or unanswered
    /// ping marks it lost. Rejected credentials drop the session for one fresh handshake with the
    /// same credentials, which decides whether the server is unauthenticated. A frozen server is
    /// noticed at most one interval plus the ping timeout after it froze (two ping timeouts for a
    /// server that never answered `ping`, below).
    ///
    /// A server that serves requests but ignores `ping` (some do: `ping` is optional to answer in
    /// practice, and an unanswered one looks like a frozen server) is not dropped: an unanswered
    /// ping is followed by `tools/list`, which every server answers, within the same timeout. An
    /// answer proves the server alive, and from then on this connection is pinged with
    /// `tools/list`.
    pub(super) fn spawn_health(self: &Arc<Self>, generation: u64, interval: Duration) {
        let weak = Arc::downgrade(self);
        let timeout = self.shared.options.ping_timeout;
        tokio::spawn(async move {
            let mut ticker =
                tokio::time::interval_at(crate::util::later(Instant::now(), interval), interval);
            // Set once `ping` went unanswered while `tools/list` was answered.
            let mut ping_ignored = false;
            loop {
                ticker.tick().await;
                let Some(session) = weak.upgrade().and_then(|s| s.session_of(generation)) else {
                    return;
                };
                let stateless = session
                    .identity()
                    .is_some_and(|identity| !has_initialize(&identity.protocol_version));
                let mut outcome = if ping_ignored {
                    tokio::time::timeout(timeout, session.list_tools())
                        .await
                        .map(|listed| listed.map(drop))
                } else {
                    tokio::time::timeout(timeout, session.ping()).await
                };
                if outcome.is_err() && !ping_ignored {
                    // Unanswered: frozen, or alive and ignoring `ping`. Ask what it must answer.
                    let listed = tokio::time::timeout(timeout, session.list_tools()).await;
                    if matches!(listed, Ok(Ok(_))) {
                        tracing::debug!(
                            generation,
                            "the server ignores ping and answers tools/list; probing with tools/list"
                        );
                        ping_ignored = true;
                    }
                    outcome = listed.map(|listed| listed.map(drop));
                }
                drop(session);
                let Some(supervisor) = weak.upgrade() else {
                    return;
                };
                match outcome {
                    // Any answer, even a JSON-RPC error, proves the server is alive. A
                    // 2026-07-28 connection has no session that a replaced or upgraded server
                    // would end, and no tool-list notification unless it subscribed: its tool
                    // list is read again with each ping, so a server now offering other tools
                    // is seen within one interval.
                    Ok(Ok(())) | Ok(Err(ServiceError::McpError(_))) => {
                        if stateless {
                            drop(supervisor);
                            Self::refresh_tools_once(&weak, timeout).await;
                        }
                    }
                    Ok(Err(e)) if is_auth_failure(&e) => {
                        drop(supervisor.credentials_rejected(generation, "a health ping", false));
                        supervisor.connect_now();
                        return;
                    }
                    Ok(Err(e)) => {
                        let why = format!(
                            "health ping failed: {}",
                            supervisor.shared.redact(&explain(&e))
                        );
                        supervisor.end_connection(generation, &why);
                        return;
                    }
                    Err(_) => {
                        let why = format!(
                            "no answer to the health ping within {}, nor to tools/list",
                            Human(timeout)
                        );
                        supervisor.end_connection(generation, &why);
                        return;
                    }
                }
            }
        });
    }

    /// Re-reads the tool list after `notifications/tools/list_changed`: one task per connection
    /// at a time, which reads the list again once if more notifications arrived meanwhile.
    pub(crate) fn refresh_tools(self: &Arc<Self>, latch: Arc<Coalesce>) {
        let weak = Arc::downgrade(self);
        let timeout = self.shared.options.call_timeout;
        tokio::spawn(async move {
            loop {
                Self::refresh_tools_once(&weak, timeout).await;
                if !latch.again() {
                    return;
                }
            }
        });
    }

    async fn refresh_tools_once(weak: &Weak<Self>, timeout: Duration) {
        let Some(supervisor) = weak.upgrade() else {
            return;
        };
        let current = supervisor.read(|machine| match &machine.state {
            ConnState::Connected {
                generation,
                session,
                ..
            } => Some((*generation, session.clone())),
            _ => None,
        });
        drop(supervisor);
        let Some((generation, session)) = current else {
            return;
        };
        let tools = match tokio::time::timeout(timeout, session.list_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(e)) => {
                if let Some(reason) = unbounded_reason(&e) {
                    tracing::warn!(target: "mcp_readiness::supervise", "tool list kept: {reason}");
                }
                return;
            }
            Err(_) => return,
        };
        let Some(supervisor) = weak.upgrade() else {
            return;
        };
        let names: Vec<String> = tools.into_iter().map(|t| t.name.into_owned()).collect();
        supervisor.update(|machine| machine.replace_tools(generation, names));
    }

    /// Calls [`Supervisor::backoff_timer_fired`] once `delay` (a cooldown or a crash-loop
    /// backoff that starts now) is over.
    pub(super) fn wake_after(self: &Arc<Self>, delay: Duration) {
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Some(supervisor) = weak.upgrade() {
                supervisor.backoff_timer_fired();
            }
        });
    }
}
