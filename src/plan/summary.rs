use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::{Decision, StepOutcome};
use crate::resolve::Scope;
use crate::state::State;

/// The one record an unattended run leaves behind: which servers blocked which steps, by state.
///
/// Serializes to exactly `{"ts", "ran", "blocked_by_auth", "still_connecting", "absent", "by_state"}`;
/// the three lists name servers (each once, in step order), `by_state` counts steps per state.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use mcp_readiness::plan::{RunSummary, Step, StepOutcome};
/// use mcp_readiness::{resolve::{Scope, Verdict}, State};
///
/// let ready = Verdict::READY;
/// let unauthenticated = Verdict { state: State::Unauthenticated, scope: Scope::Server, ..Verdict::READY };
/// let outcomes = vec![
///     StepOutcome::new(&Step::required("fetch", "mcp__analytics__query"), &unauthenticated),
///     StepOutcome::new(&Step::optional("post", "mcp__chat__send"), &ready),
/// ];
/// let summary = RunSummary::new(SystemTime::UNIX_EPOCH + Duration::from_secs(1), outcomes);
/// assert_eq!(
///     serde_json::to_string(&summary).unwrap(),
///     r#"{"ts":"1970-01-01T00:00:01.000Z","ran":1,"blocked_by_auth":["analytics"],"still_connecting":[],"absent":[],"by_state":{"ready":1,"unauthenticated":1}}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSummary {
    /// When the run was summarized (RFC 3339, UTC, milliseconds).
    pub ts: String,
    /// Steps that ran.
    pub ran: usize,
    /// Servers that need re-authorization.
    pub blocked_by_auth: Vec<String>,
    /// Servers still connecting when the budget ran out.
    pub still_connecting: Vec<String>,
    /// Servers (or tools of live servers) that are not there.
    pub absent: Vec<String>,
    /// Steps per state.
    pub by_state: BTreeMap<State, usize>,
    /// The steps themselves, for the hand-off note (not part of the JSON record).
    #[serde(skip)]
    pub outcomes: Vec<StepOutcome>,
    /// With the next run known ([`RunSummary::with_next_run`]): the servers with a credential
    /// that cannot renew itself and expires before the next run (in the JSON record only then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiring_before_next_run: Option<Vec<String>>,
    /// With the next run known ([`RunSummary::with_renewed`]): the servers whose renewable
    /// credential would have expired before the next run and was renewed during the pre-flight,
    /// each with its new access token's expiry (RFC 3339, UTC; `null` when the authorization
    /// server did not say). In the JSON record only then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renewed_before_next_run: Option<BTreeMap<String, Option<String>>>,
    /// When the next run is due, when known (pushed as `mcp_readiness_run_next_timestamp_seconds`;
    /// not part of the JSON record).
    #[serde(skip)]
    pub next_run: Option<SystemTime>,
}

impl RunSummary {
    /// Summarizes the outcomes of a run at time `ts`.
    pub fn new(ts: SystemTime, outcomes: Vec<StepOutcome>) -> Self {
        let servers_in = |state: State| {
            let mut servers: Vec<String> = Vec::new();
            for outcome in outcomes.iter().filter(|o| o.state == state) {
                if !servers.contains(&outcome.server) {
                    servers.push(outcome.server.clone());
                }
            }
            servers
        };
        let mut by_state = BTreeMap::new();
        for outcome in &outcomes {
            *by_state.entry(outcome.state).or_insert(0) += 1;
        }
        RunSummary {
            ts: humantime::format_rfc3339_millis(ts).to_string(),
            ran: outcomes
                .iter()
                .filter(|o| o.decision == Decision::Run)
                .count(),
            blocked_by_auth: servers_in(State::Unauthenticated),
            still_connecting: servers_in(State::Connecting),
            absent: servers_in(State::Absent),
            by_state,
            outcomes,
            expiring_before_next_run: None,
            renewed_before_next_run: None,
            next_run: None,
        }
    }

    /// The run record with the next run due at `next_run` and the servers whose credential
    /// cannot renew itself and expires before it (`expiring_before_next_run`, in the JSON record
    /// from now on, empty or not).
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use mcp_readiness::plan::RunSummary;
    ///
    /// let summary = RunSummary::new(SystemTime::UNIX_EPOCH, Vec::new())
    ///     .with_next_run(SystemTime::UNIX_EPOCH + Duration::from_secs(6 * 3600), vec!["github".into()]);
    /// let json = serde_json::to_string(&summary).unwrap();
    /// assert!(json.ends_with(r#""expiring_before_next_run":["github"]}"#), "{json}");
    /// ```
    #[must_use]
    pub fn with_next_run(mut self, next_run: SystemTime, expiring: Vec<String>) -> Self {
        self.next_run = Some(next_run);
        self.expiring_before_next_run = Some(expiring);
        self
    }

    /// The run record with the credentials renewed during the pre-flight because they would
    /// have expired before the next run: each server with its new expiry, if known
    /// (`renewed_before_next_run`, in the JSON record from now on, empty or not).
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use mcp_readiness::plan::RunSummary;
    ///
    /// let renewed = [("vault".to_owned(), Some(SystemTime::UNIX_EPOCH + Duration::from_secs(7200)))];
    /// let summary = RunSummary::new(SystemTime::UNIX_EPOCH, Vec::new()).with_renewed(renewed);
    /// let json = serde_json::to_string(&summary).unwrap();
    /// assert!(json.ends_with(r#""renewed_before_next_run":{"vault":"1970-01-01T02:00:00Z"}}"#), "{json}");
    /// ```
    #[must_use]
    pub fn with_renewed(
        mut self,
        renewed: impl IntoIterator<Item = (String, Option<SystemTime>)>,
    ) -> Self {
        self.renewed_before_next_run = Some(
            renewed
                .into_iter()
                .map(|(server, at)| {
                    let at = at.map(|at| humantime::format_rfc3339_seconds(at).to_string());
                    (server, at)
                })
                .collect(),
        );
        self
    }

    /// Whether every required step can run.
    pub fn all_required_ready(&self) -> bool {
        self.outcomes
            .iter()
            .all(|o| !o.required || o.state == State::Ready)
    }

    /// The hand-off note for the next human: what ran, and for each server that blocked a step, its
    /// state, the steps it blocked and the one thing to do.
    pub fn handoff_note(&self) -> String {
        let mut note = format!("{} of {} steps ran.", self.ran, self.outcomes.len());
        let groups = [
            (
                State::Unauthenticated,
                &self.blocked_by_auth,
                "needs re-authorization",
            ),
            (State::Absent, &self.absent, "is absent"),
            (
                State::Connecting,
                &self.still_connecting,
                "was still connecting when the budget ran out",
            ),
        ];
        if groups.iter().all(|(_, servers, _)| servers.is_empty()) {
            note.push_str(" Nothing needs a human.");
            return note;
        }
        note.push_str(" Next steps:");
        for (state, servers, what) in groups {
            let Some(action) = state.action() else {
                continue;
            };
            for server in servers.iter() {
                let affected: Vec<&StepOutcome> = self
                    .outcomes
                    .iter()
                    .filter(|o| o.state == state && &o.server == server)
                    .collect();
                let steps: Vec<String> = affected
                    .iter()
                    .map(|o| format!("{} ({})", o.id, o.decision.as_str()))
                    .collect();
                let tools_missing: Vec<&str> = affected
                    .iter()
                    .filter(|o| o.scope == Scope::Tool)
                    .map(|o| o.tool.rsplit_once("__").map_or(o.tool.as_str(), |(_, t)| t))
                    .collect();
                let (what, next) =
                    if state == State::Absent && tools_missing.len() == affected.len() {
                        (
                            format!(
                                "is connected but does not offer {}",
                                tools_missing.join(", ")
                            ),
                            format!(
                                "Check the steps' tool names, or run a version of `{server}` that \
                                 offers {}",
                                tools_missing.join(", ")
                            ),
                        )
                    } else {
                        let cause = affected
                            .iter()
                            .filter(|o| o.state != State::Connecting)
                            .find_map(|o| o.cause.as_deref())
                            .map(|c| format!(" ({c})"))
                            .unwrap_or_default();
                        (
                            format!("{what}{cause}"),
                            capitalize(&action.next_step(server)),
                        )
                    };
                let _ = write!(
                    note,
                    "\n- `{server}` {what} [{}]: {next}. Affected steps: {}.",
                    action.as_str(),
                    steps.join(", ")
                );
            }
        }
        note
    }
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}
