//! DPoP (RFC 9449) through the real binary, against the Python test servers
//! (`e2e/python/oauth_server.py --dpop`, which verify every proof's signature, `htm`, `htu`,
//! `iat`, `jti`, `ath` and the key the token is bound to, and want their nonces): `serve` reaches
//! them under client credentials, workload identity and enterprise-managed authorization with
//! DPoP-bound tokens; a replayed proof, a proof by another key and the bound token sent as a
//! bearer token are refused; `oauth login` binds its tokens to a new key each time, refreshed
//! with proofs; no proof, key or token shows anywhere.

use std::time::Duration;

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use mcp_readiness_fixtures::configure::write_config;
use mcp_readiness_fixtures::eventually;
use mcp_readiness_fixtures::http::request;
use mcp_readiness_fixtures::oauth::{
    OAuthServer, Unattended, assert_no_token, assert_private, client_credentials, pinged,
    stop_and_assert_no_token,
};
use mcp_readiness_fixtures::serve::Serve;
use serde_json::{Value, json};

/// A proof for `POST url` with `nonce` and the hash of `token`, signed by a new key (not the
/// key the token is bound to).
fn proof_by_another_key(url: &str, nonce: &str, token: &str) -> String {
    let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
    let point = pair.public_key().as_ref();
    let header = json!({ "typ": "dpop+jwt", "alg": "ES256",
        "jwk": { "kty": "EC", "crv": "P-256", "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..]) } });
    let now = mcp_readiness_fixtures::clock::unix_now();
    let ath = B64.encode(aws_lc_rs::digest::digest(
        &aws_lc_rs::digest::SHA256,
        token.as_bytes(),
    ));
    let claims = json!({ "jti": format!("test-{now}"), "htm": "POST", "htu": url, "iat": now,
                         "nonce": nonce, "ath": ath });
    let input = format!(
        "{}.{}",
        B64.encode(header.to_string()),
        B64.encode(claims.to_string())
    );
    let signature = pair
        .sign(&aws_lc_rs::rand::SystemRandom::new(), input.as_bytes())
        .unwrap();
    format!("{input}.{}", B64.encode(signature.as_ref()))
}

/// The nonce a proof carries.
fn nonce_of(proof: &str) -> String {
    let claims = proof.split('.').nth(1).unwrap();
    let claims: Value = serde_json::from_slice(&B64.decode(claims).unwrap()).unwrap();
    claims["nonce"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn dpop_bound_tokens_of_each_grant_the_hub_renews_reach_the_server_through_serve_a_replayed_or_foreign_proof_is_refused_and_nothing_leaks()
 {
    let options = ["--access-ttl", "3", "--dpop"];
    let Some(grants) = Unattended::for_test("oauth-dpop", "dpop", &options).await else {
        return;
    };
    let (scratch, server) = (&grants.scratch, &grants.server);
    let url = server.url();
    // `job`, `workload` and `crm` take DPoP where the authorization server offers it (its
    // metadata does); `strict` asks for it.
    let entry = |oauth: &Value| json!({ "type": "http", "url": url, "oauth": oauth });
    let mut servers = grants.entries(entry);
    servers.as_object_mut().unwrap().remove("untrusted");
    let mut strict = client_credentials("tokens/strict.json");
    strict["dpop"] = true.into();
    servers["strict"] = entry(&strict);
    let config = write_config(scratch, "mcp.json", servers, pinged());
    // Its spans go to an OTLP sink too: a proof, key or token in any span attribute shows there.
    let (otlp, spans) = crate::secrets::otlp_sink().await;
    let traces = format!("{otlp}/v1/traces");
    let env = [
        ("RUST_LOG", "trace"),
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", traces.as_str()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
    ];
    let serve = Serve::start(scratch, &config, &env).await;
    const SERVERS: [&str; 4] = ["job", "strict", "workload", "crm"];
    for name in SERVERS {
        serve
            .wait_state(name, "ready", Duration::from_secs(25))
            .await;
    }
    // Renewed across 3 s tokens with new proofs, ready at every scrape.
    let (span, every) = (Duration::from_secs(7), Duration::from_millis(250));
    serve
        .assert_ready_throughout(&SERVERS, span, every, |_| {})
        .await;
    let after = server.stats().await;
    let dpop = &after["dpop"];
    let count = |key: &str| dpop[key].as_u64().unwrap();
    assert!(
        count("token_requests") >= 8,
        "DPoP token requests, each grant renewed: {dpop}"
    );
    assert!(count("as_nonce_challenges") >= 1, "{dpop}");
    assert!(count("rs_nonce_challenges") >= 1, "{dpop}");
    assert!(count("requests") >= 4, "MCP requests with proofs: {dpop}");
    assert_eq!(dpop["refused"], json!([]), "no proof of the client refused");
    assert!(
        after["jwt_bearer"].as_u64().unwrap() >= 4,
        "workload identity and enterprise-managed tokens: {after}"
    );
    assert_eq!(
        after["client_credentials"].as_u64().unwrap() + after["jwt_bearer"].as_u64().unwrap(),
        count("token_requests"),
        "every token issued had a valid proof"
    );

    // The key is in each store, mode 0600.
    let mut keys = Vec::new();
    for name in SERVERS {
        let path = scratch.path(&format!("tokens/{name}.json"));
        keys.push(key_of(&path));
        assert_private(&path);
    }
    let mut distinct = keys.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), keys.len(), "a key per credential store");

    // A proof seen on the wire, replayed with its token: refused (its jti was seen).
    let (last, token) = {
        let pair = dpop["proofs"].as_array().unwrap().last().unwrap();
        (
            pair[0].as_str().unwrap().to_owned(),
            pair[1].as_str().unwrap().to_owned(),
        )
    };
    let mut proofs: Vec<String> = dpop["proofs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| pair[0].as_str().unwrap().to_owned())
        .collect();
    proofs.extend(
        dpop["token_proofs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned()),
    );
    let addr = server.addr();
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let post = async |headers: &[(&str, &str)]| {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        request(&addr, "POST", "/mcp", &all, ping).await.unwrap()
    };
    let scheme = format!("DPoP {token}");
    let replayed = post(&[("Authorization", &scheme), ("DPoP", &last)]).await;
    assert_eq!(replayed.status, 401, "a replayed proof: {}", replayed.head);
    // A proof by another key than the token's: refused.
    let foreign = proof_by_another_key(&url, &nonce_of(&last), &token);
    let refused = post(&[("Authorization", &scheme), ("DPoP", &foreign)]).await;
    assert_eq!(refused.status, 401, "another key: {}", refused.head);
    // The bound token as a bearer token: refused.
    let bearer = format!("Bearer {token}");
    let refused = post(&[("Authorization", &bearer)]).await;
    assert_eq!(refused.status, 401, "bearer: {}", refused.head);
    let reasons = server.stats().await["dpop"]["refused"].to_string();
    for why in ["replayed", "cnf.jkt", "bearer"] {
        assert!(reasons.contains(why), "{why} refused: {reasons}");
    }

    // No proof, key or token in /metrics, the status pages, stdout, stderr at trace or the spans.
    let mut secrets = mcp_readiness_fixtures::oauth::issued(&after);
    secrets.extend(proofs);
    secrets.extend(keys);
    secrets.extend(grants.secrets.iter().cloned());
    let serve = stop_and_assert_no_token(serve, &secrets, &[]).await;
    assert!(serve.stderr().contains("TRACE"), "serve logged at trace");
    let exported = spans.lock().unwrap().clone();
    assert!(!exported.is_empty(), "spans were exported over OTLP");
    assert_no_token(
        "the spans exported over OTLP",
        &String::from_utf8_lossy(&exported),
        &secrets,
    );
}

/// The DPoP key a store keeps.
fn key_of(store: &std::path::Path) -> String {
    let file: Value = serde_json::from_str(&std::fs::read_to_string(store).unwrap()).unwrap();
    file["dpop_key"]
        .as_str()
        .expect("a DPoP key in the store")
        .to_owned()
}

#[tokio::test]
async fn an_oauth_login_gets_a_dpop_bound_token_refreshed_with_proofs_and_the_next_login_rotates_the_key()
 {
    let options = ["--refresh-ttl", "86400", "--dpop"];
    let Some((scratch, server)) =
        OAuthServer::with_access_ttl("oauth-dpop-login", "3", &options).await
    else {
        return;
    };
    let vault = json!({ "vault": { "type": "http", "url": server.url(),
        "oauth": { "store": "tokens/vault.json", "client_id": "mcp-readiness-test",
                   "scopes": ["tools"] } } });
    let config = write_config(&scratch, "mcp.json", vault, pinged());

    // The login's code exchange carries a proof (with the authorization server's nonce, after
    // its challenge); the token is bound to a key kept in the store.
    let mut printed = server.login(&scratch, &config, "first").await;
    let store = scratch.path("tokens/vault.json");
    let first_key = key_of(&store);
    let dpop = server.stats().await["dpop"].clone();
    assert_eq!(dpop["token_requests"], 1, "{dpop}");
    assert!(dpop["as_nonce_challenges"].as_u64().unwrap() >= 1, "{dpop}");

    // `serve` uses it with proofs, and refreshes it with proofs, ready at every scrape.
    let serve = Serve::start(&scratch, &config, &[("RUST_LOG", "trace")]).await;
    serve
        .wait_state("vault", "ready", Duration::from_secs(20))
        .await;
    let (span, every) = (Duration::from_secs(7), Duration::from_millis(250));
    serve
        .assert_ready_throughout(&["vault"], span, every, |_| {})
        .await;
    let after = server.stats().await;
    assert!(
        after["refreshes"].as_u64().unwrap() >= 2,
        "refreshed across 7 s of 3 s tokens: {after}"
    );
    assert!(
        after["dpop"]["token_requests"].as_u64().unwrap() >= 3,
        "{after}"
    );
    assert!(after["dpop"]["requests"].as_u64().unwrap() >= 2, "{after}");
    assert_eq!(after["dpop"]["refused"], json!([]), "{after}");
    assert_eq!(key_of(&store), first_key, "a refresh keeps the key");

    // The next login rotates the key; `serve` follows the store to the new tokens and key.
    printed += &server.login(&scratch, &config, "second").await;
    let second_key = key_of(&store);
    assert_ne!(second_key, first_key, "a login rotates the key");
    let requests = server.stats().await["dpop"]["requests"].as_u64().unwrap();
    eventually(
        "MCP requests with the new key",
        Duration::from_secs(20),
        async || {
            let dpop = server.stats().await["dpop"].clone();
            (dpop["requests"].as_u64().unwrap() > requests + 2)
                .then_some(())
                .ok_or(dpop)
        },
    )
    .await;
    serve
        .wait_state("vault", "ready", Duration::from_secs(20))
        .await;
    let end = server.stats().await;
    assert_eq!(end["dpop"]["refused"], json!([]), "{end}");

    let mut secrets = mcp_readiness_fixtures::oauth::issued(&end);
    for list in ["proofs", "token_proofs"] {
        secrets.extend(
            end["dpop"][list]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().or_else(|| p[0].as_str()).unwrap().to_owned()),
        );
    }
    secrets.extend([first_key, second_key]);
    let others = [("the logins' output at trace", printed.as_str())];
    stop_and_assert_no_token(serve, &secrets, &others).await;
}
