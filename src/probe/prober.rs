//! [`Prober`]: one probe = the probe's own resolve, connect and TLS handshake (`phases.rs`), then
//! one streamable-HTTP handshake and `tools/list` against a target on the allow-list, through the
//! Hub's own [`HttpConnector`], within the scrape's deadline, bounded in number.

use crate::util::MutexExt as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwapOption;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::answer;
use super::history::ConnectHistory;
use super::outcome::{ProbeOutcome, state_of_failure};
use super::phases::{PhaseClock, reach};
use super::probe_config::{ProbeConfig, ProbeModule};
use super::target_pattern::ProbeTarget;
use crate::client::{Connector, HttpConnector, SessionEvents, SpecError};
use crate::secret::Secret;
use crate::state::ConnectResult;
use crate::state::State;

/// How much earlier than the scrape's own timeout (`X-Prometheus-Scrape-Timeout-Seconds`) a probe
/// ends, so its answer reaches Prometheus in time (blackbox_exporter's default offset).
pub const SCRAPE_TIMEOUT_MARGIN: Duration = Duration::from_millis(500);

/// The longest a probe waits for a turn when [`ProbeConfig::max_in_flight`] probes are running.
pub const MAX_QUEUE_WAIT: Duration = Duration::from_secs(1);

/// The most OAuth connectors kept (one per module and target, so a credential store is read and
/// refreshed by one client, not by every probe).
const MAX_OAUTH_CONNECTORS: usize = 256;

/// The longest `server` label a probe accepts.
const MAX_SERVER_LABEL: usize = 256;

/// One `GET /probe` request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeRequest {
    /// The MCP endpoint to probe (`target`).
    pub target: String,
    /// The module to probe with (`module`); `None`: the default module, which sends no
    /// credentials.
    pub module: Option<String>,
    /// The `server` label of the answer's series (`server`); `None`: the target's `host:port`.
    pub server: Option<String>,
    /// The scrape's own timeout (`X-Prometheus-Scrape-Timeout-Seconds`), when the scraper sent it.
    pub scrape_timeout: Option<Duration>,
}

/// Why a probe was not run. Each maps to one HTTP status ([`ProbeRefusal::status`]); messages
/// never repeat a target's query string, a header value or a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeRefusal {
    /// No `readiness.probe` is configured (`404`).
    #[error("/probe is off: configure `readiness.probe` (an allow-list of targets) to turn it on")]
    Off,
    /// The request is malformed: no or a bad `target`, an unknown `module`, a bad `server`
    /// (`400`).
    #[error("{0}")]
    BadRequest(String),
    /// The target is not on the module's allow-list; no connection was made (`403`).
    #[error("{0}")]
    NotAllowed(String),
    /// Too many probes are running and waiting already (`503`).
    #[error("{0}")]
    Busy(String),
    /// The probe ran but its answer could not be rendered as metrics: a fault in mcp-readiness,
    /// not in the request or the target (`500`).
    #[error("{0}")]
    RenderFailed(String),
}

impl ProbeRefusal {
    /// The HTTP status of the refusal.
    pub fn status(&self) -> u16 {
        match self {
            ProbeRefusal::Off => 404,
            ProbeRefusal::BadRequest(_) => 400,
            ProbeRefusal::NotAllowed(_) => 403,
            ProbeRefusal::Busy(_) => 503,
            ProbeRefusal::RenderFailed(_) => 500,
        }
    }
}

/// Why a [`ProbeConfig`] cannot be used (a module's header is not valid HTTP, or it has `oauth`
/// in a build without the `oauth` feature).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("readiness.probe.modules.{module}: {problem}")]
pub struct ProbeSetupError {
    /// The module (`default` for the default one).
    pub module: String,
    /// What is wrong and what to do.
    pub problem: String,
}

/// A probe's result: what it found, and the answer's exposition text.
#[derive(Debug, Clone)]
pub struct ProbeAnswer {
    /// The `server` label of the answer's series.
    pub server: String,
    /// What the probe found.
    pub outcome: ProbeOutcome,
    /// The exposition text (format 0.0.4) of the probed server's series.
    pub text: String,
}

/// Probes MCP servers by URL, for `GET /probe` (the multi-target exporter pattern). Cheap to clone;
/// clones share the configuration, the bound on probes in flight and the attempt counts.
///
/// Safe by default: a prober built with [`Prober::disabled`] refuses every probe
/// ([`ProbeRefusal::Off`]); a target must match its module's allow-list before anything connects
/// to it, and a module's credentials go only to its own targets.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use mcp_readiness::probe::{ProbeConfig, ProbeRequest, Prober};
///
/// let prober = Prober::new(ProbeConfig::allowing(vec!["http://127.0.0.1:*/mcp".parse()?]))?;
/// let answer = prober
///     .probe(&ProbeRequest { target: "http://127.0.0.1:8080/mcp".into(), ..Default::default() })
///     .await?;
/// assert!(answer.text.contains("mcp_readiness_probe_success"));
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct Prober {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    configured: ArcSwapOption<Configured>,
    history: ConnectHistory,
}

/// One configuration and what probes under it share.
struct Configured {
    config: ProbeConfig,
    /// Probes running.
    running: Arc<Semaphore>,
    /// Probes running or waiting for a turn (twice `max_in_flight`): beyond it, `503` at once.
    admitted: Arc<Semaphore>,
    #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
    oauth: Mutex<HashMap<Box<str>, Arc<HttpConnector>>>,
}

impl std::fmt::Debug for Prober {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let configured = self.inner.configured.load();
        f.debug_struct("Prober")
            .field("enabled", &configured.is_some())
            .field(
                "max_in_flight",
                &configured.as_ref().map(|c| c.config.max_in_flight),
            )
            .finish()
    }
}

impl Prober {
    /// A prober for `config`, or why a module cannot be used.
    pub fn new(config: ProbeConfig) -> Result<Prober, ProbeSetupError> {
        let prober = Prober::disabled();
        prober.reconfigure(Some(config))?;
        Ok(prober)
    }

    /// A prober that refuses every probe ([`ProbeRefusal::Off`]) until
    /// [`Prober::reconfigure`]d.
    pub fn disabled() -> Prober {
        Prober::default()
    }

    /// Whether probes are configured.
    pub fn is_enabled(&self) -> bool {
        self.inner.configured.load().is_some()
    }

    /// Replaces the configuration (`None` turns probes off); probes in flight finish under the
    /// old one. The attempt counts are kept. Nothing changes when a module cannot be used.
    pub fn reconfigure(&self, config: Option<ProbeConfig>) -> Result<(), ProbeSetupError> {
        let Some(config) = config else {
            self.inner.configured.store(None);
            return Ok(());
        };
        check_module("default", &config.default_module)?;
        for (name, module) in &config.modules {
            check_module(name, module)?;
        }
        let slots = config.max_in_flight.max(1);
        self.inner.configured.store(Some(Arc::new(Configured {
            running: Arc::new(Semaphore::new(slots)),
            admitted: Arc::new(Semaphore::new(slots.saturating_mul(2))),
            oauth: Mutex::new(HashMap::new()),
            config,
        })));
        Ok(())
    }

    /// Runs one probe: checks the request against the allow-list (refusing before any
    /// connection), waits for a turn (at most [`MAX_QUEUE_WAIT`]), then makes one handshake and
    /// one `tools/list` within the deadline: the module's `timeout`, or the scrape's timeout less
    /// [`SCRAPE_TIMEOUT_MARGIN`] when that is shorter. Waiting for a turn counts against it.
    pub async fn probe(&self, request: &ProbeRequest) -> Result<ProbeAnswer, ProbeRefusal> {
        let started = Instant::now();
        let configured = self.inner.configured.load_full().ok_or(ProbeRefusal::Off)?;
        let module_name = request.module.as_deref();
        let module = configured.config.module(module_name).ok_or_else(|| {
            ProbeRefusal::BadRequest(unknown_module(module_name, &configured.config))
        })?;
        if request.target.is_empty() {
            return Err(ProbeRefusal::BadRequest(
                "missing `target`: GET /probe?target=<MCP endpoint URL>[&module=<name>]".into(),
            ));
        }
        let target = ProbeTarget::parse(&request.target)
            .map_err(|e| ProbeRefusal::BadRequest(e.to_string()))?;
        if !module.targets.iter().any(|p| p.allows(&target)) {
            return Err(ProbeRefusal::NotAllowed(format!(
                "target {} (its path aside) is not on the allow-list of {}: no connection was \
                 made; add a pattern to `{}` if it should be probed",
                target.origin(),
                describe(module_name),
                match module_name {
                    None => "readiness.probe.targets".to_owned(),
                    Some(name) => format!("readiness.probe.modules.{name}.targets"),
                },
            )));
        }
        let server = match &request.server {
            Some(server) => checked_server(server)?,
            None => target.host_port(),
        };
        let deadline = deadline(module.timeout, request.scrape_timeout);

        // Admission: a bounded number run, as many wait (bounded too), the rest are told at once.
        let Ok(_admitted) = configured.admitted.clone().try_acquire_owned() else {
            return Err(busy(&configured.config));
        };
        let wait = MAX_QUEUE_WAIT.min(deadline / 2);
        let _running =
            match tokio::time::timeout(wait, configured.running.clone().acquire_owned()).await {
                Ok(Ok(permit)) => permit,
                _ => return Err(busy(&configured.config)),
            };
        let remaining = deadline.saturating_sub(started.elapsed());

        let connector = self.connector(
            &configured,
            module,
            module_name,
            &target,
            &server,
            remaining,
        )?;
        let mut outcome = attempt(&connector, &target, remaining, started).await;
        outcome.duration = started.elapsed();
        let key = format!(
            "{}\n{}\n{server}",
            module_name.unwrap_or(""),
            target.as_str()
        );
        let connects = self.inner.history.record(&key, outcome.result);
        tracing::debug!(
            target: "mcp_readiness::probe",
            server = %server,
            state = %outcome.state,
            reason = outcome.reason.as_deref().unwrap_or(""),
            "probe of {}: {}",
            target.shown(),
            outcome.state
        );
        let text = answer::render(&server, &outcome, &connects).map_err(render_failed)?;
        Ok(ProbeAnswer {
            server,
            outcome,
            text,
        })
    }

    /// The connector for one probe: a fresh one, or for an OAuth module the one kept for this
    /// target (one client reads and refreshes the credential store).
    fn connector(
        &self,
        configured: &Configured,
        module: &ProbeModule,
        module_name: Option<&str>,
        target: &ProbeTarget,
        server: &str,
        timeout: Duration,
    ) -> Result<Arc<HttpConnector>, ProbeRefusal> {
        let build = || {
            HttpConnector::new(server, Secret::new(target.as_str()), &module.headers)
                .map(|c| {
                    // The probe's own deadline ends the attempt first, naming the phase still
                    // running; the connector's timeout is only a backstop.
                    c.connect_timeout(timeout.saturating_add(DEADLINE_BACKSTOP))
                        .protocol_generations(module.generations)
                        .credentials_hint(credentials_hint(module_name))
                })
                .map_err(|e| ProbeRefusal::BadRequest(e.to_string()))
        };
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &module.oauth {
            let key = format!("{}\n{}", module_name.unwrap_or(""), target.as_str());
            let mut kept = configured.oauth.lock_unpoisoned();
            if let Some(connector) = kept.get(key.as_str()) {
                return Ok(connector.clone());
            }
            if kept.len() >= MAX_OAUTH_CONNECTORS {
                kept.clear();
            }
            let mut spec = oauth.clone();
            spec.reauthorize = None;
            let connector = Arc::new(build()?.oauth(spec));
            kept.insert(Box::from(key), connector.clone());
            return Ok(connector);
        }
        let _ = (configured, module_name, MAX_OAUTH_CONNECTORS);
        build().map(Arc::new)
    }
}

/// How much later than the probe's deadline the connector's own timeout falls.
const DEADLINE_BACKSTOP: Duration = Duration::from_secs(1);

/// What to do when a target rejects a probe's credentials: a probe's come from its module.
fn credentials_hint(module: Option<&str>) -> String {
    match module {
        Some(module) => format!(
            "the credentials of probe module `{module}` were rejected: renew them in \
             `readiness.probe.modules.{module}` (its `headers`, or its OAuth store: `mcp-readiness \
             oauth login`), then reload"
        ),
        None => "a probe without `module` sends no credentials: probe with `&module=NAME`, a \
                 module of `readiness.probe.modules` whose `headers` (or OAuth store) the server \
                 accepts"
            .into(),
    }
}

/// The most HTTP answers one probe's log keeps.
const MAX_HTTP_ANSWERS: usize = 32;

/// The probe's own resolution, connection and TLS handshake, then one MCP handshake and one
/// `tools/list` through `connector`, within `deadline`, classified; each phase timed from the
/// probe's start `probe_started` (see `phases.rs`).
async fn attempt(
    connector: &HttpConnector,
    target: &ProbeTarget,
    deadline: Duration,
    probe_started: Instant,
) -> ProbeOutcome {
    let clock = PhaseClock::new(probe_started);
    let answers = Arc::new(Mutex::new(Vec::new()));
    let events = {
        let answers = answers.clone();
        SessionEvents::ignore().on_http_answer(move |answer| {
            let mut answers = answers.lock_unpoisoned();
            if answers.len() < MAX_HTTP_ANSWERS {
                answers.push(answer);
            }
        })
    };
    let mut outcome = ProbeOutcome {
        state: State::Connecting,
        result: ConnectResult::Timeout,
        reason: None,
        tools: None,
        identity: None,
        expiries: Vec::new(),
        duration: Duration::ZERO,
        phases: Vec::new(),
        tls_certificate_expiry: None,
        http_answers: Vec::new(),
    };
    let run = async {
        outcome.tls_certificate_expiry = reach(target, &clock).await.tls_certificate_expiry;
        clock.begin("handshake");
        let connected = connector.connect(events).await;
        clock.end(
            connected.is_ok(),
            connected.as_ref().err().map(|e| e.message.clone()),
        );
        let session = match connected {
            Ok(session) => session,
            Err(error) => {
                outcome.state = state_of_failure(&error);
                outcome.result = error.result;
                outcome.reason = Some(error.message);
                return;
            }
        };
        outcome.identity = session.identity();
        // The handshake is done; the tool list decides `ready`.
        outcome.reason = Some("the server did not answer tools/list in time".into());
        clock.begin("tools_list");
        let listed = session.list_tools().await;
        clock.end(
            listed.is_ok(),
            listed.as_ref().ok().map(|tools| match tools.len() {
                1 => "1 tool".to_owned(),
                n => format!("{n} tools"),
            }),
        );
        session.shutdown();
        match listed {
            Ok(tools) => {
                outcome.state = State::Ready;
                outcome.result = ConnectResult::Ok;
                outcome.reason = None;
                outcome.tools = Some(tools.len());
            }
            Err(error) if crate::client::is_auth_failure(&error) => {
                outcome.state = State::Unauthenticated;
                outcome.result = ConnectResult::Unauthorized;
                outcome.reason = Some("tools/list: the credentials were rejected".into());
            }
            Err(error) => {
                outcome.state = State::Absent;
                outcome.result = ConnectResult::ProtocolError;
                outcome.reason = Some(format!(
                    "tools/list failed: {}",
                    crate::secret::redact(&error.to_string(), &[])
                ));
            }
        }
    };
    if tokio::time::timeout(deadline, run).await.is_err() && outcome.reason.is_none() {
        outcome.reason = Some(match clock.running() {
            Some(phase @ ("resolve" | "connect" | "tls")) => format!(
                "the {} was still running at the probe's deadline ({} ms): the network or \
                 the MCP server's host does not answer",
                match phase {
                    "resolve" => "name resolution",
                    "connect" => "TCP connection",
                    _ => "TLS handshake",
                },
                probe_started.elapsed().as_millis()
            ),
            _ => format!(
                "the handshake was still running at the probe's deadline ({} ms): the MCP \
                 server accepted the connection and did not finish answering in time",
                probe_started.elapsed().as_millis()
            ),
        });
    }
    outcome.phases = clock.finish();
    outcome.http_answers = std::mem::take(&mut *answers.lock_unpoisoned());
    if let Some(credentials) = connector.credentials() {
        outcome.expiries = credentials.borrow().expiries.clone();
    }
    outcome
}

/// The module's timeout, or the scrape's less the margin when that is shorter (half the scrape's
/// timeout when it is not longer than the margin).
fn deadline(module: Duration, scrape: Option<Duration>) -> Duration {
    let Some(scrape) = scrape else {
        return module;
    };
    let from_scrape = scrape
        .checked_sub(SCRAPE_TIMEOUT_MARGIN)
        .filter(|d| !d.is_zero())
        .unwrap_or(scrape / 2);
    module.min(from_scrape)
}

fn busy(config: &ProbeConfig) -> ProbeRefusal {
    ProbeRefusal::Busy(format!(
        "{} probes are running and as many are waiting: try again, raise \
         `readiness.probe.max_in_flight`, or spread the targets over more replicas (hashmod)",
        config.max_in_flight
    ))
}

fn describe(module: Option<&str>) -> String {
    match module {
        None => "the default module".to_owned(),
        Some(name) => format!("module `{}`", crate::secret::escape_controls(name)),
    }
}

fn unknown_module(name: Option<&str>, config: &ProbeConfig) -> String {
    let shown: String = name.unwrap_or("").chars().take(64).collect();
    let known: Vec<&str> = config.modules.keys().map(String::as_str).collect();
    format!(
        "unknown module `{}`: `readiness.probe.modules` has {}",
        crate::secret::escape_controls(&shown),
        if known.is_empty() {
            "none".to_owned()
        } else {
            known.join(", ")
        }
    )
}

/// A probe whose answer could not be rendered: the exporter's own fault (`500`), named as such.
fn render_failed(error: crate::metrics::MetricsError) -> ProbeRefusal {
    ProbeRefusal::RenderFailed(format!(
        "the probe ran but mcp-readiness could not render its answer as metrics ({error}): a \
         fault in the exporter, not in the request or the target; report it"
    ))
}

fn checked_server(server: &str) -> Result<String, ProbeRefusal> {
    if server.is_empty() || server.len() > MAX_SERVER_LABEL || server.chars().any(char::is_control)
    {
        return Err(ProbeRefusal::BadRequest(format!(
            "`server` must be 1 to {MAX_SERVER_LABEL} bytes without control characters"
        )));
    }
    Ok(server.to_owned())
}

/// Refuses a module whose headers are not valid HTTP, or that uses OAuth in a build without it.
fn check_module(name: &str, module: &ProbeModule) -> Result<(), ProbeSetupError> {
    let problem = |problem: String| ProbeSetupError {
        module: name.to_owned(),
        problem,
    };
    match HttpConnector::new(name, Secret::new("http://127.0.0.1/"), &module.headers) {
        Ok(_) => {}
        Err(SpecError::Header { header, .. }) => {
            return Err(problem(format!(
                "header `{header}` is not a valid HTTP header; fix `headers`"
            )));
        }
        Err(SpecError::ReservedHeader { header, .. }) => {
            return Err(problem(format!(
                "header `{header}` is one the MCP client sets itself; remove it from `headers`"
            )));
        }
        Err(e) => return Err(problem(e.to_string())),
    }
    if module.oauth.is_some() && !cfg!(feature = "oauth") {
        return Err(problem(
            crate::client::spec::error::OAUTH_FEATURE_MISSING.into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_that_cannot_be_rendered_is_a_500_that_names_the_exporter() {
        let refusal = render_failed(crate::metrics::MetricsError::Declare {
            name: "mcp_readiness_probe_success",
            source: prometheus::Error::Msg("bad".into()),
        });
        assert_eq!(refusal.status(), 500);
        assert!(
            refusal.to_string().contains("could not render its answer")
                && refusal
                    .to_string()
                    .contains("not in the request or the target"),
            "{refusal}"
        );
    }

    #[test]
    fn the_deadline_is_the_scrapes_timeout_less_the_margin_when_shorter_than_the_modules() {
        let s = Duration::from_secs;
        assert_eq!(deadline(s(10), None), s(10));
        assert_eq!(deadline(s(10), Some(s(5))), Duration::from_millis(4500));
        assert_eq!(deadline(s(2), Some(s(5))), s(2));
        assert_eq!(
            deadline(s(10), Some(Duration::from_millis(400))),
            Duration::from_millis(200)
        );
    }

    #[tokio::test]
    async fn a_disabled_prober_refuses_with_404_and_an_unknown_module_with_400() {
        let request = ProbeRequest {
            target: "http://127.0.0.1:1/mcp".into(),
            ..Default::default()
        };
        let off = Prober::disabled().probe(&request).await.unwrap_err();
        assert_eq!(off.status(), 404);
        let prober = Prober::new(ProbeConfig::allowing(Vec::new())).unwrap();
        let unknown = prober
            .probe(&ProbeRequest {
                module: Some("nope".into()),
                ..request.clone()
            })
            .await
            .unwrap_err();
        assert_eq!(unknown.status(), 400);
        assert!(
            unknown.to_string().contains("unknown module `nope`"),
            "{unknown}"
        );
    }
}
