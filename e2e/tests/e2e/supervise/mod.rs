//! Supervised connections proven on real MCP servers: the fixture server (`examples/
//! fixtures/src/server.rs`, rmcp) over real stdio and real HTTP on 127.0.0.1, and a third-party server
//! from the npm registry.
#![cfg(target_os = "linux")]

mod faults;

use mcp_readiness_fixtures as common;

use common::configure::http_fixture_with_env;
use common::process::Guard;
use common::{Scratch, alive, eventually};

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_readiness::secret::Secret;
use mcp_readiness::{Inventory, State, ToolCall};
use mcp_readiness::{
    state::{ConnectResult, ConnectionEvent},
    supervise::{
        AfterConnect, CallErrorKind, ConnectError, Hub, HubOptions, HubOptionsBuilder,
        NotConnected, ServerSpec, SpecError, TransportSpec,
    },
};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use tokio::time::Instant;

// ---------------------------------------------------------------------------------------------
// helpers

use common::fixture;

/// How long a test waits for what a hub does by itself.
const WAIT: Duration = Duration::from_secs(10);

async fn assert_all_gone(pids: &[u32]) {
    assert!(!pids.is_empty(), "the test should have started processes");
    common::process::assert_all_gone("the hub's processes to exit", pids, Duration::from_secs(5))
        .await;
}

fn stdio(name: &str, scratch: &Scratch, env: &[(&str, &str)]) -> ServerSpec {
    let mut vars: BTreeMap<String, Secret> = env
        .iter()
        .map(|(k, v)| (k.to_string(), Secret::new(*v)))
        .collect();
    vars.insert(
        "FIXTURE_LOG".into(),
        Secret::new(scratch.path("log").to_string_lossy()),
    );
    ServerSpec {
        name: name.into(),
        transport: TransportSpec::Stdio {
            command: fixture().to_string_lossy().into_owned(),
            args: vec![],
            env: vars,
            cwd: None,
        },
    }
}

fn options() -> HubOptionsBuilder {
    HubOptions::builder()
        .connect_timeout(Duration::from_secs(20))
        .call_timeout(Duration::from_secs(20))
        .health_interval(None)
}

type Events = Arc<Mutex<Vec<ConnectionEvent>>>;

fn recording(options: HubOptionsBuilder) -> (HubOptionsBuilder, Events) {
    let events: Events = Arc::default();
    let sink = {
        let events = events.clone();
        move |e: &ConnectionEvent| events.lock().unwrap().push(e.clone())
    };
    (options.event_sink(sink), events)
}

fn attempts(events: &Events, result: ConnectResult) -> usize {
    events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, ConnectionEvent::ConnectAttempt { result: r, .. } if *r == result))
        .count()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("")
}

fn provision_account() -> AfterConnect {
    Arc::new(|session| {
        Box::pin(async move {
            let params = CallToolRequestParams::new("add_account")
                .with_arguments(json!({"account": "yahoo"}).as_object().cloned().unwrap());
            session.call_tool(params).await.map(|_| ()).map_err(|e| {
                ConnectError::new(
                    ConnectResult::ProtocolError,
                    format!("provisioning failed: {e}"),
                )
            })
        })
    })
}

fn emails(result: &CallToolResult) -> usize {
    let value: Value = serde_json::from_str(&text(result)).unwrap();
    value["emails"].as_array().unwrap().len()
}

/// Starts the fixture as an HTTP server (logging to the scratch's `log`) and returns its guard
/// and URL.
async fn http_fixture(scratch: &Scratch, token: &str) -> (Guard, String) {
    let log = scratch.path("log").display().to_string();
    let (guard, port) = http_fixture_with_env(scratch, token, &[("FIXTURE_LOG", &log)]).await;
    (guard, format!("http://127.0.0.1:{port}/mcp"))
}

fn http(name: &str, url: &str, token: Option<&str>) -> ServerSpec {
    common::configure::http_spec(name, url, token)
}

// ---------------------------------------------------------------------------------------------
// the seed's regressions

#[tokio::test]
async fn the_child_dies_in_the_middle_of_a_read_and_the_same_call_still_succeeds() {
    let scratch = Scratch::new("seed");
    let marker = scratch.path("crash-next-read");
    let spec = stdio(
        "imap",
        &scratch,
        &[("FIXTURE_CRASH_MARKER", &marker.to_string_lossy())],
    );
    let (opts, events) = recording(options().after_connect("imap", provision_account()));
    let hub = Hub::new(vec![spec], opts).unwrap();
    let read = || ToolCall::new("mcp__imap__list_emails").idempotent(true);

    assert_eq!(emails(&hub.call(read()).await.unwrap()), 1);
    std::fs::write(&marker, "").unwrap(); // the next read kills the child mid-request
    let recovered = hub.call(read()).await.unwrap();

    assert_eq!(
        emails(&recovered),
        1,
        "the read still succeeds, from a re-provisioned child"
    );
    assert_eq!(attempts(&events, ConnectResult::Ok), 2, "connect count");
    assert_eq!(scratch.count("add_account"), 2, "provision count");
    assert_eq!(scratch.count("crash"), 1);
    assert_eq!(hub.generation("imap"), Some(2));

    // A late close from generation 1 does not mark generation 2 down.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(hub.state("imap"), Some(State::Ready));
    assert_eq!(hub.generation("imap"), Some(2));

    let pids = scratch.pids();
    hub.shutdown().await;
    assert_all_gone(&pids).await;
}

#[tokio::test]
async fn by_default_a_killed_child_is_restarted_in_the_background_and_never_reads_absent() {
    let scratch = Scratch::new("background");
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![stdio("mail", &scratch, &[])], opts).unwrap();
    hub.connect_all();
    eventually("the first connection", WAIT, async || {
        hub.state("mail") == Some(State::Ready)
    })
    .await;
    let pid: u32 = text(&hub.call(ToolCall::new("mcp__mail__pid")).await.unwrap())
        .parse()
        .unwrap();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    eventually("the restart without any call", WAIT, async || {
        hub.generation("mail") == Some(2) && hub.state("mail") == Some(State::Ready)
    })
    .await;
    assert_eq!(scratch.count("start"), 2);
    let entered: Vec<State> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            ConnectionEvent::StateChanged { to, .. } => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(
        entered,
        [State::Ready, State::Connecting, State::Ready],
        "a drop is a `connecting` blip, never `absent`"
    );
    let pids = scratch.pids();
    hub.shutdown().await;
    assert_all_gone(&pids).await;
}

#[tokio::test]
async fn the_child_dies_between_calls_and_the_state_flips_without_any_call() {
    let scratch = Scratch::new("between");
    let (opts, events) = recording(options().reconnect_on_drop(false));
    let hub = Hub::new(vec![stdio("mail", &scratch, &[])], opts).unwrap();
    let pid: u32 = text(&hub.call(ToolCall::new("mcp__mail__pid")).await.unwrap())
        .parse()
        .unwrap();
    assert_eq!(hub.state("mail"), Some(State::Ready));

    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    // Nothing failed yet and the next use reconnects: `connecting`, not `absent`.
    eventually("the drop to be noticed without a call", WAIT, async || {
        hub.state("mail") == Some(State::Connecting)
    })
    .await;
    assert_eq!(scratch.count("start"), 1, "no restart before a call");
    assert!(!hub.snapshot().await.ready_tools.contains("mcp__mail__pid"));
    let reason = hub.servers()[0].reason.clone().unwrap();
    assert!(reason.contains("lost"), "{reason}");

    // The next call reconnects transparently (even a non-idempotent one: nothing was in flight).
    let again = hub
        .call(ToolCall::new("mcp__mail__echo").with_arguments(json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(text(&again), "hi");
    assert_eq!(attempts(&events, ConnectResult::Ok), 2);
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, ConnectionEvent::Reconnected { .. }))
    );

    let pids = scratch.pids();
    hub.shutdown().await;
    assert_all_gone(&pids).await;
}

#[tokio::test]
async fn sixty_four_concurrent_calls_during_a_reconnect_cause_one_handshake() {
    let scratch = Scratch::new("single-flight");
    let (opts, events) = recording(options().reconnect_on_drop(false));
    let hub = Hub::new(
        vec![stdio(
            "mail",
            &scratch,
            &[("FIXTURE_STARTUP_DELAY_MS", "300")],
        )],
        opts,
    )
    .unwrap();
    let pid: u32 = text(&hub.call(ToolCall::new("mcp__mail__pid")).await.unwrap())
        .parse()
        .unwrap();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    eventually("the drop", WAIT, async || {
        hub.state("mail") == Some(State::Connecting)
    })
    .await;

    let calls = (0..64).map(|i| {
        hub.call(ToolCall::new("mcp__mail__echo").with_arguments(json!({"text": i.to_string()})))
    });
    let results = futures::future::join_all(calls).await;
    assert!(
        results.iter().all(Result::is_ok),
        "{:?}",
        results.iter().find(|r| r.is_err())
    );
    assert_eq!(
        scratch.count("start"),
        2,
        "one child for the first connect, one for all 64 callers"
    );
    assert_eq!(attempts(&events, ConnectResult::Ok), 2);

    let pids = scratch.pids();
    hub.shutdown().await;
    assert_all_gone(&pids).await;
}

#[tokio::test]
async fn a_failed_connect_makes_calls_fail_in_under_a_millisecond_during_the_cooldown() {
    let scratch = Scratch::new("cooldown");
    let log = scratch.path("log");
    let spec = ServerSpec {
        name: "flaky".into(),
        transport: TransportSpec::Stdio {
            command: "sh".into(),
            args: vec![
                "-c".into(),
                format!(
                    "echo start $$ >> '{}'; echo 'fatal: MAIL_PASSWORD is not set' >&2; exit 1",
                    log.display()
                ),
            ],
            env: BTreeMap::new(),
            cwd: None,
        },
    };
    let (opts, events) = recording(options().cooldown(Duration::from_secs(2)));
    let hub = Hub::new(vec![spec], opts).unwrap();
    let call = || ToolCall::new("mcp__flaky__read");

    let first = hub.call(call()).await.unwrap_err();
    assert_eq!(first.connect_result(), Some(ConnectResult::Closed));
    assert!(
        first.to_string().contains("MAIL_PASSWORD is not set"),
        "the child's stderr explains: {first}"
    );
    let mut took = Vec::new();
    for _ in 0..100 {
        let started = Instant::now();
        let error = hub.call(call()).await.unwrap_err();
        took.push(started.elapsed());
        assert!(matches!(
            error.kind(),
            CallErrorKind::NotConnected(NotConnected::CoolingDown { .. })
        ));
        assert!(error.to_string().contains("`flaky`"), "{error}");
    }
    took.sort();
    // The median, so a busy machine preempting one call does not fail the test.
    assert!(took[50] < Duration::from_millis(1), "median {:?}", took[50]);
    assert_eq!(
        scratch.count("start"),
        1,
        "nothing was spawned during the cooldown"
    );
    let rejections = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, ConnectionEvent::CooldownRejection { .. }))
        .count();
    assert_eq!(rejections, 100);

    tokio::time::sleep(Duration::from_millis(2100)).await;
    let _ = hub.call(call()).await.unwrap_err();
    assert_eq!(scratch.count("start"), 2, "one attempt after the cooldown");
}

// ---------------------------------------------------------------------------------------------
// authorization over real HTTP

#[tokio::test]
async fn a_401_is_unauthenticated_after_one_attempt_and_a_revoked_token_is_noticed_at_the_next_call()
 {
    let scratch = Scratch::new("auth");
    let token = "tok-5ecr3t-value";
    let (mut server, url) = http_fixture(&scratch, token).await;
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![http("gh", &url, Some("wrong-token-123"))], opts).unwrap();
    assert_eq!(hub.network_transport("gh"), Some("tcp"));

    let error = hub.call(ToolCall::new("mcp__gh__echo")).await.unwrap_err();
    assert_eq!(
        error.kind(),
        CallErrorKind::NotConnected(NotConnected::Unauthenticated)
    );
    assert_eq!(hub.state("gh"), Some(State::Unauthenticated));
    for _ in 0..5 {
        let again = hub.call(ToolCall::new("mcp__gh__echo")).await.unwrap_err();
        assert_eq!(
            again.kind(),
            CallErrorKind::NotConnected(NotConnected::Unauthenticated)
        );
        assert!(!again.to_string().contains("wrong-token-123"), "{again}");
    }
    assert_eq!(
        attempts(&events, ConnectResult::Unauthorized),
        1,
        "no retries"
    );

    // Changed credentials let it try again.
    hub.replace_server(http("gh", &url, Some(token))).unwrap();
    let ok = hub
        .call(ToolCall::new("mcp__gh__echo").with_arguments(json!({"text": "in"})))
        .await
        .unwrap();
    assert_eq!(text(&ok), "in");
    assert!(hub.snapshot().await.ready_tools.contains("mcp__gh__echo"));
    // A reload with the same configuration keeps the live connection.
    hub.replace_server(http("gh", &url, Some(token))).unwrap();
    assert_eq!(hub.state("gh"), Some(State::Ready));
    assert_eq!(hub.generation("gh"), Some(1));

    // Revoked mid-session: the next call finds out.
    hub.call(ToolCall::new("mcp__gh__revoke_token"))
        .await
        .unwrap();
    let revoked = hub.call(ToolCall::new("mcp__gh__echo")).await.unwrap_err();
    assert_eq!(
        revoked.kind(),
        CallErrorKind::NotConnected(NotConnected::Unauthenticated),
        "{revoked}"
    );
    assert_eq!(hub.state("gh"), Some(State::Unauthenticated));
    assert!(hub.snapshot().await.unauthenticated_servers.contains("gh"));
    for e in events.lock().unwrap().iter() {
        assert!(!format!("{e:?}").contains(token), "secret in event {e:?}");
    }
    for status in hub.servers() {
        assert!(!status.reason.unwrap_or_default().contains(token));
    }
    hub.shutdown().await;
    server.kill();
}

#[tokio::test]
async fn an_http_server_that_goes_away_is_noticed_at_the_next_call_and_then_cools_down() {
    let scratch = Scratch::new("http-gone");
    let (mut server, url) = http_fixture(&scratch, "tok-abcdef").await;
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![http("web", &url, Some("tok-abcdef"))], opts).unwrap();
    hub.call(ToolCall::new("mcp__web__pid")).await.unwrap();
    server.kill();

    let error = hub
        .call(ToolCall::new("mcp__web__pid").idempotent(true))
        .await
        .unwrap_err();
    // The pipe died, the one reconnect was refused, and the server now cools down.
    assert_eq!(
        error.connect_result(),
        Some(ConnectResult::Refused),
        "{error}"
    );
    assert_eq!(hub.state("web"), Some(State::Absent));
    assert_eq!(attempts(&events, ConnectResult::Refused), 1);
    let fast = hub.call(ToolCall::new("mcp__web__pid")).await.unwrap_err();
    assert!(matches!(
        fast.kind(),
        CallErrorKind::NotConnected(NotConnected::CoolingDown { .. })
    ));
    assert!(!fast.to_string().contains("tok-abcdef"));
}

// ---------------------------------------------------------------------------------------------
// isolation

#[tokio::test]
async fn a_hanging_server_hits_the_per_call_timeout_and_other_servers_are_unaffected() {
    let scratch = Scratch::new("hang");
    let opts = options().call_timeout(Duration::from_millis(1500));
    let hub = Hub::new(
        vec![stdio("slow", &scratch, &[]), stdio("fast", &scratch, &[])],
        opts,
    )
    .unwrap();
    hub.call(ToolCall::new("mcp__slow__pid")).await.unwrap();
    hub.call(ToolCall::new("mcp__fast__pid")).await.unwrap();

    let started = Instant::now();
    let hang = hub.call(ToolCall::new("mcp__slow__hang"));
    let fast = async {
        let result = hub
            .call(ToolCall::new("mcp__fast__echo").with_arguments(json!({"text": "ok"})))
            .await;
        (result, started.elapsed())
    };
    let (hang, (fast, fast_took)) = tokio::join!(hang, fast);
    let hang = hang.unwrap_err();
    assert_eq!(hang.kind(), CallErrorKind::Timeout);
    assert!(hang.to_string().contains("`slow`"), "{hang}");
    assert!(started.elapsed() >= Duration::from_millis(1500));
    assert_eq!(text(&fast.unwrap()), "ok");
    assert!(
        fast_took < Duration::from_millis(1000),
        "the fast server waited: {fast_took:?}"
    );
    assert_eq!(
        hub.state("slow"),
        Some(State::Ready),
        "a slow answer is not a dead server"
    );

    let pids = scratch.pids();
    hub.shutdown().await;
    assert_all_gone(&pids).await;
}

#[tokio::test]
async fn fan_out_over_four_servers_with_one_dead_returns_three_results_and_one_degraded_entry() {
    let scratch = Scratch::new("fanout");
    let mut specs: Vec<ServerSpec> = ["a", "b", "c"]
        .iter()
        .map(|n| stdio(n, &scratch, &[]))
        .collect();
    specs.push(ServerSpec {
        name: "dead".into(),
        transport: TransportSpec::Stdio {
            command: "/nonexistent/mcp-server-dead".into(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
        },
    });
    let hub = Hub::new(specs, options()).unwrap();
    hub.connect_all();
    eventually("three servers ready", WAIT, async || {
        hub.servers()
            .iter()
            .filter(|s| s.state == State::Ready)
            .count()
            == 3
    })
    .await;

    let sleep = |server: &str, ms: u64| {
        ToolCall::new(format!("mcp__{server}__sleep")).with_arguments(json!({"ms": ms}))
    };
    let started = Instant::now();
    let fan = hub
        .fan_out(vec![
            sleep("a", 300),
            sleep("b", 900),
            sleep("c", 600),
            sleep("dead", 1),
        ])
        .await;
    let took = started.elapsed();
    assert_eq!(fan.ok().count(), 3);
    assert_eq!(fan.degraded.len(), 1);
    assert_eq!(&*fan.degraded[0].server, "dead");
    assert_eq!(fan.degraded[0].state, State::Absent);
    // Concurrent: the slowest healthy server (900 ms), far from the sum (1800 ms).
    assert!(took >= Duration::from_millis(900), "{took:?}");
    assert!(
        took < Duration::from_millis(1700),
        "the calls did not run side by side: {took:?}"
    );

    let pids = scratch.pids();
    hub.shutdown().await;
    assert_all_gone(&pids).await;
}

// ---------------------------------------------------------------------------------------------
// notifications, meta, health

#[tokio::test]
async fn a_tools_list_changed_notification_refreshes_the_tool_list() {
    let scratch = Scratch::new("list-changed");
    let hub = Hub::new(vec![stdio("fx", &scratch, &[])], options()).unwrap();
    let seen = hub.changes().unwrap().generation();
    hub.call(ToolCall::new("mcp__fx__add_tool")).await.unwrap();
    let mut found = false;
    for _ in 0..200 {
        if hub.snapshot().await.ready_tools.contains("mcp__fx__extra") {
            found = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(found, "the new tool appears without reconnecting");
    assert!(hub.changes().unwrap().generation() > seen);
    assert_eq!(hub.generation("fx"), Some(1));
    hub.shutdown().await;
    assert_all_gone(&scratch.pids()).await;
}

#[tokio::test]
async fn the_call_meta_reaches_the_server_as_the_request_meta() {
    let scratch = Scratch::new("meta");
    let hub = Hub::new(vec![stdio("fx", &scratch, &[])], options()).unwrap();
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut call = ToolCall::new("mcp__fx__echo_meta");
    call.meta = json!({"traceparent": traceparent}).as_object().cloned();
    let echoed: Value = serde_json::from_str(&text(&hub.call(call).await.unwrap())).unwrap();
    assert_eq!(echoed["traceparent"], traceparent);
    hub.shutdown().await;
    assert_all_gone(&scratch.pids()).await;
}

#[tokio::test]
async fn a_health_ping_finds_a_hung_server_before_any_call() {
    let scratch = Scratch::new("health");
    let opts = options()
        .health_interval(Some(Duration::from_millis(300)))
        .call_timeout(Duration::from_millis(500))
        .reconnect_on_drop(false);
    let hub = Hub::new(vec![stdio("fx", &scratch, &[])], opts).unwrap();
    let pid: u32 = text(&hub.call(ToolCall::new("mcp__fx__pid")).await.unwrap())
        .parse()
        .unwrap();
    // Freeze the child: its pipe stays open, only a ping can tell.
    std::process::Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap();
    eventually("the health ping to drop the connection", WAIT, async || {
        hub.state("fx") == Some(State::Connecting)
    })
    .await;
    assert!(
        hub.servers()[0]
            .reason
            .clone()
            .unwrap()
            .contains("health ping")
    );
    let pids = scratch.pids();
    assert_all_gone(&pids).await; // the frozen child was killed with its group
    hub.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// bad input

#[tokio::test]
async fn a_command_that_does_not_exist_is_absent_with_spawn_failed_naming_the_command() {
    let spec = ServerSpec {
        name: "ghost".into(),
        transport: TransportSpec::Stdio {
            command: "mcp-server-that-does-not-exist".into(),
            args: vec![],
            env: BTreeMap::new(),
            cwd: None,
        },
    };
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![spec], opts).unwrap();
    let error = hub.call(ToolCall::new("mcp__ghost__x")).await.unwrap_err();
    assert_eq!(error.connect_result(), Some(ConnectResult::SpawnFailed));
    assert_eq!(error.state(), State::Absent);
    assert!(
        error.to_string().contains("mcp-server-that-does-not-exist"),
        "{error}"
    );
    assert_eq!(hub.state("ghost"), Some(State::Absent));
    assert_eq!(attempts(&events, ConnectResult::SpawnFailed), 1);
}

#[tokio::test]
async fn a_non_http_url_is_a_configuration_error() {
    let spec = http("files", "file:///etc/passwd", None);
    let error = Hub::new(vec![spec], options()).unwrap_err();
    assert!(matches!(error, SpecError::UrlScheme { .. }), "{error}");
    let hub = Hub::new(vec![], options()).unwrap();
    assert!(
        hub.add_server(http("x", "ws://127.0.0.1:1/mcp", None))
            .is_err()
    );
}

#[tokio::test]
async fn a_server_that_writes_garbage_to_stdout_is_a_protocol_error_without_panic() {
    let scratch = Scratch::new("garbage");
    let (opts, events) = recording(options().connect_timeout(Duration::from_secs(2)));
    let hub = Hub::new(
        vec![stdio("noisy", &scratch, &[("FIXTURE_GARBAGE", "1")])],
        opts,
    )
    .unwrap();
    let error = hub.call(ToolCall::new("mcp__noisy__x")).await.unwrap_err();
    assert_eq!(
        error.connect_result(),
        Some(ConnectResult::ProtocolError),
        "{error}"
    );
    assert!(error.to_string().contains("not JSON-RPC"), "{error}");
    assert_eq!(attempts(&events, ConnectResult::ProtocolError), 1);
    assert_all_gone(&scratch.pids()).await;
}

#[tokio::test]
async fn a_refused_http_connection_is_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let hub = Hub::new(
        vec![http("down", &format!("http://127.0.0.1:{port}/mcp"), None)],
        options(),
    )
    .unwrap();
    let error = hub.call(ToolCall::new("mcp__down__x")).await.unwrap_err();
    assert_eq!(
        error.connect_result(),
        Some(ConnectResult::Refused),
        "{error}"
    );
}

#[tokio::test]
async fn secrets_echoed_by_a_server_are_redacted_from_call_errors() {
    let scratch = Scratch::new("redact");
    let token = "tok-echoed-secret-42";
    let hub = Hub::new(
        vec![stdio("fx", &scratch, &[("FIXTURE_TOKEN", token)])],
        options(),
    )
    .unwrap();
    let error = hub
        .call(ToolCall::new("mcp__fx__echo_token_error"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CallErrorKind::Protocol);
    assert!(error.to_string().contains("[redacted]"), "{error}");
    assert!(!error.to_string().contains(token), "{error}");
    assert!(!error.json_rpc_error().unwrap().message.contains(token));
    hub.shutdown().await;
    assert_all_gone(&scratch.pids()).await;
}

#[tokio::test]
async fn no_stdio_child_or_grandchild_outlives_the_hub_that_started_it() {
    let scratch = Scratch::new("drop");
    let hub = Hub::new(
        vec![stdio("fx", &scratch, &[("FIXTURE_GRANDCHILD", "1")])],
        options(),
    )
    .unwrap();
    hub.call(ToolCall::new("mcp__fx__pid")).await.unwrap();
    let pids = scratch.pids();
    assert_eq!(pids.len(), 2, "child and grandchild: {pids:?}");
    assert!(pids.iter().all(|p| alive(*p)));
    drop(hub); // the last handle: no explicit shutdown
    assert_all_gone(&pids).await;
}

// ---------------------------------------------------------------------------------------------
// interoperability with a third-party server from the npm registry

#[tokio::test]
async fn the_hub_supervises_the_npm_filesystem_server() {
    let entry = mcp_readiness_fixtures::repo()
        .join("e2e/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    if !entry.exists() {
        let message = "@modelcontextprotocol/server-filesystem is not installed: run \
                       `npm ci --prefix e2e/npm` (or `npm install --prefix e2e/npm`)";
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{message}");
        }
        eprintln!("\n!!!!!!!!!! SKIPPED: {message} !!!!!!!!!!\n");
        return;
    }
    let scratch = Scratch::new("npm");
    std::fs::write(scratch.path("hello.txt"), "hello from the interop test").unwrap();
    let spec = ServerSpec {
        name: "files".into(),
        transport: TransportSpec::Stdio {
            command: "node".into(),
            args: vec![
                entry.to_string_lossy().into_owned(),
                scratch.0.to_string_lossy().into_owned(),
            ],
            env: BTreeMap::new(),
            cwd: None,
        },
    };
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![spec], opts).unwrap();
    hub.connect_all();
    eventually("the filesystem server", WAIT, async || {
        hub.state("files") == Some(State::Ready)
    })
    .await;
    let snapshot = hub.snapshot().await;
    assert!(
        snapshot.ready_tools.contains("mcp__files__list_directory"),
        "{:?}",
        snapshot.ready_tools
    );

    let listing = hub
        .call(
            ToolCall::new("mcp__files__list_directory")
                .with_arguments(json!({"path": scratch.0.to_string_lossy()}))
                .idempotent(true),
        )
        .await
        .unwrap();
    assert!(text(&listing).contains("hello.txt"), "{}", text(&listing));
    assert_ne!(listing.is_error, Some(true));

    // Outside its allowed directories: the tool answers with an error, which is not retried.
    let denied = hub
        .call(
            ToolCall::new("mcp__files__list_directory")
                .with_arguments(json!({"path": "/"}))
                .idempotent(true),
        )
        .await;
    match denied {
        Ok(result) => assert_eq!(result.is_error, Some(true)),
        Err(error) => assert_eq!(error.kind(), CallErrorKind::Protocol),
    }
    assert_eq!(attempts(&events, ConnectResult::Ok), 1);
    let node = processes_mentioning(&scratch.0.to_string_lossy());
    assert!(!node.is_empty(), "the node server runs");
    hub.shutdown().await;
    assert_eq!(hub.state("files"), Some(State::Absent));
    assert_all_gone(&node).await;
}

/// Pids whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(needle))
                .unwrap_or(false)
        })
        .filter(|pid| alive(*pid))
        .collect()
}
