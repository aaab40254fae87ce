//! A controllable MCP server for the `supervise` tests, built with rmcp's server features.
//!
//! Run over stdio by default, or `--http` to serve streamable HTTP on `127.0.0.1:0` (it prints
//! `PORT <n>` on stdout). Behaviour is set through environment variables:
//!
//! | variable | effect |
//! |---|---|
//! | `FIXTURE_LOG` | append one line per event (`start <pid>`, `add_account <pid>`, `call <tool>`) to this file |
//! | `FIXTURE_STARTUP_DELAY_MS` | sleep this long before answering anything |
//! | `FIXTURE_CRASH_ON_CALL` | exit(3) in the middle of the Nth `tools/call` of this process |
//! | `FIXTURE_CRASH_MARKER` | `list_emails` exits(3) mid-call when this file exists (and removes it first) |
//! | `FIXTURE_TOKEN` | HTTP only: require `Authorization: Bearer <token>` (401 with `WWW-Authenticate` otherwise) |
//! | `FIXTURE_GARBAGE` | write lines that are not JSON-RPC to stdout and never speak MCP |
//! | `FIXTURE_GRANDCHILD` | start a `sleep 600` grandchild (logged as `grandchild <pid>`) |
//! | `FIXTURE_STDERR_FLOOD_MB` | write this many MiB of `x` to stderr without a newline before serving |
//! | `FIXTURE_TOOLS_CHANGED_AFTER_MS` | send `notifications/tools/list_changed` this long after start-up |
//! | `FIXTURE_EXIT_AFTER_MS` | stdio only: exit(0) this long after each handshake (a crash loop; logged as `exit <pid>`) |
//! | `FIXTURE_TOOL_PAGES` | `loop`: `tools/list` pages whose cursor leads back to the first page; `endless`: a fresh cursor on every page, forever; `wide`: 4,000 tools a page, forever |
//! | `FIXTURE_NOTIFY_FLOOD` | after the handshake, send notifications as fast as it can: `tools` (`tools/list_changed`) or `log` (`notifications/message` with a 1 KiB payload) |
//!
//!
//! It speaks the protocol versions before 2026-07-28 only: `server/discover` is answered "method
//! not found", as a server built before 2026-07-28 answers it, so clients fall back to
//! `initialize`.
//!
//! Tools: `add_account {account}`, `list_emails`, `echo_meta`, `echo {text}`, `fail`,
//! `json_rpc_error`, `echo_token_error`, `revoke_token`, `hang`, `sleep {ms}`, `pid`,
//! `add_tool` (adds tool `extra` and sends `tools/list_changed`), `exit`.
#![allow(missing_docs)]

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    ErrorCode, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};

static CALLS: AtomicUsize = AtomicUsize::new(0);
static REVOKED: AtomicBool = AtomicBool::new(false);
static EXTRA_TOOL: AtomicBool = AtomicBool::new(false);

fn log(line: &str) {
    if let Ok(path) = std::env::var("FIXTURE_LOG")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = writeln!(f, "{line}");
    }
}

fn env_ms(name: &str) -> Option<Duration> {
    std::env::var(name)
        .ok()?
        .parse()
        .ok()
        .map(Duration::from_millis)
}

#[derive(Clone, Default)]
struct Fixture {
    /// Per-connection state: the account store that must be provisioned before reads work.
    accounts: Arc<Mutex<Vec<String>>>,
}

fn schema() -> Arc<serde_json::Map<String, Value>> {
    let Value::Object(map) = json!({"type": "object"}) else {
        unreachable!()
    };
    Arc::new(map)
}

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "Method not found: server/discover",
            None,
        ))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Ok(mode) = std::env::var("FIXTURE_TOOL_PAGES") {
            return Ok(misbehaving_pages(&mode, request.and_then(|r| r.cursor)));
        }
        let mut names = vec![
            "add_account",
            "list_emails",
            "echo_meta",
            "echo",
            "fail",
            "json_rpc_error",
            "echo_token_error",
            "revoke_token",
            "hang",
            "sleep",
            "pid",
            "add_tool",
            "exit",
        ];
        if EXTRA_TOOL.load(Ordering::SeqCst) {
            names.push("extra");
        }
        let tools = names
            .into_iter()
            .map(|n| Tool::new(n, n, schema()))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        log(&format!("call {}", request.name));
        // The streamable-HTTP session this call came on (sessions before 2026-07-28).
        if let Some(id) = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|id| id.to_str().ok())
        {
            log(&format!("session {id}"));
        }
        if std::env::var("FIXTURE_CRASH_ON_CALL")
            .ok()
            .and_then(|v| v.parse().ok())
            == Some(n)
        {
            log("crash");
            std::process::exit(3);
        }
        let args = request.arguments.clone().unwrap_or_default();
        let result = match &*request.name {
            "add_account" => {
                let account = args
                    .get("account")
                    .and_then(Value::as_str)
                    .unwrap_or("default");
                self.accounts.lock().unwrap().push(account.to_owned());
                log(&format!("add_account {}", std::process::id()));
                text("ok")
            }
            "list_emails" => {
                if let Ok(marker) = std::env::var("FIXTURE_CRASH_MARKER")
                    && std::fs::remove_file(&marker).is_ok()
                {
                    log("crash");
                    std::process::exit(3);
                }
                let accounts = self.accounts.lock().unwrap().clone();
                let emails: Vec<Value> = accounts
                    .iter()
                    .map(|a| json!({"account": a, "subject": "urgent"}))
                    .collect();
                text(json!({ "emails": emails }).to_string())
            }
            "echo_meta" => text(serde_json::to_string(&context.meta).unwrap_or_default()),
            "echo" => text(
                args.get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            ),
            "fail" => CallToolResult::error(vec![ContentBlock::text("the tool failed")]),
            "json_rpc_error" => return Err(ErrorData::invalid_params("bad arguments", None)),
            "echo_token_error" => {
                let token = std::env::var("FIXTURE_TOKEN").unwrap_or_else(|_| "none".into());
                return Err(ErrorData::internal_error(
                    format!("token Bearer {token} was rejected: {token}"),
                    None,
                ));
            }
            "revoke_token" => {
                REVOKED.store(true, Ordering::SeqCst);
                text("revoked")
            }
            "hang" => {
                std::future::pending::<()>().await;
                text("never")
            }
            "sleep" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(100);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                text(format!("slept {ms}"))
            }
            "pid" => text(std::process::id().to_string()),
            "add_tool" => {
                EXTRA_TOOL.store(true, Ordering::SeqCst);
                let peer = context.peer.clone();
                tokio::spawn(async move {
                    let _ = peer.notify_tool_list_changed().await;
                });
                text("added")
            }
            "exit" => {
                tokio::spawn(async {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    std::process::exit(0);
                });
                text("bye")
            }
            "extra" => text("extra"),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }
}

/// One page of a `tools/list` that never ends (see `FIXTURE_TOOL_PAGES`).
fn misbehaving_pages(mode: &str, cursor: Option<String>) -> ListToolsResult {
    let page: u64 = cursor
        .as_deref()
        .and_then(|c| c.strip_prefix('p'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    log(&format!("tools/list page {page}"));
    let (tools, next) = match mode {
        // Page 0 -> p1 -> p0 -> p1 ... : the cursor of page 1 leads back to the first page.
        "loop" => (1, if page == 0 { 1 } else { 0 }),
        "wide" => (4000, page + 1),
        _ => (1, page + 1),
    };
    let tools = (0..tools)
        .map(|i| Tool::new(format!("t{page}_{i}"), "a tool", schema()))
        .collect();
    let mut result = ListToolsResult::with_all_items(tools);
    result.next_cursor = Some(format!("p{next}"));
    result
}

/// Sends notifications as fast as the pipe takes them (see `FIXTURE_NOTIFY_FLOOD`).
#[allow(deprecated)]
async fn flood(peer: rmcp::Peer<RoleServer>, kind: String) {
    let payload = "x".repeat(1024);
    for sent in 1u64.. {
        if sent % 10_000 == 0 {
            log(&format!("flood {sent}"));
        }
        let sent = match kind.as_str() {
            "tools" => peer.notify_tool_list_changed().await,
            _ => {
                peer.notify_logging_message(rmcp::model::LoggingMessageNotificationParam::new(
                    rmcp::model::LoggingLevel::Info,
                    json!(payload),
                ))
                .await
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

async fn auth(request: Request<Body>, next: axum::middleware::Next) -> Response<Body> {
    if let Ok(token) = std::env::var("FIXTURE_TOKEN") {
        let expected = format!("Bearer {token}");
        let given = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        if REVOKED.load(Ordering::SeqCst) || given != Some(expected.as_str()) {
            return Response::builder()
                .status(StatusCode::UNAUTHORIZED)
                .header(
                    "www-authenticate",
                    "Bearer realm=\"fixture\", error=\"invalid_token\"",
                )
                .body(Body::empty())
                .unwrap();
        }
    }
    next.run(request).await
}

#[tokio::main]
async fn main() {
    log(&format!("start {}", std::process::id()));
    if std::env::var_os("FIXTURE_GRANDCHILD").is_some()
        && let Ok(child) = std::process::Command::new("sleep").arg("600").spawn()
    {
        log(&format!("grandchild {}", child.id()));
    }
    if let Some(delay) = env_ms("FIXTURE_STARTUP_DELAY_MS") {
        tokio::time::sleep(delay).await;
    }
    if let Some(mb) = std::env::var("FIXTURE_STDERR_FLOOD_MB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        let chunk = vec![b'x'; 1 << 20];
        let mut err = std::io::stderr().lock();
        for _ in 0..mb {
            if err.write_all(&chunk).is_err() {
                break;
            }
        }
        let _ = err.flush();
        log("flooded");
    }
    if std::env::var_os("FIXTURE_GARBAGE").is_some() {
        let mut out = std::io::stdout();
        for i in 0..3 {
            let _ = writeln!(out, "Starting server... step {i} (this is not JSON-RPC)");
        }
        let _ = out.flush();
        let mut sink = Vec::new();
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink).await;
        return;
    }
    let http = std::env::args().any(|a| a == "--http");
    if http {
        let service: StreamableHttpService<Fixture, LocalSessionManager> =
            StreamableHttpService::new(
                || Ok(Fixture::default()),
                Default::default(),
                StreamableHttpServerConfig::default().with_sse_keep_alive(None),
            );
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(auth));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("PORT {}", listener.local_addr().unwrap().port());
        let _ = std::io::stdout().flush();
        axum::serve(listener, router).await.unwrap();
        return;
    }
    let server = Fixture::default();
    let running = match server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
    {
        Ok(running) => running,
        Err(e) => {
            eprintln!("fixture: handshake failed: {e}");
            return;
        }
    };
    if let Some(after) = env_ms("FIXTURE_TOOLS_CHANGED_AFTER_MS") {
        let peer = running.peer().clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            EXTRA_TOOL.store(true, Ordering::SeqCst);
            let _ = peer.notify_tool_list_changed().await;
        });
    }
    if let Some(after) = env_ms("FIXTURE_EXIT_AFTER_MS") {
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            log(&format!("exit {}", std::process::id()));
            std::process::exit(0);
        });
    }
    if let Ok(kind) = std::env::var("FIXTURE_NOTIFY_FLOOD") {
        tokio::spawn(flood(running.peer().clone(), kind));
    }
    eprintln!("fixture: serving on stdio");
    let _ = running.waiting().await;
}
