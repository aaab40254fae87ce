//! Helpers shared by the integration tests that run real processes.
#![allow(dead_code)]

pub mod fixtures;
pub mod otlp;
pub mod process;
pub mod serve;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The fixture MCP server (`examples/fixture_server.rs`) next to this test binary.
pub fn fixture() -> PathBuf {
    example("fixture_server")
}

/// The compiled example `name` next to this test binary (`target/<profile>/deps/../examples/`),
/// built on demand when missing or older than its source.
pub fn example(name: &'static str) -> PathBuf {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static BUILT: OnceLock<Mutex<HashMap<&'static str, PathBuf>>> = OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    let mut built = built.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(path) = built.get(name) {
        return path.clone();
    }
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let path = profile_dir.join("examples").join(name);
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}.rs"));
    let stale = match (std::fs::metadata(&path), std::fs::metadata(&source)) {
        (Ok(bin), Ok(src)) => bin.modified().ok() < src.modified().ok(),
        _ => true,
    };
    if stale {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "--example", name])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap_or_else(|e| panic!("run cargo build --example {name}: {e}"));
        assert!(status.success(), "building the example {name} failed");
    }
    assert!(
        path.exists(),
        "example {name} not found at {}",
        path.display()
    );
    built.insert(name, path.clone());
    path
}

/// A temporary directory for one test, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh directory under the system temp dir, unique per process and call.
    pub fn new(name: &str) -> Scratch {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcp-readiness-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        Scratch(dir)
    }

    /// A file in the directory.
    pub fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }

    /// A file's text, empty when it does not exist.
    pub fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.path(file)).unwrap_or_default()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether a process runs (a zombie has exited and counts as gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z"),
        Err(_) => false,
    }
}

/// A stdio server spec running the fixture server as `name`, with extra environment.
pub fn stdio(name: &str, env: &[(&str, &str)]) -> mcp_readiness::ServerSpec {
    mcp_readiness::ServerSpec {
        name: name.into(),
        transport: mcp_readiness::TransportSpec::Stdio {
            command: fixture().display().to_string(),
            args: Vec::new(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), (*v).into()))
                .collect(),
            cwd: None,
        },
    }
}

/// The text content of a tool result.
pub fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            rmcp::model::ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// On-call tests (tests/oncall_*.rs): real `serve` processes, an in-process agent service, and a
// real Prometheus loading alerts/ — every process killed when its guard drops, even on failure.

pub mod oncall {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Stdio};
    use std::time::Duration;

    use serde_json::{Value, json};
    use tokio::time::Instant;

    use super::process::http_exchange;
    use super::{Scratch, fixture};

    /// The `mcp-readiness` binary under test.
    pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-readiness");
    /// The token the HTTP fixture accepts.
    pub const RIGHT_TOKEN: &str = "oncall-right-token-5e1c";
    /// A token the HTTP fixture refuses (401 with a challenge).
    pub const WRONG_TOKEN: &str = "oncall-wrong-token-9d27";

    /// The repository root.
    pub fn repo() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// A Debian package binary in /usr/bin, or `None` after a loud message (a failure under
    /// `CI=true`: there a missing tool is never a silent skip).
    pub fn system_tool(name: &str, package: &str) -> Option<PathBuf> {
        let path = PathBuf::from("/usr/bin").join(name);
        if path.exists() {
            return Some(path);
        }
        let message = format!(
            "{} not found: install Debian's `{package}` package (scripts/test does when root)",
            path.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
        eprintln!("\n!!!!!!!!!! SKIPPED: {message} !!!!!!!!!!\n");
        None
    }

    /// A loopback port that was free a moment ago.
    pub fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("bind 127.0.0.1:0")
            .port()
    }

    /// A child process killed with all its descendants when dropped (also on a failed assertion).
    pub struct KillOnDrop {
        pub child: Child,
        pub name: String,
    }

    impl KillOnDrop {
        pub fn spawn(name: &str, command: &mut Command) -> KillOnDrop {
            let child = command
                .spawn()
                .unwrap_or_else(|e| panic!("start {name}: {e}"));
            KillOnDrop {
                child,
                name: name.to_owned(),
            }
        }
        pub fn pid(&self) -> u32 {
            self.child.id()
        }
        /// Panics with `log` when the process already exited.
        pub fn assert_running(&mut self, log: impl FnOnce() -> String) {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{} exited early ({status}):\n{}", self.name, log());
            }
        }
    }

    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            if let Ok(None) = self.child.try_wait() {
                for pid in super::process::descendants(self.child.id()) {
                    let _ = Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .stderr(Stdio::null())
                        .status();
                }
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
    }

    /// Polls `probe` every 100 ms until it gives a value; fails after `limit` with `what`.
    pub async fn poll_until<T>(
        what: &str,
        limit: Duration,
        mut probe: impl AsyncFnMut() -> Result<T, String>,
    ) -> T {
        let deadline = Instant::now() + limit;
        loop {
            match probe().await {
                Ok(value) => return value,
                Err(why) if Instant::now() >= deadline => {
                    panic!("timed out after {limit:?} waiting for {what}: {why}")
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    /// A raw HTTP/1.0 GET on loopback: (head, body), or an error while nothing listens.
    pub async fn http_get(addr: &str, target: &str) -> Result<(String, String), String> {
        let request = format!("GET {target} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
        http_exchange(addr, request, &format!("GET http://{addr}{target}")).await
    }

    /// A raw HTTP/1.0 request with a JSON body on loopback: (head, body).
    pub async fn http_send_json(
        addr: &str,
        method: &str,
        target: &str,
        json_body: &str,
    ) -> Result<(String, String), String> {
        let request = format!(
            "{method} {target} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{json_body}",
            json_body.len()
        );
        http_exchange(addr, request, &format!("{method} http://{addr}{target}")).await
    }

    /// Waits until `GET /-/ready` on `addr` answers 200 (Prometheus, Alertmanager), failing at
    /// once if the process exits (with its stderr from `err`).
    pub async fn wait_ready(
        what: &str,
        guard: &mut KillOnDrop,
        addr: &str,
        err: &Path,
        limit: Duration,
    ) {
        poll_until(what, limit, async || {
            guard.assert_running(|| std::fs::read_to_string(err).unwrap_or_default());
            match http_get(addr, "/-/ready").await {
                Ok((head, _)) if head.contains(" 200") => Ok(()),
                Ok((head, _)) => Err(head),
                Err(e) => Err(e),
            }
        })
        .await;
    }

    /// Percent-encodes a query-string value.
    pub fn url_encode(value: &str) -> String {
        value
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    }

    /// A configuration entry for the stdio fixture with extra environment variables.
    pub fn fixture_entry(env: &[(&str, &str)]) -> Value {
        let vars: serde_json::Map<String, Value> =
            env.iter().map(|(k, v)| ((*k).into(), json!(v))).collect();
        json!({ "command": fixture().to_string_lossy(), "args": [], "env": vars })
    }

    /// A configuration entry for a command that does not exist (absent).
    pub fn absent_entry() -> Value {
        json!({ "command": "/nonexistent/mcp-readiness-oncall/no-such-server", "args": [] })
    }

    /// A configuration entry for the HTTP fixture sending `${MCP_ONCALL_TOKEN}`.
    pub fn http_entry(port: u16) -> Value {
        json!({
            "type": "http",
            "url": format!("http://127.0.0.1:{port}/mcp"),
            "headers": { "Authorization": "Bearer ${MCP_ONCALL_TOKEN}" }
        })
    }

    /// The fixture over streamable HTTP, accepting only `RIGHT_TOKEN`; returns its port.
    pub async fn http_fixture(scratch: &Scratch, tag: &str) -> (KillOnDrop, u16) {
        let out = scratch.path(&format!("http-{tag}.out"));
        let guard = KillOnDrop::spawn(
            "the HTTP fixture",
            Command::new(fixture())
                .arg("--http")
                .env("FIXTURE_TOKEN", RIGHT_TOKEN)
                .stdout(std::fs::File::create(&out).unwrap())
                .stderr(Stdio::null()),
        );
        let port = poll_until(
            "the HTTP fixture's port",
            Duration::from_secs(30),
            async || {
                std::fs::read_to_string(&out)
                    .ok()
                    .and_then(|t| {
                        t.lines()
                            .find_map(|l| l.strip_prefix("PORT ")?.trim().parse::<u16>().ok())
                    })
                    .ok_or_else(|| "no PORT line yet".to_owned())
            },
        )
        .await;
        (guard, port)
    }

    /// `mcp-readiness serve` on a free loopback port; returns the guard and `host:port`.
    pub async fn start_serve(
        scratch: &Scratch,
        tag: &str,
        servers: Value,
        readiness: Value,
        token: &str,
    ) -> (KillOnDrop, String) {
        let addr = format!("127.0.0.1:{}", free_port());
        start_serve_at(scratch, tag, servers, readiness, token, addr).await
    }

    /// `mcp-readiness serve` listening on `addr` (chosen before, e.g. to be a scrape target).
    pub async fn start_serve_at(
        scratch: &Scratch,
        tag: &str,
        servers: Value,
        readiness: Value,
        token: &str,
        addr: String,
    ) -> (KillOnDrop, String) {
        let config = scratch.path(&format!("serve-{tag}.json"));
        let body = json!({ "mcpServers": servers, "readiness": readiness });
        std::fs::write(&config, serde_json::to_string_pretty(&body).unwrap()).unwrap();
        let err = scratch.path(&format!("serve-{tag}.err"));
        let mut guard = KillOnDrop::spawn(
            "mcp-readiness serve",
            Command::new(BIN)
                .arg("serve")
                .arg("--config")
                .arg(&config)
                .args(["--listen", &addr])
                .env("MCP_ONCALL_TOKEN", token)
                .env("RUST_LOG", "info")
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&err).unwrap()),
        );
        poll_until("serve's /metrics", Duration::from_secs(30), async || {
            guard.assert_running(|| std::fs::read_to_string(&err).unwrap_or_default());
            match http_get(&addr, "/metrics").await {
                Ok((head, _)) if head.contains(" 200") => Ok(()),
                Ok((head, _)) => Err(head),
                Err(e) => Err(e),
            }
        })
        .await;
        (guard, addr)
    }

    /// The metric names of one exposition text: every sample's name and every `# TYPE` family.
    pub fn exposition_names(text: &str) -> BTreeSet<String> {
        text.lines()
            .filter_map(|l| {
                if let Some(rest) = l.strip_prefix("# TYPE ") {
                    return rest.split_whitespace().next().map(str::to_owned);
                }
                if l.starts_with('#') || l.trim().is_empty() {
                    return None;
                }
                l.split(['{', ' ']).next().map(str::to_owned)
            })
            .collect()
    }

    /// Names the rules and dashboards use that these fixtures never make the exporter serve: the
    /// credential expiry gauge needs a server with a JWT bearer token or an OAuth credential store
    /// (tests/oauth.rs checks it against a real authorization server).
    pub const CONDITIONAL_NAMES: [&str; 1] = ["mcp_readiness_credential_expiry_timestamp_seconds"];

    /// The Python with go-jsonnet (`gojsonnet`) that scripts/test installs, to render the mixin
    /// with other `_config` values; `None` after a loud message (a failure under `CI=true`).
    pub fn jsonnet_python() -> Option<PathBuf> {
        let python = repo().join("target/jsonnet-venv/bin/python");
        let ok = Command::new(&python)
            .args(["-c", "import _gojsonnet, yaml"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(python);
        }
        let message = format!(
            "{} cannot import _gojsonnet and yaml: run scripts/test (it installs PyPI `gojsonnet` and `pyyaml` there)",
            python.display()
        );
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
        eprintln!("\n!!!!!!!!!! SKIPPED: {message} !!!!!!!!!!\n");
        None
    }

    /// The mixin rendered with `_config` overrides (JSON) into `dir`: its alerts/ rule files.
    pub fn render_mixin(python: &Path, dir: &Path, config: &Value) -> Vec<PathBuf> {
        let output = Command::new(python)
            .arg(repo().join("scripts/render-mixin"))
            .arg("--out")
            .arg(dir)
            .arg("--config")
            .arg(config.to_string())
            .output()
            .expect("run scripts/render-mixin");
        assert!(
            output.status.success(),
            "scripts/render-mixin: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        vec![dir.join("alerts/rules.yml"), dir.join("alerts/alerts.yml")]
    }

    /// The names recorded by `alerts/rules.yml` (`- record: name` lines).
    pub fn recording_rule_names() -> BTreeSet<String> {
        std::fs::read_to_string(repo().join("alerts/rules.yml"))
            .expect("read alerts/rules.yml")
            .lines()
            .filter_map(|l| {
                l.trim()
                    .strip_prefix("- record:")
                    .map(|n| n.trim().to_owned())
            })
            .collect()
    }

    /// A real Prometheus (Debian's package) on a free loopback port, scraping every second and
    /// evaluating `rule_files` every second, with its storage in the scratch directory.
    pub struct Prometheus {
        pub guard: KillOnDrop,
        pub addr: String,
        err: PathBuf,
    }

    impl Prometheus {
        /// `jobs`: (job name, targets). Waits until it answers queries.
        pub async fn start(
            binary: &Path,
            scratch: &Scratch,
            jobs: &[(&str, Vec<String>)],
            rule_files: &[PathBuf],
        ) -> Prometheus {
            let mut yml = String::from(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\n",
            );
            yml.push_str("rule_files:\n");
            for file in rule_files {
                yml.push_str(&format!("  - '{}'\n", file.display()));
            }
            yml.push_str("scrape_configs:\n");
            for (job, targets) in jobs {
                let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
                yml.push_str(&format!(
                    "  - job_name: {job}\n    static_configs:\n      - targets: [{}]\n",
                    list.join(", ")
                ));
            }
            let config = scratch.path("prometheus.yml");
            std::fs::write(&config, yml).unwrap();
            let addr = format!("127.0.0.1:{}", free_port());
            let err = scratch.path("prometheus.err");
            let mut guard = KillOnDrop::spawn(
                "prometheus",
                Command::new(binary)
                    .arg(format!("--config.file={}", config.display()))
                    .arg(format!(
                        "--storage.tsdb.path={}",
                        scratch.path("tsdb").display()
                    ))
                    .arg(format!("--web.listen-address={addr}"))
                    .stdout(Stdio::null())
                    .stderr(std::fs::File::create(&err).unwrap()),
            );
            wait_ready(
                "Prometheus to answer",
                &mut guard,
                &addr,
                &err,
                Duration::from_secs(60),
            )
            .await;
            Prometheus { guard, addr, err }
        }

        /// Prometheus's own log (stderr).
        pub fn log(&self) -> String {
            std::fs::read_to_string(&self.err).unwrap_or_default()
        }

        /// GET an API path; the parsed `data` of a `success` answer, or the error.
        pub async fn api(&self, target: &str) -> Result<Value, String> {
            let (head, body) = http_get(&self.addr, target).await?;
            let value: Value =
                serde_json::from_str(&body).map_err(|e| format!("{head}: {e}: {body}"))?;
            if value["status"] != "success" {
                return Err(format!("{target}: {value}"));
            }
            Ok(value["data"].clone())
        }

        /// An instant query's result vector.
        pub async fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
            let data = self
                .api(&format!("/api/v1/query?query={}", url_encode(expr)))
                .await?;
            Ok(data["result"].as_array().cloned().unwrap_or_default())
        }

        /// A range query's result matrix from `start` (Unix seconds) to now, step 1 s.
        pub async fn query_range(&self, expr: &str, start: f64) -> Result<Vec<Value>, String> {
            let end = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs_f64();
            let data = self
                .api(&format!(
                    "/api/v1/query_range?query={}&start={start:.3}&end={end:.3}&step=1",
                    url_encode(expr)
                ))
                .await?;
            Ok(data["result"].as_array().cloned().unwrap_or_default())
        }
    }

    /// An agent service in this process: a Hub and the ReadinessLayer with their `Metrics` served
    /// on a loopback port, and a task calling tools through the layer every 200 ms:
    /// `mcp__files__echo` (ready), `mcp__files__no_such_tool` (a tool the ready server does not
    /// offer), `mcp__stuck__echo` (still connecting: each call exhausts the 300 ms budget) and
    /// `mcp__gone__echo` (absent).
    pub struct AgentService {
        pub addr: String,
        pub hub: mcp_readiness::Hub,
        calls: tokio::task::JoinHandle<()>,
        server: Option<mcp_readiness::metrics::MetricsServer>,
    }

    impl AgentService {
        pub async fn start() -> AgentService {
            use mcp_readiness::layer::ReadinessLayer;
            use mcp_readiness::supervise::HubOptions;
            use mcp_readiness::{Budget, Hub, Metrics, ToolCall};
            use tower::{Service as _, ServiceBuilder, ServiceExt as _};

            let metrics = Metrics::new();
            let servers = vec![
                super::stdio("files", &[]),
                super::stdio("stuck", &[("FIXTURE_STARTUP_DELAY_MS", "600000")]),
                mcp_readiness::ServerSpec {
                    name: "gone".into(),
                    transport: mcp_readiness::TransportSpec::Stdio {
                        command: "/nonexistent/mcp-readiness-oncall/no-such-server".into(),
                        args: Vec::new(),
                        env: Default::default(),
                        cwd: None,
                    },
                },
            ];
            let hub = Hub::new(
                servers,
                HubOptions::builder()
                    .connect_timeout(Duration::from_secs(600))
                    .event_sink(metrics.clone()),
            )
            .expect("a hub");
            let budget = Budget::try_new(Duration::from_millis(300), Duration::from_millis(100))
                .expect("a budget");
            for server in ["files", "stuck", "gone"] {
                metrics.set_wait_budget(server, budget.wait());
            }
            let layer = ReadinessLayer::builder(hub.clone())
                .budget(budget)
                .metrics(metrics.clone())
                .build();
            let service = ServiceBuilder::new().layer(layer).service(hub.clone());
            let calls = tokio::spawn(async move {
                loop {
                    for tool in [
                        "mcp__files__echo",
                        "mcp__files__no_such_tool",
                        "mcp__stuck__echo",
                        "mcp__gone__echo",
                    ] {
                        let mut service = service.clone();
                        let call = ToolCall::new(tool).with_arguments(json!({ "text": "hi" }));
                        tokio::spawn(async move {
                            if let Ok(ready) = service.ready().await {
                                let _ = ready.call(call).await;
                            }
                        });
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            });
            let server = mcp_readiness::metrics::serve(metrics, "127.0.0.1:0".parse().unwrap())
                .await
                .expect("serve /metrics");
            AgentService {
                addr: server.local_addr().to_string(),
                hub,
                calls,
                server: Some(server),
            }
        }

        /// Stops the calls, the metrics endpoint and every server child.
        pub async fn stop(mut self) {
            self.calls.abort();
            if let Some(server) = self.server.take() {
                let _ = server.shutdown().await;
            }
            self.hub.shutdown().await;
        }
    }

    impl Drop for AgentService {
        fn drop(&mut self) {
            self.calls.abort();
        }
    }
}
