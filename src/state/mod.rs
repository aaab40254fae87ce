//! The vocabulary every other module speaks: the four readiness [`State`]s, the on-call [`Action`]
//! each one asks for, [`ToolName`] (the parsed form of `mcp__<server>__<tool>`), the request
//! type [`ToolCall`] of every service in this crate, [`CallOutcome`], how a call through the
//! layer ended, and the [`ConnectionEvent`]s a supervisor tells its [`EventSink`]s (the metrics
//! recorder among them).

mod action;
mod call_outcome;
mod connection_event;
mod credential;
mod endpoint;
mod readiness;
mod tool_call;
mod tool_name;

pub use action::Action;
pub use call_outcome::CallOutcome;
pub use connection_event::{ConnectResult, ConnectionEvent, EventSink, ServerIdentity};
pub use credential::{CredentialExpiry, CredentialKind};
pub use endpoint::ServerEndpoint;
pub use readiness::State;
pub use tool_call::ToolCall;
pub use tool_name::{BUILTIN_SERVER, ToolName};
