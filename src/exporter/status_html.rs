//! The live status page (`GET /status` of the exporter, [`status_page`]): one row per server with its state, the `action`, the reason, the time in that state, its tools
//! and its connection history. Plain server-rendered HTML that refreshes itself every few seconds
//! (`<meta http-equiv="refresh">`): no script, no asset from the network, and every name, reason
//! and message escaped.

use std::fmt::Write as _;
use std::time::Duration;

use crate::metrics::{Metrics, ServerRow};
use crate::state::ConnectResult;
use crate::state::State;

/// How often the page reloads itself, in seconds.
pub const STATUS_REFRESH_SECONDS: u32 = 5;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f}\
h1{font-size:1.3em;margin:0 0 .3em}p{margin:.3em 0}\
table{border-collapse:collapse;margin-top:1em;width:100%}\
th,td{border-bottom:1px solid #ddd;padding:.35em .6em;text-align:left;vertical-align:top}\
th{background:#f4f4f6;font-weight:600}\
.state{font-weight:600;padding:.1em .5em;border-radius:.6em;white-space:nowrap}\
.ready{background:#d9f2dd;color:#125c1f}.connecting{background:#fff1c2;color:#6b4e00}\
.unauthenticated{background:#ffd9d6;color:#8a1409}.absent{background:#e4e4e8;color:#3a3a44}\
.chips span{margin-right:.6em}.muted{color:#666}code{font-size:.95em}\
.attempt{display:inline-block;margin:0 .25em .2em 0;padding:0 .35em;border-radius:.4em;font-size:.85em}\
.attempt.ok{background:#d9f2dd}.attempt.failed{background:#ffd9d6}";

/// The live status page as HTML (what `GET /status` of the exporter serves): one row per server
/// announced by the connections' events, with its state, `action`, reason, time in state, tools,
/// wait budget and last connection attempts. Names and reasons are escaped; the page reloads
/// itself every [`STATUS_REFRESH_SECONDS`].
///
/// ```
/// use mcp_readiness::state::{ConnectionEvent, EventSink};
/// use mcp_readiness::{Metrics, State, exporter};
///
/// let metrics = Metrics::new();
/// metrics.on_event(&ConnectionEvent::ServerAdded { server: "github".into(), state: State::Unauthenticated });
/// let page = exporter::status_page(&metrics);
/// assert!(page.contains(r#"<tr data-server="github" data-state="unauthenticated">"#));
/// assert!(page.contains("reauthorize"));
/// ```
pub fn status_page(metrics: &Metrics) -> String {
    let (rows, now_unix) = metrics.status_rows();
    render(&rows, now_unix)
}

/// Renders the page for `rows` at wall-clock time `now_unix`.
pub(crate) fn render(rows: &[(std::sync::Arc<str>, ServerRow)], now_unix: f64) -> String {
    let mut page = String::with_capacity(2048 + rows.len() * 512);
    let mut counts = [0usize; 4];
    for (_, row) in rows {
        counts[state_index(row.state)] += 1;
    }
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"refresh\" content=\"{STATUS_REFRESH_SECONDS}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>mcp-readiness: {} server(s)</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>MCP server readiness</h1>\n",
        rows.len()
    );
    page.push_str("<p class=\"chips\" id=\"summary\">");
    for state in State::ALL {
        let _ = write!(
            page,
            "<span class=\"state {state}\" data-state=\"{state}\">{} {state}</span>",
            counts[state_index(state)]
        );
    }
    page.push_str("</p>\n");
    let _ = writeln!(
        page,
        "<p class=\"muted\">Updated {}; this page reloads every {STATUS_REFRESH_SECONDS} s. \
         Raw figures: <a href=\"/metrics\">/metrics</a>.</p>",
        utc(now_unix)
    );
    if rows.is_empty() {
        page.push_str(
            "<p id=\"empty\">No server is configured yet. Rows come from connection events: \
             give this recorder to the connections as their event sink \
             (<code>HubOptions::builder().event_sink(metrics)</code> for a <code>Hub</code>, \
             <code>Peers::with_events(metrics)</code> for your own rmcp connections); the \
             layer's <code>.metrics(..)</code> alone records calls, not server states.</p>\n\
             </body>\n</html>\n",
        );
        return page;
    }
    page.push_str(
        "<table id=\"servers\">\n<thead><tr><th>Server</th><th>State</th><th>Action</th>\
         <th>Reason</th><th>In state for</th><th>Tools</th><th>Wait budget</th>\
         <th>Credentials expire</th><th>Connects</th><th>Last attempts</th></tr></thead>\n<tbody>\n",
    );
    // Problems first, in the order they need a human: re-authorize, add, wait; then the ready.
    let mut ordered: Vec<&(std::sync::Arc<str>, ServerRow)> = rows.iter().collect();
    ordered.sort_by_key(|(name, row)| (urgency(row.state), name.clone()));
    for (raw_name, row) in ordered {
        let name = escape(raw_name);
        let state = row.state;
        let (action, next) = match state.action() {
            Some(action) => (
                format!("<code>{}</code>", action.as_str()),
                format!(
                    "<br><span class=\"muted\">{}</span>",
                    escape(&action.next_step(raw_name))
                ),
            ),
            None => ("-".to_owned(), String::new()),
        };
        let mut reason = row.reason.as_deref().map_or_else(String::new, escape);
        // How long it has been failing: "In state for" restarts at each retry.
        if let Some(first) = row.failing_since.filter(|_| state != State::Ready) {
            let _ = write!(
                reason,
                "<br><span class=\"muted failing-since\" data-failing-since=\"{first}\">failing \
                 since {} ({} ago, {} failed connect{} in a row)</span>",
                utc(first),
                since((now_unix - first).max(0.0)),
                row.failed_in_a_row,
                if row.failed_in_a_row == 1 { "" } else { "s" }
            );
        }
        if let Some(at) = row.next_attempt_at {
            let left = (at - now_unix).max(0.0);
            let _ = write!(
                reason,
                "<br><span class=\"muted next-attempt\" data-next-attempt=\"{at}\">next attempt \
                 {} (in {})</span>",
                utc(at),
                since(left)
            );
        }
        let budget = row.wait_budget.map_or_else(|| "-".to_owned(), seconds);
        let protocol = row.identity.as_ref().map_or_else(String::new, |i| {
            format!(
                "<br><span class=\"muted protocol\" data-protocol=\"{v}\">MCP {v} · {} {}</span>",
                escape(&i.server_name),
                escape(&i.server_version),
                v = escape(&i.protocol_version),
            )
        });
        let credentials = credentials(&row.credentials, now_unix);
        let _ = write!(
            page,
            "<tr data-server=\"{name}\" data-state=\"{state}\">\
             <td><code>{name}</code>{protocol}</td>\
             <td><span class=\"state {state}\">{state}</span></td>\
             <td>{action}{next}</td><td>{reason}</td><td>{}</td><td>{}</td><td>{budget}</td>\
             <td>{credentials}</td><td>{} ok, {} failed, {} reconnect(s)</td><td>",
            since(now_unix - row.since_unix),
            row.tools,
            row.connects_ok,
            row.connects_failed,
            row.reconnects,
        );
        for attempt in row.history.iter().rev() {
            let class = if attempt.result == ConnectResult::Ok {
                "ok"
            } else {
                "failed"
            };
            let _ = write!(
                page,
                "<span class=\"attempt {class}\" title=\"{} ago\">{} {}</span>",
                since(now_unix - attempt.at_unix),
                attempt.result.as_str(),
                millis(attempt.duration)
            );
        }
        page.push_str("</td></tr>\n");
    }
    page.push_str("</tbody>\n</table>\n</body>\n</html>\n");
    page
}

/// `refresh token 2026-12-08T19:00:00Z (in 6 d 23 h)`, one line per known expiry; a credential
/// that renews itself says so. `-` when nothing is known.
fn credentials(expiries: &[crate::state::CredentialExpiry], now_unix: f64) -> String {
    if expiries.is_empty() {
        return "-".to_owned();
    }
    let mut out = String::new();
    for (i, expiry) in expiries.iter().enumerate() {
        let at = expiry.unix_seconds();
        let left = at - now_unix;
        let when = if left >= 0.0 {
            format!("in {}", since(left))
        } else {
            format!("expired {} ago", since(-left))
        };
        let renews = if expiry.renewable {
            ", renews itself"
        } else {
            ""
        };
        let _ = write!(
            out,
            "{}<span class=\"credential\" data-credential=\"{}\" data-renewable=\"{}\" \
             data-expires=\"{at}\">{} {} ({when}{renews})</span>",
            if i > 0 { "<br>" } else { "" },
            expiry.kind.as_str(),
            expiry.renewable,
            expiry.kind.describe(),
            utc(at),
        );
    }
    out
}

fn urgency(state: State) -> u8 {
    match state {
        State::Unauthenticated => 0,
        State::Absent => 1,
        State::Connecting => 2,
        State::Ready => 3,
    }
}

fn state_index(state: State) -> usize {
    State::ALL.iter().position(|s| *s == state).unwrap_or(0)
}

/// Escapes text for HTML element content and quoted attribute values, and shows control
/// characters as visible escapes (`\u{1b}`) instead of passing them through.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// `4 s`, `3 min 20 s`, `2 h 5 min`: how long ago, to the second.
fn since(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "0 s".to_owned();
    }
    let total = seconds as u64;
    let (h, m, s) = (total / 3600, total / 60 % 60, total % 60);
    match (h, m) {
        (0, 0) => format!("{s} s"),
        (0, m) => format!("{m} min {s} s"),
        (h, m) => format!("{h} h {m} min"),
    }
}

fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

fn millis(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

/// `2026-12-04 16:40:07 UTC`: a time as a person reads it (the JSON keeps RFC 3339).
fn utc(unix: f64) -> String {
    let rfc3339 =
        humantime::format_rfc3339_seconds(super::status_json::system_time(unix)).to_string();
    format!(
        "{} UTC",
        rfc3339.trim_end_matches('Z').replacen('T', " ", 1)
    )
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Arc;

    use super::*;
    use crate::metrics::ConnectRecord;

    fn row(state: State, reason: Option<&str>) -> ServerRow {
        ServerRow {
            state,
            reason: reason.map(Arc::from),
            since_unix: 1_000.0,
            tools: 2,
            wait_budget: Some(Duration::from_secs(20)),
            connects_ok: 1,
            connects_failed: 0,
            reconnects: 0,
            identity: None,
            history: VecDeque::from([ConnectRecord {
                result: ConnectResult::Unauthorized,
                duration: Duration::from_millis(12),
                at_unix: 1_000.0,
            }]),
            credentials: Vec::new(),
            next_attempt_at: None,
            failing_since: None,
            failed_in_a_row: 0,
        }
    }

    #[test]
    fn a_server_waiting_for_its_next_attempt_shows_when_it_is_due() {
        let mut down = row(
            State::Absent,
            Some("connection refused; next attempt at 05:01:00 UTC, after a wait of 4s"),
        );
        down.next_attempt_at = Some(1_004.0);
        let page = render(&[(Arc::from("down"), down)], 1_000.0);
        assert!(
            page.contains("data-next-attempt=\"1004\"")
                && page.contains("next attempt 1970-01-01 00:16:44 UTC (in 4 s)"),
            "{page}"
        );
        let page = render(&[(Arc::from("up"), row(State::Ready, None))], 1_000.0);
        assert!(!page.contains("next-attempt"), "{page}");
    }

    #[test]
    fn a_server_failing_for_a_while_shows_since_when_whatever_in_state_for_says() {
        let mut crm = row(State::Absent, Some("could not start command"));
        crm.failing_since = Some(880.0);
        crm.failed_in_a_row = 7;
        let page = render(&[(Arc::from("crm"), crm)], 1_000.0);
        assert!(
            page.contains(
                "failing since 1970-01-01 00:14:40 UTC (2 min 0 s ago, 7 failed connects in a row)"
            ),
            "{page}"
        );
    }

    #[test]
    fn known_credential_expiries_are_shown_with_what_renews_itself_and_what_expired() {
        use crate::state::{CredentialExpiry, CredentialKind};
        let at = |secs: u64| std::time::UNIX_EPOCH + Duration::from_secs(secs);
        let mut github = row(State::Ready, None);
        github.credentials = vec![
            CredentialExpiry {
                kind: CredentialKind::AccessToken,
                expires_at: at(1_300),
                renewable: true,
            },
            CredentialExpiry {
                kind: CredentialKind::RefreshToken,
                expires_at: at(1_000 + 7 * 3600),
                renewable: false,
            },
            CredentialExpiry {
                kind: CredentialKind::BearerToken,
                expires_at: at(1_100),
                renewable: false,
            },
        ];
        let rows = vec![
            (Arc::from("github"), github),
            (Arc::from("files"), row(State::Ready, None)),
        ];
        let page = render(&rows, 1_200.0);
        assert!(
            page.contains("access token 1970-01-01 00:21:40 UTC (in 1 min 40 s, renews itself)"),
            "{page}"
        );
        assert!(page.contains(r#"data-credential="refresh_token" data-renewable="false" data-expires="26200">refresh token 1970-01-01 07:16:40 UTC (in 6 h 56 min)"#), "{page}");
        assert!(
            page.contains("bearer token 1970-01-01 00:18:20 UTC (expired 1 min 40 s ago)"),
            "{page}"
        );
        assert!(page.contains("<th>Credentials expire</th>"));
        let files = page
            .lines()
            .find(|l| l.contains(r#"data-server="files""#))
            .unwrap();
        assert!(files.contains("<td>-</td>"), "nothing known: {files}");
    }

    #[test]
    fn each_server_gets_a_row_with_its_state_action_and_time_in_state() {
        let rows = vec![
            (Arc::from("files"), row(State::Ready, None)),
            (
                Arc::from("github"),
                row(State::Unauthenticated, Some("HTTP 401")),
            ),
        ];
        let page = render(&rows, 1_200.0);
        assert!(page.contains("<tr data-server=\"files\" data-state=\"ready\">"));
        let (github, files) = (
            page.find("data-server=\"github\""),
            page.find("data-server=\"files\""),
        );
        assert!(github < files, "servers that need a human come first");
        assert!(page.contains("<tr data-server=\"github\" data-state=\"unauthenticated\">"));
        assert!(page.contains("<code>reauthorize</code>"));
        assert!(page.contains("re-authorize the `github` connection"));
        assert!(page.contains("<td>3 min 20 s</td>"));
        assert!(page.contains("unauthorized 12 ms"));
        assert!(page.contains("<meta http-equiv=\"refresh\" content=\"5\">"));
        assert!(page.contains("data-state=\"unauthenticated\">1 unauthenticated</span>"));
        assert!(
            !page.contains("http://") && !page.contains("https://"),
            "no asset from the network"
        );
    }

    #[test]
    fn hostile_names_and_reasons_are_escaped() {
        let rows = vec![(
            Arc::from("<script>alert(1)</script>\u{1b}[31m"),
            row(State::Absent, Some("\"quoted\" & <b>bold</b>\n")),
        )];
        let page = render(&rows, 1_000.0);
        assert!(!page.contains("<script>alert"));
        assert!(!page.contains("<b>bold"));
        assert!(!page.contains('\u{1b}'));
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;\\u{1b}[31m"));
        assert!(page.contains("&quot;quoted&quot; &amp; &lt;b&gt;bold&lt;/b&gt;\\u{a}"));
    }

    #[test]
    fn an_empty_fleet_says_so() {
        assert!(render(&[], 0.0).contains("No server is configured yet."));
    }
}
