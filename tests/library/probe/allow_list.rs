//! Safe by default: the endpoint is off until configured, a target off its module's allow-list is
//! refused with a 403 and a reason and never connected to, and a module's credentials go only to
//! its own targets.

use std::sync::atomic::Ordering;

use mcp_readiness::probe::{ProbeConfig, Prober};

use super::*;

#[tokio::test]
async fn the_probe_endpoint_is_off_until_configured() {
    let server = probe_endpoint(Prober::disabled()).await;
    let (status, _, body) = get_probe(
        server.local_addr(),
        "target=http%3A%2F%2F127.0.0.1%3A1%2Fmcp",
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("configure `readiness.probe`"), "{body}");
}

#[tokio::test]
async fn a_target_off_the_allow_list_is_a_403_with_a_reason_and_no_connection_is_made() {
    let (addr, accepted, listener) = counting_listener().await;
    let counter = accepted.clone();
    tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    // Only port 1 on loopback is allowed; the counting listener is elsewhere.
    let prober = prober(ProbeConfig::allowing(vec![
        "http://127.0.0.1:1/mcp".parse().unwrap(),
    ]));
    let server = probe_endpoint(prober.clone()).await;
    for target in [
        format!("http://{addr}/mcp"),
        format!("http://localhost:{}/mcp", addr.port()),
        format!("http://{addr}/mcp/../other"),
    ] {
        let (status, _, body) =
            get_probe(server.local_addr(), &format!("target={}", encode(&target))).await;
        assert_eq!(status, 403, "{target}: {body}");
        assert!(
            body.contains("is not on the allow-list of the default module"),
            "{body}"
        );
        assert!(body.contains("no connection was made"), "{body}");
        // Its origin, never its path (the same words go to the log, which redacts URL paths and
        // configured URLs whole: a path would leave on-call with "target [redacted]").
        assert!(
            body.starts_with("target http://") && body.contains(" (its path aside) "),
            "{body}"
        );
        assert!(!body.contains("/mcp") && !body.contains("/other"), "{body}");
    }
    // Credentials in the target are refused before the allow-list is even read.
    let (status, _, body) = get_probe(
        server.local_addr(),
        &format!(
            "target={}",
            encode(&format!("http://user:hunter2@{addr}/mcp"))
        ),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(!body.contains("hunter2"), "{body}");
    // Give a connection that was wrongly started every chance to arrive.
    let probe = prober
        .probe(&mcp_readiness::probe::ProbeRequest {
            target: "http://127.0.0.1:1/mcp".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(probe.outcome.state, mcp_readiness::State::Absent);
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "the refused target was never connected to"
    );
}

#[tokio::test]
async fn a_modules_credentials_go_only_to_the_targets_its_own_patterns_allow() {
    let mine = McpServer::start(Some("team-token")).await;
    let other = McpServer::start(None).await;
    let mut config = ProbeConfig::allowing(loopback());
    config
        .modules
        .insert("team".into(), bearer_module(&[&mine.url], "team-token"));
    let server = probe_endpoint(prober(config)).await;
    let addr = server.local_addr();

    // The module's token to another target: refused, and that target sees nothing.
    let (status, _, body) =
        get_probe(addr, &format!("target={}&module=team", encode(&other.url))).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("module `team`"), "{body}");
    assert!(
        body.contains("readiness.probe.modules.team.targets"),
        "{body}"
    );
    assert_eq!(other.accepted.load(Ordering::SeqCst), 0);

    // The module's own target gets the token and reads ready.
    let (status, _, body) = get_probe(
        addr,
        &format!("target={}&module=team&server=mine", encode(&mine.url)),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        sample(&body, "mcp_readiness_probe_success"),
        Some(1.0),
        "{body}"
    );
    assert!(
        mine.authorizations()
            .iter()
            .all(|a| a == "Bearer team-token")
    );

    // The other target through the default module: probed, without any credential.
    let (status, _, body) =
        get_probe(addr, &format!("target={}&server=other", encode(&other.url))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        sample(&body, "mcp_readiness_probe_success"),
        Some(1.0),
        "{body}"
    );
    let seen = other.authorizations();
    assert!(
        !seen.is_empty() && seen.iter().all(String::is_empty),
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_unknown_module_or_a_missing_target_is_a_400_that_says_what_to_send() {
    let server = probe_endpoint(prober(ProbeConfig::allowing(loopback()))).await;
    let (status, _, body) = get_probe(
        server.local_addr(),
        "module=nope&target=http%3A%2F%2F127.0.0.1%3A1%2Fmcp",
    )
    .await;
    assert_eq!(
        (status, body.trim()),
        (
            400,
            "unknown module `nope`: `readiness.probe.modules` has none"
        )
    );
    let (status, _, body) = get_probe(server.local_addr(), "").await;
    assert_eq!(status, 400);
    assert!(body.contains("missing `target`"), "{body}");
}
