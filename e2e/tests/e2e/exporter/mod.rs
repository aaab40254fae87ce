//! The standalone exporter end to end: `mcp-readiness check` and `mcp-readiness serve` run as real
//! processes against real MCP servers (the fixture server of `fixtures/src/server.rs` over
//! stdio and streamable HTTP, and `@modelcontextprotocol/server-filesystem` from the npm registry),
//! with `/metrics` read over a real socket, checked by the real `promtool` and scraped by a real
//! Prometheus server.
#![cfg(target_os = "linux")]

mod faults;

use mcp_readiness_fixtures as common;

use common::configure::{started, stdio_fixture, write_config};
use common::process::{Guard, assert_all_gone, command_line, descendants, signal};
use common::serve::Serve;
use common::{Scratch, alive, eventually, tools};

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

// ---------------------------------------------------------------------------------------------
// helpers: binaries, scratch directories, processes

/// The token the HTTP fixture accepts; never given to the exporter.
const RIGHT_TOKEN: &str = "right-token-7f3a9c";
/// The token the configurations send; must never be printed.
const WRONG_TOKEN: &str = "wrong-token-b41d2e";

/// The fixture over streamable HTTP on 127.0.0.1, accepting only `RIGHT_TOKEN`.
async fn http_fixture(scratch: &Scratch) -> (Guard, u16) {
    common::configure::http_fixture(scratch, RIGHT_TOKEN).await
}

// ---------------------------------------------------------------------------------------------
// helpers: configurations

/// A stdio fixture entry logging to `log-<name>`, with extra environment variables.
/// The HTTP fixture with the wrong token, given through `${MCP_TEST_TOKEN}` expansion.
fn http_entry(port: u16) -> Value {
    json!({
        "type": "http",
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": { "Authorization": "Bearer ${MCP_TEST_TOKEN}" }
    })
}

fn absent_entry() -> Value {
    json!({ "command": "/nonexistent/mcp-readiness-test/no-such-server", "args": [] })
}

// ---------------------------------------------------------------------------------------------
// helpers: `check`

struct CheckRun {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    wall: Duration,
}

async fn check(config: &Path, flags: &[&str]) -> CheckRun {
    let start = Instant::now();
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(common::bin())
            .arg("check")
            .arg("--config")
            .arg(config)
            .args(flags)
            .env("MCP_TEST_TOKEN", WRONG_TOKEN)
            .env("RUST_LOG", "info")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("check finishes within a minute")
    .expect("the mcp-readiness binary runs");
    CheckRun {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        wall: start.elapsed(),
    }
}

fn assert_no_token(what: &str, text: &str) {
    for token in [RIGHT_TOKEN, WRONG_TOKEN] {
        assert!(!text.contains(token), "{what} shows a token:\n{text}");
    }
}

/// The table's rows by step id: `[tool, state, waited_ms, decision]`.
fn table_rows(stdout: &str) -> BTreeMap<String, [String; 4]> {
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split_whitespace().collect();
    assert_eq!(
        header,
        ["STEP", "TOOL", "STATE", "WAITED", "DECISION", "REASON"],
        "{stdout}"
    );
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            assert!(cells.len() >= 7 && cells[4] == "ms", "row `{l}`");
            (
                cells[0].to_owned(),
                [cells[1], cells[2], cells[3], cells[5]].map(str::to_owned),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// `check` end to end

#[tokio::test]
async fn check_names_every_state_in_its_record_table_and_note_within_about_one_budget() {
    let scratch = Scratch::new("check");
    let (_http, port) = http_fixture(&scratch).await;
    let servers = |tag: &str| {
        json!({
            "ready": stdio_fixture(&scratch, &format!("ready-{tag}"), &[]),
            "slow": stdio_fixture(&scratch, &format!("slow-{tag}"), &[("FIXTURE_STARTUP_DELAY_MS", "1000")]),
            "stuck": stdio_fixture(&scratch, &format!("stuck-{tag}"), &[("FIXTURE_STARTUP_DELAY_MS", "600000")]),
            "authz": http_entry(port),
            "gone": absent_entry(),
        })
    };
    let table_config = write_config(&scratch, "table.json", servers("table"), json!({}));
    let json_config = write_config(&scratch, "json.json", servers("json"), json!({}));
    let flags = ["--budget", "3s", "--poll", "250ms"];
    let json_flags = ["--budget", "3s", "--poll", "250ms", "--json"];
    let (table, record) = tokio::join!(
        check(&table_config, &flags),
        check(&json_config, &json_flags)
    );

    // No child outlives the check: every fixture it started (stuck ones included) is gone.
    let mut pids = Vec::new();
    for tag in ["table", "json"] {
        for name in ["ready", "slow", "stuck"] {
            let started = started(&scratch, &format!("{name}-{tag}"));
            assert_eq!(started.len(), 1, "{name}-{tag} started once: {started:?}");
            pids.extend(started);
        }
    }
    assert_all_gone("after check", &pids, Duration::from_secs(1)).await;

    eprintln!(
        "check: table run {:?}, --json run {:?} (budget 3 s)",
        table.wall, record.wall
    );
    for run in [&table, &record] {
        assert_eq!(
            run.code,
            Some(1),
            "stdout:\n{}\nstderr:\n{}",
            run.stdout,
            run.stderr
        );
        // About one budget: not less (`stuck` is waited for), and far from budget x servers.
        assert!(
            run.wall >= Duration::from_millis(2900) && run.wall < Duration::from_secs(10),
            "wall time {:?}",
            run.wall
        );
        assert_no_token("check stdout", &run.stdout);
        assert_no_token("check stderr", &run.stderr);
    }

    // The JSON record: exactly the contract's keys, lists and counts.
    let value: Value = serde_json::from_str(record.stdout.trim()).expect("one JSON object");
    let keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected_keys = vec![
        "ts",
        "ran",
        "blocked_by_auth",
        "still_connecting",
        "absent",
        "by_state",
    ];
    expected_keys.sort_unstable();
    let mut sorted_keys = keys.clone();
    sorted_keys.sort_unstable();
    assert_eq!(sorted_keys, expected_keys, "{value}");
    assert!(
        humantime::parse_rfc3339(value["ts"].as_str().unwrap()).is_ok(),
        "{value}"
    );
    assert_eq!(value["ran"], 2, "{value}");
    assert_eq!(value["blocked_by_auth"], json!(["authz"]));
    assert_eq!(value["still_connecting"], json!(["stuck"]));
    assert_eq!(value["absent"], json!(["gone"]));
    assert_eq!(
        value["by_state"],
        json!({"ready": 2, "connecting": 1, "unauthenticated": 1, "absent": 1})
    );
    assert_eq!(record.stdout.trim().lines().count(), 1, "only the record");

    // The table: one row per server, with state and decision.
    let rows = table_rows(&table.stdout);
    let cell = |id: &str| {
        rows.get(id)
            .unwrap_or_else(|| panic!("no row `{id}`:\n{}", table.stdout))
    };
    for (id, state, decision) in [
        ("ready", "ready", "run"),
        ("slow", "ready", "run"),
        ("stuck", "connecting", "retry_next_run"),
        ("authz", "unauthenticated", "abort"),
        ("gone", "absent", "abort"),
    ] {
        let row = cell(id);
        assert_eq!(row[0], format!("mcp__{id}__*"), "{}", table.stdout);
        assert_eq!(
            (row[1].as_str(), row[3].as_str()),
            (state, decision),
            "{}",
            table.stdout
        );
    }
    let waited = |id: &str| cell(id)[2].parse::<u64>().expect("waited ms");
    assert!((900..2900).contains(&waited("slow")), "{}", table.stdout);
    assert!((2900..4500).contains(&waited("stuck")), "{}", table.stdout);
    assert!(waited("authz") < 2000, "{}", table.stdout);
    assert!(waited("gone") < 2000, "{}", table.stdout);

    // The hand-off note: each blocking server named with its action; ready ones not.
    let note = table
        .stdout
        .split("\n\n")
        .nth(1)
        .expect("a note after the table");
    assert!(note.starts_with("2 of 5 steps ran. Next steps:"), "{note}");
    let line = |server: &str| {
        note.lines()
            .find(|l| l.starts_with(&format!("- `{server}`")))
            .unwrap_or_else(|| panic!("no line for `{server}` in:\n{note}"))
    };
    assert!(line("authz").contains("needs re-authorization"), "{note}");
    assert!(line("authz").contains("[reauthorize]"), "{note}");
    assert!(
        line("authz").contains("Affected steps: authz (abort)."),
        "{note}"
    );
    assert!(line("gone").contains("is absent"), "{note}");
    assert!(line("gone").contains("[add_connection]"), "{note}");
    assert!(line("gone").contains("could not start command"), "{note}");
    assert!(
        line("stuck").contains("was still connecting when the budget ran out [extend_wait_budget]"),
        "{note}"
    );
    assert!(
        line("stuck").contains("Affected steps: stuck (retry_next_run)."),
        "{note}"
    );
    assert!(
        !note.contains("`ready`") && !note.contains("`slow`"),
        "{note}"
    );
    assert_eq!(
        note.lines().filter(|l| l.starts_with("- ")).count(),
        3,
        "{note}"
    );
}

#[tokio::test]
async fn check_exits_0_at_once_when_every_required_step_is_ready() {
    let scratch = Scratch::new("check-ready");
    let all_ready = write_config(
        &scratch,
        "ready.json",
        json!({
            "one": stdio_fixture(&scratch, "one", &[]),
            "two": stdio_fixture(&scratch, "two", &[]),
        }),
        json!({ "budget": "20s", "poll": "1s" }),
    );
    let run = check(&all_ready, &[]).await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(run.wall < Duration::from_secs(10), "took {:?}", run.wall);
    let rows = table_rows(&run.stdout);
    assert_eq!(rows.len(), 2, "{}", run.stdout);
    assert!(rows.values().all(|r| r[1] == "ready" && r[3] == "run"));
    assert!(
        run.stdout
            .contains("2 of 2 steps ran. Nothing needs a human."),
        "{}",
        run.stdout
    );

    // Steps: an optional step on an absent server does not fail the check; its fallback runs.
    let with_steps = write_config(
        &scratch,
        "steps.json",
        json!({
            "one": stdio_fixture(&scratch, "steps", &[]),
            "gone": absent_entry(),
        }),
        json!({
            "budget": "5s",
            "poll": "500ms",
            "steps": [
                { "id": "read", "tool": "mcp__one__echo", "required": true },
                { "id": "archive", "tool": "mcp__gone__write", "required": false, "fallback": "write-local" },
            ],
        }),
    );
    let run = check(&with_steps, &["--json"]).await;
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let value: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(value["absent"], json!(["gone"]), "{value}");
    assert_eq!(
        value["by_state"],
        json!({"ready": 1, "absent": 1}),
        "{value}"
    );

    let pids: Vec<u32> = ["one", "two", "steps"]
        .iter()
        .flat_map(|n| started(&scratch, n))
        .collect();
    assert_eq!(pids.len(), 3, "{pids:?}");
    assert_all_gone("after check", &pids, Duration::from_secs(1)).await;
}

#[tokio::test]
async fn check_exits_2_on_a_bad_config_or_a_poll_longer_than_the_budget() {
    let scratch = Scratch::new("check-invalid");
    let bad = scratch.path("bad.json");
    std::fs::write(&bad, r#"{"mcpServers": {"x": {"command": ""}}}"#).unwrap();
    let run = check(&bad, &[]).await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("mcpServers.x.command"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);

    let run = check(&scratch.path("missing.json"), &[]).await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("--config"), "{}", run.stderr);

    let good = write_config(
        &scratch,
        "good.json",
        json!({ "one": stdio_fixture(&scratch, "one", &[]) }),
        json!({}),
    );
    let run = check(&good, &["--budget", "1s", "--poll", "2s"]).await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("poll"), "{}", run.stderr);
    assert!(
        started(&scratch, "one").is_empty(),
        "invalid input starts no server"
    );
}

// ---------------------------------------------------------------------------------------------
// helpers: `serve` and /metrics

/// The environment `serve` runs with here: both tokens, and the state-change log lines.
const SERVE_ENV: &[(&str, &str)] = &[
    ("MCP_TEST_TOKEN", WRONG_TOKEN),
    ("MCP_RIGHT_TOKEN", RIGHT_TOKEN),
    ("RUST_LOG", "info"),
];

/// One parsed scrape of `serve`.
async fn scrape_of(serve: &Serve) -> Scrape {
    Scrape::parse(&serve.metrics().await)
}

/// One scrape: the raw text and the samples by name and labels.
struct Scrape {
    text: String,
    samples: Vec<(String, BTreeMap<String, String>, f64)>,
}

impl Scrape {
    fn parse(text: &str) -> Scrape {
        let samples = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let (series, value) = l.rsplit_once(' ').expect("`series value`");
                let value: f64 = value.parse().unwrap_or_else(|_| panic!("value in `{l}`"));
                let (name, labels) = match series.split_once('{') {
                    Some((name, rest)) => {
                        let labels = rest
                            .trim_end_matches('}')
                            .split("\",")
                            .filter(|p| !p.is_empty())
                            .map(|pair| {
                                let (k, v) = pair.split_once("=\"").expect("label=\"value\"");
                                (k.to_owned(), v.trim_end_matches('"').to_owned())
                            })
                            .collect();
                        (name.to_owned(), labels)
                    }
                    None => (series.to_owned(), BTreeMap::new()),
                };
                (name, labels, value)
            })
            .collect();
        Scrape {
            text: text.to_owned(),
            samples,
        }
    }
    /// The value of the one series with this name and (at least) these labels.
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let matching: Vec<f64> = self
            .samples
            .iter()
            .filter(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|(_, _, v)| *v)
            .collect();
        assert!(matching.len() <= 1, "{name} {labels:?} is not one series");
        matching.first().copied()
    }
    /// The one-hot state of a server: the state whose gauge is 1, after checking all four
    /// series exist and exactly one is 1.
    fn state(&self, server: &str) -> Option<&'static str> {
        let mut current = None;
        for state in ["ready", "connecting", "unauthenticated", "absent"] {
            let value = self.get(
                "mcp_readiness_server_state",
                &[("server", server), ("state", state)],
            )?;
            assert!(value == 0.0 || value == 1.0, "{server}/{state} = {value}");
            if value == 1.0 {
                assert!(
                    current.is_none(),
                    "`{server}` is in two states:\n{}",
                    self.text
                );
                current = Some(state);
            }
        }
        assert!(
            current.is_some(),
            "`{server}` is in no state:\n{}",
            self.text
        );
        current
    }
    fn servers(&self) -> BTreeSet<String> {
        self.samples
            .iter()
            .filter_map(|(_, l, _)| l.get("server").cloned())
            .collect()
    }
    fn connects(&self, server: &str, result: &str) -> f64 {
        self.get(
            "mcp_readiness_connects_total",
            &[("server", server), ("result", result)],
        )
        .unwrap_or_else(|| panic!("no connects_total for {server}/{result}"))
    }
}

/// Scrapes until every server is in its expected state; returns that scrape.
async fn settle(serve: &Serve, expected: &[(&str, &str)], limit: Duration) -> Scrape {
    let what = format!("the states to settle to {expected:?}");
    eventually(&what, limit, async || {
        let scrape = scrape_of(serve).await;
        let states: Vec<_> = expected.iter().map(|(s, _)| scrape.state(s)).collect();
        if expected
            .iter()
            .zip(&states)
            .all(|((_, want), got)| Some(*want) == *got)
        {
            return Ok(scrape);
        }
        Err(format!("{states:?}\nstderr:\n{}", serve.stderr()))
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// `serve` end to end

#[tokio::test]
async fn serve_exports_every_state_reconnects_a_killed_child_reloads_on_sighup_and_stops_clean_on_sigterm()
 {
    let scratch = Scratch::new("serve");
    let (_http, port) = http_fixture(&scratch).await;
    let data = scratch.path("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("hello.txt"), "hello").unwrap();
    let npm = tools::npm_filesystem();

    let mut servers = json!({
        "ready": stdio_fixture(&scratch, "ready", &[]),
        "slow": stdio_fixture(&scratch, "slow", &[("FIXTURE_STARTUP_DELAY_MS", "1500")]),
        "stuck": stdio_fixture(&scratch, "stuck", &[("FIXTURE_STARTUP_DELAY_MS", "600000")]),
        "authz": http_entry(port),
        "gone": absent_entry(),
    });
    if let Some(entry) = &npm {
        servers["files"] = json!({
            "command": "node",
            "args": [entry.to_string_lossy(), data.to_string_lossy()],
        });
    }
    // A long cooldown and connect timeout: a reconnect seen within seconds is the immediate
    // one, and `stuck` stays connecting for the whole test.
    let readiness =
        json!({ "budget": "7s", "poll": "1s", "cooldown": "60s", "connect_timeout": "120s" });
    let config = write_config(&scratch, "serve.json", servers.clone(), readiness.clone());
    let mut serve = Serve::start(&scratch, &config, SERVE_ENV).await;

    // 1. Every server in its state, one-hot; tools and connection attempts by result.
    let mut expected = vec![
        ("ready", "ready"),
        ("slow", "ready"),
        ("stuck", "connecting"),
        ("authz", "unauthenticated"),
        ("gone", "absent"),
    ];
    if npm.is_some() {
        expected.push(("files", "ready"));
    }
    let settled = Instant::now();
    let scrape = settle(&serve, &expected, Duration::from_secs(30)).await;
    eprintln!("serve: states settled in {:?}", settled.elapsed());
    let tools = |s: &Scrape, server: &str| {
        s.get("mcp_readiness_server_tools", &[("server", server)])
            .unwrap_or_else(|| panic!("no tools gauge for {server}"))
    };
    assert_eq!(tools(&scrape, "ready"), 13.0, "the fixture offers 13 tools");
    assert_eq!(tools(&scrape, "slow"), 13.0);
    assert_eq!(tools(&scrape, "gone"), 0.0);
    assert_eq!(tools(&scrape, "authz"), 0.0);
    assert_eq!(tools(&scrape, "stuck"), 0.0);
    for (server, result) in [
        ("ready", "ok"),
        ("slow", "ok"),
        ("authz", "unauthorized"),
        ("gone", "spawn_failed"),
    ] {
        assert_eq!(scrape.connects(server, result), 1.0, "{server}/{result}");
    }
    for result in ["ok", "timeout", "refused", "spawn_failed", "closed"] {
        assert_eq!(
            scrape.connects("stuck", result),
            0.0,
            "stuck is still connecting"
        );
    }
    if npm.is_some() {
        assert!(tools(&scrape, "files") >= 5.0, "{}", scrape.text);
        assert_eq!(scrape.connects("files", "ok"), 1.0);
    }
    for server in ["ready", "slow", "stuck", "authz", "gone"] {
        assert_eq!(
            scrape.get("mcp_readiness_wait_budget_seconds", &[("server", server)]),
            Some(7.0),
            "{server}"
        );
        assert_eq!(
            scrape.get("mcp_readiness_reconnects_total", &[("server", server)]),
            Some(0.0)
        );
    }

    // 2. promtool accepts the real output.
    if let Some((ok, report)) = tools::promtool_check_metrics(&scrape.text) {
        assert!(ok, "promtool failed: {report}");
        assert_eq!(report.trim(), "", "promtool reported problems");
    }

    // 3. Kill the ready fixture: the exporter reconnects at once and counts it.
    let first = started(&scratch, "ready");
    assert_eq!(first.len(), 1, "{first:?}");
    signal(first[0], "KILL");
    let killed = Instant::now();
    let reconnected = async || {
        let scrape = scrape_of(&serve).await;
        if scrape.get("mcp_readiness_reconnects_total", &[("server", "ready")]) == Some(1.0)
            && scrape.state("ready") == Some("ready")
        {
            return Ok(scrape);
        }
        Err(format!("stderr:\n{}", serve.stderr()))
    };
    let scrape = eventually(
        "a reconnect after the kill",
        Duration::from_secs(15),
        reconnected,
    )
    .await;
    let back = killed.elapsed();
    eprintln!("serve: ready again {back:?} after the kill");
    assert!(back < Duration::from_secs(10), "took {back:?}: not at once");
    assert_eq!(scrape.connects("ready", "ok"), 2.0);
    assert_eq!(tools(&scrape, "ready"), 13.0);
    let ready_pids = started(&scratch, "ready");
    assert_eq!(ready_pids.len(), 2, "a new child: {ready_pids:?}");
    assert!(!alive(first[0]));
    assert!(alive(ready_pids[1]));
    for server in ["slow", "authz", "gone", "stuck"] {
        assert_eq!(
            scrape.get("mcp_readiness_reconnects_total", &[("server", server)]),
            Some(0.0),
            "{server}"
        );
    }
    assert!(
        serve
            .stderr()
            .contains("server `ready` ready -> connecting"),
        "the drop is logged:\n{}",
        serve.stderr()
    );

    // 4. SIGHUP: `stuck` removed (its child stopped, its series gone), `added` started, and
    //    `authz` given the right token.
    let stuck_pids = started(&scratch, "stuck");
    assert_eq!(stuck_pids.len(), 1);
    let mut reloaded = servers.clone();
    reloaded.as_object_mut().unwrap().remove("stuck");
    reloaded["added"] = stdio_fixture(&scratch, "added", &[]);
    reloaded["authz"]["headers"]["Authorization"] = json!("Bearer ${MCP_RIGHT_TOKEN}");
    write_config(&scratch, "serve.json", reloaded, readiness);
    signal(serve.guard.pid(), "HUP");
    let mut expected: Vec<(&str, &str)> = expected
        .into_iter()
        .filter(|(s, _)| *s != "stuck")
        .collect();
    expected.push(("added", "ready"));
    // New credentials let the unauthenticated server try again at once (no cooldown).
    for entry in expected.iter_mut().filter(|(s, _)| *s == "authz") {
        entry.1 = "ready";
    }
    let scrape = settle(&serve, &expected, Duration::from_secs(20)).await;
    assert!(!scrape.servers().contains("stuck"), "{}", scrape.text);
    assert!(
        !scrape.text.contains("server=\"stuck\""),
        "the removed server's series are gone"
    );
    assert_eq!(tools(&scrape, "added"), 13.0);
    assert_eq!(scrape.connects("added", "ok"), 1.0);
    assert_eq!(scrape.connects("authz", "ok"), 1.0);
    assert_eq!(tools(&scrape, "authz"), 13.0);
    assert_eq!(
        scrape.get("mcp_readiness_reconnects_total", &[("server", "ready")]),
        Some(1.0),
        "unchanged servers keep their counters"
    );
    assert_eq!(
        started(&scratch, "ready").len(),
        2,
        "unchanged `ready` kept its child"
    );
    assert_all_gone("the removed server", &stuck_pids, Duration::from_secs(5)).await;
    assert_no_token("metrics", &scrape.text);

    // 5. SIGTERM: exit 0, and no child left running.
    let children = descendants(serve.guard.pid());
    let fixtures: Vec<u32> = ["ready", "slow", "added"]
        .iter()
        .map(|n| *started(&scratch, n).last().unwrap())
        .collect();
    for pid in &fixtures {
        assert!(
            children.contains(pid),
            "{pid} is serve's child: {children:?}"
        );
    }
    if npm.is_some() {
        assert!(
            children
                .iter()
                .any(|p| command_line(*p).contains("server-filesystem")),
            "the npm server runs under serve: {children:?}"
        );
    }
    signal(serve.guard.pid(), "TERM");
    let stopping = Instant::now();
    let status = serve.guard.exit_within(Duration::from_secs(20)).await;
    eprintln!("serve: exited {:?} after SIGTERM", stopping.elapsed());
    assert_eq!(status.code(), Some(0), "{}", serve.stderr());
    let all: Vec<u32> = children.into_iter().collect();
    assert_all_gone("after SIGTERM", &all, Duration::from_secs(2)).await;
    assert_no_token("serve stdout", &serve.stdout());
    assert_no_token("serve stderr", &serve.stderr());
}

// ---------------------------------------------------------------------------------------------
// a real Prometheus server scraping the exporter

#[tokio::test]
async fn a_real_prometheus_scrapes_the_exporter_and_sees_the_ready_server() {
    let Some(prometheus) = tools::prometheus() else {
        return;
    };
    let scratch = Scratch::new("prometheus");
    let config = write_config(
        &scratch,
        "serve.json",
        json!({
            "ready": stdio_fixture(&scratch, "ready", &[]),
            "gone": absent_entry(),
        }),
        json!({}),
    );
    let serve = Serve::start(&scratch, &config, SERVE_ENV).await;
    settle(
        &serve,
        &[("ready", "ready"), ("gone", "absent")],
        Duration::from_secs(20),
    )
    .await;

    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let prometheus_yml = scratch.path("prometheus.yml");
    std::fs::write(
        &prometheus_yml,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: mcp-readiness\n    static_configs:\n      \
             - targets: ['{}']\n",
            serve.addr
        ),
    )
    .unwrap();
    let listen = format!("127.0.0.1:{port}");
    let prometheus_guard = Guard::spawn(
        "prometheus",
        Command::new(prometheus)
            .arg(format!("--config.file={}", prometheus_yml.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                scratch.path("tsdb").display()
            ))
            .arg(format!("--web.listen-address={listen}"))
            .stdout(std::fs::File::create(scratch.path("prometheus.out")).unwrap())
            .stderr(std::fs::File::create(scratch.path("prometheus.err")).unwrap()),
    );

    let query = "/api/v1/query?query=mcp_readiness_server_state%7Bstate%3D%22ready%22%7D";
    let start = Instant::now();
    let scraped = async || {
        // Not listening yet, or 503 while its storage starts: ask again.
        let answer = common::http::get(&listen, query)
            .await
            .ok()
            .and_then(|a| serde_json::from_slice::<Value>(&a.body).ok());
        let results = answer
            .as_ref()
            .and_then(|a| a["data"]["result"].as_array().cloned())
            .unwrap_or_default();
        if results.len() >= 2 {
            return Ok(results);
        }
        Err(format!("{answer:?}\n{}", scratch.read("prometheus.err")))
    };
    let results = eventually(
        "Prometheus to scrape the exporter",
        Duration::from_secs(30),
        scraped,
    )
    .await;
    eprintln!("prometheus: series visible after {:?}", start.elapsed());
    let value_of = |server: &str| {
        results
            .iter()
            .find(|r| r["metric"]["server"] == server)
            .and_then(|r| r["value"][1].as_str())
            .unwrap_or_else(|| panic!("no series for {server}: {results:?}"))
            .to_owned()
    };
    assert_eq!(value_of("ready"), "1");
    assert_eq!(value_of("gone"), "0");
    assert!(
        results.iter().all(|r| r["metric"]["job"] == "mcp-readiness"
            && r["metric"]["__name__"] == "mcp_readiness_server_state"),
        "{results:?}"
    );
    drop(prometheus_guard);
    let mut serve = serve;
    signal(serve.guard.pid(), "TERM");
    let status = serve.guard.exit_within(Duration::from_secs(20)).await;
    assert_eq!(status.code(), Some(0), "{}", serve.stderr());
    assert_all_gone(
        "after the test",
        &started(&scratch, "ready"),
        Duration::from_secs(5),
    )
    .await;
}

#[tokio::test]
async fn servers_that_fail_at_once_read_absent_not_connecting() {
    // An attempt that fails within microseconds (spawn error) used to report its
    // `connecting -> absent` before the `absent -> connecting` that started it, leaving the
    // gauge at `connecting` for the whole cooldown.
    let scratch = Scratch::new("fail-fast");
    let names: Vec<String> = (0..8).map(|i| format!("gone{i}")).collect();
    let servers: serde_json::Map<String, Value> =
        names.iter().map(|n| (n.clone(), absent_entry())).collect();
    let config = write_config(&scratch, "serve.json", Value::Object(servers), json!({}));
    let mut serve = Serve::start(&scratch, &config, SERVE_ENV).await;
    let expected: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "absent")).collect();
    settle(&serve, &expected, Duration::from_secs(10)).await;
    // And it stays so (the cooldown is 60 s: nothing may move it back to connecting).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let scrape = scrape_of(&serve).await;
    for name in &names {
        assert_eq!(scrape.state(name), Some("absent"), "{name}");
        assert_eq!(scrape.connects(name, "spawn_failed"), 1.0, "{name}");
    }
    signal(serve.guard.pid(), "TERM");
    let status = serve.guard.exit_within(Duration::from_secs(20)).await;
    assert_eq!(status.code(), Some(0), "{}", serve.stderr());
}
