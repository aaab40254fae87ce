//! The client side of the protocol: the rmcp client handler every connection of the hub runs
//! ([`SupervisorClient`]) and who answers what a server asks during a call ([`Answerer`]).

use std::sync::Arc;

use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationCapability,
    FormElicitationCapability, Implementation,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};

use crate::client::connector::SessionEvents;
use crate::client::session::server_requests::{ServerRequests, decline};

/// Who answers what a server asks during a call, for one server: the hook and the server's name.
#[derive(Debug, Clone)]
pub(crate) struct Answerer {
    pub(crate) server: Arc<str>,
    pub(crate) requests: Arc<dyn ServerRequests>,
}

impl Answerer {
    /// The answerer of `server`, if `requests` answers anything (else the unattended default).
    pub(crate) fn of(
        server: &Arc<str>,
        requests: Option<&Arc<dyn ServerRequests>>,
    ) -> Option<Answerer> {
        requests
            .filter(|r| r.answers_elicitation())
            .map(|requests| Answerer {
                server: server.clone(),
                requests: requests.clone(),
            })
    }
}

/// The rmcp client handler: forwards `notifications/tools/list_changed` to the supervisor, and
/// `elicitation/create` to the [`ServerRequests`] hook when there is one (else declines).
#[derive(Debug, Clone)]
pub(crate) struct SupervisorClient {
    events: SessionEvents,
    answerer: Option<Answerer>,
}

impl SupervisorClient {
    pub(crate) fn new(events: SessionEvents) -> Self {
        SupervisorClient {
            events,
            answerer: None,
        }
    }

    /// Answers elicitation through `answerer` (and declares the capability).
    pub(crate) fn answered_by(mut self, answerer: Option<Answerer>) -> Self {
        self.answerer = answerer;
        self
    }
}

impl ClientHandler for SupervisorClient {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.events.tools_changed();
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(match &self.answerer {
            Some(answerer) => answerer.requests.elicit(&answerer.server, request).await,
            None => decline(),
        })
    }

    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.client_info = Implementation::new("mcp-readiness", env!("CARGO_PKG_VERSION"));
        if self.answerer.is_some() {
            config.capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        }
        // What `initialize` offers, for a server that rejected `server/discover`
        // (`handshake::handshake`); `server/discover` offers 2026-07-28 itself.
        config.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
        config
    }
}
