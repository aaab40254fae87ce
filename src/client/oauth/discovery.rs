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

/// What an unauthenticated first request to the MCP server found.
#[derive(Debug, Default, Clone)]
pub(crate) struct Challenge {
    /// The `WWW-Authenticate` challenge of a 401 (or 403), when it answered with one.
    pub(crate) header: Option<String>,
    /// Otherwise what it answered, in words (`HTTP 200 OK with an HTML page (a login page?)`),
    /// when it answered at all.
    pub(crate) answered: Option<String>,
}

/// The `WWW-Authenticate` challenge of an unauthenticated first request to `url`
/// (`server/discover`, then `initialize`), when the server answers 401 (or 403) with one;
/// otherwise what it answered, or nothing when it cannot be reached (the discovery that follows
/// says what is wrong).
pub(crate) async fn challenge(http: &reqwest::Client, url: &str) -> Challenge {
    let mut answered = None;
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
            break;
        };
        let status = response.status();
        if matches!(status.as_u16(), 401 | 403) {
            let found = response
                .headers()
                .get_all(http::header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find(|v| v.trim_start().to_ascii_lowercase().starts_with("bearer"))
                .map(str::to_owned);
            if found.is_some() {
                return Challenge {
                    header: found,
                    answered: None,
                };
            }
        }
        if answered.is_none() {
            answered = Some(answer_in_words(&response));
        }
    }
    Challenge {
        header: None,
        answered,
    }
}

/// A response that carried no challenge, in words: its status, and a page or a redirect named.
fn answer_in_words(response: &reqwest::Response) -> String {
    let status = response.status();
    let html = crate::client::reasons::reason::answered_html(response);
    let what = if status.is_redirection() {
        " (a redirect: the URL may be behind a login, or moved)"
    } else if html {
        " with an HTML page (a login page?)"
    } else {
        ""
    };
    format!("HTTP {status}{what}")
}

/// The authorization server metadata of `url`'s server, discovered from `challenge` first.
/// Errors say what was tried and what to do; they never contain a token or secret.
pub(crate) async fn metadata(
    manager: &AuthorizationManager,
    url: &str,
    challenge: &Challenge,
) -> Result<AuthorizationMetadata, String> {
    // What the unauthenticated request got, unless the failure already says what was answered.
    let said = |what: &str| match &challenge.answered {
        Some(answered) if !what.contains("it answered HTTP") => {
            format!("{what} (the MCP server answered {answered} to an unauthenticated request)")
        }
        _ => what.to_owned(),
    };
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.header.as_deref())
        .await
        .map_err(|e| {
            said(&format!(
                "OAuth discovery failed: {}",
                crate::client::reasons::reason::explain(&e)
            ))
        })?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(no_metadata(challenge, has_path(url)));
    }
    Ok(resolution.metadata)
}

/// Whether `url` has a path beyond `/` (then the path-based well-known URLs come first).
fn has_path(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| !u.path().trim_matches('/').is_empty())
}

/// The message of a discovery that found nothing: the places tried, by well-known path (the
/// server's URL itself may carry a credential in its path, so it is not repeated).
fn no_metadata(challenge: &Challenge, path_based: bool) -> String {
    let tried = |suffix: &str| {
        if path_based {
            format!("`/.well-known/{suffix}/<the URL's path>`, then `/.well-known/{suffix}`")
        } else {
            format!("`/.well-known/{suffix}`")
        }
    };
    format!(
        "found no OAuth metadata: {}, no protected resource metadata (RFC 9728) is published at \
         {} of the server's origin, and no authorization server metadata at {} or {} (RFC 8414 / \
         OpenID Connect). The server may not use OAuth (remove `oauth`, or give it an \
         `Authorization` header), or its URL is wrong",
        match (&challenge.header, &challenge.answered) {
            (Some(_), _) => "its 401 challenge named no `resource_metadata`".to_owned(),
            (None, Some(answered)) =>
                format!("it answered {answered} to an unauthenticated request, not a 401 challenge"),
            (None, None) => "it answered without a 401 challenge".to_owned(),
        },
        tried("oauth-protected-resource"),
        tried("oauth-authorization-server"),
        tried("openid-configuration"),
    )
}

#[cfg(test)]
mod tests {
    use super::{Challenge, has_path, no_metadata};

    #[test]
    fn the_message_names_the_path_based_well_known_urls_before_the_root_ones() {
        assert!(has_path("https://h.example/mcp/v1?x=1"));
        assert!(!has_path("http://127.0.0.1:9/"));
        let challenged = Challenge {
            header: Some("Bearer realm=\"x\"".into()),
            answered: None,
        };
        let message = no_metadata(&challenged, true);
        assert!(
            message.contains(
                "`/.well-known/oauth-protected-resource/<the URL's path>`, then \
                 `/.well-known/oauth-protected-resource`"
            ),
            "{message}"
        );
        assert!(
            message.contains("`/.well-known/openid-configuration"),
            "{message}"
        );
        assert!(no_metadata(&Challenge::default(), false).contains("without a 401 challenge"));
        let login_page = Challenge {
            header: None,
            answered: Some("HTTP 200 OK with an HTML page (a login page?)".into()),
        };
        assert!(no_metadata(&login_page, false).contains(
            "it answered HTTP 200 OK with an HTML page (a login page?) to an \
                 unauthenticated request, not a 401 challenge"
        ));
    }
}
