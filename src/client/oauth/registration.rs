//! Which client a login authorizes as, in the MCP spec's order: the client registered by hand
//! (`oauth.client_id`); else the registration kept in the store, when it belongs to the same
//! authorization server; else a Client ID Metadata Document URL (`oauth.client_metadata_url`)
//! where the authorization server advertises `client_id_metadata_document_supported`; else
//! Dynamic Client Registration (RFC 7591) at its `registration_endpoint`. A new registration is
//! written to the store before the browser is opened, so a login that is abandoned still reuses
//! it next time.

use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadata};

use crate::client::oauth::store::{FileStore, Registration};
use crate::client::spec::OAuthSpec;
use crate::secret::Secret;

/// The name this client registers under.
const CLIENT_NAME: &str = "mcp-readiness";

/// The client a login uses.
#[derive(Debug)]
pub(crate) struct Client {
    /// Its id.
    pub(crate) id: String,
    /// Its secret, if it has one.
    pub(crate) secret: Option<Secret>,
    /// Where it came from, for the login's message.
    pub(crate) how: &'static str,
}

/// The client to authorize as with the authorization server of `metadata`; registers one when
/// needed (`manager` must hold `metadata`). `redirect` is the redirect URI of this login.
pub(crate) async fn client(
    manager: &mut AuthorizationManager,
    metadata: &AuthorizationMetadata,
    spec: &OAuthSpec,
    store: &FileStore,
    redirect: &str,
    scopes: &[String],
) -> Result<Client, String> {
    if let Some(id) = &spec.client_id {
        return Ok(Client {
            id: id.clone(),
            secret: spec.client_secret.clone(),
            how: "the configured client",
        });
    }
    let kept = store.registration().await.unwrap_or(None);
    if let Some(kept) = kept.filter(|r| {
        r.belongs_to(metadata.issuer.as_deref(), &metadata.token_endpoint)
            && (r.method == METADATA_DOCUMENT || r.redirect_uri == redirect)
            && (r.method != METADATA_DOCUMENT
                || spec.client_metadata_url.as_ref() == Some(&r.client_id))
    }) {
        return Ok(Client {
            id: kept.client_id,
            secret: kept.client_secret.map(Secret::new),
            how: "the registration kept in the store",
        });
    }
    let supports_cimd = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let registration = match &spec.client_metadata_url {
        Some(url) if supports_cimd => Registration {
            client_id: url.clone(),
            client_secret: None,
            method: METADATA_DOCUMENT.to_owned(),
            issuer: metadata.issuer.clone(),
            token_endpoint: metadata.token_endpoint.clone(),
            redirect_uri: redirect.to_owned(),
        },
        _ if metadata.registration_endpoint.is_some() => {
            let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let config = manager
                .register_client(CLIENT_NAME, redirect, &scopes)
                .await
                .map_err(|e| crate::client::reasons::reason::explain(&e))?;
            if let Some(secret) = &config.client_secret {
                crate::secret::remember([Secret::new(secret.clone())]);
            }
            Registration {
                client_id: config.client_id,
                client_secret: config.client_secret,
                method: DYNAMIC.to_owned(),
                issuer: metadata.issuer.clone(),
                token_endpoint: metadata.token_endpoint.clone(),
                redirect_uri: redirect.to_owned(),
            }
        }
        _ => {
            return Err(format!(
                "the authorization server offers no way to register this client (no \
                 `registration_endpoint`{}): register a client with it by hand and set \
                 `oauth.client_id`",
                if spec.client_metadata_url.is_some() {
                    ", and it does not advertise `client_id_metadata_document_supported`"
                } else {
                    ", and no `oauth.client_metadata_url` is configured"
                }
            ));
        }
    };
    store.save_registration(registration.clone()).await?;
    let how = if registration.method == DYNAMIC {
        "a new Dynamic Client Registration"
    } else {
        "its Client ID Metadata Document URL"
    };
    Ok(Client {
        id: registration.client_id,
        secret: registration.client_secret.map(Secret::new),
        how,
    })
}

/// `Registration::method` of Dynamic Client Registration.
pub(crate) const DYNAMIC: &str = "dynamic";
/// `Registration::method` of a Client ID Metadata Document URL.
pub(crate) const METADATA_DOCUMENT: &str = "metadata_document";

/// The port of a loopback redirect URI kept in a registration (`None` for anything else), so the
/// next login listens where the authorization server expects it.
pub(crate) fn registered_port(redirect: &str) -> Option<u16> {
    let rest = redirect.strip_prefix("http://127.0.0.1:")?;
    rest.split('/').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use crate::client::oauth::registration::registered_port;

    #[test]
    fn a_kept_loopback_redirect_gives_its_port_back() {
        assert_eq!(
            registered_port("http://127.0.0.1:8976/callback"),
            Some(8976)
        );
        assert_eq!(registered_port("https://example.com/cb"), None);
    }
}
