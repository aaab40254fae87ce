//! The configuration file as the binary reads it, against hostile input: every bad file or flag is
//! exit 2 with a message that names the problem, a `cwd` that does not exist is named as the cause,
//! the library refuses what the file refuses, and no bytes or JSON make the loader panic.
//!
//! `MCP_READINESS_BIN` runs these tests against another build of `mcp-readiness`.

use std::path::PathBuf;
use std::time::Duration;

use mcp_readiness_fixtures::configure::scratch_with_config;
use mcp_readiness_fixtures::run::{assert_no_panic, assert_no_raw_controls, run};
use mcp_readiness_fixtures::{Scratch, fixture};
use serde_json::{Value, json};

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
        ("an endless device", None, vec![], "is a character device, not a regular file"),
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
    let (_scratch, config) = scratch_with_config(
        "cwd",
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
async fn the_library_refuses_what_the_file_refuses_instead_of_panicking() {
    use mcp_readiness::Hub;
    use mcp_readiness::HubOptions;

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
        let err = Hub::new(vec![mcp_readiness_fixtures::stdio("a", &[])], options)
            .expect_err(what)
            .to_string();
        assert!(err.contains("HubOptions::"), "{what}: {err}");
    }
}

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
        if let Err(err) = mcp_readiness::Config::load(&path) {
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
            let _ = mcp_readiness::Config::parse(&doc.to_string(), "mcp.json", |_| None);
        }
    }
}
