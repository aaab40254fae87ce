//! OAuth against a real authorization server on this machine: the official MCP Python SDK's
//! auth server pieces (`e2e/python/oauth_server.py`, short-lived access tokens, rotating
//! refresh tokens) protecting a Python SDK MCP server, driven through the real binary
//! (`oauth login`, `serve`). Also the expiry of a static bearer JWT.

use std::time::Duration;

use mcp_readiness_fixtures::configure::write_config;
use mcp_readiness_fixtures::eventually;
use mcp_readiness_fixtures::exposition::{renewable_expiry, sample};
use mcp_readiness_fixtures::http::get;
use mcp_readiness_fixtures::oauth::{
    OAuthServer, assert_no_token, assert_private, jwt, pinged, stop_and_assert_no_token,
};
use mcp_readiness_fixtures::serve::Serve;
use serde_json::json;

/// The options of the server most tests here use: 3 s access tokens, refresh tokens for a day.
const SHORT_ACCESS: [&str; 4] = ["--access-ttl", "3", "--refresh-ttl", "86400"];

/// The `oauth` block of the pre-registered test client, its store at `tokens/vault.json`.
fn vault_oauth() -> serde_json::Value {
    json!({ "store": "tokens/vault.json", "client_id": "mcp-readiness-test", "scopes": ["tools"] })
}

#[tokio::test]
async fn an_oauth_server_stays_ready_across_token_expiry_and_a_refused_refresh_reads_unauthenticated_until_login()
 {
    let Some((scratch, server)) = OAuthServer::for_test("oauth", &SHORT_ACCESS).await else {
        return;
    };
    let jwt_exp = 1_893_456_000; // 2030-01-01
    let bearer = jwt(&json!({ "sub": "svc-jwt-subject-77", "exp": jwt_exp }));
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({
            "vault": { "type": "http", "url": server.url(), "oauth": vault_oauth() },
            "jwt": {
                "type": "http",
                "url": server.url(),
                "headers": { "Authorization": format!("Bearer {bearer}") }
            }
        }),
        pinged(),
    );

    // Authorize: the tokens land in the store, readable by this user only.
    let mut printed = server.login(&scratch, &config, "first").await;
    assert_private(&scratch.path("tokens/vault.json"));
    assert_eq!(server.count("logins").await, 1);

    let (otlp, mut exports) = mcp_readiness_fixtures::otlp::start_http_receiver().await;
    let traces = format!("http://{otlp}/v1/traces");
    let env = [
        ("RUST_LOG", "debug"),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
    ];
    let serve = Serve::start(&scratch, &config, &env).await;
    serve
        .wait_state("vault", "ready", Duration::from_secs(20))
        .await;

    // Three access-token lifetimes: refreshed every time, ready at every scrape.
    let refreshes_before = server.count("refreshes").await;
    let (scrapes, metrics) = serve
        .assert_ready_throughout(
            &["vault"],
            Duration::from_secs(9),
            Duration::from_millis(200),
            |_| {},
        )
        .await;
    let refreshes = server.count("refreshes").await - refreshes_before;
    assert!(
        refreshes >= 2,
        "the access token (3 s) was refreshed across 9 s: {refreshes}"
    );
    eprintln!("{scrapes} scrapes ready across {refreshes} refreshes");

    // The gauge says what the authorization server said.
    let expiry = "mcp_readiness_credential_expiry_timestamp_seconds";
    eventually(
        "the gauge matching the last token issued",
        Duration::from_secs(10),
        async || {
            let text = serve.metrics().await;
            let issued = server.stats().await;
            let access = renewable_expiry(&text, "vault", "access_token");
            let refresh = sample(
                &text,
                expiry,
                &[
                    r#"server="vault""#,
                    r#"credential="refresh_token""#,
                    r#"renewable="false""#,
                ],
            );
            let want_access = issued["last_access_expires_at"].as_f64().unwrap();
            let want_refresh = issued["last_refresh_expires_at"].as_f64().unwrap();
            match (access, refresh) {
                (Some(a), Some(r))
                    if (a - want_access).abs() <= 1.0 && (r - want_refresh).abs() <= 1.0 =>
                {
                    Ok(())
                }
                other => Err(format!("{other:?} vs {want_access} / {want_refresh}")),
            }
        },
    )
    .await;
    assert_eq!(
        sample(
            &metrics,
            expiry,
            &[
                r#"server="jwt""#,
                r#"credential="bearer_token""#,
                r#"renewable="false""#
            ]
        ),
        Some(jwt_exp as f64),
        "a bearer JWT's exp is exported"
    );
    let page = get(&serve.addr, "/status").await.unwrap().ok_text();
    assert!(
        page.contains(r#"data-credential="refresh_token" data-renewable="false""#),
        "{page}"
    );
    assert!(
        page.contains(r#"data-credential="bearer_token""#)
            && page.contains("2030-01-01 00:00:00 UTC"),
        "{page}"
    );

    // Revoked: the next refresh is refused, and the reason says what to run.
    server.admin("/admin/revoke").await;
    let limit = Duration::from_secs(15);
    serve.wait_state("vault", "unauthenticated", limit).await;
    let row = serve.status_row("vault").await;
    assert!(
        row.contains("refused the refresh token"),
        "the reason says the refresh token was refused: {row}"
    );
    assert!(
        row.contains(&format!(
            "mcp-readiness oauth login --config {} --server vault",
            config.display()
        )),
        "the reason names the command to run: {row}"
    );

    // Re-authorized: the running exporter picks the new tokens up by itself.
    printed += &server.login(&scratch, &config, "again").await;
    serve
        .wait_state("vault", "ready", Duration::from_secs(20))
        .await;

    // No token, code or JWT anywhere a human or a scraper looks.
    let mut tokens = server.issued().await;
    assert!(tokens.len() >= 6);
    tokens.push(bearer.clone());
    tokens.push(bearer.split('.').nth(1).unwrap().to_owned());
    let others = [("login's output", printed.as_str())];
    let serve = stop_and_assert_no_token(serve, &tokens, &others).await;
    assert!(
        serve.stderr().contains("DEBUG"),
        "RUST_LOG=debug took effect"
    );
    let mut spans = String::new();
    while let Ok(export) = exports.try_recv() {
        spans += &format!("{export:?}");
    }
    assert!(
        spans.contains("initialize"),
        "serve exported its spans over OTLP"
    );
    assert_no_token("exported spans", &spans, &tokens);
}

/// `check` of `config` with a short budget; returns its stdout (the table and the hand-off note).
async fn check_output(config: &std::path::Path) -> String {
    let run = mcp_readiness_fixtures::run::run(
        &[
            "check",
            "--config",
            config.to_str().unwrap(),
            "--budget",
            "5s",
            "--poll",
            "250ms",
        ],
        &[("RUST_LOG", "off")],
    )
    .await;
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    run.stdout
}

/// The `vault` row of `check`'s table reads `unauthenticated`, and the output names `fix`, never
/// the wrong system or a Rust type.
fn assert_unauthenticated_with(output: &str, fix: &[&str]) {
    let row = output
        .lines()
        .find(|l| l.starts_with("vault"))
        .unwrap_or_else(|| panic!("no row for `vault`:\n{output}"));
    assert!(row.contains("unauthenticated"), "{output}");
    for part in fix {
        assert!(output.contains(part), "`{part}` missing:\n{output}");
    }
    for wrong in ["MCP streamable-HTTP endpoint", "rmcp::", "Worker<"] {
        assert!(!output.contains(wrong), "`{wrong}` in:\n{output}");
    }
}

#[tokio::test]
async fn a_credential_store_that_is_missing_open_to_others_or_not_json_reads_unauthenticated_with_its_own_fix()
 {
    let Some((scratch, server)) = OAuthServer::for_test("oauth-store", &SHORT_ACCESS).await else {
        return;
    };
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({ "vault": { "type": "http", "url": server.url(), "oauth": vault_oauth() } }),
        json!({}),
    );
    let store = scratch.path("tokens/vault.json");

    // Missing: nothing to send; the server's 401 and the store say what to run.
    let missing = check_output(&config).await;
    assert_unauthenticated_with(&missing, &["holds no tokens", "oauth login"]);

    // Open to other users: refused before use, with the chmod to run.
    server.login(&scratch, &config, "store").await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o644)).unwrap();
        let open = check_output(&config).await;
        assert_unauthenticated_with(&open, &["is open to other users (mode 0644)", "chmod 600"]);
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    // Not JSON: the line and column, never the content.
    std::fs::write(&store, "{\n  \"access_token\": oops").unwrap();
    let broken = check_output(&config).await;
    assert_unauthenticated_with(&broken, &["is not a credential store", "line 2 column"]);
    assert!(!broken.contains("oops"), "{broken}");
}
