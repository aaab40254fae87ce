use serde_json::{Map, Value};

use crate::state::ToolName;

/// One MCP tool call: the request type of every service in this crate (the [`Hub`](crate) and the
/// readiness layer).
///
/// ```
/// use mcp_readiness::ToolCall;
/// use serde_json::json;
///
/// let call = ToolCall::new("mcp__files__read_file")
///     .with_arguments(json!({"path": "/data/a.txt"}))
///     .idempotent(true);
/// assert_eq!(call.name.server(), "files");
/// ```
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The qualified tool name.
    pub name: ToolName,
    /// The JSON arguments (an object), if any.
    pub arguments: Option<Map<String, Value>>,
    /// Whether the call may be retried once after the connection dropped mid-call. Reads are
    /// idempotent; writes usually are not. Defaults to `false`.
    pub idempotent: bool,
    /// The request's `_meta` object; the readiness layer adds `traceparent` / `tracestate` to it.
    pub meta: Option<Map<String, Value>>,
}

impl ToolCall {
    /// A call without arguments, not idempotent.
    pub fn new(name: impl Into<ToolName>) -> Self {
        ToolCall {
            name: name.into(),
            arguments: None,
            idempotent: false,
            meta: None,
        }
    }

    /// Sets the arguments. A JSON value that is not an object is wrapped as `{"value": ...}`, since
    /// MCP arguments are always an object.
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        self.arguments = match arguments {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => Some(Map::from_iter([("value".to_owned(), other)])),
        };
        self
    }

    /// Marks the call as safe (or not) to retry once after a dropped connection.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }
}
