//! `mcp-readiness demo`: the embedded default. Starts real MCP servers on this machine in every
//! state, runs an unattended run through `ReadinessLayer` and the `Hub` (the code a service
//! uses), prints the decisions, the hand-off note and the run record, and serves `/metrics` and
//! the status page, repeating the run so the metrics move.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use mcp_readiness::Metrics;
use mcp_readiness::ReadinessLayer;
use mcp_readiness::exporter::{self, MetricsServer};
use mcp_readiness::plan::{Run, RunSummary, Step, StepOutcome};
use mcp_readiness::{Budget, Hub, HubOptions};
use mcp_readiness_cli::demo::{self, DemoHttpServers};
use tower::ServiceBuilder;

use super::common::{EXIT_INVALID, parse_duration, print_stderr, print_stdout, with_progress};
use super::signals::{StopSignals, run_until_stop_signal};

/// Arguments of `mcp-readiness demo`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where to serve `/metrics` and the status page (default 127.0.0.1:9464, or any free
    /// loopback port when that one is taken).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Exit 0 after the first run (stopping every server it started).
    #[arg(long)]
    once: bool,
    /// How often the run repeats after the first (until Ctrl-C).
    #[arg(long, value_name = "D", value_parser = parse_duration, default_value = "30s")]
    every: Duration,
}

/// Arguments of `mcp-readiness demo-server NAME`: one of the demo's MCP servers, to test an
/// integration against.
#[derive(Debug, clap::Args)]
pub(crate) struct ServerArgs {
    /// `notes` (ready at once; offers `search_notes` and `read_note`), `calendar` (ready after
    /// 6 s: `connecting` first), `warehouse` (takes 10 min: still `connecting` when a budget ends),
    /// `wiki` or `tickets` (ready at once).
    name: String,
    /// Serve over streamable HTTP at `http://ADDR/mcp` instead of stdio (port 0: any free port;
    /// the URL is printed on stdout). It answers nothing until its startup delay has passed.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// With --http: demand `Authorization: Bearer TOKEN` and answer 401 with a challenge to any
    /// other request, so a client without it reads `unauthenticated`.
    #[arg(long, value_name = "TOKEN", requires = "http")]
    token: Option<String>,
    /// Replace the server's startup delay (e.g. `0s`, or `30s` for a server that stays
    /// `connecting` through a 20 s budget).
    #[arg(long, value_name = "D", value_parser = parse_duration)]
    delay: Option<Duration>,
}

/// Runs one demo server: on stdin / stdout, or over streamable HTTP with `--http` until SIGINT or
/// SIGTERM (exit 0).
pub(crate) async fn serve_one(args: ServerArgs) -> ExitCode {
    let Some(mut server) = demo::server(&args.name) else {
        err_line!(
            "error: no demo server `{}`: use one of {}",
            args.name.escape_debug(),
            demo::STDIO_SERVERS
                .iter()
                .chain(demo::HTTP_SERVERS.iter())
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        );
        return ExitCode::from(EXIT_INVALID);
    };
    if let Some(delay) = args.delay {
        server = server.with_startup_delay(delay);
    }
    let served = match args.http {
        None => server.serve_stdio().await,
        Some(addr) => {
            let stop = async {
                use tokio::signal::unix::{SignalKind, signal};
                match (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                ) {
                    (Ok(mut interrupt), Ok(mut terminate)) => {
                        tokio::select! {
                            _ = interrupt.recv() => {}
                            _ = terminate.recv() => {}
                        }
                    }
                    _ => std::future::pending::<()>().await,
                }
            };
            let name = server.name;
            server
                .serve_http(
                    addr,
                    args.token,
                    |bound| {
                        // Nowhere to report a closed stdout; the server runs all the same.
                        let _ = print_stdout(&format!(
                            "demo server `{name}` listening on http://{bound}/mcp\n"
                        ));
                    },
                    stop,
                )
                .await
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            err_line!("error: {err}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) async fn run(args: Args) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => {
            err_line!(
                "error: could not find this program's own path to start the demo servers: {err}"
            );
            return ExitCode::FAILURE;
        }
    };
    let http = match DemoHttpServers::start(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        &demo::ACCEPTED_TOKENS,
    )
    .await
    {
        Ok(http) => http,
        Err(err) => {
            err_line!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    // Before any child starts: a stop signal must find every child to stop.
    let mut signals = match StopSignals::install() {
        Ok(signals) => signals,
        Err(code) => return code,
    };
    let fleet = demo::fleet(&exe, &http);
    let metrics = Metrics::new();
    let options = HubOptions::builder()
        .event_sink(metrics.clone())
        // `warehouse` takes ten minutes to start: let it, so it reads `connecting`, not `absent`.
        .connect_timeout(Duration::from_secs(11 * 60))
        .health_interval(Some(Duration::from_secs(10)));
    let hub = match Hub::new(fleet.clone(), options) {
        Ok(hub) => hub,
        Err(err) => {
            err_line!("error: the demo fleet is invalid (a bug): {err}");
            return ExitCode::FAILURE;
        }
    };
    for server in &fleet {
        metrics.server(&server.name).set_wait_budget(demo::BUDGET);
    }
    let exporter = match bind(&metrics, args.listen).await {
        Ok(exporter) => exporter,
        Err(err) => {
            err_line!("error: {err}");
            hub.shutdown().await;
            return ExitCode::from(EXIT_INVALID);
        }
    };
    let code = match run_until_stop_signal(
        &mut signals,
        &hub,
        demo_loop(&args, &hub, &metrics, &exporter),
    )
    .await
    {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(code)) | Err(code) => code,
    };
    hub.shutdown().await;
    let _ = exporter.shutdown().await;
    drop(http);
    code
}

/// Serves the exporter on `listen`, or on the default address, or (when that is taken) on any
/// free loopback port.
async fn bind(
    metrics: &Metrics,
    listen: Option<SocketAddr>,
) -> Result<MetricsServer, exporter::ServeError> {
    match listen {
        Some(addr) => exporter::serve(metrics.clone(), addr).await,
        None => match exporter::serve(metrics.clone(), exporter::DEFAULT_LISTEN).await {
            Ok(server) => Ok(server),
            Err(_) => exporter::serve(metrics.clone(), SocketAddr::from(([127, 0, 0, 1], 0))).await,
        },
    }
}

async fn demo_loop(
    args: &Args,
    hub: &Hub,
    metrics: &Metrics,
    exporter: &MetricsServer,
) -> Result<(), ExitCode> {
    let addr = exporter.local_addr();
    let steps = demo::steps();
    print_stdout(&intro(addr, &steps))?;
    let budget = match Budget::try_new(demo::BUDGET, demo::POLL) {
        Ok(budget) => budget,
        Err(err) => unreachable!("the demo budget is valid: {err}"),
    };
    let layer = ReadinessLayer::builder(hub.clone())
        .budget(budget)
        .metrics(metrics.clone())
        .build();
    let tools = ServiceBuilder::new().layer(layer).service(hub.clone());

    let summary = one_run(hub, &tools, &steps, budget, true).await;
    let json = serde_json::to_string(&summary).map_err(|err| {
        err_line!("error: could not render the run record: {err}");
        ExitCode::FAILURE
    })?;
    print_stdout(&format!(
        "\n{}\n{}\n\nrun record:\n{json}\n",
        super::check::render_table(&summary.outcomes),
        super::check::handoff_note(&summary)
    ))?;
    if args.once {
        return Ok(());
    }
    print_stdout(&format!(
        "\nstill serving http://{addr}/status (status page) and http://{addr}/metrics; \
         the run repeats every {}. Ctrl-C stops every demo server.\n",
        humantime::format_duration(args.every)
    ))?;
    for n in 2.. {
        tokio::time::sleep(args.every).await;
        let summary = one_run(hub, &tools, &steps, budget, false).await;
        print_stdout(&format!(
            "run {n}: {} of {} steps ran ({})\n",
            summary.ran,
            summary.outcomes.len(),
            summary
                .by_state
                .iter()
                .map(|(state, count)| format!("{count} {state}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))?;
    }
    Ok(())
}

fn intro(addr: SocketAddr, steps: &[Step]) -> String {
    let mut text = String::from(
        "mcp-readiness demo: real MCP servers on this machine, one in every state\n\n",
    );
    let rows = [
        ("notes", "stdio", "ready at once, but offers no export_pdf"),
        ("calendar", "stdio", "ready after about 6 s"),
        (
            "warehouse",
            "stdio",
            "takes 10 min to start: still connecting when the budget ends",
        ),
        (
            "wiki",
            "http",
            "loopback streamable HTTP, right bearer token",
        ),
        (
            "tickets",
            "http",
            "loopback streamable HTTP, stale bearer token: 401",
        ),
        ("crm", "stdio", "its command does not exist"),
    ];
    for (name, transport, what) in rows {
        text.push_str(&format!("  {name:<10} {transport:<6} {what}\n"));
    }
    text.push_str(&format!(
        "\nstatus page  http://{addr}/status\nmetrics      http://{addr}/metrics\n\n\
         running {} steps through ReadinessLayer + Hub, budget {} s, poll {} s...\n",
        steps.len(),
        demo::BUDGET.as_secs(),
        demo::POLL.as_secs()
    ));
    text
}

/// One unattended run: every step at once, in one trace (`readiness run`), with a line per step
/// as it is decided (and, on a terminal, which servers are still connecting).
async fn one_run<S>(
    hub: &Hub,
    tools: &S,
    steps: &[Step],
    budget: Budget,
    verbose: bool,
) -> RunSummary
where
    S: tower::Service<
            mcp_readiness::ToolCall,
            Response = rmcp::model::CallToolResult,
            Error = tower::BoxError,
        > + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    let mut run = Run::start(steps.iter().cloned());
    let progress =
        (verbose && std::io::stderr().is_terminal()).then(indicatif::ProgressBar::new_spinner);
    run.in_scope(|| hub.connect_all());
    let work = run.steps_each(tools.clone(), |outcome| {
        if verbose {
            let line = step_line(outcome);
            match &progress {
                Some(bar) => bar.println(line),
                None => print_stderr(&format!("{line}\n")),
            }
        }
    });
    match &progress {
        Some(bar) => with_progress(hub, budget, bar, work).await,
        None => work.await,
    }
    run.finish()
}

fn step_line(outcome: &StepOutcome) -> String {
    format!(
        "  {:<13} {:<16} {:>6} ms  {}",
        outcome.id,
        outcome.state.as_str(),
        outcome.waited_ms,
        outcome.decision.as_str()
    )
}
