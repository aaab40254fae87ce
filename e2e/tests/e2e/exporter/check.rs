//! `mcp-readiness check` as a real process: every state in its record table and note within
//! about one budget, exit 0 at once when every required step is ready, exit 2 on a bad
//! configuration or a poll longer than the budget.

use super::*;

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
    // A poll of nanoseconds (it spun a core and overran the budget), a negative duration (read
    // as a duration, not as a flag), a next run that is not in the future.
    for (args, says) in [
        (vec!["--poll", "1ns"], "shorter than 1ms"),
        (vec!["--budget", "-1s"], "`-1s` is not a duration"),
        (vec!["--next-run-in", "0s"], "the next run is in the future"),
    ] {
        let run = check(&good, &args).await;
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    assert!(
        started(&scratch, "one").is_empty(),
        "invalid input starts no server"
    );
}

#[tokio::test]
async fn a_failed_push_is_printed_after_the_runs_own_output_and_is_exit_1() {
    let (_scratch, config) = scratch_with_fixture("push-fails", "ready", &[], json!({}));
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, both) = check_pushing_to(&config, &format!("http://127.0.0.1:{port}")).await;
    assert_eq!(code, Some(1), "{both}");
    let table = both.find("ready").expect("the run's table");
    let error = both
        .find("error: pushing to the Pushgateway")
        .unwrap_or_else(|| panic!("no push error:\n{both}"));
    assert!(
        error > table && both[error..].lines().count() == 1,
        "the push error is the last line, after the run's output:\n{both}"
    );
    // The root cause in words, and what to check.
    assert!(
        both[error..].contains("failed: connection refused; check that it runs and is reachable"),
        "{both}"
    );
}

/// A `--push` URL that answers, but is not a Pushgateway's base URL (a proxy's error page, a
/// path with `/metrics` already in it): the status and the page's title, and what to check.
#[tokio::test]
async fn a_push_the_url_refuses_names_its_status_and_page_and_says_to_check_the_url() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (_scratch, config) = scratch_with_fixture("push-refused", "ready", &[], json!({}));
    let page = |title: &str| {
        format!(
            "<!DOCTYPE html><html><head><title>{title}</title></head><body>{}</body></html>",
            "<p>nothing here</p>".repeat(500)
        )
    };
    // A page where the gateway should be; a login page that answers 200 (nothing was pushed);
    // a redirect (not followed: the configured URL is what answered).
    for (head, body, said) in [
        (
            "404 Not Found\r\ncontent-type: text/html",
            page("Not a Pushgateway"),
            "failed: it answered HTTP 404 Not Found with an HTML page: Not a Pushgateway; check \
             that the URL is the Pushgateway's base URL (without `/metrics`)",
        ),
        (
            "200 OK\r\ncontent-type: text/html; charset=utf-8",
            page("Sign in"),
            "failed: it answered HTTP 200 OK with an HTML page: Sign in; check that the URL is \
             the Pushgateway's base URL",
        ),
        (
            "302 Found\r\nlocation: http://127.0.0.1:9/login",
            String::new(),
            "failed: it answered HTTP 302 Found; check that the URL is the Pushgateway's base URL",
        ),
    ] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let answering = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            // Read until the client has sent its headers; the answer does not wait for the body.
            let mut seen = Vec::new();
            let mut buffer = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buffer).await.unwrap();
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buffer[..n]);
            }
            let answer = format!(
                "HTTP/1.1 {head}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(answer.as_bytes()).await.unwrap();
            let _ = socket.shutdown().await;
        });
        let (code, both) =
            check_pushing_to(&config, &format!("http://127.0.0.1:{port}/metrics")).await;
        answering.await.unwrap();
        assert_eq!(code, Some(1), "{both}");
        let line = both
            .lines()
            .find(|l| l.starts_with("error: pushing to the Pushgateway"))
            .unwrap_or_else(|| panic!("no push error:\n{both}"));
        assert!(line.contains(said), "{line}");
        assert!(line.chars().count() < 500, "{line}");
    }
}

/// `mcp-readiness check --config config --push url`: its exit code, and its stdout and stderr in
/// one text, in the order they were written.
async fn check_pushing_to(config: &std::path::Path, url: &str) -> (Option<i32>, String) {
    let output = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(r#"exec "$0" "$@" 2>&1"#)
        .arg(mcp_readiness_fixtures::cli())
        .args(["check", "--config", config.to_str().unwrap()])
        .args(["--push", url])
        .env("RUST_LOG", "off")
        .output()
        .await
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}
