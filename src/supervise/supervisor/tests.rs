//! Paused-time tests of the state machine edges, with a scripted [`Connector`].

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::client::*;
use crate::resolve::Inventory;
use crate::state::State;
use crate::supervise::test_support::*;
use crate::supervise::*;

#[tokio::test(start_paused = true)]
async fn calls_during_the_cooldown_fail_fast_and_one_attempt_follows_it() {
    let (script, hub, first) = first_connect_failing(ConnectResult::Refused).await;
    assert_eq!(
        first.kind(),
        CallErrorKind::NotConnected(NotConnected::Absent)
    );
    assert_eq!(first.connect_result(), Some(ConnectResult::Refused));
    assert_eq!(connects(&script), 1);

    // The first failure waits 1 s (the connect backoff), not the whole cooldown; a call's own error
    // says how long is left, at the moment it is made.
    assert!(
        first.to_string().contains("until the next attempt in 1s"),
        "{first}"
    );
    tokio::time::advance(Duration::from_millis(999)).await;
    let started = Instant::now();
    let during = hub.call(read()).await.unwrap_err();
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "a cooling-down server fails at once"
    );
    assert_eq!(
        during.kind(),
        CallErrorKind::NotConnected(NotConnected::CoolingDown {
            left: Duration::from_millis(1)
        })
    );
    assert!(
        during.to_string().contains("`mail`") && during.to_string().contains("refused"),
        "{during}"
    );
    assert_eq!(connects(&script), 1, "no attempt during the cooldown");

    tokio::time::advance(Duration::from_millis(1)).await;
    hub.call(read()).await.unwrap();
    assert_eq!(
        connects(&script),
        2,
        "exactly one attempt after the cooldown"
    );
    assert_eq!(hub.state("mail"), Some(State::Ready));
}

#[tokio::test(start_paused = true)]
async fn failed_connects_back_off_from_one_second_doubling_up_to_the_cooldown() {
    let script = Script::starting_with(std::iter::repeat_n(
        ConnectStep::Fail(ConnectResult::Refused),
        6,
    ));
    let (events, sink) = recorder();
    let hub = hub_with(
        ScriptedConnector::new(&script),
        quiet().cooldown(Duration::from_secs(10)).event_sink(sink),
    );
    hub.connect_all();
    settle().await;
    assert_eq!(connects(&script), 1);
    assert_eq!(hub.state("mail"), Some(State::Absent));
    assert!(
        reason(&hub).ends_with("after a wait of 1s"),
        "{}",
        reason(&hub)
    );
    let due = hub.servers()[0].next_attempt_at.expect("a time is due");
    let left = due
        .duration_since(std::time::SystemTime::now())
        .unwrap_or_default();
    assert!(
        left <= Duration::from_secs(1) && left > Duration::from_millis(900),
        "{left:?}"
    );
    // Each edge: nothing a millisecond before it, one attempt at it. The wait doubles and is
    // capped by the cooldown (10 s here).
    let waits = [1u64, 2, 4, 8, 10, 10];
    for (i, wait) in waits.into_iter().enumerate() {
        tokio::time::advance(Duration::from_millis(wait * 1000 - 1)).await;
        settle().await;
        assert_eq!(connects(&script), i + 1, "before the {wait} s edge");
        tokio::time::advance(Duration::from_millis(1)).await;
        settle().await;
        assert_eq!(connects(&script), i + 2, "at the {wait} s edge");
        if i + 2 <= 6 {
            let next = waits[i + 1];
            assert!(
                reason(&hub).contains(&format!("after a wait of {next}s")),
                "{}",
                reason(&hub)
            );
            assert!(
                reason(&hub).contains("failed connects in a row"),
                "{}",
                reason(&hub)
            );
        }
    }
    // The seventh attempt finds the server back: ready, nothing due any more.
    assert_eq!(hub.state("mail"), Some(State::Ready));
    assert_eq!(hub.servers()[0].next_attempt_at, None);
    let announced = events_of(&events, |e| match e {
        ConnectionEvent::NextAttempt { after, .. } => Some(*after),
        _ => None,
    });
    let secs = |s| Some(Duration::from_secs(s));
    assert_eq!(
        announced,
        vec![
            secs(1),
            None,
            secs(2),
            None,
            secs(4),
            None,
            secs(8),
            None,
            secs(10),
            None,
            secs(10),
            None
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_down_for_a_moment_is_ready_within_seconds_of_coming_back() {
    // Down for 3 s (refused), then back: the default options (cooldown 60 s) try again at
    // 1 s, 3 s (1 + 2) and find it at 7 s (1 + 2 + 4), not after a minute.
    let script = Script::starting_with(std::iter::repeat_n(
        ConnectStep::Fail(ConnectResult::Refused),
        3,
    ));
    let hub = hub_with(ScriptedConnector::new(&script), quiet());
    hub.connect_all();
    settle().await;
    let started = Instant::now();
    for _ in 0..7_000 {
        if hub.state("mail") == Some(State::Ready) {
            break;
        }
        tokio::time::advance(Duration::from_millis(1)).await;
        settle().await;
    }
    assert_eq!(hub.state("mail"), Some(State::Ready));
    assert_eq!(started.elapsed(), Duration::from_secs(7));
}

#[tokio::test(start_paused = true)]
async fn sixty_four_concurrent_callers_share_one_handshake() {
    let script = Arc::new(Script::default());
    let mut connector = ScriptedConnector::new(&script);
    connector.delay = Duration::from_millis(200);
    let hub = hub_with(connector, quiet());

    let calls = (0..64).map(|_| hub.call(read()));
    let results = futures::future::join_all(calls).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(connects(&script), 1);

    // Again during a reconnect after a drop (the background reconnect is in flight).
    script.sessions.lock().unwrap()[0].fire_close();
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    let results = futures::future::join_all((0..64).map(|_| hub.call(read()))).await;
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(connects(&script), 2);
    assert_eq!(script.provisions.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_late_close_from_an_old_generation_does_not_mark_the_new_one_down() {
    let script = Arc::new(Script::default());
    script.calls.lock().unwrap().push_back(CallStep::Drop);
    let hub = hub_with(ScriptedConnector::new(&script), quiet());

    // Generation 1 dies mid-call (the call is retried on generation 2).
    hub.call(read()).await.unwrap();
    assert_eq!(hub.generation("mail"), Some(2));

    // Now the old connection's close event arrives, late.
    let old = script.sessions.lock().unwrap()[0].clone();
    old.fire_close();
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Ready));
    assert_eq!(hub.generation("mail"), Some(2));
    hub.call(read()).await.unwrap();
    assert_eq!(
        connects(&script),
        2,
        "no reconnect was caused by the stale close"
    );
}

#[tokio::test(start_paused = true)]
async fn without_background_reconnect_a_dropped_connection_reads_connecting_at_once_and_the_next_call_reconnects()
 {
    let script = Arc::new(Script::default());
    let (events, sink) = recorder();
    let hub = hub_with(
        ScriptedConnector::new(&script),
        quiet().reconnect_on_drop(false).event_sink(sink),
    );
    hub.call(read()).await.unwrap();
    let seen = hub.changes().unwrap().generation();

    script.sessions.lock().unwrap()[0].fire_close();
    settle().await;
    // Nothing failed: the server is not `absent`, and no attempt started by itself.
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    assert_eq!(connects(&script), 1);
    assert!(
        hub.changes().unwrap().generation() > seen,
        "the change feed moved"
    );
    let reason = hub.servers()[0].reason.clone().unwrap();
    assert!(
        reason.contains("lost") && reason.contains("next call"),
        "{reason}"
    );

    hub.call(read()).await.unwrap();
    assert_eq!(connects(&script), 2);
    let events = events.lock().unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ConnectionEvent::Reconnected { .. }))
    );
    assert!(events.iter().any(|e| matches!(
        e,
        ConnectionEvent::StateChanged {
            from: State::Ready,
            to: State::Connecting,
            ..
        }
    )));
}

#[tokio::test(start_paused = true)]
async fn by_default_a_dropped_connection_is_remade_in_the_background_without_waiting_for_a_call() {
    let script = Arc::new(Script::default());
    let hub = hub_with(ScriptedConnector::new(&script), quiet());
    hub.connect_all();
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Ready));
    script.sessions.lock().unwrap()[0].fire_close();
    settle().await;
    assert_eq!(connects(&script), 2);
    assert_eq!(hub.state("mail"), Some(State::Ready));
    assert_eq!(hub.generation("mail"), Some(2));
}

#[tokio::test(start_paused = true)]
async fn unauthorized_fails_fast_with_no_retry_until_the_credentials_change() {
    let (script, hub, error) = first_connect_failing(ConnectResult::Unauthorized).await;
    assert_eq!(
        error.kind(),
        CallErrorKind::NotConnected(NotConnected::Unauthenticated)
    );
    assert_eq!(hub.state("mail"), Some(State::Unauthenticated));
    tokio::time::advance(Duration::from_secs(3600)).await;
    let again = hub.call(read()).await.unwrap_err();
    assert_eq!(
        again.kind(),
        CallErrorKind::NotConnected(NotConnected::Unauthenticated)
    );
    assert!(again.to_string().contains("re-authorize"), "{again}");
    assert_eq!(
        connects(&script),
        1,
        "an auth failure is never retried on its own"
    );
    assert!(
        hub.snapshot()
            .await
            .unauthenticated_servers
            .contains("mail")
    );

    assert!(hub.reset_auth("mail"));
    hub.call(read()).await.unwrap();
    assert_eq!(connects(&script), 2);
}

#[tokio::test(start_paused = true)]
async fn a_dead_pipe_is_retried_once_only_for_idempotent_calls() {
    let script = Arc::new(Script::default());
    script.calls.lock().unwrap().push_back(CallStep::Drop);
    let hub = hub_with(
        ScriptedConnector::new(&script),
        quiet().reconnect_on_drop(false),
    );

    let error = hub.call(read().idempotent(false)).await.unwrap_err();
    assert_eq!(error.kind(), CallErrorKind::Transport);
    assert_eq!(connects(&script), 1, "no retry for a non-idempotent call");
    assert_eq!(hub.state("mail"), Some(State::Connecting));

    hub.call(read().idempotent(false)).await.unwrap();
    assert_eq!(connects(&script), 2, "the next call reconnects");
}

#[tokio::test(start_paused = true)]
async fn tool_errors_and_json_rpc_errors_are_answers_and_never_retried() {
    let script = Arc::new(Script::default());
    script
        .calls
        .lock()
        .unwrap()
        .extend([CallStep::IsError, CallStep::JsonRpcError]);
    let hub = hub_with(ScriptedConnector::new(&script), quiet());

    let answer = hub.call(read()).await.unwrap();
    assert_eq!(answer.is_error, Some(true));
    let error = hub.call(read()).await.unwrap_err();
    assert_eq!(error.kind(), CallErrorKind::Protocol);
    assert_eq!(error.json_rpc_error().unwrap().code.0, -32602);
    let session = script.sessions.lock().unwrap()[0].clone();
    assert_eq!(
        session.calls.load(Ordering::SeqCst),
        2,
        "each call ran exactly once"
    );
    assert_eq!(connects(&script), 1);
    assert_eq!(hub.state("mail"), Some(State::Ready));
}

#[tokio::test(start_paused = true)]
async fn a_failing_health_ping_drops_the_connection_before_any_call() {
    let script = Arc::new(Script::default());
    let mut connector = ScriptedConnector::new(&script);
    connector.ping_fails = true;
    let hub = hub_with(connector, HubOptions::builder().reconnect_on_drop(false));
    hub.call(read()).await.unwrap();

    tokio::time::advance(Duration::from_millis(29_999)).await;
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Ready));
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    assert!(reason(&hub).contains("health ping"), "{}", reason(&hub));
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_answers_ping_stays_ready_under_the_health_ping() {
    let script = Arc::new(Script::default());
    let mut connector = ScriptedConnector::new(&script);
    connector.ping_hangs = true;
    let hub = hub_with(connector, HubOptions::builder().reconnect_on_drop(false));
    hub.call(read()).await.unwrap();
    let timeout = HubOptions::default().ping_timeout();

    // The first ping: ping unanswered for the whole timeout, then tools/list answered.
    for step in [Duration::from_secs(30), timeout] {
        tokio::time::advance(step).await;
        settle().await;
    }
    assert_eq!(hub.state("mail"), Some(State::Ready));
    // Ten more intervals, pinged with tools/list: still the first connection, still ready.
    for _ in 0..10 {
        tokio::time::advance(Duration::from_secs(30)).await;
        settle().await;
        assert_eq!(hub.state("mail"), Some(State::Ready));
    }
    assert_eq!(connects(&script), 1);
    hub.call(read()).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_frozen_server_is_dropped_once_ping_and_then_tools_list_go_unanswered() {
    let script = Arc::new(Script::default());
    let connector = ScriptedConnector::new(&script);
    let hub = hub_with(connector, HubOptions::builder().reconnect_on_drop(false));
    hub.call(read()).await.unwrap();
    script.sessions.lock().unwrap()[0]
        .frozen
        .store(true, Ordering::SeqCst);
    let timeout = HubOptions::default().ping_timeout();

    // The ping at 30 s: ping unanswered until 30 s + timeout, then tools/list as long again.
    for step in [
        Duration::from_secs(30),
        timeout,
        timeout - Duration::from_millis(1),
    ] {
        tokio::time::advance(step).await;
        settle().await;
        assert_eq!(hub.state("mail"), Some(State::Ready));
    }
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    let reason = reason(&hub);
    assert!(reason.contains("nor to tools/list"), "{reason}");
}

#[tokio::test(start_paused = true)]
async fn a_connect_that_hangs_times_out_at_the_connect_timeout() {
    let script = Arc::new(Script::default());
    script.steps.lock().unwrap().push_back(ConnectStep::Hang);
    let (events, sink) = recorder();
    let hub = hub_with(
        ScriptedConnector::new(&script),
        quiet()
            .connect_timeout(Duration::from_secs(30))
            .event_sink(sink),
    );
    hub.connect_all();
    settle().await;
    // The connect timeout plus the 250 ms backstop grace for connectors that never return.
    tokio::time::advance(Duration::from_millis(30_249)).await;
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    assert!(hub.snapshot().await.pending_servers.contains("mail"));
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Absent));
    let events = events.lock().unwrap();
    assert!(events.iter().any(|e| matches!(
        e,
        ConnectionEvent::ConnectAttempt { result: ConnectResult::Timeout, duration, .. }
            if *duration == Duration::from_millis(30_250)
    )));
}

#[tokio::test(start_paused = true)]
async fn a_call_past_the_call_timeout_fails_with_timeout_and_the_server_stays_ready() {
    let script = Arc::new(Script::default());
    script.calls.lock().unwrap().push_back(CallStep::Hang);
    let hub = hub_with(
        ScriptedConnector::new(&script),
        quiet().call_timeout(Duration::from_secs(5)),
    );
    let started = Instant::now();
    let error = hub.call(read()).await.unwrap_err();
    assert_eq!(error.kind(), CallErrorKind::Timeout);
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert_eq!(hub.state("mail"), Some(State::Ready));
}

#[tokio::test(start_paused = true)]
async fn a_configured_server_reads_connecting_before_anything_connects_it() {
    let script = Arc::new(Script::default());
    let (events, sink) = recorder();
    let hub = hub_with(ScriptedConnector::new(&script), quiet().event_sink(sink));
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    assert!(hub.snapshot().await.pending_servers.contains("mail"));
    assert_eq!(
        reason(&hub),
        "not connected yet; it connects when the service starts its servers, or at its first use"
    );
    assert!(matches!(
        events.lock().unwrap().first(),
        Some(ConnectionEvent::ServerAdded {
            state: State::Connecting,
            ..
        })
    ));
    assert_eq!(connects(&script), 0, "reading the state starts nothing");

    hub.connect_all();
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Ready));
    assert_eq!(connects(&script), 1);
}

#[tokio::test(start_paused = true)]
async fn a_server_that_keeps_exiting_after_its_handshake_is_backed_off_with_a_growing_capped_delay()
{
    let script = Arc::new(Script::default());
    let (events, sink) = recorder();
    let hub = hub_with(
        ScriptedConnector::new(&script),
        quiet()
            .crash_backoff(Duration::from_secs(1), Duration::from_secs(4))
            .event_sink(sink),
    );
    hub.connect_all();
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Ready));

    // The first early exit is a restart like any other: reconnected at once.
    close_after(&script, 0, Duration::from_millis(300)).await;
    assert_eq!(connects(&script), 2);
    assert_eq!(hub.state("mail"), Some(State::Ready));

    // The second in a row: backed off for 1 s, 2 s, 4 s, then 4 s again (the cap).
    for (n, delay_ms) in [(1usize, 1_000u64), (2, 2_000), (3, 4_000), (4, 4_000)] {
        close_after(&script, n, Duration::from_millis(300)).await;
        assert_eq!(hub.state("mail"), Some(State::Absent), "between attempts");
        let why = reason(&hub);
        let exits = n + 1;
        assert!(
            why.contains("keeps exiting")
                && why.contains(&format!(
                    "exited {exits} times in a row within 300ms after its handshake"
                ))
                && why.contains(&format!("after a wait of {}s", delay_ms / 1000)),
            "{why}"
        );
        // A call meanwhile fails at once, saying so.
        let refused = hub.call(read()).await.unwrap_err();
        assert_eq!(
            refused.kind(),
            CallErrorKind::NotConnected(NotConnected::CoolingDown {
                left: Duration::from_millis(delay_ms)
            })
        );
        assert!(refused.to_string().contains("keeps exiting"), "{refused}");

        tokio::time::advance(Duration::from_millis(delay_ms - 1)).await;
        settle().await;
        assert_eq!(
            connects(&script),
            n + 1,
            "no attempt before the backoff is over"
        );
        assert_eq!(hub.state("mail"), Some(State::Absent));
        tokio::time::advance(Duration::from_millis(1)).await;
        settle().await;
        assert_eq!(connects(&script), n + 2, "one attempt when it is over");
        assert_eq!(hub.state("mail"), Some(State::Ready));
    }
    let events = events.lock().unwrap();
    let rejections = events
        .iter()
        .filter(|e| matches!(e, ConnectionEvent::CooldownRejection { .. }))
        .count();
    assert_eq!(rejections, 4);
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_stays_up_for_stable_after_resets_the_crash_loop_count() {
    let script = Arc::new(Script::default());
    let hub = hub_with(
        ScriptedConnector::new(&script),
        quiet()
            .crash_backoff(Duration::from_secs(1), Duration::from_secs(60))
            .stable_after(Duration::from_secs(60)),
    );
    hub.connect_all();
    settle().await;
    close_after(&script, 0, Duration::from_millis(300)).await;
    close_after(&script, 1, Duration::from_millis(300)).await;
    assert_eq!(hub.state("mail"), Some(State::Absent));
    tokio::time::advance(Duration::from_secs(1)).await;
    settle().await;
    assert_eq!(connects(&script), 3);

    // Up for just under a minute: still a short life, the third in a row (2 s).
    close_after(&script, 2, Duration::from_millis(59_999)).await;
    assert_eq!(hub.state("mail"), Some(State::Absent));
    assert!(reason(&hub).contains("3 times"), "{}", reason(&hub));
    tokio::time::advance(Duration::from_secs(2)).await;
    settle().await;
    assert_eq!(connects(&script), 4);

    // Up for exactly a minute: stable, the count resets and the next exit reconnects at once.
    close_after(&script, 3, Duration::from_secs(60)).await;
    assert_eq!(connects(&script), 5);
    assert_eq!(hub.state("mail"), Some(State::Ready));
    // ...and the first early exit after it is again just a restart.
    close_after(&script, 4, Duration::from_millis(300)).await;
    assert_eq!(connects(&script), 6);
    assert_eq!(hub.state("mail"), Some(State::Ready));
}

#[tokio::test(start_paused = true)]
async fn without_background_reconnect_a_crash_loop_backoff_ends_in_connecting_and_the_next_call_connects()
 {
    let script = Arc::new(Script::default());
    let hub = hub_with(
        ScriptedConnector::new(&script),
        quiet().reconnect_on_drop(false),
    );
    hub.call(read()).await.unwrap();
    close_after(&script, 0, Duration::from_millis(300)).await;
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    hub.call(read()).await.unwrap();
    close_after(&script, 1, Duration::from_millis(300)).await;
    assert_eq!(hub.state("mail"), Some(State::Absent));

    tokio::time::advance(Duration::from_millis(999)).await;
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Absent));
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    assert_eq!(connects(&script), 2, "nothing connects by itself");
    hub.call(read()).await.unwrap();
    assert_eq!(connects(&script), 3);
}

#[tokio::test(start_paused = true)]
async fn credential_expiries_reach_the_sinks_after_the_server_and_a_reauthorization_connects_again()
{
    let expiry = crate::state::CredentialExpiry {
        kind: crate::state::CredentialKind::RefreshToken,
        expires_at: std::time::UNIX_EPOCH + Duration::from_secs(2_000_000_000),
        renewable: false,
    };
    let script = Script::starting_with([ConnectStep::Fail(ConnectResult::Unauthorized)]);
    let credentials = watch::Sender::new(CredentialState {
        expiries: vec![expiry],
        reauthorized: 0,
    });
    let (seen, sink) = recorder();
    let connector = WithCredentials {
        inner: ScriptedConnector::new(&script),
        credentials: credentials.clone(),
    };
    let hub = hub_with(connector, quiet().event_sink(sink));
    settle().await;
    let expiring = |seen: &[ConnectionEvent]| {
        seen.iter()
            .filter_map(|e| match e {
                ConnectionEvent::CredentialsExpire { expiries, .. } => Some(expiries.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    {
        let seen = seen.lock().unwrap();
        assert!(
            matches!(seen[0], ConnectionEvent::ServerAdded { .. }),
            "{seen:?}"
        );
        assert_eq!(expiring(&seen), vec![vec![expiry]]);
    }

    // Refused: unauthenticated, and nothing retries on its own.
    let refused = hub.call(read()).await.unwrap_err();
    assert_eq!(
        refused.kind(),
        CallErrorKind::NotConnected(NotConnected::Unauthenticated)
    );
    tokio::time::advance(Duration::from_secs(600)).await;
    settle().await;
    assert_eq!(connects(&script), 1);

    // Re-authorized (new tokens, no known expiry): connects at once, and the series go.
    credentials.send_modify(|state| {
        state.reauthorized += 1;
        state.expiries.clear();
    });
    settle().await;
    assert_eq!(connects(&script), 2);
    assert_eq!(hub.servers()[0].state, State::Ready);
    assert_eq!(expiring(&seen.lock().unwrap()).last(), Some(&Vec::new()));
}

#[tokio::test(start_paused = true)]
async fn credentials_rejected_mid_session_read_what_the_connector_knows() {
    let script = Arc::new(Script::default());
    let connector = WithCredentials {
        inner: ScriptedConnector::new(&script),
        credentials: watch::Sender::new(CredentialState::default()),
    };
    let hub = hub_with(connector, quiet());
    hub.call(read()).await.unwrap();
    let supervisor = hub.supervisor("mail").unwrap();
    let generation = supervisor.observe().generation;
    let why = supervisor.auth_lost(generation, "server `mail` rejected the credentials".into());
    assert_eq!(
        why,
        "server `mail` rejected the credentials: the refresh token was refused; run `login`"
    );
    assert_eq!(hub.servers()[0].reason.as_deref(), Some(why.as_str()));
}

#[tokio::test(start_paused = true)]
async fn a_retry_keeps_what_the_last_attempt_ran_into_in_its_reason() {
    // Refused, then an attempt that hangs: while it is in flight the server reads `connecting`,
    // and its reason still says what the last attempt ran into.
    let script =
        Script::starting_with([ConnectStep::Fail(ConnectResult::Refused), ConnectStep::Hang]);
    let (events, sink) = recorder();
    let hub = hub_with(ScriptedConnector::new(&script), quiet().event_sink(sink));
    hub.connect_all();
    settle().await;
    assert_eq!(hub.state("mail"), Some(State::Absent));
    let failed = reason(&hub);
    tokio::time::advance(Duration::from_secs(1)).await;
    settle().await;
    assert_eq!(connects(&script), 2);
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    let retrying = reason(&hub);
    let before = failed.split_once("; next attempt at").unwrap().0;
    assert_eq!(
        retrying,
        format!("server `mail` is connecting again (before this attempt: {before})"),
    );
    // A state change, so the status page's reason follows without a `ReasonChanged`.
    assert!(events.lock().unwrap().iter().any(|e| matches!(
        e,
        ConnectionEvent::StateChanged { to: State::Connecting, reason: Some(r), .. } if **r == *retrying
    )));
}

#[tokio::test(start_paused = true)]
async fn a_throttled_server_stays_connecting_and_says_why_in_a_reason_change() {
    let script = Script::starting_with([ConnectStep::Throttle(Duration::from_secs(120))]);
    let (events, sink) = recorder();
    let hub = hub_with(ScriptedConnector::new(&script), quiet().event_sink(sink));
    hub.connect_all();
    settle().await;
    // It was `connecting` before the attempt and is after it: no state change, but the reason
    // changed, and every sink (the status page) hears of it.
    assert_eq!(hub.state("mail"), Some(State::Connecting));
    let why = reason(&hub);
    assert!(why.contains("scripted throttling (HTTP 429)"), "{why}");
    let changes = events_of(&events, |e| match e {
        ConnectionEvent::ReasonChanged {
            state: State::Connecting,
            reason: Some(reason),
            ..
        } => Some(reason.to_string()),
        _ => None,
    });
    assert_eq!(changes.last(), Some(&why), "{changes:?}");
    // Its first attempt had nothing before it: not "again", no API name.
    assert_eq!(
        changes.first().map(String::as_str),
        Some("server `mail` is connecting"),
        "{changes:?}"
    );
    assert!(
        events_of(&events, |e| match e {
            ConnectionEvent::StateChanged { from, to, .. } => Some((*from, *to)),
            _ => None,
        })
        .is_empty(),
        "no state change: it never stopped connecting"
    );
}
