//! Enterprise-managed authorization (`"grant": "enterprise_managed"`, SEP-990, the MCP
//! enterprise-managed authorization extension): the ID token that the enterprise identity
//! provider issued to this client is read from `oauth.assertion_file` (or printed by
//! `oauth.assertion_command`), exchanged at the identity provider for an identity assertion
//! authorization grant (ID-JAG, RFC 8693 token exchange), and the ID-JAG at the MCP server's
//! authorization server for an access token (JWT-bearer grant, RFC 7523). rmcp's
//! `enterprise::EmaExchangeRequest` makes both requests and checks the ID-JAG's bindings.
//!
//! No login and no refresh token: the hub does both exchanges at connect and again before the
//! access token expires (the task of client credentials), reading the ID token again each time.
//! A failure names which of the two servers refused, and the next step.

use std::time::Duration;

use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage,
};
use rmcp::transport::auth::{OAuthHttpClient, OAuthTokenResponse};

use crate::client::oauth::store::FileStore;
use crate::client::oauth::token_error::TokenFailure;
use crate::client::oauth::workload_identity::{keep_token, read_as};
use crate::client::spec::{AssertionSource, IdentityProvider};
use crate::secret::Secret;

/// What the ID token is called in reasons.
const ID_TOKEN: &str = "enterprise ID token";

/// Who keeps an ID token file fresh, for reasons.
const ROTATED_BY: &str = "whatever signs this client in at the enterprise identity provider \
                          (its agent or sidecar) writes a fresh one before it expires";

/// One enterprise-managed exchange, as configured and discovered.
#[derive(Debug, Clone)]
pub(crate) struct Enterprise {
    pub(crate) identity_provider: IdentityProvider,
    /// Where the ID token is read from.
    pub(crate) assertion: AssertionSource,
    /// The MCP server's authorization server: its issuer and token endpoint (metadata).
    pub(crate) issuer: String,
    pub(crate) token_endpoint: String,
    /// Whether that authorization server takes the client secret in the body only
    /// (`client_secret_post`); otherwise HTTP Basic (`client_secret_basic`, the default).
    pub(crate) secret_in_body: bool,
    /// `oauth.client_id` and `oauth.client_secret`: this client at the MCP authorization server.
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<Secret>,
    pub(crate) scopes: Vec<String>,
    /// The MCP server's URL (the ID-JAG's `resource`).
    pub(crate) resource: String,
}

/// Whether metadata's `token_endpoint_auth_methods_supported` (`None`: not published) leaves
/// only `client_secret_post` for a client with a secret.
pub(crate) fn secret_in_body(methods: Option<&serde_json::Value>) -> bool {
    let Some(methods) = methods.and_then(serde_json::Value::as_array) else {
        return false;
    };
    let offers = |name: &str| methods.iter().any(|m| m.as_str() == Some(name));
    !offers("client_secret_basic") && offers("client_secret_post")
}

impl Enterprise {
    fn identity_provider(&self) -> EmaAuthorizationServer {
        let idp = &self.identity_provider;
        let server = EmaAuthorizationServer::new(&idp.issuer, &idp.token_endpoint, &idp.client_id);
        match &idp.client_secret {
            Some(secret) => {
                server.with_client_authentication(EmaClientAuthentication::ClientSecretBasic(
                    oauth2::ClientSecret::new(secret.expose().to_owned()),
                ))
            }
            None => server,
        }
    }

    fn authorization_server(&self) -> EmaAuthorizationServer {
        let server =
            EmaAuthorizationServer::new(&self.issuer, &self.token_endpoint, &self.client_id);
        match &self.client_secret {
            Some(secret) => {
                let secret = oauth2::ClientSecret::new(secret.expose().to_owned());
                server.with_client_authentication(if self.secret_in_body {
                    EmaClientAuthentication::ClientSecretPost(secret)
                } else {
                    EmaClientAuthentication::ClientSecretBasic(secret)
                })
            }
            None => server,
        }
    }

    /// The reason a person reads for `error`, and whether it is a refusal (`unauthenticated`:
    /// waiting will not help) rather than an outage (it heals).
    fn explain(&self, error: &EmaError) -> TokenFailure {
        let idp = &self.identity_provider;
        let from = self.assertion.describe();
        let (stage, what) = match error {
            EmaError::RequestFailed(stage) => {
                let who = match stage {
                    EmaExchangeStage::IdentityProvider => format!(
                        "the enterprise identity provider `{}` (its token endpoint `{}`)",
                        idp.issuer, idp.token_endpoint
                    ),
                    _ => "the MCP server's authorization server".to_owned(),
                };
                return TokenFailure::Unavailable(format!(
                    "{who} did not answer the token request; check that it is up"
                ));
            }
            EmaError::InvalidRequest(why) => {
                return TokenFailure::Refused(format!(
                    "the enterprise-managed exchange cannot be made ({why}); check \
                     `oauth.identity_provider` and `oauth.client_id`"
                ));
            }
            EmaError::InvalidGrant(stage) => (*stage, "invalid_grant".to_owned()),
            EmaError::InsufficientUserAuthentication(stage) => {
                (*stage, "insufficient_user_authentication".to_owned())
            }
            EmaError::OAuthRejected {
                stage,
                status,
                code,
            } => {
                if *status >= 500 {
                    let who = match stage {
                        EmaExchangeStage::IdentityProvider => {
                            format!("the enterprise identity provider `{}`", idp.issuer)
                        }
                        _ => "the MCP server's authorization server".to_owned(),
                    };
                    return TokenFailure::Unavailable(format!(
                        "{who} failed (HTTP {status}, {code}); it heals when it does"
                    ));
                }
                (*stage, format!("HTTP {status}, {code}"))
            }
            EmaError::InvalidResponse { stage, message } => (*stage, message.to_string()),
            _ => (
                EmaExchangeStage::ResourceAuthorizationServer,
                "an unknown error".to_owned(),
            ),
        };
        let why = match stage {
            EmaExchangeStage::IdentityProvider => format!(
                "the enterprise identity provider `{}` refused to exchange the {ID_TOKEN} {from} \
                 for an identity assertion grant ({what}); check that the ID token is current and \
                 was issued to client `{}` there, and that the identity provider lets that \
                 client reach this server",
                idp.issuer, idp.client_id
            ),
            _ => format!(
                "the MCP server's authorization server refused the identity assertion grant from \
                 the enterprise identity provider `{}` ({what}); check that it trusts that \
                 identity provider and accepts client `{}`{}",
                idp.issuer,
                self.client_id,
                if self.client_secret.is_some() {
                    " with `oauth.client_secret`"
                } else {
                    ""
                }
            ),
        };
        TokenFailure::Refused(why)
    }
}

/// Reads the ID token, makes both exchanges and saves the access token in `store`; returns its
/// lifetime. The error says whether it was refused (a reason for `unauthenticated`, naming the
/// server that refused) or failed otherwise (an outage: it heals).
pub(crate) async fn fetch(
    http: &dyn OAuthHttpClient,
    grant: &Enterprise,
    store: &FileStore,
) -> Result<Option<Duration>, TokenFailure> {
    let (id_token, _expires_at) = read_as(&grant.assertion, ID_TOKEN, ROTATED_BY)
        .await
        .map_err(TokenFailure::Refused)?;
    let exchanged = EmaExchangeRequest::new_with_id_token(
        grant.identity_provider(),
        grant.authorization_server(),
        &grant.resource,
        id_token.expose(),
    )
    .with_scopes(grant.scopes.clone())
    .exchange(http, http)
    .await
    .map_err(|e| grant.explain(&e))?;
    let lifetime = exchanged.expires_in;
    let mut scopes: Vec<String> = exchanged.scopes.iter().cloned().collect();
    scopes.sort();
    let mut response = serde_json::json!({
        "access_token": exchanged.access_token.secret(),
        "token_type": "bearer",
    });
    if let Some(lifetime) = lifetime {
        response["expires_in"] = lifetime.as_secs().into();
    }
    if !scopes.is_empty() {
        response["scope"] = scopes.join(" ").into();
    }
    let token: OAuthTokenResponse = serde_json::from_value(response).map_err(|_| {
        TokenFailure::Unavailable(
            "the MCP server's authorization server's token response cannot be kept".to_owned(),
        )
    })?;
    let granted = if scopes.is_empty() {
        grant.scopes.clone()
    } else {
        scopes
    };
    let issuer = Some(grant.issuer.clone());
    keep_token(store, grant.client_id.clone(), token, granted, issuer).await?;
    Ok(lifetime)
}

#[cfg(test)]
mod tests {
    use super::secret_in_body;

    #[test]
    fn the_secret_goes_in_the_body_only_where_the_authorization_server_offers_nothing_else() {
        assert!(!secret_in_body(None));
        assert!(!secret_in_body(Some(&serde_json::json!([
            "client_secret_basic",
            "client_secret_post"
        ]))));
        assert!(secret_in_body(Some(&serde_json::json!([
            "client_secret_post"
        ]))));
    }
}
