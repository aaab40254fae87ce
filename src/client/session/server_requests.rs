//! [`ServerRequests`]: what a server asks of the client in the middle of a call
//! (`elicitation/create` first), and who answers it.
//!
//! An unattended run has nobody to ask: by default the Hub's connections declare no
//! `elicitation` capability, decline every `elicitation/create`, and a call answered with an
//! MRTR `input_required` result (MCP 2026-07-28, SEP-2322) ends with the outcome
//! `input_required` (docs/protocol.md). A service with a person behind it (a chat front end, a
//! ticket queue that waits for an answer) installs its own answers with
//! `HubOptionsBuilder::server_requests` (in `supervise`, the room above this one):
//! its connections then declare the `elicitation` capability, a server's `elicitation/create`
//! reaches [`ServerRequests::elicit`], and an `input_required` result is answered through it and
//! the call retried with the answers and the server's `requestState` (at most
//! [`MAX_INPUT_ROUNDS`] rounds).

use std::fmt;

use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};

/// The most `input_required` rounds one call is answered before it ends with the outcome
/// `input_required` (rmcp's own cap): a server that keeps asking never holds a call forever.
pub const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// Answers what a server asks of the client during a call. Every method has a default that
/// declines, so an implementation answers only what it can.
///
/// ```
/// use futures::future::BoxFuture;
/// use mcp_readiness::rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
/// use mcp_readiness::{HubOptions, client::ServerRequests};
///
/// /// Forwards each question to the person on call (here: accepts, with no content).
/// #[derive(Debug)]
/// struct AskOnCall;
///
/// impl ServerRequests for AskOnCall {
///     fn answers_elicitation(&self) -> bool {
///         true
///     }
///
///     fn elicit(&self, server: &str, request: ElicitRequestParams) -> BoxFuture<'_, ElicitResult> {
///         let _ = (server, request);
///         Box::pin(async { ElicitResult::new(ElicitationAction::Accept) })
///     }
/// }
///
/// let options = HubOptions::builder().server_requests(AskOnCall).build()?;
/// # drop(options);
/// # Ok::<(), mcp_readiness::client::SpecError>(())
/// ```
pub trait ServerRequests: fmt::Debug + Send + Sync + 'static {
    /// Whether [`elicit`](Self::elicit) has someone behind it: the connections then declare the
    /// `elicitation` capability (form mode), and servers may ask. The default: nobody answers.
    fn answers_elicitation(&self) -> bool {
        false
    }

    /// Answers one `elicitation/create` from `server` (the configured server name). Called only
    /// when [`answers_elicitation`](Self::answers_elicitation) is true. The default declines.
    fn elicit(&self, server: &str, request: ElicitRequestParams) -> BoxFuture<'_, ElicitResult> {
        let _ = (server, request);
        Box::pin(std::future::ready(decline()))
    }
}

/// The answer of an unattended run: `decline`, no content.
pub(crate) fn decline() -> ElicitResult {
    ElicitResult::new(ElicitationAction::Decline)
}
