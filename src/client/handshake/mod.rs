//! Both protocol generations: how the rmcp connectors open an MCP lifecycle, and which protocol
//! versions they accept.
//!
//! - **2026-07-28** has no `initialize`: the client probes with `server/discover` and sends its
//!   version, identity and capabilities in every request's `_meta`.
//! - **Older servers** (2024-11-05 … 2025-11-25) do not know `server/discover`. They answer it
//!   with a JSON-RPC error (method not found; over HTTP a 4xx or 405 that rmcp turns into one), or
//!   with anything but a discover result: an empty result `{}`, a body that is not JSON-RPC, or no
//!   answer at all. Every one of those falls back to `initialize` (offering 2025-11-25) on the
//!   same connection ([`falls_back`]).
//!
//! `server/discover` therefore costs a server that speaks 2026-07-28 nothing (one round trip, like
//! `initialize`), an older server that answers it one extra round trip, and a server that ignores
//! it [`DISCOVER_WAIT`] (not the whole connect timeout).
//!
//! **A `server/discover` that goes unanswered.** After [`DISCOVER_WAIT`] the client sends `initialize` on the same
//! pipe. A stdio server that was only slow to start (an `npx` download, a slow import) then reads
//! both requests and answers both, `server/discover` first: so from that point the requests of this
//! connection carry ids moved out of the discover request's range ([`Handoff`] renumbers them, and gives rmcp
//! the ids it sent), and a late answer to the abandoned `server/discover` is dropped instead of being taken for
//! the answer to `initialize`. If the server then refuses `initialize` after answering `server/discover`
//! late, it speaks 2026-07-28 and was only slow: `server/discover` is sent once more (it answers at once
//! now).
//!
//! A server whose version is not one of ours (e.g. `2027-03-01` from `initialize`, or a
//! `server/discover` that lists only versions we do not speak) is refused with a reason that
//! names both lists, as the specification asks of a client that does not support the version.

pub(crate) mod generations;

use crate::util::MutexExt as _;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientNotification, ErrorCode, JsonRpcMessage, NumberOrString, ProtocolVersion, ServerPeerInfo,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt as _, RoleClient, RunningService,
    RxJsonRpcMessage, TxJsonRpcMessage,
};
use rmcp::transport::Transport;

use crate::client::connector::ConnectError;
use crate::client::reasons::rmcp_errors::classify_init_error;
use crate::client::session::handler::SupervisorClient;
use crate::state::ConnectResult;

/// How long `server/discover` may go unanswered before `initialize` follows on the same
/// connection. Servers that answer it (with a result or an error) answer within one round trip
/// (about 1 ms over stdio, 3 ms over loopback HTTP, measured in `docs/protocol.md`); a server that
/// ignores unknown methods costs this much once per connection. It is short because a late
/// answer is harmless (see the module docs): a slow starter gets both requests. 5 s, not less: the
/// conformance suite's 33 servers and clients started at once on 2 cores took over 2 s to answer
/// the first request.
pub(crate) const DISCOVER_WAIT: Duration = Duration::from_secs(5);

/// Request ids of the `n`th attempt on one connection start at `n << ID_EPOCH_SHIFT`; answers with
/// lower ids belong to an abandoned attempt. rmcp numbers requests from 0 with a `u32` counter, so
/// the ranges never meet.
const ID_EPOCH_SHIFT: u32 = 32;

/// A transport lent to one lifecycle attempt and handed back when the attempt drops it (a failed
/// handshake drops its transport without closing it), so the next attempt continues on the same
/// pipe or HTTP client. From the second attempt after an unanswered `server/discover` on, it moves the ids of
/// its requests into the attempt's own range and drops answers to earlier attempts.
pub(crate) struct Handoff<T> {
    slot: Arc<Mutex<Option<T>>>,
    inner: Option<T>,
    /// What this attempt adds to the request ids it sends (0: ids pass unchanged).
    offset: i64,
    /// Set when an answer to an earlier attempt arrived (the server answers `server/discover`).
    late_answer: Arc<AtomicBool>,
}

impl<T> Handoff<T> {
    fn lend(
        slot: &Arc<Mutex<Option<T>>>,
        epoch: u32,
        late_answer: &Arc<AtomicBool>,
    ) -> Option<Handoff<T>> {
        let inner = slot.lock_unpoisoned().take()?;
        Some(Handoff {
            slot: slot.clone(),
            inner: Some(inner),
            offset: i64::from(epoch) << ID_EPOCH_SHIFT,
            late_answer: late_answer.clone(),
        })
    }

    /// Moves the ids this client chose (its requests, and the request a cancellation names) into
    /// this attempt's range. Responses to the server's own requests keep the server's ids.
    fn outgoing(&self, mut item: TxJsonRpcMessage<RoleClient>) -> TxJsonRpcMessage<RoleClient> {
        if self.offset == 0 {
            return item;
        }
        match &mut item {
            JsonRpcMessage::Request(request) => shift(&mut request.id, self.offset),
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &mut notification.notification
                    && let Some(id) = &mut cancelled.params.request_id
                {
                    shift(id, self.offset);
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
        item
    }

    /// Gives rmcp back the ids it sent; `None` for an answer to an earlier, abandoned attempt.
    fn incoming(
        &self,
        mut item: RxJsonRpcMessage<RoleClient>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.offset == 0 {
            return Some(item);
        }
        let id = match &mut item {
            JsonRpcMessage::Response(response) => Some(&mut response.id),
            JsonRpcMessage::Error(error) => error.id.as_mut(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        if let Some(NumberOrString::Number(n)) = id {
            if *n < self.offset {
                self.late_answer.store(true, Ordering::Relaxed);
                tracing::debug!(
                    id = *n,
                    "dropped a late answer to an abandoned handshake attempt"
                );
                return None;
            }
            *n -= self.offset;
        }
        Some(item)
    }
}

fn shift(id: &mut NumberOrString, offset: i64) {
    if let NumberOrString::Number(n) = id {
        *n = n.saturating_add(offset);
    }
}

impl<T> Drop for Handoff<T> {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            *self.slot.lock_unpoisoned() = Some(inner);
        }
    }
}

/// The inner transport's own error type, so rmcp's classification (401 challenges, HTTP status,
/// dropped pipes) sees the same errors as without the handoff.
impl<T> Transport<RoleClient> for Handoff<T>
where
    T: Transport<RoleClient> + 'static,
    T::Error: From<std::io::Error>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let item = self.outgoing(item);
        let sent = self.inner.as_mut().map(|inner| inner.send(item));
        async move {
            match sent {
                Some(sent) => sent.await,
                None => Err(std::io::Error::from(std::io::ErrorKind::NotConnected).into()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let item = self.inner.as_mut()?.receive().await?;
            if let Some(item) = self.incoming(item) {
                return Some(item);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        match self.inner.as_mut() {
            Some(inner) => inner.close().await,
            None => Ok(()),
        }
    }
}

/// Whether a failed `server/discover` says "I am an older server": anything but a discover
/// result that lists versions, from a server that did answer. A JSON-RPC error (except
/// 2026-07-28's own rejections, which a modern server sends), any other result (an empty `{}`),
/// an answer with another id, or a body that is not JSON-RPC (an HTTP 4xx / 405 reaches here as a
/// JSON-RPC error). Not a version refusal, an authorization failure, a refused or dropped
/// connection, or a throttled one: `initialize` would meet the same.
fn falls_back(error: &ClientInitializeError) -> bool {
    match error {
        ClientInitializeError::JsonRpcError(data) => {
            data.code != ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                && data.code != ErrorCode::HEADER_MISMATCH
        }
        ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::ExpectedInitResponse(Some(_))
        | ClientInitializeError::ConflictInitResponseId(..)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => true,
        ClientInitializeError::TransportError { .. } => {
            classify_init_error(error, 0) == ConnectResult::ProtocolError
                && crate::client::transport::retry_after::requested(&format!("{error:?}")).is_none()
        }
        _ => false,
    }
}

/// Opens the lifecycle on `transport`: `server/discover` offering 2026-07-28; for a server that
/// answers it with anything but a discover result, or not within `discover_wait`, `initialize`
/// offering 2025-11-25 (from [`SupervisorClient`]'s info) on the same transport. The caller bounds
/// the whole with the connect timeout.
pub(crate) async fn handshake<T>(
    client: SupervisorClient,
    transport: T,
    discover_wait: Duration,
) -> Result<RunningService<RoleClient, SupervisorClient>, ClientInitializeError>
where
    T: Transport<RoleClient> + 'static,
    T::Error: From<std::io::Error>,
{
    let slot = Arc::new(Mutex::new(Some(transport)));
    let late_answer = Arc::new(AtomicBool::new(false));
    let discover = || ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let lent = Handoff::lend(&slot, 0, &late_answer).ok_or(ClientInitializeError::Cancelled)?;
    let discover_attempt = client.clone().serve_with_lifecycle(lent, discover());
    // `None`: `server/discover` went unanswered, and its answer may still come.
    let rejected = match tokio::time::timeout(discover_wait, discover_attempt).await {
        Ok(Ok(running)) => return Ok(running),
        Ok(Err(error)) if falls_back(&error) => Some(error),
        Ok(Err(error)) => return Err(error),
        Err(_unanswered) => {
            tracing::debug!(
                ?discover_wait,
                "server/discover unanswered; initialize follows"
            );
            None
        }
    };
    let epoch = u32::from(rejected.is_none());
    let lent = Handoff::lend(&slot, epoch, &late_answer).ok_or(ClientInitializeError::Cancelled)?;
    let fallback = match client
        .clone()
        .serve_with_lifecycle(lent, ClientLifecycleMode::Initialize)
        .await
    {
        Ok(running) => return Ok(running),
        Err(fallback) => fallback,
    };
    // The abandoned `server/discover` was answered late, and `initialize` refused: a 2026-07-28 server that
    // was slow (to start, or under load). It answers `server/discover` at once now.
    if rejected.is_none() && late_answer.load(Ordering::Relaxed) {
        let lent = Handoff::lend(&slot, 2, &late_answer).ok_or(ClientInitializeError::Cancelled)?;
        return client.serve_with_lifecycle(lent, discover()).await;
    }
    let discover = rejected.unwrap_or(ClientInitializeError::ConnectionClosed(format!(
        "server/discover went unanswered for {discover_wait:?}"
    )));
    Err(ClientInitializeError::LegacyFallbackFailed {
        discover: Box::new(discover),
        fallback: Box::new(fallback),
    })
}

/// The protocol versions this client speaks, oldest first.
pub(crate) fn ours() -> &'static [ProtocolVersion] {
    ProtocolVersion::KNOWN_VERSIONS
}

fn list(versions: &[ProtocolVersion]) -> String {
    let mut out = String::from("[");
    for (i, v) in versions.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        // Versions come from the server: keep them short and printable.
        let v: String = v
            .as_str()
            .chars()
            .filter(|c| c.is_ascii_graphic())
            .take(32)
            .collect();
        let _ = write!(out, "{v}");
    }
    out.push(']');
    out
}

/// Why a server's version is refused: it speaks `theirs`, we speak [`ours`].
pub(crate) fn unsupported_version_reason(theirs: &[ProtocolVersion]) -> String {
    format!(
        "the server speaks MCP protocol version(s) {} and mcp-readiness speaks {}; no version is \
         shared, so the client disconnected (upgrade mcp-readiness or configure the server for \
         a version both speak)",
        list(theirs),
        list(ours())
    )
}

/// The refusal for a completed handshake whose negotiated version is not one of ours (a server
/// answering `initialize` with, e.g., `2027-03-01`).
pub(crate) fn check_negotiated(info: &ServerPeerInfo) -> Result<(), String> {
    if ours().contains(&info.protocol_version) {
        Ok(())
    } else {
        Err(unsupported_version_reason(std::slice::from_ref(
            &info.protocol_version,
        )))
    }
}

/// A completed handshake, refused (and closed) when its version is not one of ours.
pub(crate) fn accept(
    server: &str,
    running: RunningService<RoleClient, SupervisorClient>,
) -> Result<RunningService<RoleClient, SupervisorClient>, ConnectError> {
    let refused = running
        .peer()
        .peer_info()
        .and_then(|info| check_negotiated(&info).err());
    match refused {
        None => Ok(running),
        Some(why) => {
            // Dropping the running service cancels it (and closes the transport).
            drop(running);
            Err(ConnectError::new(
                ConnectResult::ProtocolError,
                format!("server `{server}`: {why}"),
            ))
        }
    }
}

/// The refusal for a failed handshake that failed because no version is shared (discover listed
/// only versions we do not speak), or `None` for any other failure.
pub(crate) fn version_refusal(error: &ClientInitializeError) -> Option<String> {
    match error {
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => Some(unsupported_version_reason(server_supported)),
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => version_refusal(fallback),
        _ => None,
    }
}

#[cfg(test)]
mod handshake_tests {
    //! The handshake against a scripted JSON-RPC peer over an in-memory pipe, on paused time: each
    //! way an older server can answer (or not answer) `server/discover`.

    use super::*;
    use crate::client::connector::SessionEvents;
    use rmcp::transport::async_rw::AsyncRwTransport;
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

    /// How the scripted server answers.
    #[derive(Clone, Copy)]
    enum Peer {
        /// `server/discover` → `{}` (an empty result), then an ordinary `initialize`.
        EmptyDiscover,
        /// `server/discover` → no answer at all, then an ordinary `initialize`.
        IgnoresDiscover,
        /// Reads nothing for `delay`, then: discover → method not found, `initialize` → result.
        SlowLegacy { delay: Duration },
        /// Reads nothing for `delay`, then: discover → a 2026-07-28 result, `initialize` →
        /// method not found (it has no `initialize`).
        SlowModern { delay: Duration },
    }

    fn answer(peer: Peer, message: &Value) -> Option<Value> {
        let id = message.get("id")?.clone();
        let method = message.get("method")?.as_str()?;
        let not_found = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
        let initialized = json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "1.0.0"}
        }});
        let discovered = json!({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "2.0.0"}}
        }});
        match (peer, method) {
            (Peer::EmptyDiscover, "server/discover") => {
                Some(json!({"jsonrpc": "2.0", "id": id, "result": {}}))
            }
            (Peer::IgnoresDiscover, "server/discover") => None,
            (Peer::SlowLegacy { .. }, "server/discover") => Some(not_found),
            (Peer::SlowModern { .. }, "server/discover") => Some(discovered),
            (Peer::SlowModern { .. }, "initialize") => Some(not_found),
            (_, "initialize") => Some(initialized),
            (_, "tools/list") => Some(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}})),
            _ => Some(not_found),
        }
    }

    /// Serves `peer` on one end of a pipe; the seen methods are returned when the pipe closes.
    fn serve(peer: Peer, io: tokio::io::DuplexStream) -> tokio::task::JoinHandle<Vec<String>> {
        tokio::spawn(async move {
            if let Peer::SlowLegacy { delay } | Peer::SlowModern { delay } = peer {
                tokio::time::sleep(delay).await;
            }
            let (read, mut write) = tokio::io::split(io);
            let mut lines = BufReader::new(read).lines();
            let mut seen = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                let message: Value = serde_json::from_str(&line).expect("the client sends JSON");
                if let Some(method) = message.get("method").and_then(Value::as_str) {
                    seen.push(method.to_owned());
                }
                if let Some(reply) = answer(peer, &message) {
                    let mut text = reply.to_string();
                    text.push('\n');
                    if write.write_all(text.as_bytes()).await.is_err() {
                        break;
                    }
                }
            }
            seen
        })
    }

    /// Runs the handshake against `peer`; the version negotiated and the virtual time it took.
    async fn connect(peer: Peer) -> (Result<String, String>, Duration, Vec<String>) {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let server = serve(peer, theirs);
        let (read, write) = tokio::io::split(ours);
        let transport = AsyncRwTransport::<RoleClient, _, _>::new_client(read, write);
        let client = SupervisorClient::new(SessionEvents::ignore());
        let started = tokio::time::Instant::now();
        let result = handshake(client, transport, DISCOVER_WAIT).await;
        let took = started.elapsed();
        let version = match result {
            Ok(running) => {
                let version = running
                    .peer()
                    .peer_info()
                    .map(|info| info.protocol_version.as_str().to_owned())
                    .unwrap_or_default();
                // A request on the live session proves the ids line up after the handshake.
                let listed = running.peer().list_tools(None).await;
                drop(running);
                listed.map(|_| version).map_err(|e| e.to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        let seen = server.await.unwrap_or_default();
        (version, took, seen)
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_answers_discover_with_an_empty_result_gets_initialize_at_once() {
        let (version, took, seen) = connect(Peer::EmptyDiscover).await;
        assert_eq!(version.as_deref(), Ok("2025-11-25"));
        assert_eq!(
            took,
            Duration::ZERO,
            "no discover wait for a server that answered"
        );
        assert_eq!(seen[..2], ["server/discover", "initialize"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_ignores_discover_gets_initialize_after_the_discover_wait_not_the_connect_timeout()
     {
        let (version, took, seen) = connect(Peer::IgnoresDiscover).await;
        assert_eq!(version.as_deref(), Ok("2025-11-25"));
        assert_eq!(took, DISCOVER_WAIT);
        assert_eq!(seen[..2], ["server/discover", "initialize"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_legacy_server_slower_than_the_discover_wait_is_ready_and_its_late_error_is_dropped()
    {
        let delay = DISCOVER_WAIT * 3;
        let (version, took, seen) = connect(Peer::SlowLegacy { delay }).await;
        assert_eq!(
            version.as_deref(),
            Ok("2025-11-25"),
            "tools/list answered too"
        );
        assert_eq!(took, delay);
        assert_eq!(seen[..2], ["server/discover", "initialize"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_modern_server_slower_than_the_discover_wait_is_sent_discover_again_after_refusing_initialize()
     {
        let delay = DISCOVER_WAIT + Duration::from_millis(1);
        let (version, took, seen) = connect(Peer::SlowModern { delay }).await;
        assert_eq!(
            version.as_deref(),
            Ok("2026-07-28"),
            "tools/list answered too"
        );
        assert_eq!(took, delay);
        assert_eq!(
            seen[..3],
            ["server/discover", "initialize", "server/discover"]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_answering_within_the_discover_wait_is_not_sent_initialize() {
        let delay = DISCOVER_WAIT - Duration::from_millis(1);
        let (version, took, seen) = connect(Peer::SlowModern { delay }).await;
        assert_eq!(version.as_deref(), Ok("2026-07-28"));
        assert_eq!(took, delay);
        assert!(!seen.iter().any(|m| m == "initialize"), "{seen:?}");
    }

    #[test]
    fn only_answers_that_say_nothing_about_the_connection_fall_back() {
        let empty = ClientInitializeError::ExpectedInitResult(None);
        assert!(falls_back(&empty));
        let not_found = ClientInitializeError::JsonRpcError(rmcp::ErrorData::method_not_found::<
            rmcp::model::DiscoverRequestMethod,
        >());
        assert!(falls_back(&not_found));
        let modern = ClientInitializeError::JsonRpcError(rmcp::ErrorData::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "needs sampling",
            None,
        ));
        assert!(!falls_back(&modern));
        assert!(!falls_back(&ClientInitializeError::ConnectionClosed(
            "eof".into()
        )));
        assert!(!falls_back(
            &ClientInitializeError::NoCompatibleProtocolVersion {
                client_supported: vec![ProtocolVersion::V_2026_07_28],
                server_supported: vec![],
            }
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ServerCapabilities;

    #[test]
    fn a_version_we_do_not_speak_is_refused_with_both_lists() {
        let info = ServerPeerInfo::new(
            serde_json::from_value(serde_json::json!("2027-03-01")).unwrap(),
            ServerCapabilities::default(),
        );
        let reason = check_negotiated(&info).unwrap_err();
        assert!(reason.contains("[2027-03-01]"), "{reason}");
        assert!(
            reason.contains("[2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28]"),
            "{reason}"
        );
    }

    #[test]
    fn every_known_version_is_accepted_and_only_old_ones_have_initialize() {
        for v in ours() {
            let info = ServerPeerInfo::new(v.clone(), ServerCapabilities::default());
            assert!(check_negotiated(&info).is_ok());
        }
        use crate::client::session::peer_info::has_initialize;
        assert!(has_initialize("2025-11-25"));
        assert!(!has_initialize("2026-07-28"));
    }
}
