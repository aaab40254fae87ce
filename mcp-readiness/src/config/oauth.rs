//! `mcpServers.<name>.oauth` → [`OAuthSpec`].
//!
//! ```json
//! "github": {
//!   "type": "http", "url": "https://example.invalid/mcp",
//!   "oauth": { "store": "tokens/github.json", "client_id": "mcp-readiness", "scopes": ["repo"] }
//! }
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::error::ConfigError;
use super::node::Node;
use super::walk::{Ctx, child, index};
use crate::secret::Secret;
use crate::supervise::OAuthSpec;

const OAUTH_KEYS: &[&str] = &["store", "client_id", "client_secret", "scopes"];

/// Reads the `oauth` object of server `name`; `headers` are its other headers (an
/// `Authorization` header beside `oauth` is refused: the store gives that header).
pub(crate) fn oauth(
    ctx: &Ctx<'_>,
    node: &Node,
    path: &str,
    name: &str,
    headers: &BTreeMap<String, Secret>,
    headers_path: &str,
) -> Result<OAuthSpec, ConfigError> {
    let fields = ctx.object(node, path, "`oauth`", Some(OAUTH_KEYS))?;
    if let Some(header) = headers
        .keys()
        .find(|h| h.eq_ignore_ascii_case("authorization"))
    {
        return Err(ctx.err(
            &child(headers_path, header),
            "a server with `oauth` gets its Authorization header from the credential store: remove this header, or remove `oauth`",
        ));
    }
    let required = |key: &str, what: &str| -> Result<String, ConfigError> {
        let path = fields.path_of(key);
        let value = match fields.get(key) {
            Some(node) => ctx.string(node, &path)?,
            None => return Err(ctx.err(&path, format!("missing: `oauth` needs {what}"))),
        };
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
    let client_id = required("client_id", "the OAuth client id")?;
    let client_secret = match fields.get("client_secret") {
        None | Some(Node::Null) => None,
        Some(node) => {
            let path = fields.path_of("client_secret");
            let secret = ctx.secret(node, &path)?;
            if secret.expose().is_empty() {
                return Err(ctx.err(&path, "expected the client secret, found an empty string: remove `client_secret` for a public client"));
            }
            Some(secret)
        }
    };
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
    Ok(OAuthSpec {
        store,
        client_id,
        client_secret,
        scopes,
        reauthorize: Some(format!(
            "mcp-readiness oauth login --config {} --server {name}",
            shell_word(&ctx.file.display().to_string())
        )),
    })
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
