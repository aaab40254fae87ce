//! The parsed file: [`Config`](crate::Config) and its `readiness` block.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{ConfigError, ConfigWarning};
use super::node::Node;
use super::walk::Ctx;
use super::{MAX_FILE_BYTES, TOP_KEYS, readiness, servers};
use crate::client::ServerSpec;
use crate::resolve::Budget;
use crate::state::ToolName;

/// A parsed configuration file.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The file it was read from (as given).
    pub source: PathBuf,
    /// The servers, in file order.
    pub servers: Vec<ServerSpec>,
    /// The `readiness` block (defaults when absent).
    pub readiness: ReadinessConfig,
    /// Legitimate but suspicious things worth showing to the user.
    pub warnings: Vec<ConfigWarning>,
}

/// The `readiness` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadinessConfig {
    /// Wait budget and poll interval (`budget`, `poll`).
    pub budget: Budget,
    /// The longest a server whose connects keep failing fails fast (`cooldown`): the wait starts at 1 s and doubles up to it.
    pub cooldown: Duration,
    /// Health-ping interval, `None` when `"ping": "off"`.
    pub ping: Option<Duration>,
    /// How long one health ping may take before the server counts as hung (`ping_timeout`).
    pub ping_timeout: Duration,
    /// How long one connection attempt may take (`connect_timeout`).
    pub connect_timeout: Duration,
    /// How long one tool call may take (`call_timeout`).
    pub call_timeout: Duration,
    /// The steps of the unattended run, in file order.
    pub steps: Vec<StepConfig>,
    /// Per-server overrides (`servers`), by server name.
    pub servers: BTreeMap<String, ServerReadiness>,
    /// `GET /probe` (`probe`): the allow-list, the bound on probes in flight and the modules;
    /// `None` (the default) keeps the endpoint off.
    pub probe: Option<crate::probe::ProbeConfig>,
    /// How often the unattended run runs (`schedule.every`): `check` names the credentials that
    /// expire before the next run. `None` (the default): not known.
    pub schedule_every: Option<Duration>,
}

/// One entry of `readiness.servers`: what differs for one server.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerReadiness {
    /// The server's wait budget (`budget`, polled every `readiness.poll`), instead of
    /// `readiness.budget`.
    pub budget: Option<Budget>,
}

impl ReadinessConfig {
    /// The wait budget for `server`'s tools: `readiness.servers.<server>.budget` if set, else
    /// `readiness.budget`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_readiness::Config;
    ///
    /// let text = r#"{ "mcpServers": { "warehouse": { "command": "wh" }, "files": { "command": "fs" } },
    ///                 "readiness": { "budget": "20s", "servers": { "warehouse": { "budget": "45s" } } } }"#;
    /// let config = Config::parse(text, "mcp.json", |_| None).unwrap();
    /// assert_eq!(config.readiness.budget_for("warehouse").wait(), Duration::from_secs(45));
    /// assert_eq!(config.readiness.budget_for("files").wait(), Duration::from_secs(20));
    /// ```
    pub fn budget_for(&self, server: &str) -> Budget {
        self.servers
            .get(server)
            .and_then(|s| s.budget)
            .unwrap_or(self.budget)
    }

    /// Default `cooldown`: 60 s (the seed's reconnect cooldown).
    pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(60);
    /// Default `ping`: 30 s.
    pub const DEFAULT_PING: Duration = Duration::from_secs(30);
    /// Default `ping_timeout`: 5 s (a live server answers a ping in milliseconds).
    pub const DEFAULT_PING_TIMEOUT: Duration = Duration::from_secs(5);
    /// Default `connect_timeout`: 30 s.
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
    /// Default `call_timeout`: 60 s.
    pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
}

impl Default for ReadinessConfig {
    fn default() -> Self {
        ReadinessConfig {
            budget: Budget::default(),
            cooldown: Self::DEFAULT_COOLDOWN,
            ping: Some(Self::DEFAULT_PING),
            ping_timeout: Self::DEFAULT_PING_TIMEOUT,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            call_timeout: Self::DEFAULT_CALL_TIMEOUT,
            steps: Vec::new(),
            servers: BTreeMap::new(),
            probe: None,
            schedule_every: None,
        }
    }
}

/// One step of the unattended run, as written in the file (`plan::Step` is built from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepConfig {
    /// Unique id of the step.
    pub id: String,
    /// The tool it calls, `mcp__<server>__<tool>`.
    pub tool: ToolName,
    /// Whether the run must abort when the tool is not ready (default `true`: a step is required
    /// unless it says otherwise).
    pub required: bool,
    /// What an optional step does instead, if anything.
    pub fallback: Option<String>,
}

impl Config {
    /// Reads and parses `path`, expanding `${VAR}` from the process environment.
    pub fn load(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        Config::load_with_env(path, |name| std::env::var(name).ok())
    }

    /// Reads and parses `path`, expanding `${VAR}` with `env`.
    pub fn load_with_env(
        path: impl AsRef<Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        use std::io::Read as _;

        let path = path.as_ref();
        let read_err = |source| ConfigError::Read {
            file: path.to_owned(),
            source,
        };
        let file = open_regular(path).map_err(|e| match e {
            Opened::NotAFile(kind) => ConfigError::NotAFile {
                file: path.to_owned(),
                kind,
            },
            Opened::Io(e) => read_err(e),
        })?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(read_err)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(ConfigError::TooLarge {
                file: path.to_owned(),
                limit: MAX_FILE_BYTES,
            });
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            read_err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "not UTF-8 text (invalid byte at offset {}); save the file as UTF-8",
                    e.utf8_error().valid_up_to()
                ),
            ))
        })?;
        Config::parse(&text, path, env)
    }

    /// Parses `text`; `path` names the file in messages (and is the base of relative `cwd`s),
    /// `env` gives the values of `${VAR}`.
    ///
    /// ```
    /// use mcp_readiness::Config;
    ///
    /// let text = r#"{ "mcpServers": { "api": { "type": "http", "url": "${API_URL}" } } }"#;
    /// let env = |name: &str| (name == "API_URL").then(|| "http://127.0.0.1:8080/mcp".to_owned());
    /// let config = Config::parse(text, "mcp.json", env).unwrap();
    /// assert_eq!(&*config.servers[0].name, "api");
    ///
    /// let err = Config::parse(text, "mcp.json", |_| None).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "mcp.json: mcpServers.api.url: environment variable `API_URL` is not set: set it, or write `${API_URL:-default}` to give a default",
    /// );
    /// ```
    pub fn parse(
        text: &str,
        path: impl AsRef<Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let file = path.as_ref();
        if text.starts_with('\u{feff}') {
            return Err(ConfigError::Syntax {
                file: file.to_owned(),
                line: 1,
                column: 1,
                message: "the file starts with a UTF-8 byte order mark (BOM); save it as UTF-8 \
                          without a BOM"
                    .to_owned(),
            });
        }
        let root: Node = serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
            file: file.to_owned(),
            line: e.line(),
            column: e.column(),
            message: strip_location(&e.to_string()),
        })?;
        let ctx = Ctx { file, env: &env };
        let fields = ctx.object(&root, "", "the top level", Some(TOP_KEYS))?;
        let servers = match fields.get("mcpServers") {
            Some(node) => servers::servers(&ctx, node, "mcpServers")?,
            None => {
                return Err(ctx.err(
                    "mcpServers",
                    "missing: the file needs an `mcpServers` object (it may be empty)",
                ));
            }
        };
        let mut warnings = Vec::new();
        let readiness = match fields.get("readiness") {
            Some(node) => readiness::readiness(&ctx, node, "readiness", &servers, &mut warnings)?,
            None => ReadinessConfig::default(),
        };
        Ok(Config {
            source: file.to_owned(),
            servers,
            readiness,
            warnings,
        })
    }
}

/// Why [`open_regular`] refused a path.
enum Opened {
    /// Not a regular file: what it is instead.
    NotAFile(&'static str),
    /// The path could not be opened or examined.
    Io(std::io::Error),
}

/// Opens `path` for reading if it is a regular file, without ever blocking: the open does not
/// wait for a FIFO's writer (`O_NONBLOCK`), and what was opened is examined (`fstat`) before a
/// byte is read, so a path swapped for a FIFO between a check and the open is still refused.
fn open_regular(path: &Path) -> Result<std::fs::File, Opened> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
    }
    let file = options.open(path).map_err(|e| match e.kind() {
        // Opening a directory for reading works on Linux; elsewhere it may fail as such.
        std::io::ErrorKind::IsADirectory => Opened::NotAFile("a directory"),
        _ => Opened::Io(e),
    })?;
    let kind = file.metadata().map_err(Opened::Io)?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    Err(Opened::NotAFile(describe_kind(kind)))
}

/// What a file that is not a regular file is, with its article.
fn describe_kind(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// serde_json appends " at line L column C"; the error shows them as `file:L:C` instead.
fn strip_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

impl From<&StepConfig> for crate::plan::Step {
    fn from(step: &StepConfig) -> Self {
        crate::plan::Step {
            id: step.id.clone(),
            tool: step.tool.clone(),
            required: step.required,
            fallback: step.fallback.clone(),
        }
    }
}
