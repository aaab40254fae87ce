//! The grants the hub renews, with nobody at the keyboard, through the real binary against the
//! Python test authorization server (`e2e/python/oauth_server.py`): enterprise-managed
//! authorization through `serve` (the identity provider's token exchange, then the JWT-bearer
//! grant; the ID token rotated; each of the two servers refusing), and client credentials,
//! workload identity and enterprise-managed authorization through `check` and `call`.

use std::time::Duration;

use mcp_readiness_fixtures::clock::unix_now;
use mcp_readiness_fixtures::configure::write_config;
use mcp_readiness_fixtures::eventually;
use mcp_readiness_fixtures::exposition::state_of;
use mcp_readiness_fixtures::http::get;
use mcp_readiness_fixtures::oauth::{
    OAuthServer, SUBJECT, Unattended, assert_no_token, pinged, stop_and_assert_no_token,
};
use mcp_readiness_fixtures::process::signal;
use mcp_readiness_fixtures::run::{Run, assert_no_panic, run};
use mcp_readiness_fixtures::serve::Serve;
use serde_json::{Value, json};

#[tokio::test]
async fn enterprise_managed_authorization_exchanges_the_id_token_at_the_identity_provider_renews_with_the_rotated_token_and_names_which_server_refused()
 {
    let options = ["--idp-subject", SUBJECT];
    let Some((scratch, server)) = OAuthServer::with_access_ttl("oauth-ema", "3", &options).await
    else {
        return;
    };
    std::fs::create_dir_all(scratch.path("tokens")).unwrap();
    let first = server.id_token(unix_now() + 3600, "first");
    std::fs::write(scratch.path("tokens/id-token"), &first).unwrap();
    // An ID token nobody refreshed: it expired an hour ago.
    let stale = server.id_token(unix_now() - 3600, "stale");
    std::fs::write(scratch.path("tokens/stale-id-token"), &stale).unwrap();
    let url = server.url();
    // The configuration, with `crm`'s credential store at `crm_store` (a new store is a changed
    // entry: a reload replaces that server).
    let configure = |crm_store: &str| {
        let servers = json!({
            "crm": { "type": "http", "url": url,
                     "oauth": server.enterprise(crm_store, "tokens/id-token") },
            "stale": { "type": "http", "url": url,
                       "oauth": server.enterprise("tokens/stale.json", "tokens/stale-id-token") }
        });
        write_config(&scratch, "mcp.json", servers, pinged())
    };
    let config = configure("tokens/crm.json");
    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "trace")]).await;
    let wait_for = async |server: &str, state: &'static str, text: &str| {
        eventually(
            &format!("{server} {state} with `{text}`"),
            Duration::from_secs(25),
            async || {
                let metrics = serve.metrics().await;
                let row = serve.status_row(server).await;
                (state_of(&metrics, server) == Some(state) && row.contains(text))
                    .then_some(())
                    .ok_or(row)
            },
        )
        .await;
    };
    wait_for("crm", "ready", "").await;

    // An expired ID token: unauthenticated at once, naming the file.
    wait_for("stale", "unauthenticated", "stale-id-token").await;
    assert!(serve.status_row("stale").await.contains("expired"));

    // Both exchanges again before each 3 s expiry, ready at every scrape; the ID token rotated
    // meanwhile is the one the identity provider sees next.
    let before = server.stats().await;
    let second = server.id_token(unix_now() + 7200, "second");
    let (span, every) = (Duration::from_secs(8), Duration::from_millis(200));
    let mut rotated = false;
    serve
        .assert_ready_throughout(&["crm"], span, every, |left| {
            if !rotated && left < Duration::from_secs(5) {
                std::fs::write(scratch.path("tokens/id-token"), &second).unwrap();
                rotated = true;
            }
        })
        .await;
    let after = server.stats().await;
    let count = |stats: &Value, key: &str| stats[key].as_u64().unwrap();
    let renewals = count(&after, "id_jag_grants") - count(&before, "id_jag_grants");
    assert!(
        renewals >= 3,
        "renewed across 8 s of 3 s tokens: {renewals}"
    );
    assert!(
        count(&after, "token_exchanges") - count(&before, "token_exchanges") >= renewals,
        "each renewal exchanged the ID token at the identity provider first: {after}"
    );
    assert_eq!(
        after["assertions"].as_array().unwrap().last().unwrap(),
        "second",
        "the rotated ID token was read again at renewal: {after}"
    );
    assert_eq!(after["logins"], 0, "nobody logged in");

    // The identity provider refuses: unauthenticated once the token runs out, naming it.
    server.admin("/admin/idp-refuse").await;
    wait_for("crm", "unauthenticated", "the enterprise identity provider").await;
    let refused = serve.status_row("crm").await;
    // The identity provider by its address (a URL's path is redacted in every reason: paths
    // carry tokens too) and by the words that tell it from the authorization server.
    assert!(
        refused.contains(&format!("identity provider `http://{}/", server.addr())),
        "{refused}"
    );
    assert!(refused.contains("id-token"), "{refused}");

    // The identity provider accepts again, the authorization server no longer trusts it. A
    // refused grant is not retried by itself (waiting never fixes a refusal), so the operator's
    // fix is a changed entry and a reload (here a new store): the next exchange passes the
    // identity provider and its refusal names the authorization server.
    server.admin("/admin/idp-accept").await;
    server.admin("/admin/distrust-idp").await;
    configure("tokens/crm-2.json");
    signal(serve.guard.pid(), "HUP");
    wait_for(
        "crm",
        "unauthenticated",
        "authorization server refused the identity assertion grant",
    )
    .await;

    let mut tokens = server.issued().await;
    tokens.extend([first, second, stale]);
    stop_and_assert_no_token(serve, &tokens, &[]).await;
}

async fn cli(args: &[&str]) -> Run {
    let run = run(args, &[]).await;
    assert_no_panic(&args.join(" "), &run);
    run
}

#[tokio::test]
async fn check_and_call_reach_a_server_under_each_grant_the_hub_renews_and_say_why_one_is_refused()
{
    let Some(grants) =
        Unattended::for_test("oauth-unattended-cli", "cli", &["--access-ttl", "60"]).await
    else {
        return;
    };
    let url = grants.server.url();
    let servers = grants.entries(|oauth| json!({ "type": "http", "url": url, "oauth": oauth }));
    let readiness = json!({ "budget": "10s", "poll": "100ms" });
    let config = write_config(&grants.scratch, "mcp.json", servers, readiness);
    let config = config.to_str().unwrap();

    for server in ["job", "workload", "crm"] {
        let tool = format!("mcp__{server}__echo");
        let called = cli(&[
            "call",
            "--config",
            config,
            &tool,
            "--args",
            r#"{"text": "no human"}"#,
            "--json",
        ])
        .await;
        assert_eq!(
            called.code,
            Some(0),
            "{server}: {}\n{}",
            called.stdout,
            called.stderr
        );
        assert!(
            called.stdout.contains("no human"),
            "{server}: {}",
            called.stdout
        );
    }
    let refused = cli(&[
        "call",
        "--config",
        config,
        "mcp__untrusted__echo",
        "--args",
        r#"{"text": "x"}"#,
    ])
    .await;
    assert_eq!(
        refused.code,
        Some(1),
        "{}\n{}",
        refused.stdout,
        refused.stderr
    );
    let said = format!("{}{}", refused.stdout, refused.stderr);
    assert!(said.contains("unauthenticated"), "{said}");
    assert!(
        said.contains("refused the workload identity token"),
        "{said}"
    );
    assert!(said.contains("untrusted.jwt"), "{said}");

    let checked = cli(&["check", "--config", config, "--json"]).await;
    let record: Value = serde_json::from_str(&checked.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", checked.stdout, checked.stderr));
    assert_eq!(
        record["blocked_by_auth"],
        json!(["untrusted"]),
        "only the untrusted workload is blocked: {record}"
    );
    assert_eq!(checked.code, Some(1), "one server is not ready: {record}");
    let after = grants.server.stats().await;
    assert_eq!(after["logins"], 0, "nobody logged in");
    assert!(
        after["client_credentials"].as_u64().unwrap() >= 2,
        "{after}"
    );
    assert!(after["id_jag_grants"].as_u64().unwrap() >= 2, "{after}");

    let tokens = grants.tokens().await;
    assert_no_token("call's output", &said, &tokens);
    assert_no_token(
        "check's output",
        &format!("{}{}", checked.stdout, checked.stderr),
        &tokens,
    );
}

#[tokio::test]
async fn probe_modules_reach_a_server_under_each_grant_the_hub_renews_and_an_untrusted_one_reads_unauthenticated()
 {
    let Some(grants) =
        Unattended::for_test("oauth-unattended-probe", "probe", &["--access-ttl", "60"]).await
    else {
        return;
    };
    let url = grants.server.url();
    let targets = json!([url]);
    let modules = grants.entries(|oauth| json!({ "targets": targets, "oauth": oauth }));
    let readiness = json!({ "probe": { "targets": targets, "modules": modules } });
    let config = write_config(&grants.scratch, "mcp.json", json!({}), readiness);
    let scratch = &grants.scratch;
    let serve = Serve::start(scratch, &config, &[]).await;
    let target: String = url
        .bytes()
        .map(|b| match b {
            b':' => "%3A".to_owned(),
            b'/' => "%2F".to_owned(),
            b => (b as char).to_string(),
        })
        .collect();
    let probe = async |module: &str| {
        get(
            &serve.addr,
            &format!("/probe?target={target}&module={module}&server={module}"),
        )
        .await
        .unwrap()
        .ok_text()
    };
    for module in ["job", "workload", "crm"] {
        let text = probe(module).await;
        assert!(
            text.lines().any(|l| l == "mcp_readiness_probe_success 1"),
            "{module}: {text}"
        );
        assert_eq!(state_of(&text, module), Some("ready"), "{module}: {text}");
    }
    let text = probe("untrusted").await;
    assert!(
        text.lines().any(|l| l == "mcp_readiness_probe_success 0"),
        "{text}"
    );
    assert_eq!(
        state_of(&text, "untrusted"),
        Some("unauthenticated"),
        "{text}"
    );
    let after = grants.server.stats().await;
    assert_eq!(after["logins"], 0, "nobody logged in");
    assert!(
        after["client_credentials"].as_u64().unwrap() >= 1,
        "{after}"
    );
    assert!(after["id_jag_grants"].as_u64().unwrap() >= 1, "{after}");

    let tokens = grants.tokens().await;
    stop_and_assert_no_token(serve, &tokens, &[]).await;
}
