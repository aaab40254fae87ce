//! Secrets (tokens, `Authorization` values, URL credentials) never reach spans, logs, labels or
//! errors: they travel in [`Secret`], whose `Debug` and `Display` redact, and text that may carry
//! one goes through [`redact`] before it is shown.

#[cfg(any(feature = "hub", feature = "otlp-grpc", feature = "otlp-http"))]
use crate::util::RwLockExt as _;
use std::borrow::Cow;
use std::fmt;
#[cfg(any(feature = "hub", feature = "otlp-grpc", feature = "otlp-http"))]
use std::sync::RwLock;

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
/// URL user-info (`https://user:pass@host` → `https://[redacted]@host`), a URL's path, query and
/// fragment (`https://host/t0k3n/mcp?x=1` → `https://host/[redacted]`: paths carry tokens too),
/// `Bearer` / `Basic` tokens, and every exact occurrence of the given known secrets of at least 8
/// characters.
///
/// ```
/// use mcp_readiness::secret::{redact, Secret};
///
/// let known = [Secret::new("s3cr3t-t0ken")];
/// assert_eq!(
///     redact("GET https://bob:pw@x.test/mcp?access_token=abc&x=1 failed: Bearer s3cr3t-t0ken", &known),
///     "GET https://[redacted]@x.test/[redacted] failed: Bearer [redacted]",
/// );
/// ```
pub fn redact(text: &str, known: &[Secret]) -> String {
    let mut out = text.to_owned();
    for secret in known {
        let value = secret.expose();
        // Short values (`true`, `3000`) are not credentials and would garble every message.
        if value.len() >= MIN_KNOWN_SECRET_LEN {
            out = out.replace(value, "[redacted]");
            // A header value like `Bearer xyz` also leaks its bare token.
            if let Some((_, token)) = value.split_once(' ')
                && token.len() >= MIN_KNOWN_SECRET_LEN
            {
                out = out.replace(token, "[redacted]");
            }
        }
    }
    out = redact_userinfo(&out);
    out = redact_url_paths(&out);
    out = redact_query_values(&out);
    redact_auth_schemes(&out)
}

/// Every secret the process has been given (configured header values, `env` values, URLs),
/// so that log lines and exported spans written by any crate can be redacted too.
#[cfg(any(feature = "hub", feature = "otlp-grpc", feature = "otlp-http"))]
static KNOWN: RwLock<Vec<Secret>> = RwLock::new(Vec::new());

/// Remembers secrets for [`redact_everywhere`] (process-wide; each value once).
#[cfg(feature = "hub")]
pub(crate) fn remember(secrets: impl IntoIterator<Item = Secret>) {
    let mut known = KNOWN.write_unpoisoned();
    for secret in secrets {
        if secret.expose().len() >= MIN_KNOWN_SECRET_LEN && !known.contains(&secret) {
            known.push(secret);
        }
    }
}

/// [`redact`] with every secret the process knows of: what log lines and exported spans go
/// through, whichever crate wrote them.
#[cfg(any(feature = "otlp-grpc", feature = "otlp-http"))]
pub(crate) fn redact_everywhere(text: &str) -> String {
    let known = KNOWN.read_unpoisoned();
    redact(text, &known)
}

/// Replaces every control character (terminal escapes, carriage returns, NULs, newlines) with a
/// visible escape such as `\u{1b}`, so that untrusted text (a server name, a reason, a child's
/// stderr) cannot move the cursor, recolour or forge lines on a terminal.
///
/// ```
/// use mcp_readiness::secret::escape_controls;
///
/// assert_eq!(escape_controls("a\u{1b}[2Jb\nc"), "a\\u{1b}[2Jb\\nc");
/// assert_eq!(escape_controls("plain"), "plain");
/// ```
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    crate::util::escape_controls(text)
}

/// A name a caller gave (a tool's, a server's), as a message repeats it: control characters
/// escaped ([`escape_controls`]) and cut to 120 characters, with how long it was, so a hostile or
/// generated name can neither reach a terminal raw nor make a message megabytes long.
///
/// ```
/// use mcp_readiness::secret::echo;
///
/// assert_eq!(echo("mcp__files__read"), "mcp__files__read");
/// let long = format!("mcp__files__{}", "a".repeat(1_000));
/// assert!(echo(&long).ends_with("a… (1012 characters)"));
/// ```
pub fn echo(text: &str) -> Cow<'_, str> {
    crate::util::echo(text)
}

/// `scheme://authority/anything?query#fragment` → `scheme://authority/[redacted]`.
fn redact_url_paths(text: &str) -> String {
    rewrite_after_schemes(text, |tail, out| {
        let authority_end = authority_end(tail, is_url_end);
        out.push_str(&tail[..authority_end]);
        let after = &tail[authority_end..];
        let path_end = after.find(is_url_end).unwrap_or(after.len());
        let path = &after[..path_end];
        if !path.is_empty() && path != "/" {
            out.push_str("/[redacted]");
        } else {
            out.push_str(path);
        }
        authority_end + path_end
    })
}

/// `text` with what follows each `scheme://` rewritten: `rewrite` is handed the text after the
/// `://`, pushes its rewrite of a prefix of it to the output, and returns that prefix's length.
fn rewrite_after_schemes(
    text: &str,
    mut rewrite: impl FnMut(&str, &mut String) -> usize,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        rest = &tail[rewrite(tail, &mut out)..];
    }
    out.push_str(rest);
    out
}

/// Where the authority of the URL in `tail` (what follows `://`) ends: at its path, query or
/// fragment, or at a character `ends` says ends the URL.
fn authority_end(tail: &str, ends: impl Fn(char) -> bool) -> usize {
    tail.find(|c: char| c == '/' || c == '?' || c == '#' || ends(c))
        .unwrap_or(tail.len())
}

/// Where a URL quoted in free text ends.
fn is_url_end(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | ')' | '>' | '`' | ',' | '\\')
}

/// Known secrets shorter than this are not searched for in text (they would match ordinary words
/// and numbers); credentials are longer.
const MIN_KNOWN_SECRET_LEN: usize = 8;

fn redact_userinfo(text: &str) -> String {
    rewrite_after_schemes(text, |tail, out| {
        let authority_end = authority_end(tail, char::is_whitespace);
        match tail[..authority_end].rfind('@') {
            Some(userinfo_end) => {
                out.push_str("[redacted]");
                out.push_str(&tail[userinfo_end..authority_end]);
            }
            None => out.push_str(&tail[..authority_end]),
        }
        authority_end
    })
}

const CREDENTIAL_KEYS: [&str; 10] = [
    "token",
    "access_token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "password",
    "passwd",
    "auth",
    "sig",
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
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            continue;
        }
        let lower = key.to_ascii_lowercase();
        if !CREDENTIAL_KEYS
            .iter()
            .any(|k| lower == *k || lower.ends_with(&format!("_{k}")))
        {
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

/// `Bearer <credential>`, `Basic <credential>`, `Token <credential>` (either case) →
/// `Bearer [redacted]`. Only a word shaped like a credential is removed: token68 characters
/// (RFC 7235) that are not a plain word, so the text around it survives: `the refresh token
/// (invalid_grant: revoked)`, `a bearer token is required`, `the token endpoint` and a
/// challenge's `Bearer realm="x"` are kept as written, and a sentence's full stop after a token
/// stays.
fn redact_auth_schemes(text: &str) -> String {
    let mut out = text.to_owned();
    for scheme in ["Bearer ", "bearer ", "Basic ", "basic ", "Token ", "token "] {
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(scheme) {
            // The scheme must start a word (`mytoken abc` is not the `token` scheme).
            let starts_word = rest[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
            result.push_str(&rest[..at + scheme.len()]);
            let tail = &rest[at + scheme.len()..];
            let end = credential_len(tail);
            if starts_word && end > 0 {
                result.push_str("[redacted]");
            }
            let kept = if starts_word { end } else { 0 };
            rest = &tail[kept..];
        }
        result.push_str(rest);
        out = result;
    }
    out
}

/// How many bytes at the start of `tail` are a credential: a word (up to white space, a quote,
/// `,`, `;`, `)`, `]` or `>`, without a sentence's trailing `.`, `:`, `!` or `?`) that starts
/// with a token68 character (letters, digits, `-._~+/`) and is not a plain word (letters only,
/// lower case or capitalized), a challenge's `key=value` or already `[redacted]`; 0 when the
/// word is none of those.
fn credential_len(tail: &str) -> usize {
    let end = tail
        .find(|c: char| c.is_whitespace() || "\"',;)]>".contains(c))
        .unwrap_or(tail.len());
    let word = tail[..end].trim_end_matches(['.', ':', '!', '?']);
    let starts_token68 = word
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || "-._~+/".contains(c));
    if !starts_token68 || is_auth_param(word) || is_plain_word(word) {
        return 0;
    }
    word.len()
}

/// A word of prose: ASCII letters only, all lower case or capitalized (`expired`, `Endpoint`).
fn is_plain_word(word: &str) -> bool {
    let mut chars = word.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_lowercase())
        && word.len() <= MAX_PLAIN_WORD
}

/// Longer all-letter runs after an auth scheme are taken for credentials.
const MAX_PLAIN_WORD: usize = 24;

/// `realm=...`, `error=...`: a challenge's parameter, not a credential (token68 values only carry
/// `=` as trailing padding).
fn is_auth_param(word: &str) -> bool {
    word.split_once('=').is_some_and(|(key, value)| {
        !key.is_empty()
            && key.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
            && !value.starts_with('=')
    })
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
    fn a_challenge_is_kept_but_a_token_is_not() {
        assert_eq!(
            redact(
                r#"challenge: Bearer realm="fixture", error="invalid_token""#,
                &[]
            ),
            r#"challenge: Bearer realm="fixture", error="invalid_token""#
        );
        assert_eq!(
            redact("Authorization: Bearer abc.def==", &[]),
            "Authorization: Bearer [redacted]"
        );
    }

    #[test]
    fn the_word_after_an_auth_scheme_is_removed_only_when_it_is_a_credential() {
        let kept = [
            "the authorization server refused the refresh token (invalid_grant: revoked or expired)",
            "a bearer token is required; the token endpoint answered 500",
            "Token expired. Basic authentication is not offered",
            "challenge: Bearer realm=\"x\", error=\"invalid_token\"",
            "mytoken abc123def is not a scheme",
        ];
        for text in kept {
            assert_eq!(redact(text, &[]), text);
        }
        assert_eq!(
            redact(
                "sent token abc123-def. Then (Bearer eyJhbGc.eyJzdWIi.sig_1), ok",
                &[]
            ),
            "sent token [redacted]. Then (Bearer [redacted]), ok"
        );
        assert_eq!(
            redact("Authorization: Basic dXNlcjpwYXNz; next", &[]),
            "Authorization: Basic [redacted]; next"
        );
    }

    proptest::proptest! {
        /// Around a credential after any auth scheme, with any punctuation after it, the
        /// credential is gone and every other character is where it was.
        #[test]
        fn the_redactor_removes_the_credential_and_only_the_credential(
            before in "[a-z (]{0,12}",
            scheme in proptest::sample::select(vec!["Bearer", "bearer", "Basic", "basic", "Token", "token"]),
            body in "[A-Za-z0-9_~+/-]{6,40}",
            digit in 0u8..10,
            padding in "={0,2}",
            after in proptest::sample::select(vec!["", ".", ",", ")", "\"", "'", ";", ":", "!", "?", "]", ">", ").", "\n"]),
            rest in "( [a-z(:_]{1,12}){0,3}",
        ) {
            let before = if before.is_empty() || before.ends_with(' ') || before.ends_with('(') {
                before
            } else {
                format!("{before} ")
            };
            let credential = format!("{body}{digit}{padding}");
            let text = format!("{before}{scheme} {credential}{after}{rest}");
            let redacted = redact(&text, &[]);
            proptest::prop_assert_eq!(
                redacted,
                format!("{before}{scheme} [redacted]{after}{rest}")
            );
        }

        /// Prose after an auth scheme (a word, a parenthesis, an error code) is kept as written.
        #[test]
        fn prose_after_an_auth_scheme_is_kept(
            scheme in proptest::sample::select(vec!["Bearer", "bearer", "Basic", "basic", "Token", "token"]),
            word in "[a-z]{1,20}|[A-Z][a-z]{1,20}|\\([a-z_]{1,15}:",
            rest in "( [a-z(:_]{1,12}){0,3}",
        ) {
            let text = format!("the refresh {scheme} {word}{rest}");
            proptest::prop_assert_eq!(redact(&text, &[]), text);
        }
    }

    #[test]
    fn userinfo_is_removed_from_every_url() {
        assert_eq!(
            redact("a http://u:p@h:1/x b https://h2/y", &[]),
            "a http://[redacted]@h:1/[redacted] b https://h2/[redacted]"
        );
    }

    #[test]
    fn a_urls_path_and_query_never_survive_redaction() {
        assert_eq!(
            redact(
                "error sending request for url (https://host/t0k3n-in-path/mcp?sig=abc): refused",
                &[]
            ),
            "error sending request for url (https://host/[redacted]): refused"
        );
        assert_eq!(
            redact(r#"url: "http://127.0.0.1:9/mcp?token=zzz""#, &[]),
            r#"url: "http://127.0.0.1:9/[redacted]""#
        );
        assert_eq!(redact("see http://h:1/ now", &[]), "see http://h:1/ now");
    }

    #[test]
    fn control_characters_are_escaped_and_printable_text_kept() {
        assert_eq!(
            escape_controls("x\u{1b}]0;pwned\u{7}y\r"),
            "x\\u{1b}]0;pwned\\u{7}y\\r"
        );
        assert_eq!(escape_controls("名前-ok_1"), "名前-ok_1");
    }
}
