//! The three ways to get OAuth tokens, against the official MCP Python SDK's authorization server
//! (`e2e/python/oauth_server.py`): a URL-only entry registered by one `oauth login` (Dynamic
//! Client Registration, RFC 9207 `iss` checked), client credentials that nobody logs in for,
//! through the real binary and through the library's `Hub` on paused time, and workload
//! identity (the JWT-bearer grant with a token file the platform rotates).

use mcp_readiness_fixtures as common;

use std::time::Duration;

use common::http::{free_port, get, request};
use common::process::signal;
use common::serve::Serve;
use common::{Scratch, eventually};
use mcp_readiness::client::SigningAlgorithm;
use mcp_readiness::secret::Secret;
use mcp_readiness::{
    Hub, HubOptions,
    client::{OAuthGrant, OAuthSpec},
};
use mcp_readiness::{ServerSpec, State, ToolCall, TransportSpec};
use serde_json::{Value, json};

use crate::oauth::{assert_no_token, login, oauth_server_with, python, sample, state_of, stats};

/// The status page row of `server`.
async fn row(serve: &Serve, server: &str) -> String {
    let page = get(&serve.addr, "/status").await.unwrap().ok_text();
    page.lines()
        .find(|l| l.contains(&format!(r#"data-server="{server}""#)))
        .unwrap_or_default()
        .to_owned()
}

async fn wait_for(serve: &Serve, server: &str, state: &'static str) {
    eventually(
        &format!("{server} {state}"),
        Duration::from_secs(20),
        async || {
            let text = serve.metrics().await;
            (state_of(&text, server) == Some(state))
                .then_some(())
                .ok_or(text)
        },
    )
    .await;
}

fn store_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test]
async fn a_url_only_entry_is_registered_by_one_login_reused_by_the_next_and_reads_unauthenticated_once_its_refresh_is_refused()
 {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("oauth-dcr");
    let (port, callback) = (free_port(), free_port());
    let _server = oauth_server_with(
        &python,
        &scratch,
        port,
        callback,
        &["--access-ttl", "3", "--refresh-ttl", "86400", "--iss"],
    )
    .await;
    let config = scratch.path("mcp.json");
    std::fs::write(
        &config,
        serde_json::to_string_pretty(&json!({
            "mcpServers": { "vault": { "type": "http", "url": format!("http://127.0.0.1:{port}/mcp") } },
            "readiness": { "ping": "500ms", "ping_timeout": "2s", "cooldown": "1s" }
        }))
        .unwrap(),
    )
    .unwrap();

    // One login: registered (RFC 7591), authorized (the `iss` of the response checked), stored.
    let mut printed = login(&scratch, &config, port, callback, "first").await;
    let store = scratch.path(".mcp-readiness/oauth/vault.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&store).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the store is private");
    }
    let kept = store_json(&store);
    let client_id = kept["registration"]["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(kept["registration"]["method"], "dynamic");
    assert_eq!(
        kept["registration"]["issuer"],
        format!("http://127.0.0.1:{port}")
    );
    assert_eq!(
        kept["client_id"],
        client_id.as_str(),
        "the tokens are the registered client's"
    );
    let issued = stats(port).await;
    assert!(
        issued["clients"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == client_id.as_str()),
        "the authorization server knows the registered client: {issued}"
    );
    assert_eq!(issued["logins"], 1);

    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "trace")]).await;
    wait_for(&serve, "vault", "ready").await;
    // Tokens of the registered client refresh themselves: ready across two lifetimes.
    let before = stats(port).await["refreshes"].as_u64().unwrap();
    let until = tokio::time::Instant::now() + Duration::from_secs(7);
    while tokio::time::Instant::now() < until {
        let text = serve.metrics().await;
        assert_eq!(state_of(&text, "vault"), Some("ready"), "{text}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(stats(port).await["refreshes"].as_u64().unwrap() > before);

    // The next login reuses the registration.
    printed += &login(&scratch, &config, port, callback, "again").await;
    let issued = stats(port).await;
    assert_eq!(
        issued["clients"].as_array().unwrap().len(),
        2,
        "the fixture's own client and ours, registered once: {issued}"
    );
    assert_eq!(issued["logins"], 2);
    assert_eq!(
        store_json(&store)["registration"]["client_id"],
        client_id.as_str()
    );

    // Refresh refused: unauthenticated, and the reason names the login to run.
    request(
        &format!("127.0.0.1:{port}"),
        "POST",
        "/admin/revoke",
        &[],
        b"",
    )
    .await
    .unwrap();
    wait_for(&serve, "vault", "unauthenticated").await;
    let row = row(&serve, "vault").await;
    assert!(row.contains("refused the refresh token"), "{row}");
    assert!(
        row.contains(&format!(
            "mcp-readiness oauth login --config {} --server vault",
            config.display()
        )),
        "{row}"
    );

    let tokens: Vec<String> = stats(port).await["issued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    let metrics = serve.metrics().await;
    let mut serve = serve;
    signal(serve.guard.pid(), "TERM");
    serve.guard.exit_within(Duration::from_secs(20)).await;
    assert!(
        serve.stderr().contains("TRACE"),
        "RUST_LOG=trace took effect"
    );
    assert_no_token("/metrics", &metrics, &tokens);
    assert_no_token("serve's stderr", &serve.stderr(), &tokens);
    assert_no_token("login's output", &printed, &tokens);
}

#[tokio::test]
async fn client_credentials_reach_the_server_with_nobody_logging_in_renew_themselves_and_a_rotated_secret_reads_unauthenticated()
 {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("oauth-cc");
    let (port, callback) = (free_port(), free_port());
    let secret = "job-s3cret-9f8e7d6c";
    let _server = oauth_server_with(
        &python,
        &scratch,
        port,
        callback,
        &["--access-ttl", "3", "--job-secret", secret],
    )
    .await;
    let config = scratch.path("mcp.json");
    std::fs::write(
        &config,
        serde_json::to_string_pretty(&json!({
            "mcpServers": { "job": {
                "type": "http", "url": format!("http://127.0.0.1:{port}/mcp"),
                "oauth": { "store": "tokens/job.json", "grant": "client_credentials",
                           "client_id": "mcp-readiness-job", "client_secret": "${JOB_SECRET}",
                           "scopes": ["tools"] }
            } },
            "readiness": { "ping": "500ms", "ping_timeout": "2s", "cooldown": "1s" }
        }))
        .unwrap(),
    )
    .unwrap();
    let serve = Serve::start(
        &scratch,
        &config,
        &[("RUST_LOG", "trace"), ("JOB_SECRET", secret)],
    )
    .await;
    wait_for(&serve, "job", "ready").await;

    // Renewed before each 3 s expiry by the hub: ready at every scrape, the token renewable.
    let before = stats(port).await["client_credentials"].as_u64().unwrap();
    let until = tokio::time::Instant::now() + Duration::from_secs(8);
    let mut text = String::new();
    while tokio::time::Instant::now() < until {
        text = serve.metrics().await;
        assert_eq!(
            state_of(&text, "job"),
            Some("ready"),
            "ready throughout:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let renewals = stats(port).await["client_credentials"].as_u64().unwrap() - before;
    assert!(
        renewals >= 3,
        "renewed across 8 s of 3 s tokens: {renewals}"
    );
    assert!(
        sample(
            &text,
            "mcp_readiness_credential_expiry_timestamp_seconds",
            &[
                r#"server="job""#,
                r#"credential="access_token""#,
                r#"renewable="true""#
            ]
        )
        .is_some(),
        "a client-credentials token renews itself: {text}"
    );
    assert_eq!(stats(port).await["logins"], 0, "nobody logged in");

    // The secret rotated away: once the token runs out, unauthenticated, naming what to rotate.
    request(
        &format!("127.0.0.1:{port}"),
        "POST",
        "/admin/rotate-job-secret",
        &[],
        b"",
    )
    .await
    .unwrap();
    wait_for(&serve, "job", "unauthenticated").await;
    let row = row(&serve, "job").await;
    assert!(row.contains("refused the client credentials"), "{row}");
    assert!(row.contains("rotate `oauth.client_secret`"), "{row}");

    let mut tokens: Vec<String> = stats(port).await["issued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    tokens.push(secret.to_owned());
    let metrics = serve.metrics().await;
    let page = get(&serve.addr, "/status").await.unwrap().ok_text();
    let mut serve = serve;
    signal(serve.guard.pid(), "TERM");
    serve.guard.exit_within(Duration::from_secs(20)).await;
    assert!(
        serve.stderr().contains("TRACE"),
        "RUST_LOG=trace took effect"
    );
    assert_no_token("/metrics", &metrics, &tokens);
    assert_no_token("the status page", &page, &tokens);
    assert_no_token("serve's stderr", &serve.stderr(), &tokens);
    assert_no_token("serve's stdout", &serve.stdout(), &tokens);
}

/// An unsigned JWT (the test authorization server reads its claims only) for subject `sub`,
/// expiring `exp` (Unix seconds), numbered `jti`.
fn workload_jwt(sub: &str, exp: u64, jti: &str) -> String {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!(
        "{}.{}.c2lnbmF0dXJl",
        b64(r#"{"alg":"RS256","typ":"JWT"}"#),
        b64(&format!(
            r#"{{"sub":"{sub}","exp":{exp},"jti":"{jti}","iss":"https://kubernetes.default.svc"}}"#
        ))
    )
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn workload_identity_reaches_the_server_with_no_secret_rereads_the_rotated_token_at_each_renewal_and_reads_unauthenticated_when_refused_or_expired()
 {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("oauth-wif");
    let (port, callback) = (free_port(), free_port());
    let subject = "system:serviceaccount:jobs:nightly";
    let _server = oauth_server_with(
        &python,
        &scratch,
        port,
        callback,
        &["--access-ttl", "3", "--workload-subject", subject],
    )
    .await;
    std::fs::create_dir_all(scratch.path("tokens")).unwrap();
    let token_file = scratch.path("tokens/workload.jwt");
    let stale_file = scratch.path("tokens/stale.jwt");
    let first = workload_jwt(subject, unix_now() + 3600, "first");
    std::fs::write(&token_file, &first).unwrap();
    // A token the platform stopped rotating an hour ago.
    let stale = workload_jwt(subject, unix_now() - 3600, "stale");
    std::fs::write(&stale_file, &stale).unwrap();
    let config = scratch.path("mcp.json");
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::write(
        &config,
        serde_json::to_string_pretty(&json!({
            "mcpServers": {
                "nightly": { "type": "http", "url": url,
                    "oauth": { "store": "tokens/nightly.json", "grant": "workload_identity",
                               "assertion_file": "tokens/workload.jwt", "scopes": ["tools"] } },
                "stale": { "type": "http", "url": url,
                    "oauth": { "store": "tokens/stale.json", "grant": "workload_identity",
                               "assertion_file": "tokens/stale.jwt", "scopes": ["tools"] } }
            },
            "readiness": { "ping": "500ms", "ping_timeout": "2s", "cooldown": "1s" }
        }))
        .unwrap(),
    )
    .unwrap();
    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "trace")]).await;
    wait_for(&serve, "nightly", "ready").await;

    // An expired token file: unauthenticated at once, naming the file and who rotates it.
    wait_for(&serve, "stale", "unauthenticated").await;
    let stale_row = row(&serve, "stale").await;
    assert!(stale_row.contains("stale.jwt"), "{stale_row}");
    assert!(stale_row.contains("expired"), "{stale_row}");
    assert!(stale_row.contains("kubelet"), "{stale_row}");

    // Renewed before each 3 s expiry, ready at every scrape; the platform rotates the file
    // meanwhile and the next renewal sends the new token.
    let before = stats(port).await["jwt_bearer"].as_u64().unwrap();
    let second = workload_jwt(subject, unix_now() + 7200, "second");
    let until = tokio::time::Instant::now() + Duration::from_secs(8);
    let mut text = String::new();
    let mut rotated = false;
    while tokio::time::Instant::now() < until {
        text = serve.metrics().await;
        assert_eq!(
            state_of(&text, "nightly"),
            Some("ready"),
            "ready throughout:\n{text}"
        );
        if !rotated && tokio::time::Instant::now() + Duration::from_secs(5) > until {
            std::fs::write(&token_file, &second).unwrap();
            rotated = true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let renewals = stats(port).await["jwt_bearer"].as_u64().unwrap() - before;
    assert!(
        renewals >= 3,
        "renewed across 8 s of 3 s tokens: {renewals}"
    );
    let assertions = stats(port).await["assertions"].clone();
    assert_eq!(
        assertions.as_array().unwrap().last().unwrap(),
        "second",
        "the rotated token was read again at renewal: {assertions}"
    );
    assert!(
        sample(
            &text,
            "mcp_readiness_credential_expiry_timestamp_seconds",
            &[
                r#"server="nightly""#,
                r#"credential="access_token""#,
                r#"renewable="true""#
            ]
        )
        .is_some(),
        "the access token renews itself: {text}"
    );
    let exp = sample(
        &serve.metrics().await,
        "mcp_readiness_credential_expiry_timestamp_seconds",
        &[
            r#"server="nightly""#,
            r#"credential="workload_identity_token""#,
            r#"renewable="true""#,
        ],
    );
    let expected = (unix_now() + 7200) as f64;
    assert!(
        exp.is_some_and(|exp| (expected - exp).abs() < 30.0),
        "the rotated token's exp is exported: {exp:?}"
    );
    assert_eq!(stats(port).await["logins"], 0, "nobody logged in");

    // The authorization server stops trusting the workload: unauthenticated once the token runs
    // out, naming the file and what to check.
    request(
        &format!("127.0.0.1:{port}"),
        "POST",
        "/admin/distrust-workload",
        &[],
        b"",
    )
    .await
    .unwrap();
    wait_for(&serve, "nightly", "unauthenticated").await;
    let refused = row(&serve, "nightly").await;
    assert!(
        refused.contains("refused the workload identity token"),
        "{refused}"
    );
    assert!(refused.contains("workload.jwt"), "{refused}");

    let mut tokens: Vec<String> = stats(port).await["issued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    tokens.extend([first, second, stale]);
    let metrics = serve.metrics().await;
    let page = get(&serve.addr, "/status").await.unwrap().ok_text();
    let mut serve = serve;
    signal(serve.guard.pid(), "TERM");
    serve.guard.exit_within(Duration::from_secs(20)).await;
    assert_no_token("/metrics", &metrics, &tokens);
    assert_no_token("the status page", &page, &tokens);
    assert_no_token("serve's stderr", &serve.stderr(), &tokens);
    assert_no_token("serve's stdout", &serve.stdout(), &tokens);
}

#[tokio::test]
async fn client_credentials_renew_across_an_hour_of_paused_time_and_the_server_answers_at_every_step()
 {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("oauth-cc-hour");
    let (port, callback) = (free_port(), free_port());
    let secret = "job-s3cret-hour-1234";
    // 60 s tokens (in the authorization server's real time, which hardly moves here).
    let _server = oauth_server_with(
        &python,
        &scratch,
        port,
        callback,
        &["--access-ttl", "60", "--job-secret", secret],
    )
    .await;
    let mut oauth = OAuthSpec::new(scratch.path("job.json"), Some("mcp-readiness-job".into()));
    oauth.client_secret = Some(Secret::new(secret));
    oauth.scopes = vec!["tools".into()];
    oauth.grant = OAuthGrant::ClientCredentials {
        private_key: None,
        signing_algorithm: SigningAlgorithm::Rs256,
    };
    let spec = ServerSpec {
        name: "job".into(),
        transport: TransportSpec::Http {
            url: Secret::new(format!("http://127.0.0.1:{port}/mcp")),
            headers: Default::default(),
            oauth: Some(oauth),
        },
    };
    let options = HubOptions::builder()
        .connect_timeout(Duration::from_secs(20))
        .call_timeout(Duration::from_secs(20))
        .health_interval(None)
        .build()
        .unwrap();
    let hub = Hub::new(vec![spec], options).unwrap();
    let echo = || ToolCall::new("mcp__job__echo").with_arguments(json!({"text": "hi"}));
    hub.call(echo()).await.expect("a token fetched at connect");
    assert_eq!(stats(port).await["client_credentials"], 1);

    // Paused time that moves only when the test says: a blocking task stops tokio from
    // advancing the clock by itself while the real requests are in flight.
    tokio::time::pause();
    let (hold, held) = std::sync::mpsc::channel::<()>();
    let inhibitor = tokio::task::spawn_blocking(move || held.recv());
    // Steps of 5 s: a renewal due 24 s after the last runs at the next step, every 25 s.
    let step = Duration::from_secs(5);
    for at in 1..=720u32 {
        tokio::time::advance(step).await;
        let answer = hub.call(echo()).await;
        assert!(
            answer.is_ok(),
            "at {} s: {:?}",
            at * 5,
            answer.err().map(|e| e.to_string())
        );
        assert_eq!(hub.state("job"), Some(State::Ready), "at {} s", at * 5);
    }
    drop(hold);
    let _ = inhibitor.await;
    // A 60 s token is renewed 36 s before it expires (24 s after it was asked for), here at
    // the next 5 s step: every 25 s, 144 times in the hour.
    let renewals = stats(port).await["client_credentials"].as_u64().unwrap() - 1;
    assert!(
        (143..=145).contains(&renewals),
        "renewed every 25 s for an hour: {renewals}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_login_to_a_server_that_publishes_no_oauth_metadata_fails_at_once_naming_what_it_tried() {
    let scratch = Scratch::new("oauth-none");
    let (_server, port) = common::configure::http_fixture(&scratch, "tok-static-123456").await;
    let config = scratch.path("mcp.json");
    std::fs::write(
        &config,
        serde_json::to_string_pretty(&json!({
            "mcpServers": { "plain": { "type": "http", "url": format!("http://127.0.0.1:{port}/mcp") } }
        }))
        .unwrap(),
    )
    .unwrap();
    let started = tokio::time::Instant::now();
    let output = tokio::process::Command::new(common::cli())
        .args(["oauth", "login", "--server", "plain", "--config"])
        .arg(&config)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "fails at once, no waiting for a redirect: {:?}",
        started.elapsed()
    );
    assert!(stderr.contains("found no OAuth metadata"), "{stderr}");
    assert!(
        stderr.contains(
            "`/.well-known/oauth-protected-resource/<the URL's path>`, then \
             `/.well-known/oauth-protected-resource`"
        ),
        "names the path-based URL, then the root one: {stderr}"
    );
    assert!(
        !stderr.contains("Open this URL"),
        "no URL to open: {stderr}"
    );
    assert!(
        !scratch.path(".mcp-readiness/oauth/plain.json").exists(),
        "nothing stored"
    );
}
