//! The auth scenarios, through the crate's own stack as a service and an on-call person would
//! use it: `oauth login`'s flow (the library's [`authorize`](mcp_readiness::client::authorize))
//! with the non-interactive browser and a credential store in a scratch directory, then the Hub
//! connecting with that store. When the server then reads `unauthenticated` (a step-up to more
//! scopes, an authorization server that moved), the login is run again, as the reason says, at
//! most [`LOGINS`] times: a supervising client never loops on logins. The client-credentials
//! extension scenarios configure `"grant": "client_credentials"`, and `auth/wif-jwt-bearer`
//! `"grant": "workload_identity"` with the scenario's token in a file, and
//! `auth/enterprise-managed-authorization` `"grant": "enterprise_managed"` with the scenario's
//! identity provider and its ID token in a file; they never log in. `auth/dpop` and
//! `auth/dpop-nonce` need no configuration: their authorization server's metadata offers DPoP
//! (`dpop_signing_alg_values_supported`), which the crate then uses for the login and every
//! request.

use std::path::{Path, PathBuf};

use mcp_readiness::client::SigningAlgorithm;
use mcp_readiness::{ServerSpec, secret::Secret};
use mcp_readiness::{
    TransportSpec,
    client::{AssertionSource, IdentityProvider, OAuthGrant, OAuthSpec},
};

use crate::context::Context;
use crate::stack::{SERVER, Stack};

/// How many logins one scenario may run (the first, and re-authorizations after
/// `unauthenticated`): `auth/scope-retry-limit` judges that a client stops.
const LOGINS: usize = 3;

/// This client's Client ID Metadata Document URL, used where the authorization server
/// advertises `client_id_metadata_document_supported` (the suite's `auth/basic-cimd`).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// A scratch directory for the credential store, removed when dropped.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new() -> Result<Scratch, String> {
        let dir =
            std::env::temp_dir().join(format!("mcp-readiness-conformance-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs auth scenario `scenario` against the server at `url`: authorize (or, for client
/// credentials, configure the grant), then list and call tools through the stack
/// ([`exercise`](crate::exercise)); re-authorize after `unauthenticated`, at most [`LOGINS`]
/// logins in all.
pub(crate) async fn run(scenario: &str, url: &str, context: &Context) -> Result<(), String> {
    let scratch = Scratch::new()?;
    let (spec, logs_in) = spec(scenario, url, context, &scratch)?;
    let mut logins = 0;
    loop {
        if logs_in {
            logins += 1;
            mcp_readiness::client::authorize(&spec, 0, crate::browser::open)
                .await
                .map_err(|e| e.to_string())?;
        }
        let stack = Stack::start(spec.clone())?;
        let result = crate::exercise(scenario, &stack, context).await;
        stack.shutdown().await;
        match result {
            Err(why) if logs_in && why.contains("unauthenticated") && logins < LOGINS => {
                tracing::info!(reason = %why, "unauthenticated: authorizing again");
            }
            Err(why) if logs_in && why.contains("unauthenticated") => {
                tracing::info!(logins, "still unauthenticated: no more logins");
                return Ok(());
            }
            other => return other,
        }
    }
}

/// The server's spec for `scenario`: OAuth with a store in `scratch`, the client the context
/// names (pre-registered), or none (registration: CIMD where supported, else DCR); and whether
/// it is authorized by a login (not client credentials).
fn spec(
    scenario: &str,
    url: &str,
    context: &Context,
    scratch: &Scratch,
) -> Result<(ServerSpec, bool), String> {
    let mut oauth = OAuthSpec::new(scratch.path().join("store.json"), context.client_id.clone());
    oauth.client_secret = context.client_secret.clone().map(Secret::new);
    if oauth.client_id.is_none() {
        oauth.client_metadata_url = Some(CLIENT_METADATA_URL.to_owned());
    }
    if scenario.starts_with("auth/client-credentials") {
        if oauth.client_id.is_none() {
            oauth.client_id = Some("conformance-test-client".to_owned());
        }
        let private_key = match &context.private_key_pem {
            Some(pem) => {
                let path = scratch.path().join("client-key.pem");
                std::fs::write(&path, pem)
                    .map_err(|e| format!("writing {}: {e}", path.display()))?;
                oauth.client_secret = None;
                Some(path)
            }
            None => None,
        };
        oauth.grant = OAuthGrant::ClientCredentials {
            private_key,
            signing_algorithm: match &context.signing_algorithm {
                Some(name) => name.parse()?,
                None => SigningAlgorithm::default(),
            },
        };
    }
    if scenario == "auth/wif-jwt-bearer" {
        // As a platform would: the workload's identity token in a file beside the store.
        let token = context
            .valid_jwt
            .as_deref()
            .ok_or("the scenario gave no workload identity token (`valid_jwt`)")?;
        let path = scratch.path().join("workload-token");
        std::fs::write(&path, token).map_err(|e| format!("writing {}: {e}", path.display()))?;
        oauth.client_secret = None;
        oauth.client_metadata_url = None;
        oauth.grant = OAuthGrant::WorkloadIdentity {
            assertion: AssertionSource::File(path),
        };
    }
    if scenario == "auth/enterprise-managed-authorization" {
        // As a sign-in agent would: the enterprise ID token in a file beside the store.
        let missing = |key: &str| format!("the scenario gave no `{key}`");
        let token = context
            .idp_id_token
            .as_deref()
            .ok_or_else(|| missing("idp_id_token"))?;
        let path = scratch.path().join("enterprise-id-token");
        std::fs::write(&path, token).map_err(|e| format!("writing {}: {e}", path.display()))?;
        oauth.client_metadata_url = None;
        oauth.grant = OAuthGrant::EnterpriseManaged {
            identity_provider: IdentityProvider {
                issuer: context
                    .idp_issuer
                    .clone()
                    .ok_or_else(|| missing("idp_issuer"))?,
                token_endpoint: context
                    .idp_token_endpoint
                    .clone()
                    .ok_or_else(|| missing("idp_token_endpoint"))?,
                client_id: context
                    .idp_client_id
                    .clone()
                    .ok_or_else(|| missing("idp_client_id"))?,
                client_secret: None,
            },
            assertion: AssertionSource::File(path),
        };
    }
    let logs_in = oauth.grant == OAuthGrant::AuthorizationCode;
    let mut transport = TransportSpec::http(url.to_owned());
    if let TransportSpec::Http { oauth: slot, .. } = &mut transport {
        *slot = Some(oauth);
    }
    Ok((ServerSpec::new(SERVER, transport), logs_in))
}
