//! The `Mcp-Session-Id` of a streamable-HTTP connection, which rmcp keeps to itself: a
//! [`StreamableHttpClient`] that delegates every request to an inner client and notes the session
//! id the server's responses carry (sessions before 2026-07-28; a 2026-07-28 server sends none).
//!
//! The id is an ordinary span attribute (`mcp.session.id`), never a metric label.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::client::connector::{HttpAnswer, SessionEvents};
use crate::client::http::stream_pacing::StreamPacer;
use crate::client::session::session_id_slot::SessionIdSlot;

/// A [`StreamableHttpClient`] that records the session id of every POST response in a
/// [`SessionIdSlot`], paces its event-stream re-opens with a [`StreamPacer`], and otherwise
/// behaves exactly like `C`.
#[derive(Debug, Clone)]
pub(crate) struct SessionIdClient<C> {
    inner: C,
    slot: SessionIdSlot,
    pacer: StreamPacer,
    /// Told each HTTP answer (status and content type), when someone listens (`/probe`'s debug).
    events: Option<SessionEvents>,
}

impl<C> SessionIdClient<C> {
    /// Wraps `inner`, writing the session ids it sees to `slot` and pacing its event streams
    /// with `pacer`.
    pub(crate) fn new(inner: C, slot: SessionIdSlot, pacer: StreamPacer) -> Self {
        SessionIdClient {
            inner,
            slot,
            pacer,
            events: None,
        }
    }

    /// Also tells `events` of each HTTP answer ([`SessionEvents::on_http_answer`]).
    pub(crate) fn telling(mut self, events: &SessionEvents) -> Self {
        self.events = events.wants_http_answers().then(|| events.clone());
        self
    }

    fn told<T, E: std::error::Error + Send + Sync + 'static>(
        &self,
        request: impl FnOnce() -> String,
        result: &Result<T, StreamableHttpError<E>>,
        answer: impl FnOnce(&T) -> (Option<u16>, String),
    ) {
        if let Some(events) = &self.events {
            events.http_answered(|| {
                let (status, answer, answered_2xx) = match result {
                    Ok(ok) => {
                        let (status, answer) = answer(ok);
                        (status, answer, true)
                    }
                    Err(error) => failed_answer(error),
                };
                HttpAnswer {
                    request: request(),
                    status,
                    answer,
                    answered_2xx,
                }
            });
        }
    }
}

/// The request line of a POST: `POST` and the JSON-RPC method (`POST response` for an answer to
/// the server's request).
fn post_request(message: &ClientJsonRpcMessage) -> String {
    let value = serde_json::to_value(message).unwrap_or_default();
    match value.get("method").and_then(|m| m.as_str()) {
        Some(method) => format!("POST {}", truncate_method(method)),
        None => "POST response".to_owned(),
    }
}

fn truncate_method(method: &str) -> String {
    method
        .chars()
        .take(64)
        .filter(|c| !c.is_control())
        .collect()
}

fn post_answer(response: &StreamableHttpPostResponse) -> (Option<u16>, String) {
    match response {
        StreamableHttpPostResponse::Accepted => (None, "accepted (202 or 204, no body)".into()),
        // A 4xx to `server/discover` is the mark of a server older than 2026-07-28: rmcp turns
        // it into a JSON-RPC error whose message keeps the status.
        StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _) => {
            match error
                .error
                .message
                .strip_prefix("server/discover rejected with HTTP ")
                .and_then(|rest| rest.get(..3))
                .and_then(|code| code.parse::<u16>().ok())
            {
                Some(status) => (
                    Some(status),
                    "(taken as: this server predates server/discover)".into(),
                ),
                // An optional method the server does not have (`subscriptions/listen`): its
                // answer, not a failure of the connection.
                None if error.error.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND => (
                    None,
                    "application/json (a JSON-RPC error: method not found; for an optional \
                     method such as subscriptions/listen, not a failure)"
                        .into(),
                ),
                None => (None, "application/json (a JSON-RPC error)".into()),
            }
        }
        StreamableHttpPostResponse::Json(..) => (None, "application/json".into()),
        StreamableHttpPostResponse::Sse(..) => (None, "text/event-stream".into()),
        // rmcp may add kinds of answer: said without guessing.
        #[allow(unreachable_patterns)]
        _ => (None, "an answer".into()),
    }
}

/// A failed request as a person reads it: the status where rmcp or the HTTP client keeps it, the
/// content type that was refused; never a URL, a header value or a body.
fn failed_answer<E: std::error::Error + Send + Sync + 'static>(
    error: &StreamableHttpError<E>,
) -> (Option<u16>, String, bool) {
    let (status, answer, answered_2xx) = match error {
        StreamableHttpError::AuthRequired(_) => {
            (Some(401), "with a WWW-Authenticate challenge".into(), false)
        }
        StreamableHttpError::InsufficientScope(_) => (
            Some(403),
            "with an insufficient_scope challenge".into(),
            false,
        ),
        StreamableHttpError::HttpStatus(status) => (Some(status.status), String::new(), false),
        StreamableHttpError::SessionExpired => (Some(404), "(session expired)".into(), false),
        StreamableHttpError::ServerDoesNotSupportSse => {
            (Some(405), "(no event stream offered)".into(), false)
        }
        // rmcp checks the status first: a content type it refuses came with a 2xx.
        StreamableHttpError::UnexpectedContentType(content_type) => (
            None,
            match content_type {
                Some(ct) => format!(
                    "{}, which is not MCP (refused)",
                    truncate_method(ct.split(';').next().unwrap_or(ct).trim())
                ),
                None => "without a content type (refused)".into(),
            },
            true,
        ),
        // "HTTP 404 Not Found: <body>" (any other status it refused), or a 2xx JSON body that
        // is not JSON-RPC.
        StreamableHttpError::UnexpectedServerResponse(text) => {
            match text
                .strip_prefix("HTTP ")
                .and_then(|rest| rest.get(..3))
                .and_then(|code| code.parse::<u16>().ok())
            {
                Some(status) => (Some(status), "(not MCP)".into(), false),
                None if text.starts_with("could not parse JSON response") => {
                    (None, "a JSON body that is not JSON-RPC".into(), true)
                }
                None => (None, "an answer that is not MCP".into(), false),
            }
        }
        StreamableHttpError::Client(inner) => {
            let reqwest =
                (inner as &(dyn std::error::Error + 'static)).downcast_ref::<reqwest::Error>();
            match reqwest.and_then(reqwest::Error::status) {
                Some(status) => (Some(status.as_u16()), String::new(), false),
                None if reqwest.is_some_and(reqwest::Error::is_connect) => {
                    (None, "no answer: the connection failed".into(), false)
                }
                None if reqwest.is_some_and(reqwest::Error::is_timeout) => {
                    (None, "no answer: timed out".into(), false)
                }
                None => (None, "no answer: the HTTP request failed".into(), false),
            }
        }
        _ => (None, "an answer rmcp could not use".into(), false),
    };
    (status, answer, answered_2xx)
}

type SseStream = BoxStream<'static, Result<Sse, SseError>>;

impl<C> StreamableHttpClient for SessionIdClient<C>
where
    C: StreamableHttpClient + Send + Sync,
{
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let request = self.request_line(&message);
        let sent = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers);
        self.noted(request, sent).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let request = self.request_line(&message);
        let sent = self.inner.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        );
        self.noted(request, sent).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let request = self.request_line(&message);
        let sent = self.inner.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        );
        self.noted(request, sent).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let deleted = self
            .inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await;
        self.told(
            || "DELETE".to_owned(),
            &deleted,
            |_| (None, "session ended".into()),
        );
        deleted
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        self.paced(self.inner.get_stream(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
        ))
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, StreamableHttpError<Self::Error>> {
        self.paced(self.inner.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        ))
        .await
    }
}

impl<C> SessionIdClient<C> {
    /// The request line of `message`'s POST, when someone listens.
    fn request_line(&self, message: &ClientJsonRpcMessage) -> Option<String> {
        self.events.as_ref().map(|_| post_request(message))
    }

    /// Awaits the POST `sent` (of `request`), noting the session id its response carries and
    /// telling its answer.
    async fn noted<E: std::error::Error + Send + Sync + 'static>(
        &self,
        request: Option<String>,
        sent: impl Future<Output = Result<StreamableHttpPostResponse, StreamableHttpError<E>>>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<E>> {
        let response = sent.await;
        self.slot.note(&response);
        self.told(|| request.unwrap_or_default(), &response, post_answer);
        response
    }

    /// Opens an event stream with `open` after the pacer's wait, and watches it.
    async fn paced<E: std::error::Error + Send + Sync + 'static>(
        &self,
        open: impl Future<Output = Result<SseStream, StreamableHttpError<E>>>,
    ) -> Result<SseStream, StreamableHttpError<E>> {
        let wait = self.pacer.before_open();
        if !wait.is_zero() {
            tracing::debug!(?wait, "event stream re-opened too often: waiting");
            tokio::time::sleep(wait).await;
        }
        let opened = open.await;
        self.told(
            || "GET".to_owned(),
            &opened,
            |_| (None, "text/event-stream".into()),
        );
        match opened {
            Ok(stream) => {
                self.pacer.opened();
                Ok(self.pacer.watch(stream))
            }
            Err(e) => {
                self.pacer.open_failed();
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    type Response = Result<StreamableHttpPostResponse, ()>;

    fn sse(id: Option<&str>) -> Response {
        Ok(StreamableHttpPostResponse::Sse(
            futures::stream::empty().boxed(),
            id.map(str::to_owned),
        ))
    }

    #[test]
    fn a_method_not_found_answer_reads_as_an_answer_not_a_failure() {
        use rmcp::model::{
            ErrorCode, ErrorData, JsonRpcError, NumberOrString, ServerJsonRpcMessage,
        };
        let answer = |code: ErrorCode| {
            let error = ServerJsonRpcMessage::Error(JsonRpcError {
                jsonrpc: Default::default(),
                id: Some(NumberOrString::Number(1)),
                error: ErrorData::new(code, "subscriptions/listen", None),
            });
            post_answer(&StreamableHttpPostResponse::Json(error, None)).1
        };
        assert_eq!(
            answer(ErrorCode::METHOD_NOT_FOUND),
            "application/json (a JSON-RPC error: method not found; for an optional method such \
             as subscriptions/listen, not a failure)"
        );
        assert_eq!(
            answer(ErrorCode::INTERNAL_ERROR),
            "application/json (a JSON-RPC error)"
        );
    }

    #[test]
    fn a_failed_request_reads_as_its_status_or_the_content_type_never_a_body() {
        use rmcp::transport::streamable_http_client::{AuthRequiredError, HttpStatusError};
        type Failed = StreamableHttpError<std::io::Error>;
        let shown = |error: Failed| {
            let (status, answer, answered_2xx) = failed_answer(&error);
            HttpAnswer {
                request: "POST initialize".into(),
                status,
                answer,
                answered_2xx,
            }
            .to_string()
        };
        assert_eq!(
            shown(Failed::AuthRequired(AuthRequiredError::new(
                "Bearer realm=\"x\", secret-ish".into()
            ))),
            "POST initialize -> HTTP 401 with a WWW-Authenticate challenge"
        );
        assert_eq!(
            shown(Failed::HttpStatus(HttpStatusError::new(
                503,
                Some("5".into())
            ))),
            "POST initialize -> HTTP 503"
        );
        assert_eq!(
            shown(Failed::UnexpectedContentType(Some(
                "text/html; charset=utf-8".into()
            ))),
            "POST initialize -> HTTP 2xx text/html, which is not MCP (refused)"
        );
        assert_eq!(
            shown(Failed::SessionExpired),
            "POST initialize -> HTTP 404 (session expired)"
        );
        // A status rmcp refused with its body: the status, never "2xx", never the body.
        assert_eq!(
            shown(Failed::UnexpectedServerResponse(
                "HTTP 404 Not Found: <html><title>Not here</title></html>".into()
            )),
            "POST initialize -> HTTP 404 (not MCP)"
        );
        // No answer at all: no status is claimed.
        assert_eq!(
            shown(Failed::Client(std::io::Error::other("refused"))),
            "POST initialize -> no answer: the HTTP request failed"
        );
        assert_eq!(
            shown(Failed::TransportChannelClosed),
            "POST initialize -> an answer rmcp could not use"
        );
    }

    #[test]
    fn the_slot_keeps_the_latest_session_id_a_response_carried() {
        let slot = SessionIdSlot::default();
        assert_eq!(slot.get(), None);
        slot.note(&sse(Some("s-1")));
        assert_eq!(slot.get().as_deref(), Some("s-1"));
        // Responses without one (202 Accepted, a later SSE response, an error) keep it.
        slot.note::<()>(&Ok(StreamableHttpPostResponse::Accepted));
        slot.note(&sse(None));
        slot.note(&Response::Err(()));
        assert_eq!(slot.get().as_deref(), Some("s-1"));
        // A re-initialized session's new id replaces it.
        slot.note(&sse(Some("s-2")));
        assert_eq!(slot.get().as_deref(), Some("s-2"));
    }

    /// A loopback HTTP/1.1 server that answers every request with `answer(path)`; the request
    /// heads and bodies it read come out of the channel.
    async fn serve(
        answer: impl Fn(&str) -> String + Send + Sync + 'static,
    ) -> (u16, tokio::sync::mpsc::UnboundedReceiver<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (seen, requests) = tokio::sync::mpsc::unbounded_channel();
        let answer = Arc::new(answer);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (seen, answer) = (seen.clone(), answer.clone());
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    // One request: the head, then a body of its Content-Length.
                    loop {
                        let Ok(n) = stream.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        let text = String::from_utf8_lossy(&buf).into_owned();
                        if let Some(end) = text.find("\r\n\r\n") {
                            let length = text[..end]
                                .lines()
                                .find_map(|l| {
                                    l.to_ascii_lowercase()
                                        .strip_prefix("content-length:")
                                        .map(|v| v.trim().to_owned())
                                })
                                .and_then(|v| v.parse::<usize>().ok())
                                .unwrap_or(0);
                            if buf.len() >= end + 4 + length {
                                let path = text.split(' ').nth(1).unwrap_or_default().to_owned();
                                let _ = seen.send(text);
                                let _ = stream.write_all(answer(&path).as_bytes()).await;
                                return;
                            }
                        }
                    }
                });
            }
        });
        (port, requests)
    }

    fn redirect(status: &str, location: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
    }

    const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

    async fn post(client: &reqwest::Client, port: u16, path: &str) -> reqwest::StatusCode {
        client
            .post(format!("http://127.0.0.1:{port}{path}"))
            .header("mcp-session-id", "s-secret")
            .body("{\"jsonrpc\":\"2.0\"}")
            .send()
            .await
            .expect("an answer")
            .status()
    }

    /// What both HTTP paths (bearer headers and OAuth) send requests with: a 307 / 308 on the
    /// same origin is followed with the body; a cross-origin hop (which would replay the session
    /// id and custom headers to another host) and a 302 (which would turn the POST into a bodyless
    /// GET) come back as the redirect itself.
    #[tokio::test]
    async fn the_http_client_follows_only_same_origin_307_and_308_with_the_body() {
        let client = crate::client::transport::http_client::default_http_client("files").unwrap();
        let (elsewhere, mut elsewhere_saw) = serve(|_| OK.to_owned()).await;
        let (port, mut saw) = serve(move |path| match path {
            "/moved" => redirect("307 Temporary Redirect", "/mcp"),
            "/gone" => redirect(
                "308 Permanent Redirect",
                &format!("http://127.0.0.1:{elsewhere}/mcp"),
            ),
            "/found" => redirect("302 Found", "/mcp"),
            _ => OK.to_owned(),
        })
        .await;

        assert_eq!(post(&client, port, "/moved").await, reqwest::StatusCode::OK);
        assert!(saw.recv().await.unwrap().starts_with("POST /moved "));
        let followed = saw.recv().await.unwrap();
        assert!(followed.starts_with("POST /mcp "), "{followed}");
        assert!(followed.ends_with("{\"jsonrpc\":\"2.0\"}"), "{followed}");

        assert_eq!(
            post(&client, port, "/gone").await,
            reqwest::StatusCode::PERMANENT_REDIRECT
        );
        assert_eq!(
            post(&client, port, "/found").await,
            reqwest::StatusCode::FOUND
        );
        for path in ["/gone", "/found"] {
            assert!(
                saw.recv()
                    .await
                    .unwrap()
                    .starts_with(&format!("POST {path} "))
            );
        }
        assert!(saw.try_recv().is_err(), "the 302 was not followed as a GET");
        assert!(
            elsewhere_saw.try_recv().is_err(),
            "nothing reached the other origin"
        );
    }

    #[test]
    fn an_empty_session_id_is_no_session() {
        let slot = SessionIdSlot::default();
        slot.note(&sse(Some("")));
        assert_eq!(slot.get(), None);
    }
}
