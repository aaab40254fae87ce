//! `mcpServers` entries → [`ServerSpec`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::error::ConfigError;
use super::node::Node;
use super::walk::{Ctx, Fields, child};
use crate::client::{ServerSpec, TransportSpec};
use crate::secret::Secret;
use crate::state::ToolName;

const STDIO_KEYS: &[&str] = &["type", "command", "args", "env", "cwd"];
const HTTP_KEYS: &[&str] = &["type", "url", "headers", "oauth"];

/// Reads the `mcpServers` object.
pub(crate) fn servers(
    ctx: &Ctx<'_>,
    node: &Node,
    path: &str,
) -> Result<Vec<ServerSpec>, ConfigError> {
    let fields = ctx.object(node, path, "`mcpServers` (server name → server)", None)?;
    fields
        .entries()
        .iter()
        .map(|(name, entry)| server(ctx, name, entry, &fields.path_of(name)))
        .collect()
}

fn server(ctx: &Ctx<'_>, name: &str, node: &Node, path: &str) -> Result<ServerSpec, ConfigError> {
    let allowed = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    if ToolName::qualified(name, "tool").is_none() || !name.chars().all(allowed) {
        return Err(ctx.err(
            path,
            "a server name must fit in `mcp__<server>__<tool>`: use letters, digits, `-` and single `_` (no leading, trailing or doubled `_`)",
        ));
    }
    let fields = ctx.object(node, path, "a server", None)?;
    let transport = match kind(ctx, &fields)? {
        Kind::Stdio => {
            let fields = ctx.object(node, path, "a stdio server", Some(STDIO_KEYS))?;
            stdio(ctx, &fields)?
        }
        Kind::Http => {
            let fields = ctx.object(node, path, "a streamable-HTTP server", Some(HTTP_KEYS))?;
            http(ctx, &fields, name)?
        }
    };
    Ok(ServerSpec {
        name: Arc::from(name),
        transport,
    })
}

enum Kind {
    Stdio,
    Http,
}

/// `"type"` when given; otherwise `command` means stdio and `url` means HTTP.
fn kind(ctx: &Ctx<'_>, fields: &Fields<'_>) -> Result<Kind, ConfigError> {
    if let Some(node) = fields.get("type") {
        let path = fields.path_of("type");
        return match ctx.string(node, &path)?.as_str() {
            "stdio" => Ok(Kind::Stdio),
            "http" | "streamable-http" => Ok(Kind::Http),
            "sse" => Err(ctx.err(
                &path,
                r#"the legacy SSE transport is not supported: point "url" at the server's streamable-HTTP endpoint and write "type": "http""#,
            )),
            _ => Err(ctx.err(&path, r#"expected "stdio", "http" or "streamable-http""#)),
        };
    }
    match (fields.get("command").is_some(), fields.get("url").is_some()) {
        (true, false) => Ok(Kind::Stdio),
        (false, true) => Ok(Kind::Http),
        (true, true) => Err(ctx.err(
            &fields.path,
            r#"has both `command` and `url`: keep one, or write "type": "stdio" or "type": "http""#,
        )),
        (false, false) => Err(ctx.err(
            &fields.path,
            "expected `command` (a server started as a child process) or `url` (a streamable-HTTP server)",
        )),
    }
}

fn stdio(ctx: &Ctx<'_>, fields: &Fields<'_>) -> Result<TransportSpec, ConfigError> {
    let (node, command_path) = ctx.required(
        fields,
        "command",
        "missing: a stdio server needs the program to run",
    )?;
    let command = ctx.string(node, &command_path)?;
    if command.trim().is_empty() {
        return Err(ctx.err(
            &command_path,
            "expected the program to run, found an empty string",
        ));
    }
    no_nul(ctx, &command_path, &command)?;
    let args = match fields.get("args") {
        Some(node) => ctx.strings(node, &fields.path_of("args"))?,
        None => Vec::new(),
    };
    for (i, arg) in args.iter().enumerate() {
        no_nul(ctx, &super::walk::index(&fields.path_of("args"), i), arg)?;
    }
    let env = match fields.get("env") {
        Some(node) => secret_map(
            ctx,
            node,
            &fields.path_of("env"),
            "`env` (variable → value)",
            |name| {
                (name.is_empty() || name.contains(['=', '\0']))
                    .then_some("expected an environment variable name without `=`")
            },
        )?,
        None => BTreeMap::new(),
    };
    for (name, value) in &env {
        no_nul(ctx, &child(&fields.path_of("env"), name), value.expose())?;
    }
    let cwd = match fields.get("cwd") {
        Some(node) => {
            let path = fields.path_of("cwd");
            let dir = ctx.string(node, &path)?;
            if dir.is_empty() {
                return Err(ctx.err(&path, "expected a directory, found an empty string: remove `cwd` to use the current directory"));
            }
            no_nul(ctx, &path, &dir)?;
            // A relative directory is relative to the configuration file, not to wherever the
            // exporter happens to be started.
            let base = ctx.file.parent().map(PathBuf::from).unwrap_or_default();
            Some(base.join(dir))
        }
        None => None,
    };
    Ok(TransportSpec::Stdio {
        command,
        args,
        env,
        cwd,
    })
}

/// A NUL byte cannot be passed to a program (the operating system would refuse to start it).
fn no_nul(ctx: &Ctx<'_>, path: &str, value: &str) -> Result<(), ConfigError> {
    if value.contains('\0') {
        return Err(ctx.err(
            path,
            "contains a NUL byte (once expanded), which no program can receive: remove it, or check the variable it uses",
        ));
    }
    Ok(())
}

fn http(ctx: &Ctx<'_>, fields: &Fields<'_>, name: &str) -> Result<TransportSpec, ConfigError> {
    let (node, url_path) = ctx.required(
        fields,
        "url",
        "missing: a streamable-HTTP server needs the endpoint URL",
    )?;
    let url = ctx.secret(node, &url_path)?;
    // A URL the hub cannot use (not http(s), no host) is that server's problem alone: the hub
    // makes it `absent` with a reason naming `url` (`HttpConnector::new`), the others start.
    let headers = match fields.get("headers") {
        Some(node) => headers(ctx, node, &fields.path_of("headers"))?,
        None => BTreeMap::new(),
    };
    let oauth = match super::oauth::oauth(ctx, fields, name, &headers)? {
        Some(spec) => Some(spec),
        // A URL-only entry (`{"type": "http", "url": …}`) that `oauth login` authorized: the
        // registration and tokens are in the default store.
        None if !headers
            .keys()
            .any(|h| h.eq_ignore_ascii_case("authorization")) =>
        {
            let spec = super::oauth::implicit(ctx.file, name);
            spec.store.exists().then_some(spec)
        }
        None => None,
    };
    Ok(TransportSpec::Http {
        url,
        headers,
        oauth,
    })
}

/// A `headers` object (name → value, values secret, `${VAR}` expanded): names are HTTP tokens,
/// values hold no line break or NUL.
pub(super) fn headers(
    ctx: &Ctx<'_>,
    node: &Node,
    path: &str,
) -> Result<BTreeMap<String, Secret>, ConfigError> {
    let headers = secret_map(ctx, node, path, "`headers` (name → value)", |name| {
        (!is_header_name(name))
            .then_some("expected an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)")
    })?;
    for (name, value) in &headers {
        if value.expose().contains(['\r', '\n', '\0']) {
            return Err(ctx.err(
                &child(path, name),
                "the value contains a line break or NUL once expanded: check the variable it uses",
            ));
        }
    }
    Ok(headers)
}

/// An object of string values kept as secrets; `bad_key` refuses a key with a message.
fn secret_map(
    ctx: &Ctx<'_>,
    node: &Node,
    path: &str,
    what: &str,
    bad_key: impl Fn(&str) -> Option<&'static str>,
) -> Result<BTreeMap<String, Secret>, ConfigError> {
    let fields = ctx.object(node, path, what, None)?;
    let mut out = BTreeMap::new();
    for (key, value) in fields.entries() {
        let path = fields.path_of(key);
        if let Some(message) = bad_key(key) {
            return Err(ctx.err(&path, message));
        }
        out.insert(key.clone(), ctx.secret(value, &path)?);
    }
    Ok(out)
}

/// RFC 9110 `token`.
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_are_http_tokens() {
        assert!(is_header_name("Authorization"));
        assert!(is_header_name("X-Api-Key"));
        assert!(!is_header_name("Bad Header"));
        assert!(!is_header_name(""));
        assert!(!is_header_name("a:b"));
    }
}
