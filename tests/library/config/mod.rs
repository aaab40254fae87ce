//! The configuration file's room: bad files with the exact error each one gives and secrets kept
//! out of errors and `Debug` ([`bad_files`]), good files and what they configure ([`good_files`],
//! with the shipped example), and OAuth blocks ([`oauth`]). The environment every case sees.

mod bad_files;
mod good_files;
mod oauth;
mod probe;

use std::path::PathBuf;
use std::time::Duration;

use mcp_readiness::secret::Secret;
use mcp_readiness::{Budget, TransportSpec};
use mcp_readiness::{Config, config::ConfigError};

const TOKEN: &str = "ghp_s3cr3t_t0ken_value";

/// The environment every case sees.
fn env(name: &str) -> Option<String> {
    match name {
        "GITHUB_TOKEN" => Some(TOKEN.to_owned()),
        "HOST" => Some("127.0.0.1:8080".to_owned()),
        "EMPTY" => Some(String::new()),
        "NEWLINE" => Some("a\r\nX-Injected: 1".to_owned()),
        _ => None,
    }
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, "conf/mcp.json", env)
}

/// A server entry wrapped into a whole file.
fn with_server(entry: &str) -> String {
    format!(r#"{{ "mcpServers": {{ "s": {entry} }} }}"#)
}

/// A readiness block wrapped into a whole file with one server `s`.
fn with_readiness(block: &str) -> String {
    format!(r#"{{ "mcpServers": {{ "s": {{ "command": "srv" }} }}, "readiness": {block} }}"#)
}
