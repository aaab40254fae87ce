//! Machine-to-machine OAuth (`"grant": "client_credentials"`, the MCP client-credentials
//! extension): the token is fetched at connect and renewed by a task of the hub before it
//! expires, authenticated with the client secret (`client_secret_basic` or `client_secret_post`,
//! per the authorization server's metadata) or a JWT assertion signed with a private key
//! (`private_key_jwt`, RFC 7523). There is no refresh token and no login.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, ClientCredentialsConfig, JwtSigningAlgorithm,
};
use tokio::sync::Mutex;

use crate::client::oauth::store::FileStore;
use crate::client::oauth::token_error::{TokenErrorAnswer, TokenFailure};
use crate::client::spec::SigningAlgorithm;
use crate::client::spec::{OAuthGrant, OAuthSpec};
use crate::secret::{Secret, redact};

/// The longest a token is renewed ahead of its expiry.
const MAX_MARGIN: Duration = Duration::from_secs(120);

/// How long after a failed renewal the next one is tried (while the token lasts).
const RETRY: Duration = Duration::from_secs(10);

/// The longest wait between renewals while the server refuses every token for want of a scope.
pub(crate) const MAX_STEP_UP_PACE: Duration = Duration::from_secs(300);

/// The wait before the next renewal: the token's renewal interval; while the server refuses
/// every token for want of a scope (a step-up), twice the last wait, at least the renewal
/// interval and at most [`MAX_STEP_UP_PACE`]: a server that refuses every token sees at most one
/// token request per renewal interval, fewer and fewer.
pub(crate) fn renewal_wait(lifetime: Duration, step_up_pending: bool, last: Duration) -> Duration {
    let interval = lifetime.saturating_sub(margin(lifetime));
    if step_up_pending {
        (last * 2).clamp(interval, MAX_STEP_UP_PACE.max(interval))
    } else {
        interval
    }
}

/// The token request's configuration for `spec` (a client-credentials spec) and resource `url`.
/// Reads the private key file; errors name the file, never its content.
pub(crate) fn config(spec: &OAuthSpec, url: &str) -> Result<ClientCredentialsConfig, String> {
    let OAuthGrant::ClientCredentials {
        private_key,
        signing_algorithm,
    } = &spec.grant
    else {
        return Err("not a client-credentials grant".to_owned());
    };
    let client_id = spec
        .client_id
        .clone()
        .ok_or("client credentials need `oauth.client_id`")?;
    let resource = Some(url.to_owned());
    let scopes = spec.scopes.clone();
    match (private_key, &spec.client_secret) {
        (Some(path), _) => {
            let signing_key = std::fs::read(path).map_err(|e| {
                format!(
                    "cannot read the private key `{}` (`oauth.private_key`): {e}",
                    path.display()
                )
            })?;
            Ok(ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_key,
                signing_algorithm: algorithm(*signing_algorithm),
                token_endpoint_audience: None,
                scopes,
                resource,
            })
        }
        (None, Some(secret)) => Ok(ClientCredentialsConfig::ClientSecret {
            client_id,
            client_secret: secret.expose().to_owned(),
            scopes,
            resource,
        }),
        (None, None) => Err("client credentials need `oauth.client_secret` or \
                             `oauth.private_key`"
            .to_owned()),
    }
}

/// rmcp's algorithm for the configured one.
fn algorithm(algorithm: SigningAlgorithm) -> JwtSigningAlgorithm {
    match algorithm {
        SigningAlgorithm::Rs256 => JwtSigningAlgorithm::RS256,
        SigningAlgorithm::Rs384 => JwtSigningAlgorithm::RS384,
        SigningAlgorithm::Rs512 => JwtSigningAlgorithm::RS512,
        SigningAlgorithm::Es256 => JwtSigningAlgorithm::ES256,
        SigningAlgorithm::Es384 => JwtSigningAlgorithm::ES384,
    }
}

/// What to rotate when the authorization server refuses the client credentials.
pub(crate) fn what_to_rotate(spec: &OAuthSpec) -> String {
    match &spec.grant {
        OAuthGrant::ClientCredentials {
            private_key: Some(path),
            ..
        } => format!(
            "check that the authorization server still accepts the key `{}` (`oauth.private_key`) \
             for client `{}`, or rotate it",
            path.display(),
            spec.client_id.as_deref().unwrap_or_default()
        ),
        _ => format!(
            "rotate `oauth.client_secret` of client `{}` (the secret may have been rotated away \
             or revoked) and restart or reload",
            spec.client_id.as_deref().unwrap_or_default()
        ),
    }
}

/// How long before its expiry a token of `lifetime` is renewed: `min(3/5 of it, 2 min)`, always
/// more than rmcp's own refresh window (`min(30 s, lifetime / 2)`), so rmcp never finds it
/// expiring (it could not refresh it: there is no refresh token).
pub(crate) fn margin(lifetime: Duration) -> Duration {
    (lifetime * 3 / 5).min(MAX_MARGIN)
}

/// Fetches a token now (`manager` configured for `config`); the error is the message for the
/// server's reason, redacted of `known` secrets, and whether the credentials were refused (as
/// opposed to the authorization server being unreachable).
///
/// rmcp's `exchange_client_credentials` future is not `Send` (its `private_key_jwt` branch holds
/// a form serializer across an await), so it runs on a blocking thread that drives it on this
/// runtime.
pub(crate) async fn fetch(
    manager: Arc<Mutex<AuthorizationManager>>,
    config: &ClientCredentialsConfig,
    known: &[Secret],
) -> Result<Option<Duration>, TokenFailure> {
    let handle = tokio::runtime::Handle::current();
    let request = config.clone();
    let exchanged = tokio::task::spawn_blocking(move || {
        handle.block_on(async move {
            let manager = manager.lock().await;
            manager
                .exchange_client_credentials(&request)
                .await
                .map(|token| oauth2::TokenResponse::expires_in(&token))
        })
    })
    .await
    .unwrap_or_else(|_| {
        Err(AuthError::InternalError(
            "the token request was cancelled".to_owned(),
        ))
    });
    match exchanged {
        Ok(lifetime) => Ok(lifetime),
        Err(e) => {
            // Classified on the token endpoint's status and `error` field, which rmcp keeps only
            // in its error's text; a key that cannot sign is refused too. Told in words.
            let text = redact(&crate::client::reasons::reason::explain(&e), known);
            let refused = matches!(e, AuthError::JwtSigningError(_))
                || TokenErrorAnswer::from_rmcp_text(&e.to_string())
                    .is_some_and(|answer| answer.is_refusal());
            Err(if refused {
                TokenFailure::Refused(text)
            } else {
                TokenFailure::Unavailable(text)
            })
        }
    }
}

/// Renews the token of `manager` before each expiry, until `manager` is dropped, with `renew`
/// (which fetches a token and returns its lifetime). `lifetime` is the current token's. A renewal
/// that is refused ([`TokenFailure::Refused`], the reason a person reads) is recorded in `store`: the
/// server reads `unauthenticated` with it once the token runs out. One that fails for another
/// reason is retried every 10 s while the token lasts. Shared by every grant the hub renews.
pub(crate) fn spawn_renewal<F, Fut>(
    manager: Weak<Mutex<AuthorizationManager>>,
    renew: F,
    store: FileStore,
    lifetime: Option<Duration>,
) where
    F: Fn(Arc<Mutex<AuthorizationManager>>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<Option<Duration>, TokenFailure>> + Send,
{
    let Some(mut lifetime) = lifetime else {
        // No `expires_in`: the token does not expire as far as anyone said.
        return;
    };
    tokio::spawn(async move {
        // Counted from when each token was asked for: its lifetime starts then.
        let mut wait = renewal_wait(lifetime, false, Duration::ZERO);
        let mut next = tokio::time::Instant::now() + wait;
        loop {
            tokio::time::sleep_until(next).await;
            let Some(manager) = manager.upgrade() else {
                return;
            };
            let asked = tokio::time::Instant::now();
            let result = renew(manager).await;
            match result {
                Ok(Some(renewed)) => {
                    store.clear_rejection();
                    lifetime = renewed;
                    wait = renewal_wait(lifetime, store.step_up_pending(), wait);
                    next = asked + wait;
                }
                Ok(None) => {
                    store.clear_rejection();
                    return;
                }
                Err(failure) => {
                    tracing::warn!(reason = %failure.reason(), "renewing the OAuth token failed");
                    if let TokenFailure::Refused(why) = failure {
                        store.reject(why);
                    }
                    next = tokio::time::Instant::now() + RETRY;
                }
            }
        }
    });
}

/// The reason a person reads when the authorization server refused the client credentials.
pub(crate) fn refused(why: &str, rotate: &str) -> String {
    format!("the authorization server refused the client credentials ({why}); {rotate}")
}

#[cfg(test)]
mod tests {
    use super::{MAX_STEP_UP_PACE, margin, renewal_wait};
    use std::time::Duration;

    /// The storm of issue 38 had a 3 s token renewed every 1.2 s for a server that refused
    /// every token: 18 token requests in 21 s. Paced, the waits double from the renewal
    /// interval: 5 requests in those 21 s, and never more than one per 5 minutes later on.
    #[test]
    fn renewals_for_a_server_that_refuses_every_token_back_off_from_the_renewal_interval() {
        let lifetime = Duration::from_secs(3);
        let interval = renewal_wait(lifetime, false, Duration::ZERO);
        assert_eq!(interval, Duration::from_millis(1200));
        assert_eq!(
            renewal_wait(lifetime, false, Duration::from_secs(60)),
            interval
        );
        let (mut wait, mut at, mut requests) = (interval, interval, 1);
        while at + renewal_wait(lifetime, true, wait) <= Duration::from_secs(21) {
            wait = renewal_wait(lifetime, true, wait);
            assert!(wait >= interval, "never more than one per renewal interval");
            at += wait;
            requests += 1;
        }
        assert_eq!(requests, 4, "at 1.2, 3.6, 8.4 and 18 s");
        for _ in 0..20 {
            wait = renewal_wait(lifetime, true, wait);
        }
        assert_eq!(wait, MAX_STEP_UP_PACE);
        // A token whose renewal interval is longer than the cap keeps its interval.
        let day = Duration::from_secs(86_400);
        let day_interval = renewal_wait(day, false, Duration::ZERO);
        assert_eq!(renewal_wait(day, true, day_interval), day_interval);
    }

    #[test]
    fn a_token_is_renewed_before_rmcp_would_find_it_expiring() {
        for secs in [2u64, 10, 60, 61, 120, 300, 3600, 86_400] {
            let lifetime = Duration::from_secs(secs);
            let rmcp_window = Duration::from_secs(30).min(lifetime / 2);
            assert!(margin(lifetime) > rmcp_window, "{secs} s");
            assert!(margin(lifetime) < lifetime, "{secs} s");
        }
        assert_eq!(margin(Duration::from_secs(3600)), Duration::from_secs(120));
    }
}
