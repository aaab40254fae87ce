//! The `mcp-readiness` command line. See `mcp-readiness --help`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `eprintln!` that cannot panic: when stderr is full or broken the message is lost instead
/// (there is nowhere left to report it), and the command still ends with its exit code.
macro_rules! err_line {
    ($($arg:tt)*) => {
        $crate::commands::common::print_stderr(&format!("{}\n", format_args!($($arg)*)))
    };
}

mod commands;

/// Readiness for MCP tool calls: connecting, unauthenticated or absent, resolved at the point of use.
#[derive(Debug, Parser)]
#[command(name = "mcp-readiness", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start real MCP servers on this machine in every state, run an unattended run through the
    /// readiness layer, print the decisions and the run record, and serve /metrics and a live
    /// status page (until Ctrl-C, or once with --once).
    Demo(commands::demo::Args),
    /// Unattended pre-flight: resolve every step (or server) within the budget and say who has to
    /// do what. Exit 0 when every required step is ready, 1 otherwise, 2 on invalid input.
    Check(commands::check::Args),
    /// One tool call (`mcp__server__tool`) through the readiness layer and the Hub, as a service
    /// would make it: prints the state, the time waited and the result, or why it is not ready and
    /// the action. Exit 0 when the call ran and its result is not an error, 1 when the server is
    /// not ready or the call failed, 2 on invalid input.
    Call(commands::call::Args),
    /// Standalone exporter: supervise a configured fleet and serve /metrics. SIGHUP reloads.
    Serve(commands::serve::Args),
    /// Replay the design's virtual-clock scenarios and print their tables.
    Simulate(commands::simulate::Args),
    /// OAuth for configured servers: `oauth login` authorizes one and writes its credential store.
    Oauth(commands::oauth::Args),
    /// One of the demo's MCP servers, to test an integration against: over stdio, or streamable
    /// HTTP with --http ADDR; each state on demand (ready, connecting for a while with --delay,
    /// unauthenticated with --token, absent when stopped).
    DemoServer(commands::demo::ServerArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Simulate(args) = cli.command {
        return commands::simulate::run(args);
    }
    if let Command::DemoServer(args) = cli.command {
        // A child of `demo`: no telemetry of its own, stdout is the MCP pipe.
        return match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime.block_on(commands::demo::serve_one(args)),
            Err(err) => {
                err_line!("error: could not start the async runtime: {err}");
                ExitCode::FAILURE
            }
        };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            err_line!("error: could not start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        // Spans go to OTLP when OTEL_EXPORTER_OTLP_* is set; silent otherwise.
        let telemetry = match mcp_readiness::telemetry::init() {
            Ok(guard) => Some(guard),
            Err(err) => {
                err_line!("warning: tracing export disabled: {err}");
                None
            }
        };
        // A fleet of stdio servers needs ~4 descriptors each: lift the soft limit to the hard one.
        match mcp_readiness::supervise::raise_open_file_limit() {
            Ok(limit) => tracing::debug!(
                before = limit.before,
                now = limit.now,
                hard = limit.hard,
                "open-file limit"
            ),
            Err(err) => tracing::debug!("open-file limit left as it is: {err}"),
        }
        let code = match cli.command {
            Command::Demo(args) => commands::demo::run(args).await,
            Command::Check(args) => commands::check::run(args).await,
            Command::Call(args) => commands::call::run(args).await,
            Command::Serve(args) => commands::serve::run(args).await,
            Command::Oauth(args) => commands::oauth::run(args).await,
            Command::Simulate(_) | Command::DemoServer(_) => ExitCode::SUCCESS,
        };
        // The run's spans are exported last: a collector that cannot take them is said, not
        // hidden (the exit code stays the run's).
        if let Some(guard) = telemetry
            && let Err(err) = guard.shutdown().await
        {
            err_line!("warning: {err}");
        }
        code
    })
}
