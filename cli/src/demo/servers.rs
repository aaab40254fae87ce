//! The demo's MCP servers: small, real rmcp servers that answer every tool they list.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode, header};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// One demo server: its name, the tools it offers, and how long it takes to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoServer {
    /// The server's name (the `<server>` of `mcp__<server>__<tool>`).
    pub name: &'static str,
    /// The tools it lists, with a one-line description each.
    pub tools: &'static [(&'static str, &'static str)],
    /// How long it takes before it answers the MCP handshake.
    pub startup_delay: Duration,
}

/// The demo's stdio servers, started as child processes (`mcp-readiness demo-server <name>`):
///
/// | server | behaves |
/// |---|---|
/// | `notes` | ready at once; offers `search_notes` and `read_note` but not `export_pdf` |
/// | `calendar` | ready after about six seconds |
/// | `warehouse` | takes ten minutes to start: still `connecting` when any budget ends |
pub const STDIO_SERVERS: [DemoServer; 3] = [
    DemoServer {
        name: "notes",
        tools: &[
            ("search_notes", "Search the team's notes"),
            ("read_note", "Read one note"),
        ],
        startup_delay: Duration::ZERO,
    },
    DemoServer {
        name: "calendar",
        tools: &[("list_events", "List today's events")],
        startup_delay: Duration::from_secs(6),
    },
    DemoServer {
        name: "warehouse",
        tools: &[("query", "Run a read-only SQL query")],
        startup_delay: Duration::from_secs(600),
    },
];

/// The streamable-HTTP servers of [`DemoHttpServers`], each at `/<name>/mcp` and demanding its own
/// bearer token.
pub const HTTP_SERVERS: [DemoServer; 2] = [
    DemoServer {
        name: "wiki",
        tools: &[("search", "Search the wiki")],
        startup_delay: Duration::ZERO,
    },
    DemoServer {
        name: "tickets",
        tools: &[("search_tickets", "Search open tickets")],
        startup_delay: Duration::ZERO,
    },
];

/// Looks up a demo server by name, stdio or HTTP (`server("notes")`; `None` for a name that is
/// not a demo server).
pub fn server(name: &str) -> Option<DemoServer> {
    STDIO_SERVERS
        .iter()
        .chain(HTTP_SERVERS.iter())
        .find(|s| s.name == name)
        .copied()
}

impl DemoServer {
    /// Serves this server over the process's stdin and stdout until the client hangs up. Waits
    /// [`DemoServer::startup_delay`] first, as a slow server would.
    pub async fn serve_stdio(self) -> Result<(), DemoServerError> {
        tokio::time::sleep(self.startup_delay).await;
        let running = Handler(self)
            .serve((tokio::io::stdin(), tokio::io::stdout()))
            .await
            .map_err(|e| DemoServerError(format!("the MCP handshake failed: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| DemoServerError(format!("the server stopped: {e}")))?;
        Ok(())
    }

    /// Serves this server over streamable HTTP at `http://<addr>/mcp` until `stop` resolves.
    /// It accepts connections at once but answers no request until [`DemoServer::startup_delay`]
    /// has passed since it started, as a server still starting up would (a client reads
    /// `connecting` meanwhile, whichever protocol generation it speaks); with `token`, every request must carry `Authorization: Bearer <token>` and is
    /// answered `401` with a `WWW-Authenticate` challenge otherwise (`unauthenticated`).
    /// `bound` is told the address once the listener is bound (port 0: any free port).
    pub async fn serve_http(
        self,
        addr: SocketAddr,
        token: Option<String>,
        bound: impl FnOnce(SocketAddr),
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), DemoServerError> {
        let ready_at = tokio::time::Instant::now() + self.startup_delay;
        let service: StreamableHttpService<Handler, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(Handler(self)),
                Default::default(),
                StreamableHttpServerConfig::default().with_sse_keep_alive(None),
            );
        let mut router =
            axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(
                    move |request: Request<Body>, next: axum::middleware::Next| async move {
                        tokio::time::sleep_until(ready_at).await;
                        next.run(request).await
                    },
                ));
        if let Some(token) = token {
            let expected: Option<Arc<str>> = Some(format!("Bearer {token}").into());
            router = router.layer(axum::middleware::from_fn(move |request, next| {
                require_bearer(expected.clone(), request, next)
            }));
        }
        let (listener, addr) = listen(addr).await?;
        bound(addr);
        axum::serve(listener, router)
            .with_graceful_shutdown(stop)
            .await
            .map_err(|e| DemoServerError(format!("the HTTP server stopped: {e}")))
    }

    /// The same server with another startup delay (`demo-server --delay`).
    pub fn with_startup_delay(mut self, delay: Duration) -> DemoServer {
        self.startup_delay = delay;
        self
    }
}

/// Why a demo server could not serve.
#[derive(Debug, thiserror::Error)]
#[error("demo server: {0}")]
pub struct DemoServerError(String);

#[derive(Clone)]
struct Handler(DemoServer);

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema: Arc<serde_json::Map<String, serde_json::Value>> = Arc::new(
            [("type".to_owned(), serde_json::Value::from("object"))]
                .into_iter()
                .collect(),
        );
        let tools = self
            .0
            .tools
            .iter()
            .map(|(name, description)| Tool::new(*name, *description, schema.clone()))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.0.tools.iter().any(|(name, _)| *name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("`{}` offers no tool `{}`", self.0.name, request.name),
                None,
            ));
        }
        let answer = format!(
            "{} answered {} ({} argument(s))",
            self.0.name,
            request.name,
            request.arguments.as_ref().map_or(0, |a| a.len())
        );
        Ok(CallToolResult::success(vec![ContentBlock::text(answer)]).into())
    }
}

/// The demo's streamable-HTTP MCP servers on one loopback listener: each of [`HTTP_SERVERS`] at
/// `/<name>/mcp`, answering only `Authorization: Bearer <token>` with the token given for it (and
/// `401` with a `WWW-Authenticate` challenge otherwise). Stops when dropped.
#[derive(Debug)]
pub struct DemoHttpServers {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

impl DemoHttpServers {
    /// Starts the servers on `addr` (port 0 for any free port). `tokens` gives each server's
    /// accepted token, by name; a server without one refuses every request.
    pub async fn start(
        addr: SocketAddr,
        tokens: &[(&str, &str)],
    ) -> Result<DemoHttpServers, DemoServerError> {
        let mut router = axum::Router::new();
        for server in HTTP_SERVERS {
            let service: StreamableHttpService<Handler, LocalSessionManager> =
                StreamableHttpService::new(
                    move || Ok(Handler(server)),
                    Default::default(),
                    StreamableHttpServerConfig::default().with_sse_keep_alive(None),
                );
            let expected: Option<Arc<str>> = tokens
                .iter()
                .find(|(name, _)| *name == server.name)
                .map(|(_, token)| format!("Bearer {token}").into());
            let guarded =
                axum::Router::new()
                    .nest_service("/mcp", service)
                    .layer(axum::middleware::from_fn(move |request, next| {
                        require_bearer(expected.clone(), request, next)
                    }));
            router = router.nest(&format!("/{}", server.name), guarded);
        }
        let (listener, addr) = listen(addr).await?;
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(DemoHttpServers { addr, _stop: stop })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL of the server `name`.
    pub fn url(&self, name: &str) -> String {
        format!("http://{}/{name}/mcp", self.addr)
    }
}

/// A listener on `addr`, and the address it is bound to (the port, when `addr` asked for any).
async fn listen(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), DemoServerError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| DemoServerError(format!("could not listen on {addr}: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| DemoServerError(format!("could not read the bound address: {e}")))?;
    Ok((listener, addr))
}

async fn require_bearer(
    expected: Option<Arc<str>>,
    request: Request<Body>,
    next: axum::middleware::Next,
) -> Response<Body> {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if expected.is_none() || given != expected.as_deref() {
        let mut response = Response::new(Body::from("the bearer token was rejected\n"));
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static(
                "Bearer realm=\"mcp-readiness-demo\", error=\"invalid_token\"",
            ),
        );
        return response;
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_demo_server_is_found_by_name_and_an_unknown_name_is_none() {
        let notes = super::server("notes").unwrap();
        assert!(notes.tools.iter().any(|(tool, _)| *tool == "search_notes"));
        assert!(super::server("nope").is_none());
    }
}
