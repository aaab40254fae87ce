//! Workload identity (`"grant": "workload_identity"`, SEP-1933 / RFC 7523 JWT-bearer grant): the
//! workload's own identity token, which the platform keeps in a file and rotates (a Kubernetes
//! projected service-account token, a cloud's workload identity token), is the assertion of a
//! JWT-bearer token request. No secret is configured and there is no login: the token is
//! fetched at connect and renewed before it expires by the same task as client credentials, and
//! the file is read again at each renewal, so a rotated token is always the one sent.
//!
//! A missing, unreadable, empty or expired token file is `unauthenticated` with a reason that
//! names the file and who rotates it; the token's `exp` is exported as the expiry of the
//! `workload_identity_token` credential (renewable: the platform rotates it).

use std::time::{Duration, SystemTime};

use oauth2::TokenResponse as _;
use rmcp::transport::auth::{OAuthTokenResponse, StoredCredentials};

use crate::client::credential_expiry::jwt_exp;
use crate::client::oauth::store::FileStore;
use crate::client::oauth::token_error::{TokenErrorAnswer, TokenFailure};
use crate::client::reasons::rmcp_errors::truncate;
use crate::client::spec::AssertionSource;
use crate::secret::{Secret, redact};
use crate::state::{CredentialExpiry, CredentialKind};

/// The client id the tokens are kept under when `oauth.client_id` is not set (none is sent).
pub(crate) const UNNAMED_CLIENT: &str = "workload-identity";

/// RFC 7523's grant type.
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// The longest token-endpoint error description kept in a reason.
const MAX_DESCRIPTION: usize = 200;

/// Who keeps the token file fresh, for reasons.
const ROTATED_BY: &str = "the platform rotates it (the kubelet for a Kubernetes projected \
                          service-account token, the cloud's agent for a workload identity token)";

/// One JWT-bearer token request, as configured and discovered.
#[derive(Debug, Clone)]
pub(crate) struct JwtBearer {
    /// The authorization server's token endpoint (from its metadata).
    pub(crate) token_endpoint: String,
    /// The authorization server's issuer, kept with the token.
    pub(crate) issuer: Option<String>,
    /// `oauth.client_id`, sent when configured.
    pub(crate) client_id: Option<String>,
    pub(crate) scopes: Vec<String>,
    /// The MCP server's URL (RFC 8707 `resource`).
    pub(crate) resource: String,
    pub(crate) assertion: AssertionSource,
    /// DPoP, when the token is bound to the store's key.
    pub(crate) dpop: Option<std::sync::Arc<super::dpop::Dpop>>,
}

/// How long an `assertion_command` may run.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Who renews a command's token, for reasons.
const COMMAND_ROTATES: &str = "the command asks the platform for a fresh token each time";

impl AssertionSource {
    /// The source in words, for reasons: the file, or the command's program.
    pub(crate) fn describe(&self) -> String {
        match self {
            AssertionSource::File(path) => {
                format!("`{}` (`oauth.assertion_file`)", path.display())
            }
            AssertionSource::Command { program, .. } => {
                format!("from `{program}` (`oauth.assertion_command`)")
            }
        }
    }
}

/// Runs the `assertion_command` and returns what it printed; the error names the program and
/// says what it said on stderr (bounded), never its stdout.
async fn run_command(program: &str, args: &[String], noun: &str) -> Result<String, String> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(COMMAND_TIMEOUT, command.output())
        .await
        .map_err(|_| {
            format!(
                "the {noun} command `{program}` (`oauth.assertion_command`) did not \
                 finish within {}; run it by hand to see why",
                crate::util::Human(COMMAND_TIMEOUT)
            )
        })?
        .map_err(|e| {
            format!(
                "cannot run the {noun} command `{program}` \
                 (`oauth.assertion_command`): {e}; check that it is installed"
            )
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        return Err(format!(
            "the {noun} command `{program}` (`oauth.assertion_command`) failed \
             ({}; its stderr: {}); run it by hand to see why",
            output.status,
            truncate(stderr, MAX_DESCRIPTION)
        ));
    }
    String::from_utf8(output.stdout).map_err(|_| {
        format!(
            "the {noun} command `{program}` (`oauth.assertion_command`) printed \
             something that is not UTF-8 text; it must print the token"
        )
    })
}

/// The workload's identity token, read now from `source`, and its `exp`. The error is the
/// reason a person reads: it names the file (or command) and who rotates it, never the token.
pub(crate) async fn read(source: &AssertionSource) -> Result<(Secret, Option<SystemTime>), String> {
    read_as(source, "workload identity token", ROTATED_BY).await
}

/// Reads a token (called `noun` in reasons) from `source`; `rotated_by` says who keeps a token
/// file fresh. Shared by workload identity and enterprise-managed authorization (its ID token).
pub(crate) async fn read_as(
    source: &AssertionSource,
    noun: &str,
    rotated_by: &str,
) -> Result<(Secret, Option<SystemTime>), String> {
    let command_noun = noun.strip_suffix(" token").unwrap_or(noun);
    let text = match source {
        AssertionSource::File(path) => {
            let path = path.clone();
            let shown = path.display().to_string();
            tokio::task::spawn_blocking(move || std::fs::read_to_string(&path))
                .await
                .map_err(|_| format!("reading the {noun} was cancelled"))?
                .map_err(|e| {
                    format!(
                        "cannot read the {noun} `{shown}` (`oauth.assertion_file`): {e}; \
                         {rotated_by}: check that it is mounted for this workload"
                    )
                })?
        }
        AssertionSource::Command { program, args } => {
            run_command(program, args, command_noun).await?
        }
    };
    let rotated_by = match source {
        AssertionSource::File(_) => rotated_by,
        AssertionSource::Command { .. } => COMMAND_ROTATES,
    };
    check(source, &text, noun, rotated_by)
}

/// The token in `text` (read from `source`), checked: not empty, not expired.
fn check(
    source: &AssertionSource,
    text: &str,
    noun: &str,
    rotated_by: &str,
) -> Result<(Secret, Option<SystemTime>), String> {
    let from = source.describe();
    let token = text.trim();
    if token.is_empty() {
        return Err(format!(
            "the {noun} {from} is empty; {rotated_by}: check that it is \
             provided for this workload"
        ));
    }
    let expires_at = jwt_exp(token)
        .and_then(|exp| SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs_f64(exp)));
    if let Some(at) = expires_at
        && at <= SystemTime::now()
    {
        let ago = SystemTime::now()
            .duration_since(at)
            .map(|d| Duration::from_secs(d.as_secs()))
            .unwrap_or_default();
        return Err(format!(
            "the {noun} {from} expired {} ago and was not rotated; \
             {rotated_by}: check that its rotation runs",
            crate::util::Human(ago)
        ));
    }
    Ok((Secret::new(token), expires_at))
}

/// The token file's expiry as exported (`workload_identity_token`, renewable).
pub(crate) fn assertion_expiry(expires_at: Option<SystemTime>) -> Option<CredentialExpiry> {
    expires_at.map(|expires_at| CredentialExpiry {
        kind: CredentialKind::WorkloadIdentityToken,
        expires_at,
        renewable: true,
    })
}

/// Reads the token file, asks the token endpoint for an access token with it and saves the
/// token in `store`; returns the token's lifetime. The error says whether the request was
/// refused (a reason for `unauthenticated`: the file, or the authorization server's answer)
/// or failed otherwise (the authorization server unreachable: it heals).
pub(crate) async fn fetch(
    http: &reqwest::Client,
    grant: &JwtBearer,
    store: &FileStore,
) -> Result<Option<Duration>, TokenFailure> {
    let (assertion, expires_at) = match read(&grant.assertion).await {
        Ok(read) => read,
        Err(why) => {
            store.set_beside(CredentialKind::WorkloadIdentityToken, None);
            return Err(TokenFailure::Refused(why));
        }
    };
    store.set_beside(
        CredentialKind::WorkloadIdentityToken,
        assertion_expiry(expires_at),
    );
    let mut form: Vec<(&str, &str)> = vec![
        ("grant_type", JWT_BEARER),
        ("assertion", assertion.expose()),
        ("resource", &grant.resource),
    ];
    if let Some(client_id) = &grant.client_id {
        form.push(("client_id", client_id));
    }
    let scope = grant.scopes.join(" ");
    if !scope.is_empty() {
        form.push(("scope", &scope));
    }
    let known = [assertion.clone()];
    let body = oauth2::url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&form)
        .finish();
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::ACCEPT,
        http::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    let sent = match &grant.dpop {
        Some(dpop) => {
            dpop.token_request(http, &grant.token_endpoint, headers, body)
                .await
        }
        None => http
            .post(&grant.token_endpoint)
            .headers(headers)
            .body(body)
            .send()
            .await
            .map_err(|e| e.to_string()),
    };
    let response = sent.map_err(|e| {
        TokenFailure::Unavailable(format!(
            "the authorization server's token endpoint did not answer ({}); check that it is up",
            redact(&e, &known)
        ))
    })?;
    let status = response.status();
    let body = response.bytes().await.unwrap_or_default();
    if !status.is_success() {
        let answer = TokenErrorAnswer::parse(status.as_u16(), &body);
        let error: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let description = error
            .get("error_description")
            .and_then(serde_json::Value::as_str)
            .map(|d| format!(": {}", truncate(redact(d, &known), MAX_DESCRIPTION)))
            .unwrap_or_default();
        let what = redact(&answer.describe(), &known);
        let from = grant.assertion.describe();
        return Err(if answer.is_refusal() {
            TokenFailure::Refused(format!(
                "the authorization server refused the workload identity token {from} \
                 ({what}{description}); check that it trusts this workload's issuer and \
                 subject for client `{}` and this server's scopes",
                grant.client_id.as_deref().unwrap_or("(none)")
            ))
        } else {
            TokenFailure::Unavailable(format!(
                "the authorization server's token endpoint failed ({what}); it heals when the \
                 authorization server does"
            ))
        });
    }
    let token: OAuthTokenResponse = serde_json::from_slice(&body).map_err(|e| {
        TokenFailure::Unavailable(format!(
            "the authorization server's token response is not an OAuth token response ({e}); \
             check the authorization server"
        ))
    })?;
    let lifetime = token.expires_in();
    let granted = token
        .scopes()
        .map(|s| s.iter().map(|s| s.to_string()).collect())
        .unwrap_or_else(|| grant.scopes.clone());
    let client_id = grant
        .client_id
        .clone()
        .unwrap_or_else(|| UNNAMED_CLIENT.to_owned());
    keep_token(store, client_id, token, granted, grant.issuer.clone()).await?;
    Ok(lifetime)
}

/// Saves the `token` a grant obtained just now in `store`, for `client_id` with the `granted`
/// scopes, from `issuer` (the workload identity and the enterprise-managed grants).
pub(crate) async fn keep_token(
    store: &FileStore,
    client_id: String,
    token: OAuthTokenResponse,
    granted: Vec<String>,
    issuer: Option<String>,
) -> Result<(), TokenFailure> {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .ok();
    let credentials =
        StoredCredentials::new(client_id, Some(token), granted, now).with_issuer(issuer);
    store
        .save_credentials(credentials)
        .await
        .map_err(TokenFailure::Unavailable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    fn jwt(exp: u64) -> String {
        let claims = URL_SAFE_NO_PAD.encode(format!(r#"{{"sub":"w","exp":{exp}}}"#));
        format!("eyJhbGciOiJFUzI1NiJ9.{claims}.c2ln")
    }

    fn unix_now() -> u64 {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    fn file(path: &std::path::Path) -> AssertionSource {
        AssertionSource::File(path.to_owned())
    }

    #[tokio::test]
    async fn a_missing_empty_or_expired_token_file_is_named_with_who_rotates_it_and_never_shown() {
        let dir = std::env::temp_dir().join(format!("mcp-readiness-wif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing");
        let why = read(&file(&missing)).await.unwrap_err();
        assert!(why.contains(&missing.display().to_string()), "{why}");
        assert!(why.contains("kubelet"), "{why}");

        let empty = dir.join("empty");
        std::fs::write(&empty, "\n").unwrap();
        assert!(read(&file(&empty)).await.unwrap_err().contains("is empty"));

        let expired = dir.join("expired");
        let token = jwt(unix_now() - 120);
        std::fs::write(&expired, &token).unwrap();
        let why = read(&file(&expired)).await.unwrap_err();
        assert!(why.contains("expired 2m"), "{why}");
        assert!(why.contains("rotation"), "{why}");
        assert!(!why.contains(&token), "{why}");

        let fresh = dir.join("fresh");
        let exp = unix_now() + 3600;
        std::fs::write(&fresh, format!("{}\n", jwt(exp))).unwrap();
        let (secret, at) = read(&file(&fresh)).await.unwrap();
        assert_eq!(secret.expose(), jwt(exp));
        let expiry = assertion_expiry(at).unwrap();
        assert_eq!(expiry.unix_seconds() as u64, exp);
        assert!(expiry.renewable);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn a_command_is_run_at_each_read_and_its_failure_names_it_and_never_its_output() {
        let exp = unix_now() + 600;
        let token = jwt(exp);
        let printing = AssertionSource::Command {
            program: "sh".into(),
            args: vec!["-c".into(), format!("echo {token}")],
        };
        let (secret, at) = read(&printing).await.unwrap();
        assert_eq!(secret.expose(), token);
        assert_eq!(assertion_expiry(at).unwrap().unix_seconds() as u64, exp);

        let failing = AssertionSource::Command {
            program: "sh".into(),
            args: vec![
                "-c".into(),
                format!("echo {token}; echo no credentials >&2; exit 3"),
            ],
        };
        let why = read(&failing).await.unwrap_err();
        assert!(why.contains("command `sh`"), "{why}");
        assert!(why.contains("no credentials"), "{why}");
        assert!(!why.contains(&token), "{why}");

        let missing = AssertionSource::Command {
            program: "/nonexistent/mint-token".into(),
            args: Vec::new(),
        };
        let why = read(&missing).await.unwrap_err();
        assert!(why.contains("check that it is installed"), "{why}");
    }
}
