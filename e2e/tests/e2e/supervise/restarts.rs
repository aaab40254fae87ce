//! The regressions the seed found: a child dying mid-read or between calls, restarts in the
//! background, one handshake for 64 concurrent calls during a reconnect, the cooldown after a
//! failed connect.

use super::*;

#[tokio::test]
async fn the_child_dies_in_the_middle_of_a_read_and_the_same_call_still_succeeds() {
    let scratch = Scratch::new("seed");
    let marker = scratch.path("crash-next-read");
    let spec = stdio(
        "imap",
        &scratch,
        &[("FIXTURE_CRASH_MARKER", &marker.to_string_lossy())],
    );
    let (opts, events) = recording(options().after_connect("imap", provision_account()));
    let hub = Hub::new(vec![spec], opts).unwrap();
    let read = || ToolCall::new("mcp__imap__list_emails").idempotent(true);

    assert_eq!(emails(&hub.call(read()).await.unwrap()), 1);
    std::fs::write(&marker, "").unwrap(); // the next read kills the child mid-request
    let recovered = hub.call(read()).await.unwrap();

    assert_eq!(
        emails(&recovered),
        1,
        "the read still succeeds, from a re-provisioned child"
    );
    assert_eq!(attempts(&events, ConnectResult::Ok), 2, "connect count");
    assert_eq!(scratch.count("add_account"), 2, "provision count");
    assert_eq!(scratch.count("crash"), 1);
    assert_eq!(hub.generation("imap"), Some(2));

    // A late close from generation 1 does not mark generation 2 down.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(hub.state("imap"), Some(State::Ready));
    assert_eq!(hub.generation("imap"), Some(2));

    shut_down(&hub, &scratch).await;
}

#[tokio::test]
async fn by_default_a_killed_child_is_restarted_in_the_background_and_never_reads_absent() {
    let scratch = Scratch::new("background");
    let (opts, events) = recording(options());
    let hub = Hub::new(vec![stdio("mail", &scratch, &[])], opts).unwrap();
    hub.connect_all();
    eventually("the first connection", WAIT, async || {
        hub.state("mail") == Some(State::Ready)
    })
    .await;
    let pid = child_pid(&hub, "mail").await;
    signal(pid, "-9");
    eventually("the restart without any call", WAIT, async || {
        hub.generation("mail") == Some(2) && hub.state("mail") == Some(State::Ready)
    })
    .await;
    assert_eq!(scratch.count("start"), 2);
    let entered: Vec<State> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            ConnectionEvent::StateChanged { to, .. } => Some(*to),
            _ => None,
        })
        .collect();
    assert_eq!(
        entered,
        [State::Ready, State::Connecting, State::Ready],
        "a drop is a `connecting` blip, never `absent`"
    );
    shut_down(&hub, &scratch).await;
}

#[tokio::test]
async fn the_child_dies_between_calls_and_the_state_flips_without_any_call() {
    let scratch = Scratch::new("between");
    let (opts, events) = recording(options().reconnect_on_drop(false));
    let hub = Hub::new(vec![stdio("mail", &scratch, &[])], opts).unwrap();
    let pid = child_pid(&hub, "mail").await;
    assert_eq!(hub.state("mail"), Some(State::Ready));

    signal(pid, "-9");
    // Nothing failed yet and the next use reconnects: `connecting`, not `absent`.
    eventually("the drop to be noticed without a call", WAIT, async || {
        hub.state("mail") == Some(State::Connecting)
    })
    .await;
    assert_eq!(scratch.count("start"), 1, "no restart before a call");
    assert!(!hub.snapshot().await.ready_tools.contains("mcp__mail__pid"));
    let reason = hub.servers()[0].reason.clone().unwrap();
    assert!(reason.contains("lost"), "{reason}");

    // The next call reconnects transparently (even a non-idempotent one: nothing was in flight).
    let again = hub
        .call(ToolCall::new("mcp__mail__echo").with_arguments(json!({"text": "hi"})))
        .await
        .unwrap();
    assert_eq!(text(&again), "hi");
    assert_eq!(attempts(&events, ConnectResult::Ok), 2);
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, ConnectionEvent::Reconnected { .. }))
    );

    shut_down(&hub, &scratch).await;
}

#[tokio::test]
async fn sixty_four_concurrent_calls_during_a_reconnect_cause_one_handshake() {
    let scratch = Scratch::new("single-flight");
    let (opts, events) = recording(options().reconnect_on_drop(false));
    let hub = Hub::new(
        vec![stdio(
            "mail",
            &scratch,
            &[("FIXTURE_STARTUP_DELAY_MS", "300")],
        )],
        opts,
    )
    .unwrap();
    let pid = child_pid(&hub, "mail").await;
    signal(pid, "-9");
    eventually("the drop", WAIT, async || {
        hub.state("mail") == Some(State::Connecting)
    })
    .await;

    let calls = (0..64).map(|i| {
        hub.call(ToolCall::new("mcp__mail__echo").with_arguments(json!({"text": i.to_string()})))
    });
    let results = futures::future::join_all(calls).await;
    assert!(
        results.iter().all(Result::is_ok),
        "{:?}",
        results.iter().find(|r| r.is_err())
    );
    assert_eq!(
        scratch.count("start"),
        2,
        "one child for the first connect, one for all 64 callers"
    );
    assert_eq!(attempts(&events, ConnectResult::Ok), 2);

    shut_down(&hub, &scratch).await;
}

#[tokio::test]
async fn a_failed_connect_makes_calls_fail_in_under_a_millisecond_during_the_cooldown() {
    let scratch = Scratch::new("cooldown");
    let log = scratch.path("log");
    let spec = command(
        "flaky",
        "sh",
        vec![
            "-c".into(),
            format!(
                "echo start $$ >> '{}'; echo 'fatal: MAIL_PASSWORD is not set' >&2; exit 1",
                log.display()
            ),
        ],
    );
    // Nothing reconnects by itself: the next call after the wait makes the next attempt.
    let (opts, events) = recording(
        options()
            .cooldown(Duration::from_secs(2))
            .reconnect_on_drop(false),
    );
    let hub = Hub::new(vec![spec], opts).unwrap();
    let call = || ToolCall::new("mcp__flaky__read");

    let first = hub.call(call()).await.unwrap_err();
    assert_eq!(first.connect_result(), Some(ConnectResult::Closed));
    assert!(
        first.to_string().contains("MAIL_PASSWORD is not set"),
        "the child's stderr explains: {first}"
    );
    // And how it ended: its exit status, not only that its pipe closed.
    assert!(
        first
            .to_string()
            .contains("ended during the MCP handshake: its process exited with status 1"),
        "{first}"
    );
    let mut took = Vec::new();
    for _ in 0..100 {
        let started = Instant::now();
        let error = hub.call(call()).await.unwrap_err();
        took.push(started.elapsed());
        assert!(matches!(
            error.kind(),
            CallErrorKind::NotConnected(NotConnected::CoolingDown { .. })
        ));
        assert!(error.to_string().contains("`flaky`"), "{error}");
    }
    took.sort();
    // The median, so a busy machine preempting one call does not fail the test.
    assert!(took[50] < Duration::from_millis(1), "median {:?}", took[50]);
    assert_eq!(
        scratch.count("start"),
        1,
        "nothing was spawned during the cooldown"
    );
    let rejections = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, ConnectionEvent::CooldownRejection { .. }))
        .count();
    assert_eq!(rejections, 100);

    // The first failed connect in a row waits 1 s (the connect backoff), not the whole cooldown.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let _ = hub.call(call()).await.unwrap_err();
    assert_eq!(scratch.count("start"), 2, "one attempt after the wait");
}

/// A 2026-07-28 connection has no session for a replaced server to end: the health ping reads the
/// tool list again, so the status never claims tools the server behind the URL stopped offering.
#[tokio::test]
async fn a_2026_server_replaced_behind_its_url_is_listed_again_within_one_ping() {
    use mcp_readiness_fixtures::process::demo_http_server;
    let scratch = Scratch::new("replaced");
    let (wiki, url) = demo_http_server(&scratch, "wiki", "127.0.0.1:0", &[]).await;
    let listen = mcp_readiness_fixtures::process::address_of(&url);
    let spec = ServerSpec::new("wiki", TransportSpec::http(url.as_str()));
    // Pings far apart, so the replacement below falls between two of them (a ping in the gap
    // would see the server down and reconnect, which needs no re-listing).
    let hub = Hub::new(
        vec![spec],
        options().health_interval(Some(Duration::from_secs(3))),
    )
    .unwrap();
    hub.connect_all();
    eventually("wiki's tool", WAIT, async || {
        hub.snapshot()
            .await
            .ready_tools
            .contains("mcp__wiki__search")
    })
    .await;
    drop(wiki);
    let (_notes, _) = demo_http_server(&scratch, "notes", &listen, &[]).await;
    eventually("the tools of the server now at the URL", WAIT, async || {
        let tools = hub.snapshot().await.ready_tools;
        tools.contains("mcp__wiki__search_notes") && !tools.contains("mcp__wiki__search")
    })
    .await;
    assert_eq!(
        hub.generation("wiki"),
        Some(1),
        "read again, not reconnected"
    );
    hub.shutdown().await;
}
