//! `mcpServers.<name>.oauth.identity_provider` → [`IdentityProvider`]: the enterprise identity
//! provider of `"grant": "enterprise_managed"`.
//!
//! ```json
//! "identity_provider": {
//!   "issuer": "https://idp.example.com",
//!   "token_endpoint": "https://idp.example.com/oauth2/token",
//!   "client_id": "mcp-readiness",
//!   "client_secret": "${IDP_CLIENT_SECRET}"
//! }
//! ```

use super::error::ConfigError;
use super::node::Node;
use super::walk::Ctx;
use crate::client::IdentityProvider;

const KEYS: &[&str] = &["issuer", "token_endpoint", "client_id", "client_secret"];

/// Reads the `identity_provider` object at `path`.
pub(crate) fn identity_provider(
    ctx: &Ctx<'_>,
    node: &Node,
    path: &str,
) -> Result<IdentityProvider, ConfigError> {
    let fields = ctx.object(node, path, "`identity_provider`", Some(KEYS))?;
    let required = |key: &str, what: &str| -> Result<String, ConfigError> {
        let missing = format!("missing: `identity_provider` needs {what}");
        let (node, path) = ctx.required(&fields, key, missing)?;
        let value = ctx.string(node, &path)?;
        if value.trim().is_empty() || value.chars().any(char::is_control) {
            return Err(ctx.err(
                &path,
                format!("expected {what}, found an empty string or a control character"),
            ));
        }
        Ok(value)
    };
    let url = |key: &str, what: &str| -> Result<String, ConfigError> {
        let value = required(key, what)?;
        let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
            .iter()
            .any(|prefix| {
                value
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '/']))
            });
        if !value.starts_with("https://") && !loopback {
            return Err(ctx.err(
                &fields.path_of(key),
                format!("expected {what} as an https:// URL (http:// only on loopback)"),
            ));
        }
        Ok(value)
    };
    let issuer = url(
        "issuer",
        "the identity provider's issuer identifier (the `iss` of the ID tokens it issues)",
    )?;
    let token_endpoint = url(
        "token_endpoint",
        "the identity provider's token endpoint (where the ID token is exchanged)",
    )?;
    let client_id = required(
        "client_id",
        "the client id this client is registered as at the identity provider",
    )?;
    let client_secret = match fields.given("client_secret") {
        None => None,
        Some((node, path)) => {
            let secret = ctx.secret(node, &path)?;
            if secret.expose().is_empty() {
                return Err(ctx.err(
                    &path,
                    "expected the client secret at the identity provider, found an empty \
                     string: remove `client_secret` for a public client",
                ));
            }
            Some(secret)
        }
    };
    Ok(IdentityProvider {
        issuer,
        token_endpoint,
        client_id,
        client_secret,
    })
}
