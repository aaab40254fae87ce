//! Bounded whatever servers do: a `tools/list` that never ends is a `protocol_error` at the
//! repeat or the cap, servers flooding notifications keep the exporter small, and running out of
//! file descriptors is named as such (after the soft limit was raised to the hard one where it
//! could be). Every server here is the real fixture (`fixtures/src/server.rs`) misbehaving.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_readiness::{Hub, State};
use mcp_readiness::{
    HubOptions,
    client::MAX_TOOL_PAGES,
    state::{ConnectResult, ConnectionEvent},
};
use mcp_readiness_fixtures::configure::{stdio_fixture, write_config};
use mcp_readiness_fixtures::eventually;
use mcp_readiness_fixtures::http::get;
use mcp_readiness_fixtures::{Scratch, stdio};
use serde_json::{Value, json};

/// A hub of one fixture `name` with `env` (logging to `log` in `scratch`), and its events.
fn one_server(scratch: &Scratch, env: &[(&str, &str)]) -> (Hub, Arc<Mutex<Vec<ConnectionEvent>>>) {
    let log = scratch.path("log").display().to_string();
    let mut env = env.to_vec();
    env.push(("FIXTURE_LOG", &log));
    let events: Arc<Mutex<Vec<ConnectionEvent>>> = Arc::default();
    let sink = events.clone();
    let options = HubOptions::builder()
        .connect_timeout(Duration::from_secs(60))
        .call_timeout(Duration::from_secs(20))
        .cooldown(Duration::from_secs(600))
        // One attempt: the failed connect's backoff (1 s) must not start a second one.
        .reconnect_on_drop(false)
        .health_interval(None)
        .event_sink(move |e: &ConnectionEvent| sink.lock().unwrap().push(e.clone()));
    let hub = Hub::new(vec![stdio("pages", &env)], options).unwrap();
    (hub, events)
}

/// Connects and waits (at most a minute) until the first attempt ended; its reason.
async fn first_failure(hub: &Hub, events: &Arc<Mutex<Vec<ConnectionEvent>>>) -> String {
    hub.connect_all();
    let result = eventually(
        "the first attempt to end",
        Duration::from_secs(60),
        async || {
            events.lock().unwrap().iter().find_map(|e| match e {
                ConnectionEvent::ConnectAttempt { result, .. } => Some(*result),
                _ => None,
            })
        },
    )
    .await;
    assert_eq!(result, ConnectResult::ProtocolError);
    eventually("the reason", Duration::from_secs(5), async || {
        let status = hub.servers().into_iter().next()?;
        (status.state == State::Absent).then_some(status.reason?)
    })
    .await
}

fn pages_served(scratch: &Scratch) -> usize {
    scratch.read("log").matches("tools/list page").count()
}

/// One server whose `tools/list` pages behave as `mode` (`FIXTURE_TOOL_PAGES`): its first failure
/// names `cause` after `pages` pages were served; returns the failure's reason.
async fn paging_fails(tag: &str, mode: &str, cause: &str, pages: usize) -> String {
    let scratch = Scratch::new(tag);
    let (hub, events) = one_server(&scratch, &[("FIXTURE_TOOL_PAGES", mode)]);
    let reason = first_failure(&hub, &events).await;
    assert!(reason.contains(cause), "{reason}");
    assert_eq!(pages_served(&scratch), pages, "pages read before: {reason}");
    hub.shutdown().await;
    reason
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_whose_cursor_leads_back_to_its_first_page_is_a_protocol_error_at_the_repeat() {
    // The first page came without a cursor: `p1`, `p0`, then `p1` again on the third.
    let cause = "returned a cursor it had already returned, after 3 page(s)";
    let reason = paging_fails("pages-loop", "loop", cause, 3).await;
    assert!(reason.starts_with("server `pages`: tools/list"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_that_never_stops_paging_ends_at_the_page_cap() {
    let cause = format!("still paging after {MAX_TOOL_PAGES} pages");
    paging_fails("pages-endless", "endless", &cause, MAX_TOOL_PAGES).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_of_more_tools_than_the_cap_ends_at_the_page_that_crosses_it() {
    // 4,000 tools a page: the third page crosses 10,000.
    paging_fails(
        "pages-wide",
        "wide",
        "more than 10000 tools in 3 page(s)",
        3,
    )
    .await;
}

// ---------------------------------------------------------------------------------------------

/// `mcp_readiness_server_state{..., state="ready"}` by server.
fn ready(metrics: &str) -> BTreeMap<String, bool> {
    metrics
        .lines()
        .filter_map(|l| l.strip_prefix("mcp_readiness_server_state{server=\""))
        .filter_map(|rest| {
            let (server, rest) = rest.split_once('"')?;
            rest.contains("state=\"ready\"")
                .then(|| (server.to_owned(), rest.ends_with(" 1")))
        })
        .collect()
}

/// A configuration of `n` fixtures named `s0`.. with `env`.
fn fleet(
    scratch: &Scratch,
    n: usize,
    env: impl Fn(usize) -> Vec<(&'static str, &'static str)>,
) -> std::path::PathBuf {
    let servers: serde_json::Map<String, Value> = (0..n)
        .map(|i| {
            let name = format!("s{i}");
            let entry = stdio_fixture(scratch, &name, &env(i));
            (name, entry)
        })
        .collect();
    write_config(
        scratch,
        "mcp.json",
        Value::Object(servers),
        json!({ "ping": "off", "connect_timeout": "60s" }),
    )
}

async fn until_all_ready(addr: &str, n: usize, limit: Duration, stderr: &std::path::Path) {
    eventually("every server to be ready", limit, async || {
        let body = get(addr, "/metrics").await?.ok_text();
        let ready = ready(&body);
        if ready.len() == n && ready.values().all(|r| *r) {
            return Ok(());
        }
        Err(format!(
            "not every server became ready: {ready:?}\n{}",
            std::fs::read_to_string(stderr).unwrap_or_default()
        ))
    })
    .await;
}

#[tokio::test]
async fn servers_flooding_notifications_keep_the_exporter_small_and_ready() {
    let scratch = Scratch::new("notify-flood");
    let n = 10;
    let config = fleet(&scratch, n, |i| {
        vec![(
            "FIXTURE_NOTIFY_FLOOD",
            if i % 2 == 0 { "tools" } else { "log" },
        )]
    });
    let (guard, addr, err) =
        mcp_readiness_fixtures::serve::serve_under(&scratch, "", &config).await;
    until_all_ready(&addr, n, Duration::from_secs(90), &err).await;
    // Every flooder has sent at least 10,000 notifications more since (the fixture logs
    // `flood <count>` every 10,000).
    let floods = |i: usize| scratch.read(&format!("log-s{i}")).matches("flood ").count();
    let at_ready: Vec<usize> = (0..n).map(floods).collect();
    eventually(
        "10,000 more notifications from every server",
        Duration::from_secs(60),
        async || (0..n).all(|i| floods(i) > at_ready[i]).then_some(()),
    )
    .await;
    until_all_ready(&addr, n, Duration::from_secs(30), &err).await;
    let peak = mcp_readiness_fixtures::process::peak_rss_kib(guard.pid()) / 1024;
    eprintln!("peak RSS of serve with {n} servers flooding notifications: {peak} MiB");
    assert!(
        peak < 100,
        "serve grew to {peak} MiB under {n} notification floods"
    );
}

/// The fleet of the open-file limit tests.
const NOFILE_FLEET: usize = 30;

/// A scratch `tag` and `serve` over a fleet of [`NOFILE_FLEET`] fixtures, started under `prefix`
/// (a shell `ulimit`); returns the scratch, serve's guard, its address and its stderr file.
async fn fleet_under(
    tag: &str,
    prefix: &str,
) -> (
    Scratch,
    mcp_readiness_fixtures::process::Guard,
    String,
    std::path::PathBuf,
) {
    let scratch = Scratch::new(tag);
    let config = fleet(&scratch, NOFILE_FLEET, |_| Vec::new());
    let (guard, addr, err) =
        mcp_readiness_fixtures::serve::serve_under(&scratch, prefix, &config).await;
    (scratch, guard, addr, err)
}

#[tokio::test]
async fn the_soft_open_file_limit_is_raised_to_the_hard_one_so_a_fleet_fits() {
    // 48 descriptors cannot hold 30 servers (about four each); the hard limit can.
    let (_scratch, _guard, addr, err) = fleet_under("nofile-raised", "ulimit -Sn 48 &&").await;
    until_all_ready(&addr, NOFILE_FLEET, Duration::from_secs(90), &err).await;
}

#[tokio::test]
async fn running_out_of_file_descriptors_is_its_own_reason_not_a_missing_command() {
    // Soft and hard limit both 48: nothing to raise to.
    let (_scratch, _guard, _addr, err) = fleet_under("nofile-out", "ulimit -n 48 &&").await;
    let line = eventually(
        "a server refused for want of descriptors",
        Duration::from_secs(60),
        async || {
            let text = std::fs::read_to_string(&err).ok()?;
            let line = text
                .lines()
                .find(|l| l.contains("ran out of file descriptors"));
            line.map(str::to_owned)
        },
    )
    .await;
    assert!(line.contains("open-file limit 48, hard limit 48"), "{line}");
    assert!(line.contains("LimitNOFILE"), "{line}");
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(
        !stderr.contains("check that it is installed"),
        "a descriptor shortage was blamed on the command:\n{stderr}"
    );
}
