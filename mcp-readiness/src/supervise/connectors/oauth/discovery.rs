//! Finding a server's authorization server, in the order of the MCP authorization spec
//! (2025-11-25 and 2026-07-28): the `WWW-Authenticate` challenge of an unauthenticated request
//! (its `resource_metadata` and `scope`), then RFC 9728 protected resource metadata at the
//! path-based and root well-known URLs, then RFC 8414 / OpenID Connect discovery on the
//! authorization server (path insertion first). Where nothing is published the login fails at
//! once with the URLs it tried, instead of opening a guessed `/authorize` that does not exist.

use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
};

/// The probes, newest protocol first: 2026-07-28 has no `initialize` (a server of it may refuse
/// one before it looks at the credentials), older servers may not know `server/discover`.
const PROBES: &[(&str, &str)] = &[
    (
        "2026-07-28",
        r#"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}"#,
    ),
    (
        "2025-11-25",
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-readiness","version":"0"}}}"#,
    ),
];

/// The `WWW-Authenticate` challenge of an unauthenticated first request to `url`
/// (`server/discover`, then `initialize`), when the server answers 401 (or 403) with one; `None`
/// when it answers neither with a challenge or cannot be reached (the discovery that follows
/// says what is wrong).
pub(crate) async fn challenge(http: &reqwest::Client, url: &str) -> Option<String> {
    for (version, body) in PROBES {
        let Ok(response) = http
            .post(url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", *version)
            .body(*body)
            .send()
            .await
        else {
            return None;
        };
        if !matches!(response.status().as_u16(), 401 | 403) {
            continue;
        }
        let found = response
            .headers()
            .get_all(http::header::WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
            .map(str::to_owned);
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The authorization server metadata of `url`'s server, discovered from `challenge` first.
/// Errors say what was tried and what to do; they never contain a token or secret.
pub(crate) async fn metadata(
    manager: &AuthorizationManager,
    url: &str,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, String> {
    let resolution = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(|e| format!("authorization server discovery failed: {e}"))?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(format!(
            "found no OAuth metadata: {} named no `resource_metadata`, no protected resource \
             metadata (RFC 9728) is published at {}, and no authorization server metadata \
             (RFC 8414 / OpenID Connect) at {}. The server may not use OAuth (remove `oauth`, or \
             give it an `Authorization` header), or its URL is wrong",
            if challenge.is_some() {
                "its 401 challenge"
            } else {
                "it answered without a 401 challenge and"
            },
            well_known(url, "oauth-protected-resource"),
            well_known(url, "oauth-authorization-server"),
        ));
    }
    Ok(resolution.metadata)
}

/// The well-known URLs of `suffix` for `url` (path-based first, then the root), for messages.
fn well_known(url: &str, suffix: &str) -> String {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return format!("/.well-known/{suffix}");
    };
    let origin = parsed.origin().ascii_serialization();
    let path = parsed.path().trim_matches('/');
    if path.is_empty() {
        format!("{origin}/.well-known/{suffix}")
    } else {
        format!("{origin}/.well-known/{suffix}/{path} and {origin}/.well-known/{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::well_known;

    #[test]
    fn the_message_names_the_path_based_url_before_the_root_one() {
        assert_eq!(
            well_known("https://h.example/mcp/v1?x=1", "oauth-protected-resource"),
            "https://h.example/.well-known/oauth-protected-resource/mcp/v1 and \
             https://h.example/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            well_known("http://127.0.0.1:9/", "oauth-authorization-server"),
            "http://127.0.0.1:9/.well-known/oauth-authorization-server"
        );
    }
}
