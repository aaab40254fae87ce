//! Constructors for what the configuration file builds: [`ServerSpec::new`],
//! [`TransportSpec::stdio`] and [`TransportSpec::http`] with their setters.

use std::path::PathBuf;
use std::sync::Arc;

use crate::client::spec::{ServerSpec, TransportSpec};
use crate::secret::Secret;

impl ServerSpec {
    /// Server `name` reached over `transport`.
    ///
    /// ```
    /// use mcp_readiness::{ServerSpec, TransportSpec};
    ///
    /// let files = ServerSpec::new("files", TransportSpec::stdio("files-mcp").arg("/data"));
    /// let github = ServerSpec::new(
    ///     "github",
    ///     TransportSpec::http("https://example.invalid/mcp").bearer("t0k3n-from-the-vault"),
    /// );
    /// assert_eq!(files.transport.network_transport(), "pipe");
    /// assert!(!format!("{github:?}").contains("t0k3n"));
    /// ```
    pub fn new(name: impl Into<Arc<str>>, transport: TransportSpec) -> Self {
        ServerSpec {
            name: name.into(),
            transport,
        }
    }
}

impl TransportSpec {
    /// A child process running `command` (looked up on `PATH`), without arguments yet.
    pub fn stdio(command: impl Into<String>) -> Self {
        TransportSpec::Stdio {
            command: command.into(),
            args: Vec::new(),
            env: Default::default(),
            cwd: None,
        }
    }

    /// A streamable-HTTP endpoint (`http` or `https`; checked when the hub is built).
    pub fn http(url: impl Into<Secret>) -> Self {
        TransportSpec::Http {
            url: url.into(),
            headers: Default::default(),
            oauth: None,
        }
    }

    /// Adds one argument (stdio only; an HTTP transport is returned unchanged).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        if let TransportSpec::Stdio { args, .. } = &mut self {
            args.push(arg.into());
        }
        self
    }

    /// Adds arguments (stdio only; an HTTP transport is returned unchanged).
    pub fn args(mut self, more: impl IntoIterator<Item = impl Into<String>>) -> Self {
        if let TransportSpec::Stdio { args, .. } = &mut self {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// Sets an environment variable of the child; the value is a secret (stdio only).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<Secret>) -> Self {
        if let TransportSpec::Stdio { env, .. } = &mut self {
            env.insert(name.into(), value.into());
        }
        self
    }

    /// Sets the child's working directory (stdio only).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        if let TransportSpec::Stdio { cwd, .. } = &mut self {
            *cwd = Some(dir.into());
        }
        self
    }

    /// Adds a request header; the value is a secret (HTTP only; a stdio transport is returned
    /// unchanged).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<Secret>) -> Self {
        if let TransportSpec::Http { headers, .. } = &mut self {
            headers.insert(name.into(), value.into());
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` (HTTP only).
    pub fn bearer(self, token: impl Into<Secret>) -> Self {
        let token: Secret = token.into();
        self.header("Authorization", format!("Bearer {}", token.expose()))
    }
}
