//! `mcp-readiness call`: one tool call through the layer and the Hub, against real fixture servers
//! over stdio and HTTP, with the exit code and the state, action and result it prints.

use std::path::PathBuf;

use mcp_readiness_fixtures::Scratch;
use mcp_readiness_fixtures::configure::{http_fixture, stdio_fixture, write_config};
use mcp_readiness_fixtures::process::Guard;
use mcp_readiness_fixtures::run::{Run, assert_no_panic, run};
use serde_json::{Value, json};

async fn call(config: &std::path::Path, args: &[&str]) -> Run {
    let mut all = vec!["call", "--config", config.to_str().unwrap()];
    all.extend_from_slice(args);
    let run = run(&all, &[]).await;
    assert_no_panic("mcp-readiness call", &run);
    run
}

/// The HTTP fixture at `port` as a config entry that sends `token`.
fn web(port: u16, token: &str) -> Value {
    json!({ "type": "http", "url": format!("http://127.0.0.1:{port}/mcp"),
            "headers": { "Authorization": format!("Bearer {token}") } })
}

/// A scratch `tag` with the HTTP fixture (wanting `good-token`) and `mcp.json`: the stdio fixture
/// `mail`, the HTTP fixture as `web` sent `token`, what `others` adds, a 10 s budget polled every
/// 100 ms. Returns the scratch, the HTTP fixture's guard and the config's path.
async fn mail_and_web(
    tag: &str,
    token: &str,
    others: impl FnOnce(&Scratch) -> Value,
) -> (Scratch, Guard, PathBuf) {
    let scratch = Scratch::new(tag);
    let (server, port) = http_fixture(&scratch, "good-token").await;
    let mut servers = json!({
        "mail": stdio_fixture(&scratch, "mail", &[]),
        "web": web(port, token),
    });
    let more = others(&scratch);
    servers
        .as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
    let readiness = json!({ "budget": "10s", "poll": "100ms" });
    let config = write_config(&scratch, "mcp.json", servers, readiness);
    (scratch, server, config)
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

#[tokio::test]
async fn a_ready_server_runs_the_call_and_prints_its_result_with_exit_0() {
    let (scratch, _server, config) = mail_and_web("call-ready", "good-token", |_| json!({})).await;
    let text = call(
        &config,
        &["mcp__mail__echo", "--args", r#"{"text": "hello"}"#],
    )
    .await;
    assert_eq!(text.code, Some(0), "{}\n{}", text.stdout, text.stderr);
    assert!(
        text.stdout.starts_with("mcp__mail__echo: ready"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("hello"), "{}", text.stdout);

    let over_http = call(
        &config,
        &["mcp__web__echo", "--args", r#"{"text": "x"}"#, "--json"],
    )
    .await;
    assert_eq!(over_http.code, Some(0), "{}", over_http.stderr);
    let record = json_of(&over_http);
    assert_eq!(record["state"], "ready");
    assert_eq!(record["outcome"], "ok");
    assert_eq!(record["result"]["content"][0]["text"], "x");
    // Only the named server was started: `mail` logged no start for the HTTP call.
    assert_eq!(
        mcp_readiness_fixtures::configure::started(&scratch, "mail").len(),
        1
    );
}

#[tokio::test]
async fn a_tool_error_or_a_server_that_is_not_ready_exits_1_with_the_action() {
    let (_scratch, _server, config) = mail_and_web("call-not-ready", "stale-token", |scratch| {
        json!({
            "slow": stdio_fixture(scratch, "slow", &[("FIXTURE_STARTUP_DELAY_MS", "20000")]),
            "gone": { "command": "/nonexistent/mcp-readiness-test/none" },
        })
    })
    .await;
    let failed = call(&config, &["mcp__mail__fail", "--json"]).await;
    assert_eq!(failed.code, Some(1), "{}", failed.stderr);
    assert_eq!(json_of(&failed)["outcome"], "tool_error");

    let expectations = [
        (
            vec!["mcp__web__echo"],
            "unauthenticated",
            "reauthorize",
            false,
        ),
        (vec!["mcp__gone__echo"], "absent", "add_connection", false),
        (vec!["mcp__nobody__echo"], "absent", "add_connection", false),
        (
            vec!["mcp__slow__echo", "--budget", "1s"],
            "connecting",
            "extend_wait_budget",
            true,
        ),
    ];
    for (args, state, action, timed_out) in expectations {
        let mut args = args.clone();
        args.push("--json");
        let run = call(&config, &args).await;
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        let record = json_of(&run);
        assert_eq!(record["state"], state, "{args:?}: {record}");
        assert_eq!(record["action"], action, "{args:?}: {record}");
        assert_eq!(record["outcome"], "not_ready", "{args:?}: {record}");
        assert_eq!(record["timed_out"], timed_out, "{args:?}: {record}");
        assert!(record["reason"].is_string(), "{args:?}: {record}");
        assert!(!run.stdout.contains("stale-token"), "{}", run.stdout);
        if !timed_out {
            assert!(record["waited_ms"].as_u64().unwrap() < 1000, "{record}");
        }
    }
}

#[tokio::test]
async fn budget_on_the_command_line_wins_over_the_servers_budget_in_the_file() {
    let scratch = Scratch::new("call-budget");
    let servers = json!({
        "slow": stdio_fixture(&scratch, "slow", &[("FIXTURE_STARTUP_DELAY_MS", "20000")]),
    });
    let readiness =
        json!({ "budget": "10s", "poll": "100ms", "servers": { "slow": { "budget": "3s" } } });
    let config = write_config(&scratch, "mcp.json", servers, readiness);
    for (args, at_least, below) in [
        (vec!["--budget", "1s"], 1_000, 2_000),
        (vec![], 3_000, 4_000),
    ] {
        let mut all = vec!["mcp__slow__echo", "--json"];
        all.extend(args.iter().copied());
        let run = call(&config, &all).await;
        let record = json_of(&run);
        let waited = record["waited_ms"].as_u64().unwrap();
        assert!(
            (at_least..below).contains(&waited) && record["timed_out"] == true,
            "{args:?}: {record}"
        );
    }
}

#[tokio::test]
async fn a_server_that_crashes_during_the_call_says_what_to_do_next() {
    let scratch = Scratch::new("call-crash");
    let servers = json!({
        "crash": stdio_fixture(&scratch, "crash", &[("FIXTURE_CRASH_ON_CALL", "1")]),
    });
    let config = write_config(&scratch, "mcp.json", servers, json!({}));
    let run = call(&config, &["mcp__crash__echo", "--json"]).await;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let record = json_of(&run);
    assert_eq!(record["outcome"], "transport_error", "{record}");
    // An action comes with its next step, whatever failed.
    assert!(record["action"].is_string(), "{record}");
    assert!(record["next_step"].is_string(), "{record}");
    // How the child ended, not only that its pipe closed.
    assert!(
        record["reason"]
            .as_str()
            .is_some_and(|r| r.contains("its process exited with status 3")),
        "{record}"
    );
}

#[tokio::test]
async fn bad_input_exits_2_with_what_to_write() {
    let scratch = Scratch::new("call-bad-input");
    let config = write_config(&scratch, "mcp.json", json!({}), json!({}));
    for (args, says) in [
        (vec!["search"], "mcp__<server>__<tool>"),
        (vec!["mcp__a__b", "--args", "[1]"], "expected a JSON object"),
        (vec!["mcp__a__b", "--args", "{"], "not valid JSON"),
        (vec!["mcp__a__b", "--budget", "soon"], "not a duration"),
        (
            vec!["mcp__a__b", "--budget", "0s"],
            "--budget: must be at least 1ms",
        ),
    ] {
        let run = call(&config, &args).await;
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    let missing = run(
        &["call", "--config", "/nonexistent/mcp.json", "mcp__a__b"],
        &[],
    )
    .await;
    assert_eq!(missing.code, Some(2), "{}", missing.stderr);
}

#[tokio::test]
async fn a_long_or_hostile_tool_name_is_repeated_cut_and_escaped() {
    let scratch = Scratch::new("call-long-name");
    let servers = json!({ "mail": stdio_fixture(&scratch, "mail", &[]) });
    let config = write_config(&scratch, "mcp.json", servers, json!({ "budget": "5s" }));
    // A tool the server does not offer, named with 1,000 characters; a server that is not
    // configured, named with 990; a control character in both.
    let tool = format!("mcp__mail__{}\u{1b}]0;x\u{7}", "a".repeat(990));
    let server = format!("mcp__{}\u{1b}[2J__t", "s".repeat(990));
    for name in [&tool, &server] {
        let run = call(&config, &[name]).await;
        assert_eq!(run.code, Some(1), "{}", run.stderr);
        assert!(
            !run.stdout.chars().any(|c| c.is_control() && c != '\n'),
            "{:?}",
            run.stdout
        );
        assert!(run.stdout.contains(" characters)"), "{}", run.stdout);
        let longest = run.stdout.lines().map(str::len).max().unwrap_or(0);
        assert!(longest < 600, "a line of {longest} bytes:\n{}", run.stdout);
    }
}
