//! Secrets (tokens, `Authorization` values, URL credentials) never reach spans, logs, labels or
//! errors: they travel in [`Secret`], whose `Debug` and `Display` redact, and text that may carry
//! one goes through [`redact`] before it is shown.

use std::fmt;

/// A string that must not be shown: `Debug` and `Display` print `[redacted]`. Use
/// [`Secret::expose`] only where the value is sent to the server it belongs to.
///
/// ```
/// use mcp_readiness::secret::Secret;
///
/// let token = Secret::new("Bearer abc123");
/// assert_eq!(format!("{token:?} {token}"), "[redacted] [redacted]");
/// assert_eq!(token.expose(), "Bearer abc123");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value itself, for sending to its server only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}

/// Removes credentials from free text (an error message, a URL) before it is shown:
/// URL user-info (`https://user:pass@host` → `https://[redacted]@host`), query values of
/// credential-like keys (`?token=...`), `Bearer` / `Basic` tokens, and every exact occurrence of
/// the given known secrets.
///
/// ```
/// use mcp_readiness::secret::{redact, Secret};
///
/// let known = [Secret::new("s3cr3t")];
/// assert_eq!(
///     redact("GET https://bob:pw@x.test/mcp?access_token=abc&x=1 failed: Bearer s3cr3t", &known),
///     "GET https://[redacted]@x.test/mcp?access_token=[redacted]&x=1 failed: Bearer [redacted]",
/// );
/// ```
pub fn redact(text: &str, known: &[Secret]) -> String {
    let mut out = text.to_owned();
    for secret in known {
        let value = secret.expose();
        if value.len() >= 4 {
            out = out.replace(value, "[redacted]");
            // A header value like `Bearer xyz` also leaks its bare token.
            if let Some((_, token)) = value.split_once(' ')
                && token.len() >= 4
            {
                out = out.replace(token, "[redacted]");
            }
        }
    }
    out = redact_userinfo(&out);
    out = redact_query_values(&out);
    redact_auth_schemes(&out)
}

fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(tail.len());
        match tail[..authority_end].rfind('@') {
            Some(userinfo_end) => {
                out.push_str("[redacted]");
                out.push_str(&tail[userinfo_end..authority_end]);
            }
            None => out.push_str(&tail[..authority_end]),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    out
}

const CREDENTIAL_KEYS: [&str; 10] = [
    "token", "access_token", "api_key", "apikey", "key", "secret", "password", "passwd",
    "auth", "sig",
];

fn redact_query_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    let mut last = 0;
    while let Some((i, c)) = chars.next() {
        if c != '?' && c != '&' {
            continue;
        }
        let rest = &text[i + 1..];
        let Some(eq) = rest.find('=') else { continue };
        let key = &rest[..eq];
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            continue;
        }
        let lower = key.to_ascii_lowercase();
        if !CREDENTIAL_KEYS.iter().any(|k| lower == *k || lower.ends_with(&format!("_{k}"))) {
            continue;
        }
        let value_start = i + 1 + eq + 1;
        let value_end = text[value_start..]
            .find(|c: char| c == '&' || c == '#' || c.is_whitespace() || c == '"' || c == '\'')
            .map_or(text.len(), |n| value_start + n);
        out.push_str(&text[last..value_start]);
        out.push_str("[redacted]");
        last = value_end;
        while chars.peek().is_some_and(|(j, _)| *j < value_end) {
            chars.next();
        }
    }
    out.push_str(&text[last..]);
    out
}

fn redact_auth_schemes(text: &str) -> String {
    let mut out = text.to_owned();
    for scheme in ["Bearer ", "bearer ", "Basic ", "basic ", "Token ", "token "] {
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(scheme) {
            result.push_str(&rest[..at + scheme.len()]);
            let tail = &rest[at + scheme.len()..];
            let end = tail
                .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ',')
                .unwrap_or(tail.len());
            if end == 0 || tail[..end].starts_with("[redacted]") {
                result.push_str(&tail[..end]);
            } else {
                result.push_str("[redacted]");
            }
            rest = &tail[end..];
        }
        result.push_str(rest);
        out = result;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_without_credentials_is_unchanged() {
        let s = "server `files` exited with status 1: no such file /data?x=1";
        assert_eq!(redact(s, &[]), s);
    }

    #[test]
    fn known_secrets_are_removed_wherever_they_appear() {
        let known = [Secret::new("Bearer tok-123456")];
        assert_eq!(redact("echo: tok-123456!", &known), "echo: [redacted]!");
    }

    #[test]
    fn userinfo_is_removed_from_every_url() {
        assert_eq!(
            redact("a http://u:p@h:1/x b https://h2/y", &[]),
            "a http://[redacted]@h:1/x b https://h2/y"
        );
    }
}
