//! One server's OAuth client: built on first connect (authorization server discovery), kept for
//! the next connects, rebuilt after a failed discovery and when `oauth login` registered another
//! client. With client credentials, the token is fetched at connect and renewed by a task before
//! it expires.

use std::sync::Arc;

use rmcp::transport::auth::{AuthClient, AuthorizationManager, OAuthClientConfig};
use tokio::sync::watch;

use crate::client::connector::ConnectError;
use crate::client::credential_expiry::CredentialState;
use crate::client::oauth::address_policy::Policy;
use crate::client::oauth::dpop::{Dpop, DpopHttp, DpopTokenClient};
use crate::client::oauth::store::FileStore;
use crate::client::oauth::token_error::TokenFailure;
use crate::client::spec::{OAuthGrant, OAuthSpec};
use crate::secret::{Secret, redact};
use crate::state::ConnectResult;
use crate::util::MutexExt as _;

/// The redirect URI a refresh-only client is configured with (rmcp needs one; a refresh never
/// uses it, the login command sets its own).
const UNUSED_REDIRECT: &str = "http://127.0.0.1/oauth/callback";

/// The OAuth side of one HTTP server.
pub(crate) struct OAuthCredentials {
    server: Arc<str>,
    url: Secret,
    spec: OAuthSpec,
    store: FileStore,
    /// The client, and the client id it was built for (a new registration rebuilds it).
    client: tokio::sync::Mutex<Option<(AuthClient<DpopHttp>, Option<String>)>>,
    /// The authorization server's metadata, as last discovered.
    metadata: std::sync::Mutex<Option<rmcp::transport::auth::AuthorizationMetadata>>,
    /// How a grant the hub renews (client credentials, workload identity) fetches a token now:
    /// set when its renewal task starts, for [`OAuthCredentials::renew_now`].
    renew: std::sync::Mutex<Option<RenewToken>>,
    /// DPoP, when the tokens are bound to the store's key (decided at discovery).
    dpop: std::sync::Mutex<Option<Arc<Dpop>>>,
}

/// Fetches a token of a grant the hub renews now: its lifetime, or the refusal or outage the
/// renewal task would have met.
type RenewToken = Arc<
    dyn Fn()
            -> futures::future::BoxFuture<'static, Result<Option<std::time::Duration>, TokenFailure>>
        + Send
        + Sync,
>;

impl std::fmt::Debug for OAuthCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthCredentials")
            .field("server", &self.server)
            .field("store", &self.spec.store)
            .field("client_id", &self.spec.client_id)
            .finish()
    }
}

impl OAuthCredentials {
    pub(crate) fn new(server: Arc<str>, url: Secret, spec: OAuthSpec) -> Self {
        let store = FileStore::with_renewal(spec.store.clone(), spec.grant.renewed_by_hub());
        OAuthCredentials {
            server,
            url,
            spec,
            store,
            client: tokio::sync::Mutex::new(None),
            metadata: std::sync::Mutex::new(None),
            renew: std::sync::Mutex::new(None),
            dpop: std::sync::Mutex::new(None),
        }
    }

    /// Renews the access token now, ahead of its expiry (the pre-flight renews a token that
    /// would expire before the next run, so a grant that stopped working is found now): a
    /// refresh for the authorization-code grant, a new token for the grants the hub renews.
    /// `Ok` is the new token's expiry when the authorization server said one. A refusal (a
    /// revoked refresh token, a rotated secret, an assertion no longer accepted) is remembered
    /// by the store as any refusal and is `unauthorized`, with the store's reason and what to
    /// run; an authorization server that did not answer is `refused`. Before the first connect
    /// there is no client and nothing is renewed (`Ok(None)`).
    pub(crate) async fn renew_now(&self) -> Result<Option<std::time::SystemTime>, ConnectError> {
        let server = &self.server;
        let failed = "renewing its access token ahead of the next run failed";
        let lifetime = match &self.spec.grant {
            OAuthGrant::AuthorizationCode => {
                let client = self.client.lock().await.as_ref().map(|(c, _)| c.clone());
                let Some(client) = client else {
                    return Ok(None);
                };
                let refreshed = client.auth_manager.lock().await.refresh_token().await;
                match refreshed {
                    Ok(token) => oauth2::TokenResponse::expires_in(&token),
                    Err(
                        rmcp::transport::AuthError::TokenRefreshRejected(_)
                        | rmcp::transport::AuthError::AuthorizationRequired,
                    ) => {
                        let problem = self.problem().unwrap_or_else(|| {
                            format!(
                                "the authorization server refused the refresh; re-authorize: {}",
                                self.reauthorize_command()
                            )
                        });
                        return Err(ConnectError::new(
                            ConnectResult::Unauthorized,
                            format!("server `{server}`: {failed}: {problem}"),
                        ));
                    }
                    Err(e) => {
                        let detail =
                            redact(&crate::client::reasons::reason::explain(&e), &self.known());
                        return Err(ConnectError::new(
                            ConnectResult::Refused,
                            format!(
                                "server `{server}`: {failed} ({detail}); its authorization server \
                                 did not answer the refresh: check that it is up"
                            ),
                        ));
                    }
                }
            }
            OAuthGrant::ClientCredentials { .. }
            | OAuthGrant::WorkloadIdentity { .. }
            | OAuthGrant::EnterpriseManaged { .. } => {
                let renew = self.renew.lock_unpoisoned().clone();
                let Some(renew) = renew else {
                    return Ok(None);
                };
                match renew().await {
                    Ok(lifetime) => {
                        self.store.clear_rejection();
                        lifetime
                    }
                    Err(TokenFailure::Refused(why)) => {
                        self.store.reject(why.clone());
                        return Err(ConnectError::new(
                            ConnectResult::Unauthorized,
                            format!("server `{server}`: {failed}: {why}"),
                        ));
                    }
                    Err(TokenFailure::Unavailable(why)) => {
                        return Err(ConnectError::new(
                            ConnectResult::Refused,
                            format!("server `{server}`: {failed}: {why}"),
                        ));
                    }
                }
            }
        };
        Ok(lifetime.map(|lifetime| std::time::SystemTime::now() + lifetime))
    }

    /// Expiry changes and re-authorizations of the store.
    pub(crate) fn subscribe(&self) -> watch::Receiver<CredentialState> {
        self.store.subscribe()
    }

    /// Reads the store now, for the gauge (before the first connection).
    pub(crate) async fn refresh_status(&self) {
        self.store.refresh_status().await;
    }

    /// The command that re-authorizes this server, in backquotes.
    pub(crate) fn reauthorize_command(&self) -> String {
        match &self.spec.reauthorize {
            Some(command) => format!("run `{command}`"),
            None => format!(
                "write new tokens to `{}` (see docs/oauth.md)",
                self.spec.store.display()
            ),
        }
    }

    /// Why the store cannot give a usable token, if it is known (for unauthenticated reasons).
    pub(crate) fn problem(&self) -> Option<String> {
        self.store.problem(&self.reauthorize_command())
    }

    /// Remembers scopes the server asked for (`403 insufficient_scope`) for the next login.
    pub(crate) async fn step_up(&self, scopes: &str) {
        if let Err(e) = self.store.save_step_up(scopes).await {
            tracing::warn!(server = %self.server, error = %e, "keeping the scopes asked for");
        }
    }

    /// The secrets an error message may contain.
    fn known(&self) -> Vec<Secret> {
        let mut known = vec![self.url.clone()];
        known.extend(self.spec.client_secret.clone());
        known
    }

    /// The authorized HTTP client for the transport; discovers the authorization server on first
    /// use. A discovery that fails is `refused` (the authorization server may be down; it heals).
    /// With client credentials a token is fetched here when the store has none that lasts.
    pub(crate) async fn client(&self) -> Result<AuthClient<DpopHttp>, ConnectError> {
        self.store.watch_for_reauthorization();
        let registered = self.client_identity().await;
        let mut slot = self.client.lock().await;
        if let Some((client, built_for)) = &*slot
            && *built_for == registered
        {
            return Ok(client.clone());
        }
        let manager = self.manager(registered.as_deref()).await?;
        // The client the bearer-header path uses too (rmcp's defaults): no idle pooled
        // connections, and only same-origin 307 / 308 redirects, so a redirect never replays the
        // session id or a custom header to another host.
        let http = crate::client::transport::http_client::default_http_client(&self.server)?;
        let http = DpopHttp::new(http, self.dpop());
        let client = AuthClient::new(http, manager);
        match &self.spec.grant {
            OAuthGrant::AuthorizationCode => {}
            OAuthGrant::ClientCredentials { .. } => self.start_client_credentials(&client).await?,
            OAuthGrant::WorkloadIdentity { assertion } => {
                self.start_workload_identity(&client, assertion).await?;
            }
            OAuthGrant::EnterpriseManaged {
                identity_provider,
                assertion,
            } => {
                self.start_enterprise_managed(&client, identity_provider, assertion)
                    .await?;
            }
        }
        *slot = Some((client.clone(), registered));
        Ok(client)
    }

    /// The client id to refresh as: the configured one, else the registration `oauth login`
    /// kept in the store.
    async fn client_identity(&self) -> Option<String> {
        if let Some(id) = &self.spec.client_id {
            return Some(id.clone());
        }
        self.store
            .registration()
            .await
            .ok()
            .flatten()
            .map(|r| r.client_id)
    }

    /// A discovery of the authorization server that failed: `unauthenticated` when the
    /// authorization server answered with something that cannot be used (another issuer, no or
    /// invalid metadata: waiting will not fix it), `refused` with a retry when it could not be
    /// reached (it heals when it answers again).
    fn discovery_failed(&self, e: &rmcp::transport::AuthError) -> ConnectError {
        use crate::client::reasons::reason::{
            authorization_server_unusable, discovery_failed_at_the_mcp_server, explain,
            oauth_http_status,
        };
        use crate::client::transport::retry_after::AUTHORIZATION_SERVER_RETRY;
        if let Some(unusable) = authorization_server_unusable(e) {
            return ConnectError::new(
                ConnectResult::Unauthorized,
                format!(
                    "server `{}`: its OAuth authorization server cannot be used: {}; this does \
                     not heal by waiting: fix the authorization server's configuration (or the \
                     proxy in front of it), then {}",
                    self.server,
                    redact(&unusable, &self.known()),
                    self.reauthorize_command()
                ),
            );
        }
        let detail = redact(&explain(e), &self.known());
        // Discovery starts at the MCP server: when that is where it failed, this is the MCP
        // server's failure, read as it is without OAuth (`absent`, backed off like any failed
        // connect), not an authorization server that will answer again.
        if let Some(unreachable) = discovery_failed_at_the_mcp_server(e) {
            let (result, next) = if unreachable {
                (
                    ConnectResult::Refused,
                    "check that the server is running and reachable",
                )
            } else if oauth_http_status(e).is_some_and(|status| status >= 500) {
                (
                    ConnectResult::Refused,
                    "it is reachable but answers with a server error: check the MCP server's own \
                     logs, or the proxy in front of it",
                )
            } else {
                (
                    ConnectResult::ProtocolError,
                    "check that the URL is the MCP server's endpoint",
                )
            };
            return ConnectError::new(
                result,
                format!(
                    "server `{}`: connecting failed ({detail}); {next}",
                    self.server
                ),
            );
        }
        ConnectError::new(
            ConnectResult::Refused,
            format!(
                "server `{}`: the discovery of its OAuth authorization server failed ({detail}); \
                 this heals when the server and its authorization server answer again ({})",
                self.server,
                crate::util::NextAttempt(AUTHORIZATION_SERVER_RETRY)
            ),
        )
        .with_retry_after(AUTHORIZATION_SERVER_RETRY)
    }

    /// DPoP, when the tokens are bound to the store's key.
    fn dpop(&self) -> Option<Arc<Dpop>> {
        self.dpop.lock_unpoisoned().clone()
    }

    /// The authorization manager, after discovery: with DPoP where it is used (its token
    /// requests carry proofs), else rmcp's own.
    async fn manager(&self, client_id: Option<&str>) -> Result<AuthorizationManager, ConnectError> {
        let discovered = async {
            let mut manager = AuthorizationManager::new(self.url.expose()).await?;
            manager.set_credential_store(self.store.clone());
            let resolution = manager.resolve_metadata().await?;
            Ok::<_, rmcp::transport::AuthError>((manager, resolution.metadata))
        };
        let (mut manager, metadata) = discovered.await.map_err(|e| self.discovery_failed(&e))?;
        let wanted = super::dpop::wanted(self.spec.dpop, &metadata).map_err(|why| {
            ConnectError::new(
                ConnectResult::Unauthorized,
                format!("server `{}`: {why}", self.server),
            )
        })?;
        *self.dpop.lock_unpoisoned() = wanted.then(|| Dpop::new(self.store.clone()));
        if let Some(dpop) = self.dpop() {
            // The same discovery, through the client that adds proofs to token requests.
            let dpop_manager = async {
                let http = DpopTokenClient::new(
                    dpop,
                    &metadata.token_endpoint,
                    Policy::for_server(self.url.expose()),
                )?;
                let mut manager = AuthorizationManager::new_with_oauth_http_client(
                    self.url.expose(),
                    Arc::new(http),
                )
                .await?;
                manager.set_credential_store(self.store.clone());
                manager.resolve_metadata().await?;
                Ok::<_, rmcp::transport::AuthError>(manager)
            };
            manager = dpop_manager.await.map_err(|e| self.discovery_failed(&e))?;
        }
        self.configure(manager, metadata, client_id)
            .await
            .map_err(|e| self.discovery_failed(&e))
    }

    /// Configures `manager` for the grant, with the authorization server `metadata` describes.
    async fn configure(
        &self,
        mut manager: AuthorizationManager,
        metadata: rmcp::transport::auth::AuthorizationMetadata,
        client_id: Option<&str>,
    ) -> Result<AuthorizationManager, rmcp::transport::AuthError> {
        *self.metadata.lock_unpoisoned() = Some(metadata.clone());
        manager.set_metadata(metadata);
        if let OAuthGrant::WorkloadIdentity { .. } | OAuthGrant::EnterpriseManaged { .. } =
            self.spec.grant
        {
            // The hub fetches and renews the tokens; rmcp reads them from the store, and a token
            // that runs out (its renewal refused) finds no refresh token: authorization required.
            let id = client_id.unwrap_or(super::workload_identity::UNNAMED_CLIENT);
            manager.configure_client(OAuthClientConfig::new(id, UNUSED_REDIRECT))?;
            return Ok(manager);
        }
        if self.spec.grant.renewed_by_hub() {
            // The hub fetches and renews the tokens; rmcp only reads them from the store.
            return Ok(manager);
        }
        let Some(client_id) = client_id else {
            // Not registered yet: no token to refresh; the server reads `unauthenticated` with
            // the login to run.
            return Ok(manager);
        };
        let mut config = OAuthClientConfig::new(client_id, UNUSED_REDIRECT)
            .with_scopes(self.spec.scopes.clone());
        let secret = match &self.spec.client_secret {
            Some(secret) => Some(secret.expose().to_owned()),
            None => self
                .store
                .registration()
                .await
                .ok()
                .flatten()
                .and_then(|r| r.client_secret),
        };
        if let Some(secret) = secret {
            config = config.with_client_secret(secret);
        }
        manager.configure_client(config)?;
        Ok(manager)
    }

    /// Client credentials: configures the manager of `client`, fetches a token unless the store
    /// holds one that lasts, and starts the task that renews it before it expires.
    async fn start_client_credentials(
        &self,
        client: &AuthClient<DpopHttp>,
    ) -> Result<(), ConnectError> {
        use super::client_credentials as cc;
        let server = &self.server;
        let rotate = cc::what_to_rotate(&self.spec);
        let config = cc::config(&self.spec, self.url.expose()).map_err(|e| {
            ConnectError::new(
                ConnectResult::Unauthorized,
                format!("server `{server}`: {e}"),
            )
        })?;
        let known = self.known();
        {
            let mut manager = client.auth_manager.lock().await;
            let configured = manager
                .validate_client_credentials_metadata(&config)
                .and_then(|()| manager.configure_client_credentials(&config));
            if let Err(e) = configured {
                return Err(ConnectError::new(
                    ConnectResult::Unauthorized,
                    format!("server `{server}`: {}", redact(&e.to_string(), &known)),
                ));
            }
        }
        let fetched = cc::fetch(client.auth_manager.clone(), &config, &known).await;
        let lifetime = self.first_token(fetched.map_err(|failure| match failure {
            TokenFailure::Refused(why) => TokenFailure::Refused(cc::refused(&why, &rotate)),
            TokenFailure::Unavailable(why) => TokenFailure::Unavailable(format!(
                "fetching a client-credentials token failed ({why}); check that the \
                 authorization server is up"
            )),
        }))?;
        cc::spawn_renewal(
            std::sync::Arc::downgrade(&client.auth_manager),
            move |manager| {
                let config = config.clone();
                let known = known.clone();
                let rotate = rotate.clone();
                async move {
                    cc::fetch(manager, &config, &known)
                        .await
                        .map_err(|failure| match failure {
                            TokenFailure::Refused(why) => {
                                TokenFailure::Refused(cc::refused(&why, &rotate))
                            }
                            unavailable => unavailable,
                        })
                }
            },
            self.store.clone(),
            lifetime,
        );
        Ok(())
    }

    /// The first token of a grant the hub renews (client credentials, workload identity): a
    /// token ends any earlier refusal; a refusal is remembered in the store and reads
    /// `unauthorized`, since waiting will not help; an outage heals (`refused`).
    fn first_token(
        &self,
        fetched: Result<Option<std::time::Duration>, TokenFailure>,
    ) -> Result<Option<std::time::Duration>, ConnectError> {
        let server = &self.server;
        match fetched {
            Ok(lifetime) => {
                self.store.clear_rejection();
                Ok(lifetime)
            }
            Err(TokenFailure::Refused(why)) => {
                self.store.reject(why.clone());
                Err(ConnectError::new(
                    ConnectResult::Unauthorized,
                    format!("server `{server}`: {why}"),
                ))
            }
            Err(TokenFailure::Unavailable(why)) => Err(ConnectError::new(
                ConnectResult::Refused,
                format!("server `{server}`: {why}"),
            )),
        }
    }

    /// Workload identity: fetches a token with the workload's identity token from `assertion`
    /// (read now), and starts the task that renews it before it expires (reading it again each
    /// time).
    async fn start_workload_identity(
        &self,
        client: &AuthClient<DpopHttp>,
        assertion: &crate::client::spec::AssertionSource,
    ) -> Result<(), ConnectError> {
        use super::workload_identity as wif;
        let server = &self.server;
        let metadata = self.discovered()?;
        let grant = wif::JwtBearer {
            token_endpoint: metadata.token_endpoint.clone(),
            issuer: metadata.issuer.clone(),
            client_id: self.spec.client_id.clone(),
            scopes: self.spec.scopes.clone(),
            resource: self.url.expose().to_owned(),
            assertion: assertion.clone(),
            dpop: self.dpop(),
        };
        let http = crate::client::transport::http_client::default_http_client(server)?;
        let store = self.store.clone();
        let fetch: RenewToken = Arc::new(move || {
            let (http, grant, store) = (http.clone(), grant.clone(), store.clone());
            Box::pin(async move { wif::fetch(&http, &grant, &store).await })
        });
        let lifetime = self.first_token(fetch().await)?;
        self.keep_renewing(client, lifetime, fetch);
        Ok(())
    }

    /// Enterprise-managed authorization: exchanges the enterprise ID token from `assertion`
    /// (read now) at `identity_provider`, then the grant it gives at the MCP server's
    /// authorization server, and starts the task that does both again before the token expires.
    async fn start_enterprise_managed(
        &self,
        client: &AuthClient<DpopHttp>,
        identity_provider: &crate::client::spec::IdentityProvider,
        assertion: &crate::client::spec::AssertionSource,
    ) -> Result<(), ConnectError> {
        use super::enterprise_managed as ema;
        let server = &self.server;
        let metadata = self.discovered()?;
        let unusable = |why: &str| {
            ConnectError::new(
                ConnectResult::Unauthorized,
                format!("server `{server}`: {why}"),
            )
        };
        let issuer = metadata.issuer.clone().ok_or_else(|| {
            unusable(
                "its authorization server's metadata names no `issuer`, which the identity \
                 assertion grant is addressed to; fix the authorization server's metadata",
            )
        })?;
        let client_id =
            self.spec.client_id.clone().ok_or_else(|| {
                unusable("enterprise-managed authorization needs `oauth.client_id`")
            })?;
        let grant = ema::Enterprise {
            identity_provider: identity_provider.clone(),
            assertion: assertion.clone(),
            issuer,
            token_endpoint: metadata.token_endpoint.clone(),
            secret_in_body: ema::secret_in_body(
                metadata
                    .additional_fields
                    .get("token_endpoint_auth_methods_supported"),
            ),
            client_id,
            client_secret: self.spec.client_secret.clone(),
            scopes: self.spec.scopes.clone(),
            resource: self.url.expose().to_owned(),
        };
        let cannot = |e: rmcp::transport::AuthError| {
            unusable(&format!("cannot build its OAuth HTTP client: {e}"))
        };
        // With DPoP, the token request at the MCP server's authorization server carries a proof
        // (the identity provider's token exchange does not).
        let http: std::sync::Arc<dyn rmcp::transport::auth::OAuthHttpClient> = match self.dpop() {
            Some(dpop) => std::sync::Arc::new(
                DpopTokenClient::new(dpop, &metadata.token_endpoint, Policy::unfiltered())
                    .map_err(cannot)?
                    .answering_bearer(),
            ),
            None => std::sync::Arc::new(
                rmcp::transport::auth::default_oauth_http_client().map_err(cannot)?,
            ),
        };
        let store = self.store.clone();
        let fetch: RenewToken = Arc::new(move || {
            let (http, grant, store) = (http.clone(), grant.clone(), store.clone());
            Box::pin(async move { ema::fetch(http.as_ref(), &grant, &store).await })
        });
        let lifetime = self.first_token(fetch().await)?;
        self.keep_renewing(client, lifetime, fetch);
        Ok(())
    }

    /// The authorization server's metadata, as discovered before a grant the hub renews starts.
    fn discovered(&self) -> Result<rmcp::transport::auth::AuthorizationMetadata, ConnectError> {
        self.metadata.lock_unpoisoned().clone().ok_or_else(|| {
            ConnectError::new(
                ConnectResult::Refused,
                format!(
                    "server `{}`: its authorization server was not discovered",
                    self.server
                ),
            )
        })
    }

    /// Keeps a grant the hub renews going after its first token (whose lifetime is `lifetime`):
    /// `fetch` serves [`OAuthCredentials::renew_now`] and the task that renews the token before
    /// it expires.
    fn keep_renewing(
        &self,
        client: &AuthClient<DpopHttp>,
        lifetime: Option<std::time::Duration>,
        fetch: RenewToken,
    ) {
        *self.renew.lock_unpoisoned() = Some(fetch.clone());
        crate::client::oauth::client_credentials::spawn_renewal(
            std::sync::Arc::downgrade(&client.auth_manager),
            move |_manager| fetch(),
            self.store.clone(),
            lifetime,
        );
    }
}
