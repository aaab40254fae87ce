//! What one probe found: the readiness state of the probed server, read with the Hub's rules.

use std::time::Duration;

use crate::client::ConnectError;
use crate::state::State;
use crate::state::{ConnectResult, CredentialExpiry, ServerIdentity};

/// What one probe found, in the vocabulary of the supervised series.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProbeOutcome {
    /// The server's state: `ready` (handshake and `tools/list` answered), `unauthenticated` (a
    /// 401, or a 403 with a challenge), `connecting` (still running at the deadline, or a
    /// 429 / 503 with `Retry-After`), `absent` (refused, DNS failure, not MCP, no shared
    /// protocol version).
    pub state: State,
    /// How the connection attempt ended (`mcp_readiness_connects_total{result}`): `timeout` when
    /// the deadline came first.
    pub result: ConnectResult,
    /// Why, for humans (no secrets): the connector's message, or what timed out.
    pub reason: Option<String>,
    /// Tools the server lists (`mcp_readiness_server_tools`), when it answered `tools/list`.
    pub tools: Option<usize>,
    /// Who answered the handshake (`mcp_readiness_server_info`).
    pub identity: Option<ServerIdentity>,
    /// The module's credentials' known expiries (`mcp_readiness_credential_expiry_timestamp_seconds`).
    pub expiries: Vec<CredentialExpiry>,
    /// How long the probe took (`mcp_readiness_probe_duration_seconds`).
    pub duration: Duration,
    /// The phases the probe went through, in order, each with its start and duration
    /// (`mcp_readiness_probe_phase_duration_seconds{phase}`).
    pub phases: Vec<ProbePhase>,
    /// The notAfter (Unix seconds) of the leaf certificate an `https://` target presented
    /// (`mcp_readiness_tls_certificate_expiry_timestamp_seconds`); noted even when the
    /// certificate was refused (expired, untrusted).
    pub tls_certificate_expiry: Option<i64>,
    /// Every HTTP answer the target gave the MCP handshake and `tools/list`, in order.
    pub http_answers: Vec<crate::client::HttpAnswer>,
}

/// One phase of a probe: `resolve`, `connect`, `tls` (HTTPS only), `handshake` (the HTTP
/// client's own connection and `server/discover` or `initialize`) or `tools_list`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProbePhase {
    /// `resolve`, `connect`, `tls`, `handshake` or `tools_list`.
    pub name: &'static str,
    /// When it started, from the probe's start (waiting for a turn included).
    pub started: Duration,
    /// How long it took (until the deadline when it was still running then).
    pub duration: Duration,
    /// Whether it finished and succeeded.
    pub ok: bool,
    /// What a person should read of it (the addresses found, where it connected, the TLS
    /// version and the certificate's end, or why it failed); never a credential.
    pub detail: Option<String>,
}

impl ProbeOutcome {
    /// `mcp_readiness_probe_success`: the probed server is `ready`.
    pub fn success(&self) -> bool {
        self.state == State::Ready
    }
}

/// The state a failed connection attempt leaves a server in, as the Hub reads it: credentials
/// rejected → `unauthenticated`; a server that named when to come back, or a handshake that ran
/// out of time → `connecting`; everything else → `absent`.
pub(crate) fn state_of_failure(error: &ConnectError) -> State {
    match error.result {
        ConnectResult::Unauthorized => State::Unauthenticated,
        _ if error.retry_after().is_some() => State::Connecting,
        ConnectResult::Timeout => State::Connecting,
        _ => State::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_attempt_reads_as_the_hub_reads_it() {
        let state = |result| state_of_failure(&ConnectError::new(result, "x"));
        assert_eq!(state(ConnectResult::Unauthorized), State::Unauthenticated);
        assert_eq!(state(ConnectResult::Timeout), State::Connecting);
        assert_eq!(state(ConnectResult::Refused), State::Absent);
        assert_eq!(state(ConnectResult::Closed), State::Absent);
        assert_eq!(state(ConnectResult::ProtocolError), State::Absent);
        let throttled = ConnectError::new(ConnectResult::Refused, "429")
            .with_retry_after(Duration::from_secs(5));
        assert_eq!(state_of_failure(&throttled), State::Connecting);
    }
}
