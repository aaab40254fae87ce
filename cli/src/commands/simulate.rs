use std::process::ExitCode;

use mcp_readiness_cli::sim;

/// Arguments of `mcp-readiness simulate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print one JSON array of rows instead of the tables.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> ExitCode {
    let rows = match sim::run_all() {
        Ok(rows) => rows,
        Err(err) => {
            err_line!("error: could not start the virtual clock: {err}");
            return ExitCode::FAILURE;
        }
    };
    let output = if args.json {
        match serde_json::to_string_pretty(&rows) {
            Ok(json) => json + "\n",
            Err(err) => {
                err_line!("error: could not render the rows as JSON: {err}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        sim::render_tables(&rows)
    };
    match super::common::print_stdout(&output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}
