//! What a failure means: rmcp's errors turned into decisions (a dead pipe, rejected
//! credentials, the `ConnectResult` of a failed handshake, a `ServiceError` as a call outcome),
//! and the one way an error chain becomes the reason a person reads (`reason.rs`: the root cause
//! first, the system at fault named, no Rust type names, remote text cut).
//!
//! Always built (no feature), so the readiness layer classifies an error the same way in every
//! build; `reason.rs` comes with the connections (`hub`).

pub(crate) mod call_outcome;
pub(crate) mod chain;
#[cfg(feature = "hub")]
pub(crate) mod reason;
// Without `hub` only the call rules (`is_pipe_dead`, `is_auth_failure`) are used; the handshake
// rules are there for the connectors.
#[cfg_attr(not(feature = "hub"), allow(dead_code))]
pub(crate) mod rmcp_errors;
