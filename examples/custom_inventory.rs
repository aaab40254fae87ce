//! The readiness layer fed by a host's own view of its MCP servers instead of the `Hub`.
//!
//! Many agent runtimes already manage their MCP connections and keep a status per server, such as
//! `connected / pending / needs-auth / failed`. Adapting that list into an [`Inventory`] is all
//! the layer needs: it then resolves every call at the point of use, waits only for `pending`,
//! and refuses the rest at once with the state and the action.
//!
//! ```sh
//! cargo run --example custom_inventory
//! ```
//!
//! Here the host's `search` server finishes connecting 1.5 s after start; the call waiting for it
//! is woken by the change notification at that moment, not at its next poll.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_readiness::{Budget, Inventory, Snapshot, ToolCall, resolve::ChangeFeed};
use mcp_readiness::{NotReady, ReadinessLayer};
use rmcp::model::{CallToolResult, ContentBlock};
use tower::{BoxError, ServiceBuilder, ServiceExt};

/// How the host runtime describes one of its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HostStatus {
    Connected,
    Pending,
    NeedsAuth,
    Failed,
}

/// The host's connection list: status and offered tools by server name.
#[derive(Debug, Default)]
struct HostConnections {
    servers: Mutex<BTreeMap<String, (HostStatus, Vec<String>)>>,
    changes: ChangeFeed,
}

impl HostConnections {
    /// What the host does when a connection changes: update the list, wake waiting calls.
    fn set(&self, server: &str, status: HostStatus, tools: &[&str]) {
        let tools = tools.iter().map(|t| t.to_string()).collect();
        self.servers
            .lock()
            .unwrap()
            .insert(server.to_owned(), (status, tools));
        self.changes.bump();
    }
}

impl Inventory for HostConnections {
    /// The host's statuses in readiness terms: `connected` lists its tools as ready, `pending` is
    /// connecting, `needs-auth` is unauthenticated, and `failed` (like anything not listed) is
    /// absent.
    fn snapshot(&self) -> BoxFuture<'_, Snapshot> {
        let mut snapshot = Snapshot::default();
        for (server, (status, tools)) in self.servers.lock().unwrap().iter() {
            snapshot = match status {
                HostStatus::Connected => tools
                    .iter()
                    .fold(snapshot.with_connected_server(server), |s, tool| {
                        s.with_ready_tool(&format!("mcp__{server}__{tool}"))
                    }),
                HostStatus::Pending => snapshot.with_pending_server(server),
                HostStatus::NeedsAuth => snapshot
                    .with_unauthenticated_server(server)
                    .with_reason(server, "the host's OAuth token expired"),
                HostStatus::Failed => snapshot.with_reason(server, "the host could not start it"),
            };
        }
        Box::pin(async move { snapshot })
    }

    fn changes(&self) -> Option<&ChangeFeed> {
        Some(&self.changes)
    }
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let host = std::sync::Arc::new(HostConnections::default());
    host.set("files", HostStatus::Connected, &["read_file", "write_file"]);
    host.set("search", HostStatus::Pending, &[]);
    host.set("calendar", HostStatus::NeedsAuth, &[]);
    host.set("crm", HostStatus::Failed, &[]);

    let layer = ReadinessLayer::builder(host.clone())
        .budget(Budget::try_new(
            Duration::from_secs(5),
            Duration::from_millis(500),
        )?)
        .build();
    // The host's own way of calling a tool, as a tower service.
    let host_calls = tower::service_fn(|call: ToolCall| async move {
        Ok::<_, BoxError>(CallToolResult::success(vec![ContentBlock::text(format!(
            "{} done",
            call.name
        ))]))
    });
    let tools = ServiceBuilder::new().layer(layer).service(host_calls);

    // The host finishes connecting `search` in 1.5 s.
    let later = host.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        later.set("search", HostStatus::Connected, &["query"]);
    });

    let started = tokio::time::Instant::now();
    let names = [
        "mcp__files__read_file",
        "mcp__search__query",
        "mcp__calendar__list_events",
        "mcp__crm__update_contact",
        "mcp__files__delete_file",
    ];
    let calls = names.map(|name| {
        let tools = tools.clone();
        async move {
            let result = tools.oneshot(ToolCall::new(name)).await;
            (name, result, started.elapsed())
        }
    });
    let mut unexpected = 0;
    for (name, result, after) in futures::future::join_all(calls).await {
        let line = match &result {
            Ok(_) => format!("ran after {} ms", after.as_millis()),
            Err(err) => match err.downcast_ref::<NotReady>() {
                Some(not_ready) => format!(
                    "{} after {} ms -> {}",
                    not_ready.state(),
                    not_ready.waited().as_millis(),
                    not_ready.action()
                ),
                None => {
                    unexpected += 1;
                    format!("failed: {err}")
                }
            },
        };
        println!("{name:<30} {line}");
    }
    // What this example promises (checked by the test command): the pending server's call ran
    // once the host connected it, and the others were refused at once.
    if unexpected > 0 {
        return Err("a call failed for a reason other than readiness".into());
    }
    Ok(())
}
