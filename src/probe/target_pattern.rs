//! The allow-list: [`TargetPattern`]s of URLs a probe may connect to, and the [`ProbeTarget`]
//! a probe's `target` parameter is checked as.
//!
//! A probe endpoint that fetches any URL it is given is a server-side request forgery tool (it
//! reaches what only the exporter's network can reach, with the exporter's credentials). So a
//! target is parsed and normalised first (`reqwest::Url`: IPv4 written as one number, `..` in the
//! path, upper-case hosts all become their one spelling), and only then compared, part by part,
//! with patterns that cannot be widened by a crafted string (`https://api.example.com*` is not a
//! pattern: the host is compared as a host, never as a prefix of the URL).

use std::fmt;

use reqwest::Url;

/// One allow-list entry: `scheme://host[:port][/path]`.
///
/// - `scheme`: `http` or `https`, exactly.
/// - `host`: a host name, an IPv4 address or a bracketed IPv6 address, compared exactly; or
///   `*.example.com`, any host name ending in `.example.com` (one or more labels before it, never
///   `example.com` itself). A bare `*` is refused: it would allow every host.
/// - `port`: a number, or `*` for any port; without one, the scheme's default (80, 443).
/// - `path`: without one, any path; `/mcp` only `/mcp`; `/mcp/*` every path starting `/mcp/`.
///
/// A pattern has no user name, password, query or fragment.
///
/// ```
/// use mcp_readiness::probe::{ProbeTarget, TargetPattern};
///
/// let pattern: TargetPattern = "https://*.example.com/mcp".parse().unwrap();
/// let target = |url: &str| ProbeTarget::parse(url).unwrap();
/// assert!(pattern.allows(&target("https://api.example.com/mcp")));
/// assert!(!pattern.allows(&target("https://example.com/mcp")));
/// assert!(!pattern.allows(&target("https://api.example.com.evil.test/mcp")));
/// assert!(!pattern.allows(&target("https://api.example.com:8443/mcp")));
///
/// let local: TargetPattern = "http://127.0.0.1:*/mcp".parse().unwrap();
/// assert!(local.allows(&target("http://127.0.0.1:8080/mcp")));
/// assert!(local.allows(&target("http://2130706433:8080/mcp"))); // 127.0.0.1, spelled as a number
/// assert!(!local.allows(&target("http://127.0.0.2:8080/mcp")));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct TargetPattern {
    text: String,
    scheme: String,
    host: HostPattern,
    port: Option<u16>,
    path: PathPattern,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// The normalised host (`127.0.0.1`, `[::1]`, `api.example.com`).
    Exact(String),
    /// `.example.com`: any host name with at least one label before it.
    Subdomains(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PathPattern {
    Any,
    Exact(String),
    Prefix(String),
}

impl fmt::Debug for TargetPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TargetPattern").field(&self.text).finish()
    }
}

impl fmt::Display for TargetPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why a pattern was refused (the configuration names the file and the JSON path around it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PatternError(String);

impl std::str::FromStr for TargetPattern {
    type Err = PatternError;

    fn from_str(text: &str) -> Result<TargetPattern, PatternError> {
        let err = |m: &str| PatternError(m.to_owned());
        let (scheme, rest) = text.split_once("://").ok_or_else(|| {
            // No path in the examples: log lines redact every URL's path, these included.
            err("expected a URL pattern such as https://*.example.com (scheme://host, then :port and /path where needed), found no scheme")
        })?;
        if scheme != "http" && scheme != "https" {
            return Err(err("expected the scheme `http` or `https`"));
        }
        if rest.contains(['?', '#']) || rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(err(
                "a pattern has no query, fragment, spaces or control characters: write scheme://host, then :port and /path where needed",
            ));
        }
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], Some(&rest[at..])),
            None => (rest, None),
        };
        if authority.contains('@') {
            return Err(err(
                "a pattern has no user name or password: credentials belong in a module's `headers`",
            ));
        }
        let (host, port) = split_port(authority)
            .ok_or_else(|| err("expected a port number or `*` after the host's `:`"))?;
        let port = match port {
            None => Some(default_port(scheme)),
            Some("*") => None,
            Some(digits) => Some(digits.parse::<u16>().map_err(|_| {
                err("expected a port number (1-65535) or `*` after the host's `:`")
            })?),
        };
        let host = if host == "*" {
            return Err(err(
                "a bare `*` host allows every host (a request-forgery tool): name the hosts, or `*.domain`",
            ));
        } else if let Some(suffix) = host.strip_prefix("*.") {
            let normal = normal_host(scheme, suffix)
                .filter(|h| !h.starts_with('[') && h.contains(|c: char| c.is_ascii_alphabetic()))
                .ok_or_else(|| err("expected a domain after `*.` (e.g. `*.example.com`)"))?;
            HostPattern::Subdomains(format!(".{normal}"))
        } else if host.contains('*') {
            return Err(err(
                "`*` may only stand for the leading labels of a host name (`*.example.com`) or for the port",
            ));
        } else {
            HostPattern::Exact(
                normal_host(scheme, host)
                    .ok_or_else(|| err("expected a host name or an IP address"))?,
            )
        };
        let path = match path {
            None => PathPattern::Any,
            Some(path) => match path.strip_suffix('*') {
                Some(prefix) if !prefix.contains('*') => PathPattern::Prefix(prefix.to_owned()),
                None if !path.contains('*') => PathPattern::Exact(path.to_owned()),
                _ => return Err(err("`*` may only end a path (`/mcp/*`)")),
            },
        };
        Ok(TargetPattern {
            text: text.to_owned(),
            scheme: scheme.to_owned(),
            host,
            port,
            path,
        })
    }
}

/// `host` and its port text; an IPv6 host keeps its brackets.
fn split_port(authority: &str) -> Option<(&str, Option<&str>)> {
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, after) = authority.split_at(end + 1);
        return match after.strip_prefix(':') {
            Some(port) => Some((host, Some(port))),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host, Some(port))),
        None => Some((authority, None)),
    }
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

/// The host as a parsed URL spells it (lower case, IDNA, IPv4 in dotted form), or `None`.
fn normal_host(scheme: &str, host: &str) -> Option<String> {
    if host.is_empty() {
        return None;
    }
    let url = Url::parse(&format!("{scheme}://{host}/")).ok()?;
    url.host_str().map(str::to_owned)
}

/// A probe's `target`, parsed and normalised: an `http(s)` URL with a host and no user name or
/// password.
#[derive(Clone, PartialEq, Eq)]
pub struct ProbeTarget {
    url: Url,
}

impl fmt::Debug for ProbeTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The query may carry something private: scheme, host, port and path only.
        f.debug_tuple("ProbeTarget").field(&self.shown()).finish()
    }
}

/// Why a `target` is not a URL that can be probed (a `400`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(String);

impl ProbeTarget {
    /// Parses `target`. The error never repeats the target (it may carry credentials).
    pub fn parse(target: &str) -> Result<ProbeTarget, TargetError> {
        let err = |m: &str| TargetError(m.to_owned());
        let url = Url::parse(target).map_err(|e| {
            TargetError(format!(
                "`target` is not a URL ({e}): pass an http:// or https:// URL, percent-encoded in the query string"
            ))
        })?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(err("`target` must be an http:// or https:// URL"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(err("`target` has no host"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(err(
                "`target` carries a user name or password: credentials never travel in a probe's URL; put them in a module's `headers`",
            ));
        }
        Ok(ProbeTarget { url })
    }

    /// The URL to connect to.
    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// `scheme://host:port/path`, without the query: what messages and the default `server`
    /// label show.
    pub fn shown(&self) -> String {
        format!(
            "{}://{}:{}{}",
            self.url.scheme(),
            self.url.host_str().unwrap_or_default(),
            self.port(),
            self.url.path()
        )
    }

    /// `scheme://host:port`, without the path: what a log line may show of a target (log lines
    /// redact URL paths, and a configured URL as a whole).
    pub(crate) fn origin(&self) -> String {
        format!(
            "{}://{}:{}",
            self.url.scheme(),
            self.url.host_str().unwrap_or_default(),
            self.port()
        )
    }

    /// `host:port`: the `server` label when the probe names none.
    pub fn host_port(&self) -> String {
        format!(
            "{}:{}",
            self.url.host_str().unwrap_or_default(),
            self.port()
        )
    }

    /// Whether the target is `https://`.
    pub(crate) fn is_https(&self) -> bool {
        self.url.scheme() == "https"
    }

    /// The host to resolve or connect to: a name, or an IP address (IPv6 without brackets).
    pub(crate) fn host(&self) -> &str {
        let host = self.url.host_str().unwrap_or_default();
        host.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host)
    }

    pub(crate) fn port(&self) -> u16 {
        self.url
            .port_or_known_default()
            .unwrap_or_else(|| default_port(self.url.scheme()))
    }
}

impl TargetPattern {
    /// Whether `target` is one of the URLs this pattern allows.
    pub fn allows(&self, target: &ProbeTarget) -> bool {
        let url = &target.url;
        if url.scheme() != self.scheme {
            return false;
        }
        let host = url.host_str().unwrap_or_default();
        let host_ok = match &self.host {
            HostPattern::Exact(exact) => host == exact,
            HostPattern::Subdomains(suffix) => {
                // The suffix has a letter, so no IP address ends with it.
                host.len() > suffix.len() && host.ends_with(suffix.as_str())
            }
        };
        if !host_ok {
            return false;
        }
        if self.port.is_some_and(|port| port != target.port()) {
            return false;
        }
        match &self.path {
            PathPattern::Any => true,
            PathPattern::Exact(path) => url.path() == path,
            PathPattern::Prefix(prefix) => url.path().starts_with(prefix.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(text: &str) -> TargetPattern {
        text.parse().unwrap()
    }

    fn target(text: &str) -> ProbeTarget {
        ProbeTarget::parse(text).unwrap()
    }

    #[test]
    fn a_host_is_compared_as_a_host_never_as_a_prefix_of_the_url() {
        let p = pattern("https://api.example.com/mcp");
        assert!(p.allows(&target("https://API.example.com/mcp")));
        assert!(p.allows(&target("https://api.example.com:443/mcp")));
        assert!(!p.allows(&target("https://api.example.com.evil.test/mcp")));
        assert!(!p.allows(&target("http://api.example.com/mcp")));
        assert!(!p.allows(&target("https://api.example.com/mcp/other")));
        assert!(p.allows(&target("https://api.example.com/x/../mcp")));
    }

    #[test]
    fn a_wildcard_host_needs_a_label_before_its_domain_and_matches_no_ip() {
        let p = pattern("https://*.example.com");
        assert!(p.allows(&target("https://a.b.example.com/anything")));
        assert!(!p.allows(&target("https://example.com/")));
        assert!(!p.allows(&target("https://notexample.com/")));
    }

    #[test]
    fn ports_default_to_the_schemes_and_star_allows_any() {
        assert!(!pattern("http://127.0.0.1/mcp").allows(&target("http://127.0.0.1:8080/mcp")));
        assert!(pattern("http://127.0.0.1:*/mcp").allows(&target("http://127.0.0.1:8080/mcp")));
        assert!(pattern("http://[::1]:*/mcp").allows(&target("http://[::1]:9/mcp")));
        assert!(
            pattern("http://localhost:8080/mcp/*").allows(&target("http://localhost:8080/mcp/a"))
        );
        assert!(
            !pattern("http://localhost:8080/mcp/*").allows(&target("http://localhost:8080/mcpx"))
        );
    }

    #[test]
    fn patterns_that_would_allow_everything_or_carry_credentials_are_refused() {
        for bad in [
            "http://*",
            "http://*:*/",
            "https://api.*.com/",
            "https://u:p@example.com/",
            "ftp://example.com/",
            "example.com",
            "https://example.com/mcp?x=1",
            "https://example.com:99999/",
            "https://example.com/a*b",
            "https://*.[::1]/",
        ] {
            assert!(bad.parse::<TargetPattern>().is_err(), "{bad}");
        }
    }

    #[test]
    fn targets_with_credentials_or_other_schemes_are_refused_without_repeating_them() {
        let e = ProbeTarget::parse("https://bob:hunter2@example.com/mcp").unwrap_err();
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert!(ProbeTarget::parse("file:///etc/passwd").is_err());
        assert!(ProbeTarget::parse("not a url").is_err());
    }
}
