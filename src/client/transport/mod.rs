//! What every HTTP request of a client goes through, MCP's and OAuth's alike: the reqwest client
//! (no idle pooled connections, same-origin redirects only), TLS and the certificate each HTTPS
//! connection was made with (`tls`), and `Retry-After`.

pub(crate) mod http_client;
pub(crate) mod retry_after;
#[cfg(feature = "tls")]
pub(crate) mod tls_certificate;
