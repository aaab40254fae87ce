//! The command line's output against hostile input: names of 70,000 characters, output that cannot
//! be written, and arbitrary server, tool and step names through `check` never panic and never
//! reach the terminal raw.

use std::process::{Command, Stdio};

use mcp_readiness_fixtures::configure::{scratch_with_config, write_config};
use mcp_readiness_fixtures::run::{assert_no_panic, assert_no_raw_controls, run};
use mcp_readiness_fixtures::{Scratch, cli};
use serde_json::json;

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

/// `/dev/full`, open for writing: every write fails with `ENOSPC`.
fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap()
}

#[tokio::test]
async fn output_that_cannot_be_written_is_a_clear_error_not_a_panic() {
    let (scratch, config) = scratch_with_config(
        "dev-full",
        json!({ "gone": { "command": "/nonexistent/mcp-readiness-test/none" } }),
        json!({ "budget": "1s", "poll": "100ms" }),
    );
    // `> /dev/full`
    for args in [
        vec!["check", "--config", config.to_str().unwrap()],
        vec!["simulate"],
    ] {
        let output = Command::new(cli())
            .args(&args)
            .stdout(dev_full())
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
    let output = Command::new(cli())
        .args(["check", "--config", bad.to_str().unwrap()])
        .stderr(dev_full())
        .output()
        .expect("run");
    assert_eq!(
        output.status.code(),
        Some(2),
        "check 2> /dev/full: {:?}",
        output.status
    );
    // A closed pipe: the reader is gone before anything is written.
    let mut child = Command::new(cli())
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

/// Text made mostly of control characters (C0, DEL, C1), with some letters and wide characters.
const NASTY: &str = "[a-z\\x00-\\x1f\\x7f\\u{80}-\\u{9f}é🚀]{1,12}";

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
        let output = Command::new(cli())
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
