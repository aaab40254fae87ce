//! How to reach one configured server: [`ServerSpec`], its [`TransportSpec`] (stdio or
//! streamable HTTP) and, for HTTP, its [`OAuthSpec`].

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
        /// OAuth 2.1 with tokens in a credential store file, refreshed before they expire
        /// (instead of a static `Authorization` header). Needs the `oauth` feature.
        oauth: Option<OAuthSpec>,
    },
}

/// OAuth for a streamable-HTTP server: the client it is registered as and the file its tokens
/// live in. The tokens themselves are never part of the configuration; the authorization server
/// is discovered from the MCP server (RFC 9728 protected resource metadata, then RFC 8414).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthSpec {
    /// The credential store file (JSON, written with mode 0600; see `docs/oauth.md`).
    pub store: PathBuf,
    /// The OAuth client id.
    pub client_id: String,
    /// The client secret of a confidential client (`None` for a public client).
    pub client_secret: Option<Secret>,
    /// The scopes to ask for when authorizing.
    pub scopes: Vec<String>,
    /// The command that re-authorizes this server, shown when its refresh token is refused
    /// (e.g. `mcp-readiness oauth login --config mcp.json --server github`).
    pub reauthorize: Option<String>,
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
