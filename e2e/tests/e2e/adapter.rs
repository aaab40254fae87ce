//! A service that keeps its own rmcp connections: `Peers` (and `Hub::attach_with`) over real fixture
//! servers (fixtures/src/server.rs) over stdio and streamable HTTP, with the readiness layer,
//! metrics and the status page on top.
#![cfg(target_os = "linux")]

use std::sync::Arc;
use std::time::Duration;

use mcp_readiness::HubOptions;
use mcp_readiness::rmcp::ServiceExt;
use mcp_readiness::rmcp::service::{ClientInitializeError, RoleClient, RunningService};
use mcp_readiness::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use mcp_readiness::rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use mcp_readiness::state::CallOutcome;
use mcp_readiness::{
    Action, CallFailure, Hub, Inventory, Metrics, ReadinessLayer, State, ToolCall,
    client::RmcpConnector, supervise::Peers,
};
use mcp_readiness_fixtures::call::{failure, refusal};
use mcp_readiness_fixtures::configure::http_fixture;
use mcp_readiness_fixtures::process::signal;
use mcp_readiness_fixtures::{Scratch, fixture, text};
use tokio::time::Instant;
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

const TOKEN: &str = "adapter-right-token-71c3";

/// The fixture over stdio, connected the way a service does it itself.
async fn stdio_client() -> Result<RunningService<RoleClient, ()>, ClientInitializeError> {
    let transport = TokioChildProcess::new(tokio::process::Command::new(fixture()))
        .expect("start the stdio fixture");
    ().serve(transport).await
}

/// The HTTP fixture on `port`, with `token` as the bearer token.
async fn http_client(
    port: u16,
    token: &str,
) -> Result<RunningService<RoleClient, ()>, ClientInitializeError> {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://127.0.0.1:{port}/mcp"))
            .auth_header(token);
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
}

/// How long until `done` holds, polling every 10 ms; fails past `limit`.
async fn within(limit: Duration, what: &str, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what} not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    start.elapsed()
}

fn pid_of(result: &mcp_readiness::rmcp::model::CallToolResult) -> u32 {
    text(result).trim().parse().expect("the fixture's pid")
}

/// Peers reporting to `metrics`, with the stdio fixture connected as `files`.
async fn peers_with_files(metrics: &Metrics) -> Peers {
    let peers = Peers::with_events(metrics.clone());
    let files = stdio_client().await.unwrap();
    peers.insert("files", files).await.unwrap();
    peers
}

/// `inner` behind the readiness layer over `peers`, counting into `metrics`.
fn behind_layer<S>(
    peers: &Peers,
    metrics: &Metrics,
    inner: S,
) -> <ReadinessLayer as tower::Layer<S>>::Service {
    let layer = ReadinessLayer::builder(peers.clone()).metrics(metrics.clone());
    tower::Layer::layer(&layer.build(), inner)
}

/// `exposition` has the line `series` (or any line containing it).
fn assert_series(exposition: &str, series: &str) {
    assert!(exposition.contains(series), "no {series}:\n{exposition}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_server_is_absent_within_a_second_and_its_calls_are_refused_not_sent() {
    let metrics = Metrics::new();
    let peers = Peers::with_events(metrics.clone());
    peers.connecting("files");
    let running = stdio_client().await.expect("the handshake");
    assert!(peers.insert("files", running).await.expect("tools listed") > 5);
    let tools = behind_layer(&peers, &metrics, peers.clone());

    let pid = pid_of(
        &tools
            .clone()
            .oneshot(ToolCall::new("mcp__files__pid"))
            .await
            .unwrap(),
    );
    signal(pid, "KILL");
    let noticed = within(Duration::from_secs(1), "the drop noticed", || {
        peers.state("files") == Some(State::Absent)
    })
    .await;
    eprintln!("drop noticed after {noticed:?}");

    // The ready cache entry of `pid` was made before the drop: the change feed retires it.
    for _ in 0..3 {
        let refused = refusal(&tools, "mcp__files__pid").await;
        assert_eq!(
            (refused.state(), refused.action()),
            (State::Absent, Action::AddConnection)
        );
        assert!(refused.to_string().contains("lost"), "{refused}");
    }
    let exposition = metrics.render();
    assert_series(
        &exposition,
        r#"mcp_readiness_server_state{server="files",state="absent"} 1"#,
    );
    assert_series(
        &exposition,
        r#"mcp_readiness_tool_calls_total{outcome="not_ready",server="files",tool="pid"} 3"#,
    );
    assert!(
        !exposition.contains(r#"outcome="transport_error""#),
        "{exposition}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_answering_401_is_unauthenticated_and_refused_with_reauthorize() {
    let scratch = Scratch::new("adapter-401");
    let (_http, port) = http_fixture(&scratch, TOKEN).await;
    let peers = Peers::new();
    peers.connecting("github");
    let error = http_client(port, "a-wrong-token").await.expect_err("a 401");
    peers.failed("github", error);
    assert_eq!(peers.state("github"), Some(State::Unauthenticated));

    let tools = ServiceBuilder::new()
        .layer(ReadinessLayer::new(peers.clone()))
        .service(peers.clone());
    let error = failure(&tools, "mcp__github__echo").await;
    let failure = CallFailure::of(&error);
    assert_eq!(failure.outcome(), CallOutcome::NotReady);
    assert_eq!(failure.action(), Some(Action::Reauthorize));
    let waited = failure.not_ready().expect("refused by the layer").waited();
    assert!(
        waited < Duration::from_millis(100),
        "no waiting on a 401: {waited:?}"
    );
    let reason = peers.servers()[0].reason.clone().unwrap_or_default();
    assert!(!reason.contains("a-wrong-token"), "{reason}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_rpc_error_is_a_tool_error_through_peers_and_through_a_bare_peer() {
    let metrics = Metrics::new();
    let peers = peers_with_files(&metrics).await;
    let through_peers = behind_layer(&peers, &metrics, peers.clone());
    let error = failure(&through_peers, "mcp__files__json_rpc_error").await;
    assert_eq!(CallFailure::of(&error).outcome(), CallOutcome::ToolError);
    assert_eq!(CallFailure::of(&error).state(), None, "the server is fine");
    assert_eq!(peers.state("files"), Some(State::Ready));

    // Any inner service: a service's own code calling the peer, returning rmcp's ServiceError.
    let peer = peers.peer("files").expect("the live peer");
    let bare = tower::service_fn(move |call: ToolCall| {
        let peer = peer.clone();
        async move {
            let params =
                mcp_readiness::rmcp::model::CallToolRequestParams::new(call.name.tool().to_owned());
            peer.call_tool(params).await.map_err(BoxError::from)
        }
    });
    let metrics_bare = Metrics::new();
    let through_bare = behind_layer(&peers, &metrics_bare, bare);
    let error = failure(&through_bare, "mcp__files__json_rpc_error").await;
    assert_eq!(CallFailure::of(&error).outcome(), CallOutcome::ToolError);
    for exposition in [metrics.render(), metrics_bare.render()] {
        assert_series(
            &exposition,
            r#"mcp_readiness_tool_calls_total{outcome="tool_error",server="files",tool="json_rpc_error"} 1"#,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_state_and_the_status_page_show_every_server_the_service_connected() {
    let scratch = Scratch::new("adapter-fleet");
    let (_http, port) = http_fixture(&scratch, TOKEN).await;
    let metrics = Metrics::new();
    let peers = peers_with_files(&metrics).await;
    peers.set_network_transport("files", "pipe");
    peers
        .insert("web", http_client(port, TOKEN).await.unwrap())
        .await
        .unwrap();
    peers.failed("github", http_client(port, "wrong").await.unwrap_err());
    peers.connecting("search");

    let exposition = metrics.render();
    let page = mcp_readiness::exporter::status_page(&metrics);
    for (server, state) in [
        ("files", "ready"),
        ("web", "ready"),
        ("github", "unauthenticated"),
        ("search", "connecting"),
    ] {
        assert!(
            exposition.contains(&format!(
                r#"mcp_readiness_server_state{{server="{server}",state="{state}"}} 1"#
            )),
            "{server} {state}:\n{exposition}"
        );
        mcp_readiness_fixtures::exposition::assert_status_row(&page, server, state);
    }
    assert_series(
        &exposition,
        r#"mcp_readiness_connects_total{result="unauthorized",server="github"} 1"#,
    );
    assert_series(
        &exposition,
        r#"mcp_readiness_server_tools{server="files"} 13"#,
    );
    assert!(peers.remove("search"));
    assert!(!metrics.render().contains(r#"server="search""#));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_connection_with_a_connector_is_remade_by_the_hub_with_the_services_handler() {
    let hub = Hub::new(vec![], HubOptions::default()).unwrap();
    let reconnect = RmcpConnector::new("files", "pipe", |_events| async {
        let transport = TokioChildProcess::new(tokio::process::Command::new(fixture()))?;
        Ok::<_, BoxError>(().serve(transport).await?)
    });
    hub.attach_with("files", stdio_client().await.unwrap(), Arc::new(reconnect))
        .unwrap();
    within(Duration::from_secs(10), "ready", || {
        hub.state("files") == Some(State::Ready)
    })
    .await;
    let first = pid_of(&hub.call(ToolCall::new("mcp__files__pid")).await.unwrap());
    signal(first, "KILL");
    // Dropped connections are re-made in the background by default, so the drop shows as a
    // state other than ready or, already, as the next generation.
    within(Duration::from_secs(1), "the drop noticed", || {
        hub.state("files") != Some(State::Ready) || hub.generation("files") > Some(1)
    })
    .await;
    // The next use (or the background reconnect) re-makes it through the connector.
    let second = pid_of(&hub.call(ToolCall::new("mcp__files__pid")).await.unwrap());
    assert_ne!(first, second);
    assert_eq!(hub.generation("files"), Some(2));
    assert!(
        hub.snapshot()
            .await
            .ready_tools
            .contains("mcp__files__echo")
    );
    hub.shutdown().await;
}
