//! Secrets never leak, end to end with the real binary at trace level: no form of a credential
//! (header values, URL query and path parts, environment values, bearer tokens) reaches stdout,
//! stderr, `/metrics` or the spans exported over OTLP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_readiness_fixtures::Scratch;
use mcp_readiness_fixtures::configure::{http_fixture, stdio_fixture, write_config};
use mcp_readiness_fixtures::exposition::states;
use mcp_readiness_fixtures::process::signal;
use mcp_readiness_fixtures::run::run;
use mcp_readiness_fixtures::serve::Serve;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Accepts OTLP/HTTP exports on 127.0.0.1 and keeps their raw bodies (protobuf carries strings
/// as plain UTF-8, so a secret in any attribute shows up in the bytes).
pub(crate) async fn otlp_sink() -> (String, Arc<Mutex<Vec<u8>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = bodies.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let kept = kept.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                loop {
                    let Some(head_end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    while buf.len() < head_end + 4 + length {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    kept.lock()
                        .unwrap()
                        .extend_from_slice(&buf[head_end + 4..head_end + 4 + length]);
                    buf.drain(..head_end + 4 + length);
                    let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if stream.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{addr}"), bodies)
}

const SECRETS: [&str; 6] = [
    "Qs3cretQueryValue1",
    "Us3cretUserinfo1",
    "Ps3cretPathValue1",
    "Hs3cretHeaderValue1",
    "Es3cretEnvValue123",
    "Rs3cretRefusedPath1",
];

fn assert_no_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "{what} shows the credential `{secret}`:\n{}",
            text.lines()
                .filter(|l| l.contains(secret))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn secret_servers(scratch: &Scratch, port: u16) -> Value {
    json!({
        "query": { "type": "http", "url": format!("http://127.0.0.1:{port}/mcp?token={}", SECRETS[0]),
                   "headers": { "Authorization": "Bearer ${GOOD_TOKEN}" } },
        "userinfo": { "type": "http", "url": format!("http://alice:{}@127.0.0.1:{port}/mcp", SECRETS[1]),
                      "headers": { "Authorization": "Bearer ${GOOD_TOKEN}" } },
        "path": { "type": "http", "url": format!("http://127.0.0.1:{port}/{}/mcp", SECRETS[2]) },
        "header": { "type": "http", "url": format!("http://127.0.0.1:{port}/mcp"),
                    "headers": { "Authorization": format!("Bearer {}", SECRETS[3]) } },
        "env": stdio_fixture(scratch, "env", &[("API_KEY", SECRETS[4])]),
        "refused": { "type": "http", "url": format!("http://127.0.0.1:1/{}/mcp", SECRETS[5]) },
    })
}

#[tokio::test]
async fn no_credential_form_reaches_stdout_stderr_metrics_or_exported_spans_at_trace_level() {
    let scratch = Scratch::new("secrets");
    let good = "g00d-t0ken-for-fixture";
    let (_http, port) = http_fixture(&scratch, good).await;
    let config = write_config(
        &scratch,
        "mcp.json",
        secret_servers(&scratch, port),
        json!({ "budget": "3s", "poll": "200ms" }),
    );
    let (endpoint, spans) = otlp_sink().await;
    let env = [
        ("RUST_LOG", "trace"),
        ("GOOD_TOKEN", good),
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            &*format!("{endpoint}/v1/traces"),
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
    ];

    let checked = run(&["check", "--config", config.to_str().unwrap()], &env).await;
    assert!(
        checked.stderr.contains("TRACE") || checked.stderr.contains("DEBUG"),
        "RUST_LOG=trace took effect:\n{}",
        checked.stderr
    );
    assert_no_secret("check's stdout", &checked.stdout);
    assert_no_secret("check's stderr", &checked.stderr);

    let serve = Serve::start(&scratch, &config, &env).await;
    let metrics = serve
        .scrape_until(Duration::from_secs(20), |body| {
            states(body).get("refused").and_then(|s| s.get("absent")) == Some(&1.0)
        })
        .await;
    assert_no_secret("/metrics", &metrics);
    let mut serve = serve;
    signal(serve.guard.pid(), "TERM");
    serve.guard.exit_within(Duration::from_secs(20)).await;
    assert_no_secret("serve's stdout", &serve.stdout());
    assert_no_secret("serve's stderr", &serve.stderr());

    let exported = spans.lock().unwrap().clone();
    assert!(!exported.is_empty(), "spans were exported over OTLP");
    assert_no_secret("exported spans", &String::from_utf8_lossy(&exported));
}
