//! `GET /status.json`: the status page's facts as one JSON object, for programs (an agent host, a
//! deploy pipeline, a gateway routing around a server that is not ready). Rendered from the same
//! snapshot of the recorder's status board as the page ([`status_page`](super::status_page)), so
//! the two never disagree, and the board is what the one-hot `/metrics` series follow too.
//!
//! ```json
//! {"generated_at": "2026-12-04T16:00:00.250Z", "last_event_id": 7,
//!  "servers": [{"server": "github", "state": "unauthenticated", "action": "reauthorize",
//!               "next_step": "re-authorize the `github` connection ...",
//!               "reason": "the MCP server answered HTTP 401 ...", "since": "2026-12-04T15:58:10.003Z",
//!               "tools": 0, "protocol_version": null, "credential_expires_at": null,
//!               "next_attempt_at": null, "failing_since": null, "failed_connects_in_a_row": 0,
//!               "credentials": []}]}
//! ```
//!
//! Times are RFC 3339 in UTC with milliseconds; a fact that is not known is `null`.
//! `last_event_id` is the id of the last change on `GET /events` that the snapshot includes:
//! follow the stream with `Last-Event-ID` set to it and nothing is missed.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::metrics::{Metrics, ServerRow};

/// The path of the JSON status, in [`router`](super::router) and in the standalone server.
pub const STATUS_JSON_PATH: &str = "/status.json";

#[derive(Serialize)]
struct StatusJson<'a> {
    generated_at: String,
    last_event_id: u64,
    servers: Vec<ServerJson<'a>>,
}

#[derive(Serialize)]
struct ServerJson<'a> {
    server: &'a str,
    state: &'static str,
    action: Option<&'static str>,
    next_step: Option<String>,
    reason: Option<&'a str>,
    since: String,
    tools: usize,
    protocol_version: Option<&'a str>,
    /// The earliest expiry of a credential that cannot renew itself.
    credential_expires_at: Option<String>,
    /// When the next connection attempt to a server that is not ready is due (the same fact as
    /// `mcp_readiness_server_next_attempt_timestamp_seconds`); `null` while none is due.
    next_attempt_at: Option<String>,
    /// When the failed connects in a row now began (`since` moves at each retry, as a retry
    /// reads `connecting`); `null` when the last connect succeeded or none failed.
    failing_since: Option<String>,
    /// How many connects in a row failed, up to now.
    failed_connects_in_a_row: u64,
    credentials: Vec<CredentialJson>,
}

#[derive(Serialize)]
struct CredentialJson {
    credential: &'static str,
    expires_at: String,
    renewable: bool,
}

/// The status as JSON (what `GET /status.json` answers): the facts of the status page's rows,
/// sorted by server name.
///
/// ```
/// use mcp_readiness::state::{ConnectionEvent, EventSink};
/// use mcp_readiness::{Metrics, State, exporter};
///
/// let metrics = Metrics::new();
/// metrics.on_event(&ConnectionEvent::ServerAdded { server: "github".into(), state: State::Unauthenticated });
/// let status: serde_json::Value = serde_json::from_str(&exporter::status_json(&metrics)).unwrap();
/// assert_eq!(status["servers"][0]["server"], "github");
/// assert_eq!(status["servers"][0]["action"], "reauthorize");
/// ```
pub fn status_json(metrics: &Metrics) -> String {
    let (rows, now_unix, last_event_id) = metrics.status_snapshot();
    render(&rows, now_unix, last_event_id)
}

/// Renders the JSON for `rows` at wall-clock time `now_unix`.
pub(crate) fn render(rows: &[(Arc<str>, ServerRow)], now_unix: f64, last_event_id: u64) -> String {
    let servers = rows
        .iter()
        .map(|(name, row)| ServerJson {
            server: name,
            state: row.state.as_str(),
            action: row.state.action().map(|a| a.as_str()),
            next_step: row.state.action().map(|a| a.next_step(name)),
            reason: row.reason.as_deref(),
            since: rfc3339(row.since_unix),
            tools: row.tools,
            protocol_version: row.identity.as_ref().map(|i| i.protocol_version.as_str()),
            credential_expires_at: row
                .credentials
                .iter()
                .filter(|c| !c.renewable)
                .map(|c| c.unix_seconds())
                .min_by(f64::total_cmp)
                .map(rfc3339),
            next_attempt_at: row.next_attempt_at.map(rfc3339),
            failing_since: row.failing_since.map(rfc3339),
            failed_connects_in_a_row: row.failed_in_a_row,
            credentials: row
                .credentials
                .iter()
                .map(|c| CredentialJson {
                    credential: c.kind.as_str(),
                    expires_at: rfc3339(c.unix_seconds()),
                    renewable: c.renewable,
                })
                .collect(),
        })
        .collect();
    let status = StatusJson {
        generated_at: rfc3339(now_unix),
        last_event_id,
        servers,
    };
    // Serializing plain strings, numbers and options cannot fail.
    serde_json::to_string(&status).unwrap_or_else(|_| String::from("{}"))
}

/// `2026-12-04T16:00:00.250Z`: a Unix time in RFC 3339, UTC, to the millisecond.
pub(crate) fn rfc3339(unix: f64) -> String {
    humantime::format_rfc3339_millis(system_time(unix)).to_string()
}

/// A Unix time in seconds as a `SystemTime`, clamped to 1970..5138 (`from_secs_f64` panics on
/// NaN and infinities, and a clock can say anything).
pub(super) fn system_time(unix: f64) -> std::time::SystemTime {
    let unix = if unix.is_finite() {
        unix.clamp(0.0, 1e11)
    } else {
        0.0
    };
    std::time::UNIX_EPOCH + Duration::from_secs_f64(unix)
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use serde_json::Value;

    use super::*;
    use crate::state::State;
    use crate::state::{CredentialExpiry, CredentialKind, ServerIdentity};

    fn row(state: State) -> ServerRow {
        ServerRow {
            state,
            reason: None,
            since_unix: 1_000.5,
            tools: 0,
            wait_budget: None,
            connects_ok: 0,
            connects_failed: 0,
            reconnects: 0,
            history: VecDeque::new(),
            identity: None,
            credentials: Vec::new(),
            next_attempt_at: None,
            failing_since: None,
            failed_in_a_row: 0,
        }
    }

    #[test]
    fn each_row_has_its_state_action_reason_time_tools_protocol_and_earliest_credential_that_cannot_renew()
     {
        let at = |s: u64| std::time::UNIX_EPOCH + Duration::from_secs(s);
        let mut files = row(State::Ready);
        files.tools = 3;
        files.identity = Some(ServerIdentity {
            protocol_version: "2025-06-18".into(),
            server_name: "fs".into(),
            server_version: "1".into(),
        });
        files.credentials = vec![
            CredentialExpiry {
                kind: CredentialKind::AccessToken,
                expires_at: at(1_100),
                renewable: true,
            },
            CredentialExpiry {
                kind: CredentialKind::RefreshToken,
                expires_at: at(9_000),
                renewable: false,
            },
            CredentialExpiry {
                kind: CredentialKind::BearerToken,
                expires_at: at(8_000),
                renewable: false,
            },
        ];
        let mut github = row(State::Unauthenticated);
        github.reason = Some(Arc::from("the MCP server answered \"401\"\n"));
        github.next_attempt_at = Some(1_210.25);
        github.failing_since = Some(1_100.0);
        github.failed_in_a_row = 4;
        let rows = vec![(Arc::from("files"), files), (Arc::from("github"), github)];
        let json: Value = serde_json::from_str(&render(&rows, 1_200.0, 4)).unwrap();
        assert_eq!(json["generated_at"], "1970-01-01T00:20:00.000Z");
        assert_eq!(json["last_event_id"], 4);
        let files = &json["servers"][0];
        assert_eq!(files["server"], "files");
        assert_eq!(files["state"], "ready");
        assert_eq!(files["action"], Value::Null);
        assert_eq!(files["since"], "1970-01-01T00:16:40.500Z");
        assert_eq!(files["tools"], 3);
        assert_eq!(files["protocol_version"], "2025-06-18");
        assert_eq!(files["credential_expires_at"], "1970-01-01T02:13:20.000Z");
        assert_eq!(files["credentials"].as_array().unwrap().len(), 3);
        // Nothing due, nothing failing.
        let waits = |row: &Value| {
            [
                row["next_attempt_at"].clone(),
                row["failing_since"].clone(),
                row["failed_connects_in_a_row"].clone(),
            ]
        };
        assert_eq!(waits(files), [Value::Null, Value::Null, Value::from(0)]);
        let github = &json["servers"][1];
        assert_eq!(github["action"], "reauthorize");
        assert_eq!(github["reason"], "the MCP server answered \"401\"\n");
        assert_eq!(github["credential_expires_at"], Value::Null);
        assert_eq!(
            waits(github),
            [
                Value::from("1970-01-01T00:20:10.250Z"),
                Value::from("1970-01-01T00:18:20.000Z"),
                Value::from(4)
            ]
        );
        assert!(
            github["next_step"]
                .as_str()
                .unwrap()
                .contains("re-authorize the `github` connection")
        );
    }

    #[test]
    fn an_empty_fleet_is_an_empty_list() {
        let json: Value = serde_json::from_str(&render(&[], 0.0, 0)).unwrap();
        assert_eq!(json["servers"], Value::Array(Vec::new()));
    }
}
