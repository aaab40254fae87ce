//! The three ways to get OAuth tokens, against the official MCP Python SDK's authorization server
//! (`e2e/python/oauth_server.py`): a URL-only entry registered by one `oauth login` (Dynamic
//! Client Registration, RFC 9207 `iss` checked), client credentials that nobody logs in for,
//! through the real binary and through the library's `Hub` on paused time, and workload
//! identity (the JWT-bearer grant with a token file the platform rotates).

use std::time::Duration;

use mcp_readiness::client::SigningAlgorithm;
use mcp_readiness::secret::Secret;
use mcp_readiness::{
    Hub, HubOptions,
    client::{OAuthGrant, OAuthSpec},
};
use mcp_readiness::{ServerSpec, State, ToolCall, TransportSpec};
use mcp_readiness_fixtures::Scratch;
use mcp_readiness_fixtures::clock::unix_now;
use mcp_readiness_fixtures::configure::write_config;
use mcp_readiness_fixtures::exposition::renewable_expiry;
use mcp_readiness_fixtures::oauth::{
    OAuthServer, WORKLOAD, assert_private, client_credentials, jwt, pinged,
    stop_and_assert_no_token, workload_identity,
};
use mcp_readiness_fixtures::serve::Serve;
use serde_json::{Value, json};

/// How long a server takes to reach a state here.
const SETTLE: Duration = Duration::from_secs(20);

fn store_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test]
async fn a_url_only_entry_is_registered_by_one_login_reused_by_the_next_and_reads_unauthenticated_once_its_refresh_is_refused()
 {
    let options = ["--refresh-ttl", "86400", "--iss"];
    let Some((scratch, server)) = OAuthServer::with_access_ttl("oauth-dcr", "3", &options).await
    else {
        return;
    };
    let port = server.port;
    let vault = json!({ "vault": { "type": "http", "url": server.url() } });
    let config = write_config(&scratch, "mcp.json", vault, pinged());

    // One login: registered (RFC 7591), authorized (the `iss` of the response checked), stored.
    let mut printed = server.login(&scratch, &config, "first").await;
    let store = scratch.path(".mcp-readiness/oauth/vault.json");
    assert_private(&store);
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
    let issued = server.stats().await;
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
    serve.wait_state("vault", "ready", SETTLE).await;
    // Tokens of the registered client refresh themselves: ready across two lifetimes.
    let before = server.count("refreshes").await;
    let (span, every) = (Duration::from_secs(7), Duration::from_millis(250));
    serve
        .assert_ready_throughout(&["vault"], span, every, |_| {})
        .await;
    assert!(server.count("refreshes").await > before);

    // The next login reuses the registration.
    printed += &server.login(&scratch, &config, "again").await;
    let issued = server.stats().await;
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
    server.admin("/admin/revoke").await;
    serve.wait_state("vault", "unauthenticated", SETTLE).await;
    let row = serve.status_row("vault").await;
    assert!(row.contains("refused the refresh token"), "{row}");
    assert!(
        row.contains(&format!(
            "mcp-readiness oauth login --config {} --server vault",
            config.display()
        )),
        "{row}"
    );

    let tokens = server.issued().await;
    let others = [("login's output", printed.as_str())];
    let serve = stop_and_assert_no_token(serve, &tokens, &others).await;
    assert!(
        serve.stderr().contains("TRACE"),
        "RUST_LOG=trace took effect"
    );
}

#[tokio::test]
async fn client_credentials_reach_the_server_with_nobody_logging_in_renew_themselves_and_a_rotated_secret_reads_unauthenticated()
 {
    let secret = "job-s3cret-9f8e7d6c";
    let options = ["--job-secret", secret];
    let Some((scratch, server)) = OAuthServer::with_access_ttl("oauth-cc", "3", &options).await
    else {
        return;
    };
    let mut oauth = client_credentials("tokens/job.json");
    oauth["client_secret"] = json!("${JOB_SECRET}");
    let job = json!({ "job": { "type": "http", "url": server.url(), "oauth": oauth } });
    let config = write_config(&scratch, "mcp.json", job, pinged());
    let serve = Serve::start(
        &scratch,
        &config,
        &[("RUST_LOG", "trace"), ("JOB_SECRET", secret)],
    )
    .await;
    serve.wait_state("job", "ready", SETTLE).await;

    // Renewed before each 3 s expiry by the hub: ready at every scrape, the token renewable.
    let before = server.count("client_credentials").await;
    let (span, every) = (Duration::from_secs(8), Duration::from_millis(200));
    let (_, text) = serve
        .assert_ready_throughout(&["job"], span, every, |_| {})
        .await;
    let renewals = server.count("client_credentials").await - before;
    assert!(
        renewals >= 3,
        "renewed across 8 s of 3 s tokens: {renewals}"
    );
    assert!(
        renewable_expiry(&text, "job", "access_token").is_some(),
        "a client-credentials token renews itself: {text}"
    );
    assert_eq!(server.count("logins").await, 0, "nobody logged in");

    // The secret rotated away: once the token runs out, unauthenticated, naming what to rotate.
    server.admin("/admin/rotate-job-secret").await;
    serve.wait_state("job", "unauthenticated", SETTLE).await;
    let row = serve.status_row("job").await;
    assert!(row.contains("refused the client credentials"), "{row}");
    assert!(row.contains("rotate `oauth.client_secret`"), "{row}");

    let mut tokens = server.issued().await;
    tokens.push(secret.to_owned());
    let serve = stop_and_assert_no_token(serve, &tokens, &[]).await;
    assert!(
        serve.stderr().contains("TRACE"),
        "RUST_LOG=trace took effect"
    );
}

/// An unsigned JWT (the test authorization server reads its claims only) for the workload,
/// expiring `exp` (Unix seconds), numbered `jti`.
fn workload_jwt(exp: u64, jti: &str) -> String {
    jwt(&json!({ "sub": WORKLOAD, "exp": exp, "jti": jti,
                 "iss": "https://kubernetes.default.svc" }))
}

#[tokio::test]
async fn workload_identity_reaches_the_server_with_no_secret_rereads_the_rotated_token_at_each_renewal_and_reads_unauthenticated_when_refused_or_expired()
 {
    let options = ["--workload-subject", WORKLOAD];
    let Some((scratch, server)) = OAuthServer::with_access_ttl("oauth-wif", "3", &options).await
    else {
        return;
    };
    std::fs::create_dir_all(scratch.path("tokens")).unwrap();
    let token_file = scratch.path("tokens/workload.jwt");
    let stale_file = scratch.path("tokens/stale.jwt");
    let first = workload_jwt(unix_now() + 3600, "first");
    std::fs::write(&token_file, &first).unwrap();
    // A token the platform stopped rotating an hour ago.
    let stale = workload_jwt(unix_now() - 3600, "stale");
    std::fs::write(&stale_file, &stale).unwrap();
    let url = server.url();
    let servers = json!({
        "nightly": { "type": "http", "url": url,
            "oauth": workload_identity("tokens/nightly.json", "tokens/workload.jwt") },
        "stale": { "type": "http", "url": url,
            "oauth": workload_identity("tokens/stale.json", "tokens/stale.jwt") }
    });
    let config = write_config(&scratch, "mcp.json", servers, pinged());
    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "trace")]).await;
    serve.wait_state("nightly", "ready", SETTLE).await;

    // An expired token file: unauthenticated at once, naming the file and who rotates it.
    serve.wait_state("stale", "unauthenticated", SETTLE).await;
    let stale_row = serve.status_row("stale").await;
    assert!(stale_row.contains("stale.jwt"), "{stale_row}");
    assert!(stale_row.contains("expired"), "{stale_row}");
    assert!(stale_row.contains("kubelet"), "{stale_row}");

    // Renewed before each 3 s expiry, ready at every scrape; the platform rotates the file
    // meanwhile and the next renewal sends the new token.
    let before = server.count("jwt_bearer").await;
    let second = workload_jwt(unix_now() + 7200, "second");
    let (span, every) = (Duration::from_secs(8), Duration::from_millis(200));
    let mut rotated = false;
    let (_, text) = serve
        .assert_ready_throughout(&["nightly"], span, every, |left| {
            if !rotated && left < Duration::from_secs(5) {
                std::fs::write(&token_file, &second).unwrap();
                rotated = true;
            }
        })
        .await;
    let renewals = server.count("jwt_bearer").await - before;
    assert!(
        renewals >= 3,
        "renewed across 8 s of 3 s tokens: {renewals}"
    );
    let assertions = server.stats().await["assertions"].clone();
    assert_eq!(
        assertions.as_array().unwrap().last().unwrap(),
        "second",
        "the rotated token was read again at renewal: {assertions}"
    );
    assert!(
        renewable_expiry(&text, "nightly", "access_token").is_some(),
        "the access token renews itself: {text}"
    );
    let exp = renewable_expiry(&serve.metrics().await, "nightly", "workload_identity_token");
    let expected = (unix_now() + 7200) as f64;
    assert!(
        exp.is_some_and(|exp| (expected - exp).abs() < 30.0),
        "the rotated token's exp is exported: {exp:?}"
    );
    assert_eq!(server.count("logins").await, 0, "nobody logged in");

    // The authorization server stops trusting the workload: unauthenticated once the token runs
    // out, naming the file and what to check.
    server.admin("/admin/distrust-workload").await;
    serve.wait_state("nightly", "unauthenticated", SETTLE).await;
    let refused = serve.status_row("nightly").await;
    assert!(
        refused.contains("refused the workload identity token"),
        "{refused}"
    );
    assert!(refused.contains("workload.jwt"), "{refused}");

    let mut tokens = server.issued().await;
    tokens.extend([first, second, stale]);
    stop_and_assert_no_token(serve, &tokens, &[]).await;
}

#[tokio::test]
async fn client_credentials_renew_across_an_hour_of_paused_time_and_the_server_answers_at_every_step()
 {
    let secret = "job-s3cret-hour-1234";
    // 60 s tokens (in the authorization server's real time, which hardly moves here).
    let options = ["--job-secret", secret];
    let Some((scratch, server)) =
        OAuthServer::with_access_ttl("oauth-cc-hour", "60", &options).await
    else {
        return;
    };
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
            url: Secret::new(server.url()),
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
    assert_eq!(server.count("client_credentials").await, 1);

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
    let renewals = server.count("client_credentials").await - 1;
    assert!(
        (143..=145).contains(&renewals),
        "renewed every 25 s for an hour: {renewals}"
    );
    hub.shutdown().await;
}

#[tokio::test]
async fn a_login_to_a_server_that_publishes_no_oauth_metadata_fails_at_once_naming_what_it_tried() {
    let scratch = Scratch::new("oauth-none");
    let (_server, port) =
        mcp_readiness_fixtures::configure::http_fixture(&scratch, "tok-static-123456").await;
    let plain =
        json!({ "plain": { "type": "http", "url": format!("http://127.0.0.1:{port}/mcp") } });
    let config = write_config(&scratch, "mcp.json", plain, json!({}));
    let started = tokio::time::Instant::now();
    let output = tokio::process::Command::new(mcp_readiness_fixtures::cli())
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
