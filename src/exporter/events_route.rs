//! `GET /events`: the readiness changes as Server-Sent Events, the stream of
//! [`Metrics::state_changes`] over HTTP.
//!
//! - One `event: state` per change, `id:` its number, `data:` one JSON object
//!   `{"server", "from", "to", "action", "reason", "at"}` (`action` and `reason` may be `null`;
//!   `at` is RFC 3339, UTC, to the millisecond). Sent as the recorder sees the change.
//! - `Last-Event-ID` (what a browser's `EventSource` sends when it reconnects) resumes after that
//!   change from the history of the last [`CHANGE_HISTORY`](crate::metrics::CHANGE_HISTORY)
//!   changes; when the history no longer reaches back to it (or the id is not one of this
//!   process's), the stream starts with one `event: reset`: re-read `/status.json`, whose
//!   `last_event_id` says where the stream goes on.
//! - Each client has its own buffer of [`CHANGE_BUFFER`] changes. A client that reads more
//!   slowly than changes come, or stopped reading, fills it and is dropped: its subscription
//!   ends at once, and what it reads next is the rest of its buffer, one `event: reset` and the
//!   end of the stream (it reconnects with `Last-Event-ID` and reads `reset` again). Sending a
//!   change never waits for any client; the standalone server also closes a connection that
//!   moved no byte for 30 s, and comments (`:`) every 15 s keep a quiet stream's connection
//!   alive through proxies.

use std::convert::Infallible;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use tokio::sync::mpsc;

use super::status_json::rfc3339;
use crate::metrics::{CHANGE_BUFFER, ChangeEvent, Metrics, StateChanges};

/// The path of the change stream, in [`router`](super::router) and in the standalone server.
pub const EVENTS_PATH: &str = "/events";

/// `GET /events` (see the module).
pub(super) async fn events(
    State(metrics): State<Metrics>,
    headers: HeaderMap,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let resume = headers
        .get("last-event-id")
        .map(|v| v.to_str().ok().and_then(|id| id.trim().parse::<u64>().ok()));
    let changes = match resume {
        None => metrics.state_changes(),
        Some(Some(id)) => metrics.state_changes_after(id),
        // An id this exporter never wrote: what the client saw is unknown, so it starts over.
        Some(None) => metrics.state_changes_after(u64::MAX),
    };
    // A first comment, so a client knows the subscription is in place once it reads a byte.
    let hello = futures::stream::once(async { Ok(Event::default().comment("subscribed")) });
    let (buffer, queued) = mpsc::channel(CHANGE_BUFFER);
    tokio::spawn(forward(changes, buffer));
    Sse::new(futures::StreamExt::chain(hello, stream(queued))).keep_alive(KeepAlive::default())
}

/// Moves one client's changes from the recorder's broadcast into its own buffer of
/// [`CHANGE_BUFFER`] changes, never waiting: when the buffer is full (the client reads more
/// slowly than changes come, or stopped reading) or the client fell behind the broadcast, the
/// client is dropped: this ends, its subscription goes, and its stream ends with a reset. Ends
/// too when the client goes away.
async fn forward(mut changes: StateChanges, buffer: mpsc::Sender<ChangeEvent>) {
    let mut first = true;
    loop {
        let next = tokio::select! {
            next = changes.next() => next,
            () = buffer.closed() => return,
        };
        let Some(event) = next else { return };
        // A reset first is a resume from beyond the history: the client starts over and
        // follows. A later one is a client that fell behind: dropped.
        if event == ChangeEvent::Reset && !first {
            return;
        }
        first = false;
        if buffer.try_send(event).is_err() {
            tracing::debug!("an /events client fell {CHANGE_BUFFER} changes behind: dropped");
            return;
        }
    }
}

/// One client's stream: its buffered changes as events; when its forwarder stopped (the client
/// was dropped, or the recorder is gone), one `event: reset` and the end.
fn stream(queued: mpsc::Receiver<ChangeEvent>) -> impl Stream<Item = Result<Event, Infallible>> {
    futures::stream::unfold(Some(queued), |queued| async move {
        let mut queued = queued?;
        let Some(event) = queued.recv().await else {
            return Some((Ok(reset()), None));
        };
        let event = match event {
            ChangeEvent::Changed(change) => {
                let data = serde_json::json!({
                    "server": &*change.server,
                    "from": change.from.as_str(),
                    "to": change.to.as_str(),
                    "action": change.action().map(|a| a.as_str()),
                    "reason": change.reason.as_deref(),
                    "at": rfc3339(change.at_unix),
                });
                Event::default()
                    .event("state")
                    .id(change.id.to_string())
                    .data(data.to_string())
            }
            ChangeEvent::Reset => reset(),
        };
        Some((Ok(event), Some(queued)))
    })
}

fn reset() -> Event {
    Event::default().event("reset").data(
        serde_json::json!({
            "reason": "changes were missed: read /status.json again, then follow /events with Last-Event-ID set to its last_event_id",
        })
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::Value;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpStream;
    use tokio::time::Instant;

    use super::*;
    use crate::metrics::CHANGE_HISTORY;
    use crate::state::State;
    use crate::state::{ConnectionEvent, EventSink as _};

    /// One event of the stream: its `event:`, `id:` and `data:` lines.
    #[derive(Debug)]
    struct Sse {
        event: String,
        id: Option<u64>,
        data: String,
    }

    /// A client of `/events` over a real socket, reading the body as it comes (HTTP/1.0: no
    /// chunked encoding, the end of the body is the end of the connection).
    struct Client {
        stream: TcpStream,
        buffer: String,
        ended: bool,
    }

    impl Client {
        async fn connect(addr: std::net::SocketAddr, last_event_id: Option<&str>) -> Client {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let resume =
                last_event_id.map_or_else(String::new, |id| format!("Last-Event-ID: {id}\r\n"));
            stream
                .write_all(format!("GET /events HTTP/1.0\r\nHost: x\r\n{resume}\r\n").as_bytes())
                .await
                .unwrap();
            let mut client = Client {
                stream,
                buffer: String::new(),
                ended: false,
            };
            let head = client.block().await.expect("the answer's head");
            assert!(head.starts_with("HTTP/1.0 200"), "{head}");
            assert!(head.contains("content-type: text/event-stream"), "{head}");
            let hello = client.block().await.expect("the first comment");
            assert_eq!(hello.trim(), ": subscribed");
            client
        }

        /// The next block up to a blank line, waiting for it at most 5 s; `None` at the end.
        async fn block(&mut self) -> Option<String> {
            loop {
                let blank = self
                    .buffer
                    .find("\r\n\r\n")
                    .map(|at| (at, 4))
                    .or_else(|| self.buffer.find("\n\n").map(|at| (at, 2)));
                if let Some((at, len)) = blank {
                    let block = self.buffer[..at].to_owned();
                    self.buffer.drain(..at + len);
                    return Some(block);
                }
                if self.ended {
                    return None;
                }
                let mut chunk = [0u8; 8192];
                let n = tokio::time::timeout(Duration::from_secs(5), self.stream.read(&mut chunk))
                    .await
                    .expect("the stream sends within 5 s")
                    .unwrap();
                if n == 0 {
                    self.ended = true;
                }
                self.buffer
                    .push_str(std::str::from_utf8(&chunk[..n]).unwrap());
            }
        }

        /// The next event (comments skipped); `None` at the end of the stream.
        async fn next(&mut self) -> Option<Sse> {
            loop {
                let block = self.block().await?;
                let mut sse = Sse {
                    event: String::new(),
                    id: None,
                    data: String::new(),
                };
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        sse.event = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("id: ") {
                        sse.id = Some(v.parse().unwrap());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        sse.data.push_str(v);
                    }
                }
                if !sse.event.is_empty() {
                    return Some(sse);
                }
            }
        }
    }

    fn change(metrics: &Metrics, server: &str, from: State, to: State) {
        metrics.on_event(&ConnectionEvent::StateChanged {
            server: server.into(),
            from,
            to,
            reason: Some("the child process exited".into()),
        });
    }

    /// Flaps `server` `n` times between ready and connecting.
    fn flap(metrics: &Metrics, server: &str, n: usize) {
        for i in 0..n {
            let (from, to) = if i % 2 == 0 {
                (State::Ready, State::Connecting)
            } else {
                (State::Connecting, State::Ready)
            };
            change(metrics, server, from, to);
        }
    }

    async fn served() -> (Metrics, crate::exporter::MetricsServer) {
        let metrics = Metrics::new();
        metrics.on_event(&ConnectionEvent::ServerAdded {
            server: "files".into(),
            state: State::Ready,
        });
        let server = crate::exporter::serve(metrics.clone(), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        (metrics, server)
    }

    #[tokio::test]
    async fn each_state_change_is_one_state_event_with_its_id_and_json_data_within_a_second() {
        let (metrics, server) = served().await;
        let mut client = Client::connect(server.local_addr(), None).await;
        let changed = Instant::now();
        change(&metrics, "files", State::Ready, State::Absent);
        let event = client.next().await.unwrap();
        assert!(
            changed.elapsed() < Duration::from_secs(1),
            "{:?}",
            changed.elapsed()
        );
        assert_eq!((event.event.as_str(), event.id), ("state", Some(1)));
        let data: Value = serde_json::from_str(&event.data).unwrap();
        assert_eq!(data["server"], "files");
        assert_eq!(data["from"], "ready");
        assert_eq!(data["to"], "absent");
        assert_eq!(data["action"], "add_connection");
        assert_eq!(data["reason"], "the child process exited");
        assert!(data["at"].as_str().unwrap().ends_with('Z'), "{data}");
        // The JSON status names the last change it includes.
        let status: Value = serde_json::from_str(&crate::exporter::status_json(&metrics)).unwrap();
        assert_eq!(status["last_event_id"], 1);
        assert_eq!(status["servers"][0]["state"], "absent");
        assert_eq!(status["servers"][0]["since"], data["at"]);
    }

    #[tokio::test]
    async fn a_stopping_server_ends_the_streams_it_serves_instead_of_waiting_for_them() {
        let (metrics, server) = served().await;
        let mut client = Client::connect(server.local_addr(), None).await;
        change(&metrics, "files", State::Ready, State::Absent);
        assert_eq!(client.next().await.unwrap().id, Some(1));
        // Stopped with a reader attached: its stream ends (the reader sees the end, and can
        // reconnect to whatever serves next) rather than holding the stop for its whole grace.
        let stopping = tokio::spawn(server.shutdown());
        assert!(client.next().await.is_none(), "the stream ended");
        let stopped = tokio::time::timeout(Duration::from_secs(2), stopping).await;
        assert!(stopped.is_ok(), "the stop waited for the stream");
    }

    #[tokio::test]
    async fn last_event_id_resumes_after_its_change_and_from_beyond_the_history_reads_one_reset() {
        let (metrics, server) = served().await;
        flap(&metrics, "files", 5);
        let mut resumed = Client::connect(server.local_addr(), Some("3")).await;
        assert_eq!(resumed.next().await.unwrap().id, Some(4));
        assert_eq!(resumed.next().await.unwrap().id, Some(5));
        flap(&metrics, "files", CHANGE_HISTORY + 5);
        let mut away = Client::connect(server.local_addr(), Some("3")).await;
        let reset = away.next().await.unwrap();
        assert_eq!((reset.event.as_str(), reset.id), ("reset", None));
        assert!(reset.data.contains("/status.json"), "{}", reset.data);
        // Then it follows the live changes.
        change(&metrics, "files", State::Connecting, State::Absent);
        let next = away.next().await.unwrap();
        assert_eq!(next.id, Some(CHANGE_HISTORY as u64 + 11));
        // An id this process never wrote (a restart) or no number at all starts over too.
        for id in ["99999", "abc"] {
            let mut other = Client::connect(server.local_addr(), Some(id)).await;
            assert_eq!(other.next().await.unwrap().event, "reset", "{id}");
        }
    }

    #[tokio::test]
    async fn a_stalled_reader_is_dropped_without_slowing_the_recorder_or_the_live_reader() {
        let (metrics, server) = served().await;
        let addr = server.local_addr();
        // A reader that asks and never reads, with a small receive buffer.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        let mut stalled = socket.connect(addr).await.unwrap();
        stalled
            .write_all(b"GET /events HTTP/1.0\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut live = Client::connect(addr, None).await;
        let subscribed = Instant::now();
        while metrics.state_change_subscribers() < 2 {
            assert!(subscribed.elapsed() < Duration::from_secs(5));
            tokio::task::yield_now().await;
        }
        // Batches the live reader keeps up with; the stalled one falls behind until dropped.
        let mut sent = 0u64;
        let mut slowest_batch = Duration::ZERO;
        while metrics.state_change_subscribers() == 2 {
            assert!(sent < 100_000, "the stalled reader was never dropped");
            let batch = Instant::now();
            flap(&metrics, "files", 100);
            slowest_batch = slowest_batch.max(batch.elapsed());
            sent += 100;
            loop {
                let event = live.next().await.expect("the live reader is never dropped");
                assert_eq!(event.event, "state");
                if event.id == Some(sent) {
                    break;
                }
            }
        }
        eprintln!(
            "stalled reader dropped after {sent} changes; slowest batch of 100 {slowest_batch:?}"
        );
        assert!(
            slowest_batch < Duration::from_millis(250),
            "100 changes took {slowest_batch:?}"
        );
        assert_eq!(
            metrics.state_change_subscribers(),
            1,
            "only the live reader"
        );
        // The live reader still follows, within a second.
        let changed = Instant::now();
        change(&metrics, "files", State::Connecting, State::Ready);
        assert_eq!(live.next().await.unwrap().id, Some(sent + 1));
        assert!(changed.elapsed() < Duration::from_secs(1));
        // What the stalled reader finds when it reads again: the rest of its buffer, one reset,
        // the end.
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut raw))
            .await
            .expect("the dropped stream ends")
            .unwrap();
        let raw = String::from_utf8_lossy(&raw);
        assert_eq!(raw.matches("event: reset").count(), 1);
        assert!(
            raw.trim_end().ends_with("\"}"),
            "ends with the reset's data"
        );
    }
}
