//! The addresses an OAuth request made with DPoP may reach, as rmcp's own OAuth client allows
//! them (`AuthorizationManager::new`, whose HTTP client cannot be wrapped): any public address; a
//! loopback or private one only when the MCP server's own URL names one of the same class (a
//! loopback or private IP literal, or `localhost`); link-local (cloud instance metadata
//! included), unspecified, broadcast, multicast and reserved addresses never. Names are checked
//! after resolution ([`FilteredResolver`]), IP literals before the request ([`Policy::allows`]).
//! The hosts of configured proxies (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`) are not filtered.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use oauth2::url::Host;
use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// What kind of address an address is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Public,
    Loopback,
    Private,
    Blocked,
}

impl Class {
    pub(crate) fn of(ip: IpAddr) -> Class {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        match ip {
            IpAddr::V4(v4) => {
                let [a, b, ..] = v4.octets();
                if v4.is_loopback() {
                    Class::Loopback
                } else if v4.is_private() || (a == 100 && (64..=127).contains(&b)) {
                    Class::Private
                } else if v4.is_link_local()
                    || v4.is_unspecified()
                    || v4.is_broadcast()
                    || v4.is_multicast()
                    || matches!(
                        (a, b, v4.octets()[2]),
                        (192, 0, 2) | (198, 51, 100) | (203, 0, 113)
                    )
                    || a == 0
                    || a >= 240
                {
                    Class::Blocked
                } else {
                    Class::Public
                }
            }
            IpAddr::V6(v6) => {
                let first = v6.segments()[0];
                if v6.is_loopback() {
                    Class::Loopback
                } else if first & 0xfe00 == 0xfc00 {
                    Class::Private
                } else if v6.is_unspecified() || v6.is_multicast() || first & 0xffc0 == 0xfe80 {
                    Class::Blocked
                } else {
                    Class::Public
                }
            }
        }
    }
}

/// The classes the requests for one MCP server may reach, and the proxy hosts left alone.
#[derive(Debug, Clone)]
pub(crate) struct Policy {
    base: Option<Class>,
    proxies: Arc<[String]>,
    /// Every address (the identity provider of enterprise-managed authorization, which rmcp's
    /// default OAuth client reaches unfiltered too).
    unfiltered: bool,
}

impl Policy {
    /// No filter: as rmcp's `default_oauth_http_client`.
    pub(crate) fn unfiltered() -> Policy {
        Policy {
            base: None,
            proxies: Arc::from([]),
            unfiltered: true,
        }
    }

    /// The policy of OAuth requests for the MCP server at `base_url`.
    pub(crate) fn for_server(base_url: &str) -> Policy {
        let base = Url::parse(base_url).ok().and_then(|url| match url.host()? {
            Host::Ipv4(v4) => Some(Class::of(IpAddr::V4(v4))),
            Host::Ipv6(v6) => Some(Class::of(IpAddr::V6(v6))),
            Host::Domain(d) if d.eq_ignore_ascii_case("localhost") => Some(Class::Loopback),
            Host::Domain(_) => None,
        });
        let proxies = [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ]
        .iter()
        .filter_map(|var| std::env::var(var).ok())
        .filter_map(|proxy| Some(Url::parse(&proxy).ok()?.host_str()?.to_ascii_lowercase()))
        .collect();
        Policy {
            base,
            proxies,
            unfiltered: false,
        }
    }

    /// Whether an address of `class` may be reached.
    fn reaches(&self, class: Class) -> bool {
        if self.unfiltered {
            return true;
        }
        match class {
            Class::Public => true,
            Class::Blocked => false,
            other => self.base == Some(other),
        }
    }

    /// Whether `url` may be requested, as far as its host is an IP literal (names are checked
    /// when resolved).
    pub(crate) fn allows(&self, url: &Url) -> bool {
        match url.host() {
            Some(Host::Ipv4(v4)) => self.reaches(Class::of(IpAddr::V4(v4))),
            Some(Host::Ipv6(v6)) => self.reaches(Class::of(IpAddr::V6(v6))),
            Some(Host::Domain(_)) => true,
            None => false,
        }
    }

    /// The resolver that keeps only the addresses this policy reaches.
    pub(crate) fn resolver(&self) -> Arc<FilteredResolver> {
        Arc::new(FilteredResolver(self.clone()))
    }
}

/// Resolves names with the system resolver and keeps the addresses its [`Policy`] reaches.
#[derive(Debug)]
pub(crate) struct FilteredResolver(Policy);

impl Resolve for FilteredResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.0.clone();
        let host = name.as_str().to_ascii_lowercase();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if policy.proxies.contains(&host) {
                return Ok(Box::new(found.into_iter()) as Addrs);
            }
            let kept: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| policy.reaches(Class::of(addr.ip())))
                .collect();
            if kept.is_empty() {
                return Err(format!(
                    "`{host}` resolves to no address an OAuth request for this server may reach \
                     (a loopback, private or link-local address that the MCP server's own URL \
                     does not name)"
                )
                .into());
            }
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn private_and_loopback_addresses_only_for_a_server_of_the_same_class_link_local_never() {
        let public = Policy::for_server("https://mcp.example.com/mcp");
        let loopback = Policy::for_server("http://localhost:3000/mcp");
        let private = Policy::for_server("http://10.0.0.5/mcp");
        for policy in [&public, &loopback, &private] {
            assert!(policy.allows(&url("https://93.184.216.34/token")));
            assert!(
                policy.allows(&url("https://as.example.com/token")),
                "names: at resolution"
            );
            assert!(!policy.allows(&url("http://169.254.169.254/latest")));
            assert!(!policy.allows(&url("http://[fe80::1]/token")));
            assert!(!policy.allows(&url("http://0.0.0.0/token")));
        }
        assert!(!public.allows(&url("http://127.0.0.1:8080/token")));
        assert!(!public.allows(&url("http://192.168.1.1/token")));
        assert!(loopback.allows(&url("http://127.0.0.1:8080/token")));
        assert!(loopback.allows(&url("http://[::1]:8080/token")));
        assert!(!loopback.allows(&url("http://10.1.2.3/token")));
        assert!(private.allows(&url("http://172.16.0.9/token")));
        assert!(private.allows(&url("http://[fd00::1]/token")));
        assert!(!private.allows(&url("http://127.0.0.1/token")));
        assert_eq!(
            Class::of("::ffff:127.0.0.1".parse().unwrap()),
            Class::Loopback
        );
        assert_eq!(Class::of("100.64.0.1".parse().unwrap()), Class::Private);
        assert!(Policy::unfiltered().allows(&url("http://169.254.169.254/latest")));
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_a_blocked_address_is_not_reached() {
        let resolver = Policy::for_server("https://mcp.example.com/mcp").resolver();
        let refused = resolver.resolve("localhost".parse().unwrap()).await;
        let why = refused
            .err()
            .expect("localhost is not for a public server")
            .to_string();
        assert!(
            why.contains("`localhost`") && why.contains("loopback"),
            "{why}"
        );
        let loopback = Policy::for_server("http://127.0.0.1:9/mcp").resolver();
        let found: Vec<_> = loopback
            .resolve("localhost".parse().unwrap())
            .await
            .unwrap()
            .collect();
        assert!(found.iter().all(|a| a.ip().is_loopback()) && !found.is_empty());
    }
}
