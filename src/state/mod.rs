//! The vocabulary: the four readiness [`State`]s, the on-call [`Action`] each one asks for, and
//! [`ToolName`], the parsed form of `mcp__<server>__<tool>`.

mod action;
mod readiness;
mod tool_name;

pub use action::Action;
pub use readiness::State;
pub use tool_name::{BUILTIN_SERVER, ToolName};
