//! The streamable-HTTP connector.

pub(crate) mod session_id;
pub(crate) mod stream_pacing;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use http::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::client::connector::{
    AfterConnect, ConnectError, Connector, Session, SessionEvents, run_hook,
};
use crate::client::credential_expiry::{CredentialState, bearer_expiry};
use crate::client::handshake;
use crate::client::handshake::generations::{ProtocolGenerations, handshake_offering};
use crate::client::http::session_id::SessionIdClient;
use crate::client::http::stream_pacing::StreamPacer;
use crate::client::reasons::chain::chain;
use crate::client::reasons::reason::{answered_status, explain};
use crate::client::reasons::rmcp_errors::{classify_init_error, truncate};
use crate::client::session::RmcpSession;
use crate::client::session::handler::{Answerer, SupervisorClient};
use crate::client::session::quiet::Quiet;
use crate::client::session::server_requests::ServerRequests;
use crate::client::session::session_id_slot::SessionIdSlot;
use crate::client::spec::error::SpecError;
use crate::client::transport::http_client;
use crate::client::transport::retry_after;
use crate::secret::{Secret, redact};
use crate::state::ConnectResult;
use crate::util::Human;

/// Connects to a streamable-HTTP MCP endpoint with the configured headers (e.g. a bearer token).
///
/// A 401, or a 403 with a `WWW-Authenticate` challenge (insufficient scope), is `unauthorized`
/// (a bare 403 is not); nothing listening is `refused`; no completed handshake within the connect
/// timeout is `timeout`; a 429 / 503 with `Retry-After` cools down for what the server asked.
pub struct HttpConnector {
    server: Arc<str>,
    url: Secret,
    headers: HashMap<HeaderName, HeaderValue>,
    secrets: Vec<Secret>,
    connect_timeout: Duration,
    generations: ProtocolGenerations,
    after_connect: Option<AfterConnect>,
    /// Who answers what the server asks during a call (none: an unattended run).
    server_requests: Option<Arc<dyn ServerRequests>>,
    /// What is known of the credentials' expiry (a static bearer JWT's `exp`, or the OAuth store).
    credentials: tokio::sync::watch::Sender<CredentialState>,
    #[cfg(feature = "oauth")]
    oauth: Option<Arc<crate::client::oauth::OAuthCredentials>>,
    /// What to do when the server rejects the credentials, where the one a configured server
    /// gets does not fit (a `/probe`: its credentials are a probe module's).
    credentials_hint: Option<String>,
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

/// Checks the scheme and host of `server`'s URL without ever echoing it (it may carry
/// credentials): `http://` or `https://`, a host, no spaces or line breaks.
pub(crate) fn check_url(server: &Arc<str>, url: &str) -> Result<(), SpecError> {
    let problem = |problem: String| SpecError::Url {
        server: server.clone(),
        problem,
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(SpecError::UrlScheme {
            server: server.clone(),
            scheme: String::new(),
        });
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        let shown = if scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            truncate(scheme, 20)
        } else {
            "something else".into()
        };
        return Err(SpecError::UrlScheme {
            server: server.clone(),
            scheme: shown,
        });
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Err(problem(format!("has no host after `{scheme}://`")));
    }
    if url.chars().any(char::is_whitespace) {
        return Err(problem("has spaces or line breaks in it".into()));
    }
    // What the HTTP client would refuse at every attempt (a port past 65535, a broken IPv6
    // address, ...), refused here once, naming what is wrong (the parser's words never quote
    // the URL).
    if let Err(error) = reqwest::Url::parse(url) {
        return Err(problem(format!("cannot be used: {error}")));
    }
    Ok(())
}

/// The status of the answer that carried a handshake's `WWW-Authenticate` challenge: rmcp keeps
/// a 403's challenge (insufficient scope) apart from a 401's.
fn challenge_status(e: &rmcp::service::ClientInitializeError) -> &'static str {
    use rmcp::transport::streamable_http_client::InsufficientScopeError;
    if chain(e).any(|level| level.is::<InsufficientScopeError>()) {
        "HTTP 403 Forbidden"
    } else {
        "HTTP 401 Unauthorized"
    }
}

impl HttpConnector {
    /// A connector for `url` with `headers`. Fails on a URL that is not `http(s)://` with a host
    /// ([`SpecError::UrlScheme`], [`SpecError::Url`]) or a header that is not valid HTTP; the
    /// error never repeats the URL's credentials or a header value.
    pub fn new(
        server: impl Into<Arc<str>>,
        url: Secret,
        headers: &BTreeMap<String, Secret>,
    ) -> Result<Self, SpecError> {
        let server = server.into();
        check_url(&server, url.expose())?;
        let mut map = HashMap::new();
        for (name, value) in headers {
            // rmcp sets these itself and refuses them as custom headers.
            if ["accept", "mcp-session-id", "last-event-id"]
                .contains(&name.to_ascii_lowercase().as_str())
            {
                return Err(SpecError::ReservedHeader {
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
        let credentials = tokio::sync::watch::Sender::new(CredentialState {
            expiries: bearer_expiry(headers).into_iter().collect(),
            reauthorized: 0,
        });
        Ok(HttpConnector {
            server,
            url,
            headers: map,
            secrets,
            connect_timeout: Duration::from_secs(30),
            generations: ProtocolGenerations::Both,
            after_connect: None,
            server_requests: None,
            credentials,
            #[cfg(feature = "oauth")]
            oauth: None,
            credentials_hint: None,
        })
    }

    /// What a rejection of the credentials tells to do, instead of the advice for a configured
    /// server (its `headers`, `oauth`, the login command).
    pub(crate) fn credentials_hint(mut self, hint: String) -> Self {
        self.credentials_hint = Some(hint);
        self
    }

    /// Uses OAuth with the tokens of `spec`'s credential store (refreshed before they expire)
    /// instead of a static `Authorization` header.
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, spec: crate::client::OAuthSpec) -> Self {
        self.oauth = Some(Arc::new(crate::client::oauth::OAuthCredentials::new(
            self.server.clone(),
            self.url.clone(),
            spec,
        )));
        self
    }

    /// The handshake timeout (TCP connect to `initialize` answered). Default 30 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The protocol generations the handshake offers (default: both, `server/discover` first).
    pub fn protocol_generations(mut self, generations: ProtocolGenerations) -> Self {
        self.generations = generations;
        self
    }

    /// The hook that re-provisions per-connection state on every fresh connection.
    pub fn after_connect(mut self, hook: Option<AfterConnect>) -> Self {
        self.after_connect = hook;
        self
    }

    /// Who answers what the server asks during a call (`elicitation/create`); `None` (the
    /// default) declines, as an unattended run must. See [`ServerRequests`].
    pub fn server_requests(mut self, requests: Option<Arc<dyn ServerRequests>>) -> Self {
        self.server_requests = requests;
        self
    }

    async fn open(&self, events: SessionEvents) -> Result<Arc<dyn Session>, ConnectError> {
        let server = &self.server;
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.expose().to_owned())
            .custom_headers(self.headers.clone());
        let answerer = Answerer::of(&self.server, self.server_requests.as_ref());
        let client = SupervisorClient::new(events.clone()).answered_by(answerer.clone());
        let session_id = SessionIdSlot::default();
        let pacer = {
            let events = events.clone();
            StreamPacer::new(move || events.stream_reopened())
        };
        let generations = self.generations;
        #[cfg(feature = "tls")]
        let certificate = crate::client::transport::tls_certificate::CertificateSlot::default();
        let serve = async {
            #[cfg(feature = "oauth")]
            if let Some(oauth) = &self.oauth {
                let http =
                    SessionIdClient::new(oauth.client().await?, session_id.clone(), pacer.clone())
                        .telling(&events);
                let transport = StreamableHttpClientTransport::with_client(http, config);
                let quiet = Quiet::new(transport, server.clone());
                return Ok(handshake_offering(
                    generations,
                    client,
                    quiet,
                    handshake::DISCOVER_WAIT,
                )
                .await);
            }
            #[cfg(feature = "tls")]
            let http = http_client::http_client_noting(server, certificate.clone())?;
            #[cfg(not(feature = "tls"))]
            let http = http_client::default_http_client(server)?;
            let http = SessionIdClient::new(http, session_id.clone(), pacer).telling(&events);
            let transport = StreamableHttpClientTransport::with_client(http, config);
            let quiet = Quiet::new(transport, server.clone());
            Ok::<_, ConnectError>(
                handshake_offering(generations, client, quiet, handshake::DISCOVER_WAIT).await,
            )
        };
        match tokio::time::timeout(self.connect_timeout, serve).await {
            Ok(Err(early)) => Err(early),
            Ok(Ok(Ok(running))) => {
                let running = handshake::accept(server, running)?;
                #[cfg(feature = "tls")]
                let tls_certificate_expiry = certificate.not_after();
                #[cfg(not(feature = "tls"))]
                let tls_certificate_expiry = None;
                Ok(Arc::new(
                    RmcpSession::start(running, None, events, endpoint(self.url.expose()))
                        .with_session_id(session_id)
                        .with_tls_certificate_expiry(tls_certificate_expiry)
                        .answered_by(answerer),
                ))
            }
            Err(_elapsed) => Err(ConnectError::new(
                ConnectResult::Timeout,
                format!(
                    "server `{server}` did not complete the MCP handshake within {}; check that \
                     the endpoint is up, or raise the connect timeout",
                    Human(self.connect_timeout)
                ),
            )),
            Ok(Ok(Err(e))) => Err(self.handshake_failed(&e).await),
        }
    }

    /// Classifies a failed handshake: a version we do not speak, a 429 / 503 that names when to
    /// come back, or the ordinary classification.
    async fn handshake_failed(&self, e: &rmcp::service::ClientInitializeError) -> ConnectError {
        let server = &self.server;
        if let Some(why) = handshake::version_refusal(e) {
            return ConnectError::new(
                ConnectResult::ProtocolError,
                format!("server `{server}`: {why}"),
            );
        }
        if let Some((status, after)) = retry_after::requested(&format!("{e:?}")) {
            let after = after.min(crate::client::connector::MAX_RETRY_AFTER);
            return ConnectError::new(
                ConnectResult::Refused,
                format!(
                    "server `{server}` is throttling (HTTP {status} with Retry-After: {}); it asked \
                     to be retried then, and heals by itself",
                    Human(after)
                ),
            )
            .with_retry_after(after);
        }
        #[cfg(feature = "oauth")]
        if let Some(failed) = self.oauth_failed(e) {
            return failed;
        }
        let result = classify_init_error(e, 0);
        if result == ConnectResult::ProtocolError
            && let Some(answer) = crate::client::reasons::reason::not_mcp_answer(e)
        {
            return ConnectError::new(
                result,
                format!(
                    "server `{server}` answers, but not MCP: {}",
                    redact(&answer, &self.secrets)
                ),
            );
        }
        if let Some(scope) = e
            .auth_challenge()
            .and_then(crate::client::reasons::rmcp_errors::insufficient_scope)
        {
            let scope = truncate(redact(&scope, &self.secrets), 200);
            let next = self
                .step_up(&scope)
                .await
                .unwrap_or_else(|| "re-authorize it with that scope".to_owned());
            return ConnectError::new(
                ConnectResult::Unauthorized,
                format!(
                    "server `{server}` needs scope `{scope}` to connect (HTTP 403 \
                     insufficient_scope); {next}"
                ),
            );
        }
        let rejected = self.credentials_rejected_next_step();
        let next = match result {
            ConnectResult::Unauthorized => rejected.as_str(),
            // It answered: it is reachable, and failing.
            _ if answered_status(e).is_some_and(|status| status >= 500) => {
                "it is reachable but answers with a server error: check the MCP server's own \
                 logs, or the proxy in front of it"
            }
            ConnectResult::Refused => "check that the server is running and reachable",
            _ => "check that the URL is an MCP streamable-HTTP endpoint",
        };
        let detail = match e.auth_challenge() {
            Some(challenge) => format!(
                "the MCP server answered {} with the challenge `{}`",
                challenge_status(e),
                truncate(challenge.to_owned(), 200)
            ),
            None => explain(e),
        };
        let detail = redact(&detail, &self.secrets);
        // What the credential store knows (e.g. a refused refresh token) beats the generic hint.
        if let Some(problem) = self
            .auth_problem()
            .filter(|_| result == ConnectResult::Unauthorized)
        {
            return ConnectError::new(
                result,
                format!("server `{server}`: connecting failed ({detail}): {problem}"),
            );
        }
        ConnectError::new(
            result,
            format!("server `{server}`: connecting failed ({detail}); {next}"),
        )
    }
}

impl HttpConnector {
    /// What to do when the server rejected what this connection sent: OAuth tokens are renewed
    /// by a login, a header by the configuration, and with neither the server wants credentials
    /// that were never configured.
    fn credentials_rejected_next_step(&self) -> String {
        if let Some(hint) = &self.credentials_hint {
            return hint.clone();
        }
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return format!(
                "the OAuth tokens were rejected; re-authorize: {}",
                oauth.reauthorize_command()
            );
        }
        if self.headers.is_empty() {
            "it wants credentials and none are configured: add them to its `headers` (e.g. \
             `\"Authorization\": \"Bearer ${TOKEN}\"`) or configure `oauth`"
                .into()
        } else {
            "the credentials were rejected; re-authorize and update its headers".into()
        }
    }
}

#[cfg(feature = "oauth")]
impl HttpConnector {
    /// A handshake that failed in the OAuth client, named by the system at fault: the credential
    /// store (`unauthenticated`, with the store's own fix), a refused refresh token
    /// (`unauthenticated`, re-authorize), or the authorization server (reads `connecting`: it
    /// heals when the authorization server is back, and is tried again after
    /// [`crate::client::transport::retry_after::AUTHORIZATION_SERVER_RETRY`]).
    fn oauth_failed(&self, e: &rmcp::service::ClientInitializeError) -> Option<ConnectError> {
        use crate::client::reasons::rmcp_errors::{OAuthFailure, oauth_failure};
        let oauth = self.oauth.as_ref()?;
        let server = &self.server;
        Some(match oauth_failure(e)? {
            OAuthFailure::Store | OAuthFailure::RefreshRefused => {
                let problem = oauth.problem().unwrap_or_else(|| {
                    format!(
                        "its OAuth credentials cannot be used; re-authorize: {}",
                        oauth.reauthorize_command()
                    )
                });
                ConnectError::new(
                    ConnectResult::Unauthorized,
                    format!("server `{server}`: {problem}"),
                )
            }
            OAuthFailure::Unusable(unusable) => ConnectError::new(
                ConnectResult::Unauthorized,
                format!(
                    "server `{server}`: its OAuth authorization server cannot be used: {}; this \
                     does not heal by waiting: fix the authorization server's configuration (or \
                     the proxy in front of it), then {}",
                    redact(&unusable, &self.secrets),
                    oauth.reauthorize_command()
                ),
            ),
            OAuthFailure::AuthorizationServer(detail) => {
                let detail = redact(&detail, &self.secrets);
                ConnectError::new(
                    ConnectResult::Refused,
                    format!(
                        "server `{server}`: {detail}; the stored credentials are kept and this \
                         heals when the authorization server answers again ({})",
                        crate::util::NextAttempt(
                            crate::client::transport::retry_after::AUTHORIZATION_SERVER_RETRY
                        )
                    ),
                )
                .with_retry_after(crate::client::transport::retry_after::AUTHORIZATION_SERVER_RETRY)
            }
        })
    }
}

/// `server.address` and `server.port` of `url` (the port from the scheme when none is given); no
/// credentials (user info is dropped).
fn endpoint(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let default = if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        80
    };
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = after
            .strip_prefix(':')
            .map_or(Some(default), |p| p.parse().ok())?;
        (host.to_owned(), port)
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), port.parse().ok()?),
            None => (host_port.to_owned(), default),
        }
    };
    (!host.is_empty()).then_some((host, port))
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

    fn credentials(&self) -> Option<tokio::sync::watch::Receiver<CredentialState>> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            // Read the store now: tokens already there have a known expiry before any connect.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let oauth = oauth.clone();
                runtime.spawn(async move { oauth.refresh_status().await });
            }
            return Some(oauth.subscribe());
        }
        (!self.credentials.borrow().expiries.is_empty()).then(|| self.credentials.subscribe())
    }

    fn auth_problem(&self) -> Option<String> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth.problem();
        }
        None
    }

    fn step_up(&self, scope: &str) -> BoxFuture<'_, Option<String>> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            let scope = scope.to_owned();
            // Saved before the error is returned, never in a task of its own: a run that exits on
            // the error, or a login started on it at once, would otherwise miss the scope.
            return Box::pin(async move {
                oauth.step_up(&scope).await;
                Some(format!(
                    "re-authorize with the scopes granted plus these: {}",
                    oauth.reauthorize_command()
                ))
            });
        }
        let _ = scope;
        Box::pin(std::future::ready(None))
    }

    /// With OAuth: when the access token the hub renews (by refresh, client credentials or
    /// workload identity) expires before `at`, renews it now.
    fn renew_credentials_expiring_before(
        &self,
        at: std::time::SystemTime,
    ) -> BoxFuture<'_, Result<crate::client::connector::Renewal, ConnectError>> {
        use crate::client::connector::Renewal;
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            let due = oauth.subscribe().borrow().expiries.iter().any(|e| {
                e.renewable
                    && e.kind == crate::state::CredentialKind::AccessToken
                    && e.expires_at < at
            });
            if due {
                return Box::pin(async move {
                    match oauth.renew_now().await {
                        Ok(expires_at) => Ok(Renewal::Renewed { expires_at }),
                        Err(e) if e.result == ConnectResult::Unauthorized => Err(e),
                        Err(e) => Ok(Renewal::NotRenewed { reason: e.message }),
                    }
                });
            }
        }
        let _ = at;
        Box::pin(std::future::ready(Ok(Renewal::NotDue)))
    }
}

#[cfg(test)]
mod tests {
    use crate::client::http::endpoint;

    #[test]
    fn rejected_credentials_say_what_renews_them_headers_a_login_or_none_configured() {
        use std::collections::BTreeMap;

        use crate::client::http::HttpConnector;
        use crate::secret::Secret;
        let url = Secret::new("http://127.0.0.1:1/mcp");
        let bare = HttpConnector::new("bare", url.clone(), &BTreeMap::new()).unwrap();
        assert!(bare.credentials_rejected_next_step().starts_with(
            "it wants credentials and none are configured: add them to its `headers`"
        ));
        let headers = BTreeMap::from([("Authorization".to_owned(), Secret::new("Bearer x"))]);
        let with_header = HttpConnector::new("h", url.clone(), &headers).unwrap();
        assert_eq!(
            with_header.credentials_rejected_next_step(),
            "the credentials were rejected; re-authorize and update its headers"
        );
        #[cfg(feature = "oauth")]
        {
            let mut spec = crate::client::OAuthSpec::new(std::env::temp_dir().join("s.json"), None);
            spec.reauthorize = Some("mcp-readiness oauth login --server o".into());
            let oauth = HttpConnector::new("o", url, &BTreeMap::new())
                .unwrap()
                .oauth(spec);
            assert_eq!(
                oauth.credentials_rejected_next_step(),
                "the OAuth tokens were rejected; re-authorize: run `mcp-readiness oauth login \
                 --server o`"
            );
        }
    }

    /// A URL the hub cannot use names `url` and what is wrong, never the URL itself.
    #[test]
    fn urls_must_be_http_or_https_with_a_host_and_the_error_names_the_key_not_the_url() {
        let server: std::sync::Arc<str> = "s".into();
        let check =
            |url: &str| crate::client::http::check_url(&server, url).map_err(|e| e.to_string());
        assert!(check("https://example.invalid/mcp").is_ok());
        assert!(check("HTTP://127.0.0.1:8080").is_ok());
        assert!(check("https://u:p@h/x").is_ok());
        let fix = "; fix `url` in the configuration";
        for (url, problem) in [
            (
                "ftp://x",
                "must start with http:// or https:// (found scheme `ftp`)",
            ),
            (
                "example.com/mcp",
                "must start with http:// or https:// (found no scheme)",
            ),
            ("https:///mcp", "has no host after `https://`"),
            ("http://tok@:80/", "has no host after `http://`"),
            ("http://h/a b", "has spaces or line breaks in it"),
            (
                "https://alice:pw@127.0.0.1:99999/mcp",
                "cannot be used: invalid port number",
            ),
            (
                "http://alice:pw@[::1/mcp",
                "cannot be used: invalid IPv6 address",
            ),
        ] {
            assert_eq!(
                check(url),
                Err(format!("server `s`: the url {problem}{fix}")),
                "{url}"
            );
        }
        let secret = check("gopher://user:hunter2@h/").unwrap_err();
        assert!(!secret.contains("hunter2"), "{secret}");
    }

    #[cfg(feature = "oauth")]
    mod oauth {
        use std::collections::BTreeMap;
        use std::time::Duration;

        use rmcp::service::ClientInitializeError;
        use rmcp::transport::DynamicTransportError;
        use rmcp::transport::auth::AuthError;
        use rmcp::transport::streamable_http_client::StreamableHttpError;

        use crate::client::OAuthSpec;
        use crate::client::http::HttpConnector;
        use crate::secret::Secret;
        use crate::state::ConnectResult;

        fn connector(store: &str) -> HttpConnector {
            HttpConnector::new(
                "vault",
                Secret::new("http://127.0.0.1:9/mcp"),
                &BTreeMap::new(),
            )
            .unwrap()
            .oauth(OAuthSpec {
                reauthorize: Some("mcp-readiness oauth login --server vault".into()),
                ..OAuthSpec::new(std::env::temp_dir().join(store), Some("client".into()))
            })
        }

        /// A handshake that failed inside rmcp's OAuth client, wrapped as rmcp wraps it.
        fn failed(auth: AuthError) -> ClientInitializeError {
            ClientInitializeError::TransportError {
                error: DynamicTransportError::from_parts(
                    "rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<Client>>",
                    std::any::TypeId::of::<()>(),
                    Box::new(StreamableHttpError::<reqwest::Error>::Auth(auth)),
                ),
                context: "send initialize request".into(),
            }
        }

        fn assert_no_type_dump(message: &str) {
            assert!(
                !message.contains("rmcp::") && !message.contains("Worker<"),
                "{message}"
            );
            assert!(
                !message.contains("MCP streamable-HTTP endpoint"),
                "the wrong system: {message}"
            );
        }

        #[tokio::test]
        async fn an_authorization_server_that_fails_the_refresh_is_named_and_heals() {
            let error = connector("mcp-readiness-as-down.json")
                .handshake_failed(&failed(AuthError::TokenRefreshFailed(
                    "error sending request for url (http://127.0.0.1:9/token): connection refused"
                        .into(),
                )))
                .await;
            assert_eq!(error.result, ConnectResult::Refused);
            assert_eq!(
                error.retry_after(),
                Some(crate::client::transport::retry_after::AUTHORIZATION_SERVER_RETRY)
            );
            assert_eq!(
                crate::client::transport::retry_after::AUTHORIZATION_SERVER_RETRY,
                Duration::from_secs(10)
            );
            let (message, next) = error
                .message
                .split_once(" (next attempt at ")
                .unwrap_or_else(|| panic!("{}", error.message));
            assert_eq!(
                message,
                "server `vault`: authorization server unreachable (the refresh of its access \
                 token): error sending request for url (http://127.0.0.1:9/[redacted]): \
                 connection refused; the stored credentials are kept and this heals when the \
                 authorization server answers again"
            );
            assert!(next.ends_with(" UTC, after a wait of 10s)"), "{next}");
            assert_no_type_dump(&error.message);
        }

        #[tokio::test]
        async fn a_credential_store_that_cannot_be_read_is_unauthenticated_with_its_own_fix() {
            let error = connector("mcp-readiness-store-broken.json")
                .handshake_failed(&failed(AuthError::CredentialStoreError(
                    "the credential store is open to other users".into(),
                )))
                .await;
            assert_eq!(error.result, ConnectResult::Unauthorized);
            assert_eq!(error.retry_after(), None);
            assert!(
                error.message.starts_with("server `vault`: ")
                    && error
                        .message
                        .contains("mcp-readiness oauth login --server vault"),
                "{}",
                error.message
            );
            assert_no_type_dump(&error.message);
        }

        /// The scope a `403 insufficient_scope` asked for is in the store when `step_up`'s
        /// future ends, with no task left to finish it: the `unauthenticated` error is returned
        /// after it, and a run that exits on that error, or a login started on it at once (as the
        /// conformance suite's `auth/scope-step-up` does), must find the scope there.
        #[tokio::test]
        async fn a_step_up_is_in_the_store_when_its_future_ends() {
            let name = format!("mcp-readiness-step-up-{}.json", std::process::id());
            let path = std::env::temp_dir().join(&name);
            std::fs::write(
                &path,
                r#"{"client_id":"client","token_response":{"access_token":"AT-step-up","token_type":"bearer","scope":"tools"},"granted_scopes":["tools"]}"#,
            )
            .unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
            }
            let connector = connector(&name);
            let next = crate::client::Connector::step_up(&connector, "tools admin").await;
            // Read at once, on this one-thread runtime: nothing else has run since.
            let store: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let _ = std::fs::remove_file(&path);
            assert_eq!(
                store["step_up"],
                serde_json::json!(["admin"]),
                "the granted scope is not asked for again, the missing one is kept: {store}"
            );
            assert_eq!(
                next.as_deref(),
                Some(
                    "re-authorize with the scopes granted plus these: run `mcp-readiness oauth \
                     login --server vault`"
                )
            );
        }

        #[tokio::test]
        async fn a_refused_refresh_token_is_unauthenticated() {
            let error = connector("mcp-readiness-refused.json")
                .handshake_failed(&failed(AuthError::TokenRefreshRejected(
                    "invalid_grant".into(),
                )))
                .await;
            assert_eq!(error.result, ConnectResult::Unauthorized);
            assert_no_type_dump(&error.message);
        }
    }

    #[test]
    fn the_endpoint_is_host_and_port_without_credentials() {
        assert_eq!(
            endpoint("http://127.0.0.1:8080/mcp"),
            Some(("127.0.0.1".into(), 8080))
        );
        assert_eq!(
            endpoint("https://user:secret@example.com/mcp?x=1"),
            Some(("example.com".into(), 443))
        );
        assert_eq!(endpoint("http://[::1]:9/mcp"), Some(("::1".into(), 9)));
        assert_eq!(endpoint("http://[::1]/"), Some(("::1".into(), 80)));
        assert_eq!(endpoint("nonsense"), None);
    }
}
