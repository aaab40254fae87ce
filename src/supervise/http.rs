//! The streamable-HTTP connector.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use http::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::classify::{classify_init_error, truncate};
use super::connector::{AfterConnect, ConnectError, Connector, Session, SessionEvents, run_hook};
use super::error::Human;
use super::quiet::Quiet;
use super::rmcp_session::{RmcpSession, SupervisorClient};
use super::spec_error::SpecError;
use crate::secret::{Secret, redact};
use crate::state::ConnectResult;

/// Connects to a streamable-HTTP MCP endpoint with the configured headers (e.g. a bearer token).
///
/// A 401 with a `WWW-Authenticate` challenge, or a 403 insufficient scope, is `unauthorized`;
/// nothing listening is `refused`; no completed handshake within the connect timeout is `timeout`.
pub struct HttpConnector {
    server: Arc<str>,
    url: Secret,
    headers: HashMap<HeaderName, HeaderValue>,
    secrets: Vec<Secret>,
    connect_timeout: Duration,
    after_connect: Option<AfterConnect>,
}

impl std::fmt::Debug for HttpConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpConnector")
            .field("server", &self.server)
            .field("url", &redact(self.url.expose(), &[]))
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

impl HttpConnector {
    /// A connector for `url` with `headers`. Fails on a URL that is not `http(s)://` or a header
    /// that is not valid HTTP; the error never repeats the URL's credentials or a header value.
    pub fn new(
        server: impl Into<Arc<str>>,
        url: Secret,
        headers: &BTreeMap<String, Secret>,
    ) -> Result<Self, SpecError> {
        let server = server.into();
        let scheme = url
            .expose()
            .split_once("://")
            .map(|(scheme, _)| scheme.to_ascii_lowercase());
        if !matches!(scheme.as_deref(), Some("http" | "https")) {
            return Err(SpecError::UrlScheme {
                server,
                scheme: scheme.map(|s| truncate(s, 20)).unwrap_or_default(),
            });
        }
        let mut map = HashMap::new();
        for (name, value) in headers {
            // rmcp sets these itself and refuses them as custom headers.
            if ["accept", "mcp-session-id", "last-event-id"]
                .contains(&name.to_ascii_lowercase().as_str())
            {
                return Err(SpecError::Header {
                    server: server.clone(),
                    header: truncate(name.clone(), 40),
                });
            }
            let header_name =
                HeaderName::try_from(name.as_str()).map_err(|_| SpecError::Header {
                    server: server.clone(),
                    header: truncate(name.clone(), 40),
                })?;
            let mut header_value =
                HeaderValue::try_from(value.expose()).map_err(|_| SpecError::Header {
                    server: server.clone(),
                    header: truncate(name.clone(), 40),
                })?;
            header_value.set_sensitive(true);
            map.insert(header_name, header_value);
        }
        let mut secrets: Vec<Secret> = headers.values().cloned().collect();
        secrets.push(url.clone());
        Ok(HttpConnector {
            server,
            url,
            headers: map,
            secrets,
            connect_timeout: Duration::from_secs(30),
            after_connect: None,
        })
    }

    /// The handshake timeout (TCP connect to `initialize` answered). Default 30 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The hook that re-provisions per-connection state on every fresh connection.
    pub fn after_connect(mut self, hook: Option<AfterConnect>) -> Self {
        self.after_connect = hook;
        self
    }

    async fn open(&self, events: SessionEvents) -> Result<Arc<dyn Session>, ConnectError> {
        let server = &self.server;
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.expose().to_owned())
            .custom_headers(self.headers.clone());
        let transport = StreamableHttpClientTransport::from_config(config);
        let client = SupervisorClient::new(events);
        match tokio::time::timeout(
            self.connect_timeout,
            client.serve(Quiet::new(transport, server.clone())),
        )
        .await
        {
            Ok(Ok(running)) => Ok(Arc::new(RmcpSession::start(running, None))),
            Err(_elapsed) => Err(ConnectError::new(
                ConnectResult::Timeout,
                format!(
                    "server `{server}` did not complete the MCP handshake within {}; check that \
                     the endpoint is up, or raise the connect timeout",
                    Human(self.connect_timeout)
                ),
            )),
            Ok(Err(e)) => {
                let result = classify_init_error(&e, 0);
                let next = match result {
                    ConnectResult::Unauthorized => {
                        "the credentials were rejected; re-authorize and update its headers"
                    }
                    ConnectResult::Refused => "check that the server is running and reachable",
                    _ => "check that the URL is an MCP streamable-HTTP endpoint",
                };
                let detail = match e.auth_challenge() {
                    Some(challenge) => format!("HTTP 401/403, challenge: {challenge}"),
                    None => {
                        std::iter::successors(Some(&e as &(dyn std::error::Error + 'static)), |e| {
                            e.source()
                        })
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(": ")
                    }
                };
                let detail = truncate(redact(&detail, &self.secrets), 300);
                Err(ConnectError::new(
                    result,
                    format!("server `{server}`: connecting failed ({detail}); {next}"),
                ))
            }
        }
    }
}

impl Connector for HttpConnector {
    fn connect(
        &self,
        events: SessionEvents,
    ) -> BoxFuture<'_, Result<Arc<dyn Session>, ConnectError>> {
        Box::pin(self.open(events))
    }

    fn after_connect(&self, session: Arc<dyn Session>) -> BoxFuture<'_, Result<(), ConnectError>> {
        run_hook(self.after_connect.as_ref(), session)
    }

    fn network_transport(&self) -> &'static str {
        "tcp"
    }
}
