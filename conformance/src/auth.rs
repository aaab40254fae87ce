//! The auth scenarios: `mcp-readiness oauth login`'s flow (the library's
//! [`authorize`](mcp_readiness::supervise::authorize)) with the non-interactive browser, a
//! credential store in a scratch directory, then the Hub connecting with that store, as `serve`
//! would after a person logged in.

use std::path::{Path, PathBuf};

use mcp_readiness::supervise::{OAuthSpec, TransportSpec};
use mcp_readiness::{ServerSpec, secret::Secret};

use crate::context::Context;
use crate::stack::SERVER;

/// The client id when the scenario names none.
const DEFAULT_CLIENT_ID: &str = "mcp-readiness-conformance";

/// A scratch directory for the credential store, removed when dropped.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new() -> Result<Scratch, String> {
        let dir =
            std::env::temp_dir().join(format!("mcp-readiness-conformance-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Logs in to the server at `url` as `oauth login` would, and returns the spec that connects to
/// it with the tokens the login stored.
pub(crate) async fn login(
    url: &str,
    context: &Context,
    scratch: &Scratch,
) -> Result<ServerSpec, String> {
    let oauth = OAuthSpec {
        store: scratch.path().join("store.json"),
        client_id: context
            .client_id
            .clone()
            .unwrap_or_else(|| DEFAULT_CLIENT_ID.to_owned()),
        client_secret: context.client_secret.clone().map(Secret::new),
        scopes: Vec::new(),
        reauthorize: None,
    };
    let mut transport = TransportSpec::http(url.to_owned());
    if let TransportSpec::Http { oauth: slot, .. } = &mut transport {
        *slot = Some(oauth);
    }
    let spec = ServerSpec::new(SERVER, transport);
    mcp_readiness::supervise::authorize(&spec, 0, crate::browser::open)
        .await
        .map_err(|e| e.to_string())?;
    Ok(spec)
}
