//! The budgeted resolver on a paused clock: each tool resolves at its exact virtual time.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_tool_that_appears_on_the_fourth_poll_is_ready_after_exactly_6000_ms() {
    let inventory = LateServer::new("x", &["a"], Some(MS(6000)));
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(verdict.state, State::Ready);
    assert_eq!(verdict.waited, MS(6000));
    assert!(!verdict.timed_out);
    assert_eq!(inventory.polls(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_never_arrives_is_connecting_and_timed_out_after_exactly_20000_ms() {
    let inventory = LateServer::new("x", &["a"], None);
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(timed(&verdict), (State::Connecting, MS(20_000), true));
    assert_eq!(verdict.error_type(), Some("resolve_timeout"));
    assert_eq!(inventory.polls(), 11, "polls at 0, 2, ..., 20 s");
}

#[tokio::test(start_paused = true)]
async fn arriving_just_before_the_last_poll_is_caught_and_just_after_is_not() {
    let before = LateServer::new("x", &["a"], Some(MS(19_999)));
    let verdict = resolve::resolve(&before, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(waited(&verdict), (State::Ready, MS(20_000)));

    let after = LateServer::new("x", &["a"], Some(MS(20_001)));
    let verdict = resolve::resolve(&after, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(timed(&verdict), (State::Connecting, MS(20_000), true));
}

#[tokio::test(start_paused = true)]
async fn the_last_poll_is_the_one_that_still_fits_in_the_budget() {
    // 7 s budget, 2 s poll: polls at 0, 2, 4, 6; the next (8 s) would overrun.
    let inventory = LateServer::new("x", &["a"], None);
    let budget = Budget::try_new(MS(7000), MS(2000)).unwrap();
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), budget).await;
    assert_eq!((verdict.waited, verdict.timed_out), (MS(6000), true));
    assert_eq!(inventory.polls(), 4);
}

#[tokio::test(start_paused = true)]
async fn with_change_notifications_the_wait_ends_at_the_budget_not_at_the_last_poll_that_fits() {
    // 3 s budget, 2 s poll: the poll at 4 s would overrun, but a change wakes the resolution at
    // once, so it waits for one until 3 s (never past it) instead of giving up at 2 s.
    let budget = Budget::try_new(MS(3000), MS(2000)).unwrap();
    let late = LateServer::new("x", &["a"], Some(MS(2500))).notifying();
    let verdict = resolve::resolve(&*late, &tool("mcp__x__a"), budget).await;
    assert_eq!(waited(&verdict), (State::Ready, MS(2500)));

    let never = LateServer::new("x", &["a"], None).notifying();
    let verdict = resolve::resolve(&*never, &tool("mcp__x__a"), budget).await;
    assert_eq!(timed(&verdict), (State::Connecting, MS(3000), true));
    assert_eq!(never.polls(), 3, "polls at 0 and 2 s, a last look at 3 s");

    // A whole number of polls ends where it did: the budget is the last poll.
    let whole = LateServer::new("x", &["a"], None).notifying();
    let verdict = resolve::resolve(&*whole, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(timed(&verdict), (State::Connecting, MS(20_000), true));
    assert_eq!(whole.polls(), 11);
}

#[tokio::test(start_paused = true)]
async fn with_change_notifications_a_tool_arriving_at_5_1_s_returns_at_5_1_s() {
    let inventory = LateServer::new("x", &["a"], Some(MS(5100))).notifying();
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(waited(&verdict), (State::Ready, MS(5100)));
}

#[tokio::test(start_paused = true)]
async fn a_change_that_does_not_help_keeps_the_poll_grid_and_the_full_budget() {
    let inventory = Arc::new(StaticInventory::new(
        Snapshot::default().with_pending_server("x"),
    ));
    let bumper = inventory.clone();
    tokio::spawn(async move {
        tokio::time::sleep(MS(19_100)).await;
        bumper.set(
            Snapshot::default()
                .with_pending_server("x")
                .with_pending_server("y"),
        );
    });
    let verdict = resolve::resolve(&inventory, &tool("mcp__x__a"), Budget::default()).await;
    assert_eq!(timed(&verdict), (State::Connecting, MS(20_000), true));
}

#[tokio::test(start_paused = true)]
async fn unauthenticated_and_absent_return_without_waiting_and_say_why() {
    let inventory = StaticInventory::new(
        Snapshot::default()
            .with_unauthenticated_server("chat")
            .with_pending_server("chat")
            .with_reason("chat", "HTTP 401 from the server")
            .with_ready_tool("mcp__files__read"),
    );
    let chat = resolve::resolve(&inventory, &tool("mcp__chat__send"), Budget::default()).await;
    assert_eq!(
        (chat.state, chat.waited, chat.scope),
        (State::Unauthenticated, Duration::ZERO, Scope::Server)
    );
    assert_eq!(chat.reason.as_deref(), Some("HTTP 401 from the server"));
    assert_eq!(chat.error_type(), Some("server_unauthenticated"));

    let gone = resolve::resolve(&inventory, &tool("mcp__gone__x"), Budget::default()).await;
    assert_eq!(
        (gone.state, gone.waited, gone.scope),
        (State::Absent, Duration::ZERO, Scope::Server)
    );
    assert_eq!(gone.error_type(), Some("server_absent"));

    let missing = resolve::resolve(&inventory, &tool("mcp__files__write"), Budget::default()).await;
    assert_eq!((missing.state, missing.scope), (State::Absent, Scope::Tool));
    assert_eq!(missing.error_type(), Some("tool_absent"));
    assert!(
        missing
            .reason
            .as_deref()
            .unwrap()
            .contains("does not offer `write`")
    );
}
