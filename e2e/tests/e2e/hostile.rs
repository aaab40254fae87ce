//! Hostile input and faults, end to end with the real binary, real child processes (the fixture
//! server), real sockets and `/proc`: secrets never leak at any log level, signals leave no child
//! behind, no input makes the binary panic, memory stays bounded, reloads keep every scrape
//! consistent, idle HTTP clients are shed and hung servers are noticed.
//!
//! `MCP_READINESS_BIN` runs these tests against another build of `mcp-readiness` (how each was seen
//! failing before its fix). `MCP_READINESS_SOAK=1` lengthens the churn and flood tests (see
//! docs/guarantees.md).

use mcp_readiness_fixtures as common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::configure::{http_fixture, started, stdio_fixture, write_config};
use common::eventually;
use common::process::{Guard, Reaper, assert_all_gone, signal};
use common::serve::Serve;
use common::{Scratch, fixture};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::time::Instant;

fn bin() -> String {
    common::bin().into()
}

fn soak() -> bool {
    std::env::var_os("MCP_READINESS_SOAK").is_some()
}

// ---------------------------------------------------------------------------------------------
// helpers: processes

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

/// Scrapes until `done` holds; fails after `limit`.
async fn scrape_until(serve: &Serve, limit: Duration, done: impl Fn(&str) -> bool) -> String {
    eventually("the scrapes to settle", limit, async || {
        let body = serve.metrics().await;
        if done(&body) {
            Ok(body)
        } else {
            Err(format!("{body}\nstderr:\n{}", serve.stderr()))
        }
    })
    .await
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
        let mut check = Guard::adopt("check", child);
        let pids = eventually(
            "both children and grandchildren",
            Duration::from_secs(20),
            async || {
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
        let _cleanup = Reaper(pids.clone());
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

// ---------------------------------------------------------------------------------------------
// 3. no panic on input: bad files and flags are exit 2 with a message that says what to do

fn assert_no_panic(what: &str, run: &Run) {
    assert!(
        run.code != Some(101) && !run.stderr.contains("panicked"),
        "{what} panicked: {:?}\n{}",
        run.code,
        run.stderr
    );
}

/// A configuration file's text from a `readiness` block and one absent server.
fn with_readiness(readiness: Value) -> String {
    json!({
        "mcpServers": { "gone": { "command": "/nonexistent/mcp-readiness-test/none" } },
        "readiness": readiness,
    })
    .to_string()
}

#[tokio::test]
async fn every_bad_file_or_flag_is_exit_2_with_a_message_that_names_the_problem() {
    let scratch = Scratch::new("bad-input");
    let huge = "18446744073709551615s";
    let fixture = fixture().to_string_lossy().into_owned();
    // (case, file text or a path to use as is, extra flags, expected in stderr)
    let cases: Vec<(&str, Option<String>, Vec<&str>, &str)> = vec![
        (
            "a UTF-8 byte order mark",
            Some(format!("\u{feff}{}", with_readiness(json!({})))),
            vec![],
            "byte order mark",
        ),
        ("an endless file", None, vec![], "larger than"),
        (
            "a budget of u64::MAX seconds",
            Some(with_readiness(json!({ "budget": huge }))),
            vec![],
            "at most 365 days",
        ),
        (
            "a cooldown of u64::MAX seconds",
            Some(with_readiness(json!({ "cooldown": huge }))),
            vec![],
            "at most 365 days",
        ),
        (
            "a connect_timeout of u64::MAX seconds",
            Some(with_readiness(json!({ "connect_timeout": huge }))),
            vec![],
            "at most 365 days",
        ),
        (
            "--budget of u64::MAX seconds",
            Some(with_readiness(json!({}))),
            vec!["--budget", huge],
            "longer than 365 days",
        ),
        (
            "a NUL byte in command",
            Some(json!({ "mcpServers": { "nul": { "command": "/bin/true\u{0}x" } } }).to_string()),
            vec![],
            "NUL",
        ),
        (
            "a NUL byte in an env value",
            Some(
                json!({ "mcpServers": { "nul": { "command": fixture, "env": { "A": "x\u{0}y" } } } })
                    .to_string(),
            ),
            vec![],
            "NUL",
        ),
        (
            "a control character in a server name",
            Some(json!({ "mcpServers": { "evil\u{1b}[2J": { "command": fixture } } }).to_string()),
            vec![],
            "letters, digits",
        ),
    ];
    for (case, text, flags, expected) in cases {
        let path = match &text {
            Some(text) => {
                let path = scratch.path("case.json");
                std::fs::write(&path, text).unwrap();
                path
            }
            None => PathBuf::from("/dev/zero"),
        };
        let mut args = vec!["check", "--config", path.to_str().unwrap()];
        args.extend(flags);
        let run = run(&args, &[("RUST_LOG", "warn")]).await;
        assert_no_panic(case, &run);
        assert_eq!(
            run.code,
            Some(2),
            "{case}: exit code; stderr:\n{}",
            run.stderr
        );
        assert!(
            run.stderr.contains(expected),
            "{case}: stderr does not say `{expected}`:\n{}",
            run.stderr
        );
        assert!(
            !run.stderr.contains('\u{1b}'),
            "{case}: a raw escape reached stderr:\n{}",
            run.stderr
        );
    }
}

#[tokio::test]
async fn a_cwd_that_does_not_exist_is_named_as_the_cause() {
    let scratch = Scratch::new("cwd");
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ "lost": { "command": fixture().to_string_lossy(), "cwd": "/nonexistent/mcp-readiness-cwd" } }),
        json!({ "budget": "2s", "poll": "100ms" }),
    );
    let run = run(&["check", "--config", config.to_str().unwrap()], &[]).await;
    assert_no_panic("a missing cwd", &run);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stdout.contains("working directory") && !run.stdout.contains("on PATH"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn names_and_step_ids_of_70000_characters_are_printed_without_a_panic() {
    let scratch = Scratch::new("long-names");
    let long = "n".repeat(70_000);
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ long.clone(): { "command": "/nonexistent/mcp-readiness-test/none" } }),
        json!({ "budget": "1s", "poll": "100ms", "steps": [
            { "id": "s".repeat(70_000), "tool": format!("mcp__{long}__t"), "required": true }
        ] }),
    );
    let run = run(&["check", "--config", config.to_str().unwrap()], &[]).await;
    assert_no_panic("a 70,000-character name", &run);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stdout.contains(&long), "the table names the server");
}

#[tokio::test]
async fn output_that_cannot_be_written_is_a_clear_error_not_a_panic() {
    let scratch = Scratch::new("dev-full");
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ "gone": { "command": "/nonexistent/mcp-readiness-test/none" } }),
        json!({ "budget": "1s", "poll": "100ms" }),
    );
    // `> /dev/full`
    for args in [
        vec!["check", "--config", config.to_str().unwrap()],
        vec!["simulate"],
    ] {
        let output = Command::new(bin())
            .args(&args)
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.code() == Some(74) && !stderr.contains("panicked"),
            "{args:?} > /dev/full: {:?}\n{stderr}",
            output.status
        );
        assert!(stderr.contains("could not write the output"), "{stderr}");
    }
    // `2> /dev/full` with an error to report: the exit code still says what happened.
    let bad = scratch.path("bad.json");
    std::fs::write(&bad, "{").unwrap();
    let output = Command::new(bin())
        .args(["check", "--config", bad.to_str().unwrap()])
        .stderr(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .expect("run");
    assert_eq!(
        output.status.code(),
        Some(2),
        "check 2> /dev/full: {:?}",
        output.status
    );
    // A closed pipe: the reader is gone before anything is written.
    let mut child = Command::new(bin())
        .args(["check", "--config", config.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run check");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.code() == Some(74) && !stderr.contains("panicked"),
        "check | (closed): {:?}\n{stderr}",
        output.status
    );
}

#[tokio::test]
async fn the_library_refuses_what_the_file_refuses_instead_of_panicking() {
    use mcp_readiness::Hub;
    use mcp_readiness::supervise::HubOptions;

    for (what, options) in [
        (
            "a zero health interval",
            HubOptions::builder().health_interval(Some(Duration::ZERO)),
        ),
        (
            "a zero connect timeout",
            HubOptions::builder().connect_timeout(Duration::ZERO),
        ),
        (
            "a zero call timeout",
            HubOptions::builder().call_timeout(Duration::ZERO),
        ),
    ] {
        let err = Hub::new(vec![common::stdio("a", &[])], options)
            .expect_err(what)
            .to_string();
        assert!(err.contains("HubOptions::"), "{what}: {err}");
    }
}

#[tokio::test]
async fn a_cooldown_of_u64_max_seconds_reads_absent_instead_of_panicking_a_worker() {
    use mcp_readiness::supervise::HubOptions;
    use mcp_readiness::{Hub, ServerSpec, State, TransportSpec};

    let spec = ServerSpec {
        name: "gone".into(),
        transport: TransportSpec::Stdio {
            command: "/nonexistent/mcp-readiness-test/none".into(),
            args: Vec::new(),
            env: Default::default(),
            cwd: None,
        },
    };
    let hub = Hub::new(
        vec![spec],
        HubOptions::builder()
            .cooldown(Duration::from_secs(u64::MAX))
            .connect_timeout(Duration::from_secs(u64::MAX))
            .health_interval(Some(Duration::from_secs(u64::MAX))),
    )
    .expect("a valid hub");
    hub.connect_all();
    let state = eventually(
        "`gone` to leave connecting",
        Duration::from_secs(10),
        async || {
            hub.servers()
                .into_iter()
                .find(|s| s.state != State::Connecting)
                .map(|s| s.state)
        },
    )
    .await;
    assert_eq!(state, State::Absent);
}

// ---------------------------------------------------------------------------------------------
// 4. bounded memory

/// Peak resident set size of a process in KiB (`VmHWM` in `/proc/<pid>/status`).
fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::test]
async fn a_child_flooding_stderr_without_a_newline_does_not_grow_the_exporter() {
    let scratch = Scratch::new("flood");
    let mb = if soak() { "2048" } else { "256" };
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ "flood": stdio_fixture(&scratch, "flood", &[("FIXTURE_STDERR_FLOOD_MB", mb)]) }),
        json!({ "connect_timeout": "120s" }),
    );
    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "debug")]).await;
    eventually(
        "the flood to finish",
        Duration::from_secs(120),
        async || scratch.read("log-flood").contains("flooded"),
    )
    .await;
    scrape_until(&serve, Duration::from_secs(30), |body| {
        states(body).get("flood").and_then(|s| s.get("ready")) == Some(&1.0)
    })
    .await;
    let peak_mib = peak_rss_kib(serve.guard.pid()) / 1024;
    eprintln!("peak RSS of serve after a {mb} MiB stderr flood: {peak_mib} MiB");
    assert!(
        peak_mib < 64,
        "serve grew to {peak_mib} MiB reading a {mb} MiB stderr line"
    );
}

// ---------------------------------------------------------------------------------------------
// 5. reload churn

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scrape_during_reload_churn_is_one_hot_and_removed_servers_leave_no_series() {
    let scratch = Scratch::new("churn");
    let reloads = if soak() { 2_000 } else { 100 };
    let set = |names: &[&str]| {
        let mut servers = serde_json::Map::new();
        for name in names {
            servers.insert((*name).into(), stdio_fixture(&scratch, name, &[]));
        }
        servers.insert(
            "gone".into(),
            json!({ "command": "/nonexistent/mcp-readiness-test/none" }),
        );
        Value::Object(servers)
    };
    let readiness = json!({ "cooldown": "1s", "ping": "off" });
    let a = serde_json::to_string(
        &json!({ "mcpServers": set(&["a1", "a2", "both"]), "readiness": readiness }),
    )
    .unwrap();
    let b = serde_json::to_string(
        &json!({ "mcpServers": set(&["b1", "b2", "both"]), "readiness": readiness }),
    )
    .unwrap();
    let config = scratch.path("mcp.json");
    std::fs::write(&config, &a).unwrap();
    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "warn")]).await;

    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let scrapes = {
        let done = done.clone();
        let addr = serve.addr.clone();
        tokio::spawn(async move {
            let mut n = 0u64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let body = common::http::get(&addr, "/metrics")
                    .await
                    .unwrap_or_else(|e| panic!("{e}"))
                    .text();
                assert_one_hot(&body, &format!("scrape {n}"));
                n += 1;
            }
            n
        })
    };
    for i in 0..reloads {
        std::fs::write(&config, if i % 2 == 0 { &b } else { &a }).unwrap();
        signal(serve.guard.pid(), "HUP");
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let scraped = scrapes.await.expect("every scrape was one-hot");
    // The last file written was `a` when `reloads` is even.
    let last = if reloads % 2 == 0 {
        ["a1", "a2"]
    } else {
        ["b1", "b2"]
    };
    let body = scrape_until(&serve, Duration::from_secs(30), |body| {
        let servers: BTreeSet<String> = body
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let at = l.find("server=\"")? + 8;
                Some(l[at..][..l[at..].find('"')?].to_owned())
            })
            .collect();
        let want: BTreeSet<String> = last
            .iter()
            .chain(&["both", "gone"])
            .map(|s| s.to_string())
            .collect();
        servers == want
    })
    .await;
    assert_one_hot(&body, "after the churn");
    eprintln!("{reloads} reloads, {scraped} scrapes, all one-hot");
    assert!(scraped > 10, "only {scraped} scrapes ran during the churn");
}

#[test]
fn a_removed_servers_late_events_do_not_bring_its_series_back() {
    use mcp_readiness::metrics::Metrics;
    use mcp_readiness::state::ConnectResult;
    use mcp_readiness::{
        State,
        state::{ConnectionEvent, EventSink},
    };

    let metrics = Metrics::new();
    metrics.on_event(&ConnectionEvent::ServerAdded {
        server: "old".into(),
        state: State::Connecting,
    });
    metrics.on_event(&ConnectionEvent::ServerRemoved {
        server: "old".into(),
    });
    // The removed server's aborted attempt reports late.
    metrics.on_event(&ConnectionEvent::StateChanged {
        server: "old".into(),
        from: State::Connecting,
        to: State::Absent,
        reason: Some("shut down".into()),
    });
    metrics.on_event(&ConnectionEvent::ConnectAttempt {
        server: "old".into(),
        result: ConnectResult::Closed,
        duration: Duration::from_millis(3),
    });
    let text = metrics.render();
    assert!(!text.contains("server=\"old\""), "{text}");

    // Added again, it is exported again.
    metrics.on_event(&ConnectionEvent::ServerAdded {
        server: "old".into(),
        state: State::Absent,
    });
    assert_one_hot(&metrics.render(), "re-added");
    assert!(metrics.render().contains("server=\"old\""));
}

// ---------------------------------------------------------------------------------------------
// 6. idle HTTP clients are shed

/// Opens `n` connections that send half a request and never finish it.
async fn half_sent(addr: &str, n: usize) -> Vec<tokio::net::TcpStream> {
    let mut streams = Vec::new();
    for _ in 0..n {
        let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write half a request");
        streams.push(stream);
    }
    streams
}

#[tokio::test]
async fn half_sent_requests_are_closed_by_the_header_timeout_and_scrapes_keep_working() {
    let scratch = Scratch::new("idle");
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ "one": stdio_fixture(&scratch, "one", &[]) }),
        json!({}),
    );
    let serve = Serve::start(&scratch, &config, &[]).await;
    let mut idle = half_sent(&serve.addr, 60).await;
    // Scrapes are served meanwhile.
    let body = serve.metrics().await;
    assert!(body.contains("mcp_readiness_build_info"), "{body}");
    // Every half-sent request is closed by the server within the header-read timeout (5 s).
    let start = Instant::now();
    for (i, stream) in idle.iter_mut().enumerate() {
        let mut buf = Vec::new();
        let closed =
            tokio::time::timeout(Duration::from_secs(15), stream.read_to_end(&mut buf)).await;
        assert!(
            closed.is_ok(),
            "connection {i} was still open {:?} after sending half a request",
            start.elapsed()
        );
    }
    eprintln!("60 half-sent requests closed after {:?}", start.elapsed());
    assert!(
        start.elapsed() < Duration::from_secs(9),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn with_few_file_descriptors_idle_clients_cannot_starve_child_restarts() {
    let scratch = Scratch::new("fd-limit");
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ "one": stdio_fixture(&scratch, "one", &[]) }),
        json!({ "ping": "off" }),
    );
    let (_serve, addr, err) =
        common::serve::serve_under(&scratch, "ulimit -n 64 &&", &config).await;
    let first = eventually("the child to start", Duration::from_secs(20), async || {
        started(&scratch, "one").first().copied()
    })
    .await;
    let _idle = half_sent(&addr, 60).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    signal(first, "KILL");
    let _cleanup = Reaper(vec![first]);
    let restarted = eventually(
        "the killed child to be restarted while 60 idle clients are connected",
        Duration::from_secs(4),
        async || {
            let pids = started(&scratch, "one");
            if pids.len() >= 2 {
                return Ok(pids);
            }
            let stderr = std::fs::read_to_string(&err).unwrap_or_default();
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            Err(format!("stderr:\n{}", tail.join("\n")))
        },
    )
    .await;
    let _restarted = Reaper(restarted);
}

// ---------------------------------------------------------------------------------------------
// 7. hung and garbled servers are noticed early

#[tokio::test]
async fn a_frozen_server_is_noticed_within_about_two_ping_intervals_not_the_call_timeout() {
    let scratch = Scratch::new("frozen");
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ "frozen": stdio_fixture(&scratch, "frozen", &[]) }),
        json!({ "ping": "1s", "ping_timeout": "1s", "call_timeout": "60s" }),
    );
    let serve = Serve::start(&scratch, &config, &[]).await;
    scrape_until(&serve, Duration::from_secs(20), |body| {
        states(body).get("frozen").and_then(|s| s.get("ready")) == Some(&1.0)
    })
    .await;
    let first = started(&scratch, "frozen")[0];
    let _cleanup = Reaper(vec![first]);
    signal(first, "STOP");
    let stopped = Instant::now();
    let noticed = async || serve.stderr().contains("no answer to the health ping");
    eventually(
        "the frozen server to be noticed",
        Duration::from_secs(6),
        noticed,
    )
    .await;
    assert!(
        serve
            .stderr()
            .contains("no answer to the health ping within 1s"),
        "a SIGSTOPped server still read ready {:?} later; stderr:\n{}",
        stopped.elapsed(),
        serve.stderr()
    );
    eprintln!("frozen server noticed after {:?}", stopped.elapsed());
    assert_all_gone("the frozen child", &[first], Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_server_writing_garbage_to_stdout_is_absent_at_once_with_add_connection() {
    let scratch = Scratch::new("garbage");
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ "garbled": stdio_fixture(&scratch, "garbled", &[("FIXTURE_GARBAGE", "1")]) }),
        json!({ "budget": "15s", "poll": "500ms" }),
    );
    let start = Instant::now();
    let run = run(&["check", "--config", config.to_str().unwrap()], &[]).await;
    let wall = start.elapsed();
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let row = run
        .stdout
        .lines()
        .find(|l| l.starts_with("garbled"))
        .unwrap_or_else(|| panic!("no row for `garbled`:\n{}", run.stdout));
    assert!(row.contains(" absent "), "{row}");
    assert!(
        run.stdout.contains("[add_connection]") && !run.stdout.contains("extend_wait_budget"),
        "{}",
        run.stdout
    );
    assert!(wall < Duration::from_secs(6), "took {wall:?}");
}

// ---------------------------------------------------------------------------------------------
// 8. arbitrary input: no panic, no raw control character in any output

fn assert_no_raw_controls(what: &str, text: &str) {
    if let Some(c) = text.chars().find(|c| c.is_control() && *c != '\n') {
        panic!("{what} contains the raw control character {c:?}:\n{text}");
    }
}

/// Text made mostly of control characters (C0, DEL, C1), with some letters and wide characters.
const NASTY: &str = "[a-z\\x00-\\x1f\\x7f\\u{80}-\\u{9f}é🚀]{1,12}";

fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::from),
        "[a-z_${}:-]{0,12}".prop_map(Value::from),
        "[0-9]{1,25}(ms|s|m|h|d)".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::btree_map(
                prop_oneof![
                    any::<String>(),
                    Just("command".to_owned()),
                    Just("url".to_owned()),
                    Just("type".to_owned()),
                    Just("env".to_owned()),
                    Just("budget".to_owned()),
                    Just("steps".to_owned()),
                    Just("tool".to_owned()),
                    Just("id".to_owned()),
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic_the_configuration_loader(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2048)) {
        let scratch = Scratch::new("bytes");
        let path = scratch.path("mcp.json");
        std::fs::write(&path, &bytes).unwrap();
        if let Err(err) = mcp_readiness::config::Config::load(&path) {
            assert_no_raw_controls("the error", &mcp_readiness::secret::escape_controls(&err.to_string()));
        }
    }

    #[test]
    fn arbitrary_json_never_panics_the_configuration_loader(
        servers in json_value(),
        readiness in json_value(),
        whole in json_value(),
    ) {
        for doc in [json!({ "mcpServers": servers, "readiness": readiness }), whole] {
            let _ = mcp_readiness::config::Config::parse(&doc.to_string(), "mcp.json", |_| None);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(12))]

    #[test]
    fn arbitrary_server_tool_and_step_names_through_check_neither_panic_nor_reach_the_terminal_raw(
        server in proptest::prop_oneof![proptest::prelude::any::<String>(), "[a-z][a-z0-9-]{0,8}", NASTY],
        tool in proptest::prop_oneof![proptest::prelude::any::<String>(), NASTY],
        id in proptest::prop_oneof![proptest::prelude::any::<String>(), NASTY],
    ) {
        let scratch = Scratch::new("names");
        let path = scratch.path("mcp.json");
        let doc = json!({
            "mcpServers": { server.clone(): { "command": "/nonexistent/mcp-readiness-test/none" } },
            "readiness": { "budget": "1s", "poll": "100ms", "steps": [
                { "id": id, "tool": format!("mcp__{server}__{tool}"), "required": false },
            ] },
        });
        std::fs::write(&path, doc.to_string()).unwrap();
        let output = Command::new(bin())
            .args(["check", "--config", path.to_str().unwrap()])
            .env("RUST_LOG", "debug")
            .output()
            .expect("run check");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        proptest::prop_assert!(
            matches!(output.status.code(), Some(0..=2)) && !stderr.contains("panicked"),
            "{:?}\n{}", output.status, stderr
        );
        assert_no_raw_controls("stdout", &stdout);
        assert_no_raw_controls("stderr", &stderr);
    }
}

#[test]
fn hostile_names_render_a_promtool_clean_exposition_without_raw_control_characters() {
    use mcp_readiness::{
        State,
        state::{ConnectionEvent, EventSink},
    };
    use mcp_readiness::{metrics::Metrics, state::CallOutcome};

    let metrics = Metrics::new();
    for name in [
        "esc\u{1b}[2J",
        "cr\rlf\nnul\u{0}",
        "bel\u{7}",
        "q\"b\\",
        "名前",
        "",
    ] {
        metrics.on_event(&ConnectionEvent::ServerAdded {
            server: name.into(),
            state: State::Absent,
        });
        metrics
            .server(name)
            .tool(&format!("t{name}"))
            .observe_call(CallOutcome::Ok);
    }
    let text = metrics.render();
    assert_no_raw_controls("/metrics", &text);
    assert_one_hot(&text, "hostile names");
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("promtool not found ({e}): `promtool check metrics` was NOT run");
            return;
        }
        Err(e) => panic!("promtool is required in CI ({e}): apt-get install prometheus"),
    };
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() && said.trim().is_empty(),
        "promtool said: {said}"
    );
}

// ---------------------------------------------------------------------------------------------
// 9. smaller defects

#[tokio::test]
async fn shutdown_tells_the_event_sinks_so_metrics_stop_reading_ready() {
    use mcp_readiness::metrics::Metrics;
    use mcp_readiness::supervise::HubOptions;
    use mcp_readiness::{Hub, State};

    let metrics = Metrics::new();
    let hub = Hub::new(
        vec![common::stdio("one", &[])],
        HubOptions::builder().event_sink(metrics.clone()),
    )
    .expect("a valid hub");
    hub.connect_all();
    eventually("`one` to be ready", Duration::from_secs(20), async || {
        hub.servers()
            .into_iter()
            .any(|s| s.state == State::Ready)
            .then_some(())
    })
    .await;
    assert_eq!(states(&metrics.render())["one"]["ready"], 1.0);
    hub.shutdown().await;
    let after = states(&metrics.render());
    assert_eq!(after["one"]["ready"], 0.0, "{after:?}");
    assert_eq!(after["one"]["absent"], 1.0, "{after:?}");
}

#[tokio::test]
async fn listening_on_a_non_loopback_address_logs_a_warning() {
    let scratch = Scratch::new("wildcard");
    let config = write_config(&scratch, "mcp.json", json!({}), json!({}));
    let out = scratch.path("serve.out");
    let err = scratch.path("serve.err");
    let child = Command::new(bin())
        .args(["serve", "--listen", "0.0.0.0:0", "--config"])
        .arg(&config)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("start serve");
    let mut serve = Guard::adopt("serve", child);
    eventually("serve's address", Duration::from_secs(20), async || {
        std::fs::read_to_string(&out)
            .ok()?
            .contains("listening on")
            .then_some(())
    })
    .await;
    signal(serve.pid(), "TERM");
    serve.exit_within(Duration::from_secs(10)).await;
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(
        stderr.contains("WARN") && stderr.contains("other machines can reach"),
        "{stderr}"
    );
}
