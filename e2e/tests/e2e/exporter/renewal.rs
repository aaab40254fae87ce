//! The renewal during the pre-flight, as a real process against the real test authorization
//! server (`e2e/python/oauth_server.py`, the MCP Python SDK's): with the next run known, an
//! access token the hub renews itself (here by its refresh token) that would expire before it is
//! renewed now, and a refresh token the authorization server revoked is found now, while the
//! access token still works: the server reads `unauthenticated` with the reason and the run
//! exits 1, as for any required step that is not ready.

use super::*;

use mcp_readiness_fixtures::clock::unix_now;
use mcp_readiness_fixtures::oauth::OAuthServer;

/// The access token's expiry (Unix seconds) the credential store holds.
fn stored_expiry(store: &Path) -> u64 {
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(store).unwrap()).unwrap();
    stored["token_received_at"].as_u64().unwrap()
        + stored["token_response"]["expires_in"].as_u64().unwrap()
}

#[tokio::test]
async fn check_next_run_in_6h_renews_a_refreshable_token_expiring_in_2h_and_a_revoked_refresh_token_reads_unauthenticated_now()
 {
    let options = ["--access-ttl", "7200", "--refresh-ttl", "86400"];
    let Some((scratch, server)) = OAuthServer::for_test("forecast-renewal", &options).await else {
        return;
    };
    let config = write_config(
        &scratch,
        "mcp.json",
        json!({
            "vault": {
                "type": "http",
                "url": server.url(),
                "oauth": {
                    "store": "tokens/vault.json",
                    "client_id": "mcp-readiness-test",
                    "scopes": ["tools"]
                }
            }
        }),
        json!({}),
    );
    server.login(&scratch, &config, "renewal").await;
    let store = scratch.path("tokens/vault.json");
    let first_expiry = stored_expiry(&store);
    assert!(first_expiry <= unix_now() + 2 * 3600, "the token lasts 2 h");
    let first_token = std::fs::read_to_string(&store).unwrap();
    let refreshes = || server.count("refreshes");
    assert_eq!(refreshes().await, 0);

    // The next run in 1 h: the token lasts until then; nothing is renewed.
    let within = check(&config, &["--json", "--next-run-in", "1h"]).await;
    assert_eq!(within.code, Some(0), "{}", within.stderr);
    let record: Value = serde_json::from_str(&within.stdout).unwrap();
    assert_eq!(record["renewed_before_next_run"], json!({}), "{record}");
    assert_eq!(refreshes().await, 0, "no renewal for a token that lasts");

    // The next run in 6 h: the token (2 h) would not last; it is renewed now, exit 0, and the
    // record shows the new token's expiry (the one the authorization server just issued).
    let renewed = check(&config, &["--json", "--next-run-in", "6h"]).await;
    assert_eq!(renewed.code, Some(0), "{}", renewed.stderr);
    let record: Value = serde_json::from_str(&renewed.stdout).unwrap();
    assert_eq!(refreshes().await, 1, "renewed once during the pre-flight");
    let issued = server.stats().await["last_access_expires_at"]
        .as_u64()
        .unwrap();
    let shown =
        humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(issued))
            .to_string();
    let in_record = record["renewed_before_next_run"]["vault"]
        .as_str()
        .unwrap_or_else(|| panic!("no renewal in the record: {record}"));
    // The hub counts the lifetime from when it received the token: the same second, or the next.
    let recorded = humantime::parse_rfc3339(in_record).unwrap();
    let recorded = recorded
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        (issued..=issued + 2).contains(&recorded),
        "record {in_record}, issued {shown}"
    );
    assert!(recorded >= first_expiry, "a new expiry: {in_record}");
    assert_eq!(
        stored_expiry(&store),
        recorded,
        "the store holds the new token"
    );
    assert_ne!(std::fs::read_to_string(&store).unwrap(), first_token);
    // The refresh token lasts a day: nothing that cannot renew itself expires before the run.
    assert_eq!(record["expiring_before_next_run"], json!([]), "{record}");
    assert_eq!(record["blocked_by_auth"], json!([]), "{record}");

    // The authorization server revokes the refresh tokens; the access token keeps working.
    let revoked = server.admin("/admin/revoke-refresh").await;
    assert_eq!(revoked.status, 200, "{}", revoked.head);

    // Without the next run, nothing is renewed: the server is ready now, exit 0.
    let now_only = check(&config, &["--json"]).await;
    assert_eq!(now_only.code, Some(0), "{}", now_only.stderr);
    assert_eq!(refreshes().await, 1);

    // With it, the renewal is refused now: unauthenticated with the reason, exit 1.
    let found = check(&config, &["--next-run-in", "6h"]).await;
    assert_eq!(found.code, Some(1), "{}\n{}", found.stdout, found.stderr);
    let rows = table_rows(&found.stdout);
    assert_eq!(rows["vault"][1], "unauthenticated", "{}", found.stdout);
    for part in [
        "renewing its access token ahead of the next run failed",
        "refused the refresh token (invalid_grant",
        "re-authorize",
    ] {
        assert!(found.stdout.contains(part), "`{part}`:\n{}", found.stdout);
    }
    for wrong in ["rmcp::", "AuthError", "TokenRefreshRejected"] {
        assert!(
            !found.stdout.contains(wrong),
            "`{wrong}`:\n{}",
            found.stdout
        );
    }
    let record_run = check(&config, &["--json", "--next-run-in", "6h"]).await;
    assert_eq!(record_run.code, Some(1), "{}", record_run.stderr);
    let record: Value = serde_json::from_str(&record_run.stdout).unwrap();
    assert_eq!(record["blocked_by_auth"], json!(["vault"]), "{record}");
    assert_eq!(record["renewed_before_next_run"], json!({}), "{record}");

    // No token in any output.
    let issued = server.issued().await;
    for run in [&within, &renewed, &now_only, &found, &record_run] {
        for token in &issued {
            assert!(
                !run.stdout.contains(token) && !run.stderr.contains(token),
                "a token in check's output"
            );
        }
    }
}
