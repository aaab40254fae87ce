//! The tower middleware that wraps every MCP tool call.

mod tool_call;

pub use tool_call::ToolCall;
