//! `mcp-readiness serve`: the standalone exporter for a configured fleet.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use mcp_readiness::Metrics;
use mcp_readiness::exporter;
use mcp_readiness::probe::Prober;
use mcp_readiness::{Hub, state::ConnectionEvent};
use tokio::signal::unix::{SignalKind, signal};

use super::common::{EXIT_INVALID, hub_options, load_config, print_stdout, start_hub};

/// Arguments of `mcp-readiness serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The `.mcp.json`-style configuration file (re-read on SIGHUP).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Where to serve `/metrics` (loopback by default).
    #[arg(long, value_name = "ADDR", default_value_t = exporter::DEFAULT_LISTEN)]
    listen: SocketAddr,
}

/// Logs each state change as one line: server, old and new state, reason.
fn log_event(event: &ConnectionEvent) {
    match event {
        ConnectionEvent::StateChanged {
            server,
            from,
            to,
            reason,
        } => tracing::info!(
            target: "mcp_readiness::serve",
            server = %server,
            from = %from,
            to = %to,
            reason = reason.as_deref().unwrap_or(""),
            "server `{server}` {from} -> {to}{}",
            reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default()
        ),
        ConnectionEvent::Reconnected { server } => {
            tracing::info!(target: "mcp_readiness::serve", server = %server, "server `{server}` reconnected")
        }
        _ => {}
    }
}

pub(crate) async fn run(args: Args) -> ExitCode {
    let config = match load_config(&args.config) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let metrics = Metrics::new();
    // `GET /probe`: off unless `readiness.probe` is configured; a reload turns it on or off.
    let prober = Prober::disabled();
    if let Err(err) = prober.reconfigure(config.readiness.probe.clone()) {
        err_line!("error: {}: {err}", args.config.display());
        return ExitCode::from(EXIT_INVALID);
    }
    // The address first: a port that is taken ends the run before any server is known, so the
    // log holds no transitions of servers that never started.
    let server =
        match exporter::serve_with_probe(metrics.clone(), prober.clone(), args.listen).await {
            Ok(server) => server,
            Err(err) => {
                err_line!("error: {err}");
                return ExitCode::from(EXIT_INVALID);
            }
        };
    let options = hub_options(&config)
        .event_sink(metrics.clone())
        .event_sink(log_event);
    let hub = match start_hub(&args.config, config.servers.clone(), options) {
        Ok(hub) => hub,
        Err(code) => {
            let _ = server.shutdown().await;
            return code;
        }
    };
    publish_readiness(&hub, &metrics, &config);
    metrics.probe_modules_configured(probe_modules(&config));
    metrics.config_reloaded(true);
    // Before any child starts: a signal arriving earlier would end the process and leave them.
    let (mut hangup, mut terminate, mut interrupt) = match (
        signal(SignalKind::hangup()),
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(h), Ok(t), Ok(i)) => (h, t, i),
        _ => {
            err_line!(
                "error: could not install the signal handlers; without them a stop signal would \
                 leave child servers running, so nothing was started"
            );
            hub.shutdown().await;
            return ExitCode::FAILURE;
        }
    };
    hub.connect_all();
    // An address and bare paths, not a URL: log lines have every URL path redacted (a path may
    // carry a token), and `http://…/[redacted]` would hide our own `/metrics`.
    tracing::info!(
        target: "mcp_readiness::serve",
        "serving /metrics and /status on {} for {} server(s) from {}{}",
        server.local_addr(),
        config.servers.len(),
        args.config.display(),
        if prober.is_enabled() { ", and /probe?target= for the targets of readiness.probe" } else { "" }
    );
    // Printed on stdout too, so scripts (and tests) can find the bound port.
    if let Err(code) = print_stdout(&format!(
        "listening on http://{}/metrics\n",
        server.local_addr()
    )) {
        hub.shutdown().await;
        return code;
    }

    // The file is read on a blocking thread, outside the lock every render needs, while this
    // loop keeps answering signals: a path that blocks (a hung network file system) delays only
    // the reload. A SIGHUP during a read asks for one more read after it.
    let (read_done, mut reads) = tokio::sync::mpsc::channel::<Loaded>(1);
    let mut reading = false;
    let mut again = false;
    loop {
        tokio::select! {
            _ = hangup.recv() => {
                if reading {
                    again = true;
                } else {
                    reading = true;
                    read_config(&args.config, read_done.clone());
                }
            }
            Some(loaded) = reads.recv() => {
                metrics.reload(|| reload(&hub, &metrics, &prober, &args.config, loaded));
                reading = std::mem::take(&mut again);
                if reading {
                    read_config(&args.config, read_done.clone());
                }
            }
            _ = terminate.recv() => break,
            _ = interrupt.recv() => break,
        }
    }
    tracing::info!(target: "mcp_readiness::serve", "shutting down: stopping every server");
    hub.shutdown().await;
    let _ = server.shutdown().await;
    ExitCode::SUCCESS
}

/// The per-server wait budgets (in the Hub, for `mcp_readiness_wait_budget_seconds`) and the
/// declared steps' series of `config`.
fn publish_readiness(hub: &Hub, metrics: &Metrics, config: &mcp_readiness::Config) {
    for server in &config.servers {
        let budget = config.readiness.budget_for(&server.name);
        hub.set_server_budget(
            &server.name,
            config
                .readiness
                .servers
                .get(&*server.name)
                .and_then(|s| s.budget),
        );
        metrics.server(&server.name).set_wait_budget(budget.wait());
    }
    for step in &config.readiness.steps {
        metrics
            .server(step.tool.server())
            .tool(step.tool.tool())
            .declare();
    }
}

/// A configuration file read for a reload, or why it could not be.
type Loaded = Result<mcp_readiness::Config, String>;

/// Reads `path` on a blocking thread and sends what it read to `done` (see the loop in [`run`]).
fn read_config(path: &std::path::Path, done: tokio::sync::mpsc::Sender<Loaded>) {
    let path = path.to_owned();
    tokio::spawn(async move {
        let read = tokio::task::spawn_blocking(move || mcp_readiness::Config::load(&path))
            .await
            .map_err(|e| format!("the read of the configuration failed: {e}"))
            .and_then(|loaded| loaded.map_err(|e| e.to_string()));
        let _ = done.send(read).await;
    });
}

/// The probe modules `GET /probe` answers with (0: probes off): `mcp_readiness_probe_modules`,
/// which tells a probe-only `serve` apart from one that has no server configured.
fn probe_modules(config: &mcp_readiness::Config) -> usize {
    config
        .readiness
        .probe
        .as_ref()
        .map_or(0, mcp_readiness::probe::ProbeConfig::module_count)
}

/// SIGHUP: added servers start, removed ones stop (their series go away), changed ones are
/// replaced, and every unauthenticated server tries its credentials again (changed or not: the
/// fix may have been on the server's side). An entry this build
/// cannot serve (a URL that is not http(s), a header the MCP client sets itself, an `oauth` block without
/// the feature) is that server's problem alone, as at start: it reads `absent` with a reason
/// naming the key or feature, and the rest of the file applies. A file that cannot be read or
/// parsed, bad `readiness` options or a bad probe configuration refuse the whole reload: nothing
/// changes and `mcp_readiness_config_last_reload_successful` reads 0 until a reload succeeds.
fn reload(hub: &Hub, metrics: &Metrics, prober: &Prober, path: &std::path::Path, loaded: Loaded) {
    let refused = |err: &dyn std::fmt::Display| {
        tracing::error!(target: "mcp_readiness::serve", "reload refused, keeping the running configuration: {err}");
        metrics.config_reloaded(false);
    };
    let config = match loaded {
        Ok(config) => config,
        Err(err) => return refused(&err),
    };
    // The options must be usable before anything changes. A server entry this build cannot
    // serve is not checked here: `replace_server` makes it `absent` with its reason, as `Hub::new`
    // does at start (the file's names were checked when it was parsed).
    if let Err(err) = super::common::hub_options(&config).build() {
        return refused(&format!("{}: {err}", path.display()));
    }
    // The probe configuration is checked (and swapped) before the servers change.
    if let Err(err) = prober.reconfigure(config.readiness.probe.clone()) {
        return refused(&format!("{}: {err}", path.display()));
    }
    let wanted: BTreeSet<&str> = config.servers.iter().map(|s| &*s.name).collect();
    for status in hub.servers() {
        if !wanted.contains(&*status.name) {
            hub.remove_server(&status.name);
            hub.set_server_budget(&status.name, None);
        }
    }
    for spec in &config.servers {
        if let Err(err) = hub.replace_server(spec.clone()) {
            tracing::error!(target: "mcp_readiness::serve", "reload: server `{}`: {err}", spec.name);
        }
    }
    // A reload is a person saying "try again": an unauthenticated server whose entry did not
    // change (its server was fixed, or its token was renewed where the entry reads it) tries its
    // credentials once more instead of waiting for them to change.
    for spec in &config.servers {
        hub.reset_auth(&spec.name);
    }
    publish_readiness(hub, metrics, &config);
    hub.connect_all();
    metrics.probe_modules_configured(probe_modules(&config));
    metrics.config_reloaded(true);
    tracing::info!(target: "mcp_readiness::serve", "reloaded {}: {} server(s)", path.display(), config.servers.len());
}
