//! The vocabulary every other module speaks: the four readiness [`State`]s, the on-call [`Action`]
//! each one asks for, [`ToolName`] (the parsed form of `mcp__<server>__<tool>`), the request
//! type [`ToolCall`] of every service in this crate, [`CallOutcome`], how a call through the
//! layer ended, and the [`ConnectionEvent`]s a supervisor tells its [`EventSink`]s (the metrics
//! recorder among them).

pub(crate) mod action;
mod call_outcome;
mod connection_event;
mod credential;
mod endpoint;
pub(crate) mod readiness;
pub(crate) mod tool_call;
pub(crate) mod tool_name;

pub(crate) use action::Action;
pub use call_outcome::CallOutcome;
pub use connection_event::{ConnectResult, ConnectionEvent, EventSink, ServerIdentity};
pub use credential::{CredentialExpiry, CredentialKind};
pub use endpoint::ServerEndpoint;
pub(crate) use readiness::State;
pub(crate) use tool_call::ToolCall;
pub use tool_name::BUILTIN_SERVER;
pub(crate) use tool_name::ToolName;
