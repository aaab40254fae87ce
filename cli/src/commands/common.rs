//! What the commands share: loading the configuration and starting the Hub.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use mcp_readiness::Config;
use mcp_readiness::secret::escape_controls;
use mcp_readiness::{Budget, Hub, ServerSpec, State};
use mcp_readiness::{HubOptions, supervise::HubOptionsBuilder};

/// Exit code for invalid input (bad flags, bad configuration).
pub(crate) const EXIT_INVALID: u8 = 2;

/// Exit code when the output cannot be written (`> /dev/full`, a closed pipe): sysexits'
/// `EX_IOERR`.
pub(crate) const EXIT_OUTPUT: u8 = 74;

/// Parses a duration flag such as `20s`, `1m30s` or `500ms` (at most 365 days, like the file).
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|err| {
        format!("`{text}` is not a duration ({err}); write e.g. 20s, 1m30s or 500ms")
    })?;
    if duration > mcp_readiness::config::MAX_DURATION {
        return Err(format!(
            "`{text}` is longer than 365 days; write a shorter duration such as 20s or 5m"
        ));
    }
    Ok(duration)
}

/// [`parse_duration`] of a time that must be in the future (`--next-run-in`): zero is refused,
/// as `readiness.schedule.every` refuses it.
pub(crate) fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let duration = parse_duration(text)?;
    if duration.is_zero() {
        return Err(format!(
            "`{text}` is not after now: the next run is in the future; write e.g. 1h or 24h"
        ));
    }
    Ok(duration)
}

/// Writes `text` to stdout (locked, flushed). When stdout cannot be written (`> /dev/full`, a
/// closed pipe) it says so on stderr and returns the exit code to end with ([`EXIT_OUTPUT`]),
/// instead of panicking as `print!` does.
pub(crate) fn print_stdout(text: &str) -> Result<(), ExitCode> {
    use std::io::Write as _;

    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(err) => {
            print_stderr(&format!(
                "error: could not write the output to stdout ({err}); check that stdout is a \
                 writable file or a pipe whose reader is still running\n"
            ));
            Err(ExitCode::from(EXIT_OUTPUT))
        }
    }
}

/// Writes `text` to stderr, ignoring failure (there is nowhere left to report it), instead of
/// panicking as `eprint!` does when stderr is closed or full.
pub(crate) fn print_stderr(text: &str) {
    use std::io::Write as _;

    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Loads the configuration, printing its warnings; on error prints it and returns exit code 2.
pub(crate) fn load_config(path: &Path) -> Result<Config, ExitCode> {
    match Config::load(path) {
        Ok(config) => {
            for warning in &config.warnings {
                print_stderr(&format!(
                    "warning: {}\n",
                    escape_controls(&warning.to_string())
                ));
            }
            Ok(config)
        }
        Err(err) => {
            print_stderr(&format!("error: {}\n", escape_controls(&err.to_string())));
            Err(ExitCode::from(EXIT_INVALID))
        }
    }
}

/// Hub options from the configuration's `readiness` block, per-server budgets included: the
/// library's one mapping ([`Config::hub_options`]).
pub(crate) fn hub_options(config: &Config) -> HubOptionsBuilder {
    config.hub_options()
}

/// The Hub of `servers`, configured in the file at `path`; a configuration the Hub refuses is
/// printed, naming the file, and is exit code 2.
pub(crate) fn start_hub(
    path: &Path,
    servers: Vec<ServerSpec>,
    options: impl Into<HubOptions>,
) -> Result<Hub, ExitCode> {
    Hub::new(servers, options).map_err(|err| {
        print_stderr(&format!(
            "error: {}: {}\n",
            path.display(),
            escape_controls(&err.to_string())
        ));
        ExitCode::from(EXIT_INVALID)
    })
}

/// Shows which servers are still connecting and the time left, while `work` runs.
pub(crate) async fn with_progress<T>(
    hub: &Hub,
    budget: Budget,
    bar: &indicatif::ProgressBar,
    work: impl Future<Output = T>,
) -> T {
    let start = tokio::time::Instant::now();
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    tokio::pin!(work);
    let result = loop {
        tokio::select! {
            result = &mut work => break result,
            _ = tick.tick() => {
                let connecting: Vec<String> = hub
                    .servers()
                    .into_iter()
                    .filter(|s| s.state == State::Connecting)
                    .map(|s| s.name.to_string())
                    .collect();
                let left = budget.wait().saturating_sub(start.elapsed());
                bar.set_message(if connecting.is_empty() {
                    "resolving...".to_owned()
                } else {
                    format!("still connecting: {} ({}s left)", connecting.join(", "), left.as_secs())
                });
                bar.tick();
            }
        }
    };
    bar.finish_and_clear();
    result
}
