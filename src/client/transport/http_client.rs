//! The reqwest client of a server's MCP requests and of its OAuth requests: no idle pooled
//! connections, same-origin 307 / 308 redirects only (at most 10), and with `tls` the server's
//! leaf certificate noted.

use crate::client::connector::ConnectError;
use crate::state::ConnectResult;

/// The reqwest client rmcp's `StreamableHttpClientTransport::from_config` builds, for `server`'s
/// MCP requests (with bearer headers or through OAuth): no idle pooled connections (avoids
/// Delayed-ACK stalls) and only same-origin 307 / 308 redirects, at most 10. With `tls` the MCP
/// requests go through [`http_client_noting`] instead; OAuth's own requests use this one.
#[cfg(any(not(feature = "tls"), feature = "oauth", test))]
pub(crate) fn default_http_client(server: &str) -> Result<reqwest::Client, ConnectError> {
    http_client(server, reqwest::Client::builder())
}

/// [`default_http_client`] whose HTTPS connections note the server's leaf certificate in `slot`
/// (feature `tls`; without it, plain HTTP only and nothing is noted).
#[cfg(feature = "tls")]
pub(crate) fn http_client_noting(
    server: &str,
    slot: crate::client::transport::tls_certificate::CertificateSlot,
) -> Result<reqwest::Client, ConnectError> {
    let tls = crate::client::transport::tls_certificate::client_config(slot).map_err(|e| {
        ConnectError::new(
            ConnectResult::ProtocolError,
            format!(
                "server `{server}`: the TLS client could not be set up ({e}): the platform's \
                 certificate roots could not be read"
            ),
        )
    })?;
    http_client(
        server,
        reqwest::Client::builder().tls_backend_preconfigured(tls),
    )
}

fn http_client(
    server: &str,
    builder: reqwest::ClientBuilder,
) -> Result<reqwest::Client, ConnectError> {
    builder
        .pool_max_idle_per_host(0)
        .redirect(same_origin_redirect_policy())
        .build()
        .map_err(|e| {
            ConnectError::new(
                ConnectResult::ProtocolError,
                format!("server `{server}`: the HTTP client could not be built ({e})"),
            )
        })
}

/// How many redirects one request follows (rmcp's `MAX_REDIRECTS`).
const MAX_REDIRECTS: usize = 10;

/// rmcp's redirect policy for its default client: a 301 / 302 / 303 would turn the POST into a
/// bodyless GET and a cross-origin hop would replay the session id and custom headers (a bearer
/// token) to another host, so both are returned as the redirect response instead.
fn same_origin_redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let preserves_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|original| original.origin() == attempt.url().origin());
        if !preserves_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("exceeded {MAX_REDIRECTS} redirects"))
        } else {
            // Paths only: a query string may carry credentials.
            tracing::debug!(
                status = %attempt.status(),
                from = attempt.previous().last().map(|url| url.path()).unwrap_or_default(),
                to = attempt.url().path(),
                "following same-origin redirect"
            );
            attempt.follow()
        }
    })
}
