//! The vocabulary: the four readiness [`State`]s, the on-call [`Action`] each one asks for, and
//! [`ToolName`], the parsed form of `mcp__<server>__<tool>`.

mod action;
mod state;
mod tool_name;

pub use action::Action;
pub use state::State;
pub use tool_name::{BUILTIN_SERVER, ToolName};
