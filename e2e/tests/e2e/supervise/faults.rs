//! Supervision under faults, with the real binary and real children: signals leave no child
//! behind, a cooldown of `u64::MAX` seconds, a child flooding stderr without a newline, frozen and
//! garbled servers noticed early, and shutdown told to the event sinks.
//!
//! `MCP_READINESS_SOAK=1` lengthens the flood test (see docs/guarantees.md).

use std::process::{Command, Stdio};
use std::time::Duration;

use mcp_readiness_fixtures::configure::{
    scratch_with_fixture, started, stdio_fixture, write_config,
};
use mcp_readiness_fixtures::eventually;
use mcp_readiness_fixtures::exposition::states;
use mcp_readiness_fixtures::process::{Guard, Reaper, assert_all_gone, signal};
use mcp_readiness_fixtures::run::{run, soak};
use mcp_readiness_fixtures::serve::Serve;
use mcp_readiness_fixtures::{Scratch, cli};
use serde_json::json;
use tokio::time::Instant;

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
        let child = Command::new(cli())
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

#[tokio::test]
async fn a_cooldown_of_u64_max_seconds_reads_absent_instead_of_panicking_a_worker() {
    use mcp_readiness::HubOptions;
    use mcp_readiness::{Hub, State};

    let spec = super::command("gone", "/nonexistent/mcp-readiness-test/none", Vec::new());
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

#[tokio::test]
async fn a_child_flooding_stderr_without_a_newline_does_not_grow_the_exporter() {
    let mb = if soak() { "2048" } else { "256" };
    let (scratch, config) = scratch_with_fixture(
        "flood",
        "flood",
        &[("FIXTURE_STDERR_FLOOD_MB", mb)],
        json!({ "connect_timeout": "120s" }),
    );
    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "debug")]).await;
    eventually(
        "the flood to finish",
        Duration::from_secs(120),
        async || scratch.read("log-flood").contains("flooded"),
    )
    .await;
    serve
        .scrape_until(Duration::from_secs(30), |body| {
            states(body).get("flood").and_then(|s| s.get("ready")) == Some(&1.0)
        })
        .await;
    let peak_mib = mcp_readiness_fixtures::process::peak_rss_kib(serve.guard.pid()) / 1024;
    eprintln!("peak RSS of serve after a {mb} MiB stderr flood: {peak_mib} MiB");
    assert!(
        peak_mib < 64,
        "serve grew to {peak_mib} MiB reading a {mb} MiB stderr line"
    );
}

#[tokio::test]
async fn a_frozen_server_is_noticed_within_about_two_ping_intervals_not_the_call_timeout() {
    let (scratch, config) = scratch_with_fixture(
        "frozen",
        "frozen",
        &[],
        json!({ "ping": "1s", "ping_timeout": "1s", "call_timeout": "60s" }),
    );
    let serve = Serve::start(&scratch, &config, &[]).await;
    serve
        .scrape_until(Duration::from_secs(20), |body| {
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
    let (_scratch, config) = scratch_with_fixture(
        "garbage",
        "garbled",
        &[("FIXTURE_GARBAGE", "1")],
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

#[tokio::test]
async fn shutdown_tells_the_event_sinks_so_metrics_stop_reading_ready() {
    use mcp_readiness::HubOptions;
    use mcp_readiness::Metrics;
    use mcp_readiness::{Hub, State};

    let metrics = Metrics::new();
    let hub = Hub::new(
        vec![mcp_readiness_fixtures::stdio("one", &[])],
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
