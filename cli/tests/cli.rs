//! The command line, run as a real process.

use std::process::Command;

fn mcp_readiness(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-readiness"))
        .args(args)
        .output()
        .expect("the mcp-readiness binary runs")
}

#[test]
fn simulate_json_prints_the_contract_rows_with_the_seeds_numbers() {
    let out = mcp_readiness(&["simulate", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("one JSON array");
    let find = |scenario: &str, variant: &str| {
        rows.iter()
            .find(|r| r["scenario"] == scenario && r["variant"] == variant)
            .unwrap_or_else(|| panic!("row {scenario}/{variant} missing"))
            .clone()
    };
    for (scenario, variant, wait, ready) in [
        ("three-states", "no-states", 86_000, 8),
        ("three-states", "three-states", 26_000, 8),
        ("cache-grain", "by-tool", 66_000, 9),
        ("cache-grain", "by-server", 26_000, 9),
        ("change-notified", "polling", 6_000, 1),
        ("change-notified", "notified", 5_100, 1),
    ] {
        let row = find(scenario, variant);
        assert_eq!(row["total_wait_ms"], wait, "{scenario}/{variant}");
        assert_eq!(row["ready"], ready, "{scenario}/{variant}");
    }
    let per_call = find("concurrent-callers", "per-call");
    let single = find("concurrent-callers", "single-flight");
    assert!(single["polls"].as_u64() < per_call["polls"].as_u64());
    assert!(single["total_wait_ms"].as_u64() < per_call["total_wait_ms"].as_u64());
}

#[test]
fn simulate_prints_both_seed_tables_with_their_savings() {
    let out = mcp_readiness(&["simulate"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("delta: 60000 ms (69.8 % less waiting)"),
        "{text}"
    );
    assert!(
        text.contains("delta: 40000 ms (60.6 % less waiting)"),
        "{text}"
    );
}

#[test]
fn an_unknown_flag_is_a_usage_error_with_exit_code_2() {
    let out = mcp_readiness(&["simulate", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bogus"));
    let out = mcp_readiness(&["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn help_lists_every_command_in_its_summary_and_its_list() {
    let out = mcp_readiness(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let (summary, list) = text.split_once("Commands:").expect("a command list");
    for command in [
        "demo",
        "check",
        "call",
        "serve",
        "simulate",
        "oauth",
        "demo-server",
    ] {
        assert!(
            summary.contains(command),
            "summary lacks {command}: {summary}"
        );
        assert!(
            list.lines()
                .any(|l| l.trim_start().starts_with(&format!("{command} "))),
            "list lacks {command}: {list}"
        );
    }
}

mod demo_server {
    use std::io::{BufRead as _, BufReader};
    use std::process::{Child, Command, Stdio};
    use std::time::Duration;

    use tokio::time::Instant;

    use mcp_readiness::secret::Secret;
    use mcp_readiness::{Hub, HubOptions, State, ToolCall};
    use mcp_readiness::{ServerSpec, TransportSpec};

    /// `demo-server NAME --http 127.0.0.1:0 ARGS`, and the URL it printed.
    struct HttpDemo(Child, String);

    impl HttpDemo {
        fn start(name: &str, args: &[&str]) -> HttpDemo {
            let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-readiness"))
                .args(["demo-server", name, "--http", "127.0.0.1:0"])
                .args(args)
                .stdout(Stdio::piped())
                .spawn()
                .expect("the binary starts");
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap())
                .read_line(&mut line)
                .unwrap();
            let url = line
                .trim()
                .rsplit(' ')
                .next()
                .filter(|u| u.starts_with("http://"))
                .unwrap_or_else(|| panic!("no URL in {line:?}"))
                .to_owned();
            HttpDemo(child, url)
        }

        /// SIGTERM, and the exit status.
        async fn stop(mut self) -> std::process::ExitStatus {
            let pid = self.0.id().to_string();
            Command::new("kill").args(["-TERM", &pid]).status().unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Some(status) = self.0.try_wait().unwrap() {
                    return status;
                }
                assert!(
                    Instant::now() < deadline,
                    "demo-server did not stop on SIGTERM"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    impl Drop for HttpDemo {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn http(name: &str, url: &str, token: Option<&str>) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            transport: TransportSpec::Http {
                url: url.into(),
                headers: token
                    .map(|t| {
                        (
                            "Authorization".to_owned(),
                            Secret::from(format!("Bearer {t}")),
                        )
                    })
                    .into_iter()
                    .collect(),
                oauth: None,
            },
        }
    }

    fn options() -> HubOptions {
        HubOptions::builder()
            .health_interval(None)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn over_http_it_is_ready_unauthenticated_without_its_token_and_stops_on_sigterm() {
        let demo = HttpDemo::start("wiki", &["--token", "t0k"]);
        let url = demo.1.clone();
        let hub = Hub::new(
            vec![
                http("wiki", &url, Some("t0k")),
                http("stranger", &url, Some("wrong")),
            ],
            options(),
        )
        .unwrap();
        let answer = hub.call(ToolCall::new("mcp__wiki__search")).await.unwrap();
        let text = &answer.content[0].as_text().unwrap().text;
        assert!(text.contains("wiki answered search"), "{text}");
        let refused = hub
            .call(ToolCall::new("mcp__stranger__search"))
            .await
            .unwrap_err();
        assert_eq!(refused.state(), State::Unauthenticated, "{refused}");
        hub.shutdown().await;
        assert!(demo.stop().await.success(), "exit 0 on SIGTERM");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_delay_keeps_the_http_server_connecting_for_that_long() {
        // The delay runs from the server's start: the clock starts before it (a loaded machine
        // can take a while to print the URL, and that time is part of the delay).
        let started = Instant::now();
        let demo = HttpDemo::start("notes", &["--delay", "1500ms"]);
        let hub = Hub::new(vec![http("notes", &demo.1, None)], options()).unwrap();
        hub.connect_all();
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(hub.state("notes"), Some(State::Connecting));
        hub.call(ToolCall::new("mcp__notes__read_note"))
            .await
            .unwrap();
        assert!(started.elapsed() >= Duration::from_millis(1500));
        hub.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn over_stdio_it_serves_its_tools_and_an_unknown_name_is_exit_2() {
        let spec = ServerSpec {
            name: "notes".into(),
            transport: TransportSpec::Stdio {
                command: env!("CARGO_BIN_EXE_mcp-readiness").into(),
                args: vec!["demo-server".into(), "notes".into()],
                env: Default::default(),
                cwd: None,
            },
        };
        let hub = Hub::new(vec![spec], options()).unwrap();
        let answer = hub
            .call(ToolCall::new("mcp__notes__search_notes"))
            .await
            .unwrap();
        assert!(!answer.content.is_empty());
        let missing = hub
            .call(ToolCall::new("mcp__notes__export_pdf"))
            .await
            .unwrap_err();
        assert!(missing.to_string().contains("export_pdf"), "{missing}");
        hub.shutdown().await;
        let out = super::mcp_readiness(&["demo-server", "nope"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("wiki"));
    }
}
