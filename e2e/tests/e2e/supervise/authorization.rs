//! Authorization over real HTTP: a 401 is `unauthenticated` after one attempt, a revoked token is
//! noticed at the next call, and a server that goes away cools down.

use super::*;

#[tokio::test]
async fn a_401_is_unauthenticated_after_one_attempt_and_a_revoked_token_is_noticed_at_the_next_call()
 {
    let scratch = Scratch::new("auth");
    let token = "tok-5ecr3t-value";
    let (mut server, url) = http_fixture(&scratch, token).await;
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![http("gh", &url, Some("wrong-token-123"))], opts).unwrap();
    assert_eq!(hub.network_transport("gh"), Some("tcp"));

    let error = failure(&hub, "mcp__gh__echo").await;
    assert_eq!(
        error.kind(),
        CallErrorKind::NotConnected(NotConnected::Unauthenticated)
    );
    assert_eq!(hub.state("gh"), Some(State::Unauthenticated));
    // The reason names the system that refused and what it answered, never "401/403".
    let reason = hub.server("gh").and_then(|s| s.reason).unwrap_or_default();
    assert!(
        reason.contains("the MCP server answered HTTP 401 Unauthorized with the challenge `Bearer")
            && reason.contains("re-authorize"),
        "{reason}"
    );
    for _ in 0..5 {
        let again = failure(&hub, "mcp__gh__echo").await;
        assert_eq!(
            again.kind(),
            CallErrorKind::NotConnected(NotConnected::Unauthenticated)
        );
        assert!(!again.to_string().contains("wrong-token-123"), "{again}");
    }
    assert_eq!(
        attempts(&events, ConnectResult::Unauthorized),
        1,
        "no retries"
    );

    // Changed credentials let it try again.
    hub.replace_server(http("gh", &url, Some(token))).unwrap();
    let ok = hub
        .call(ToolCall::new("mcp__gh__echo").with_arguments(json!({"text": "in"})))
        .await
        .unwrap();
    assert_eq!(text(&ok), "in");
    assert!(hub.snapshot().await.ready_tools.contains("mcp__gh__echo"));
    // A reload with the same configuration keeps the live connection.
    hub.replace_server(http("gh", &url, Some(token))).unwrap();
    assert_eq!(hub.state("gh"), Some(State::Ready));
    assert_eq!(hub.generation("gh"), Some(1));

    // Revoked mid-session: the next call finds out.
    hub.call(ToolCall::new("mcp__gh__revoke_token"))
        .await
        .unwrap();
    let revoked = failure(&hub, "mcp__gh__echo").await;
    assert_eq!(
        revoked.kind(),
        CallErrorKind::NotConnected(NotConnected::Unauthenticated),
        "{revoked}"
    );
    assert_eq!(hub.state("gh"), Some(State::Unauthenticated));
    assert!(hub.snapshot().await.unauthenticated_servers.contains("gh"));
    for e in events.lock().unwrap().iter() {
        assert!(!format!("{e:?}").contains(token), "secret in event {e:?}");
    }
    for status in hub.servers() {
        assert!(!status.reason.unwrap_or_default().contains(token));
    }
    hub.shutdown().await;

    // No credentials configured at all: the next step says to configure some, not to update
    // headers that do not exist.
    let bare = Hub::new(vec![http("bare", &url, None)], options().build().unwrap()).unwrap();
    let error = failure(&bare, "mcp__bare__echo").await;
    assert_eq!(
        error.kind(),
        CallErrorKind::NotConnected(NotConnected::Unauthenticated)
    );
    let reason = bare.servers()[0].reason.clone().unwrap_or_default();
    assert!(
        reason.contains("it wants credentials and none are configured")
            && !reason.contains("update its headers"),
        "{reason}"
    );
    bare.shutdown().await;
    server.kill();
}

#[tokio::test]
async fn an_http_server_that_goes_away_is_noticed_at_the_next_call_and_then_cools_down() {
    let scratch = Scratch::new("http-gone");
    let (mut server, url) = http_fixture(&scratch, "tok-abcdef").await;
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![http("web", &url, Some("tok-abcdef"))], opts).unwrap();
    hub.call(ToolCall::new("mcp__web__pid")).await.unwrap();
    server.kill();

    let error = hub
        .call(ToolCall::new("mcp__web__pid").idempotent(true))
        .await
        .unwrap_err();
    // The pipe died, the one reconnect was refused, and the server now cools down.
    assert_eq!(
        error.connect_result(),
        Some(ConnectResult::Refused),
        "{error}"
    );
    assert_eq!(hub.state("web"), Some(State::Absent));
    assert_eq!(attempts(&events, ConnectResult::Refused), 1);
    let fast = failure(&hub, "mcp__web__pid").await;
    assert!(matches!(
        fast.kind(),
        CallErrorKind::NotConnected(NotConnected::CoolingDown { .. })
    ));
    assert!(!fast.to_string().contains("tok-abcdef"));
}
