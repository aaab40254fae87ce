//! `mcp-readiness demo` end to end, as a newcomer runs it: the real binary, its real demo MCP
//! servers (stdio children and loopback streamable HTTP), `/metrics` and the status page read over
//! a real socket while it runs, the status page rendered by headless Chromium, signals, and the
//! run's trace received by a real OTLP receiver.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use mcp_readiness_fixtures::Scratch;
use mcp_readiness_fixtures::otlp::{attr, flatten, start_http_receiver, string_attr};
use mcp_readiness_fixtures::process::{Guard, assert_all_gone, command_line, descendants, signal};
use mcp_readiness_fixtures::{eventually, http::get, tools};
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use serde_json::Value;
use tokio::time::Instant;

/// A running `mcp-readiness demo`, killed with its children if the test fails.
struct Demo {
    guard: Guard,
    scratch: Scratch,
    /// `127.0.0.1:<port>` of its status page and `/metrics`.
    addr: String,
}

impl Demo {
    async fn start(name: &str, flags: &[&str], env: &[(&str, String)]) -> Demo {
        let scratch = Scratch::new(name);
        let child = Command::new(mcp_readiness_fixtures::cli())
            .args(["demo", "--listen", "127.0.0.1:0"])
            .args(flags)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(scratch.path("stdout")).unwrap())
            .stderr(std::fs::File::create(scratch.path("stderr")).unwrap())
            .spawn()
            .expect("start mcp-readiness demo");
        let guard = Guard::adopt("mcp-readiness demo", child);
        let addr = eventually(
            "the demo's status page address",
            Duration::from_secs(20),
            async || {
                scratch.read("stdout").lines().find_map(|l| {
                    Some(
                        l.strip_prefix("status page  http://")?
                            .trim_end_matches("/status")
                            .to_owned(),
                    )
                })
            },
        )
        .await;
        Demo {
            guard,
            scratch,
            addr,
        }
    }

    fn stdout(&self) -> String {
        self.scratch.read("stdout")
    }

    fn stderr(&self) -> String {
        self.scratch.read("stderr")
    }

    /// The demo's stdio servers (children running `demo-server`), once all three have started.
    async fn demo_servers(&self) -> Vec<u32> {
        let pid = self.guard.pid();
        eventually(
            "three demo-server children",
            Duration::from_secs(20),
            async || {
                let servers: Vec<u32> = descendants(pid)
                    .into_iter()
                    .filter(|p| command_line(*p).contains("demo-server"))
                    .collect();
                (servers.len() == 3).then_some(servers)
            },
        )
        .await
    }

    /// Waits until the first run has printed its record.
    async fn first_run_done(&self) {
        eventually(
            "the first run's record",
            Duration::from_secs(40),
            async || self.stdout().contains("\"by_state\"").then_some(()),
        )
        .await;
    }
}

/// `mcp_readiness_server_state{server,state} == 1`, by server, from one scrape.
fn states(metrics: &str) -> BTreeMap<String, String> {
    metrics
        .lines()
        .filter(|l| l.starts_with("mcp_readiness_server_state{") && l.ends_with(" 1"))
        .filter_map(|l| {
            let labels = l.split_once('{')?.1.split_once('}')?.0;
            let value = |key: &str| {
                labels
                    .split(',')
                    .find_map(|kv| kv.strip_prefix(&format!("{key}=\""))?.strip_suffix('"'))
                    .map(str::to_owned)
            };
            Some((value("server")?, value("state")?))
        })
        .collect()
}

fn expected(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(s, st)| (s.to_string(), st.to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_once_shows_all_four_states_while_it_runs_then_exits_0_leaving_no_child() {
    let started = Instant::now();
    let mut demo = Demo::start("demo-once", &["--once"], &[]).await;
    let children = demo.demo_servers().await;

    // While the run waits for `calendar` and `warehouse`, /metrics and the status page show every
    // server in its state.
    let while_running = expected(&[
        ("crm", "absent"),
        ("notes", "ready"),
        ("tickets", "unauthenticated"),
        ("warehouse", "connecting"),
        ("wiki", "ready"),
    ]);
    let scrape = scrape_until(&demo.addr, Duration::from_secs(8), |m| {
        let mut seen = states(m);
        seen.remove("calendar");
        seen == while_running
    })
    .await;
    assert!(scrape.contains("mcp_readiness_wait_budget_seconds{server=\"warehouse\"} 10"));
    let page = get(&demo.addr, "/status").await.unwrap().ok_text();
    for (server, state) in &while_running {
        mcp_readiness_fixtures::exposition::assert_status_row(&page, server, state);
    }
    // The same facts for programs: /status.json names every row of the page.
    let json: Value =
        serde_json::from_str(&get(&demo.addr, "/status.json").await.unwrap().ok_text()).unwrap();
    for (server, state) in &while_running {
        let entry = json["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["server"] == server.as_str())
            .unwrap_or_else(|| panic!("no {server} in /status.json: {json}"));
        assert_eq!(entry["state"], state.as_str(), "{server}: {json}");
    }

    let status = demo.guard.exit_within(Duration::from_secs(30)).await;
    let took = started.elapsed();
    eprintln!("demo --once took {took:?}");
    assert_eq!(status.code(), Some(0), "stderr:\n{}", demo.stderr());
    assert_all_gone("demo --once", &children, Duration::from_secs(2)).await;

    let stdout = demo.stdout();
    let record: Value = stdout
        .lines()
        .find(|l| l.starts_with("{\"ts\""))
        .map(|l| serde_json::from_str(l).expect("the run record is JSON"))
        .unwrap_or_else(|| panic!("no run record in:\n{stdout}"));
    assert_eq!(record["ran"], 3, "{record}");
    assert_eq!(record["blocked_by_auth"], serde_json::json!(["tickets"]));
    assert_eq!(record["still_connecting"], serde_json::json!(["warehouse"]));
    assert_eq!(record["absent"], serde_json::json!(["crm", "notes"]));
    assert_eq!(
        record["by_state"],
        serde_json::json!({"ready": 3, "connecting": 1, "unauthenticated": 1, "absent": 2})
    );
    let decisions: BTreeMap<&str, &str> = stdout
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            (cells.len() >= 6 && cells[1].starts_with("mcp__")).then(|| (cells[0], cells[5]))
        })
        .collect();
    assert_eq!(
        decisions,
        BTreeMap::from([
            ("agenda", "run"),
            ("crm-sync", "fallback"),
            ("export", "fallback"),
            ("find-notes", "run"),
            ("open-tickets", "abort"),
            ("stock-report", "retry_next_run"),
            ("wiki-lookup", "run"),
        ]),
        "{stdout}"
    );
    assert!(stdout.contains("Re-authorize the `tickets` connection"));
    assert!(stdout.contains("Add or repair the `crm` connection"));
    assert!(stdout.contains("Extend the wait budget for `warehouse`"));
    for secret in [
        mcp_readiness_cli::demo::STALE_TICKETS_TOKEN,
        mcp_readiness_cli::demo::ACCEPTED_TOKENS[0].1,
    ] {
        assert!(!stdout.contains(secret) && !demo.stderr().contains(secret));
    }
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

/// GETs `/metrics` until `done` holds for it; returns that scrape.
async fn scrape_until(addr: &str, limit: Duration, done: impl Fn(&str) -> bool) -> String {
    eventually("/metrics to show the expected states", limit, async || {
        let metrics = get(addr, "/metrics").await?.ok_text();
        if done(&metrics) {
            Ok(metrics)
        } else {
            Err(format!("last scrape:\n{metrics}"))
        }
    })
    .await
}

async fn stopped_by(signal_name: &str, expected_code: i32) {
    let mut demo = Demo::start(&format!("demo-{signal_name}"), &[], &[]).await;
    let children = demo.demo_servers().await;
    signal(demo.guard.pid(), signal_name);
    let status: ExitStatus = demo.guard.exit_within(Duration::from_secs(10)).await;
    assert_eq!(
        status.code(),
        Some(expected_code),
        "demo after SIG{signal_name}; stderr:\n{}",
        demo.stderr()
    );
    assert_all_gone(
        &format!("demo after SIG{signal_name}"),
        &children,
        Duration::from_secs(2),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_and_sighup_during_the_run_stop_every_demo_server_and_exit_130_and_129() {
    tokio::join!(stopped_by("INT", 130), stopped_by("HUP", 129));
}

/// Headless Chromium with the flags this closed network needs, on a fresh profile.
fn run_chromium(chromium: &Path, profile: &Path, args: &[&str]) -> std::process::Output {
    Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run chromium")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_chromium_shows_every_demo_server_in_its_state_then_sigterm_stops_them_with_143() {
    let Some(chromium) = tools::chromium() else {
        return;
    };
    let mut demo = Demo::start("demo-browser", &[], &[]).await;
    let children = demo.demo_servers().await;
    demo.first_run_done().await;
    let url = format!("http://{}/status", demo.addr);

    let profile = demo.scratch.path("chromium-profile");
    let dom = run_chromium(&chromium, &profile, &["--dump-dom", &url]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    for (server, state) in [
        ("notes", "ready"),
        ("calendar", "ready"),
        ("wiki", "ready"),
        ("warehouse", "connecting"),
        ("tickets", "unauthenticated"),
        ("crm", "absent"),
    ] {
        mcp_readiness_fixtures::exposition::assert_status_row(&dom, server, state);
    }
    assert!(
        dom.contains("<code>reauthorize</code>") && dom.contains("<code>add_connection</code>")
    );
    assert!(dom.contains("<code>extend_wait_budget</code>"));
    assert!(dom.contains("3 ready") && dom.contains("1 unauthenticated"));

    // Kept as a test artifact: target/test-artifacts/status-page.png.
    let artifacts = mcp_readiness_fixtures::repo().join("target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let png = artifacts.join("status-page.png");
    let _ = std::fs::remove_file(&png);
    let shot = run_chromium(
        &chromium,
        &profile,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1500,700",
            &url,
        ],
    );
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 10_000,
        "no screenshot at {} ({size} bytes); chromium said:\n{}",
        png.display(),
        String::from_utf8_lossy(&shot.stderr)
    );

    signal(demo.guard.pid(), "TERM");
    let status = demo.guard.exit_within(Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(143), "stderr:\n{}", demo.stderr());
    assert_all_gone("demo after SIGTERM", &children, Duration::from_secs(2)).await;
}

fn int_attr(span: &Span, key: &str) -> Option<i64> {
    match attr(&span.attributes, key) {
        Some(any_value::Value::IntValue(v)) => Some(*v),
        _ => None,
    }
}

fn str_attr(span: &Span, key: &str) -> Option<String> {
    string_attr(&span.attributes, key)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_run_is_one_trace_of_steps_connection_attempts_and_tool_calls() {
    let (receiver, mut received) = start_http_receiver().await;
    let endpoint = format!("http://{receiver}");
    let mut demo = Demo::start(
        "demo-trace",
        &["--once"],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)],
    )
    .await;
    let status = demo.guard.exit_within(Duration::from_secs(40)).await;
    assert_eq!(status.code(), Some(0), "stderr:\n{}", demo.stderr());
    let mut spans: Vec<Span> = Vec::new();
    while let Ok(request) = received.try_recv() {
        spans.extend(flatten(request).into_iter().flat_map(|r| r.spans));
    }

    let roots: Vec<&Span> = spans.iter().filter(|s| s.name == "readiness run").collect();
    assert_eq!(roots.len(), 1, "one run span: {:?}", names(&spans));
    let root = roots[0];
    assert!(root.parent_span_id.is_empty(), "the run span is the root");
    assert_eq!(int_attr(root, "mcp_readiness.steps"), Some(7));
    assert_eq!(int_attr(root, "mcp_readiness.ran"), Some(3));
    // Every span is in the run's trace but the supervisor's own retries: a server whose connect
    // failed is tried again in the background (1 s, then doubling), not by the run, and each of
    // those attempts is a trace of its own (a root `initialize` span naming its server).
    let (in_run, background): (Vec<&Span>, Vec<&Span>) =
        spans.iter().partition(|s| s.trace_id == root.trace_id);
    assert!(
        background.iter().all(|s| s.name == "initialize"
            && s.parent_span_id.is_empty()
            && str_attr(s, "mcp_readiness.server").is_some()),
        "only background connection attempts are outside the run's trace: {:?}",
        background.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    assert!(in_run.len() > background.len(), "{:?}", names(&spans));

    let step = |id: &str| {
        spans
            .iter()
            .find(|s| s.name == format!("step {id}"))
            .unwrap_or_else(|| panic!("no span `step {id}` in {:?}", names(&spans)))
    };
    for (id, state, decision, action) in [
        ("find-notes", "ready", "run", None),
        ("agenda", "ready", "run", None),
        (
            "stock-report",
            "connecting",
            "retry_next_run",
            Some("extend_wait_budget"),
        ),
        (
            "open-tickets",
            "unauthenticated",
            "abort",
            Some("reauthorize"),
        ),
        ("crm-sync", "absent", "fallback", Some("add_connection")),
        ("export", "absent", "fallback", Some("add_connection")),
    ] {
        let span = step(id);
        assert_eq!(
            span.parent_span_id, root.span_id,
            "step {id} is a child of the run"
        );
        assert_eq!(str_attr(span, "mcp_readiness.step").as_deref(), Some(id));
        assert_eq!(
            str_attr(span, "mcp_readiness.state").as_deref(),
            Some(state)
        );
        assert_eq!(
            str_attr(span, "mcp_readiness.decision").as_deref(),
            Some(decision)
        );
        assert_eq!(str_attr(span, "mcp_readiness.action").as_deref(), action);
    }
    let waited = int_attr(step("stock-report"), "mcp_readiness.waited_ms").unwrap_or(0);
    assert!(
        (10_000..12_000).contains(&waited),
        "stock-report waited {waited} ms"
    );

    // One `initialize` span per connection attempt, children of the run, with the result.
    let attempts: BTreeMap<String, &Span> = spans
        .iter()
        .filter(|s| s.name == "initialize" && s.trace_id == root.trace_id)
        .filter_map(|s| Some((str_attr(s, "mcp_readiness.server")?, s)))
        .collect();
    for (server, transport, result) in [
        ("notes", "pipe", "ok"),
        ("calendar", "pipe", "ok"),
        ("wiki", "tcp", "ok"),
        ("tickets", "tcp", "unauthorized"),
        ("crm", "pipe", "spawn_failed"),
    ] {
        let span = attempts.get(server).unwrap_or_else(|| {
            let seen: Vec<_> = spans
                .iter()
                .filter(|s| s.name == "initialize")
                .map(|s| &s.attributes)
                .collect();
            panic!("no initialize span for {server}: {seen:?}")
        });
        assert_eq!(span.kind, SpanKind::Client as i32);
        assert_eq!(
            span.parent_span_id, root.span_id,
            "{server}'s attempt is in the run"
        );
        assert_eq!(
            str_attr(span, "mcp.method.name").as_deref(),
            Some("initialize")
        );
        assert_eq!(
            str_attr(span, "network.transport").as_deref(),
            Some(transport)
        );
        assert_eq!(
            str_attr(span, "mcp_readiness.result").as_deref(),
            Some(result)
        );
        let error = (result != "ok").then_some(result);
        assert_eq!(str_attr(span, "error.type").as_deref(), error, "{server}");
    }

    // The layer's own call spans sit under the steps that made them.
    let call = spans
        .iter()
        .find(|s| s.name == "tools/call search_notes")
        .unwrap_or_else(|| panic!("no tools/call span: {:?}", names(&spans)));
    assert_eq!(call.parent_span_id, step("find-notes").span_id);
}

fn names(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}
