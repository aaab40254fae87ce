//! Bad input: a command that does not exist, a non-HTTP URL, garbage on stdout, a refused
//! connection, secrets echoed by a server, and no child outliving its hub.

use super::*;

#[tokio::test]
async fn a_command_that_does_not_exist_is_absent_with_spawn_failed_naming_the_command() {
    let spec = command("ghost", "mcp-server-that-does-not-exist", Vec::new());
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![spec], opts).unwrap();
    let error = failure(&hub, "mcp__ghost__x").await;
    assert_eq!(error.connect_result(), Some(ConnectResult::SpawnFailed));
    assert_eq!(error.state(), State::Absent);
    assert!(
        error.to_string().contains("mcp-server-that-does-not-exist"),
        "{error}"
    );
    assert_eq!(hub.state("ghost"), Some(State::Absent));
    assert_eq!(attempts(&events, ConnectResult::SpawnFailed), 1);
}

#[tokio::test]
async fn a_non_http_url_is_that_servers_problem_alone() {
    let spec = http("files", "file:///etc/passwd", None);
    let hub = Hub::new(vec![spec], options()).unwrap();
    assert_eq!(hub.state("files"), Some(State::Absent));
    let error = failure(&hub, "mcp__files__x").await;
    assert!(error.to_string().contains("`url`"), "{error}");
    hub.add_server(http("x", "ws://127.0.0.1:1/mcp", None))
        .unwrap();
    assert_eq!(hub.state("x"), Some(State::Absent));
}

#[tokio::test]
async fn a_server_that_writes_garbage_to_stdout_is_a_protocol_error_without_panic() {
    let scratch = Scratch::new("garbage");
    let (opts, events) = recording(options().connect_timeout(Duration::from_secs(2)));
    let hub = Hub::new(
        vec![stdio("noisy", &scratch, &[("FIXTURE_GARBAGE", "1")])],
        opts,
    )
    .unwrap();
    let error = refused_with(&hub, "mcp__noisy__x", ConnectResult::ProtocolError).await;
    assert!(error.to_string().contains("not JSON-RPC"), "{error}");
    assert_eq!(attempts(&events, ConnectResult::ProtocolError), 1);
    assert_all_gone(&scratch.pids()).await;
}

/// A server that answers every request of the handshake wrongly reads `absent` at once (not
/// `connecting` until the budget runs out), and its reason says what it answered, in words, as
/// the JSON it sent: never rmcp's `Debug` of it (`Some(EmptyResult(EmptyObject))`).
#[tokio::test]
async fn a_server_that_answers_the_handshake_wrongly_is_a_protocol_error_that_quotes_its_answer() {
    let scratch = Scratch::new("lying-handshake");
    let modes = [
        // Every request, `server/discover` and then `initialize`, answered `{}`.
        (
            "empty",
            "with a result that is not a handshake result (`{}`)",
        ),
        // An older server's "method not found" to `server/discover` is why `initialize`
        // followed, not the diagnosis: the answer to `initialize` is.
        (
            "legacy-empty",
            "with a result that is not a handshake result (`{}`)",
        ),
        ("wrong-id", "with the id of another request"),
    ];
    let specs = modes
        .iter()
        .map(|(mode, _)| stdio(mode, &scratch, &[("FIXTURE_HANDSHAKE_ANSWER", mode)]))
        .collect();
    let hub = Hub::new(specs, options()).unwrap();
    for (mode, answered) in modes {
        let started = Instant::now();
        let error = refused_with(
            &hub,
            &format!("mcp__{mode}__x"),
            ConnectResult::ProtocolError,
        )
        .await;
        let reason = error.to_string();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{mode}: {:?}",
            started.elapsed()
        );
        assert_eq!(error.state(), State::Absent, "{mode}: {reason}");
        assert!(
            reason.contains(&format!("it answered the handshake {answered}"))
                || reason.contains(&format!("it answered handshake request 0 {answered}")),
            "{mode}: {reason}"
        );
        assert!(
            !reason.contains("Some(")
                && !reason.contains("EmptyResult")
                && !reason.contains("Method not found"),
            "{mode}: {reason}"
        );
    }
    shut_down(&hub, &scratch).await;
}

#[tokio::test]
async fn a_refused_http_connection_is_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let hub = Hub::new(
        vec![http("down", &format!("http://127.0.0.1:{port}/mcp"), None)],
        options(),
    )
    .unwrap();
    let error = refused_with(&hub, "mcp__down__x", ConnectResult::Refused).await;
    // The root cause, from below the HTTP client's error: not its "error sending request".
    assert!(
        error
            .to_string()
            .contains("the MCP server is unreachable: connection refused"),
        "{error}"
    );
}

#[tokio::test]
async fn secrets_echoed_by_a_server_are_redacted_from_call_errors() {
    let scratch = Scratch::new("redact");
    let token = "tok-echoed-secret-42";
    let hub = Hub::new(
        vec![stdio("fx", &scratch, &[("FIXTURE_TOKEN", token)])],
        options(),
    )
    .unwrap();
    let error = hub
        .call(ToolCall::new("mcp__fx__echo_token_error"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CallErrorKind::Protocol);
    assert!(error.to_string().contains("[redacted]"), "{error}");
    assert!(!error.to_string().contains(token), "{error}");
    assert!(!error.json_rpc_error().unwrap().message.contains(token));
    hub.shutdown().await;
    assert_all_gone(&scratch.pids()).await;
}

#[tokio::test]
async fn no_stdio_child_or_grandchild_outlives_the_hub_that_started_it() {
    let scratch = Scratch::new("drop");
    let hub = Hub::new(
        vec![stdio("fx", &scratch, &[("FIXTURE_GRANDCHILD", "1")])],
        options(),
    )
    .unwrap();
    hub.call(ToolCall::new("mcp__fx__pid")).await.unwrap();
    let pids = scratch.pids();
    assert_eq!(pids.len(), 2, "child and grandchild: {pids:?}");
    assert!(pids.iter().all(|p| alive(*p)));
    drop(hub); // the last handle: no explicit shutdown
    assert_all_gone(&pids).await;
}
