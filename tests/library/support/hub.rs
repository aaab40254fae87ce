//! Hubs as the tests build them: one streamable-HTTP server, a 10 s connect timeout and no health
//! checks unless a test asks for them.

use std::time::Duration;

use mcp_readiness::client::OAuthSpec;
use mcp_readiness::secret::Secret;
use mcp_readiness::supervise::HubOptionsBuilder;
use mcp_readiness::{Hub, HubOptions, ServerSpec, TransportSpec};

/// The streamable-HTTP server `name` at `url`, with OAuth when `oauth` is given.
pub fn http_server(name: &str, url: String, oauth: Option<OAuthSpec>) -> ServerSpec {
    let transport = TransportSpec::Http {
        url: Secret::new(url),
        headers: Default::default(),
        oauth,
    };
    ServerSpec {
        name: name.into(),
        transport,
    }
}

/// The tests' options, to add to: a 10 s connect timeout, no health checks.
pub fn options() -> HubOptionsBuilder {
    HubOptions::builder()
        .connect_timeout(Duration::from_secs(10))
        .health_interval(None)
}

/// A hub of `spec` alone, on [`options`].
pub fn one(spec: ServerSpec, options: HubOptionsBuilder) -> Hub {
    Hub::new(vec![spec], options.build().unwrap()).unwrap()
}
