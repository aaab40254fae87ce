//! [`push`]: a short run's metrics to a Prometheus Pushgateway. `check` lasts seconds, so whatever
//! it learned is lost unless someone scrapes it in that window; pushed, it stays in the gateway
//! (under a grouping key of the user's choosing) until the next run replaces it, and Prometheus
//! scrapes the gateway with `honor_labels: true`.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::metrics::Metrics;
use crate::metrics::names::{
    RUN_NEXT_TIMESTAMP_SECONDS, RUN_RAN_STEPS, RUN_SERVERS, RUN_STEPS, RUN_TIMESTAMP_SECONDS,
};
use crate::plan::RunSummary;
use crate::state::State;

/// Why a push target was refused or a push failed. Messages never contain URL credentials.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PushError {
    /// The Pushgateway URL is not `http://` or `https://`.
    #[error("--push: `{0}` is not an http:// or https:// URL of a Pushgateway")]
    Url(String),
    /// A grouping label is not `name=value` with a Prometheus label name (not `job`).
    #[error(
        "--push-label: `{0}` is not NAME=VALUE with a label name of letters, digits and `_` (not starting with a digit or `__`, not `job`, each name once)"
    )]
    Label(String),
    /// The job name is empty.
    #[error("--push-job: the job name must not be empty")]
    Job,
    /// The gateway could not be reached or refused the push.
    #[error("pushing to the Pushgateway at {url} failed: {detail}; {next_step}")]
    Push {
        /// The gateway's URL (without credentials).
        url: String,
        /// What happened, in words (`connection refused`, `it answered HTTP 404 Not Found`).
        detail: String,
        /// What to check: that it runs and is reachable (no answer), or that the URL is its base
        /// URL (it answered, but refused the push).
        next_step: &'static str,
    },
}

/// Where a run is pushed: the gateway and the grouping key (`job` and extra labels).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushTarget {
    url: String,
    job: String,
    labels: Vec<(String, String)>,
}

impl PushTarget {
    /// A gateway at `url` (e.g. `http://127.0.0.1:9091`) and the job name of the grouping key.
    pub fn try_new(url: &str, job: &str) -> Result<Self, PushError> {
        let url = url.trim_end_matches('/');
        if !(url.starts_with("http://") || url.starts_with("https://"))
            || url.contains(char::is_whitespace)
        {
            return Err(PushError::Url(crate::secret::redact(url, &[])));
        }
        if job.is_empty() {
            return Err(PushError::Job);
        }
        Ok(PushTarget {
            url: url.to_owned(),
            job: job.to_owned(),
            labels: Vec::new(),
        })
    }

    /// Adds a grouping label from `name=value`.
    pub fn label(mut self, pair: &str) -> Result<Self, PushError> {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(PushError::Label(pair.to_owned()));
        };
        let valid = name
            .chars()
            .enumerate()
            .all(|(i, c)| c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()));
        // A name given twice would put two values for one label in the grouping key, which the
        // Pushgateway refuses at push time; it is refused here, with the other bad input.
        let repeated = self.labels.iter().any(|(given, _)| given == name);
        if name.is_empty() || !valid || name == "job" || name.starts_with("__") || repeated {
            return Err(PushError::Label(pair.to_owned()));
        }
        self.labels.push((name.to_owned(), value.to_owned()));
        Ok(self)
    }

    /// The gateway URL of this grouping key: `<url>/metrics/job/<job>/<name>/<value>...`, every
    /// value base64url-encoded (`@base64`), so any value, even with `/`, is one path segment.
    pub fn endpoint(&self) -> String {
        let mut out = format!("{}/metrics/job@base64/{}", self.url, base64url(&self.job));
        for (name, value) in &self.labels {
            let _ = write!(out, "/{name}@base64/{}", base64url(value));
        }
        out
    }
}

/// Base64url without padding (what the Pushgateway's `@base64` segments accept; `=` for an
/// empty value).
fn base64url(value: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    if value.is_empty() {
        return "=".into();
    }
    let bytes = value.as_bytes();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// The run record as gauges (see [`RUN_STEPS`] and the names beside it), in the text format.
pub fn run_record_text(summary: &RunSummary, now: SystemTime) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP {RUN_STEPS} Steps of the pushed run, by the state they resolved to."
    );
    let _ = writeln!(out, "# TYPE {RUN_STEPS} gauge");
    for state in State::ALL {
        let n = summary.by_state.get(&state).copied().unwrap_or(0);
        let _ = writeln!(out, "{RUN_STEPS}{{state=\"{state}\"}} {n}");
    }
    let _ = writeln!(
        out,
        "# HELP {RUN_RAN_STEPS} Steps of the pushed run that ran."
    );
    let _ = writeln!(out, "# TYPE {RUN_RAN_STEPS} gauge");
    let _ = writeln!(out, "{RUN_RAN_STEPS} {}", summary.ran);
    let _ = writeln!(
        out,
        "# HELP {RUN_SERVERS} Servers named in each list of the pushed run record."
    );
    let _ = writeln!(out, "# TYPE {RUN_SERVERS} gauge");
    for (list, servers) in [
        ("absent", &summary.absent),
        ("blocked_by_auth", &summary.blocked_by_auth),
        ("still_connecting", &summary.still_connecting),
    ] {
        let _ = writeln!(out, "{RUN_SERVERS}{{list=\"{list}\"}} {}", servers.len());
    }
    let ts = now.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let _ = writeln!(
        out,
        "# HELP {RUN_TIMESTAMP_SECONDS} Unix time the run was pushed."
    );
    let _ = writeln!(out, "# TYPE {RUN_TIMESTAMP_SECONDS} gauge");
    let _ = writeln!(out, "{RUN_TIMESTAMP_SECONDS} {:.3}", ts.as_secs_f64());
    if let Some(next) = summary.next_run {
        let next = next.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
        let _ = writeln!(
            out,
            "# HELP {RUN_NEXT_TIMESTAMP_SECONDS} Unix time the next run is due."
        );
        let _ = writeln!(out, "# TYPE {RUN_NEXT_TIMESTAMP_SECONDS} gauge");
        let _ = writeln!(
            out,
            "{RUN_NEXT_TIMESTAMP_SECONDS} {:.3}",
            next.as_secs_f64()
        );
    }
    out
}

/// Pushes `metrics` (and, when given, the run record's counts) to the gateway, replacing what the
/// grouping key held (`PUT`). Times out after 10 s.
pub async fn push(
    metrics: &Metrics,
    target: &PushTarget,
    run: Option<&RunSummary>,
) -> Result<(), PushError> {
    let mut body = metrics.render();
    if let Some(run) = run {
        body.push_str(&run_record_text(run, SystemTime::now()));
    }
    let url = crate::secret::redact(&target.url, &[]);
    let unreachable = |error: reqwest::Error| PushError::Push {
        url: url.clone(),
        detail: crate::secret::redact(
            &crate::client::reasons::reason::request_failure(&error.without_url()),
            &[],
        ),
        next_step: "check that it runs and is reachable",
    };
    // A Pushgateway never redirects a push: a redirect is an answer to name (an SSO front, a
    // moved URL), not one to follow and then blame the configured URL for.
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(unreachable)?;
    let response = client
        .put(target.endpoint())
        .header("content-type", "text/plain; version=0.0.4; charset=utf-8")
        .body(body)
        .send()
        .await
        .map_err(unreachable)?;
    let status = response.status();
    let html = crate::client::reasons::reason::answered_html(&response);
    // A Pushgateway answers a push with no page: a 2xx HTML page is something else at that URL
    // (a login page in front of it, a web server), and nothing was pushed.
    if status.is_success() && !html {
        return Ok(());
    }
    let text = response.text().await.unwrap_or_default();
    Err(PushError::Push {
        detail: refusal(status, &text),
        url,
        next_step: "check that the URL is the Pushgateway's base URL (without `/metrics`) and \
                    that it accepts pushes",
    })
}

/// A gateway's refusal in words: the status, and the body by its kind (an HTML page by its
/// title), cut; redacted.
fn refusal(status: reqwest::StatusCode, body: &str) -> String {
    crate::secret::redact(
        &crate::client::reasons::reason::remote_response(&format!("HTTP {status}: {body}")),
        &[],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_status_and_an_html_page_by_its_title() {
        let page = "<!DOCTYPE HTML>\n<html lang=\"en\">\n<head><title>Error response</title>\
                    </head><body><h1>Error response</h1><p>Unsupported method ('PUT').</p>\
                    </body></html>";
        assert_eq!(
            refusal(reqwest::StatusCode::NOT_IMPLEMENTED, page),
            "it answered HTTP 501 Not Implemented with an HTML page: Error response"
        );
        assert_eq!(
            refusal(reqwest::StatusCode::NOT_FOUND, ""),
            "it answered HTTP 404 Not Found"
        );
        let long = "x".repeat(5000);
        assert!(
            refusal(reqwest::StatusCode::BAD_REQUEST, &long)
                .chars()
                .count()
                < 300
        );
    }

    #[test]
    fn every_grouping_value_is_one_base64url_segment() {
        assert_eq!(base64url("preflight"), "cHJlZmxpZ2h0");
        assert_eq!(base64url("a/b"), "YS9i");
        assert_eq!(base64url(""), "=");
        let target = PushTarget::try_new("http://127.0.0.1:9091/", "check")
            .unwrap()
            .label("team=ops/oncall")
            .unwrap();
        assert_eq!(
            target.endpoint(),
            "http://127.0.0.1:9091/metrics/job@base64/Y2hlY2s/team@base64/b3BzL29uY2FsbA"
        );
    }

    #[test]
    fn bad_urls_jobs_and_labels_are_refused_with_what_was_expected() {
        assert!(matches!(
            PushTarget::try_new("ftp://x", "j"),
            Err(PushError::Url(_))
        ));
        assert!(matches!(
            PushTarget::try_new("http://x", ""),
            Err(PushError::Job)
        ));
        let target = PushTarget::try_new("http://x", "j").unwrap();
        for bad in ["team", "=v", "1a=v", "job=x", "__name__=x", "a-b=v"] {
            assert!(
                matches!(target.clone().label(bad), Err(PushError::Label(_))),
                "{bad}"
            );
        }
        // One name, one value in a grouping key.
        let once = target.clone().label("instance=x").unwrap();
        let twice = once.label("instance=y").unwrap_err().to_string();
        assert!(twice.contains("each name once"), "{twice}");
        let message = PushTarget::try_new("ftp://user:secret@x", "j")
            .unwrap_err()
            .to_string();
        assert!(!message.contains("secret"), "{message}");
    }
}
