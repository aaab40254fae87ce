//! `/probe` against real rmcp servers over streamable HTTP on 127.0.0.1: what each server state
//! reads as, the allow-list (a refused target is never connected to), credential scoping, the
//! protocol generations a module offers, and the bound on probes in flight.

mod admission;
mod allow_list;
mod debug;
mod reasons;
mod states;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use mcp_readiness::Metrics;
use mcp_readiness::probe::{ProbeConfig, ProbeModule, Prober, TargetPattern};
use mcp_readiness_fixtures::mcp;
use tokio::net::TcpListener;

/// A running [`mcp::PROBE`] server: its `/mcp` URL, the TCP connections it accepted, and the `Authorization`
/// header of every request it received (`""` when there was none).
struct McpServer {
    url: String,
    accepted: Arc<AtomicUsize>,
    authorizations: Arc<Mutex<Vec<String>>>,
}

impl McpServer {
    /// Serves the fixture on 127.0.0.1; with `token`, requests without `Bearer <token>` get a 401
    /// with a challenge.
    async fn start(token: Option<&str>) -> McpServer {
        let service = mcp::http_service(mcp::PROBE);
        let expected = token.map(|t| format!("Bearer {t}"));
        let authorizations = Arc::new(Mutex::new(Vec::new()));
        let seen = authorizations.clone();
        let app =
            axum::Router::new()
                .nest_service("/mcp", service)
                .layer(axum::middleware::from_fn(
                    move |request: Request<Body>, next: axum::middleware::Next| {
                        let expected = expected.clone();
                        let seen = seen.clone();
                        async move {
                            let given = header(request.headers(), "authorization");
                            seen.lock().unwrap().push(given.clone());
                            if expected.as_ref().is_some_and(|e| *e != given) {
                                return Response::builder()
                                    .status(StatusCode::UNAUTHORIZED)
                                    .header("www-authenticate", "Bearer realm=\"fixture\"")
                                    .body(Body::empty())
                                    .unwrap();
                            }
                            next.run(request).await
                        }
                    },
                ));
        let (addr, accepted, listener) = counting_listener().await;
        tokio::spawn(serve_counted(listener, accepted.clone(), app));
        McpServer {
            url: format!("http://{addr}/mcp"),
            accepted,
            authorizations,
        }
    }

    fn authorizations(&self) -> Vec<String> {
        self.authorizations.lock().unwrap().clone()
    }
}

/// A listener on a free loopback port and its accept counter.
async fn counting_listener() -> (SocketAddr, Arc<AtomicUsize>, TcpListener) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    (
        listener.local_addr().unwrap(),
        Arc::new(AtomicUsize::new(0)),
        listener,
    )
}

/// Serves `app` on `listener`, counting each accepted connection.
async fn serve_counted(listener: TcpListener, accepted: Arc<AtomicUsize>, app: axum::Router) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        accepted.fetch_add(1, Ordering::SeqCst);
        let app = app.clone();
        tokio::spawn(async move {
            let service = hyper_util::service::TowerToHyperService::new(app);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A listener that accepts connections, counts them, and never answers: a handshake against it
/// is still running at any deadline. The connections are held until the counter's owner drops.
async fn silent_server() -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (addr, accepted, listener) = counting_listener().await;
    let open = Arc::new(AtomicUsize::new(0));
    let (count, live) = (accepted.clone(), open.clone());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let live = live.clone();
            live.fetch_add(1, Ordering::SeqCst);
            held.push(tokio::spawn(async move {
                // Read until the client goes away, answer nothing.
                let mut sink = vec![0u8; 4096];
                while let Ok(n) = tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
                live.fetch_sub(1, Ordering::SeqCst);
            }));
        }
    });
    (format!("http://{addr}/mcp"), accepted, open)
}

/// The value of `name` in `headers`, `""` when there is none.
fn header(headers: &axum::http::HeaderMap, name: &str) -> String {
    let value = headers.get(name).and_then(|v| v.to_str().ok());
    value.unwrap_or("").to_owned()
}

/// `GET /probe?<query>` on a [`probe_endpoint`]: status, content type and body.
async fn get_probe(addr: SocketAddr, query: &str) -> (u16, String, String) {
    let url = format!("http://{addr}/probe?{query}");
    let response = reqwest::get(url).await.unwrap();
    let content_type = header(response.headers(), "content-type");
    (
        response.status().as_u16(),
        content_type,
        response.text().await.unwrap(),
    )
}

/// `url` as a query value.
fn encode(url: &str) -> String {
    url.replace(':', "%3A").replace('/', "%2F")
}

/// `http://127.0.0.1:<port>/mcp` patterns for any port.
fn loopback() -> Vec<TargetPattern> {
    vec!["http://127.0.0.1:*/mcp".parse().unwrap()]
}

/// `/metrics` and `/probe` on a free loopback port, probing with `prober`.
async fn probe_endpoint(prober: Prober) -> mcp_readiness::exporter::MetricsServer {
    let addr = "127.0.0.1:0".parse().unwrap();
    let served = mcp_readiness::exporter::serve_with_probe(Metrics::new(), prober, addr);
    served.await.unwrap()
}

fn prober(config: ProbeConfig) -> Prober {
    Prober::new(config).unwrap()
}

/// A module sending `Authorization: Bearer <token>` to `targets` only.
fn bearer_module(targets: &[&str], token: &str) -> ProbeModule {
    let mut module =
        ProbeModule::without_credentials(targets.iter().map(|t| t.parse().unwrap()).collect());
    module.headers.insert(
        "Authorization".into(),
        mcp_readiness::secret::Secret::new(format!("Bearer {token}")),
    );
    module
}

/// The value of the sample line `series` in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}
