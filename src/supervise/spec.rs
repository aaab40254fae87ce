use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::secret::Secret;

/// How to reach one MCP server. The configuration file's `mcpServers` entries map onto this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The server's name: the `<server>` of `mcp__<server>__<tool>`.
    pub name: Arc<str>,
    /// How to connect.
    pub transport: TransportSpec,
}

/// The transport of a [`ServerSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportSpec {
    /// A child process speaking MCP over its stdin / stdout.
    Stdio {
        /// The program to run (looked up on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (values may be secrets).
        env: BTreeMap<String, Secret>,
        /// Working directory, if not the current one.
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP MCP endpoint.
    Http {
        /// The endpoint URL (`http` or `https`).
        url: Secret,
        /// Extra request headers, e.g. `Authorization` (values are secrets).
        headers: BTreeMap<String, Secret>,
    },
}

impl TransportSpec {
    /// The OpenTelemetry `network.transport` value: `pipe` for stdio, `tcp` for HTTP.
    pub fn network_transport(&self) -> &'static str {
        match self {
            TransportSpec::Stdio { .. } => "pipe",
            TransportSpec::Http { .. } => "tcp",
        }
    }
}
