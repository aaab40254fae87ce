//! Each server state as a probe reads it, with the supervised series' names and labels.

use std::time::Duration;

use base64::Engine as _;
use mcp_readiness::State;
use mcp_readiness::client::ProtocolGenerations;
use mcp_readiness::probe::{ProbeConfig, ProbeRequest};
use mcp_readiness::state::ConnectResult;

use super::*;

fn request(target: &str) -> ProbeRequest {
    ProbeRequest {
        target: target.to_owned(),
        server: Some("api".into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_ready_server_reads_ready_with_its_tools_and_server_info_in_the_supervised_series() {
    let server = McpServer::start(None).await;
    let prober = prober(ProbeConfig::allowing(loopback()));
    let answer = prober.probe(&request(&server.url)).await.unwrap();
    assert_eq!(answer.outcome.state, State::Ready);
    assert_eq!(answer.outcome.result, ConnectResult::Ok);
    assert_eq!(answer.outcome.tools, Some(2));
    let text = &answer.text;
    assert_eq!(
        sample(
            text,
            r#"mcp_readiness_server_state{server="api",state="ready"}"#
        ),
        Some(1.0)
    );
    for other in ["connecting", "unauthenticated", "absent"] {
        let series = format!(r#"mcp_readiness_server_state{{server="api",state="{other}"}}"#);
        assert_eq!(sample(text, &series), Some(0.0), "{text}");
    }
    assert_eq!(
        sample(text, r#"mcp_readiness_server_tools{server="api"}"#),
        Some(2.0)
    );
    assert_eq!(sample(text, "mcp_readiness_probe_success"), Some(1.0));
    assert!(sample(text, "mcp_readiness_probe_duration_seconds").is_some_and(|d| d > 0.0));
    assert!(
        text.lines()
            .any(|l| l.starts_with("mcp_readiness_server_info{")
                && l.contains(r#"server="api""#)
                && l.contains(r#"server_name="probe-fixture""#)
                && l.contains(r#"server_version="1.2.3""#)),
        "{text}"
    );
    assert_eq!(
        sample(
            text,
            r#"mcp_readiness_connects_total{result="ok",server="api"}"#
        ),
        Some(1.0)
    );
    // A second probe counts a second attempt: the counter grows like a supervised one.
    let again = prober.probe(&request(&server.url)).await.unwrap();
    assert_eq!(
        sample(
            &again.text,
            r#"mcp_readiness_connects_total{result="ok",server="api"}"#
        ),
        Some(2.0)
    );
}

#[tokio::test]
async fn without_a_server_label_the_series_are_labelled_with_the_targets_host_and_port() {
    let server = McpServer::start(None).await;
    let prober = prober(ProbeConfig::allowing(loopback()));
    let answer = prober
        .probe(&ProbeRequest {
            target: server.url.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    let host_port = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    assert_eq!(answer.server, host_port);
    assert!(answer.text.contains(&format!(r#"server="{host_port}""#)));
}

#[tokio::test]
async fn a_401_reads_unauthenticated() {
    let server = McpServer::start(Some("right")).await;
    let prober = prober(ProbeConfig::allowing(loopback()));
    let answer = prober.probe(&request(&server.url)).await.unwrap();
    assert_eq!(
        answer.outcome.state,
        State::Unauthenticated,
        "{:?}",
        answer.outcome
    );
    assert_eq!(answer.outcome.result, ConnectResult::Unauthorized);
    assert_eq!(
        sample(
            &answer.text,
            r#"mcp_readiness_server_state{server="api",state="unauthenticated"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(&answer.text, "mcp_readiness_probe_success"),
        Some(0.0)
    );
    assert_eq!(
        sample(
            &answer.text,
            r#"mcp_readiness_connects_total{result="unauthorized",server="api"}"#
        ),
        Some(1.0)
    );
}

#[tokio::test]
async fn a_refused_connection_reads_absent() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let prober = prober(ProbeConfig::allowing(loopback()));
    let answer = prober
        .probe(&request(&format!("http://127.0.0.1:{port}/mcp")))
        .await
        .unwrap();
    assert_eq!(answer.outcome.state, State::Absent, "{:?}", answer.outcome);
    assert_eq!(answer.outcome.result, ConnectResult::Refused);
    assert_eq!(
        sample(
            &answer.text,
            r#"mcp_readiness_server_state{server="api",state="absent"}"#
        ),
        Some(1.0)
    );
    assert!(!answer.text.contains("mcp_readiness_server_info"));
}

#[tokio::test]
async fn a_name_that_does_not_resolve_reads_absent() {
    let mut config = ProbeConfig::allowing(vec!["http://*.invalid/mcp".parse().unwrap()]);
    config.default_module.timeout = Duration::from_secs(5);
    let answer = prober(config)
        .probe(&request("http://no-such-host.invalid/mcp"))
        .await
        .unwrap();
    assert_eq!(answer.outcome.state, State::Absent, "{:?}", answer.outcome);
}

#[tokio::test(start_paused = true)]
async fn a_handshake_still_running_at_the_scrapes_deadline_reads_connecting() {
    let (url, accepted, _open) = silent_server().await;
    let prober = prober(ProbeConfig::allowing(loopback()));
    let answer = prober
        .probe(&ProbeRequest {
            scrape_timeout: Some(Duration::from_secs(2)),
            ..request(&url)
        })
        .await
        .unwrap();
    assert_eq!(
        answer.outcome.state,
        State::Connecting,
        "{:?}",
        answer.outcome
    );
    assert_eq!(answer.outcome.result, ConnectResult::Timeout);
    // The scrape's 2 s, less the 0.5 s margin (virtual time: exactly).
    let took = answer.outcome.duration;
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_millis(1600),
        "{took:?}"
    );
    assert_eq!(
        sample(
            &answer.text,
            r#"mcp_readiness_server_state{server="api",state="connecting"}"#
        ),
        Some(1.0)
    );
    // The probe's own connection (resolve, connect) and the HTTP client's: no retry.
    assert!(accepted.load(std::sync::atomic::Ordering::SeqCst) <= 2);
}

fn jwt(exp: u64) -> String {
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!(
        "{}.{}.c2ln",
        b64(r#"{"alg":"HS256","typ":"JWT"}"#),
        b64(&format!(r#"{{"sub":"probe","exp":{exp}}}"#))
    )
}

#[tokio::test]
async fn a_modules_token_opens_the_server_and_its_jwt_expiry_is_exported() {
    let token = jwt(4_102_444_800);
    let server = McpServer::start(Some(&token)).await;
    let mut config = ProbeConfig::allowing(loopback());
    config
        .modules
        .insert("team".into(), bearer_module(&[&server.url], &token));
    let answer = prober(config)
        .probe(&ProbeRequest {
            module: Some("team".into()),
            ..request(&server.url)
        })
        .await
        .unwrap();
    assert_eq!(answer.outcome.state, State::Ready, "{:?}", answer.outcome);
    assert_eq!(
        sample(
            &answer.text,
            r#"mcp_readiness_credential_expiry_timestamp_seconds{credential="bearer_token",renewable="false",server="api"}"#
        ),
        Some(4_102_444_800.0),
        "{}",
        answer.text
    );
    assert!(!answer.text.contains(&token), "the token never appears");
}

#[tokio::test]
async fn a_module_offers_only_the_protocol_generations_it_names() {
    let server = McpServer::start(None).await;
    let mut config = ProbeConfig::allowing(loopback());
    for (name, generations) in [
        ("old", ProtocolGenerations::Initialize),
        ("new", ProtocolGenerations::Discover),
    ] {
        let mut module = ProbeModule::without_credentials(loopback());
        module.generations = generations;
        config.modules.insert(name.into(), module);
    }
    let prober = prober(config);
    let version = |answer: &mcp_readiness::probe::ProbeAnswer| {
        answer
            .outcome
            .identity
            .as_ref()
            .map(|i| i.protocol_version.clone())
            .unwrap_or_default()
    };
    for (module, expected) in [("old", "2025-11-25"), ("new", "2026-07-28")] {
        let answer = prober
            .probe(&ProbeRequest {
                module: Some(module.into()),
                ..request(&server.url)
            })
            .await
            .unwrap();
        assert_eq!(answer.outcome.state, State::Ready, "{:?}", answer.outcome);
        assert_eq!(version(&answer), expected, "{module}");
    }
}
