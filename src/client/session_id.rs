//! The `Mcp-Session-Id` of a streamable-HTTP connection, which rmcp keeps to itself: a
//! [`StreamableHttpClient`] that delegates every request to an inner client and notes the session
//! id the server's responses carry (sessions before 2026-07-28; a 2026-07-28 server sends none).
//!
//! The id is an ordinary span attribute (`mcp.session.id`), never a metric label.

use crate::util::MutexExt as _;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::connector::ConnectError;
use super::stream_pacing::StreamPacer;
use crate::state::ConnectResult;

/// Where a connection's session id is kept: written by [`SessionIdClient`], read by the session.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionIdSlot(Arc<Mutex<Option<Arc<str>>>>);

impl SessionIdSlot {
    /// The last session id the server sent, if any.
    pub(crate) fn get(&self) -> Option<Arc<str>> {
        self.0.lock_unpoisoned().clone()
    }

    /// Keeps the session id of a POST response (an empty one is no session).
    fn note<E>(&self, response: &Result<StreamableHttpPostResponse, E>) {
        let id = match response {
            Ok(
                StreamableHttpPostResponse::Json(_, Some(id))
                | StreamableHttpPostResponse::Sse(_, Some(id)),
            ) if !id.is_empty() => id,
            _ => return,
        };
        let mut slot = self.0.lock_unpoisoned();
        if slot.as_deref() != Some(id.as_str()) {
            *slot = Some(id.as_str().into());
        }
    }
}

/// A [`StreamableHttpClient`] that records the session id of every POST response in a
/// [`SessionIdSlot`], paces its event-stream re-opens with a [`StreamPacer`], and otherwise
/// behaves exactly like `C`.
#[derive(Debug, Clone)]
pub(crate) struct SessionIdClient<C> {
    inner: C,
    slot: SessionIdSlot,
    pacer: StreamPacer,
}

impl<C> SessionIdClient<C> {
    /// Wraps `inner`, writing the session ids it sees to `slot` and pacing its event streams
    /// with `pacer`.
    pub(crate) fn new(inner: C, slot: SessionIdSlot, pacer: StreamPacer) -> Self {
        SessionIdClient { inner, slot, pacer }
    }
}

/// The reqwest client rmcp's `StreamableHttpClientTransport::from_config` builds, for `server`'s
/// MCP requests (with bearer headers or through OAuth): no idle pooled connections (avoids
/// Delayed-ACK stalls) and only same-origin 307 / 308 redirects, at most 10.
pub(crate) fn default_http_client(server: &str) -> Result<reqwest::Client, ConnectError> {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(same_origin_redirect_policy())
        .build()
        .map_err(|e| {
            ConnectError::new(
                ConnectResult::ProtocolError,
                format!("server `{server}`: the HTTP client could not be built ({e})"),
            )
        })
}

/// How many redirects one request follows (rmcp's `MAX_REDIRECTS`).
const MAX_REDIRECTS: usize = 10;

/// rmcp's redirect policy for its default client: a 301 / 302 / 303 would turn the POST into a
/// bodyless GET and a cross-origin hop would replay the session id and custom headers (a bearer
/// token) to another host, so both are returned as the redirect response instead.
fn same_origin_redirect_policy() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let preserves_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|original| original.origin() == attempt.url().origin());
        if !preserves_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("exceeded {MAX_REDIRECTS} redirects"))
        } else {
            // Paths only: a query string may carry credentials.
            tracing::debug!(
                status = %attempt.status(),
                from = attempt.previous().last().map(|url| url.path()).unwrap_or_default(),
                to = attempt.url().path(),
                "following same-origin redirect"
            );
            attempt.follow()
        }
    })
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
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        self.slot.note(&response);
        response
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
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.slot.note(&response);
        response
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
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        self.slot.note(&response);
        response
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
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
    /// Opens an event stream with `open` after the pacer's wait, and watches it.
    async fn paced<E>(
        &self,
        open: impl Future<Output = Result<SseStream, E>>,
    ) -> Result<SseStream, E> {
        let wait = self.pacer.before_open();
        if !wait.is_zero() {
            tracing::debug!(?wait, "event stream re-opened too often: waiting");
            tokio::time::sleep(wait).await;
        }
        match open.await {
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
        let client = default_http_client("files").unwrap();
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
