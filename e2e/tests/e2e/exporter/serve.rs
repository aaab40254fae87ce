//! `mcp-readiness serve` as a real process: every state exported, a killed child reconnected, a
//! reload on SIGHUP, a clean stop on SIGTERM; servers that fail at once read `absent`.

use super::*;

#[tokio::test]
async fn serve_exports_every_state_reconnects_a_killed_child_reloads_on_sighup_and_stops_clean_on_sigterm()
 {
    let mut fleet = Fleet::start().await;
    let scrape = every_server_reads_its_state(&fleet).await;
    promtool_accepts(&scrape);
    a_killed_child_is_reconnected_at_once(&fleet).await;
    sighup_removes_adds_and_reauthorizes(&mut fleet).await;
    sigterm_exits_0_leaving_no_child(fleet).await;
}

/// The scenario's fleet under one `serve`: a ready, a slow, a stuck, an unauthenticated and an
/// absent server (and the npm filesystem server when installed). Fields drop in order: `serve`
/// first, the scratch directory last.
struct Fleet {
    serve: Serve,
    _http: Guard,
    servers: Value,
    readiness: Value,
    /// What each server reads once settled.
    expected: Vec<(&'static str, &'static str)>,
    npm: bool,
    scratch: Scratch,
}

impl Fleet {
    async fn start() -> Fleet {
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
        let serve = Serve::start(&scratch, &config, SERVE_ENV).await;

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
        Fleet {
            serve,
            _http,
            servers,
            readiness,
            expected,
            npm: npm.is_some(),
            scratch,
        }
    }
}

fn tool_count(s: &Scrape, server: &str) -> f64 {
    s.get("mcp_readiness_server_tools", &[("server", server)])
        .unwrap_or_else(|| panic!("no tools gauge for {server}"))
}

/// Step 1: Every server in its state, one-hot; tools and connection attempts by result.
async fn every_server_reads_its_state(fleet: &Fleet) -> Scrape {
    let settled = Instant::now();
    let scrape = settle(&fleet.serve, &fleet.expected, Duration::from_secs(30)).await;
    eprintln!("serve: states settled in {:?}", settled.elapsed());
    assert_eq!(
        tool_count(&scrape, "ready"),
        13.0,
        "the fixture offers 13 tools"
    );
    assert_eq!(tool_count(&scrape, "slow"), 13.0);
    assert_eq!(tool_count(&scrape, "gone"), 0.0);
    assert_eq!(tool_count(&scrape, "authz"), 0.0);
    assert_eq!(tool_count(&scrape, "stuck"), 0.0);
    for (server, result) in [("ready", "ok"), ("slow", "ok"), ("authz", "unauthorized")] {
        assert_eq!(scrape.connects(server, result), 1.0, "{server}/{result}");
    }
    // `gone` is tried again as its connect backoff ends (1 s, then 2 s, 4 s, ... up to the
    // cooldown): one attempt or a few by the time the states settle, none succeeded.
    let gone = scrape.connects("gone", "spawn_failed");
    assert!((1.0..=5.0).contains(&gone), "gone/spawn_failed: {gone}");
    assert_eq!(scrape.connects("gone", "ok"), 0.0);
    for result in ["ok", "timeout", "refused", "spawn_failed", "closed"] {
        assert_eq!(
            scrape.connects("stuck", result),
            0.0,
            "stuck is still connecting"
        );
    }
    if fleet.npm {
        assert!(tool_count(&scrape, "files") >= 5.0, "{}", scrape.text);
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
    scrape
}

/// Step 2: promtool accepts the real output.
fn promtool_accepts(scrape: &Scrape) {
    if let Some((ok, report)) = tools::promtool_check_metrics(&scrape.text) {
        assert!(ok, "promtool failed: {report}");
        assert_eq!(report.trim(), "", "promtool reported problems");
    }
}

/// Step 3: Kill the ready fixture: the exporter reconnects at once and counts it.
async fn a_killed_child_is_reconnected_at_once(fleet: &Fleet) {
    let first = started(&fleet.scratch, "ready");
    assert_eq!(first.len(), 1, "{first:?}");
    signal(first[0], "KILL");
    let killed = Instant::now();
    let reconnected = async || {
        let scrape = scrape_of(&fleet.serve).await;
        if scrape.get("mcp_readiness_reconnects_total", &[("server", "ready")]) == Some(1.0)
            && scrape.state("ready") == Some("ready")
        {
            return Ok(scrape);
        }
        Err(format!("stderr:\n{}", fleet.serve.stderr()))
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
    assert_eq!(tool_count(&scrape, "ready"), 13.0);
    let ready_pids = started(&fleet.scratch, "ready");
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
        fleet
            .serve
            .stderr()
            .contains("server `ready` ready -> connecting"),
        "the drop is logged:\n{}",
        fleet.serve.stderr()
    );
    // The log names how the child ended, not only that its pipe closed.
    assert!(
        fleet
            .serve
            .stderr()
            .contains("its process was killed by signal 9 (SIGKILL"),
        "the kill is named:\n{}",
        fleet.serve.stderr()
    );
}

/// Step 4: SIGHUP: `stuck` removed (its child stopped, its series gone), `added` started, and
/// `authz` given the right token.
async fn sighup_removes_adds_and_reauthorizes(fleet: &mut Fleet) {
    let stuck_pids = started(&fleet.scratch, "stuck");
    assert_eq!(stuck_pids.len(), 1);
    let mut reloaded = fleet.servers.clone();
    reloaded.as_object_mut().unwrap().remove("stuck");
    reloaded["added"] = stdio_fixture(&fleet.scratch, "added", &[]);
    reloaded["authz"]["headers"]["Authorization"] = json!("Bearer ${MCP_RIGHT_TOKEN}");
    write_config(
        &fleet.scratch,
        "serve.json",
        reloaded,
        fleet.readiness.clone(),
    );
    signal(fleet.serve.guard.pid(), "HUP");
    fleet.expected.retain(|(s, _)| *s != "stuck");
    fleet.expected.push(("added", "ready"));
    // New credentials let the unauthenticated server try again at once (no cooldown).
    for entry in fleet.expected.iter_mut().filter(|(s, _)| *s == "authz") {
        entry.1 = "ready";
    }
    let scrape = settle(&fleet.serve, &fleet.expected, Duration::from_secs(20)).await;
    assert!(!scrape.servers().contains("stuck"), "{}", scrape.text);
    assert!(
        !scrape.text.contains("server=\"stuck\""),
        "the removed server's series are gone"
    );
    assert_eq!(tool_count(&scrape, "added"), 13.0);
    assert_eq!(scrape.connects("added", "ok"), 1.0);
    assert_eq!(scrape.connects("authz", "ok"), 1.0);
    assert_eq!(tool_count(&scrape, "authz"), 13.0);
    assert_eq!(
        scrape.get("mcp_readiness_reconnects_total", &[("server", "ready")]),
        Some(1.0),
        "unchanged servers keep their counters"
    );
    assert_eq!(
        started(&fleet.scratch, "ready").len(),
        2,
        "unchanged `ready` kept its child"
    );
    assert_all_gone("the removed server", &stuck_pids, Duration::from_secs(5)).await;
    assert_no_token("metrics", &scrape.text);
}

/// Step 5: SIGTERM: exit 0, and no child left running.
async fn sigterm_exits_0_leaving_no_child(mut fleet: Fleet) {
    let children = descendants(fleet.serve.guard.pid());
    let fixtures: Vec<u32> = ["ready", "slow", "added"]
        .iter()
        .map(|n| *started(&fleet.scratch, n).last().unwrap())
        .collect();
    for pid in &fixtures {
        assert!(
            children.contains(pid),
            "{pid} is serve's child: {children:?}"
        );
    }
    if fleet.npm {
        assert!(
            children
                .iter()
                .any(|p| command_line(*p).contains("server-filesystem")),
            "the npm server runs under serve: {children:?}"
        );
    }
    signal(fleet.serve.guard.pid(), "TERM");
    let stopping = Instant::now();
    let status = fleet.serve.guard.exit_within(Duration::from_secs(20)).await;
    eprintln!("serve: exited {:?} after SIGTERM", stopping.elapsed());
    assert_eq!(status.code(), Some(0), "{}", fleet.serve.stderr());
    let all: Vec<u32> = children.into_iter().collect();
    assert_all_gone("after SIGTERM", &all, Duration::from_secs(2)).await;
    assert_no_token("serve stdout", &fleet.serve.stdout());
    assert_no_token("serve stderr", &fleet.serve.stderr());
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

#[tokio::test]
async fn a_taken_port_exits_2_before_any_server_is_known() {
    // Before: the fleet was set up first, so the failed bind was followed by one
    // `connecting -> absent: shut down` log line per server that never started.
    let scratch = Scratch::new("taken-port");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let servers = json!({ "files": stdio_fixture(&scratch, "files", &[]) });
    let config = write_config(&scratch, "serve.json", servers, json!({}));
    let run = mcp_readiness_fixtures::run::run(
        &[
            "serve",
            "--listen",
            &addr,
            "--config",
            &config.to_string_lossy(),
        ],
        &[],
    )
    .await;
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("could not listen on"), "{}", run.stderr);
    assert!(!run.stderr.contains("-> absent"), "{}", run.stderr);
    assert!(started(&scratch, "files").is_empty(), "a child was started");
}
