//! How to reach one configured server: [`ServerSpec`], its [`TransportSpec`] (stdio or
//! streamable HTTP) and, for HTTP, its [`OAuthSpec`].

pub(crate) mod builders;
pub(crate) mod error;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::secret::Secret;

/// How to reach one MCP server. The configuration file's `mcpServers` entries map onto this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The server's name: the `<server>` of `mcp__<server>__<tool>`.
    pub name: Arc<str>,
    /// How to connect.
    pub transport: TransportSpec,
}

/// The transport of a [`ServerSpec`].
// One per configured server, built once at load and reload and never on a call's path: the size
// of the HTTP variant (its OAuth settings) costs nothing worth a `Box` in the public fields.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportSpec {
    /// A child process speaking MCP over its stdin / stdout.
    Stdio {
        /// The program to run (looked up on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables (values may be secrets).
        env: BTreeMap<String, Secret>,
        /// Working directory, if not the current one.
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP MCP endpoint.
    Http {
        /// The endpoint URL (`http` or `https`).
        url: Secret,
        /// Extra request headers, e.g. `Authorization` (values are secrets).
        headers: BTreeMap<String, Secret>,
        /// OAuth 2.1 with tokens in a credential store file, refreshed before they expire
        /// (instead of a static `Authorization` header). Needs the `oauth` feature.
        oauth: Option<OAuthSpec>,
    },
}

/// OAuth for a streamable-HTTP server: how the client is identified, the grant, and the file its
/// tokens (and its registration, when it registered itself) live in. The tokens themselves are
/// never part of the configuration; the authorization server is discovered from the MCP server
/// (RFC 9728 protected resource metadata, then RFC 8414 / OpenID Connect discovery).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthSpec {
    /// The credential store file (JSON, written with mode 0600; see `docs/oauth.md`).
    pub store: PathBuf,
    /// The OAuth client id, when the client was registered by hand. `None`: `oauth login`
    /// registers the client (a Client ID Metadata Document URL where configured and supported,
    /// else Dynamic Client Registration) and keeps the registration in the store.
    pub client_id: Option<String>,
    /// The client secret of a confidential client (`None` for a public client).
    pub client_secret: Option<Secret>,
    /// The HTTPS URL of this client's Client ID Metadata Document, used as the client id where
    /// the authorization server advertises `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for when authorizing.
    pub scopes: Vec<String>,
    /// The grant that obtains the tokens.
    pub grant: OAuthGrant,
    /// Whether the tokens are DPoP-bound (RFC 9449), for every grant.
    pub dpop: Dpop,
    /// The command that re-authorizes this server, shown when its refresh token is refused
    /// (e.g. `mcp-readiness oauth login --config mcp.json --server github`).
    pub reauthorize: Option<String>,
}

/// Whether the tokens of an [`OAuthSpec`] are sender-constrained with DPoP (RFC 9449): bound to a
/// P-256 key pair kept in the credential store, so a stolen token is useless without the key.
/// With DPoP, every token request and every MCP request carries a fresh proof signed with that
/// key (ES256), the token is sent with the `DPoP` scheme, and a server's `DPoP-Nonce` is honoured
/// (the request is retried once with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dpop {
    /// Where the authorization server's metadata offers it (`dpop_signing_alg_values_supported`
    /// lists `ES256`); bearer tokens elsewhere. `oauth.dpop` not set.
    #[default]
    WhereOffered,
    /// Always (`"dpop": true`): a connection fails, naming the authorization server, when its
    /// metadata lists DPoP algorithms without `ES256`.
    Always,
    /// Never (`"dpop": false`): bearer tokens even where DPoP is offered.
    Never,
}

/// How the tokens of an [`OAuthSpec`] are obtained.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum OAuthGrant {
    /// Authorization code with PKCE: a person runs `oauth login` once; the tokens are refreshed
    /// with the refresh token afterwards.
    #[default]
    AuthorizationCode,
    /// Client credentials (machine to machine, no login): the hub fetches a token at connect and
    /// renews it before it expires, authenticating with the `client_secret` or, with
    /// `private_key`, a signed JWT assertion (`private_key_jwt`, RFC 7523).
    ClientCredentials {
        /// The PEM private key file that signs the assertion (`None`: the client secret).
        private_key: Option<PathBuf>,
        /// The assertion's signing algorithm.
        signing_algorithm: SigningAlgorithm,
    },
    /// Workload identity (no login, no secret): the platform's identity token for this workload
    /// (a Kubernetes projected service-account token, a cloud's workload identity token), read
    /// from `assertion` at connect and again at each renewal (the platform rotates it), is
    /// exchanged for an access token with the JWT-bearer grant (RFC 7523). The hub renews the
    /// token before it expires, like client credentials.
    WorkloadIdentity {
        /// Where the workload's identity token (a JWT) is read from.
        assertion: AssertionSource,
    },
    /// Enterprise-managed authorization (SEP-990, no login, no person): an ID token that the
    /// enterprise identity provider issued to this client, read from `assertion` at connect and
    /// at each renewal, is exchanged at the identity provider for an identity assertion
    /// authorization grant (ID-JAG, RFC 8693 token exchange), which the MCP server's
    /// authorization server exchanges for an access token (JWT-bearer grant, RFC 7523),
    /// authenticating as `client_id` (with `client_secret` when set). The hub renews the token
    /// before it expires, like client credentials.
    EnterpriseManaged {
        /// The enterprise identity provider that exchanges the ID token.
        identity_provider: IdentityProvider,
        /// Where the enterprise ID token (a JWT) is read from.
        assertion: AssertionSource,
    },
}

/// The algorithm that signs a `private_key_jwt` client assertion (RFC 7523), parsed once from
/// `oauth.signing_algorithm`.
///
/// ```
/// use mcp_readiness::client::SigningAlgorithm;
///
/// assert_eq!("ES256".parse::<SigningAlgorithm>(), Ok(SigningAlgorithm::Es256));
/// assert_eq!(SigningAlgorithm::default().as_str(), "RS256");
/// let error = "HS256".parse::<SigningAlgorithm>().unwrap_err();
/// assert_eq!(error, "expected one of RS256, RS384, RS512, ES256, ES384");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SigningAlgorithm {
    /// `RS256`: RSA PKCS#1 v1.5 with SHA-256 (the default).
    #[default]
    Rs256,
    /// `RS384`.
    Rs384,
    /// `RS512`.
    Rs512,
    /// `ES256`: ECDSA on P-256 with SHA-256.
    Es256,
    /// `ES384`: ECDSA on P-384 with SHA-384.
    Es384,
}

impl SigningAlgorithm {
    /// Every algorithm, in the order the configuration's error lists them.
    pub const ALL: [SigningAlgorithm; 5] = [
        SigningAlgorithm::Rs256,
        SigningAlgorithm::Rs384,
        SigningAlgorithm::Rs512,
        SigningAlgorithm::Es256,
        SigningAlgorithm::Es384,
    ];

    /// Its JOSE name (`RS256`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SigningAlgorithm::Rs256 => "RS256",
            SigningAlgorithm::Rs384 => "RS384",
            SigningAlgorithm::Rs512 => "RS512",
            SigningAlgorithm::Es256 => "ES256",
            SigningAlgorithm::Es384 => "ES384",
        }
    }
}

impl std::str::FromStr for SigningAlgorithm {
    type Err = String;

    /// A JOSE name; the error lists the names accepted.
    fn from_str(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|algorithm| algorithm.as_str() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|a| a.as_str()).collect();
                format!("expected one of {}", names.join(", "))
            })
    }
}

impl std::fmt::Display for SigningAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The enterprise identity provider of [`OAuthGrant::EnterpriseManaged`]: where the ID token is
/// exchanged for an identity assertion authorization grant, and as which client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityProvider {
    /// Its issuer identifier (the ID-JAG's `iss` must be this).
    pub issuer: String,
    /// Its token endpoint (RFC 8693 token exchange).
    pub token_endpoint: String,
    /// The client id this client is registered as at the identity provider.
    pub client_id: String,
    /// That client's secret (`client_secret_basic`); `None` for a public client.
    pub client_secret: Option<Secret>,
}

/// Where a workload's identity token is read from, at connect and at each renewal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssertionSource {
    /// A file the platform keeps the token in and rotates (`oauth.assertion_file`).
    File(PathBuf),
    /// A command that prints a fresh token on its stdout (`oauth.assertion_command`: the program
    /// and its arguments, run without a shell).
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

impl OAuthGrant {
    /// Whether the hub obtains and renews the tokens itself (no login, no refresh token).
    pub fn renewed_by_hub(&self) -> bool {
        !matches!(self, OAuthGrant::AuthorizationCode)
    }
}

impl OAuthSpec {
    /// A spec for a client registered by hand as `client_id`, tokens in `store`, authorization
    /// code grant, no secret, no scopes.
    pub fn new(store: impl Into<PathBuf>, client_id: Option<String>) -> Self {
        OAuthSpec {
            store: store.into(),
            client_id,
            client_secret: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            grant: OAuthGrant::AuthorizationCode,
            dpop: Dpop::default(),
            reauthorize: None,
        }
    }
}

impl TransportSpec {
    /// The OpenTelemetry `network.transport` value: `pipe` for stdio, `tcp` for HTTP.
    pub fn network_transport(&self) -> &'static str {
        match self {
            TransportSpec::Stdio { .. } => "pipe",
            TransportSpec::Http { .. } => "tcp",
        }
    }

    /// Where the server is reached, for the semantic conventions' connection attributes: `pipe`
    /// for stdio; for HTTP, the URL's host and port (or its scheme's default), never its
    /// credentials, path or query.
    ///
    /// ```
    /// use mcp_readiness::TransportSpec;
    /// use mcp_readiness::state::ServerEndpoint;
    ///
    /// let spec = TransportSpec::Http {
    ///     url: "https://user:pw@mcp.example.com/mcp?key=1".into(),
    ///     headers: Default::default(),
    ///     oauth: None,
    /// };
    /// assert_eq!(spec.endpoint(), ServerEndpoint::network("mcp.example.com", 443));
    /// ```
    pub fn endpoint(&self) -> crate::state::ServerEndpoint {
        use crate::state::ServerEndpoint;
        match self {
            TransportSpec::Stdio { .. } => ServerEndpoint::pipe(),
            TransportSpec::Http { url, .. } => {
                let Ok(uri) = url.expose().parse::<http::Uri>() else {
                    return ServerEndpoint::transport_only("tcp");
                };
                let Some(host) = uri.host() else {
                    return ServerEndpoint::transport_only("tcp");
                };
                let default_port = match uri.scheme_str() {
                    Some(scheme) if scheme.eq_ignore_ascii_case("https") => 443,
                    _ => 80,
                };
                let host = host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_ascii_lowercase();
                ServerEndpoint::network(host, uri.port_u16().unwrap_or(default_port))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::client::spec::*;
    use crate::state::ServerEndpoint;

    fn http(url: &str) -> TransportSpec {
        TransportSpec::Http {
            url: url.into(),
            headers: BTreeMap::new(),
            oauth: None,
        }
    }

    #[test]
    fn the_endpoint_is_the_urls_host_and_port_and_nothing_else() {
        let cases = [
            (
                "http://127.0.0.1:8931/mcp",
                ServerEndpoint::network("127.0.0.1", 8931),
            ),
            (
                "http://mcp.internal/mcp",
                ServerEndpoint::network("mcp.internal", 80),
            ),
            (
                "HTTPS://Mcp.Example.com/x?token=s3cret",
                ServerEndpoint::network("mcp.example.com", 443),
            ),
            (
                "https://[::1]:9443/mcp",
                ServerEndpoint::network("::1", 9443),
            ),
            (
                "https://user:s3cret@host.example:8443/p",
                ServerEndpoint::network("host.example", 8443),
            ),
            ("not a url", ServerEndpoint::transport_only("tcp")),
        ];
        for (url, want) in cases {
            let got = http(url).endpoint();
            assert_eq!(got, want, "{url}");
            assert!(!format!("{got:?}").contains("s3cret"), "{url}");
        }
        let stdio = TransportSpec::Stdio {
            command: "server".into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
        };
        assert_eq!(stdio.endpoint(), ServerEndpoint::pipe());
    }
}
