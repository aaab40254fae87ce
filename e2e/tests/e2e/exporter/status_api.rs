//! `GET /status.json` and `GET /events` of `mcp-readiness serve` as a real process, against real
//! MCP servers: the JSON status, the status page and `/metrics` say the same at the same moment,
//! before and after faults injected live (a child killed, credentials changed by a reload), and
//! the change stream carries each change within a second of it.

use super::*;

use mcp_readiness_fixtures::clock::{rfc3339_secs, unix_secs};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A reader of `/events` over a real socket (HTTP/1.0: the body as it comes, no chunking).
struct Events {
    stream: tokio::net::TcpStream,
    buffer: String,
}

impl Events {
    async fn connect(addr: &str) -> Events {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /events HTTP/1.0\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut events = Events {
            stream,
            buffer: String::new(),
        };
        let head = events.block(Duration::from_secs(5)).await.unwrap();
        assert!(head.contains("text/event-stream"), "{head}");
        assert_eq!(
            events.block(Duration::from_secs(5)).await.unwrap(),
            ": subscribed"
        );
        events
    }

    /// The next block up to a blank line, with the instant it was read; `None` after `limit`.
    async fn block(&mut self, limit: Duration) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            // The earliest blank line, whichever line ending it has (the head's is CRLF).
            let blank = [("\r\n\r\n", 4), ("\n\n", 2)]
                .iter()
                .filter_map(|(end, len)| Some((self.buffer.find(end)?, *len)))
                .min();
            if let Some((at, len)) = blank {
                let block = self.buffer[..at].replace('\r', "");
                self.buffer.drain(..at + len);
                return Some(block);
            }
            let mut chunk = [0u8; 4096];
            let n = tokio::time::timeout_at(deadline, self.stream.read(&mut chunk))
                .await
                .ok()?
                .unwrap();
            assert!(n > 0, "the stream ended");
            self.buffer
                .push_str(std::str::from_utf8(&chunk[..n]).unwrap());
        }
    }

    /// The next `state` event's id and data, and when it arrived (Unix seconds).
    async fn next_state(&mut self, limit: Duration) -> Option<(u64, Value, f64)> {
        loop {
            let block = self.block(limit).await?;
            let arrived = unix_secs();
            if !block.lines().any(|l| l == "event: state") {
                continue;
            }
            let id = block
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .expect("an id")
                .parse()
                .unwrap();
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .expect("data");
            return Some((id, serde_json::from_str(data).unwrap(), arrived));
        }
    }
}

fn unix_of(rfc3339: &Value) -> f64 {
    let text = rfc3339
        .as_str()
        .unwrap_or_else(|| panic!("a time: {rfc3339}"));
    rfc3339_secs(text)
}

/// `server`'s next connection attempt in /status.json and in
/// `mcp_readiness_server_next_attempt_timestamp_seconds`, when both say the same (to the
/// millisecond /status.json prints), else what each says.
fn next_attempts(json: &Value, scrape: &Scrape, server: &str) -> Result<Option<f64>, String> {
    let entry =
        status_entry(json, server).ok_or_else(|| format!("{server} is not in /status.json"))?;
    let in_json = (!entry["next_attempt_at"].is_null()).then(|| unix_of(&entry["next_attempt_at"]));
    let in_metrics = scrape.get(
        "mcp_readiness_server_next_attempt_timestamp_seconds",
        &[("server", server)],
    );
    match (in_json, in_metrics) {
        (None, None) => Ok(None),
        (Some(j), Some(m)) if (j - m).abs() < 0.002 => Ok(Some(m)),
        other => Err(format!("{server}: next attempt (json, metrics) {other:?}")),
    }
}

/// The three views of one moment, read until the state of every server agrees in all three (a
/// change may land between two reads); then every fact they share is compared.
async fn three_views_agree(serve: &Serve, expected: &[(&str, &str)]) -> Value {
    let what = format!("the status page, /status.json and /metrics to agree on {expected:?}");
    let (json, page, scrape) = eventually(&what, Duration::from_secs(30), async || {
        let json: Value = serde_json::from_str(
            &mcp_readiness_fixtures::http::get(&serve.addr, "/status.json")
                .await?
                .ok_text(),
        )
        .map_err(|e| e.to_string())?;
        let page = mcp_readiness_fixtures::http::get(&serve.addr, "/status")
            .await?
            .ok_text();
        let scrape = scrape_of(serve).await;
        let states: Vec<(String, String, String)> = expected
            .iter()
            .map(|(server, _)| {
                let in_json = status_entry(&json, server).map_or("missing".into(), |s| {
                    s["state"].as_str().unwrap().to_owned()
                });
                let row = format!("<tr data-server=\"{server}\" data-state=\"");
                let in_page = page.find(&row).map_or("missing".into(), |at| {
                    let rest = &page[at + row.len()..];
                    rest[..rest.find('"').unwrap()].to_owned()
                });
                let in_metrics = scrape.state(server).unwrap_or("missing").to_owned();
                (in_json, in_page, in_metrics)
            })
            .collect();
        let agree = expected
            .iter()
            .zip(&states)
            .all(|((_, want), (j, p, m))| j == want && p == want && m == want);
        // The next attempt moves with each failed connect: read until both views have the same.
        let attempts_agree = expected
            .iter()
            .all(|(server, _)| next_attempts(&json, &scrape, server).is_ok());
        // So does the time in state: a server that retries (absent → connecting → absent) between
        // two reads keeps its state and changes its `since`.
        let since_agree = expected.iter().all(|(server, _)| {
            let changed = scrape.get(
                "mcp_readiness_server_state_changed_timestamp_seconds",
                &[("server", server)],
            );
            status_entry(&json, server)
                .zip(changed)
                .is_some_and(|(entry, changed)| (unix_of(&entry["since"]) - changed).abs() < 0.01)
        });
        if agree && attempts_agree && since_agree {
            Ok((json, page, scrape))
        } else {
            Err(format!("json/page/metrics states {states:?}"))
        }
    })
    .await;
    let servers = json["servers"].as_array().unwrap();
    assert_eq!(servers.len(), expected.len(), "{json}");
    for entry in servers {
        let server = entry["server"].as_str().unwrap();
        // The time in state: /metrics' state-change time, the page's row.
        let changed = scrape
            .get(
                "mcp_readiness_server_state_changed_timestamp_seconds",
                &[("server", server)],
            )
            .unwrap();
        assert!(
            (unix_of(&entry["since"]) - changed).abs() < 0.01,
            "{server}: since {} vs {changed}",
            entry["since"]
        );
        // Tools.
        let tools = scrape
            .get("mcp_readiness_server_tools", &[("server", server)])
            .unwrap();
        assert_eq!(entry["tools"].as_f64(), Some(tools), "{server} tools");
        // The action, in the page's row too.
        let row = page
            .lines()
            .find(|l| l.contains(&format!("data-server=\"{server}\"")))
            .unwrap();
        match entry["action"].as_str() {
            Some(action) => assert!(row.contains(&format!("<code>{action}</code>")), "{row}"),
            None => assert_eq!(entry["state"], "ready"),
        }
        // The protocol version the handshake negotiated, where there was one.
        let info = scrape.samples.iter().find(|(n, l, _)| {
            n == "mcp_readiness_server_info" && l.get("server").map(String::as_str) == Some(server)
        });
        assert_eq!(
            entry["protocol_version"].as_str(),
            info.map(|(_, l, _)| l["protocol_version"].as_str()),
            "{server} protocol version"
        );
        // When the next connection attempt is due: the gauge's time, to the millisecond; none
        // for a ready server.
        let next = next_attempts(&json, &scrape, server).unwrap();
        if entry["state"] == "ready" {
            assert_eq!(next, None, "{server}: a ready server has no next attempt");
        }
    }
    let generated = unix_of(&json["generated_at"]);
    assert!((generated - unix_secs()).abs() < 30.0, "{json}");
    json
}

#[tokio::test]
async fn status_json_the_status_page_and_metrics_agree_and_events_carry_a_killed_child_and_new_credentials_within_a_second()
 {
    let scratch = Scratch::new("status-api");
    let (_http, port) = http_fixture(&scratch).await;
    let servers = json!({
        "ready": stdio_fixture(&scratch, "ready", &[]),
        "authz": http_entry(port),
        "gone": absent_entry(),
    });
    let readiness = json!({ "budget": "5s", "cooldown": "60s", "ping": "off" });
    let config = write_config(&scratch, "serve.json", servers.clone(), readiness.clone());
    let serve = Serve::start(&scratch, &config, SERVE_ENV).await;
    let expected = [
        ("ready", "ready"),
        ("authz", "unauthenticated"),
        ("gone", "absent"),
    ];
    let before = three_views_agree(&serve, &expected).await;
    let authz = status_entry(&before, "authz").unwrap();
    assert_eq!(authz["action"], "reauthorize", "{before}");
    assert!(
        authz["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{before}"
    );
    assert_no_token("/status.json", &before.to_string());

    // Follow the stream, then kill the ready child.
    let mut events = Events::connect(&serve.addr).await;
    let first = started(&scratch, "ready");
    assert_eq!(first.len(), 1, "{first:?}");
    signal(first[0], "KILL");
    let mut seen = Vec::new();
    while !seen
        .iter()
        .any(|(_, d, _): &(u64, Value, f64)| d["server"] == "ready" && d["to"] == "ready")
    {
        let Some(event) = events.next_state(Duration::from_secs(15)).await else {
            panic!(
                "no change back to ready within 15 s: {seen:?}\n{}",
                serve.stderr()
            );
        };
        seen.push(event);
    }
    let left = &seen[0].1;
    assert_eq!(left["server"], "ready", "{seen:?}");
    assert_eq!(left["from"], "ready", "{seen:?}");
    for (id, data, arrived) in &seen {
        let late = arrived - unix_of(&data["at"]);
        eprintln!("event {id}: {data} arrived {late:.3} s after its change");
        assert!(late < 1.0, "event {id} came {late} s after the change");
        assert_eq!(
            data["action"].as_str(),
            match data["to"].as_str().unwrap() {
                "ready" => None,
                "connecting" => Some("extend_wait_budget"),
                "unauthenticated" => Some("reauthorize"),
                _ => Some("add_connection"),
            }
        );
    }
    let ids: Vec<u64> = seen.iter().map(|(id, _, _)| *id).collect();
    assert!(
        ids.windows(2).all(|w| w[1] == w[0] + 1),
        "ids in order: {ids:?}"
    );

    // After the fault, the three views agree again, and the JSON names the last change it holds.
    let after = three_views_agree(&serve, &expected).await;
    assert!(
        after["last_event_id"].as_u64().unwrap() >= *ids.last().unwrap(),
        "{after}"
    );
    let ready = status_entry(&after, "ready").unwrap();
    assert_eq!(ready["since"], seen.last().unwrap().1["at"], "{after}");

    // Credentials changed live: a reload gives `authz` the token its server accepts; the stream
    // says so within a second and the three views agree again.
    let mut reloaded = servers;
    reloaded["authz"]["headers"]["Authorization"] = json!("Bearer ${MCP_RIGHT_TOKEN}");
    write_config(&scratch, "serve.json", reloaded, readiness);
    signal(serve.guard.pid(), "HUP");
    let mut authz_events = Vec::new();
    while !authz_events
        .iter()
        .any(|(_, d, _): &(u64, Value, f64)| d["to"] == "ready")
    {
        let Some(event) = events.next_state(Duration::from_secs(20)).await else {
            panic!(
                "`authz` never became ready on the stream: {authz_events:?}\n{}",
                serve.stderr()
            );
        };
        if event.1["server"] == "authz" {
            authz_events.push(event);
        }
    }
    for (id, data, arrived) in &authz_events {
        let late = arrived - unix_of(&data["at"]);
        eprintln!("event {id}: {data} arrived {late:.3} s after its change");
        assert!(late < 1.0, "event {id} came {late} s after the change");
    }
    assert_eq!(
        authz_events[0].1["from"], "unauthenticated",
        "{authz_events:?}"
    );
    let reauthorized = [("ready", "ready"), ("authz", "ready"), ("gone", "absent")];
    let last = three_views_agree(&serve, &reauthorized).await;
    assert_no_token("/status.json", &last.to_string());
}
