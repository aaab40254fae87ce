//! Where an HTTP session's `Mcp-Session-Id` is kept: written by the streamable-HTTP client that
//! reads every POST response (`http/session_id.rs`), read by the session for the call span's
//! `mcp.session.id`.

use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_client::StreamableHttpPostResponse;

use crate::util::MutexExt as _;

/// Where a connection's session id is kept: written by [`SessionIdClient`], read by the session.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionIdSlot(Arc<Mutex<Option<Arc<str>>>>);

impl SessionIdSlot {
    /// The last session id the server sent, if any.
    pub(crate) fn get(&self) -> Option<Arc<str>> {
        self.0.lock_unpoisoned().clone()
    }

    /// Keeps the session id of a POST response (an empty one is no session).
    pub(crate) fn note<E>(&self, response: &Result<StreamableHttpPostResponse, E>) {
        let id = match response {
            Ok(
                StreamableHttpPostResponse::Json(_, Some(id))
                | StreamableHttpPostResponse::Sse(_, Some(id)),
            ) if !id.is_empty() => id,
            _ => return,
        };
        let mut slot = self.0.lock_unpoisoned();
        if slot.as_deref() != Some(id.as_str()) {
            *slot = Some(id.as_str().into());
        }
    }
}
