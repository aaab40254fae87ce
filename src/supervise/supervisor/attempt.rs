//! The attempt runner: one connection attempt (connect, `after_connect`, first tool list) inside
//! the connect timeout, in a task of its own, with its `initialize` span; its outcome is recorded
//! in the supervisor by `Supervisor::finish_attempt`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::FutureExt as _;
use tokio::time::Instant;

use super::Supervisor;
use super::coalesce::Coalesce;
use super::conn_state::AttemptOutcome;
use crate::client::connector::{ConnectError, Connector, Renewal, SessionEvents};
use crate::client::reasons::reason::explain;
use crate::client::reasons::rmcp_errors::classify_request_error;
use crate::client::session::tool_pages::unbounded_reason;
use crate::state::{ConnectResult, ConnectionEvent};
use crate::supervise::hub::shared::HubShared;
use crate::util::{Human, MutexExt as _};

/// How long after the connect timeout the supervisor gives up on a connector that has not
/// returned (the rmcp connectors time out on their own at the connect timeout).
const CONNECTOR_GRACE: Duration = Duration::from_millis(250);

/// One connection attempt: connect, `after_connect`, first tool list, all inside the connect
/// timeout. Records the outcome in the supervisor (its `ConnectAttempt` first).
pub(super) async fn run_attempt(
    weak: Weak<Supervisor>,
    connector: Arc<dyn Connector>,
    shared: Arc<HubShared>,
    name: Arc<str>,
    span: tracing::Span,
) -> AttemptOutcome {
    let started = Instant::now();
    let events = {
        let weak = weak.clone();
        // A flood of `tools/list_changed` runs at most one refresh at a time, plus one after it.
        let refresh = Arc::new(Coalesce::default());
        let reopened = {
            let shared = Arc::downgrade(&shared);
            let server = name.clone();
            move || {
                if let Some(shared) = shared.upgrade() {
                    shared.events.emit(vec![ConnectionEvent::StreamReopened {
                        server: server.clone(),
                    }]);
                }
            }
        };
        SessionEvents::new(move || {
            if refresh.request() {
                match weak.upgrade() {
                    Some(supervisor) => supervisor.refresh_tools(refresh.clone()),
                    None => refresh.reset(),
                }
            }
        })
        .on_stream_reopened(reopened)
    };
    let timeout = shared.options.connect_timeout;
    let backstop = crate::util::later(started, timeout.saturating_add(CONNECTOR_GRACE));
    let timed_out = || {
        ConnectError::new(
            ConnectResult::Timeout,
            format!(
                "server `{name}` was not ready within the connect timeout of {}; check that it \
                 starts, or raise the timeout",
                Human(timeout)
            ),
        )
    };
    let work = async {
        // The connector applies the connect timeout itself (so it can classify, e.g. a banner on
        // stdout as `protocol_error`); the backstop catches connectors that never return.
        let session = tokio::time::timeout_at(backstop, connector.connect(events))
            .await
            .map_err(|_| timed_out())??;
        let rest = async {
            connector.after_connect(session.clone()).await?;
            session.list_tools().await.map_err(|e| {
                if let Some(reason) = unbounded_reason(&e) {
                    return ConnectError::new(
                        ConnectResult::ProtocolError,
                        format!("server `{name}`: {reason}"),
                    );
                }
                let result = classify_request_error(&e);
                ConnectError::new(
                    result,
                    format!(
                        "server `{name}`: listing its tools failed: {}",
                        shared.redact(&explain(&e))
                    ),
                )
            })
        };
        let tools = tokio::time::timeout_at(backstop, rest)
            .await
            .map_err(|_| timed_out())??;
        let renewal = match shared.options.renew_before {
            Some(at) => {
                let renewed = tokio::time::timeout_at(
                    backstop,
                    connector.renew_credentials_expiring_before(at),
                )
                .await
                .map_err(|_| timed_out())
                .and_then(|renewed| renewed);
                match renewed {
                    Ok(renewal) => renewal,
                    Err(e) => {
                        // Refused: the credentials will not last until `at`; this connection
                        // is not kept.
                        session.shutdown();
                        return Err(e);
                    }
                }
            }
            None => Renewal::NotDue,
        };
        Ok::<_, ConnectError>((
            session,
            tools.into_iter().map(|t| t.name.into_owned()).collect(),
            renewal,
        ))
    };
    // Defence in depth: no configured secret leaves in a reason, whatever the connector said.
    // A panicking connector must not leave the server `connecting` forever.
    let result = std::panic::AssertUnwindSafe(work)
        .catch_unwind()
        .await
        .unwrap_or_else(|_| {
            Err(ConnectError::new(
                ConnectResult::ProtocolError,
                format!("server `{name}`: the connector panicked while connecting"),
            ))
        });
    let result = result.map_err(|mut e: ConnectError| {
        e.message = shared.redact(&e.message);
        e
    });
    let result = result.map(|(session, tools, renewal)| {
        note_renewal(&weak, &name, renewal, |reason| shared.redact(reason));
        (session, tools)
    });
    let connect_result = result
        .as_ref()
        .map_or_else(|e| e.result, |_| ConnectResult::Ok);
    record_initialize(&span, connect_result);
    drop(span);
    match weak.upgrade() {
        Some(supervisor) => supervisor.finish_attempt(result, started.elapsed()),
        None => {
            shared.events.emit(vec![ConnectionEvent::ConnectAttempt {
                server: name.clone(),
                result: connect_result,
                duration: started.elapsed(),
            }]);
            if let Ok((session, _)) = &result {
                session.shutdown();
            }
            Err(ConnectError::new(
                ConnectResult::Closed,
                format!("server `{name}` was removed while connecting"),
            ))
        }
    }
}

/// Keeps what the renewal ahead of the next run found ([`Hub::renewals`](crate::supervise::Hub::renewals)),
/// and says it in the log: a renewal that could not be asked is a warning (the token works now,
/// nothing proves it renews before the next run).
fn note_renewal(
    weak: &Weak<Supervisor>,
    name: &str,
    renewal: Renewal,
    redact: impl Fn(&str) -> String,
) {
    let renewal = match renewal {
        Renewal::NotDue => return,
        Renewal::Renewed { expires_at } => {
            tracing::info!(
                server = %name,
                expires_at = expires_at.map(|at| humantime::format_rfc3339_seconds(at).to_string()),
                "renewed the access token ahead of the next run"
            );
            Renewal::Renewed { expires_at }
        }
        Renewal::NotRenewed { reason } => {
            let reason = redact(&reason);
            tracing::warn!(server = %name, reason = %reason, "the access token could not be renewed ahead of the next run");
            Renewal::NotRenewed { reason }
        }
    };
    if let Some(supervisor) = weak.upgrade() {
        *supervisor.renewal.lock_unpoisoned() = Some(renewal);
    }
}

/// The `target` of the connection-attempt spans.
pub(crate) const CONNECT_SPAN_TARGET: &str = "mcp_readiness::connect";

/// The span of one connection attempt, named `initialize` as the OpenTelemetry MCP conventions
/// name the handshake: kind client, `mcp.method.name`, `network.transport`, the server, and (when
/// it ends) `mcp_readiness.result` and, on failure, `error.type`.
pub(super) fn initialize_span(server: &str, transport: &'static str) -> tracing::Span {
    tracing::info_span!(
        target: CONNECT_SPAN_TARGET,
        parent: None,
        "initialize",
        otel.name = "initialize",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        mcp.method.name = "initialize",
        network.transport = transport,
        mcp_readiness.server = server,
        mcp_readiness.result = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// Records how an attempt ended on its [`initialize_span`].
fn record_initialize(span: &tracing::Span, result: ConnectResult) {
    span.record("mcp_readiness.result", result.as_str());
    if result != ConnectResult::Ok {
        span.record("error.type", result.as_str());
        span.record("otel.status_code", "ERROR");
    }
}
