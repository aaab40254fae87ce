//! `&debug=true`: a red probe target explained by one request: the probe's log (the module's
//! name, never its credentials; each phase with its start and duration; the verdict, the
//! attempt's result and the reason) and then the metrics, which carry
//! `mcp_readiness_probe_phase_duration_seconds{phase}` on every answer.

use super::*;

#[tokio::test]
async fn a_debug_probe_of_a_server_refusing_the_token_says_why_in_its_log_then_its_metrics() {
    let mcp = McpServer::start(Some("right-token-debug-5")).await;
    let mut config = ProbeConfig::allowing(loopback());
    config.modules.insert(
        "vault".into(),
        bearer_module(&["http://127.0.0.1:*/mcp"], "wrong-token-debug-8"),
    );
    let server = probe_endpoint(prober(config)).await;
    let target = encode(&mcp.url);
    let (status, content_type, body) = get_probe(
        server.local_addr(),
        &format!("target={target}&module=vault&debug=true"),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(content_type, "text/plain; charset=utf-8");
    let (log, metrics) = body
        .split_once("\n\n")
        .expect("the log, a blank line, the metrics");
    assert!(log.contains("module: vault"), "{log}");
    assert!(
        log.contains("verdict: unauthenticated (attempt unauthorized)"),
        "{log}"
    );
    // In the probe's words: its credentials are the module's, not a connection's headers.
    assert!(
        log.contains(
            "next step: renew the credentials of probe module `vault` \
             (`readiness.probe.modules.vault`: its `headers`, or its OAuth store), then reload"
        ),
        "{log}"
    );
    let reason = log_and_reason(&body).1;
    says(
        reason,
        &["the credentials of probe module `vault` were rejected"],
    );
    never_says(reason, &["its `headers` (e.g.", "re-authorize the"]);
    let handshake = log
        .lines()
        .find(|l| l.starts_with("phase handshake"))
        .unwrap_or_else(|| panic!("no handshake phase:\n{log}"));
    assert!(handshake.contains(": failed ("), "{handshake}");
    // The target's own answer: its status, as the HTTP client saw it.
    assert!(
        log.lines()
            .any(|l| l.starts_with("http POST ") && l.contains("-> HTTP 401")),
        "{log}"
    );
    assert!(
        handshake.contains("started at") && handshake.contains("took"),
        "{handshake}"
    );
    assert!(
        !body.contains("wrong-token-debug-8"),
        "the module's token leaked:\n{body}"
    );
    assert!(
        metrics.contains(r#"mcp_readiness_server_state{server="#),
        "{metrics}"
    );
    assert!(
        sample(
            metrics,
            r#"mcp_readiness_probe_phase_duration_seconds{phase="handshake"}"#
        )
        .is_some(),
        "{metrics}"
    );

    // The same probe without debug: the metrics alone, phases included, as Prometheus reads them.
    let (status, content_type, plain) = get_probe(
        server.local_addr(),
        &format!("target={target}&module=vault"),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    assert!(plain.starts_with("# HELP"), "{plain}");
    assert!(plain.contains("mcp_readiness_probe_phase_duration_seconds{phase=\"handshake\"}"));
}

#[tokio::test]
async fn a_debug_probe_of_a_ready_server_times_the_handshake_and_the_tool_list() {
    let mcp = McpServer::start(None).await;
    let server = probe_endpoint(prober(ProbeConfig::allowing(loopback()))).await;
    let (status, _, body) = get_probe(
        server.local_addr(),
        &format!("target={}&debug=true", encode(&mcp.url)),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("module: default"), "{body}");
    assert!(body.contains("verdict: ready (attempt ok)"), "{body}");
    let phases: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("phase "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        phases,
        ["resolve", "connect", "tls", "handshake", "tools_list"],
        "{body}"
    );
    assert!(
        body.contains("phase resolve    started at")
            && body.contains("127.0.0.1 is an IP address: nothing to resolve"),
        "{body}"
    );
    assert!(
        body.contains("phase tls        not applicable: plain http, no TLS"),
        "{body}"
    );
    assert!(
        body.lines()
            .any(|l| l.starts_with("http POST tools/list -> HTTP 2xx ")),
        "{body}"
    );
    // Plain http: no TLS series, no certificate.
    assert!(!body.contains(r#"phase="tls""#), "{body}");
    assert!(
        !body.contains("mcp_readiness_tls_certificate_expiry_timestamp_seconds"),
        "{body}"
    );
    for phase in ["resolve", "connect", "handshake", "tools_list"] {
        let seconds = sample(
            &body,
            &format!("mcp_readiness_probe_phase_duration_seconds{{phase=\"{phase}\"}}"),
        )
        .unwrap_or_else(|| panic!("no {phase} duration:\n{body}"));
        assert!((0.0..10.0).contains(&seconds), "{phase}: {seconds}");
    }
}

#[tokio::test]
async fn a_debug_probe_follows_the_allow_list_like_any_other() {
    let server = probe_endpoint(prober(ProbeConfig::allowing(loopback()))).await;
    let (status, _, body) = get_probe(
        server.local_addr(),
        &format!("target={}&debug=true", encode("http://10.255.255.1:80/mcp")),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let (status, _, _) = get_probe(server.local_addr(), "target=x&debug=maybe").await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_debug_probe_claims_no_2xx_for_an_answer_that_was_not_one_or_never_came() {
    // A 404 page where the MCP endpoint should be, and a port nothing listens on.
    let app = axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::NOT_FOUND,
            [(axum::http::header::CONTENT_TYPE, "text/html")],
            "<html><head><title>Not Found</title></head></html>",
        )
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let not_found = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let dead = format!("http://{}/mcp", crate::support::dead_addr());
    let server = probe_endpoint(prober(ProbeConfig::allowing(loopback()))).await;
    for (target, said) in [
        (&not_found, "-> HTTP 404 (not MCP)"),
        (&dead, "-> no answer: the connection failed"),
    ] {
        let (status, _, body) = get_probe(
            server.local_addr(),
            &format!("target={}&debug=true", encode(target)),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let http: Vec<&str> = body.lines().filter(|l| l.starts_with("http ")).collect();
        assert!(!http.is_empty(), "{body}");
        assert!(http.iter().all(|l| !l.contains("2xx")), "{body}");
        assert!(http.iter().any(|l| l.ends_with(said)), "{body}");
    }
}

/// A target that accepts and never answers, probed within a 1.5 s scrape: the probe's own
/// deadline ends it (not the connector's timeout with its "raise the connect timeout"), and the
/// next step is about the server and the module's `timeout`, not a wait budget.
#[tokio::test]
async fn a_debug_probe_of_a_silent_target_names_the_probes_deadline_and_the_server() {
    let (url, _accepted, _open) = silent_server().await;
    let server = probe_endpoint(prober(ProbeConfig::allowing(loopback()))).await;
    let response = reqwest::Client::new()
        .get(format!(
            "http://{}/probe?target={}&debug=true",
            server.local_addr(),
            encode(&url)
        ))
        .header("X-Prometheus-Scrape-Timeout-Seconds", "1.5")
        .send()
        .await
        .unwrap();
    let body = response.text().await.unwrap();
    let (log, reason) = log_and_reason(&body);
    says(
        log,
        &[
            "http (no answer from the target before the probe ended)",
            "next step: check the server behind the URL (it did not finish the handshake before the \
         probe's deadline); if it is only slow, raise the module's `timeout` and the scrape's \
         `scrape_timeout`",
        ],
    );
    says(reason, &["was still running at the probe's deadline"]);
    never_says(reason, &["connect timeout"]);
}

/// A target that wants credentials, probed without a module: the advice is the module, not a
/// connection's `headers` or `oauth`.
#[tokio::test]
async fn a_debug_probe_without_a_module_of_a_target_wanting_credentials_says_to_give_one() {
    let mcp = McpServer::start(Some("right-token-debug-9")).await;
    let server = probe_endpoint(prober(ProbeConfig::allowing(loopback()))).await;
    let (_, _, body) = get_probe(
        server.local_addr(),
        &format!("target={}&debug=true", encode(&mcp.url)),
    )
    .await;
    let (log, reason) = log_and_reason(&body);
    says(
        log,
        &[
            "verdict: unauthenticated (attempt unauthorized)",
            "next step: probe with `&module=NAME`, a module of `readiness.probe.modules`",
        ],
    );
    says(
        reason,
        &["a probe without `module` sends no credentials: probe with `&module=NAME`"],
    );
    never_says(reason, &["configure `oauth`"]);
}

/// The probe's log of a debug answer (before the metrics) and its `reason:` line.
fn log_and_reason(body: &str) -> (&str, &str) {
    let log = body.split_once("\n\n").map_or(body, |(log, _)| log);
    let reason = log
        .lines()
        .find(|l| l.starts_with("reason: "))
        .unwrap_or_default();
    (log, reason)
}

/// Asserts that `text` holds each of `parts`.
fn says(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "{part:?} is not in:\n{text}");
    }
}

/// Asserts that `text` holds none of `parts`.
fn never_says(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(!text.contains(part), "{part:?} is in:\n{text}");
    }
}
