//! The grants the hub renews, with nobody at the keyboard, through the real binary against the
//! Python test authorization server (`e2e/python/oauth_server.py`): enterprise-managed
//! authorization through `serve` (the identity provider's token exchange, then the JWT-bearer
//! grant; the ID token rotated; each of the two servers refusing), and client credentials,
//! workload identity and enterprise-managed authorization through `check` and `call`.

use mcp_readiness_fixtures as common;

use std::time::Duration;

use common::http::{free_port, get, request};
use common::process::signal;
use common::run::{Run, assert_no_panic, run};
use common::serve::Serve;
use common::{Scratch, eventually};
use serde_json::{Value, json};

use crate::oauth::{assert_no_token, oauth_server_with, python, state_of, stats};

/// The subject the test identity provider knows (and the workload subject the authorization
/// server trusts).
pub(crate) const SUBJECT: &str = "alice@example.com";

/// The client the test identity provider issues ID-JAGs to.
const ENTERPRISE_CLIENT: &str = "mcp-readiness-enterprise";

/// An unsigned JWT (the test servers read claims only) with these claims.
pub(crate) fn jwt(claims: Value) -> String {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    format!(
        "{}.{}.c2lnbmF0dXJl",
        b64(r#"{"alg":"RS256","typ":"JWT"}"#),
        b64(&claims.to_string())
    )
}

/// An ID token for [`SUBJECT`] expiring at `exp`, numbered `jti`.
pub(crate) fn id_token(port: u16, exp: u64, jti: &str) -> String {
    jwt(
        json!({ "iss": format!("http://127.0.0.1:{port}/idp"), "sub": SUBJECT,
                "aud": "mcp-readiness-at-idp", "exp": exp, "jti": jti }),
    )
}

pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The `oauth` block of an enterprise-managed server of the test servers on `port`.
pub(crate) fn enterprise(port: u16, store: &str, id_token_file: &str) -> Value {
    json!({ "store": store, "grant": "enterprise_managed", "client_id": ENTERPRISE_CLIENT,
            "assertion_file": id_token_file, "scopes": ["tools"],
            "identity_provider": { "issuer": format!("http://127.0.0.1:{port}/idp"),
                                   "token_endpoint": format!("http://127.0.0.1:{port}/idp/token"),
                                   "client_id": "mcp-readiness-at-idp" } })
}

async fn row(serve: &Serve, server: &str) -> String {
    let page = get(&serve.addr, "/status").await.unwrap().ok_text();
    page.lines()
        .find(|l| l.contains(&format!(r#"data-server="{server}""#)))
        .unwrap_or_default()
        .to_owned()
}

async fn admin(port: u16, path: &str) {
    request(&format!("127.0.0.1:{port}"), "POST", path, &[], b"")
        .await
        .unwrap();
}

#[tokio::test]
async fn enterprise_managed_authorization_exchanges_the_id_token_at_the_identity_provider_renews_with_the_rotated_token_and_names_which_server_refused()
 {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("oauth-ema");
    let (port, callback) = (free_port(), free_port());
    let _server = oauth_server_with(
        &python,
        &scratch,
        port,
        callback,
        &["--access-ttl", "3", "--idp-subject", SUBJECT],
    )
    .await;
    std::fs::create_dir_all(scratch.path("tokens")).unwrap();
    let first = id_token(port, unix_now() + 3600, "first");
    std::fs::write(scratch.path("tokens/id-token"), &first).unwrap();
    // An ID token nobody refreshed: it expired an hour ago.
    let stale = id_token(port, unix_now() - 3600, "stale");
    std::fs::write(scratch.path("tokens/stale-id-token"), &stale).unwrap();
    let config = scratch.path("mcp.json");
    let url = format!("http://127.0.0.1:{port}/mcp");
    // The configuration, with `crm`'s credential store at `crm_store` (a new store is a changed
    // entry: a reload replaces that server).
    let write_config = |crm_store: &str| {
        let servers = json!({
            "mcpServers": {
                "crm": { "type": "http", "url": url,
                         "oauth": enterprise(port, crm_store, "tokens/id-token") },
                "stale": { "type": "http", "url": url,
                           "oauth": enterprise(port, "tokens/stale.json", "tokens/stale-id-token") }
            },
            "readiness": { "ping": "500ms", "ping_timeout": "2s", "cooldown": "1s" }
        });
        std::fs::write(&config, serde_json::to_string_pretty(&servers).unwrap()).unwrap();
    };
    write_config("tokens/crm.json");
    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "trace")]).await;
    let wait_for = async |server: &str, state: &'static str, text: &str| {
        eventually(
            &format!("{server} {state} with `{text}`"),
            Duration::from_secs(25),
            async || {
                let metrics = serve.metrics().await;
                let row = row(&serve, server).await;
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
    assert!(row(&serve, "stale").await.contains("expired"));

    // Both exchanges again before each 3 s expiry, ready at every scrape; the ID token rotated
    // meanwhile is the one the identity provider sees next.
    let before = stats(port).await;
    let second = id_token(port, unix_now() + 7200, "second");
    let until = tokio::time::Instant::now() + Duration::from_secs(8);
    let mut rotated = false;
    while tokio::time::Instant::now() < until {
        let text = serve.metrics().await;
        assert_eq!(
            state_of(&text, "crm"),
            Some("ready"),
            "ready throughout:\n{text}"
        );
        if !rotated && tokio::time::Instant::now() + Duration::from_secs(5) > until {
            std::fs::write(scratch.path("tokens/id-token"), &second).unwrap();
            rotated = true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let after = stats(port).await;
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
    admin(port, "/admin/idp-refuse").await;
    wait_for("crm", "unauthenticated", "the enterprise identity provider").await;
    let refused = row(&serve, "crm").await;
    // The identity provider by its address (a URL's path is redacted in every reason: paths
    // carry tokens too) and by the words that tell it from the authorization server.
    assert!(
        refused.contains(&format!("identity provider `http://127.0.0.1:{port}/")),
        "{refused}"
    );
    assert!(refused.contains("id-token"), "{refused}");

    // The identity provider accepts again, the authorization server no longer trusts it. A
    // refused grant is not retried by itself (waiting never fixes a refusal), so the operator's
    // fix is a changed entry and a reload (here a new store): the next exchange passes the
    // identity provider and its refusal names the authorization server.
    admin(port, "/admin/idp-accept").await;
    admin(port, "/admin/distrust-idp").await;
    write_config("tokens/crm-2.json");
    signal(serve.guard.pid(), "HUP");
    wait_for(
        "crm",
        "unauthenticated",
        "authorization server refused the identity assertion grant",
    )
    .await;

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

async fn cli(args: &[&str]) -> Run {
    let run = run(args, &[]).await;
    assert_no_panic(&args.join(" "), &run);
    run
}

#[tokio::test]
async fn check_and_call_reach_a_server_under_each_grant_the_hub_renews_and_say_why_one_is_refused()
{
    let Some(python) = python() else { return };
    let scratch = Scratch::new("oauth-unattended-cli");
    let (port, callback) = (free_port(), free_port());
    let workload = "system:serviceaccount:jobs:nightly";
    let _server = oauth_server_with(
        &python,
        &scratch,
        port,
        callback,
        &[
            "--access-ttl",
            "60",
            "--job-secret",
            "job-secret-value",
            "--workload-subject",
            workload,
            "--idp-subject",
            SUBJECT,
        ],
    )
    .await;
    std::fs::create_dir_all(scratch.path("tokens")).unwrap();
    let workload_token = jwt(json!({ "sub": workload, "exp": unix_now() + 3600, "jti": "w" }));
    std::fs::write(scratch.path("tokens/workload.jwt"), &workload_token).unwrap();
    let untrusted = jwt(json!({ "sub": "someone-else", "exp": unix_now() + 3600, "jti": "u" }));
    std::fs::write(scratch.path("tokens/untrusted.jwt"), &untrusted).unwrap();
    let id = id_token(port, unix_now() + 3600, "cli");
    std::fs::write(scratch.path("tokens/id-token"), &id).unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let config = scratch.path("mcp.json");
    std::fs::write(
        &config,
        serde_json::to_string_pretty(&json!({
            "mcpServers": {
                "job": { "type": "http", "url": url,
                    "oauth": { "store": "tokens/job.json", "grant": "client_credentials",
                               "client_id": "mcp-readiness-job", "client_secret": "job-secret-value",
                               "scopes": ["tools"] } },
                "workload": { "type": "http", "url": url,
                    "oauth": { "store": "tokens/workload.json", "grant": "workload_identity",
                               "assertion_file": "tokens/workload.jwt", "scopes": ["tools"] } },
                "untrusted": { "type": "http", "url": url,
                    "oauth": { "store": "tokens/untrusted.json", "grant": "workload_identity",
                               "assertion_file": "tokens/untrusted.jwt", "scopes": ["tools"] } },
                "crm": { "type": "http", "url": url,
                         "oauth": enterprise(port, "tokens/crm.json", "tokens/id-token") }
            },
            "readiness": { "budget": "10s", "poll": "100ms" }
        }))
        .unwrap(),
    )
    .unwrap();
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
    let after = stats(port).await;
    assert_eq!(after["logins"], 0, "nobody logged in");
    assert!(
        after["client_credentials"].as_u64().unwrap() >= 2,
        "{after}"
    );
    assert!(after["id_jag_grants"].as_u64().unwrap() >= 2, "{after}");

    let mut tokens: Vec<String> = after["issued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    tokens.extend([workload_token, untrusted, id, "job-secret-value".to_owned()]);
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
    let Some(python) = python() else { return };
    let scratch = Scratch::new("oauth-unattended-probe");
    let (port, callback) = (free_port(), free_port());
    let workload = "system:serviceaccount:jobs:nightly";
    let _server = oauth_server_with(
        &python,
        &scratch,
        port,
        callback,
        &[
            "--access-ttl",
            "60",
            "--job-secret",
            "job-secret-value",
            "--workload-subject",
            workload,
            "--idp-subject",
            SUBJECT,
        ],
    )
    .await;
    std::fs::create_dir_all(scratch.path("tokens")).unwrap();
    let workload_token = jwt(json!({ "sub": workload, "exp": unix_now() + 3600, "jti": "w" }));
    std::fs::write(scratch.path("tokens/workload.jwt"), &workload_token).unwrap();
    let untrusted = jwt(json!({ "sub": "someone-else", "exp": unix_now() + 3600, "jti": "u" }));
    std::fs::write(scratch.path("tokens/untrusted.jwt"), &untrusted).unwrap();
    let id = id_token(port, unix_now() + 3600, "probe");
    std::fs::write(scratch.path("tokens/id-token"), &id).unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let targets = json!([format!("http://127.0.0.1:{port}/mcp")]);
    let config = scratch.path("mcp.json");
    std::fs::write(
        &config,
        serde_json::to_string_pretty(&json!({
            "mcpServers": {},
            "readiness": { "probe": { "targets": targets, "modules": {
                "job": { "targets": targets,
                    "oauth": { "store": "tokens/job.json", "grant": "client_credentials",
                               "client_id": "mcp-readiness-job", "client_secret": "job-secret-value",
                               "scopes": ["tools"] } },
                "workload": { "targets": targets,
                    "oauth": { "store": "tokens/workload.json", "grant": "workload_identity",
                               "assertion_file": "tokens/workload.jwt", "scopes": ["tools"] } },
                "untrusted": { "targets": targets,
                    "oauth": { "store": "tokens/untrusted.json", "grant": "workload_identity",
                               "assertion_file": "tokens/untrusted.jwt", "scopes": ["tools"] } },
                "crm": { "targets": targets,
                         "oauth": enterprise(port, "tokens/crm.json", "tokens/id-token") }
            } } }
        }))
        .unwrap(),
    )
    .unwrap();
    let serve = Serve::start(&scratch, &config, &[]).await;
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
    let after = stats(port).await;
    assert_eq!(after["logins"], 0, "nobody logged in");
    assert!(
        after["client_credentials"].as_u64().unwrap() >= 1,
        "{after}"
    );
    assert!(after["id_jag_grants"].as_u64().unwrap() >= 1, "{after}");

    let mut tokens: Vec<String> = after["issued"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    tokens.extend([workload_token, untrusted, id, "job-secret-value".to_owned()]);
    let mut serve = serve;
    signal(serve.guard.pid(), "TERM");
    serve.guard.exit_within(Duration::from_secs(20)).await;
    assert_no_token("serve's stderr", &serve.stderr(), &tokens);
    assert_no_token("serve's stdout", &serve.stdout(), &tokens);
}
