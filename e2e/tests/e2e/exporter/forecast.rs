//! `check --next-run-in` and `readiness.schedule.every` as a real process, against the HTTP
//! fixture that accepts one bearer JWT expiring in 2 h: a run 6 h later is forecast to fail (a
//! warning line, the run record's `expiring_before_next_run`, the pushed next-run time), the exit
//! code stays 0 because every required step is ready now.

use super::*;

use mcp_readiness_fixtures::clock::{rfc3339_secs, unix_now};
use mcp_readiness_fixtures::oauth::jwt;
use mcp_readiness_fixtures::process::Guard;
use std::path::PathBuf;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// The HTTP fixture accepting one bearer JWT that expires in 2 h, and `mcp.json` with it as
/// `jwt`: the fixture's guard, the token, its expiry (Unix seconds), the entry and the
/// configuration.
async fn jwt_fixture(scratch: &Scratch) -> (Guard, String, u64, Value, PathBuf) {
    let expires = unix_now() + 2 * 3600;
    let token = jwt(&json!({ "sub": "svc-forecast-subject-31", "exp": expires }));
    let (http, port) = mcp_readiness_fixtures::configure::http_fixture(scratch, &token).await;
    let entry = json!({
        "type": "http",
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "headers": { "Authorization": format!("Bearer {token}") }
    });
    let config = write_config(scratch, "mcp.json", json!({ "jwt": &entry }), json!({}));
    (http, token, expires, entry, config)
}

/// A Pushgateway stand-in on a free port: answers one `PUT` with 200 and hands back its body.
async fn one_push() -> (u16, tokio::task::JoinHandle<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut raw = Vec::new();
        let mut chunk = [0u8; 65536];
        loop {
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "the push ended early");
            raw.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&raw);
            if let Some(end) = text.find("\r\n\r\n") {
                let length: usize = text[..end]
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse().ok())?
                    })
                    .expect("a Content-Length");
                if raw.len() >= end + 4 + length {
                    stream
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                        .await
                        .unwrap();
                    return String::from_utf8_lossy(&raw[end + 4..]).into_owned();
                }
            }
        }
    });
    (port, task)
}

#[tokio::test]
async fn check_next_run_in_6h_names_a_bearer_token_expiring_in_2h_exits_0_and_pushes_the_next_run()
{
    let scratch = Scratch::new("forecast");
    let (_http, token, expires, entry, config) = jwt_fixture(&scratch).await;

    // No next run known: no forecast, the record as it always was.
    let now_only = check(&config, &["--json"]).await;
    assert_eq!(now_only.code, Some(0), "{}", now_only.stderr);
    let record: Value = serde_json::from_str(&now_only.stdout).unwrap();
    assert!(record.get("expiring_before_next_run").is_none(), "{record}");
    assert!(!now_only.stderr.contains("warning: the bearer token"));

    // The next run in 6 h: the token (2 h) will not last; exit 0 all the same.
    let (push_port, pushed) = one_push().await;
    let push_url = format!("http://127.0.0.1:{push_port}");
    let started = unix_now();
    let forecast = check(
        &config,
        &["--json", "--next-run-in", "6h", "--push", &push_url],
    )
    .await;
    assert_eq!(forecast.code, Some(0), "{}", forecast.stderr);
    let record: Value = serde_json::from_str(&forecast.stdout).unwrap();
    assert_eq!(
        record["expiring_before_next_run"],
        json!(["jwt"]),
        "{record}"
    );
    assert_eq!(record["ran"], 1);
    let warning = forecast
        .stderr
        .lines()
        .find(|l| l.starts_with("warning: the bearer token of `jwt`"))
        .unwrap_or_else(|| panic!("no warning line:\n{}", forecast.stderr));
    let at =
        humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(expires))
            .to_string();
    assert!(warning.contains(&format!("expires at {at}")), "{warning}");
    assert!(warning.contains("re-authorize `jwt` now"), "{warning}");
    assert_no_token(
        "check's output",
        &(forecast.stdout.clone() + &forecast.stderr),
    );
    assert!(!forecast.stderr.contains(&token), "the JWT in stderr");
    let body = tokio::time::timeout(Duration::from_secs(10), pushed)
        .await
        .expect("pushed")
        .unwrap();
    let next: f64 = body
        .lines()
        .find_map(|l| l.strip_prefix("mcp_readiness_run_next_timestamp_seconds "))
        .unwrap_or_else(|| panic!("no next-run time pushed:\n{body}"))
        .parse()
        .unwrap();
    let six_hours = (started + 6 * 3600) as f64;
    assert!(
        (six_hours - 5.0..six_hours + 120.0).contains(&next),
        "next run {next}, expected about {six_hours}"
    );
    let expiry_line = body
        .lines()
        .find(|l| l.starts_with("mcp_readiness_credential_expiry_timestamp_seconds{"))
        .unwrap_or_else(|| panic!("no credential expiry pushed:\n{body}"));
    assert!(expiry_line.contains("renewable=\"false\""), "{expiry_line}");
    assert!(!body.contains(&token), "the JWT in the push");

    // The next run in 1 h: the token lasts; the record says so with an empty list.
    let fine = check(&config, &["--json", "--next-run-in", "1h"]).await;
    assert_eq!(fine.code, Some(0), "{}", fine.stderr);
    let record: Value = serde_json::from_str(&fine.stdout).unwrap();
    assert_eq!(record["expiring_before_next_run"], json!([]), "{record}");
    assert!(
        !fine.stderr.contains("warning: the bearer token"),
        "{}",
        fine.stderr
    );

    // The schedule in the file does the same as the flag; the flag wins over it.
    let scheduled = write_config(
        &scratch,
        "scheduled.json",
        json!({ "jwt": entry }),
        json!({ "schedule": { "every": "6h" } }),
    );
    let from_file = check(&scheduled, &[]).await;
    assert_eq!(from_file.code, Some(0), "{}", from_file.stderr);
    assert!(
        from_file
            .stderr
            .contains("warning: the bearer token of `jwt`"),
        "{}",
        from_file.stderr
    );
    let overridden = check(&scheduled, &["--json", "--next-run-in", "30m"]).await;
    let record: Value = serde_json::from_str(&overridden.stdout).unwrap();
    assert_eq!(record["expiring_before_next_run"], json!([]), "{record}");
}

/// The run's trace as `check` exported it to a real OTLP/HTTP receiver, run with `flags`.
async fn run_span_of(config: &Path, flags: &[&str]) -> opentelemetry_proto::tonic::trace::v1::Span {
    let (receiver, mut received) = mcp_readiness_fixtures::otlp::start_http_receiver().await;
    let endpoint = format!("http://{receiver}");
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())];
    let run = mcp_readiness_fixtures::run::check(config, flags, &env).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let mut spans = Vec::new();
    while let Ok(request) = received.try_recv() {
        spans.extend(
            mcp_readiness_fixtures::otlp::flatten(request)
                .into_iter()
                .flat_map(|r| r.spans),
        );
    }
    spans
        .into_iter()
        .find(|s| s.name == "readiness run")
        .expect("the run span was exported")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_span_carries_a_warn_event_naming_a_credential_that_expires_before_the_next_run() {
    use mcp_readiness_fixtures::otlp::string_attr;
    const FORECAST: &str = "a credential that cannot renew itself expires before the next run";
    let scratch = Scratch::new("forecast-span");
    let (_http, token, expires, _, config) = jwt_fixture(&scratch).await;

    // The next run in 6 h: one `warn` event on the run span, naming the server, the credential,
    // when it expires, when the next run is and the action; never the token.
    let started = unix_now();
    let run = run_span_of(&config, &["--json", "--next-run-in", "6h"]).await;
    let events: Vec<_> = run.events.iter().filter(|e| e.name == FORECAST).collect();
    assert_eq!(events.len(), 1, "{:?}", run.events);
    let event = events[0];
    let attr = |key: &str| string_attr(&event.attributes, key);
    assert_eq!(attr("level").as_deref(), Some("WARN"), "{event:?}");
    assert_eq!(attr("server").as_deref(), Some("jwt"));
    assert_eq!(attr("credential").as_deref(), Some("bearer_token"));
    assert_eq!(attr("action").as_deref(), Some("reauthorize"));
    let at =
        humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(expires))
            .to_string();
    assert_eq!(attr("expires_at"), Some(at));
    let next = rfc3339_secs(&attr("next_run").expect("next_run")) as u64;
    assert!(
        (started + 6 * 3600..=unix_now() + 6 * 3600).contains(&next),
        "next run {next}"
    );
    assert!(
        !format!("{event:?}").contains(&token),
        "the JWT in the event"
    );

    // The next run in 1 h: the token lasts; no such event.
    let run = run_span_of(&config, &["--json", "--next-run-in", "1h"]).await;
    assert!(
        run.events.iter().all(|e| e.name != FORECAST),
        "{:?}",
        run.events
    );
}
