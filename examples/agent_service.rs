//! An existing axum + tokio agent service that gains the readiness layer.
//!
//! Before: the service called its MCP servers directly and every "tool not found" looked the
//! same. After, in four places:
//!
//! 1. a [`Hub`] supervises the connections (here a stdio server and a streamable-HTTP server);
//! 2. `ReadinessLayer` sits in the service's `ServiceBuilder`, with a timeout and a concurrency
//!    limit around it, so every call is resolved at the point of use;
//! 3. a call that is not ready becomes `503` with the state and the action (not a `500`);
//! 4. `exporter::router` adds `/metrics` and `/status` beside the service's own routes.
//!
//! ```sh
//! cargo run -p mcp-readiness-e2e --example agent_service   # serves http://127.0.0.1:3000
//! curl http://127.0.0.1:3000/tools/mcp__notes__search_notes       # 200: ran
//! curl http://127.0.0.1:3000/tools/mcp__crm__update_contact       # 503: absent -> add_connection
//! curl http://127.0.0.1:3000/metrics
//! ```
//!
//! `--self-test` makes those requests itself against a free port and exits 0 when every answer is
//! as described (the test command runs it that way).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use mcp_readiness::Metrics;
use mcp_readiness::exporter;
use mcp_readiness::secret::Secret;
use mcp_readiness::{Budget, Hub, HubOptions, ServerSpec, ToolCall, TransportSpec};
use mcp_readiness::{NotReady, ReadinessLayer};
use mcp_readiness_cli::demo::DemoHttpServers;
use rmcp::model::{CallToolResult, ContentBlock};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, ServiceBuilder, ServiceExt};

/// The argument with which this example runs as the `notes` stdio MCP server.
const SERVE_NOTES: &str = "--serve-notes";
/// The bearer token of the in-process HTTP MCP server `wiki`.
const WIKI_TOKEN: &str = "example-wiki-token";

/// The service's MCP tools, as its handlers see them.
type Tools = BoxCloneSyncService<ToolCall, CallToolResult, BoxError>;

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(SERVE_NOTES) {
        let notes = mcp_readiness_cli::demo::server("notes").expect("the demo has `notes`");
        return match notes.serve_stdio().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    let self_test = args.iter().any(|a| a == "--self-test");
    let listen: SocketAddr = if self_test {
        "127.0.0.1:0".parse().unwrap()
    } else {
        "127.0.0.1:3000".parse().unwrap()
    };

    // The MCP servers this service uses: `notes` over stdio (this program, started again), and
    // `wiki` over streamable HTTP (in-process here; any URL in real life).
    let wiki = DemoHttpServers::start("127.0.0.1:0".parse().unwrap(), &[("wiki", WIKI_TOKEN)])
        .await
        .expect("start the wiki MCP server");
    let me = std::env::current_exe().expect("this example's path");
    let servers = vec![
        ServerSpec {
            name: "notes".into(),
            transport: TransportSpec::Stdio {
                command: me.display().to_string(),
                args: vec![SERVE_NOTES.into()],
                env: Default::default(),
                cwd: None,
            },
        },
        ServerSpec {
            name: "wiki".into(),
            transport: TransportSpec::Http {
                url: Secret::new(wiki.url("wiki")),
                headers: [(
                    "Authorization".to_owned(),
                    Secret::new(format!("Bearer {WIKI_TOKEN}")),
                )]
                .into(),
                oauth: None,
            },
        },
    ];

    // (1) + (2): supervised connections, and the layer in the service's own stack.
    let metrics = Metrics::new();
    let hub = Hub::new(servers, HubOptions::builder().event_sink(metrics.clone()))
        .expect("a valid fleet");
    hub.connect_all();
    let readiness = ReadinessLayer::builder(hub.clone())
        .budget(Budget::try_new(Duration::from_secs(10), Duration::from_secs(1)).unwrap())
        .metrics(metrics.clone())
        .build();
    let tools: Tools = BoxCloneSyncService::new(
        ServiceBuilder::new()
            .buffer(64) // cloneable and shareable across handlers
            .concurrency_limit(16) // at most 16 tool calls in flight
            .timeout(Duration::from_secs(30)) // a whole call, the readiness wait included
            .layer(readiness)
            .service(hub.clone()),
    );

    // (4): the service's own routes, plus /metrics and /status.
    let app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/tools/{name}", get(call_tool))
        .with_state(tools)
        .merge(exporter::router(metrics));
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .expect("bind the service");
    let addr = listener.local_addr().expect("bound address");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    println!(
        "agent service on http://{addr} (try /tools/mcp__notes__search_notes, /metrics, /status)"
    );

    let code = if self_test {
        match self_test_against(addr).await {
            Ok(()) => {
                println!("self-test passed");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("self-test failed: {err}");
                ExitCode::FAILURE
            }
        }
    } else {
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    };
    server.abort();
    hub.shutdown().await;
    code
}

/// (3): a tool call from a request. Not ready is `503` with the state and the action, so the
/// caller (or its logs) knows whether to wait, re-authorize or add the connection.
async fn call_tool(State(tools): State<Tools>, Path(name): Path<String>) -> (StatusCode, String) {
    match tools.oneshot(ToolCall::new(name.as_str())).await {
        Ok(result) => (StatusCode::OK, format!("{}\n", text(&result))),
        Err(err) => match err.downcast_ref::<NotReady>() {
            Some(not_ready) => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "{} -> {}: {not_ready}\n",
                    not_ready.state(),
                    not_ready.action()
                ),
            ),
            None if err.is::<tower::timeout::error::Elapsed>() => {
                (StatusCode::GATEWAY_TIMEOUT, format!("{name} timed out\n"))
            }
            None => (StatusCode::BAD_GATEWAY, format!("{name} failed: {err}\n")),
        },
    }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

/// The requests of the module docs, with what each must answer.
async fn self_test_against(addr: SocketAddr) -> Result<(), String> {
    let expect = [
        (
            "/tools/mcp__notes__search_notes",
            "200",
            "notes answered search_notes",
        ),
        ("/tools/mcp__wiki__search", "200", "wiki answered search"),
        (
            "/tools/mcp__crm__update_contact",
            "503",
            "absent -> add_connection",
        ),
        (
            "/tools/mcp__notes__export_pdf",
            "503",
            "does not offer `export_pdf`",
        ),
        (
            "/metrics",
            "200",
            "mcp_readiness_tool_calls_total{outcome=\"ok\",server=\"wiki\",tool=\"search\"} 1",
        ),
        (
            "/status",
            "200",
            "<tr data-server=\"notes\" data-state=\"ready\">",
        ),
        ("/healthz", "200", "ok"),
    ];
    for (path, status, needle) in expect {
        let (head, body) = get_raw(addr, path)
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
        if !head.contains(&format!(" {status} ")) || !body.contains(needle) {
            return Err(format!(
                "GET {path}: wanted {status} with {needle:?}, got {head:?}:\n{body}"
            ));
        }
        println!("GET {path} -> {status}");
    }
    Ok(())
}

/// A minimal HTTP/1.0 GET (this example has no HTTP client dependency).
async fn get_raw(addr: SocketAddr, path: &str) -> std::io::Result<(String, String)> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await?;
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut raw))
        .await
        .map_err(|_| std::io::Error::other("no answer within 30 s"))??;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    Ok((
        head.lines().next().unwrap_or("").to_owned(),
        body.to_owned(),
    ))
}
