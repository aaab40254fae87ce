use std::collections::{HashMap, HashSet};

use crate::state::{State, ToolName};

/// What an [`Inventory`](super::Inventory) knows at one instant: which tools are offered, which
/// servers are connected, still connecting, or waiting for authorization.
///
/// ```
/// use mcp_readiness::{resolve::classify, Snapshot, State, ToolName};
///
/// let snapshot = Snapshot::default()
///     .with_ready_tool("mcp__files__read")
///     .with_pending_server("search")
///     .with_pending_server("chat")
///     .with_unauthenticated_server("chat");
/// assert_eq!(classify(&ToolName::parse("mcp__files__read"), &snapshot), State::Ready);
/// assert_eq!(classify(&ToolName::parse("mcp__search__query"), &snapshot), State::Connecting);
/// // Pending and awaiting authorization: waiting would never end.
/// assert_eq!(classify(&ToolName::parse("mcp__chat__send"), &snapshot), State::Unauthenticated);
/// assert_eq!(classify(&ToolName::parse("mcp__files__write"), &snapshot), State::Absent);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Qualified names (`mcp__server__tool`) of the tools live connections offer now.
    pub ready_tools: HashSet<String>,
    /// Servers with a live connection. A tool missing from a connected server is absent at the
    /// grain of the tool, not of the server.
    pub connected_servers: HashSet<String>,
    /// Servers whose handshake or start-up is in progress.
    pub pending_servers: HashSet<String>,
    /// Servers whose credentials are missing, expired or revoked.
    pub unauthenticated_servers: HashSet<String>,
    /// Optional human-readable explanation per server (why it is absent, cooling down, ...). Must
    /// not contain secrets.
    pub reasons: HashMap<String, String>,
}

impl Snapshot {
    /// Adds a ready tool (and marks its server connected).
    pub fn with_ready_tool(mut self, tool: &str) -> Self {
        let name = ToolName::parse(tool);
        self.connected_servers.insert(name.server().to_owned());
        self.ready_tools.insert(tool.to_owned());
        self
    }

    /// Marks a server connected (even if it offers no tools).
    pub fn with_connected_server(mut self, server: &str) -> Self {
        self.connected_servers.insert(server.to_owned());
        self
    }

    /// Marks a server as still connecting.
    pub fn with_pending_server(mut self, server: &str) -> Self {
        self.pending_servers.insert(server.to_owned());
        self
    }

    /// Marks a server as waiting for authorization.
    pub fn with_unauthenticated_server(mut self, server: &str) -> Self {
        self.unauthenticated_servers.insert(server.to_owned());
        self
    }

    /// Records why a server is in its state.
    pub fn with_reason(mut self, server: &str, reason: impl Into<String>) -> Self {
        self.reasons.insert(server.to_owned(), reason.into());
        self
    }

    /// Whether `server` has a live connection.
    pub fn is_connected(&self, server: &str) -> bool {
        self.connected_servers.contains(server)
    }

    /// The recorded explanation for `server`, if any.
    pub fn reason(&self, server: &str) -> Option<&str> {
        self.reasons.get(server).map(String::as_str)
    }
}

/// Classifies one tool against a snapshot, in the order that matters:
/// `ready` (the tool is listed) → `unauthenticated` → `connecting` → `absent`.
pub fn classify(tool: &ToolName, snapshot: &Snapshot) -> State {
    // 1. Listed by a live connection: nothing else to ask.
    if snapshot.ready_tools.contains(tool.as_str()) {
        return State::Ready;
    }
    let server = tool.server();
    // 2. Authorization before connecting: a server pending *and* awaiting auth never finishes.
    if snapshot.unauthenticated_servers.contains(server) {
        return State::Unauthenticated;
    }
    // 3. Still starting: no conclusion yet.
    if snapshot.pending_servers.contains(server) {
        return State::Connecting;
    }
    // 4. Nothing else: not here in this run.
    State::Absent
}
