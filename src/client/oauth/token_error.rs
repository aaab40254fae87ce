//! Why a token request gave no token, decided once from what the token endpoint answered: its
//! HTTP status and the OAuth `error` field of its JSON body (RFC 6749 section 5.2 and the codes
//! later specifications added), never by looking for words in a message.
//!
//! Every grant the hub renews (client credentials, workload identity, enterprise-managed
//! authorization) ends a failed request in a [`TokenFailure`]: refused (the server reads
//! `unauthenticated`: waiting will not help) or unavailable (the authorization server is down or
//! failing: it heals).

/// The token endpoint's `error` code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenErrorCode {
    /// `invalid_request`: a parameter is missing, repeated or malformed.
    InvalidRequest,
    /// `invalid_client`: the client's authentication failed (a wrong or rotated secret or key).
    InvalidClient,
    /// `invalid_grant`: the grant (a refresh token, an assertion) is invalid, expired or revoked.
    InvalidGrant,
    /// `unauthorized_client`: this client may not use this grant.
    UnauthorizedClient,
    /// `unsupported_grant_type`: the authorization server does not offer this grant.
    UnsupportedGrantType,
    /// `invalid_scope`: a requested scope is unknown or not allowed.
    InvalidScope,
    /// `access_denied`: the resource owner or the server said no.
    AccessDenied,
    /// `invalid_target` (RFC 8707): the resource is not one this server issues tokens for.
    InvalidTarget,
    /// `invalid_dpop_proof` (RFC 9449).
    InvalidDpopProof,
    /// `use_dpop_nonce` (RFC 9449): try again with the server's nonce.
    UseDpopNonce,
    /// `insufficient_user_authentication` (RFC 9470): the person must sign in again, more strongly.
    InsufficientUserAuthentication,
    /// Any other code, cut to 64 printable characters.
    Other(String),
}

impl TokenErrorCode {
    /// The code of an `error` field.
    pub(crate) fn parse(code: &str) -> Self {
        match code {
            "invalid_request" => Self::InvalidRequest,
            "invalid_client" => Self::InvalidClient,
            "invalid_grant" => Self::InvalidGrant,
            "unauthorized_client" => Self::UnauthorizedClient,
            "unsupported_grant_type" => Self::UnsupportedGrantType,
            "invalid_scope" => Self::InvalidScope,
            "access_denied" => Self::AccessDenied,
            "invalid_target" => Self::InvalidTarget,
            "invalid_dpop_proof" => Self::InvalidDpopProof,
            "use_dpop_nonce" => Self::UseDpopNonce,
            "insufficient_user_authentication" => Self::InsufficientUserAuthentication,
            other => Self::Other(other.chars().filter(|c| !c.is_control()).take(64).collect()),
        }
    }

    /// The code as the token endpoint wrote it.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::InvalidClient => "invalid_client",
            Self::InvalidGrant => "invalid_grant",
            Self::UnauthorizedClient => "unauthorized_client",
            Self::UnsupportedGrantType => "unsupported_grant_type",
            Self::InvalidScope => "invalid_scope",
            Self::AccessDenied => "access_denied",
            Self::InvalidTarget => "invalid_target",
            Self::InvalidDpopProof => "invalid_dpop_proof",
            Self::UseDpopNonce => "use_dpop_nonce",
            Self::InsufficientUserAuthentication => "insufficient_user_authentication",
            Self::Other(code) => code,
        }
    }

    /// Whether the code says no to this client, this grant or these scopes (waiting will not
    /// help), whatever the status it came with.
    fn refuses(&self) -> bool {
        matches!(
            self,
            Self::InvalidClient
                | Self::InvalidGrant
                | Self::UnauthorizedClient
                | Self::InvalidScope
                | Self::AccessDenied
        )
    }
}

/// What a token endpoint's error answer said: its HTTP status (when known) and its `error` code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TokenErrorAnswer {
    /// The HTTP status.
    pub(crate) status: Option<u16>,
    /// The `error` field of the JSON body.
    pub(crate) code: Option<TokenErrorCode>,
}

impl TokenErrorAnswer {
    /// The answer a token endpoint gave: `status` and `body` (an RFC 6749 error object, or not).
    pub(crate) fn parse(status: u16, body: &[u8]) -> Self {
        let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        TokenErrorAnswer {
            status: Some(status),
            code: code_of(&json),
        }
    }

    /// The answer inside rmcp's error text (`HTTP 401: {"error":"invalid_client"}`): rmcp keeps
    /// the token endpoint's status and body only as that text. `None` when it holds neither.
    pub(crate) fn from_rmcp_text(text: &str) -> Option<Self> {
        let status = text.split("HTTP ").skip(1).find_map(|rest| {
            let digits = rest.get(..3)?;
            digits
                .parse::<u16>()
                .ok()
                .filter(|s| (100..600).contains(s))
        });
        let code = text
            .find('{')
            .and_then(|at| {
                let mut values = serde_json::Deserializer::from_str(&text[at..])
                    .into_iter::<serde_json::Value>();
                values.next()?.ok().and_then(|json| code_of(&json))
            })
            .or_else(|| code_after_prefix(text));
        (status.is_some() || code.is_some()).then_some(TokenErrorAnswer { status, code })
    }

    /// Whether the authorization server refused (a 4xx other than a timeout or a rate limit, or
    /// a refusing code): waiting will not help. Anything else (a 5xx, a 408, a 429) heals.
    pub(crate) fn is_refusal(&self) -> bool {
        match self.status {
            Some(408 | 429) => false,
            Some(status) if (400..500).contains(&status) => true,
            Some(_) => false,
            None => self.code.as_ref().is_some_and(TokenErrorCode::refuses),
        }
    }

    /// `HTTP 401, invalid_client` (or what of it is known), for a reason.
    pub(crate) fn describe(&self) -> String {
        match (self.status, &self.code) {
            (Some(status), Some(code)) => format!("HTTP {status}, {}", code.as_str()),
            (Some(status), None) => format!("HTTP {status}, no error code"),
            (None, Some(code)) => code.as_str().to_owned(),
            (None, None) => "no error code".to_owned(),
        }
    }
}

/// Where rmcp's text puts the `error` code it parsed: after oauth2's "Server returned error
/// response: " (a client secret's request) or right after "Token exchange failed: " (a signed
/// assertion's). Only a code this client knows counts: a word in that place that is not one is
/// not taken for a code.
const CODE_PREFIXES: [&str; 2] = [
    "Server returned error response: ",
    "Token exchange failed: ",
];

fn code_after_prefix(text: &str) -> Option<TokenErrorCode> {
    CODE_PREFIXES.iter().find_map(|prefix| {
        let rest = &text[text.find(prefix)? + prefix.len()..];
        let word = rest
            .split(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .next()?;
        match TokenErrorCode::parse(word) {
            TokenErrorCode::Other(_) => None,
            known => Some(known),
        }
    })
}

fn code_of(json: &serde_json::Value) -> Option<TokenErrorCode> {
    json.get("error")
        .and_then(serde_json::Value::as_str)
        .map(TokenErrorCode::parse)
}

/// How a token request failed, with the reason a person reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenFailure {
    /// The authorization server (or the identity provider, or the workload's own token) said no:
    /// the server reads `unauthenticated` until someone fixes the credentials.
    Refused(String),
    /// The token could not be had for now (the authorization server unreachable or failing, a
    /// store that could not be written): it heals.
    Unavailable(String),
}

impl TokenFailure {
    /// The reason a person reads.
    pub(crate) fn reason(&self) -> &str {
        match self {
            TokenFailure::Refused(why) | TokenFailure::Unavailable(why) => why,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_is_read_from_the_error_field_not_from_words_in_the_text() {
        let answer = TokenErrorAnswer::parse(
            400,
            br#"{"error":"invalid_grant","error_description":"invalid_client in words"}"#,
        );
        assert_eq!(answer.code, Some(TokenErrorCode::InvalidGrant));
        assert!(answer.is_refusal());
        assert_eq!(answer.describe(), "HTTP 400, invalid_grant");
        // A description that names a code is not the code.
        let answer = TokenErrorAnswer::parse(503, br#"{"error_description":"invalid_client"}"#);
        assert_eq!(answer.code, None);
        assert!(!answer.is_refusal());
    }

    #[test]
    fn rmcps_text_gives_the_status_and_the_code() {
        let answer =
            TokenErrorAnswer::from_rmcp_text(r#"HTTP 401: {"error":"invalid_client"} trailing"#)
                .unwrap();
        assert_eq!(answer.status, Some(401));
        assert_eq!(answer.code, Some(TokenErrorCode::InvalidClient));
        assert!(answer.is_refusal());
        let outage = TokenErrorAnswer::from_rmcp_text("HTTP 502: bad gateway").unwrap();
        assert_eq!((outage.status, outage.code.clone()), (Some(502), None));
        assert!(!outage.is_refusal());
        assert_eq!(TokenErrorAnswer::from_rmcp_text("connection refused"), None);
        // No status: the code decides.
        let code_only = TokenErrorAnswer::from_rmcp_text(r#"{"error":"access_denied"}"#).unwrap();
        assert!(code_only.is_refusal());
        let other = TokenErrorAnswer::from_rmcp_text(r#"{"error":"temporarily_unavailable"}"#);
        assert!(!other.unwrap().is_refusal());
        // rmcp's two texts for a refused client-credentials request: a client secret's (through
        // oauth2) and a signed assertion's.
        for text in [
            "Token exchange failed: Server returned error response: invalid_client: Client \
             authentication failed",
            "Token exchange failed: invalid_client: bad assertion",
        ] {
            let answer = TokenErrorAnswer::from_rmcp_text(text).unwrap();
            assert_eq!(answer.code, Some(TokenErrorCode::InvalidClient), "{text}");
            assert!(answer.is_refusal(), "{text}");
        }
        // Not a code in that place: an outage.
        for text in [
            "Token exchange failed: Request failed",
            "Token exchange failed: Server returned error response: temporarily_unavailable",
        ] {
            assert_eq!(TokenErrorAnswer::from_rmcp_text(text), None, "{text}");
        }
    }

    #[test]
    fn timeouts_and_rate_limits_heal_and_other_client_errors_refuse() {
        for (status, refused) in [
            (400, true),
            (401, true),
            (403, true),
            (404, true),
            (408, false),
        ]
        .into_iter()
        .chain([(429, false), (500, false), (503, false)])
        {
            assert_eq!(
                TokenErrorAnswer::parse(status, b"").is_refusal(),
                refused,
                "HTTP {status}"
            );
        }
    }

    #[test]
    fn unknown_codes_are_kept_short_and_printable() {
        let long = format!("x\n{}", "y".repeat(200));
        let code = TokenErrorCode::parse(&long);
        assert_eq!(code.as_str().len(), 64);
        assert!(!code.as_str().contains('\n'));
        assert_eq!(
            TokenErrorCode::parse("use_dpop_nonce").as_str(),
            "use_dpop_nonce"
        );
    }
}
