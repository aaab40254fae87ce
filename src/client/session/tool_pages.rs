//! `tools/list` across pages, bounded: a server whose cursor leads back to a page it already
//! sent, or that never stops paging, is a protocol error after at most [`MAX_TOOL_PAGES`] pages
//! or [`MAX_TOOLS`] tools, instead of a loop that grows this process until the connect timeout.

use std::collections::HashSet;

use rmcp::model::{ErrorCode, PaginatedRequestParams, Tool};
use rmcp::service::RoleClient;
use rmcp::{ErrorData, Peer, ServiceError};
use serde_json::json;

/// The most `tools/list` pages read for one listing.
pub const MAX_TOOL_PAGES: usize = 1_000;

/// The most tools kept from one listing (all pages together).
pub const MAX_TOOLS: usize = 10_000;

/// The marker in the `data` of the error that ends an unbounded listing.
const MARKER: &str = "mcp_readiness.tool_list_unbounded";

/// Every tool the server offers, page by page, within the caps above.
pub(crate) async fn list_tools_bounded(peer: &Peer<RoleClient>) -> Result<Vec<Tool>, ServiceError> {
    let mut tools = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    for page in 1..=MAX_TOOL_PAGES {
        let params = cursor
            .clone()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let result = peer.list_tools(params).await?;
        tools.extend(result.tools);
        if tools.len() > MAX_TOOLS {
            return Err(unbounded(format!(
                "tools/list offered more than {MAX_TOOLS} tools in {page} page(s); the server \
                 lists too many tools to track: split it, or fix its pagination"
            )));
        }
        match result.next_cursor {
            None => return Ok(tools),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(unbounded(format!(
                    "tools/list returned a cursor it had already returned, after {page} page(s) \
                     (its pagination loops back to an earlier page); fix or upgrade the server"
                )));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(unbounded(format!(
        "tools/list was still paging after {MAX_TOOL_PAGES} pages ({} tools); fix the server's \
         pagination",
        tools.len()
    )))
}

fn unbounded(message: String) -> ServiceError {
    ServiceError::McpError(ErrorData::new(
        ErrorCode::INVALID_REQUEST,
        message,
        Some(json!({ "reason": MARKER })),
    ))
}

/// The reason, when `error` ended a listing that did not stop (see [`list_tools_bounded`]).
pub(crate) fn unbounded_reason(error: &ServiceError) -> Option<&str> {
    match error {
        ServiceError::McpError(data)
            if data.data.as_ref().and_then(|d| d.get("reason")) == Some(&json!(MARKER)) =>
        {
            Some(&data.message)
        }
        _ => None,
    }
}
