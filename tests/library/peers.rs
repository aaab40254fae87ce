//! `Peers` on a virtual clock: an in-process rmcp server over an in-memory pipe, so connect
//! durations, drop detection and the change feed are measured in exact virtual time.
#![cfg(feature = "hub")]

use std::sync::Arc;
use std::time::Duration;

use mcp_readiness::rmcp::service::RoleServer;
use mcp_readiness::{Inventory, Metrics, ReadinessLayer, State, supervise::Peers};
use mcp_readiness_fixtures::mcp;

use crate::support::call::{call, refusal};
use tower::ServiceBuilder;

/// A connected client and the server's running service (drop it to end the connection).
async fn connect() -> (
    mcp_readiness::rmcp::service::RunningService<mcp_readiness::rmcp::service::RoleClient, ()>,
    mcp_readiness::rmcp::service::RunningService<RoleServer, mcp::Tools>,
) {
    mcp::pipe(mcp::ECHO).await
}

/// Peers recording into a recorder of their own.
fn recorded() -> (Metrics, Peers) {
    let metrics = Metrics::new();
    (metrics.clone(), Peers::with_events(metrics))
}

/// Connects `echo` into `peers`; the server's running service (drop it to end the connection).
async fn echo_into(
    peers: &Peers,
) -> mcp_readiness::rmcp::service::RunningService<RoleServer, mcp::Tools> {
    let (client, server) = connect().await;
    peers.insert("echo", client).await.unwrap();
    server
}

#[tokio::test(start_paused = true)]
async fn the_connect_duration_runs_from_connecting_to_insert_and_tools_are_ready_at_once() {
    let (metrics, peers) = recorded();
    peers.connecting("echo");
    assert_eq!(peers.state("echo"), Some(State::Connecting));
    tokio::time::advance(Duration::from_millis(1500)).await;
    let (client, _server) = connect().await;
    assert_eq!(peers.insert("echo", client).await.unwrap(), 1);
    assert!(
        peers
            .snapshot()
            .await
            .ready_tools
            .contains("mcp__echo__echo")
    );
    let exposition = metrics.render();
    assert!(
        exposition.contains(
            r#"mcp_readiness_connect_duration_seconds_sum{result="ok",server="echo"} 1.5"#
        ),
        "{exposition}"
    );
    assert!(
        exposition.contains(r#"mcp_readiness_server_tools{server="echo"} 1"#),
        "{exposition}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_ends_is_absent_without_any_time_passing_and_the_feed_moves() {
    let peers = Peers::new();
    let server = echo_into(&peers).await;
    let tools = ServiceBuilder::new()
        .layer(ReadinessLayer::new(peers.clone()))
        .service(peers.clone());
    call(&tools, "mcp__echo__echo").await.unwrap(); // cached ready
    let seen = peers.changes().unwrap().generation();
    let before = tokio::time::Instant::now();

    drop(server); // the server goes away
    tokio::time::timeout(
        Duration::from_millis(1),
        peers.changes().unwrap().changed_since(seen),
    )
    .await
    .expect("the watcher reported the end at once");
    assert_eq!(peers.state("echo"), Some(State::Absent));
    let error = call(&tools, "mcp__echo__echo").await.unwrap_err();
    assert!(
        error.downcast_ref::<mcp_readiness::NotReady>().is_some(),
        "{error}"
    );
    assert!(
        before.elapsed() < Duration::from_millis(1),
        "{:?}",
        before.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn a_newer_connection_is_not_marked_lost_by_the_end_of_the_one_it_replaced() {
    let (metrics, peers) = recorded();
    let first_server = echo_into(&peers).await;
    let _second_server = echo_into(&peers).await;
    drop(first_server);
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(peers.state("echo"), Some(State::Ready));
    assert!(peers.peer("echo").is_some());
    assert!(
        metrics
            .render()
            .contains(r#"mcp_readiness_reconnects_total{server="echo"} 1"#)
    );
}

#[tokio::test(start_paused = true)]
async fn a_removed_server_stays_gone_when_its_connection_ends_afterwards() {
    let (metrics, peers) = recorded();
    let _server = echo_into(&peers).await;
    assert!(peers.remove("echo"));
    // Closing the connection wakes its watcher; the removed server must not come back.
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(peers.state("echo"), None);
    assert!(peers.servers().is_empty());
    assert!(!metrics.render().contains(r#"server="echo""#));
    assert!(!mcp_readiness::exporter::status_page(&metrics).contains(r#"data-server="echo""#));
    assert!(!peers.remove("echo"));
}

#[tokio::test(start_paused = true)]
async fn a_command_that_cannot_start_is_absent_with_spawn_failed_at_once_not_connecting() {
    use mcp_readiness::rmcp::transport::TokioChildProcess;
    use mcp_readiness::{Action, Budget, state::ConnectResult};

    let (metrics, peers) = recorded();
    peers.connecting("files");
    // The docs' pattern: the spawn's own `io::Error` goes to `failed` too.
    let command = tokio::process::Command::new("/nonexistent/mcp-readiness/files-mcp");
    match TokioChildProcess::new(command) {
        Err(spawn_error) => peers.failed("files", spawn_error),
        Ok(_) => panic!("a missing command started"),
    }
    assert_eq!(peers.state("files"), Some(State::Absent));
    let reason = peers.servers()[0].reason.clone().unwrap();
    assert!(
        reason.contains("check that its command is installed"),
        "{reason}"
    );
    let text = metrics.render();
    assert!(
        text.contains(&format!(
            r#"mcp_readiness_connects_total{{result="{}",server="files"}} 1"#,
            ConnectResult::SpawnFailed.as_str()
        )),
        "{text}"
    );

    // The first call is refused at once with `add_connection`, not after the whole budget.
    let budget = Budget::try_new(Duration::from_secs(20), Duration::from_secs(2)).unwrap();
    let tools = ServiceBuilder::new()
        .layer(
            ReadinessLayer::builder(peers.clone())
                .budget(budget)
                .build(),
        )
        .service(peers.clone());
    let start = tokio::time::Instant::now();
    let not_ready = refusal(&tools, "mcp__files__read_file").await;
    assert_eq!(not_ready.action(), Action::AddConnection);
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_service_connection_announces_its_attempt_then_its_state_then_its_tools_like_the_hub() {
    use mcp_readiness::state::{ConnectResult, ConnectionEvent};
    use std::sync::Mutex;

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        move |e: &ConnectionEvent| seen.lock().unwrap().push(e.clone())
    };
    let peers = Peers::with_events(sink);
    peers.connecting("echo");
    let server = echo_into(&peers).await;
    drop(server);
    tokio::time::sleep(Duration::from_millis(10)).await;
    let kinds: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|e| match e {
            ConnectionEvent::ServerAdded { state, .. } => format!("added {state}"),
            ConnectionEvent::StateChanged { from, to, .. } => format!("{from} -> {to}"),
            ConnectionEvent::ConnectAttempt { result, .. } => {
                assert_eq!(*result, ConnectResult::Ok);
                "attempt ok".to_owned()
            }
            ConnectionEvent::ToolsChanged { count, .. } => format!("tools {count}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "added absent",
            "absent -> connecting",
            "attempt ok",
            "connecting -> ready",
            "tools 1",
            "ready -> absent",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn failed_takes_an_anyhow_error_a_boxed_error_or_any_std_error_and_reads_their_cause() {
    use mcp_readiness::state::ConnectResult;
    let (metrics, peers) = recorded();
    let missing = || std::io::Error::from(std::io::ErrorKind::NotFound);
    let refused = || std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
    // anyhow, with context on top: the io::Error under it still decides.
    let with_context = anyhow::Error::from(missing()).context("starting the files server");
    peers.failed("files", with_context);
    // A boxed error, as `tower::BoxError` and many clients have them.
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(refused());
    peers.failed("mail", boxed);
    // Any std error, by value.
    peers.failed("docs", missing());
    // A plain message (a `String` converts too): absent, `closed`.
    peers.failed(
        "misc",
        anyhow::anyhow!("the handshake was refused by policy"),
    );

    for (server, result) in [
        ("files", ConnectResult::SpawnFailed),
        ("mail", ConnectResult::Refused),
        ("docs", ConnectResult::SpawnFailed),
        ("misc", ConnectResult::Closed),
    ] {
        assert_eq!(peers.state(server), Some(State::Absent), "{server}");
        let text = metrics.render();
        assert!(
            text.contains(&format!(
                r#"mcp_readiness_connects_total{{result="{}",server="{server}"}} 1"#,
                result.as_str()
            )),
            "{server}: {text}"
        );
    }
    let reason = reason_of(&peers, "files");
    assert!(reason.contains("starting the files server"), "{reason}");
}

/// The reason `peers` gives for `server`.
fn reason_of(peers: &Peers, server: &str) -> String {
    peers
        .servers()
        .into_iter()
        .find(|s| &*s.name == server)
        .and_then(|s| s.reason)
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_failure_with_a_terminal_escape_reads_once_and_without_control_characters() {
    let (_metrics, peers) = recorded();
    peers.failed("e", anyhow::anyhow!("bad \u{1b}[2J\u{1b}]0;title\u{7} end"));
    let reason = reason_of(&peers, "e");
    assert!(!reason.chars().any(char::is_control), "{reason:?}");
    assert_eq!(reason.matches("bad").count(), 1, "{reason}");
    assert_eq!(
        reason,
        "server `e`: connecting failed (the MCP server: bad [2J ]0;title end); check that it \
         speaks MCP, then connect again"
    );
}
