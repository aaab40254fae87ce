//! One server's OAuth client: built on first connect (authorization server discovery), kept for
//! the next connects, and rebuilt after a failed discovery.

use std::sync::Arc;

use rmcp::transport::auth::{AuthClient, AuthorizationManager, OAuthClientConfig};
use tokio::sync::watch;

use super::store::FileStore;
use crate::secret::{Secret, redact};
use crate::state::ConnectResult;
use crate::supervise::connectors::connector::ConnectError;
use crate::supervise::connectors::credential_expiry::CredentialState;
use crate::supervise::connectors::spec::OAuthSpec;

/// The redirect URI a refresh-only client is configured with (rmcp needs one; a refresh never
/// uses it, the login command sets its own).
const UNUSED_REDIRECT: &str = "http://127.0.0.1/oauth/callback";

/// The OAuth side of one HTTP server.
pub(crate) struct OAuthCredentials {
    server: Arc<str>,
    url: Secret,
    spec: OAuthSpec,
    store: FileStore,
    client: tokio::sync::Mutex<Option<AuthClient<reqwest::Client>>>,
}

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
        let store = FileStore::new(spec.store.clone());
        OAuthCredentials {
            server,
            url,
            spec,
            store,
            client: tokio::sync::Mutex::new(None),
        }
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

    /// The authorized HTTP client for the transport; discovers the authorization server on first
    /// use. A discovery that fails is `refused` (the authorization server may be down; it heals).
    pub(crate) async fn client(&self) -> Result<AuthClient<reqwest::Client>, ConnectError> {
        self.store.watch_for_reauthorization();
        let mut slot = self.client.lock().await;
        if let Some(client) = &*slot {
            return Ok(client.clone());
        }
        let manager = self.manager().await.map_err(|e| {
            use crate::supervise::connectors::rmcp_errors::{chain_text, truncate};
            use crate::supervise::connectors::streamable_http::AUTHORIZATION_SERVER_RETRY;
            let detail = redact(&chain_text(&e), std::slice::from_ref(&self.url));
            ConnectError::new(
                ConnectResult::Refused,
                format!(
                    "server `{}`: the discovery of its OAuth authorization server failed ({}); \
                     this heals when the server and its authorization server answer again (next \
                     attempt in {})",
                    self.server,
                    truncate(detail, 200),
                    crate::supervise::connectors::human::Human(AUTHORIZATION_SERVER_RETRY)
                ),
            )
            .with_retry_after(AUTHORIZATION_SERVER_RETRY)
        })?;
        // The client the bearer-header path uses too (rmcp's defaults): no idle pooled
        // connections, and only same-origin 307 / 308 redirects, so a redirect never replays the
        // session id or a custom header to another host.
        let http = crate::supervise::connectors::session_id::default_http_client(&self.server)?;
        let client = AuthClient::new(http, manager);
        *slot = Some(client.clone());
        Ok(client)
    }

    async fn manager(&self) -> Result<AuthorizationManager, rmcp::transport::AuthError> {
        let mut manager = AuthorizationManager::new(self.url.expose()).await?;
        manager.set_credential_store(self.store.clone());
        let resolution = manager.resolve_metadata().await?;
        manager.set_metadata(resolution.metadata);
        let mut config = OAuthClientConfig::new(self.spec.client_id.clone(), UNUSED_REDIRECT)
            .with_scopes(self.spec.scopes.clone());
        if let Some(secret) = &self.spec.client_secret {
            config = config.with_client_secret(secret.expose());
        }
        manager.configure_client(config)?;
        Ok(manager)
    }
}
