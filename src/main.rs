//! The `mcp-readiness` command line. See `mcp-readiness --help`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// Readiness for MCP tool calls: connecting, unauthenticated or absent, resolved at the point of use.
#[derive(Debug, Parser)]
#[command(name = "mcp-readiness", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay the design's virtual-clock scenarios and print their tables.
    Simulate(cli::simulate::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Simulate(args) => cli::simulate::run(args),
    }
}
