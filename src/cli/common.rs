//! What `check` and `serve` share: loading the configuration and starting the Hub.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use mcp_readiness::config::Config;
use mcp_readiness::supervise::HubOptions;
use mcp_readiness::{Budget, Hub, State};

/// Exit code for invalid input (bad flags, bad configuration).
pub(crate) const EXIT_INVALID: u8 = 2;

/// Parses a duration flag such as `20s`, `1m30s` or `500ms`.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|err| {
        format!("`{text}` is not a duration ({err}); write e.g. 20s, 1m30s or 500ms")
    })
}

/// Loads the configuration, printing its warnings; on error prints it and returns exit code 2.
pub(crate) fn load_config(path: &Path) -> Result<Config, ExitCode> {
    match Config::load(path) {
        Ok(config) => {
            for warning in &config.warnings {
                eprintln!("warning: {warning}");
            }
            Ok(config)
        }
        Err(err) => {
            eprintln!("error: {err}");
            Err(ExitCode::from(EXIT_INVALID))
        }
    }
}

/// Hub options from the configuration's `readiness` block.
pub(crate) fn hub_options(config: &Config) -> HubOptions {
    let readiness = &config.readiness;
    HubOptions::default()
        .connect_timeout(readiness.connect_timeout)
        .call_timeout(readiness.call_timeout)
        .cooldown(readiness.cooldown)
        .health_interval(readiness.ping)
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
