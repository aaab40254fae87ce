//! [`SpecError`]: a server configuration (or a hub option) that cannot be used, named without
//! its secrets.

use std::sync::Arc;

/// Why an `oauth` block (of a server entry or of a probe module) cannot be used by a build
/// without the `oauth` feature: the one message, wherever the block is found.
pub(crate) const OAUTH_FEATURE_MISSING: &str = "its `oauth` block needs the `oauth` feature, \
    which this build of mcp-readiness does not have: build it with `features = [\"oauth\"]` \
    (the command line has it), or remove the `oauth` block";

/// A server configuration that cannot be used. Messages name the server and the field, never a
/// secret value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The URL of an HTTP server is not `http://` or `https://`.
    #[error(
        "server `{server}`: the url must start with http:// or https:// ({}); fix `url` in the \
         configuration",
        if scheme.is_empty() { "found no scheme".to_owned() } else { format!("found scheme `{scheme}`") }
    )]
    UrlScheme {
        /// The server.
        server: Arc<str>,
        /// The scheme found (empty when there was none).
        scheme: String,
    },
    /// The URL of an HTTP server has no host, or has spaces or line breaks in it (named without
    /// repeating the URL, which may carry credentials).
    #[error("server `{server}`: the url {problem}; fix `url` in the configuration")]
    Url {
        /// The server.
        server: Arc<str>,
        /// What is wrong with it ("has no host after `https://`").
        problem: String,
    },
    /// A header name or value is not valid HTTP.
    #[error(
        "server `{server}`: header `{header}` is not a valid HTTP header; fix `headers` in the configuration"
    )]
    Header {
        /// The server.
        server: Arc<str>,
        /// The header name.
        header: String,
    },
    /// A header the MCP client sets itself (`Accept`, `Mcp-Session-Id`, `Last-Event-ID`): the
    /// protocol needs its own value there.
    #[error(
        "server `{server}`: header `{header}` is one the MCP client sets itself (the protocol needs its own value); remove it from `headers` in the configuration"
    )]
    ReservedHeader {
        /// The server.
        server: Arc<str>,
        /// The header name, as written.
        header: String,
    },
    /// A stdio server without a command.
    #[error("server `{server}`: `command` is empty; set the program to run")]
    EmptyCommand {
        /// The server.
        server: Arc<str>,
    },
    /// The server name cannot form `mcp__<server>__<tool>` names.
    #[error(
        "server name `{}` cannot be written as mcp__<server>__<tool> (empty, leading, trailing \
         or doubled underscores, or control characters); rename it",
        crate::secret::escape_controls(server)
    )]
    BadName {
        /// The server.
        server: Arc<str>,
    },
    /// A `supervise::HubOptions` value the Hub cannot run with (what the configuration
    /// file would refuse too).
    #[error("HubOptions::{option}: {problem}")]
    BadOption {
        /// The builder method.
        option: &'static str,
        /// What is wrong and what to pass instead.
        problem: &'static str,
    },
    /// A server uses OAuth but this build has no `oauth` feature, or its OAuth settings cannot
    /// work.
    #[error("server `{server}`: {problem}")]
    OAuth {
        /// The server.
        server: Arc<str>,
        /// What is wrong and what to do.
        problem: String,
    },
    /// Two servers with the same name.
    #[error("server `{server}` is configured twice; remove one of them")]
    Duplicate {
        /// The server.
        server: Arc<str>,
    },
}
