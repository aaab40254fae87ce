//! What `check` and `serve` share: loading the configuration and starting the Hub.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use mcp_readiness::config::Config;
use mcp_readiness::supervise::HubOptions;

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
