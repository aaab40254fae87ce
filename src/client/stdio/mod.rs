//! The child-process stdio connector.

pub(crate) mod child_streams;

use crate::util::MutexExt as _;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;

use crate::client::connector::{
    AfterConnect, ConnectError, Connector, Session, SessionEvents, run_hook,
};
use crate::client::handshake;
use crate::client::reasons::reason::explain;
use crate::client::reasons::rmcp_errors::{classify_init_error, truncate};
use crate::client::session::RmcpSession;
use crate::client::session::child_guard::ChildGuard;
use crate::client::session::handler::{Answerer, SupervisorClient};
use crate::client::session::quiet::Quiet;
use crate::client::session::server_requests::ServerRequests;
use crate::client::stdio::child_streams::{LineWatch, TailLines};
use crate::secret::{Secret, redact};
use crate::state::ConnectResult;
use crate::util::Human;
use crate::util::out_of_descriptors;

/// How a handshake with a child ended (before its timeout).
enum Handshake<T> {
    /// rmcp's handshake finished, well or not.
    Done(T),
    /// The child wrote lines that are not JSON-RPC and did not complete the handshake in time.
    NotMcp,
    /// The child exited (how, in words), whoever still holds its stdout.
    Exited(Arc<str>),
}

/// How many stderr lines a failed handshake quotes.
const STDERR_TAIL: usize = 3;

/// A started child: its stdout and stdin (the MCP pipe), its stderr, and the guard that kills its
/// process group.
type Spawned = (
    tokio::process::ChildStdout,
    tokio::process::ChildStdin,
    Option<tokio::process::ChildStderr>,
    ChildGuard,
);

/// Starts an MCP server as a child process and speaks MCP over its stdin / stdout.
///
/// - The child runs in its own process group; the whole group is killed when the connection ends
///   (drop, shutdown, a failed handshake), so no grandchild outlives it.
/// - Its stderr is forwarded to `tracing` at debug level (redacted).
/// - The handshake has a timeout (rmcp has none): default 30 s.
/// - Lines on stdout that are not JSON-RPC turn a failed handshake into `protocol_error`.
pub struct StdioConnector {
    server: Arc<str>,
    command: String,
    args: Vec<String>,
    env: BTreeMap<String, Secret>,
    cwd: Option<PathBuf>,
    init_timeout: Duration,
    after_connect: Option<AfterConnect>,
    /// Who answers what the server asks during a call (none: an unattended run).
    server_requests: Option<Arc<dyn ServerRequests>>,
}

impl std::fmt::Debug for StdioConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioConnector")
            .field("server", &self.server)
            .field("command", &self.command)
            .field("args", &self.args.len())
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("init_timeout", &self.init_timeout)
            .finish()
    }
}

impl StdioConnector {
    /// A connector for `command args...` with the default 30 s handshake timeout.
    pub fn new(server: impl Into<Arc<str>>, command: impl Into<String>, args: Vec<String>) -> Self {
        StdioConnector {
            server: server.into(),
            command: command.into(),
            args,
            env: BTreeMap::new(),
            cwd: None,
            init_timeout: Duration::from_secs(30),
            after_connect: None,
            server_requests: None,
        }
    }

    /// Extra environment variables (values are secrets and are redacted from logs and errors).
    pub fn env(mut self, env: BTreeMap<String, Secret>) -> Self {
        self.env = env;
        self
    }

    /// The working directory of the child.
    pub fn cwd(mut self, cwd: Option<PathBuf>) -> Self {
        self.cwd = cwd;
        self
    }

    /// The handshake timeout (spawn to `initialize` answered).
    pub fn init_timeout(mut self, timeout: Duration) -> Self {
        self.init_timeout = timeout;
        self
    }

    /// The hook that re-provisions per-connection state on every fresh connection.
    pub fn after_connect(mut self, hook: Option<AfterConnect>) -> Self {
        self.after_connect = hook;
        self
    }

    /// Who answers what the server asks during a call (`elicitation/create`); `None` (the
    /// default) declines, as an unattended run must. See [`ServerRequests`].
    pub fn server_requests(mut self, requests: Option<Arc<dyn ServerRequests>>) -> Self {
        self.server_requests = requests;
        self
    }

    fn secrets(&self) -> Vec<Secret> {
        self.env.values().cloned().collect()
    }

    async fn open(&self, events: SessionEvents) -> Result<Arc<dyn Session>, ConnectError> {
        let server = &self.server;
        let secrets = self.secrets();
        let (stdout, stdin, stderr, guard) = self.spawn()?;
        // The last lines of stderr, to explain a failed handshake.
        let tail = Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
        let (stderr_done_tx, stderr_done) = tokio::sync::oneshot::channel::<()>();
        if let Some(stderr) = stderr {
            let server = server.clone();
            let secrets = secrets.clone();
            let tail = tail.clone();
            tokio::spawn(async move {
                let mut lines = TailLines::new(stderr);
                while let Some(line) = lines.next_line().await {
                    let line = redact(&line, &secrets);
                    tracing::debug!(server = %server, "stderr: {line}");
                    let mut tail = tail.lock_unpoisoned();
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(truncate(line, 200));
                }
                let _ = stderr_done_tx.send(());
            });
        }
        let stderr_tail = |tail: &std::sync::Mutex<std::collections::VecDeque<String>>| {
            let tail = tail.lock_unpoisoned();
            if tail.is_empty() {
                String::new()
            } else {
                format!(
                    " (its stderr ended with: {})",
                    tail.iter().cloned().collect::<Vec<_>>().join(" | ")
                )
            }
        };
        let garbage = Arc::new(AtomicUsize::new(0));
        let reader = LineWatch::new(stdout, garbage.clone());
        let answerer = Answerer::of(&self.server, self.server_requests.as_ref());
        let client = SupervisorClient::new(events.clone()).answered_by(answerer.clone());
        let handshake = tokio::time::timeout(self.init_timeout, async {
            let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(reader, stdin)
                .with_max_line_length(MAX_STDOUT_LINE);
            let serve = handshake::handshake(
                client,
                Quiet::new(transport, server.clone()),
                handshake::DISCOVER_WAIT,
            );
            tokio::pin!(serve);
            // A child that exits while something else holds its stdout never closes the pipe.
            let exited = guard.exited();
            tokio::pin!(exited);
            // A server that writes lines that are not JSON-RPC gets a short grace (a banner
            // before a real handshake is forgiven) and is then a protocol error, at once rather
            // than at the end of the connect timeout.
            let mut garbage_since: Option<tokio::time::Instant> = None;
            let mut look = tokio::time::interval(Duration::from_millis(100));
            loop {
                tokio::select! {
                    result = &mut serve => {
                        // The pipe closes as the child dies, usually just before its exit status
                        // is known: the status says how it ended where "closed" says nothing.
                        if let Err(e) = &result
                            && classify_init_error(e, 0) == ConnectResult::Closed
                            && let Ok(how) =
                                tokio::time::timeout(EXIT_STATUS_GRACE, &mut exited).await
                        {
                            return Handshake::Exited(how);
                        }
                        return Handshake::Done(result);
                    }
                    how = &mut exited => return Handshake::Exited(how),
                    _ = look.tick() => {
                        if garbage.load(Ordering::Relaxed) == 0 {
                            continue;
                        }
                        let since = *garbage_since.get_or_insert_with(tokio::time::Instant::now);
                        if since.elapsed() >= GARBAGE_GRACE {
                            return Handshake::NotMcp;
                        }
                    }
                }
            }
        })
        .await;
        let garbage_lines = garbage.load(Ordering::Relaxed);
        if !matches!(handshake, Ok(Handshake::Done(Ok(_)))) {
            // A child that died writes its last words before stderr closes: give them a moment.
            let _ = tokio::time::timeout(Duration::from_millis(200), stderr_done).await;
        }
        let stderr = stderr_tail(&tail);
        let not_mcp = || {
            ConnectError::new(
                ConnectResult::ProtocolError,
                format!(
                    "server `{server}`: `{}` wrote {garbage_lines} line(s) to stdout that are not \
                     JSON-RPC and never completed the MCP handshake{stderr}; make sure it is an MCP \
                     server and logs to stderr, not stdout",
                    self.command
                ),
            )
        };
        match handshake {
            Ok(Handshake::Done(Ok(running))) => {
                let running = handshake::accept(server, running)?;
                Ok(Arc::new(
                    RmcpSession::start(running, Some(guard), events, None).answered_by(answerer),
                ))
            }
            Ok(Handshake::NotMcp) => Err(not_mcp()),
            Ok(Handshake::Exited(_)) if garbage_lines > 0 => Err(not_mcp()),
            Ok(Handshake::Exited(how)) => Err(ConnectError::new(
                ConnectResult::Closed,
                format!(
                    "server `{server}`: `{}` ended during the MCP handshake: {how}{stderr}; run it \
                     by hand to see why",
                    self.command
                ),
            )),
            Err(_elapsed) if garbage_lines > 0 => Err(not_mcp()),
            Err(_elapsed) => Err(ConnectError::new(
                ConnectResult::Timeout,
                format!(
                    "server `{server}`: `{}` did not complete the MCP handshake within {}{stderr}; \
                     check that it starts, or raise the connect timeout",
                    self.command,
                    Human(self.init_timeout)
                ),
            )),
            Ok(Handshake::Done(Err(e))) if handshake::version_refusal(&e).is_some() => {
                Err(ConnectError::new(
                    ConnectResult::ProtocolError,
                    format!(
                        "server `{server}`: {}",
                        handshake::version_refusal(&e).unwrap_or_default()
                    ),
                ))
            }
            Ok(Handshake::Done(Err(e))) => {
                let result = classify_init_error(&e, garbage_lines);
                if result == ConnectResult::ProtocolError && garbage_lines > 0 {
                    return Err(not_mcp());
                }
                let detail = redact(&explain(&e), &secrets);
                let next = match result {
                    ConnectResult::Closed => {
                        "it exited or closed stdout during the handshake; run it by hand to see why"
                    }
                    ConnectResult::Unauthorized => "re-authorize its credentials",
                    _ => "check that it is an MCP server",
                };
                Err(ConnectError::new(
                    result,
                    format!(
                        "server `{server}`: `{}` failed the MCP handshake ({detail}){stderr}; {next}",
                        self.command
                    ),
                ))
            }
        }
    }

    #[cfg(unix)]
    fn spawn(&self) -> Result<Spawned, ConnectError> {
        use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
        use std::process::Stdio;

        let mut command = CommandWrap::with_new(&self.command, |c| {
            c.args(&self.args)
                .envs(self.env.iter().map(|(k, v)| (k, v.expose())))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(cwd) = &self.cwd {
                c.current_dir(cwd);
            }
        });
        command.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
        if let Some(cwd) = &self.cwd
            && !cwd.is_dir()
        {
            return Err(ConnectError::new(
                ConnectResult::SpawnFailed,
                format!(
                    "server `{}`: its working directory `{}` (`cwd`) does not exist or is not a \
                     directory; create it or fix `cwd` in the configuration",
                    self.server,
                    cwd.display()
                ),
            ));
        }
        let mut child = command.spawn().map_err(|e| {
            if let Some(why) = out_of_descriptors(&e) {
                return ConnectError::new(
                    ConnectResult::SpawnFailed,
                    format!(
                        "server `{}`: could not start command `{}`: {why}",
                        self.server, self.command
                    ),
                );
            }
            ConnectError::new(
                ConnectResult::SpawnFailed,
                format!(
                    "server `{}`: could not start command `{}`: {}; check that it is installed, on \
                     PATH and executable",
                    self.server,
                    self.command,
                    redact(&e.to_string(), &self.secrets())
                ),
            )
        })?;
        let stdout = child.stdout().take();
        let stdin = child.stdin().take();
        let stderr = child.stderr().take();
        let guard = ChildGuard::new(child);
        match (stdout, stdin) {
            (Some(stdout), Some(stdin)) => Ok((stdout, stdin, stderr, guard)),
            _ => Err(ConnectError::new(
                ConnectResult::SpawnFailed,
                format!(
                    "server `{}`: the child's stdio pipes were not available",
                    self.server
                ),
            )),
        }
    }

    #[cfg(not(unix))]
    fn spawn(&self) -> Result<Spawned, ConnectError> {
        Err(ConnectError::new(
            ConnectResult::SpawnFailed,
            format!(
                "server `{}`: stdio servers are supported on Unix only",
                self.server
            ),
        ))
    }
}

impl Connector for StdioConnector {
    fn connect(
        &self,
        events: SessionEvents,
    ) -> BoxFuture<'_, Result<Arc<dyn Session>, ConnectError>> {
        Box::pin(self.open(events))
    }

    fn after_connect(&self, session: Arc<dyn Session>) -> BoxFuture<'_, Result<(), ConnectError>> {
        run_hook(self.after_connect.as_ref(), session)
    }

    fn network_transport(&self) -> &'static str {
        "pipe"
    }
}

/// The longest stdout line (one JSON-RPC message) read from a stdio server: a longer one is
/// dropped by rmcp (and the call it answered times out), so a server that never writes a newline
/// costs at most this much memory (rmcp's own default is 16 MiB).
pub const MAX_STDOUT_LINE: usize = 4 * 1024 * 1024;

/// How long a handshake that failed on a closed pipe waits for the child's exit status.
const EXIT_STATUS_GRACE: Duration = Duration::from_millis(200);

/// How long a server that wrote lines that are not JSON-RPC to stdout may still take to complete
/// the handshake before it is a protocol error.
const GARBAGE_GRACE: Duration = Duration::from_secs(1);
