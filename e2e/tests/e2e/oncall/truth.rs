//! What the library tells on-call, with real processes: `mcp-readiness serve` supervising the
//! fixture MCP server of `fixtures/src/server.rs` over stdio. A server that exits soon after
//! each handshake is backed off and reads `absent` between attempts; a refused reload is visible
//! in `/metrics` and keeps the running configuration; per-server budgets are exported.
#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_readiness_fixtures::configure::{started, stdio_fixture, write_config};
use mcp_readiness_fixtures::process::signal;
use mcp_readiness_fixtures::serve::Serve;
use mcp_readiness_fixtures::{Scratch, eventually};
use serde_json::json;
use tokio::time::Instant;

/// The value of the series `name{labels}` in an exposition (labels in the order written).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// The state whose one-hot gauge is 1 for `server`.
fn state_of(text: &str, server: &str) -> Option<String> {
    ["ready", "connecting", "unauthenticated", "absent"]
        .into_iter()
        .find(|state| {
            sample(
                text,
                &format!("mcp_readiness_server_state{{server=\"{server}\",state=\"{state}\"}}"),
            ) == Some(1.0)
        })
        .map(str::to_owned)
}

async fn poll_metrics(
    serve: &Serve,
    what: &str,
    limit: Duration,
    ok: impl Fn(&str) -> bool,
) -> String {
    eventually(what, limit, async || {
        let text = serve.metrics().await;
        if ok(&text) {
            return Ok(text);
        }
        Err(format!("{text}\n--- serve stderr:\n{}", serve.stderr()))
    })
    .await
}

#[tokio::test]
async fn a_server_that_exits_soon_after_each_handshake_is_backed_off_and_reads_absent_between_attempts()
 {
    let scratch = Scratch::new("oncall-crash-loop");
    let servers = json!({
        "flaky": stdio_fixture(&scratch, "flaky", &[("FIXTURE_EXIT_AFTER_MS", "300")]),
    });
    let config = write_config(&scratch, "serve.json", servers, json!({ "ping": "off" }));
    let serve = Serve::start(&scratch, &config, &[]).await;

    // Ten seconds of scrapes every 250 ms (the issue measured 30 s before the backoff: 86
    // respawns, `ready` in 86 % of the scrapes, `absent` in none).
    let window = Duration::from_secs(10);
    let start = Instant::now();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut scrapes = 0;
    while start.elapsed() < window {
        let text = serve.metrics().await;
        *seen
            .entry(state_of(&text, "flaky").unwrap_or_else(|| "none".into()))
            .or_default() += 1;
        scrapes += 1;
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let text = serve.metrics().await;
    let spawns = started(&scratch, "flaky").len();
    let ok = sample(
        &text,
        r#"mcp_readiness_connects_total{result="ok",server="flaky"}"#,
    )
    .unwrap();
    let entered = |state: &str| {
        sample(
            &text,
            &format!(
                "mcp_readiness_server_state_changes_total{{server=\"flaky\",state=\"{state}\"}}"
            ),
        )
        .unwrap()
    };
    let absent = seen.get("absent").copied().unwrap_or(0);
    let ready = seen.get("ready").copied().unwrap_or(0);
    eprintln!(
        "crash loop under serve, {window:?}: {spawns} spawns, {ok} handshakes, {scrapes} scrapes: \
         {seen:?}; entered ready {} / absent {} times",
        entered("ready"),
        entered("absent")
    );
    // 1 s, 2 s, 4 s, 8 s of backoff after the first quick restart: at most 6 handshakes in 10 s.
    assert!((3..=6).contains(&spawns), "{spawns} spawns in {window:?}");
    assert!(
        absent * 10 >= scrapes * 6,
        "absent in only {absent} of {scrapes} scrapes: {seen:?}"
    );
    assert!(
        ready * 10 <= scrapes * 3,
        "ready in {ready} of {scrapes} scrapes"
    );
    // Flapping is visible: every cycle enters ready and (after the first) absent.
    assert_eq!(entered("ready"), ok);
    assert!(entered("absent") >= ok - 2.0, "{text}");
    // The reason says it keeps exiting, in the log and on the status page.
    let stderr = serve.stderr();
    assert!(
        stderr.contains("keeps exiting: it exited 2 times in a row within")
            && stderr.contains("after its handshake")
            && stderr.contains("after a wait of 1s"),
        "{stderr}"
    );
    let page = mcp_readiness_fixtures::http::get(&serve.addr, "/status")
        .await
        .unwrap()
        .text();
    assert!(page.contains("keeps exiting"), "{page}");
}

#[tokio::test]
async fn serve_exports_whether_the_last_reload_succeeded_and_a_refused_one_keeps_the_running_configuration()
 {
    let scratch = Scratch::new("oncall-reload");
    let servers = json!({ "files": stdio_fixture(&scratch, "files", &[]) });
    let readiness = json!({
        "budget": "20s", "poll": "1s",
        "servers": { "files": { "budget": "45s" } },
        "steps": [ { "id": "read", "tool": "mcp__files__echo" } ],
    });
    let config = write_config(&scratch, "serve.json", servers.clone(), readiness);
    let serve = Serve::start(&scratch, &config, &[]).await;

    let ok_series = "mcp_readiness_config_last_reload_successful";
    let time_series = "mcp_readiness_config_last_reload_success_timestamp_seconds";
    let text = poll_metrics(&serve, "files ready", Duration::from_secs(20), |t| {
        state_of(t, "files").as_deref() == Some("ready")
    })
    .await;
    assert_eq!(sample(&text, ok_series), Some(1.0), "loaded at start");
    let loaded_at = sample(&text, time_series).expect("a success time");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!((now - loaded_at).abs() < 60.0, "{loaded_at} vs {now}");
    // The per-server budget is the one exported; the declared step's series exists at 0.
    assert_eq!(
        sample(
            &text,
            r#"mcp_readiness_wait_budget_seconds{server="files"}"#
        ),
        Some(45.0)
    );
    assert_eq!(
        sample(
            &text,
            r#"mcp_readiness_tool_absent_total{server="files",tool="echo"}"#
        ),
        Some(0.0)
    );
    assert_eq!(
        sample(
            &text,
            r#"mcp_readiness_connect_duration_seconds_count{result="ok",server="files"}"#
        ),
        Some(1.0)
    );

    // A broken file: refused, visible, and the running server untouched.
    std::fs::write(&config, "{ \"mcpServers\": { \"files\": ").unwrap();
    signal(serve.guard.pid(), "HUP");
    let text = poll_metrics(&serve, "the refused reload", Duration::from_secs(10), |t| {
        sample(t, ok_series) == Some(0.0)
    })
    .await;
    assert_eq!(
        sample(&text, time_series),
        Some(loaded_at),
        "the last success stays"
    );
    assert_eq!(state_of(&text, "files").as_deref(), Some("ready"));
    assert_eq!(
        started(&scratch, "files").len(),
        1,
        "the child kept running"
    );
    assert!(
        serve.stderr().contains("reload refused"),
        "{}",
        serve.stderr()
    );

    // A file with one bad server among good ones is refused as a whole.
    let mut bad = servers.clone();
    bad["other"] =
        json!({ "type": "http", "url": "http://127.0.0.1:9/mcp", "headers": { "X Bad": "1" } });
    write_config(&scratch, "serve.json", bad, json!({}));
    signal(serve.guard.pid(), "HUP");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let text = serve.metrics().await;
    assert_eq!(sample(&text, ok_series), Some(0.0));
    assert!(
        !text.contains("server=\"other\""),
        "nothing of it was applied"
    );

    // A good file again: 1, a newer success time, and the new per-server budget in force.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    write_config(
        &scratch,
        "serve.json",
        servers,
        json!({ "budget": "20s", "servers": { "files": { "budget": "30s" } } }),
    );
    signal(serve.guard.pid(), "HUP");
    let text = poll_metrics(&serve, "the good reload", Duration::from_secs(10), |t| {
        sample(t, ok_series) == Some(1.0)
    })
    .await;
    assert!(sample(&text, time_series).unwrap() > loaded_at);
    assert_eq!(
        sample(
            &text,
            r#"mcp_readiness_wait_budget_seconds{server="files"}"#
        ),
        Some(30.0)
    );
    assert_eq!(
        started(&scratch, "files").len(),
        1,
        "an unchanged server keeps its child"
    );
}

#[tokio::test]
async fn check_waits_a_slow_server_its_own_budget_and_the_others_the_default_one() {
    let scratch = Scratch::new("oncall-server-budget");
    let servers = json!({
        "quick": stdio_fixture(&scratch, "quick", &[]),
        "slow": stdio_fixture(&scratch, "slow", &[("FIXTURE_STARTUP_DELAY_MS", "2500")]),
    });
    let run = |readiness: serde_json::Value| {
        let config = write_config(&scratch, "check.json", servers.clone(), readiness);
        let out = std::process::Command::new(mcp_readiness_fixtures::cli())
            .args(["check", "--json", "--config"])
            .arg(&config)
            .output()
            .expect("run check");
        let record: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), record)
    };
    // The default budget alone is too short for `slow`...
    let (code, record) = run(json!({ "budget": "1s", "poll": "250ms" }));
    assert_eq!(code, Some(1), "{record}");
    assert_eq!(record["still_connecting"], json!(["slow"]), "{record}");
    // ...its own budget covers its start-up, and `quick` keeps the default.
    let started = Instant::now();
    let (code, record) = run(json!({
        "budget": "1s", "poll": "250ms",
        "servers": { "slow": { "budget": "20s" } },
    }));
    assert_eq!(code, Some(0), "{record}");
    assert_eq!(record["ran"], json!(2), "{record}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "it returned when `slow` was ready"
    );
}

/// The runbook's loop for `MCPServerUnauthenticated` when the fix is on the server's side (the
/// token in the configuration was right all along): fix, reload, and the page clears. A reload
/// tries every unauthenticated server's credentials again, changed or not.
#[tokio::test]
async fn a_reload_retries_an_unauthenticated_server_whose_entry_did_not_change() {
    use mcp_readiness_fixtures::process::demo_http_server;
    let scratch = Scratch::new("oncall-reload-auth");
    let (wrong, url) =
        demo_http_server(&scratch, "tickets", "127.0.0.1:0", &["--token", "other"]).await;
    let listen = mcp_readiness_fixtures::process::address_of(&url);
    let servers = json!({
        "tickets": { "type": "http", "url": url, "headers": { "Authorization": "Bearer t0k" } },
    });
    let config = write_config(&scratch, "serve.json", servers, json!({ "ping": "off" }));
    let serve = Serve::start(&scratch, &config, &[]).await;
    let reads = async |state: &str, limit: u64| {
        let what = format!("tickets {state}");
        poll_metrics(&serve, &what, Duration::from_secs(limit), |t| {
            state_of(t, "tickets").as_deref() == Some(state)
        })
        .await
    };
    reads("unauthenticated", 20).await;

    // The server side is fixed: it now takes the token the configuration has.
    drop(wrong);
    let (_right, _) = demo_http_server(&scratch, "tickets", &listen, &["--token", "t0k"]).await;
    signal(serve.guard.pid(), "HUP");
    reads("ready", 10).await;
}
