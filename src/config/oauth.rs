//! `mcpServers.<name>.oauth` → [`OAuthSpec`].
//!
//! ```json
//! "github": {
//!   "type": "http", "url": "https://example.invalid/mcp",
//!   "oauth": { "store": "tokens/github.json", "client_id": "mcp-readiness", "scopes": ["repo"] }
//! }
//! ```
//!
//! Without `client_id`, `oauth login` registers the client (CIMD or Dynamic Client
//! Registration). `"grant": "client_credentials"` (machine to machine) needs `client_id` and
//! either `client_secret` or `private_key` (a PEM file, for `private_key_jwt`).
//! `"grant": "workload_identity"` needs `assertion_file` (the workload's identity token, a file
//! the platform rotates) or `assertion_command` (a command that prints one) and no secret;
//! `client_id` is sent when set. `"grant": "enterprise_managed"` needs `identity_provider`,
//! `client_id` and `assertion_file` or `assertion_command` (the enterprise ID token).
//! `"dpop": true` binds the tokens of any grant to a key pair kept in the store (DPoP, RFC
//! 9449), `false` never does; left out, DPoP is used where the authorization server offers it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::error::ConfigError;
use super::node::Node;
use super::walk::{Ctx, Fields, child, index};
use crate::client::spec::SigningAlgorithm;
use crate::client::{AssertionSource, Dpop, OAuthGrant, OAuthSpec};
use crate::secret::Secret;

const OAUTH_KEYS: &[&str] = &[
    "store",
    "client_id",
    "client_secret",
    "client_metadata_url",
    "scopes",
    "grant",
    "private_key",
    "signing_algorithm",
    "assertion_file",
    "assertion_command",
    "identity_provider",
    "dpop",
];

/// Reads the `oauth` object of server `name` (or probe module) from `server`, its entry, when
/// given; `headers` are its other headers (an `Authorization` header beside `oauth` is refused:
/// the store gives that header).
pub(crate) fn oauth(
    ctx: &Ctx<'_>,
    server: &Fields<'_>,
    name: &str,
    headers: &BTreeMap<String, Secret>,
) -> Result<Option<OAuthSpec>, ConfigError> {
    let Some((node, path)) = server.given("oauth") else {
        return Ok(None);
    };
    let headers_path = server.path_of("headers");
    let fields = ctx.object(node, &path, "`oauth`", Some(OAUTH_KEYS))?;
    if let Some(header) = headers
        .keys()
        .find(|h| h.eq_ignore_ascii_case("authorization"))
    {
        return Err(ctx.err(
            &child(&headers_path, header),
            "a server with `oauth` gets its Authorization header from the credential store: remove this header, or remove `oauth`",
        ));
    }
    let required = |key: &str, what: &str| -> Result<String, ConfigError> {
        let (node, path) = ctx.required(&fields, key, format!("missing: `oauth` needs {what}"))?;
        let value = ctx.string(node, &path)?;
        if value.trim().is_empty() {
            return Err(ctx.err(&path, format!("expected {what}, found an empty string")));
        }
        if value.chars().any(char::is_control) {
            return Err(ctx.err(
                &path,
                "contains a control character (once expanded): check the variable it uses",
            ));
        }
        Ok(value)
    };
    let store = required(
        "store",
        "the credential store file (where the tokens are kept)",
    )?;
    // Relative to the configuration file, like `cwd`.
    let base = ctx.file.parent().map(PathBuf::from).unwrap_or_default();
    let store = base.join(store);
    if store.file_name().is_none() {
        return Err(ctx.err(
            &fields.path_of("store"),
            "expected a file, found a directory: name the file the tokens are kept in",
        ));
    }
    let optional = |key: &str, what: &str| -> Result<Option<String>, ConfigError> {
        match fields.get(key) {
            None | Some(Node::Null) => Ok(None),
            Some(_) => required(key, what).map(Some),
        }
    };
    let client_id = optional("client_id", "the OAuth client id")?;
    let client_secret = match fields.given("client_secret") {
        None => None,
        Some((node, path)) => {
            let secret = ctx.secret(node, &path)?;
            if secret.expose().is_empty() {
                return Err(ctx.err(&path, "expected the client secret, found an empty string: remove `client_secret` for a public client"));
            }
            Some(secret)
        }
    };
    if client_secret.is_some() && client_id.is_none() {
        return Err(ctx.err(
            &fields.path_of("client_secret"),
            "a client secret belongs to a registered client: set `client_id` too, or remove \
             `client_secret` (`oauth login` registers the client and keeps its secret in the store)",
        ));
    }
    let client_metadata_url = optional(
        "client_metadata_url",
        "the HTTPS URL of this client's metadata document",
    )?;
    if let Some(url) = &client_metadata_url {
        let path_part = url
            .strip_prefix("https://")
            .and_then(|rest| rest.split_once('/'));
        if !matches!(path_part, Some((host, path)) if !host.is_empty() && !path.is_empty()) {
            return Err(ctx.err(
                &fields.path_of("client_metadata_url"),
                "expected an https:// URL with a path (the Client ID Metadata Document this \
                 client is identified by)",
            ));
        }
    }
    let scopes = match fields.get("scopes") {
        None => Vec::new(),
        Some(node) => {
            let path = fields.path_of("scopes");
            let scopes = ctx.strings(node, &path)?;
            for (i, scope) in scopes.iter().enumerate() {
                // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
                if scope.is_empty()
                    || !scope.bytes().all(|b| {
                        b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b)
                    })
                {
                    return Err(ctx.err(
                        &index(&path, i),
                        "expected an OAuth scope (printable ASCII without spaces, `\"` or `\\`)",
                    ));
                }
            }
            scopes
        }
    };
    let grant = optional(
        "grant",
        "the grant: `authorization_code`, `client_credentials`, `workload_identity` or \
         `enterprise_managed`",
    )?;
    let private_key = optional("private_key", "the PEM private key file")?;
    let signing_algorithm = optional("signing_algorithm", "a JWT signing algorithm")?;
    let assertion_file = optional(
        "assertion_file",
        "the file the platform keeps this workload's identity token in",
    )?;
    let assertion_command = match fields.given("assertion_command") {
        None => None,
        Some((node, path)) => {
            let argv = ctx.strings(node, &path)?;
            match argv.split_first() {
                Some((program, args)) if !program.trim().is_empty() => {
                    Some(AssertionSource::Command {
                        program: program.clone(),
                        args: args.to_vec(),
                    })
                }
                _ => {
                    return Err(ctx.err(
                        &path,
                        "expected the command that prints the workload's identity token: the \
                         program and its arguments, e.g. [\"gcloud\", \"auth\", \"print-identity-token\"]",
                    ));
                }
            }
        }
    };
    let reads_assertion = matches!(
        grant.as_deref(),
        Some("workload_identity" | "enterprise_managed")
    );
    for (key, given) in [
        ("assertion_file", assertion_file.is_some()),
        ("assertion_command", assertion_command.is_some()),
    ] {
        if given && !reads_assertion {
            return Err(ctx.err(
                &fields.path_of(key),
                "only for `\"grant\": \"workload_identity\"` (the workload's identity token) \
                 or `\"enterprise_managed\"` (the enterprise ID token)",
            ));
        }
    }
    if fields.get("identity_provider").is_some() && grant.as_deref() != Some("enterprise_managed") {
        return Err(ctx.err(
            &fields.path_of("identity_provider"),
            "only for `\"grant\": \"enterprise_managed\"`",
        ));
    }
    // Where the token of workload identity or enterprise-managed authorization is read from.
    let assertion = |who: &str, what: &str| -> Result<AssertionSource, ConfigError> {
        match (assertion_file.clone(), assertion_command.clone()) {
            (Some(file), None) => Ok(AssertionSource::File(base.join(file))),
            (None, Some(command)) => Ok(command),
            (Some(_), Some(_)) => Err(ctx.err(
                &fields.path_of("assertion_command"),
                format!(
                    "{who} reads its token from one place: `assertion_file` or \
                     `assertion_command`, not both"
                ),
            )),
            (None, None) => Err(ctx.err(&fields.path_of("grant"), what)),
        }
    };
    let grant = match grant.as_deref() {
        None | Some("authorization_code") => {
            for key in ["private_key", "signing_algorithm"] {
                if fields.get(key).is_some() {
                    return Err(ctx.err(
                        &fields.path_of(key),
                        "only for `\"grant\": \"client_credentials\"` (a login needs no key)",
                    ));
                }
            }
            OAuthGrant::AuthorizationCode
        }
        Some("workload_identity") => {
            for key in ["client_secret", "private_key", "signing_algorithm"] {
                if fields.get(key).is_some() {
                    return Err(ctx.err(
                        &fields.path_of(key),
                        "workload identity holds no secret: the workload's identity token \
                         (`assertion_file`) is the credential; remove this key",
                    ));
                }
            }
            let assertion = assertion(
                "workload identity",
                "workload identity needs `assertion_file`: the file the platform keeps this \
                 workload's identity token in (e.g. a Kubernetes projected service-account \
                 token, `/var/run/secrets/tokens/mcp`), or `assertion_command`: a command that \
                 prints one",
            )?;
            OAuthGrant::WorkloadIdentity { assertion }
        }
        Some("enterprise_managed") => {
            for key in ["private_key", "signing_algorithm"] {
                if fields.get(key).is_some() {
                    return Err(ctx.err(
                        &fields.path_of(key),
                        "only for `\"grant\": \"client_credentials\"` (enterprise-managed \
                         authorization authenticates with `client_secret`, or as a public client)",
                    ));
                }
            }
            if client_id.is_none() {
                return Err(ctx.err(
                    &fields.path_of("grant"),
                    "enterprise-managed authorization needs `client_id`: the id the MCP \
                     server's authorization server knows this client by (the identity \
                     assertion grant is issued to it)",
                ));
            }
            let identity_provider = match fields.get("identity_provider") {
                Some(node) => super::identity_provider::identity_provider(
                    ctx,
                    node,
                    &fields.path_of("identity_provider"),
                )?,
                None => {
                    return Err(ctx.err(
                        &fields.path_of("grant"),
                        "enterprise-managed authorization needs `identity_provider`: the \
                         enterprise identity provider's `issuer`, `token_endpoint` and \
                         `client_id` (and `client_secret` for a confidential client)",
                    ));
                }
            };
            let assertion = assertion(
                "enterprise-managed authorization",
                "enterprise-managed authorization needs `assertion_file`: the file the \
                 enterprise ID token (issued to this client by the identity provider) is kept \
                 in, or `assertion_command`: a command that prints one",
            )?;
            OAuthGrant::EnterpriseManaged {
                identity_provider,
                assertion,
            }
        }
        Some("client_credentials") => {
            if client_id.is_none() {
                return Err(ctx.err(
                    &fields.path_of("grant"),
                    "client credentials need `client_id`: the id the authorization server knows \
                     this client by",
                ));
            }
            if client_secret.is_some() == private_key.is_some() {
                return Err(ctx.err(
                    &fields.path_of("grant"),
                    "client credentials need exactly one of `client_secret` (usually `${VAR}`) \
                     and `private_key` (a PEM file, for private_key_jwt)",
                ));
            }
            if private_key.is_none() && signing_algorithm.is_some() {
                return Err(ctx.err(
                    &fields.path_of("signing_algorithm"),
                    "only with `private_key` (a client secret signs nothing)",
                ));
            }
            let signing_algorithm = match signing_algorithm {
                None => SigningAlgorithm::default(),
                Some(name) => name
                    .parse()
                    .map_err(|why: String| ctx.err(&fields.path_of("signing_algorithm"), why))?,
            };
            OAuthGrant::ClientCredentials {
                private_key: private_key.map(|key| base.join(key)),
                signing_algorithm,
            }
        }
        Some(_) => {
            return Err(ctx.err(
                &fields.path_of("grant"),
                "expected `authorization_code` (a person runs `oauth login` once), \
                 `client_credentials` (machine to machine, no login), `workload_identity` (the \
                 platform's identity token for this workload, no secret) or \
                 `enterprise_managed` (an enterprise ID token exchanged at the identity \
                 provider)",
            ));
        }
    };
    let dpop = match fields.get("dpop") {
        None | Some(Node::Null) => Dpop::WhereOffered,
        Some(Node::Bool(true)) => Dpop::Always,
        Some(Node::Bool(false)) => Dpop::Never,
        Some(_) => {
            return Err(ctx.err(
                &fields.path_of("dpop"),
                "expected true (DPoP-bound tokens, RFC 9449, for every request) or false \
                 (bearer tokens even where the authorization server offers DPoP); leave it out \
                 to use DPoP where the authorization server's metadata offers it",
            ));
        }
    };
    let reauthorize = match grant {
        OAuthGrant::AuthorizationCode => format!(
            "mcp-readiness oauth login --config {} --server {name}",
            shell_word(&ctx.file.display().to_string())
        ),
        OAuthGrant::ClientCredentials { .. }
        | OAuthGrant::WorkloadIdentity { .. }
        | OAuthGrant::EnterpriseManaged { .. } => String::new(),
    };
    Ok(Some(OAuthSpec {
        store,
        client_id,
        client_secret,
        client_metadata_url,
        scopes,
        grant,
        dpop,
        reauthorize: (!reauthorize.is_empty()).then_some(reauthorize),
    }))
}

/// The OAuth of a URL-only HTTP entry of `file` named `server`: registration by `oauth login`,
/// the store at `<the file's directory>/.mcp-readiness/oauth/<server>.json`. The configuration
/// uses it once that file exists; `oauth login` creates it.
pub fn implicit(file: &std::path::Path, server: &str) -> OAuthSpec {
    let base = file.parent().map(PathBuf::from).unwrap_or_default();
    let safe: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut spec = OAuthSpec::new(
        base.join(".mcp-readiness")
            .join("oauth")
            .join(format!("{safe}.json")),
        None,
    );
    spec.reauthorize = Some(format!(
        "mcp-readiness oauth login --config {} --server {server}",
        shell_word(&file.display().to_string())
    ));
    spec
}

/// `word` as one shell word (quoted when it has anything but safe characters).
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn paths_with_spaces_or_quotes_are_quoted_for_the_shell() {
        assert_eq!(shell_word("/etc/mcp.json"), "/etc/mcp.json");
        assert_eq!(shell_word("my dir/mcp.json"), "'my dir/mcp.json'");
        assert_eq!(shell_word("it's.json"), r"'it'\''s.json'");
    }
}
