//! `mcp-readiness check`: the unattended pre-flight.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use std::time::{Duration, SystemTime};

use mcp_readiness::Metrics;
use mcp_readiness::client::Renewal;
use mcp_readiness::exporter::{PushError, PushTarget};
use mcp_readiness::plan::{Run, RunSummary, Step, StepOutcome};
use mcp_readiness::{Budget, resolve::CapabilityCache};

use mcp_readiness::secret::escape_controls;

use super::common::{
    EXIT_INVALID, hub_options, load_config, parse_duration, parse_positive_duration, print_stdout,
    start_hub, with_progress,
};
use super::signals::{StopSignals, run_until_stop_signal};

/// Arguments of `mcp-readiness check`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The `.mcp.json`-style configuration file.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// How long to wait for servers still connecting (overrides `readiness.budget`).
    #[arg(long, value_name = "D", value_parser = parse_duration, allow_hyphen_values = true)]
    budget: Option<Duration>,
    /// How often to look again while waiting (overrides `readiness.poll`).
    #[arg(long, value_name = "D", value_parser = parse_duration, allow_hyphen_values = true)]
    poll: Option<Duration>,
    /// Print the JSON run record instead of the table and hand-off note.
    #[arg(long)]
    json: bool,
    /// Push the run's metrics and the run record's counts to the Pushgateway at this URL.
    #[arg(long, value_name = "URL")]
    push: Option<String>,
    /// The `job` of the pushed grouping key.
    #[arg(
        long,
        value_name = "JOB",
        default_value = "mcp-readiness-check",
        requires = "push"
    )]
    push_job: String,
    /// An extra label of the pushed grouping key, NAME=VALUE (repeatable).
    #[arg(long, value_name = "NAME=VALUE", requires = "push")]
    push_label: Vec<String>,
    /// How long until the next run (overrides `readiness.schedule.every`): credentials that
    /// cannot renew themselves and expire before it are named now (a warning; the exit code
    /// stays what the run decides), credentials the hub renews whose access token would expire
    /// before it are renewed now (a refused renewal reads `unauthenticated`), and `--push`
    /// pushes when it is due.
    #[arg(long, value_name = "D", value_parser = parse_positive_duration, allow_hyphen_values = true)]
    next_run_in: Option<Duration>,
}

/// The push target of `--push`, `--push-job` and `--push-label`.
fn push_target(args: &Args) -> Result<Option<PushTarget>, PushError> {
    let Some(url) = &args.push else {
        return Ok(None);
    };
    let mut target = PushTarget::try_new(url, &args.push_job)?;
    for label in &args.push_label {
        target = target.label(label)?;
    }
    Ok(Some(target))
}

pub(crate) async fn run(args: Args) -> ExitCode {
    let config = match load_config(&args.config) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let configured = config.readiness.budget;
    let budget = match Budget::try_new(
        args.budget.unwrap_or(configured.wait()),
        args.poll.unwrap_or(configured.poll()),
    ) {
        Ok(budget) => budget,
        Err(err) => {
            // Name what was given: the flags, or the file's values they were checked against.
            let given = match (args.budget.is_some(), args.poll.is_some()) {
                (true, true) => "--budget/--poll".to_owned(),
                (true, false) => "--budget (with readiness.poll)".to_owned(),
                (false, true) => "--poll (with readiness.budget)".to_owned(),
                (false, false) => format!("{}: readiness", args.config.display()),
            };
            err_line!("error: {given}: {err}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let push = match push_target(&args) {
        Ok(push) => push,
        Err(err) => {
            err_line!("error: {err}");
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let steps: Vec<Step> = if config.readiness.steps.is_empty() {
        config
            .servers
            .iter()
            .filter_map(|s| Step::server(&s.name))
            .collect()
    } else {
        config.readiness.steps.iter().map(Step::from).collect()
    };
    // Before any child starts: a stop signal must find every child to stop.
    let mut signals = match StopSignals::install() {
        Ok(signals) => signals,
        Err(code) => return code,
    };
    // The next run, counted from this one's start (a timer's schedule).
    let next_run = args
        .next_run_in
        .or(config.readiness.schedule_every)
        .map(|every| SystemTime::now() + every);
    let metrics = Metrics::new();
    let mut options = hub_options(&config)
        .health_interval(None)
        .event_sink(metrics.clone());
    if let Some(at) = next_run {
        // A credential the hub renews itself whose access token would run out before the next
        // run is renewed at connect: a refused renewal is found now (`unauthenticated`).
        options = options.renew_credentials_expiring_before(at);
    }
    let hub = match start_hub(&args.config, config.servers.clone(), options) {
        Ok(hub) => hub,
        Err(code) => return code,
    };
    // The run is one trace: connection attempts and step resolutions are children of its span.
    let mut run = Run::start(steps);
    run.in_scope(|| hub.connect_all());
    let cache = CapabilityCache::new(hub.clone()).with_budget(budget);

    let work = async {
        let resolve = run.preflight(&cache);
        if std::io::stderr().is_terminal() && !args.json {
            let bar = indicatif::ProgressBar::new_spinner();
            with_progress(&hub, budget, &bar, resolve).await
        } else {
            resolve.await
        }
    };
    if let Err(code) = run_until_stop_signal(&mut signals, &hub, work).await {
        return code;
    }
    // The forecast: what will stop the next run unless a person acts before it.
    let renewals = hub.renewals();
    let expiring = next_run.map(|at| {
        let expiring = metrics.credentials_expiring_before(at);
        run.in_scope(|| {
            for (server, expiry) in &expiring {
                tracing::warn!(
                    server = %escape_controls(server),
                    credential = expiry.kind.as_str(),
                    expires_at = %humantime::format_rfc3339_seconds(expiry.expires_at),
                    next_run = %humantime::format_rfc3339_seconds(at),
                    action = "reauthorize",
                    "a credential that cannot renew itself expires before the next run"
                );
            }
            for (server, renewal) in &renewals {
                if let Renewal::NotRenewed { reason } = renewal {
                    tracing::warn!(
                        server = %escape_controls(server),
                        reason = %escape_controls(reason),
                        next_run = %humantime::format_rfc3339_seconds(at),
                        "a credential that renews itself could not be renewed ahead of the next run"
                    );
                }
            }
        });
        expiring
    });
    let mut summary = run.finish();
    let mut warnings = Vec::new();
    if let (Some(at), Some(expiring)) = (next_run, expiring) {
        let mut servers: Vec<String> = Vec::new();
        for (server, expiry) in &expiring {
            warnings.push(forecast_line(server, expiry, at));
            if !servers.contains(server) {
                servers.push(server.clone());
            }
        }
        for (server, renewal) in &renewals {
            if let Renewal::NotRenewed { reason } = renewal {
                warnings.push(not_renewed_line(server, reason, at));
            }
        }
        let renewed = renewals
            .iter()
            .filter_map(|(server, renewal)| match renewal {
                Renewal::Renewed { expires_at } => Some((server.to_string(), *expires_at)),
                _ => None,
            });
        summary = summary.with_next_run(at, servers).with_renewed(renewed);
    }
    let mut push_failed = None;
    if let Some(target) = &push {
        for server in &config.servers {
            metrics.server(&server.name).set_wait_budget(budget.wait());
        }
        // The run's own answer is still printed; a failed push is said after it, and is exit 1.
        push_failed = mcp_readiness::exporter::push(&metrics, target, Some(&summary))
            .await
            .err();
    }
    // After the push: shutting down marks every server absent ("shut down").
    hub.shutdown().await;
    let output = if args.json {
        match serde_json::to_string(&summary) {
            Ok(json) => json + "\n",
            Err(err) => {
                err_line!("error: could not render the run record: {err}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        format!(
            "{}\n{}\n",
            render_table(&summary.outcomes),
            handoff_note(&summary)
        )
    };
    if let Err(code) = print_stdout(&output) {
        return code;
    }
    for warning in &warnings {
        err_line!("{warning}");
    }
    if let Some(err) = &push_failed {
        err_line!("error: {err}");
    }
    if summary.all_required_ready() && push_failed.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `warning: the bearer token of `jwt` expires at 2026-12-04T18:00:00Z, before the next run at
/// 2026-12-04T22:00:00Z: re-authorize `jwt` now (action reauthorize)`.
fn forecast_line(
    server: &str,
    expiry: &mcp_readiness::state::CredentialExpiry,
    next_run: SystemTime,
) -> String {
    let server = escape_controls(server);
    let when = if expiry.expires_at <= SystemTime::now() {
        "expired at"
    } else {
        "expires at"
    };
    format!(
        "warning: the {} of `{server}` cannot renew itself and {when} {}, before the next run at {}: \
         re-authorize `{server}` now (a new token, or a new grant for its credential store; action reauthorize)",
        expiry.kind.describe(),
        humantime::format_rfc3339_seconds(expiry.expires_at),
        humantime::format_rfc3339_seconds(next_run),
    )
}

/// `warning: the access token of `vault` expires before the next run at …, and renewing it now
/// failed: …; the next run may find it expired`.
fn not_renewed_line(server: &str, reason: &str, next_run: SystemTime) -> String {
    format!(
        "warning: the access token of `{}` expires before the next run at {} and could not be \
         renewed now: {}; it works now, but the next run may find it expired",
        escape_controls(server),
        humantime::format_rfc3339_seconds(next_run),
        escape_controls(reason),
    )
}

/// The hand-off note for a terminal: every line with its control characters escaped (server
/// names, reasons and a child's stderr are untrusted text).
pub(crate) fn handoff_note(summary: &RunSummary) -> String {
    summary
        .handoff_note()
        .lines()
        .map(escape_controls)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The table of decisions: one row per step.
pub(crate) fn render_table(outcomes: &[StepOutcome]) -> String {
    let headers = ["STEP", "TOOL", "STATE", "WAITED", "DECISION", "REASON"];
    let rows: Vec<[String; 6]> = outcomes
        .iter()
        .map(|o| {
            [
                escape_controls(&o.id).into_owned(),
                escape_controls(&o.tool).into_owned(),
                o.state.to_string(),
                format!("{} ms", o.waited_ms),
                o.decision.as_str().to_owned(),
                escape_controls(o.decision.reason()).into_owned(),
            ]
        })
        .collect();
    let mut widths = headers.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[&str]| {
        let last = cells.len() - 1;
        for (i, cell) in cells.iter().enumerate() {
            out.push_str(cell);
            if i != last {
                // By hand: `format!("{:<width$}")` panics beyond 65,535 columns.
                let pad = widths[i].saturating_sub(cell.chars().count()) + 2;
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push('\n');
    };
    line(&headers);
    for row in &rows {
        line(&row.each_ref().map(String::as_str));
    }
    out
}
