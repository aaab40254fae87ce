//! Hostile input and faults, end to end with the real binary, real child processes (the fixture
//! server), real sockets and `/proc`: secrets never leak at any log level, signals leave no child
//! behind, no input makes the binary panic, memory stays bounded, reloads keep every scrape
//! consistent, idle HTTP clients are shed and hung servers are noticed.
//!
//! `HOSTILE_BIN` runs these tests against another build of `mcp-readiness` (how each was seen
//! failing before its fix). `MCP_READINESS_SOAK=1` lengthens the churn and flood tests (see the
//! README's "Guarantees under hostile input and faults").

// Helpers used by later sections.
#![allow(dead_code)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Scratch, alive, fixture};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;

fn bin() -> String {
    std::env::var("HOSTILE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-readiness").into())
}

fn soak() -> bool {
    std::env::var_os("MCP_READINESS_SOAK").is_some()
}

// ---------------------------------------------------------------------------------------------
// helpers: processes

/// Every living descendant of `root`, from `/proc`.
fn descendants(root: u32) -> BTreeSet<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let mut fields = stat.rsplit_once(')').map(|(_, r)| r.split_whitespace());
        let state = fields.as_mut().and_then(Iterator::next);
        let ppid = fields.as_mut().and_then(Iterator::next);
        if let (Some(state), Some(Ok(ppid))) = (state, ppid.map(str::parse))
            && state != "Z"
        {
            parents.push((pid, ppid));
        }
    }
    let mut found = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, _) in parents.iter().filter(|(_, p)| *p == parent) {
            if found.insert(*pid) {
                frontier.push(*pid);
            }
        }
    }
    found
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{name} {pid} failed");
}

/// A child process killed (with its descendants) when the test ends, even on a failed assertion.
struct Guard {
    child: Child,
    name: &'static str,
}

impl Guard {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    async fn exit_within(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit within {limit:?}",
                self.name
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            for pid in descendants(self.child.id()) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Kills pids (the children a test found) on drop, whatever happened.
struct KillOnDrop(Vec<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in &self.0 {
            if alive(*pid) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
}

async fn wait_for<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The fixture over streamable HTTP on 127.0.0.1, accepting only `token`.
async fn http_fixture(scratch: &Scratch, token: &str) -> (Guard, u16) {
    let out = scratch.path("http.out");
    let child = Command::new(fixture())
        .arg("--http")
        .env("FIXTURE_TOKEN", token)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the HTTP fixture");
    let guard = Guard {
        child,
        name: "the HTTP fixture",
    };
    let port = wait_for("the HTTP fixture's port", Duration::from_secs(20), || {
        std::fs::read_to_string(&out)
            .ok()?
            .lines()
            .find_map(|l| l.strip_prefix("PORT ")?.trim().parse::<u16>().ok())
    })
    .await;
    (guard, port)
}

fn stdio_fixture(scratch: &Scratch, name: &str, env: &[(&str, &str)]) -> Value {
    let mut vars = serde_json::Map::new();
    vars.insert(
        "FIXTURE_LOG".into(),
        json!(scratch.path(&format!("log-{name}")).to_string_lossy()),
    );
    for (k, v) in env {
        vars.insert((*k).into(), json!(v));
    }
    json!({ "command": fixture().to_string_lossy(), "args": [], "env": vars })
}

fn started(scratch: &Scratch, name: &str) -> Vec<u32> {
    scratch
        .read(&format!("log-{name}"))
        .lines()
        .filter_map(|l| l.strip_prefix("start ")?.parse().ok())
        .collect()
}

fn write_config(scratch: &Scratch, file: &str, servers: Value, readiness: Value) -> PathBuf {
    let path = scratch.path(file);
    let config = json!({ "mcpServers": servers, "readiness": readiness });
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    path
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the binary to completion (at most a minute) with extra environment.
async fn run(args: &[&str], env: &[(&str, &str)]) -> Run {
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(bin())
            .args(args)
            .envs(env.iter().copied())
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the command finishes within a minute")
    .expect("the mcp-readiness binary runs");
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A raw HTTP/1.0 GET on 127.0.0.1; returns the body of any answer.
async fn http_get(addr: &str, target: &str) -> String {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        stream
            .write_all(format!("GET {target} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
            .await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        Ok::<_, std::io::Error>(raw)
    };
    let raw = tokio::time::timeout(Duration::from_secs(10), exchange)
        .await
        .unwrap_or_else(|_| panic!("GET http://{addr}{target} timed out"))
        .unwrap_or_else(|e| panic!("GET http://{addr}{target}: {e}"));
    let text = String::from_utf8(raw).expect("a UTF-8 answer");
    let (_, body) = text.split_once("\r\n\r\n").expect("an HTTP answer");
    body.to_owned()
}

/// A running `serve`: its address, and its stdout / stderr in files.
struct Serve {
    guard: Guard,
    addr: String,
    scratch_out: PathBuf,
    scratch_err: PathBuf,
}

impl Serve {
    async fn start(scratch: &Scratch, config: &Path, env: &[(&str, &str)]) -> Serve {
        let out = scratch.path("serve.out");
        let err = scratch.path("serve.err");
        let child = Command::new(bin())
            .args(["serve", "--listen", "127.0.0.1:0", "--config"])
            .arg(config)
            .envs(env.iter().copied())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .expect("start serve");
        let guard = Guard {
            child,
            name: "serve",
        };
        let addr = wait_for("serve's address", Duration::from_secs(20), || {
            std::fs::read_to_string(&out).ok()?.lines().find_map(|l| {
                Some(
                    l.strip_prefix("listening on http://")?
                        .strip_suffix("/metrics")?
                        .to_owned(),
                )
            })
        })
        .await;
        Serve {
            guard,
            addr,
            scratch_out: out,
            scratch_err: err,
        }
    }

    async fn scrape(&self) -> String {
        http_get(&self.addr, "/metrics").await
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(&self.scratch_out).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.scratch_err).unwrap_or_default()
    }
}

/// Scrapes until `done` holds; fails after `limit`.
async fn scrape_until(serve: &Serve, limit: Duration, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + limit;
    loop {
        let body = serve.scrape().await;
        if done(&body) {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "scrapes did not settle:\n{body}\nstderr:\n{}",
            serve.stderr()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `mcp_readiness_server_state` by server: state -> value.
fn states(metrics: &str) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut out: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for line in metrics.lines() {
        let Some(rest) = line.strip_prefix("mcp_readiness_server_state{") else {
            continue;
        };
        let (labels, value) = rest.rsplit_once("} ").expect("labels and value");
        let mut server = None;
        let mut state = None;
        for pair in labels.split("\",") {
            let (k, v) = pair.split_once("=\"").expect("label=\"value\"");
            let v = v.trim_end_matches('"').to_owned();
            match k {
                "server" => server = Some(v),
                "state" => state = Some(v),
                _ => {}
            }
        }
        out.entry(server.expect("server label"))
            .or_default()
            .insert(state.expect("state label"), value.parse().expect("a value"));
    }
    out
}

/// Every server in the scrape is one-hot over exactly the four states.
fn assert_one_hot(metrics: &str, context: &str) {
    for (server, by_state) in states(metrics) {
        let names: Vec<&str> = by_state.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            ["absent", "connecting", "ready", "unauthenticated"],
            "`{server}` does not have the four state series ({context}):\n{metrics}"
        );
        let ones = by_state.values().filter(|v| **v == 1.0).count();
        let zeros = by_state.values().filter(|v| **v == 0.0).count();
        assert!(
            ones == 1 && zeros == 3,
            "`{server}` is not one-hot ({context}): {by_state:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// helpers: an OTLP/HTTP receiver that keeps every request body

/// Accepts OTLP/HTTP exports on 127.0.0.1 and keeps their raw bodies (protobuf carries strings
/// as plain UTF-8, so a secret in any attribute shows up in the bytes).
async fn otlp_sink() -> (String, Arc<Mutex<Vec<u8>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = bodies.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                loop {
                    let Some(head_end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    while buf.len() < head_end + 4 + length {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    kept.lock()
                        .unwrap()
                        .extend_from_slice(&buf[head_end + 4..head_end + 4 + length]);
                    buf.drain(..head_end + 4 + length);
                    let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if stream.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), bodies)
}

// ---------------------------------------------------------------------------------------------
// 1. secrets

const SECRETS: [&str; 6] = [
    "Qs3cretQueryValue1",
    "Us3cretUserinfo1",
    "Ps3cretPathValue1",
    "Hs3cretHeaderValue1",
    "Es3cretEnvValue123",
    "Rs3cretRefusedPath1",
];

fn assert_no_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "{what} shows the credential `{secret}`:\n{}",
            text.lines()
                .filter(|l| l.contains(secret))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn secret_servers(scratch: &Scratch, port: u16) -> Value {
    json!({
        "query": { "type": "http", "url": format!("http://127.0.0.1:{port}/mcp?token={}", SECRETS[0]),
                   "headers": { "Authorization": "Bearer ${GOOD_TOKEN}" } },
        "userinfo": { "type": "http", "url": format!("http://alice:{}@127.0.0.1:{port}/mcp", SECRETS[1]),
                      "headers": { "Authorization": "Bearer ${GOOD_TOKEN}" } },
        "path": { "type": "http", "url": format!("http://127.0.0.1:{port}/{}/mcp", SECRETS[2]) },
        "header": { "type": "http", "url": format!("http://127.0.0.1:{port}/mcp"),
                    "headers": { "Authorization": format!("Bearer {}", SECRETS[3]) } },
        "env": stdio_fixture(scratch, "env", &[("API_KEY", SECRETS[4])]),
        "refused": { "type": "http", "url": format!("http://127.0.0.1:1/{}/mcp", SECRETS[5]) },
    })
}

#[tokio::test]
async fn no_credential_form_reaches_stdout_stderr_metrics_or_exported_spans_at_trace_level() {
    let scratch = Scratch::new("secrets");
    let good = "g00d-t0ken-for-fixture";
    let (_http, port) = http_fixture(&scratch, good).await;
    let config = write_config(
        &scratch,
        "mcp.json",
        secret_servers(&scratch, port),
        json!({ "budget": "3s", "poll": "200ms" }),
    );
    let (endpoint, spans) = otlp_sink().await;
    let env = [
        ("RUST_LOG", "trace"),
        ("GOOD_TOKEN", good),
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            &*format!("{endpoint}/v1/traces"),
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
    ];

    let checked = run(&["check", "--config", config.to_str().unwrap()], &env).await;
    assert!(
        checked.stderr.contains("TRACE") || checked.stderr.contains("DEBUG"),
        "RUST_LOG=trace took effect:\n{}",
        checked.stderr
    );
    assert_no_secret("check's stdout", &checked.stdout);
    assert_no_secret("check's stderr", &checked.stderr);

    let serve = Serve::start(&scratch, &config, &env).await;
    let metrics = scrape_until(&serve, Duration::from_secs(20), |body| {
        states(body).get("refused").and_then(|s| s.get("absent")) == Some(&1.0)
    })
    .await;
    assert_no_secret("/metrics", &metrics);
    let mut serve = serve;
    signal(serve.guard.pid(), "TERM");
    serve.guard.exit_within(Duration::from_secs(20)).await;
    assert_no_secret("serve's stdout", &serve.stdout());
    assert_no_secret("serve's stderr", &serve.stderr());

    let exported = spans.lock().unwrap().clone();
    assert!(!exported.is_empty(), "spans were exported over OTLP");
    assert_no_secret("exported spans", &String::from_utf8_lossy(&exported));
}

// ---------------------------------------------------------------------------------------------
// 2. signals

fn grandchildren(scratch: &Scratch, name: &str) -> Vec<u32> {
    scratch
        .read(&format!("log-{name}"))
        .lines()
        .filter_map(|l| l.strip_prefix("grandchild ")?.parse().ok())
        .collect()
}

async fn assert_all_gone(what: &str, pids: &[u32], grace: Duration) {
    let deadline = Instant::now() + grace;
    while pids.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "{what}: processes left running: {left:?}");
}

#[tokio::test]
async fn check_stops_every_child_and_its_group_on_sigterm_sigint_and_sighup_and_exits_128_plus_the_signal()
 {
    for (signal_name, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let scratch = Scratch::new("check-signal");
        let slow = [
            ("FIXTURE_STARTUP_DELAY_MS", "60000"),
            ("FIXTURE_GRANDCHILD", "1"),
        ];
        let config = write_config(
            &scratch,
            "mcp.json",
            json!({
                "one": stdio_fixture(&scratch, "one", &slow),
                "two": stdio_fixture(&scratch, "two", &slow),
            }),
            json!({ "budget": "50s", "poll": "1s", "connect_timeout": "55s" }),
        );
        let child = Command::new(bin())
            .args(["check", "--config"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(scratch.path("check.err")).unwrap())
            .spawn()
            .expect("start check");
        let mut check = Guard {
            child,
            name: "check",
        };
        let pids = wait_for(
            "both children and grandchildren",
            Duration::from_secs(20),
            || {
                let pids: Vec<u32> = ["one", "two"]
                    .iter()
                    .flat_map(|n| {
                        started(&scratch, n)
                            .into_iter()
                            .chain(grandchildren(&scratch, n))
                    })
                    .collect();
                (pids.len() == 4).then_some(pids)
            },
        )
        .await;
        let _cleanup = KillOnDrop(pids.clone());
        signal(check.pid(), signal_name);
        let status = check.exit_within(Duration::from_secs(10)).await;
        assert_all_gone(
            &format!("after SIG{signal_name} to check"),
            &pids,
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(
            status.code(),
            Some(code),
            "SIG{signal_name}: {status:?}; stderr:\n{}",
            scratch.read("check.err")
        );
    }
}
