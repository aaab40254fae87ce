//! [`ServerEndpoint`]: where a server is reached, in the OpenTelemetry semantic conventions'
//! words (`network.transport`, `server.address`, `server.port`).

use std::sync::Arc;

/// Where a server is reached, as the OpenTelemetry MCP semantic conventions describe the
/// connection of `mcp.client.operation.duration`: the transport, and for a network server its
/// host and port. Carried by [`ConnectionEvent::Endpoint`](super::ConnectionEvent::Endpoint); the
/// metrics recorder puts it on the operation histogram it exports over OTLP.
///
/// ```
/// use mcp_readiness::state::ServerEndpoint;
///
/// let http = ServerEndpoint::network("mcp.example.com", 443);
/// assert_eq!(http.transport, "tcp");
/// assert_eq!(http.address.as_deref(), Some("mcp.example.com"));
/// assert_eq!(http.port, Some(443));
/// assert_eq!(ServerEndpoint::pipe().address, None); // a stdio child has no address
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ServerEndpoint {
    /// `network.transport`: `pipe` (a stdio child), `tcp` (streamable HTTP) or `unknown` (a
    /// connector that does not say).
    pub transport: &'static str,
    /// `server.address`: the host of the server's URL (never its credentials, path or query);
    /// `None` for a stdio child.
    pub address: Option<Arc<str>>,
    /// `server.port`: the URL's port, or its scheme's default; `None` without an address.
    pub port: Option<u16>,
    /// The notAfter (Unix seconds) of the leaf certificate the connection's TLS handshake was
    /// made with (`mcp_readiness_tls_certificate_expiry_timestamp_seconds`); `None` for plain
    /// HTTP, a stdio child, or a connector that does not say.
    pub tls_certificate_expiry: Option<i64>,
}

impl ServerEndpoint {
    /// A stdio child: `network.transport = pipe`, no address.
    pub fn pipe() -> Self {
        ServerEndpoint::transport_only("pipe")
    }

    /// A transport with no address (`pipe`, `tcp` or `unknown`).
    pub fn transport_only(transport: &'static str) -> Self {
        ServerEndpoint {
            transport,
            address: None,
            port: None,
            tls_certificate_expiry: None,
        }
    }

    /// The same endpoint, reached with a TLS certificate whose notAfter is `not_after` (Unix
    /// seconds; `None`: not over TLS).
    ///
    /// ```
    /// use mcp_readiness::state::ServerEndpoint;
    ///
    /// let https = ServerEndpoint::network("mcp.example.com", 443).with_tls_certificate_expiry(Some(1_925_078_400));
    /// assert_eq!(https.tls_certificate_expiry, Some(1_925_078_400));
    /// ```
    pub fn with_tls_certificate_expiry(mut self, not_after: Option<i64>) -> Self {
        self.tls_certificate_expiry = not_after;
        self
    }

    /// A network server at `address:port` over TCP (streamable HTTP). An IPv6 address is given
    /// without brackets.
    pub fn network(address: impl Into<Arc<str>>, port: u16) -> Self {
        ServerEndpoint {
            transport: "tcp",
            address: Some(address.into()),
            port: Some(port),
            tls_certificate_expiry: None,
        }
    }
}
