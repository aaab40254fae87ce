//! How the supervisor's [`ConnectionEvent`]s drive the server series.

use super::recorder::Metrics;
use crate::state::{ConnectionEvent, EventSink, State};
use crate::util::RwLockExt as _;

/// When each event fires, what it records:
///
/// | event | series |
/// |---|---|
/// | `ServerAdded` | all four `mcp_readiness_server_state` series (one-hot on the initial state), the state-change time, and the zeroed connect (and `connect_duration_seconds{result="ok"}`), reconnect, cooldown, tools and four state-change series |
/// | `StateChanged` | one-hot moves to `to` (a scrape never sees two states or none); state-change time = now; `mcp_readiness_server_state_changes_total{state=to}` + 1; `mcp_readiness_server_tools` = 0 when `to` is not `ready` |
/// | `ConnectAttempt` | `mcp_readiness_connects_total{result}` + 1, `mcp_readiness_connect_duration_seconds{result}` observes the duration |
/// | `Reconnected` | `mcp_readiness_reconnects_total` + 1 |
/// | `StreamReopened` | `mcp_readiness_stream_reopens_total` + 1 |
/// | `CooldownRejection` | `mcp_readiness_cooldown_rejections_total` + 1 |
/// | `ToolsChanged` | `mcp_readiness_server_tools` = count |
/// | `Endpoint` | `mcp_readiness_tls_certificate_expiry_timestamp_seconds` = the connection's leaf certificate's notAfter (no series when it is not over TLS); over OTLP, `network.transport`, `server.address` and `server.port` of the server's later `mcp.client.operation.duration` series |
/// | `Handshake` | `mcp_readiness_server_info{protocol_version, server_name, server_version}` = 1; the server's earlier series goes; over OTLP, `mcp.protocol.version` of its later operation series |
/// | `CredentialsExpire` | `mcp_readiness_credential_expiry_timestamp_seconds{credential, renewable}`: one series per known expiry; the server's others go away |
/// | `ReasonChanged` | no series: the status page's reason |
/// | `NextAttempt` | `mcp_readiness_server_next_attempt_timestamp_seconds` = now + `after`; the series goes away with `None` |
/// | `ServerRemoved` | every series labelled with the server goes away, tool-labelled ones included |
///
/// Every event also updates the server's row of the status page (the exporter's `/status`).
///
/// After `ServerRemoved`, the server's other events are ignored until a `ServerAdded` names it
/// again: a removed server's late events cannot bring its series back.
///
/// Events are handled synchronously and cheaply (atomic updates; a lock only the first time a
/// series is created).
impl EventSink for Metrics {
    fn on_event(&self, event: &ConnectionEvent) {
        // A removed server's late events (its last connection ending) must not bring its
        // series back; a `ServerAdded` for the name lifts that.
        if !matches!(
            event,
            ConnectionEvent::ServerAdded { .. } | ConnectionEvent::ServerRemoved { .. }
        ) && self.was_removed(event.server())
        {
            return;
        }
        self.inner.board.apply(event, self.now_unix_seconds());
        match event {
            ConnectionEvent::ServerAdded { server, state } => {
                self.forget_removed(server);
                let handle = self.configured_server(server);
                handle.ensure_supervised();
                handle.set_state(*state, self.now_unix_seconds());
            }
            ConnectionEvent::StateChanged {
                server, from, to, ..
            } => {
                let handle = self.configured_server(server);
                handle.set_state(*to, self.now_unix_seconds());
                if from != to {
                    handle.state_entered(*to);
                }
                // A server that is not ready offers no tools now (the status page's rule too);
                // its next live connection lists them again.
                if *to != State::Ready {
                    handle.set_tools(0);
                }
            }
            ConnectionEvent::ConnectAttempt {
                server,
                result,
                duration,
            } => self
                .configured_server(server)
                .observe_connect(*result, *duration),
            ConnectionEvent::Reconnected { server } => self.configured_server(server).reconnected(),
            ConnectionEvent::StreamReopened { server } => {
                self.configured_server(server).stream_reopened()
            }
            ConnectionEvent::CooldownRejection { server } => {
                self.configured_server(server).cooldown_rejection()
            }
            // The status page's reason only (the board above); no series.
            ConnectionEvent::ReasonChanged { .. } => {}
            ConnectionEvent::ToolsChanged { server, count } => {
                self.configured_server(server).set_tools(*count)
            }
            ConnectionEvent::Endpoint { server, endpoint } => {
                self.configured_server(server).set_endpoint(endpoint);
                self.set_tls_certificate_expiry(server, endpoint.tls_certificate_expiry);
            }
            ConnectionEvent::Handshake { server, identity } => {
                self.set_server_info(server, identity);
                self.configured_server(server)
                    .set_protocol_version(&identity.protocol_version);
            }
            ConnectionEvent::ServerRemoved { server } => {
                self.remember_removed(server);
                self.remove_server(server);
            }
            ConnectionEvent::NextAttempt { server, after } => self
                .configured_server(server)
                .set_next_attempt(after.map(|after| self.now_unix_seconds() + after.as_secs_f64())),
            ConnectionEvent::CredentialsExpire { server, expiries } => self
                .configured_server(server)
                .set_credential_expiries(expiries),
        }
    }
}

impl Metrics {
    /// One `mcp_readiness_server_info` series per server: the last handshake's. Swapped under the
    /// families' gate, so a scrape never sees two or none.
    fn set_server_info(&self, server: &str, identity: &crate::state::ServerIdentity) {
        let fam = &self.inner.fam;
        let _gate = fam.gate.write_unpoisoned();
        fam.server_info
            .remove_where(super::names::LABEL_SERVER, server);
        fam.set_server_info(server, identity);
    }

    /// `mcp_readiness_tls_certificate_expiry_timestamp_seconds` of `server`: the certificate of
    /// its newest connection, or no series when that connection was not over TLS.
    fn set_tls_certificate_expiry(&self, server: &str, not_after: Option<i64>) {
        let family = &self.inner.fam.tls_certificate_expiry;
        match not_after {
            // Unix seconds of a certificate fit an f64 exactly (well below 2^53).
            #[allow(clippy::cast_precision_loss)]
            Some(not_after) => family.get_or_create(&[server]).set(not_after as f64),
            None => {
                family.remove_where(super::names::LABEL_SERVER, server);
            }
        }
    }

    fn now_unix_seconds(&self) -> f64 {
        self.inner.clock.unix_now().as_secs_f64()
    }
}
